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


def _baselines(cohort_tau: float, seed_pairs: int = 3):
    import numpy as np

    from crsbench_lib.scoring.retest import noise_baseline_table

    seeds = {"the fixed-reference ranking": [0.76, 0.81, 0.85][:seed_pairs]}
    return noise_baseline_table({"the insertion under the fixed reference": 1.0,
                                 "the insertion under cohort renormalisation": cohort_tau},
                                seeds, {"the fixed-reference ranking": np.linspace(0.80, 0.95, 41)})


@given(changes=st.integers(0, 136), low=st.integers(0, 136), width=st.integers(0, 30))
def test_describe_rank_noise_compares_the_insertion_with_the_seed_redraws(changes, low, width):
    high = min(136, low + width)
    table = _noise(changes, low, high)
    text = insertion.describe_rank_noise(table, _baselines(float(table["insertion_tau"].iloc[1])))
    assert f"reorders 0 of 136 pairs under the fixed reference and {changes} under cohort renormalisation" in text
    # No reordered pair earns no comparison and no talk of reordered history; any other count gets both.
    assert ("reorders no pair of the existing entries" in text) == (changes == 0)
    assert ("history rewritten" in text) == (changes > 0)
    assert ("reorders fewer pairs than redrawing the seeds" in text) == (0 < changes < low)
    assert ("reorders more pairs than any redraw" in text) == (changes > high and changes > 0)
    assert ("within their range" in text) == (low <= changes <= high and changes > 0)
    # Whatever the counts, a renormalisation's reordering is never passed off as noise, and the τ_b part is the
    # book's shared sentence (the same words as on the agreement, transfer and LoDO pages).
    assert "no new measurement" in text and "belongs to this build's world" in text
    assert "Two independent bootstrap draws of the same ranking" in text


def test_describe_rank_noise_on_the_default_runs_figures():
    text = insertion.describe_rank_noise(_noise(2, 28, 37), _baselines(0.97), simulated=True)
    assert "The insertion under the fixed reference keeps the order exactly (τ_b = 1)" in text
    assert "while two seeds of the same ranking reorder 10 to 16 pairs (fixed reference) and 28 to 37" in text
    assert "Renormalisation reorders fewer pairs than redrawing the seeds does" in text
    assert "the renormalised ranking is also the less reproducible one (mean τ_b 0.54 against 0.81)" in text
    assert "this build's simulated world and these newcomers" in text
    # A renormalised ranking as reproducible as the fixed one earns no such clause.
    assert "less reproducible" not in insertion.describe_rank_noise(_noise(2, 10, 16, renorm_tau=0.81),
                                                                    _baselines(0.97))


def test_describe_rank_noise_without_a_second_seed_and_without_both_schemes():
    text = insertion.describe_rank_noise(_noise(2, 0, 0, seed_pairs=0), _baselines(0.97, seed_pairs=0))
    assert "single seed, so the count cannot be read" in text and "fewer" not in text
    assert "single seed, so no seed-redraw baseline" in text
    with pytest.raises(ValueError, match="expected the rows"):
        insertion.describe_rank_noise(_noise(2, 28, 37).iloc[:1], _baselines(0.97))
