"""The leading tier as a confidence set for the best candidate (method section 9, amendment 15)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from crsbench_lib.errors import ConfigError
from crsbench_lib.scoring.tier import best_confidence_set


def test_far_apart_candidates_leave_the_leader_alone_and_near_ties_stay():
    rng = np.random.default_rng(1)
    truth = np.array([0.60, 0.598, 0.40, 0.20])
    draws = truth + rng.normal(0.0, 0.01, (1000, 4))
    decision = best_confidence_set(draws, truth)
    assert decision.in_tier.tolist() == [True, True, False, False]
    assert decision.critical_value > 1.96  # simultaneous over 6 pairs: wider than one pair's 95 %
    assert np.isnan(decision.low[0, 0]) and decision.low[0, 2] > 0


def test_a_bias_of_the_draws_moves_no_decision():
    # The intervals are centred on the point: shifting every draw of a column (a biased
    # bootstrap) changes neither the critical value nor the set.
    rng = np.random.default_rng(2)
    point = np.array([0.50, 0.47, 0.45, 0.30])
    draws = point + rng.normal(0.0, 0.012, (800, 4))
    shifted = draws + np.array([-0.05, 0.02, 0.0, 0.04])
    a, b = best_confidence_set(draws, point), best_confidence_set(shifted, point)
    assert a.in_tier.tolist() == b.in_tier.tolist()
    assert a.critical_value == pytest.approx(b.critical_value, rel=1e-9)


def test_references_are_never_members_and_do_not_widen_the_critical_value():
    rng = np.random.default_rng(3)
    point = np.array([0.7, 0.5, 0.49])
    draws = point + rng.normal(0.0, [0.001, 0.02, 0.02], (1000, 3))
    with_all = best_confidence_set(draws, point)
    candidates = np.array([False, True, True])
    only = best_confidence_set(draws, point, candidates)
    assert only.in_tier.tolist() == [False, True, True]
    assert not with_all.in_tier[1]  # the far-ahead first column beats them when it competes


def test_identical_draws_tie_and_constant_gaps_separate():
    point = np.array([0.5, 0.5, 0.4])
    draws = np.tile(point, (50, 1))
    assert best_confidence_set(draws, point).in_tier.tolist() == [True, True, False]


def test_the_set_holds_the_true_best_at_the_nominal_rate():
    # Known truth: estimates are the truth plus correlated normal noise; each replicate's
    # bootstrap draws are the estimate plus fresh noise of the same law (a parametric
    # bootstrap). The set must hold the truly best candidate in at least 95 % of the
    # replicates, up to three Monte-Carlo standard errors.
    rng = np.random.default_rng(7)
    truth = np.array([0.60, 0.59, 0.585, 0.55, 0.50])
    cov = 0.01**2 * (0.5 * np.eye(5) + 0.5)
    chol = np.linalg.cholesky(cov)
    replicates, held = 300, 0
    for _ in range(replicates):
        estimate = truth + chol @ rng.normal(size=5)
        draws = estimate + rng.normal(size=(400, 5)) @ chol.T
        held += bool(best_confidence_set(draws, estimate).in_tier[0])
    observed = held / replicates
    assert observed >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / replicates)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (30, 4), elements=st.floats(-1, 1)), arrays(np.float64, (4,), elements=st.floats(-1, 1)),
       st.floats(0.5, 0.99))
def test_the_point_leader_is_always_in_the_tier_and_a_wider_level_drops_nobody(noise, point, level):
    draws = point + 0.1 * noise
    decision = best_confidence_set(draws, point, interval=level)
    assert decision.in_tier[int(np.argmax(point))]
    wider = best_confidence_set(draws, point, interval=min(0.999, level + 0.005))
    assert (wider.in_tier | ~decision.in_tier).all()  # a higher level can only keep more candidates


@pytest.mark.parametrize("draws, point, message", [
    (np.zeros((1, 3)), np.zeros(3), "at least two draws"),
    (np.zeros((5, 3)), np.zeros(2), "expected draws"),
])
def test_bad_input_is_one_line(draws, point, message):
    with pytest.raises(ConfigError, match=message):
        best_confidence_set(draws, point)
    with pytest.raises(ConfigError, match="interval"):
        best_confidence_set(np.zeros((5, 3)), np.zeros(3), interval=1.0)
