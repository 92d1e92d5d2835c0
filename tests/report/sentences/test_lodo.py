"""The LODO sentence claims a better predictor only where the numbers allow it."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report import grammar
from crsbench_lib.report.sentences import lodo

unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(crs=unit, auroc=unit)
def test_describe_predictors_names_the_better_one(crs, auroc):
    text = lodo.describe_predictors(crs, auroc)
    if abs(crs - auroc) < grammar.CLOSE_CORRELATION:
        assert "about equally well" in text
    elif crs > auroc:
        assert text.startswith("The CRS predicts")
    else:
        assert text.startswith("AUROC predicts")


def test_describe_predictors_with_a_place():
    assert lodo.describe_predictors(0.2, 0.067, where="On the second site").startswith("On the second site, the CRS predicts")


@given(crs=st.floats(-1, 1, allow_nan=False), auroc=st.floats(-1, 1, allow_nan=False),
       low=st.floats(-2, 2, allow_nan=False), width=st.floats(0, 2, allow_nan=False))
def test_describe_predictors_with_an_interval_claims_only_what_it_excludes(crs, auroc, low, width):
    text = lodo.describe_predictors(crs, auroc, interval=(low, low + width), target="the site-B ranking")
    if low > 0 and crs > auroc:
        assert text.startswith("The CRS predicts the site-B ranking better than AUROC") and "excludes zero" in text
    elif low + width < 0 and crs < auroc:
        assert text.startswith("AUROC predicts the site-B ranking better than the CRS") and "excludes zero" in text
    elif low > 0 or low + width < 0:
        # The interval excludes zero on the other side from the point: no claim either way.
        assert text.startswith("The data cannot tell") and "better than" not in text and "other side" in text
    else:
        # No claim when the interval contains zero, whatever the point values say.
        assert text.startswith("The data cannot tell whether") and "better than" not in text
        assert "includes zero" in text


def test_describe_predictors_with_an_interval_and_a_place():
    text = lodo.describe_predictors(0.84, 0.905, interval=(-0.1, -0.02), where="On the second site", statistic="τ_b")
    assert text.startswith("On the second site, AUROC predicts")
    assert "τ_b 0.840 for the CRS and 0.905 for AUROC" in text and "mean" not in text


@pytest.mark.parametrize("crs, auroc, interval", [(float("nan"), 0.5, None), (0.3, float("nan"), (0.1, 0.2)),
                                                  (float("nan"), float("nan"), (float("nan"), float("nan")))])
def test_describe_predictors_says_when_a_tau_is_undefined(crs, auroc, interval):
    text = lodo.describe_predictors(crs, auroc, interval=interval)
    assert "cannot be said" in text and "undefined" in text and "better than" not in text


def test_describe_predictors_without_a_defined_interval_makes_no_claim():
    text = lodo.describe_predictors(0.6, 0.2, interval=(float("nan"), float("nan")))
    assert text.startswith("The data cannot tell") and "no interval" in text
