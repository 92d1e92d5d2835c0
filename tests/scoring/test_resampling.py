import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.scoring.rank_statistics import kendall_tau_b_rows, spearman_rho_rows
from crsbench_lib.scoring.resampling import (
    Direction,
    crossed_weights,
    factor_codes,
    interval_direction,
    multiplicities,
    percentile_interval,
    permutation_p_value,
)


def test_exact_test_equals_the_enumeration_by_hand():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    y = np.array([2.0, 1.0, 4.0, 3.0, 5.0])
    observed = stats.kendalltau(x, y).statistic
    taus = [stats.kendalltau(x, y[list(p)]).statistic for p in itertools.permutations(range(5))]
    expected = np.mean(np.abs(taus) >= abs(observed) - 1e-12)
    test = permutation_p_value(x, y, kendall_tau_b_rows)
    assert test.method == "exact" and test.n_permutations == 120
    assert test.statistic == pytest.approx(observed)
    assert test.p_value == pytest.approx(expected)


def test_exact_kendall_matches_scipy_exact_without_ties():
    rng = np.random.default_rng(4)
    x, y = rng.permutation(7).astype(float), rng.permutation(7).astype(float)
    test = permutation_p_value(x, y, kendall_tau_b_rows)
    assert test.p_value == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue)


def test_monte_carlo_is_deterministic_never_zero_and_close_to_exact():
    x = np.arange(12.0)
    y = x.copy()
    first = permutation_p_value(x, y, spearman_rho_rows, n_permutations=999, random_state=1)
    again = permutation_p_value(x, y, spearman_rho_rows, n_permutations=999, random_state=1)
    assert first == again
    assert first.method == "monte_carlo" and first.p_value == pytest.approx(1 / 1000)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=12), rng.normal(size=12)
    mc = permutation_p_value(a, b, kendall_tau_b_rows, n_permutations=4000, random_state=2)
    exact = stats.kendalltau(a, b, method="exact").pvalue
    assert mc.p_value == pytest.approx(exact, abs=0.03)


def test_undefined_statistic_gives_nan_p():
    test = permutation_p_value(np.ones(5), np.arange(5.0), kendall_tau_b_rows)
    assert np.isnan(test.statistic) and np.isnan(test.p_value)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=3, max_size=6), st.randoms(use_true_random=False))
def test_p_value_is_a_probability_and_symmetric_in_sign(values, random):
    x = np.array(values, dtype=float)
    y = np.array(random.sample(range(len(values)), len(values)), dtype=float)
    test = permutation_p_value(x, y, kendall_tau_b_rows)
    if np.isnan(test.statistic):
        return
    assert 0.0 < test.p_value <= 1.0
    flipped = permutation_p_value(x, -y, kendall_tau_b_rows)
    assert flipped.statistic == pytest.approx(-test.statistic)
    assert flipped.p_value == pytest.approx(test.p_value)


def test_permutation_errors():
    with pytest.raises(ValueError, match="same length"):
        permutation_p_value(np.arange(3.0), np.arange(4.0), kendall_tau_b_rows)
    with pytest.raises(ValueError, match="at least 2"):
        permutation_p_value(np.arange(1.0), np.arange(1.0), kendall_tau_b_rows)
    with pytest.raises(ValueError, match="n_permutations"):
        permutation_p_value(np.arange(12.0), np.arange(12.0), kendall_tau_b_rows, n_permutations=0)


def test_percentile_interval_ignores_nan_and_matches_numpy():
    draws = np.concatenate([np.linspace(0, 1, 201), [np.nan, np.inf]])
    low, high, n = percentile_interval(draws, 0.9)
    assert n == 201
    assert (low, high) == pytest.approx(tuple(np.percentile(np.linspace(0, 1, 201), [5, 95])))
    assert np.isnan(percentile_interval(np.full(3, np.nan))[0])
    with pytest.raises(ValueError, match="coverage"):
        percentile_interval(draws, 1.0)


def test_direction():
    assert interval_direction(-2.0, -1.0) is Direction.BELOW_ZERO
    assert interval_direction(0.5, 1.0) is Direction.ABOVE_ZERO
    assert interval_direction(0.0, 1.0) is Direction.SPANS_ZERO
    assert interval_direction(float("nan"), 1.0) is Direction.UNDEFINED


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 9), st.integers(1, 20), st.integers(0, 2**31 - 1))
def test_multiplicities_sum_to_the_number_of_levels(n_levels, n_draws, seed):
    counts = multiplicities(n_levels, n_draws, np.random.default_rng(seed))
    assert counts.shape == (n_draws, n_levels)
    assert (counts >= 0).all() and (counts.sum(axis=1) == n_levels).all()


def test_crossed_weights_are_products_of_level_multiplicities():
    encoder = np.repeat(np.arange(4), 3)
    seed = np.tile(np.arange(3), 4)
    weights = crossed_weights({"encoder": encoder, "seed": seed}, n_draws=50, random_state=7)
    # Per draw, the weights factorise: an outer product of encoder and seed counts.
    grid = weights.reshape(50, 4, 3)
    for b in range(50):
        enc, sd = grid[b].sum(axis=1), grid[b].sum(axis=0)
        np.testing.assert_allclose(grid[b] * grid[b].sum(), np.outer(enc, sd))
        assert grid[b].sum() == 4 * 3
    fixed = crossed_weights({"encoder": encoder, "seed": seed}, n_draws=5, factors=["encoder"])
    np.testing.assert_array_equal(fixed.reshape(5, 4, 3)[:, :, 0], fixed.reshape(5, 4, 3)[:, :, 2])
    np.testing.assert_array_equal(weights, crossed_weights({"encoder": encoder, "seed": seed}, 50, random_state=7))
    with pytest.raises(ValueError, match="unknown resampling factor"):
        crossed_weights({"encoder": encoder}, 5, factors=["dataset"])
    with pytest.raises(ValueError, match="same length"):
        crossed_weights({"encoder": encoder, "seed": seed[:-1]}, 5)


def test_factor_codes_do_not_depend_on_row_order():
    frame = pd.DataFrame({"encoder": ["b", "a", "c", "a"]})
    np.testing.assert_array_equal(factor_codes(frame, ["encoder"])["encoder"], [1, 0, 2, 0])
    with pytest.raises(ValueError, match="no column"):
        factor_codes(frame, ["dataset"])


def test_exact_limit_is_respected():
    limit = math.factorial(5)
    five, six = np.arange(5.0), np.arange(6.0)
    assert permutation_p_value(five, five, kendall_tau_b_rows, exact_limit=limit).method == "exact"
    assert permutation_p_value(six, six, kendall_tau_b_rows, n_permutations=50, exact_limit=limit).method == "monte_carlo"
    assert permutation_p_value(np.arange(9.0), np.arange(9.0), kendall_tau_b_rows, n_permutations=50).method == "monte_carlo"
