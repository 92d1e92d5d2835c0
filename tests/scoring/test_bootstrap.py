from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import ConfigError, ReferenceStandardError, SchemaError
from crsbench_lib.scoring.axes import encoder_profiles, per_seed_axes, raw_axes, standard_axes
from crsbench_lib.scoring.bootstrap import (
    paired_reference_se,
    paired_seed_bootstrap,
    resampled_profiles,
    seed_multiplicities,
)
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.standard import AXES, load_template


@pytest.fixture(scope="module")
def boot(synthetic_table, frozen_standard):
    return paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=7)


def test_shapes_and_probabilities(boot):
    assert boot.crs_draws.shape == (300, 8)
    assert boot.summary["p_rank1"].sum() == pytest.approx(1.0)
    assert boot.summary["p_top3"].sum() == pytest.approx(3.0)
    assert ((boot.summary["crs_low"] <= boot.summary["crs_mean"]) & (boot.summary["crs_mean"] <= boot.summary["crs_high"])).all()
    assert len(boot.pairwise) == 8 * 7 // 2
    assert (boot.pairwise["diff_low"] <= boot.pairwise["diff_high"]).all()
    assert boot.summary["encoder"].tolist() == boot.point["encoder"].tolist()


def test_deterministic(synthetic_table, frozen_standard, boot):
    again = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=7)
    np.testing.assert_array_equal(again.crs_draws, boot.crs_draws)
    other = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=8)
    assert not np.array_equal(other.crs_draws, boot.crs_draws)


def test_identity_draw_reproduces_the_profiles(synthetic_table):
    raw = raw_axes(synthetic_table)
    encoders, _, seeds, values = per_seed_axes(raw)
    profiles = resampled_profiles(values, np.ones((1, len(seeds))))[0]
    np.testing.assert_array_equal(profiles, encoder_profiles(raw).loc[encoders, list(AXES)].to_numpy())


def test_vectorised_draws_match_a_naive_loop(synthetic_table, frozen_standard):
    result = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=5, random_state=11)
    rng = np.random.default_rng(11)
    picks = rng.integers(0, 3, size=(5, 3))
    raw = standard_axes(synthetic_table, frozen_standard)  # the standard's scales, per cell
    for b in range(5):
        # Relabel each resampled seed as its own pseudo-seed, then score the usual way.
        parts = []
        for position, seed in enumerate(sorted(picks[b])):
            part = raw[raw["seed"] == seed].copy()
            part["seed"] = position
            parts.append(part)
        import pandas as pd

        profiles = encoder_profiles(pd.concat(parts))
        for e, name in enumerate(result.encoders):
            # each encoder is scored against the panel without its own entry
            keep = [i for i, other in enumerate(frozen_standard.panel_names) if other != name]
            without = replace(frozen_standard, panel_names=tuple(frozen_standard.panel_names[i] for i in keep),
                              panel_profiles=frozen_standard.panel_profiles[keep])
            scored = score_profiles(profiles, without).set_index("encoder")
            assert result.crs_draws[b, e] == pytest.approx(scored.loc[name, "crs"], abs=1e-12)


def test_multiplicities_sum_to_seed_count():
    counts = seed_multiplicities(3, 50, 0)
    assert counts.shape == (50, 3) and (counts.sum(axis=1) == 3).all()


def test_errors(synthetic_table, frozen_standard):
    with pytest.raises(ReferenceStandardError, match="empty panel"):
        paired_seed_bootstrap(synthetic_table, load_template())
    unpaired = synthetic_table[~((synthetic_table["encoder"] == "enc01") & (synthetic_table["seed"] == 2))]
    with pytest.raises(SchemaError, match="every encoder on every dataset and seed"):
        paired_seed_bootstrap(unpaired, frozen_standard)
    with pytest.raises(ConfigError, match="n_draws"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=0)
    with pytest.raises(ConfigError, match="top_k"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, top_k=9)
    with pytest.raises(ConfigError, match="interval"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, interval=1.0)


# ----------------------------------------------------------------------------- bias, intervals, references

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from crsbench_lib.scoring.bootstrap import interval_summary, tied_with_leader  # noqa: E402
from crsbench_lib.scoring.crs import floor_scores  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    point=st.floats(-1, 1, allow_nan=False),
    shift=st.floats(-0.5, 0.5, allow_nan=False),
    noise=st.lists(st.floats(0, 0.3, allow_nan=False), min_size=1, max_size=20),
)
def test_interval_summary_recovers_a_known_bias(point, shift, noise):
    # Draws symmetric about point + shift (each deviation with both signs): the bias is the shift exactly.
    eps = np.array(noise)
    draws = (point + shift + np.concatenate([eps, -eps]))[:, None]
    row = interval_summary(draws, np.array([point])).iloc[0]
    assert row["bias"] == pytest.approx(shift, abs=1e-9)
    assert row["median"] == pytest.approx(point + shift, abs=1e-9)
    # The basic interval is the percentile interval reflected about the point.
    assert row["basic_low"] == pytest.approx(2 * point - row["high"], abs=1e-12)
    assert row["basic_high"] == pytest.approx(2 * point - row["low"], abs=1e-12)
    assert bool(row["point_inside"]) == (row["low"] <= point <= row["high"])
    assert bool(row["point_inside"]) == (row["basic_low"] <= point <= row["basic_high"])


