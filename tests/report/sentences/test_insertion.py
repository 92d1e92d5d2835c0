"""The insertion sentences keep a reordering apart from a shift, and follow the displacement."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import insertion


@given(fixed=st.floats(0, 1, allow_nan=False), cohort=st.floats(0, 1, allow_nan=False))
def test_describe_displacement(fixed, cohort):
    text = insertion.describe_displacement(fixed, cohort)
    assert ("No published score moved" in text) == (fixed == 0)
    assert ("not being held fixed" in text) == (fixed != 0)


@given(n=st.integers(2, 30), data=st.data())
def test_describe_rank_changes_never_calls_a_reordering_a_mere_shift(n, data):
    pairs = n * (n - 1) // 2
    changes = data.draw(st.integers(0, pairs))
    shifted = data.draw(st.integers(0, n))
    text = insertion.describe_rank_changes("the fixed reference", changes, pairs, shifted, n)
    if changes == 0:
        assert "no pair" in text and "relative order is as before" in text
        assert ("only because newcomers" in text) == (shifted > 0)
    else:
        assert f"{changes} of {pairs} pairs" in text and "changed order" in text
        assert "relative order is as before" not in text and "only because" not in text


@pytest.mark.parametrize("args", [(-1, 10, 0, 5), (11, 10, 0, 5), (0, 10, 6, 5), (0.5, 10, 0, 5), (True, 10, 0, 5)])
def test_describe_rank_changes_rejects_impossible_counts(args):
    with pytest.raises(ValueError):
        insertion.describe_rank_changes("x", *args)


def _noise(cohort_changes: int, low: float, high: float, seed_pairs: int = 3, renorm_tau: float = 0.54):
    import pandas as pd

    from crsbench_lib.scoring.insertion import RANK_NOISE_COLUMNS

    nan = float("nan")
    base = (seed_pairs, 0.81, 0.76, 0.85, 10, 16) if seed_pairs else (0, nan, nan, nan, nan, nan)
    cohort = (seed_pairs, renorm_tau, renorm_tau - 0.05, renorm_tau + 0.05, low, high) if seed_pairs else base
    rows = [("fixed reference", 1.0, 0, 136, *base),
            ("cohort-renormalised", 1 - 2 * cohort_changes / 136, cohort_changes, 136, *cohort)]
    return pd.DataFrame(rows, columns=list(RANK_NOISE_COLUMNS))


@given(changes=st.integers(0, 136), low=st.integers(0, 136), width=st.integers(0, 30))
def test_describe_rank_noise_compares_the_insertion_with_the_seed_redraws(changes, low, width):
    high = min(136, low + width)
    text = insertion.describe_rank_noise(_noise(changes, low, high))
    assert f"({changes} of 136 pairs reordered)" in text
    assert ("reorders fewer pairs than redrawing the seeds" in text) == (changes < low)
    assert ("reorders more pairs than any redraw" in text) == (changes > high)
    assert ("within their range" in text) == (low <= changes <= high)
    # Whatever the counts, a renormalisation's reordering is never passed off as noise.
    assert "no new measurement" in text and "belongs to this build's world" in text


def test_describe_rank_noise_on_the_default_runs_figures():
    text = insertion.describe_rank_noise(_noise(2, 28, 37))
    assert "under the fixed reference the insertion leaves the existing order at τ_b = 1.000" in text
    assert "two seeds of the same ranking reorder 28 to 37 pairs (τ_b 0.49 to 0.59, mean 0.54 over 3 seed pairs)" in text
    assert "Renormalisation reorders fewer pairs than redrawing the seeds does" in text
    assert "the renormalised ranking is also the less reproducible one (mean τ_b 0.54 against 0.81)" in text
    # A renormalised ranking as reproducible as the fixed one earns no such clause.
    assert "less reproducible" not in insertion.describe_rank_noise(_noise(2, 10, 16, renorm_tau=0.81))


def test_describe_rank_noise_without_a_second_seed_and_without_both_schemes():
    text = insertion.describe_rank_noise(_noise(2, 0, 0, seed_pairs=0))
    assert "single seed, so no test-retest baseline can be measured" in text and "fewer" not in text
    with pytest.raises(ValueError, match="expected the rows"):
        insertion.describe_rank_noise(_noise(2, 28, 37).iloc[:1])
