import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import ConfigError, ReferenceStandardError
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.scoring.rank_statistics import kendall_tau_b
from crsbench_lib.scoring.freeze import freeze_profiles, freeze_standard
from crsbench_lib.scoring.sensitivity import (
    ANCHOR_SWEEP_COLUMNS,
    default_worst_sweep,
    anchor_sweep,
    dirichlet_weights,
    panel_perturbation,
    weight_perturbation,
)


@pytest.fixture(scope="module")
def profiles(synthetic_table, frozen_standard):
    return encoder_profiles(standard_axes(synthetic_table, frozen_standard))  # the standard's scales


def test_dirichlet_centred_on_defaults():
    w = dirichlet_weights(np.array([0.3, 0.4, 0.3]), 20000, concentration=100.0, random_state=0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(w.mean(axis=0), [0.3, 0.4, 0.3], atol=0.002)
    assert w[:, 1].std() == pytest.approx(np.sqrt(0.4 * 0.6 / 101), rel=0.05)
    zero = dirichlet_weights(np.array([0.0, 0.5, 0.5]), 10, random_state=0)
    assert (zero[:, 0] == 0).all()
    with pytest.raises(ConfigError, match="concentration"):
        dirichlet_weights(np.array([0.3, 0.4, 0.3]), 10, concentration=0.0)


def test_weight_perturbation(profiles, frozen_standard):
    result = weight_perturbation(profiles, frozen_standard, n_draws=500, random_state=1)
    assert result.weights.shape == (500, 3) and result.crs_draws.shape == (500, 8)
    assert -1 <= result.taus.min() and result.taus.max() <= 1
    assert result.mean_tau == pytest.approx(result.taus.mean())
    assert result.p_top_k.sum() == pytest.approx(3.0)
    expected_top = tuple(sorted(score_profiles(profiles, frozen_standard)["encoder"].iloc[:3]))
    assert tuple(sorted(result.default_top_k)) == expected_top
    np.testing.assert_array_equal(
        result.default_crs, score_profiles(profiles, frozen_standard).set_index("encoder").loc[profiles.index, "crs"]
    )
    again = weight_perturbation(profiles, frozen_standard, n_draws=500, random_state=1)
    np.testing.assert_array_equal(again.taus, result.taus)


def test_huge_concentration_changes_nothing(profiles, frozen_standard):
    result = weight_perturbation(profiles, frozen_standard, n_draws=50, concentration=1e9)
    assert result.mean_tau == pytest.approx(1.0)
    assert result.share_top_k_changed == 0.0


def test_small_concentration_moves_rankings(profiles, frozen_standard):
    result = weight_perturbation(profiles, frozen_standard, n_draws=500, concentration=1.0)
    assert result.mean_tau < 1.0


def test_panel_perturbation(profiles, frozen_standard):
    result = panel_perturbation(profiles, frozen_standard, n_subsets=200, random_state=2)
    assert len(result.leave_one_out) == 8
    assert result.subset_size == 6  # ceil(2/3 * 8)
    assert result.subset_taus.shape == (200,)
    assert 0.0 <= result.share_changed_subsets <= 1.0
    assert set(result.leave_one_out["left_out"]) == set(frozen_standard.panel_names)


def test_panel_perturbation_needs_two_members(synthetic_table, profiles):
    single = freeze_standard(synthetic_table, "one", panel=["enc00"])
    with pytest.raises(ReferenceStandardError, match="at least 2 panel members"):
        panel_perturbation(profiles, single)
    with pytest.raises(ConfigError, match="subset_size"):
        panel_perturbation(profiles, freeze_standard(synthetic_table, "two", panel=["enc00", "enc01"]), subset_size=5)


def test_anchor_sweep_at_the_default_anchors_reproduces_the_standard(profiles, frozen_standard):
    sweep = anchor_sweep(profiles, frozen_standard, {a: (w,) for a, (w, _) in frozen_standard.anchors.items()}, top_k=3)
    assert sweep["is_default"].all() and not sweep["top_k_changed"].any()
    scores = score_profiles(profiles, frozen_standard)
    expected = kendall_tau_b(scores["D"].to_numpy(float), scores["crs"].to_numpy(float))
    assert np.allclose(sweep["tau_auroc_crs"], expected)
    assert set(sweep["top_k"].iloc[0].split(", ")) == set(scores["encoder"].iloc[:3])


def test_anchor_sweep_covers_the_default_grid_and_rejects_bad_anchors(profiles, frozen_standard):
    sweep = anchor_sweep(profiles, frozen_standard)
    assert list(sweep.columns) == list(ANCHOR_SWEEP_COLUMNS)
    assert len(sweep) == sum(len(v) for v in default_worst_sweep(frozen_standard).values())
    assert sweep["tau_auroc_crs"].between(-1, 1).all()
    assert sweep.groupby("axis")["is_default"].sum().eq(1).all()  # each grid holds the method's default
    with pytest.raises(ReferenceStandardError, match="equals its best"):
        anchor_sweep(profiles, frozen_standard, {"D": (1.0,)})
    with pytest.raises(ReferenceStandardError, match="not among the profiles"):
        anchor_sweep(profiles.iloc[1:], frozen_standard)


def test_anchor_sweep_moves_the_ranking_when_an_axis_is_stretched():
    # b is best calibrated and a has the highest AUROC; a tight C anchor lets C dominate.
    profiles = pd.DataFrame(
        {"D": [0.95, 0.7, 0.8], "C": [0.09, 0.005, 0.05], "L": [0.9, 0.9, 0.9], "R": [0.05, 0.05, 0.05]},
        index=["a", "b", "c"],
    )
    standard = freeze_profiles(profiles, "demo-v1", created="2026-01-01T00:00:00Z")
    sweep = anchor_sweep(profiles, standard, {"C": (0.1, 0.4)}, top_k=1).set_index("worst")
    assert sweep.at[0.1, "top_k"] != sweep.at[0.4, "top_k"]


def test_a_reference_takes_no_top_k_place_and_no_part_in_tau(profiles, frozen_standard):
    from crsbench_lib.scoring.rank_statistics import kendall_tau_b
    from crsbench_lib.scoring.sensitivity import kendall_tau_to_reference

    plain = weight_perturbation(profiles, frozen_standard, n_draws=200, random_state=2)
    leader = plain.default_top_k[0]
    kept = weight_perturbation(profiles, frozen_standard, n_draws=200, random_state=2, references=[leader])
    others = np.array([name != leader for name in plain.encoders])
    # The scores are the same; the taus rank the candidates only.
    np.testing.assert_array_equal(kept.crs_draws, plain.crs_draws)
    np.testing.assert_array_equal(kept.taus, kendall_tau_to_reference(plain.default_crs[others],
                                                                      plain.crs_draws[:, others]))
    assert leader not in kept.default_top_k and len(kept.default_top_k) == 3
    assert np.isnan(kept.p_top_k[leader]) and kept.p_top_k.drop(leader).notna().all()
    assert set(plain.default_top_k) - {leader} <= set(kept.default_top_k)  # the others keep their places
    panel = panel_perturbation(profiles, frozen_standard, n_subsets=50, random_state=0, references=[leader])
    assert leader not in panel.default_top_k and len(panel.default_top_k) == 3
    sweep = anchor_sweep(profiles, frozen_standard, {"C": (0.1, 0.2)}, references=[leader])
    plain_sweep = anchor_sweep(profiles, frozen_standard, {"C": (0.1, 0.2)})
    assert not sweep["top_k"].str.contains(leader).any()
    assert sweep["top_k"].tolist() != [] and len(sweep) == len(plain_sweep)
    rescored = profiles.drop(index=leader)
    assert sweep["tau_auroc_crs"].iloc[0] == pytest.approx(kendall_tau_b(
        rescored["D"].to_numpy(float), _rescored_crs(profiles, frozen_standard, "C", 0.1).reindex(rescored.index).to_numpy(float)))
    with pytest.raises(ConfigError, match="the candidates"):
        weight_perturbation(profiles, frozen_standard, n_draws=5, top_k=8, references=[leader])


def _rescored_crs(profiles, standard, axis, worst):
    from dataclasses import replace

    from crsbench_lib.scoring.sensitivity import _rescored

    varied = replace(standard, anchors={**standard.anchors, axis: (float(worst), standard.anchors[axis][1])})
    return _rescored(profiles, varied)["crs"]