def test_interval_summary_of_a_minimum_has_the_hand_computed_bias():
    # The floor is a minimum. Two axes at 0.5, each moved by +-0.1 with equal chance (the four
    # sign combinations once each): min is 0.4 in three of four, 0.6 in one, mean 0.45; the
    # point (no noise) is 0.5, so the bias is -0.05 although every axis is unbiased.
    signs = np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]], dtype=float)
    profiles = np.column_stack([0.5 + 0.1 * signs, np.full((4, 2), 0.9)])
    draws = floor_scores(profiles)[:, None]
    point = floor_scores(np.array([[0.5, 0.5, 0.9, 0.9]]))
    row = interval_summary(draws, point).iloc[0]
    assert row["bias"] == pytest.approx(-0.05, abs=1e-12)
    assert row["median"] == pytest.approx(0.4, abs=1e-12)


def test_interval_summary_errors():
    with pytest.raises(ConfigError, match="interval"):
        interval_summary(np.zeros((3, 1)), np.zeros(1), interval=1.0)
    with pytest.raises(ConfigError, match="expected draws"):
        interval_summary(np.zeros((3, 2)), np.zeros(1))


def test_summary_reports_bias_intervals_and_the_full_panel_score(boot, synthetic_table, frozen_standard):
    summary = boot.summary
    columns = [boot.encoders.index(e) for e in summary["encoder"]]
    draws = boot.crs_draws[:, columns]
    np.testing.assert_allclose(summary["bias"], draws.mean(axis=0) - summary["crs"], atol=1e-12)
    np.testing.assert_allclose(summary["crs_median"], np.median(draws, axis=0), atol=1e-12)
    inside = (summary["crs_low"] <= summary["crs"]) & (summary["crs"] <= summary["crs_high"])
    assert (summary["point_inside"] == inside).all()
    table = score_profiles(encoder_profiles(standard_axes(synthetic_table, frozen_standard)), frozen_standard).set_index("encoder")
    np.testing.assert_allclose(summary["crs_full_panel"], table.loc[summary["encoder"], "crs"], atol=1e-12)
    assert (summary["role"] == "candidate").all() and summary["rank"].tolist() == list(range(1, 9))


def test_references_are_scored_but_never_ranked(synthetic_table, frozen_standard, boot):
    leader = boot.summary["encoder"].iloc[0]
    with_ref = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=7, references=[leader])
    # The CRS of every encoder (the reference included) is untouched: the panel is fixed.
    np.testing.assert_array_equal(with_ref.crs_draws, boot.crs_draws)
    row = with_ref.summary.set_index("encoder").loc[leader]
    assert row["role"] == "reference" and pd.isna(row["rank"])
    assert np.isnan(row["p_rank1"]) and np.isnan(row["p_top3"])
    candidates = with_ref.summary[with_ref.summary["role"] == "candidate"]
    assert candidates["p_rank1"].sum() == pytest.approx(1.0)
    assert candidates["p_top3"].sum() == pytest.approx(3.0)
    assert candidates["rank"].tolist() == list(range(1, 8))
    assert leader not in tied_with_leader(with_ref.summary, with_ref.pairwise)
    # Draw by draw, the candidate that ranks first is the best candidate, never the reference.
    keep = [i for i, e in enumerate(with_ref.encoders) if e != leader]
    winners = np.asarray(with_ref.encoders)[keep][np.argmax(with_ref.crs_draws[:, keep], axis=1)]
    for name, p in zip(candidates["encoder"], candidates["p_rank1"], strict=True):
        assert p == pytest.approx(np.mean(winners == name))


def test_reference_errors(synthetic_table, frozen_standard):
    with pytest.raises(ConfigError, match="reference encoder 'nope'"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=5, references=["nope"])
    with pytest.raises(ConfigError, match="at most the 2 candidates"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=5, top_k=3,
                              references=[f"enc0{i}" for i in range(6)])
    with pytest.raises(ConfigError, match="sequence of encoder names"):
        paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=5, references="enc00")


