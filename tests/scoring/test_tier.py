"""The leading tier as a confidence set for the best candidate (method section 9, amendment 15)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from crsbench_lib.errors import ConfigError, SchemaError
from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap, tied_with_leader
from crsbench_lib.scoring.tier import best_confidence_set, leader_comparisons


def test_far_apart_candidates_leave_the_leader_alone_and_near_ties_stay():
    rng = np.random.default_rng(1)
    truth = np.array([0.60, 0.598, 0.40, 0.20])
    draws = truth + rng.normal(0.0, 0.01, (1000, 4))
    decision = best_confidence_set(draws, truth)
    assert decision.in_tier.tolist() == [True, True, False, False]
    # One-sided over each candidate's 3 rivals: above one comparison's 1.64, below the max-t over 6 pairs.
    old = best_confidence_set(draws, truth, method="max_t")
    assert 1.64 < decision.critical_values.min() and decision.critical_value < old.critical_value
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


def test_the_marginal_tier_is_narrower_than_the_max_t_tier_and_still_holds_the_best():
    # Issue 46, item 1. Twelve candidates with independent noise: the max-t value over all 66 pairs
    # (two-sided) is near 3.2 standard errors, each candidate's one-sided value over its 11 rivals near 2.3.
    # A rival 2.8 standard errors of a difference behind the leader is out of the new tier, in the old one.
    rng = np.random.default_rng(11)
    sd = 0.01
    gap = 2.8 * np.sqrt(2) * sd
    truth = np.array([0.70, 0.70 - gap] + [0.50 - 0.01 * k for k in range(10)])
    draws = truth + rng.normal(0.0, sd, (4000, 12))
    new, old = best_confidence_set(draws, truth), best_confidence_set(draws, truth, method="max_t")
    assert (old.in_tier | ~new.in_tier).all()  # every new member is an old one
    assert old.in_tier[:2].tolist() == [True, True] and new.in_tier[:2].tolist() == [True, False]
    assert np.nanmax(new.critical_values) < old.critical_value
    # In simulation the narrower set still holds the truly best at (at least) its level, in a close race
    # where the best has rivals at every distance.
    close = np.array([0.60, 0.598, 0.595, 0.59, 0.585, 0.58, 0.57, 0.56])
    replicates, held, size_new, size_old = 300, 0, 0, 0
    for _ in range(replicates):
        estimate = close + rng.normal(0.0, sd, 8)
        boot = estimate + rng.normal(0.0, sd, (400, 8))
        decision = best_confidence_set(boot, estimate)
        held += bool(decision.in_tier[0])
        size_new += int(decision.in_tier.sum())
        size_old += int(best_confidence_set(boot, estimate, method="max_t").in_tier.sum())
    assert held / replicates >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / replicates)
    assert size_new < size_old


def test_an_unknown_method_is_refused():
    with pytest.raises(ConfigError, match="method"):
        best_confidence_set(np.zeros((5, 3)), np.zeros(3), method="stepdown")


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


@settings(max_examples=40, deadline=None)
@given(st.floats(-0.5, 0.5), st.floats(0.0, 0.2), st.floats(-0.05, 0.05))
def test_leader_comparisons_orient_each_pair_as_the_leader_less_the_other(diff, half, bias):
    forward = pd.DataFrame({"encoder_a": ["a"], "encoder_b": ["b"], "diff": [diff], "sim_low": [diff - half],
                            "sim_high": [diff + half], "diff_bias": [bias], "separated": [half < abs(diff)]})
    backward = forward.assign(encoder_a=["b"], encoder_b=["a"], diff=[-diff], sim_low=[-diff - half],
                              sim_high=[-diff + half], diff_bias=[-bias])
    one, other = leader_comparisons(forward, "a", ["b"]), leader_comparisons(backward, "a", ["b"])
    pd.testing.assert_frame_equal(one, other, atol=1e-12, rtol=0)
    assert one.loc[0, "low"] <= one.loc[0, "diff"] <= one.loc[0, "high"]
    assert one.loc[0, "diff"] == pytest.approx(diff) and one.loc[0, "bias"] == pytest.approx(bias)


def test_leader_comparisons_refuse_a_missing_pair_or_column():
    pairwise = pd.DataFrame({"encoder_a": ["a"], "encoder_b": ["b"], "diff": [0.1], "sim_low": [0.0],
                             "sim_high": [0.2], "diff_bias": [0.0], "separated": [False]})
    with pytest.raises(SchemaError, match="no pairwise row for 'a' and 'c'"):
        leader_comparisons(pairwise, "a", ["c"])
    with pytest.raises(SchemaError, match="lacks column 'sim_low'"):
        leader_comparisons(pairwise.drop(columns="sim_low"), "a", ["b"])


@settings(max_examples=6, deadline=None)
@given(random_state=st.integers(0, 10_000))
def test_every_member_is_tied_with_the_leader_and_an_excluded_runner_up_is_beaten_by_it(
        synthetic_table, frozen_standard, random_state):
    boot = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=60, random_state=random_state)
    members = tied_with_leader(boot.summary, boot.pairwise)
    candidates = boot.summary.loc[boot.summary["role"] == "candidate", "encoder"].tolist()
    others = [c for c in candidates if c != members[0]]
    table = leader_comparisons(boot.pairwise, members[0], others).set_index("encoder")
    for name in members[1:]:
        assert table.loc[name, "low"] <= 0 <= table.loc[name, "high"] and not table.loc[name, "separated"]
    runner_up = others[0]
    if runner_up not in members:
        assert table.loc[runner_up, "low"] > 0 and table.loc[runner_up, "separated"]
