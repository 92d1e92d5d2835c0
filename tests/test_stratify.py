"""The one stratification rule shared by the resampler and the label fractions."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from crsbench_lib.stratify import label_strata


@given(arrays(np.int64, st.integers(1, 40), elements=st.integers(0, 5)))
def test_classes_are_their_own_strata(labels):
    assert np.array_equal(label_strata(labels), labels)


@given(arrays(np.uint8, st.tuples(st.integers(1, 40), st.integers(1, 5)), elements=st.integers(0, 1)))
def test_multilabel_stratum_is_the_rarest_positive_label(labels):
    strata = label_strata(labels)
    prevalence = labels.sum(axis=0)
    for row, stratum in zip(labels, strata, strict=True):
        positives = np.flatnonzero(row)
        if positives.size == 0:
            assert stratum == -1
        else:
            # The rarest of its labels; among equally rare ones, the first.
            rarest = positives[np.argmin(prevalence[positives])]
            assert stratum == rarest


def test_both_samplers_use_the_one_rule():
    import crsbench_lib.data.resample as resample
    import crsbench_lib.evaluation.fractions as fractions

    assert resample.label_strata is label_strata and fractions.label_strata is label_strata
