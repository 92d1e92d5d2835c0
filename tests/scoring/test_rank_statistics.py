"""The one home of the rank statistics: tau-b, reversed pairs and the rank rules, checked against references."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.scoring.rank_statistics import (
    descending_ranks,
    kendall_tau_b,
    kendall_tau_b_rows,
    kendall_tau_b_test,
    order_changes,
    pair_counts,
    reversed_pairs,
    spearman_rho,
    weighted_kendall_tau_b,
)

# Scores on a coarse grid so that ties are common (the case where shortcuts go wrong).
tied_scores = st.lists(st.integers(0, 4), min_size=2, max_size=12)


def _brute_force_reversed(a, b):
    return sum(1 for i, j in itertools.combinations(range(len(a)), 2) if (a[i] - a[j]) * (b[i] - b[j]) < 0)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_tau_b_matches_scipy_and_reversed_pairs_match_a_brute_force_count(data):
    a = data.draw(tied_scores)
    b = data.draw(st.lists(st.integers(0, 4), min_size=len(a), max_size=len(a)))
    x, y = np.array(a, float), np.array(b, float)
    expected = stats.kendalltau(x, y, variant="b").statistic
    got = kendall_tau_b(x, y)
    assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)
    assert reversed_pairs(x, y) == _brute_force_reversed(a, b)
    counts = pair_counts(x, y)
    assert counts["concordant"] + counts["discordant"] + counts["tied_a"] + counts["tied_b"] - counts["tied_both"] \
        == counts["pairs"]


@settings(max_examples=100, deadline=None)
@given(st.permutations(list(range(9))))
def test_without_ties_reversed_pairs_follow_from_tau(order):
    x, y = np.arange(9.0), np.array(order, float)
    assert reversed_pairs(x, y) == round((1 - kendall_tau_b(x, y)) * 36 / 2)


def test_with_ties_reversed_pairs_do_not_follow_from_tau():
    # The shortcut round((1 - tau) * pairs / 2) that a sentence once used: wrong as soon as a ranking ties.
    x, y = np.array([4.0, 3, 2, 1, 0]), np.array([1.0, 1, 2, 2, 0])
    tau = kendall_tau_b(x, y)
    assert tau == 0.0 and reversed_pairs(x, y) == 4
    assert round((1 - tau) * 10 / 2) == 5


def test_rows_agree_with_one_vector_and_constant_rows_are_nan():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, 7).astype(float)
    draws = rng.integers(0, 3, (20, 7)).astype(float)
    draws[0] = 1.0
    rows = kendall_tau_b_rows(x, draws)
    assert np.isnan(rows[0])
    assert rows[1:] == pytest.approx([kendall_tau_b(x, d) for d in draws[1:]], nan_ok=True)


def test_tau_test_gives_scipys_p_value_and_nan_for_a_constant_ranking():
    x, y = np.array([1.0, 2, 3, 4, 5]), np.array([2.0, 1, 4, 3, 5])
    tau, p = kendall_tau_b_test(x, y)
    reference = stats.kendalltau(x, y, variant="b")
    assert tau == pytest.approx(reference.statistic) and p == pytest.approx(reference.pvalue)
    assert all(np.isnan(v) for v in kendall_tau_b_test(x, np.ones(5)))
    assert all(np.isnan(v) for v in kendall_tau_b_test(x[:1], y[:1]))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_weighted_tau_equals_tau_on_the_copies_written_out(data):
    a = data.draw(tied_scores)
    b = data.draw(st.lists(st.integers(0, 4), min_size=len(a), max_size=len(a)))
    w = data.draw(st.lists(st.integers(0, 3), min_size=len(a), max_size=len(a)))
    x, y = np.repeat(np.array(a, float), w), np.repeat(np.array(b, float), w)
    got = weighted_kendall_tau_b(np.array(a, float), np.array(b, float), np.array([w], float))[0]
    expected = kendall_tau_b(x, y) if x.size >= 2 else float("nan")
    assert (np.isnan(got) and np.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(tied_scores)
def test_rank_rules_put_the_highest_first_and_differ_only_on_ties(values):
    x = np.array(values, float)
    average, competition = descending_ranks(x), descending_ranks(x, ties="min")
    assert competition.dtype == np.int64
    assert competition[np.argmax(x)] == 1
    assert average.sum() == pytest.approx(x.size * (x.size + 1) / 2)
    assert np.all(competition <= average)
    assert np.array_equal(competition == average, np.array([np.sum(x == v) == 1 for v in x]))


def test_rank_rules_rank_rows_and_refuse_an_unknown_rule():
    assert descending_ranks(np.array([[1.0, 2, 2], [3, 2, 1]]), ties="min").tolist() == [[3, 1, 1], [1, 2, 3]]
    with pytest.raises(ValueError, match="ties must be"):
        descending_ranks(np.array([1.0, 2.0]), ties="dense")


def test_order_changes_count_ties_that_form_as_well_as_reversals():
    assert order_changes([3.0, 2, 1], [3.0, 2, 1]) == 0
    assert order_changes([3.0, 2, 1], [3.0, 3, 1]) == 1  # a tie formed: not a reversal
    assert reversed_pairs(np.array([3.0, 2, 1]), np.array([3.0, 3, 1])) == 0
    with pytest.raises(ValueError, match="NaN"):
        order_changes([1.0, np.nan], [1.0, 2.0])


def test_spearman_rho_is_the_correlation_of_average_ranks():
    x, y = np.array([1.0, 2, 2, 5, 3]), np.array([2.0, 1, 4, 5, 3])
    assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic)
    assert np.isnan(spearman_rho(x, np.ones(5)))


def test_scorings_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="same length"):
        kendall_tau_b(np.arange(3.0), np.arange(4.0))
