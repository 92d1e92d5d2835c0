import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
from crsbench_lib.scoring.insertion import insertion_test
from crsbench_lib.standard import AXES

# Raw profiles in a realistic range (D, L in [0.4, 1]; C, R in [0, 0.3]), beyond the anchors too.
raw_rows = arrays(
    np.float64, st.tuples(st.integers(1, 20), st.just(4)),
    elements=st.floats(0.0, 1.0, allow_nan=False),
).map(lambda a: a * np.array([0.6, 0.3, 0.6, 0.3]) + np.array([0.4, 0.0, 0.4, 0.0]))


def _frame(values: np.ndarray, prefix: str) -> pd.DataFrame:
    return pd.DataFrame(values, columns=list(AXES), index=[f"{prefix}{i}" for i in range(len(values))])


@pytest.fixture(scope="module")
def existing(synthetic_table):
    return encoder_profiles(raw_axes(synthetic_table))


@settings(max_examples=40, deadline=None)
@given(candidates=raw_rows)
def test_fixed_reference_scores_never_move(existing, frozen_standard, candidates):
    result = insertion_test(existing, _frame(candidates, "new"), frozen_standard)
    # Exactly zero: the same bits before and after, not merely close.
    assert (result.existing["fixed_displacement"] == 0.0).all()
    np.testing.assert_array_equal(result.existing["crs_fixed_before"], result.existing["crs_fixed_after"])
    assert result.max_abs_fixed_displacement == 0.0
    assert len(result.candidates) == len(candidates)


def test_cohort_renormalised_scores_move(existing, frozen_standard):
    # A candidate beyond the cohort's range on every axis stretches every anchor.
    candidate = _frame(np.array([[0.99, 0.001, 1.0, 0.0]]), "new")
    result = insertion_test(existing, candidate, frozen_standard)
    assert result.max_abs_fixed_displacement == 0.0
    assert result.max_abs_cohort_displacement > 0.0
    assert (result.existing["cohort_displacement"] != 0).any()


@settings(max_examples=30, deadline=None)
@given(candidates=raw_rows)
def test_some_insertion_moves_cohort_scores(existing, frozen_standard, candidates):
    # Adding the candidates plus an extreme one always moves some cohort-renormalised score.
    extreme = np.vstack([candidates, [[0.999, 0.0, 1.0, 0.0], [0.41, 0.3, 0.41, 0.3]]])
    result = insertion_test(existing, _frame(extreme, "new"), frozen_standard)
    assert result.max_abs_cohort_displacement > 0.0


def test_name_clash_rejected(existing, frozen_standard):
    with pytest.raises(SchemaError, match="already an existing encoder"):
        insertion_test(existing, existing.iloc[:1], frozen_standard)
