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