def test_tied_with_leader_names_every_candidate_whose_interval_includes_zero(boot):
    members = tied_with_leader(boot.summary, boot.pairwise)
    leader = boot.summary["encoder"].iloc[0]
    assert members[0] == leader
    for name in boot.summary["encoder"].iloc[1:]:
        pair = boot.pairwise[(boot.pairwise["encoder_a"] == leader) & (boot.pairwise["encoder_b"] == name)].iloc[0]
        assert (name in members) == bool(pair["diff_low"] <= 0 <= pair["diff_high"])


def test_tied_references_are_listed_apart_from_the_tier(synthetic_table, frozen_standard, boot):
    second = boot.summary["encoder"].iloc[1]
    with_ref = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=300, random_state=7, references=[second])
    leader = with_ref.summary["encoder"].iloc[0]
    pair = with_ref.pairwise[(with_ref.pairwise["encoder_a"] == leader) & (with_ref.pairwise["encoder_b"] == second)]
    tied = bool(pair["overlaps_zero"].iloc[0])
    assert tied_with_leader(with_ref.summary, with_ref.pairwise, role="reference") == ([second] if tied else [])
    assert second not in tied_with_leader(with_ref.summary, with_ref.pairwise)
    with pytest.raises(ConfigError, match="role"):
        tied_with_leader(with_ref.summary, with_ref.pairwise, role="panel")


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_top_k_shares_split_exact_ties_as_random_tie_breaking_would(data):
    from itertools import permutations

    from crsbench_lib.scoring.bootstrap import _top_k_shares

    n = data.draw(st.integers(1, 5))
    row = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=float)
    k = data.draw(st.integers(1, n))
    shares = _top_k_shares(row[None], k)[0]
    # Brute force: every order of the encoders that sorts the scores, equally likely.
    orders = [p for p in permutations(range(n)) if all(row[p[i]] >= row[p[i + 1]] for i in range(n - 1))]
    expected = np.array([sum(e in p[:k] for p in orders) / len(orders) for e in range(n)])
    np.testing.assert_allclose(shares, expected, atol=1e-12)
    assert shares.sum() == pytest.approx(k)


def test_identical_draws_share_rank_one_evenly():
    """Two encoders whose CRS draws are equal tie in every draw: neither takes the lead by its name."""
    from crsbench_lib.scoring.bootstrap import _draw_summary

    rng = np.random.default_rng(0)
    top = 0.8 + 0.01 * rng.standard_normal(40)
    crs = np.column_stack([top, top, 0.5 + 0.01 * rng.standard_normal(40)])
    point = pd.DataFrame({"encoder": ["a", "b", "c"], "crs": [0.8, 0.8, 0.5]})
    summary, _ = _draw_summary(crs, ["a", "b", "c"], point, np.arange(3), top_k=1, interval=0.9)
    assert summary["p_rank1"].tolist() == [0.5, 0.5, 0.0]
    assert summary["p_top1"].tolist() == [0.5, 0.5, 0.0]


def test_pairwise_reports_the_difference_bias_and_basic_interval(boot):
    pairs = boot.pairwise
    for _, row in pairs.iterrows():
        a, b = boot.encoders.index(row["encoder_a"]), boot.encoders.index(row["encoder_b"])
        diffs = boot.crs_draws[:, a] - boot.crs_draws[:, b]
        assert row["diff_bias"] == pytest.approx(diffs.mean() - row["diff"], abs=1e-12)
        assert row["diff_basic_low"] == pytest.approx(2 * row["diff"] - row["diff_high"], abs=1e-12)
        assert row["diff_basic_high"] == pytest.approx(2 * row["diff"] - row["diff_low"], abs=1e-12)
        assert bool(row["diff_point_inside"]) == bool(row["diff_low"] <= row["diff"] <= row["diff_high"])


def test_the_pairwise_table_carries_each_candidates_critical_value(boot):
    # Each end of a pair's interval uses the critical value of the candidate whose membership it tests.
    own = boot.summary.set_index("encoder")["critical_value"]
    pairwise = boot.pairwise
    assert (pairwise["critical_low"].to_numpy() == own.loc[pairwise["encoder_b"]].to_numpy()).all()
    assert (pairwise["critical_high"].to_numpy() == own.loc[pairwise["encoder_a"]].to_numpy()).all()
    assert (own.dropna() > 0).all()


def test_paired_standard_errors_cancel_shared_luck():
    rng = np.random.default_rng(0)
    shared = rng.normal(size=(500, 1, 1))
    profiles = np.concatenate([shared, shared + 0.1], axis=1).repeat(4, axis=2)
    crs = profiles[:, :, 0]
    se = paired_reference_se(profiles, crs, ["a", "ref"], "ref")
    assert list(se.index) == ["a"] and float(se.loc["a"].abs().max()) < 1e-12
    with pytest.raises(ValueError, match="reference"):
        paired_reference_se(profiles, crs, ["a", "b"], "ref")
