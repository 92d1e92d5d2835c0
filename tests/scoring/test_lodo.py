import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring import crs, encoder_profiles, freeze_standard, lodo
from crsbench_lib.scoring.axes import standard_axes
from crsbench_lib.standard import ReferenceStandard


def raw_table(rng: np.random.Generator, n_enc: int = 6, datasets=("derm", "fundus", "cxr"), seeds=(0, 1)) -> pd.DataFrame:
    rows = []
    for e in range(n_enc):
        for d in datasets:
            for s in seeds:
                rows.append({"encoder": f"e{e}", "dataset": d, "seed": s, "D": 0.6 + 0.05 * e + rng.normal(0, 0.01),
                             "C": rng.uniform(0, 0.2), "L": rng.uniform(0.7, 1), "R": rng.uniform(0, 0.1)})
    return pd.DataFrame(rows)


def test_predictors_and_taus():
    raw = raw_table(np.random.default_rng(0))
    scorer = lambda p: p["D"] - p["C"]  # noqa: E731
    result = lodo.leave_one_dataset_out(raw, scorer=scorer)
    assert set(result["held_out"]) == {"derm", "fundus", "cxr"}
    assert set(result["predictor"]) == {"crs", "auroc", "C", "L", "R"}
    held = result[(result["held_out"] == "cxr") & (result["predictor"] == "auroc")].iloc[0]
    target = raw[raw["dataset"] == "cxr"].groupby("encoder")["D"].mean()
    baseline = raw[raw["dataset"] != "cxr"].groupby(["encoder", "dataset"])["D"].mean().groupby("encoder").mean()
    assert held["kendall_tau"] == pytest.approx(stats.kendalltau(baseline, target.reindex(baseline.index)).statistic)
    # AUROC is driven by the encoder index, so the baseline ranks the held-out set perfectly
    assert held["kendall_tau"] == pytest.approx(1.0)
    # orientation: C is negated (lower ECE is better)
    c_row = result[(result["held_out"] == "cxr") & (result["predictor"] == "C")].iloc[0]
    reduced_c = raw[raw["dataset"] != "cxr"].groupby(["encoder", "dataset"])["C"].mean().groupby("encoder").mean()
    assert c_row["kendall_tau"] == pytest.approx(stats.kendalltau(-reduced_c, target.reindex(reduced_c.index)).statistic)
    summary = lodo.lodo_summary(result)
    assert list(summary.columns) == ["crs", "auroc", "C", "L", "R"]
    assert summary.loc["mean", "auroc"] == pytest.approx(1.0)


def test_constant_predictor_gives_nan():
    raw = raw_table(np.random.default_rng(1))
    result = lodo.leave_one_dataset_out(raw, scorer=lambda p: pd.Series(0.5, index=p.index))
    assert result.loc[result["predictor"] == "crs", "kendall_tau"].isna().all()


def test_shift_prediction():
    table = synthetic_results(n_encoders=5, seeds=(0, 1), corruptions=())
    clean = table[(table["condition"] == "clean") & (table["calibration"] == "none")]
    auroc = clean[clean["dataset"] == "cxr"].groupby("encoder")["auroc"].mean()
    scores = pd.DataFrame({"encoder": auroc.index.astype(str), "crs": auroc.to_numpy()})
    result = lodo.shift_prediction(table, scores)
    assert list(result["dataset"]) == ["cxr", "cxr"]
    row = result.set_index("predictor")
    assert row.loc["crs", "kendall_tau"] == pytest.approx(row.loc["clean_auroc", "kendall_tau"])
    with pytest.raises(SchemaError, match="no shift rows"):
        lodo.shift_prediction(table[table["condition"] != "shift"], scores)


def test_errors():
    raw = raw_table(np.random.default_rng(2))
    with pytest.raises(ValueError, match="standard or a scorer"):
        lodo.leave_one_dataset_out(raw)
    with pytest.raises(SchemaError, match="at least 2 datasets"):
        lodo.leave_one_dataset_out(raw[raw["dataset"] == "derm"], scorer=lambda p: p["D"])
    with pytest.raises(SchemaError, match="missing column"):
        lodo.leave_one_dataset_out(raw.drop(columns="L"), scorer=lambda p: p["D"])


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=6, seeds=(0, 1), corruptions=("noise",), severities=(1, 3))


@pytest.fixture(scope="module")
def standard(table):
    return freeze_standard(table, "t", created="2026-01-01T00:00:00Z")


def test_held_out_dataset_leaves_the_panel(table, standard):
    """LODO's CRS equals scoring the reduced table against a standard frozen from the reduced table."""
    raw = standard_axes(table, standard)
    result = lodo.leave_one_dataset_out(raw, standard)
    reduced_table = table[table["dataset"] != "fundus"]
    refrozen = freeze_standard(reduced_table, "r", base=standard, created="2026-01-01T00:00:00Z")
    expected_scores = crs.score_results(reduced_table, refrozen).set_index("encoder")["crs"].sort_index()
    target = raw[raw["dataset"] == "fundus"].groupby("encoder")["D"].mean().sort_index()
    row = result[(result["held_out"] == "fundus") & (result["predictor"] == "crs")].iloc[0]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(expected_scores, target).statistic)
    assert row["panel_size"] == 6
    own = lodo.lodo_standard(standard, encoder_profiles(raw[raw["dataset"] != "fundus"]), "fundus")
    np.testing.assert_array_equal(own.panel_profiles, refrozen.panel_profiles)
    assert own.anchors == standard.anchors and own.weights == standard.weights
    assert own.version == "t-without-fundus" and own.created == standard.created
    # The held-out dataset was in the standard's panel: refreezing changes it.
    assert not np.array_equal(own.panel_profiles, standard.panel_profiles)


def test_panel_members_outside_the_table_leave_the_panel(table, standard):
    raw = standard_axes(table, standard)
    kept = raw[raw["encoder"].isin(["enc00", "enc01", "enc02", "enc03"])]
    result = lodo.leave_one_dataset_out(kept, standard)
    assert (result["panel_size"] == 4).all()
    with pytest.raises(SchemaError, match="no member of the panel"):
        lodo.lodo_standard(standard, encoder_profiles(raw).rename(index=lambda e: f"new-{e}"), "derm")


def test_site_b_prediction_uses_a_crs_without_the_shift_term(table, standard):
    result = lodo.site_b_prediction(table, standard)
    assert list(result["predictor"]) == ["crs_without_shift", "clean_auroc"]
    site_a = table[table["condition"] != "shift"]
    refrozen = freeze_standard(site_a, "s", base=standard, created="2026-01-01T00:00:00Z")
    predictor = crs.score_results(site_a, refrozen).set_index("encoder")["crs"].sort_index()
    shift = table[(table["condition"] == "shift") & (table["calibration"] == "none")]
    target = shift.groupby("encoder")["auroc"].mean().sort_index()
    got = result.set_index("predictor").loc["crs_without_shift", "kendall_tau"]
    assert got == pytest.approx(stats.kendalltau(predictor, target).statistic)
    # The predictor does not see site B: moving the site-B AUROC moves only the target.
    moved = table.copy()
    on_b = moved["condition"] == "shift"
    moved.loc[on_b, "auroc"] = 0.5 + (moved.loc[on_b, "auroc"] - 0.5) / 2
    again = lodo.site_b_prediction(moved, standard).set_index("predictor")
    target_moved = moved[on_b & (moved["calibration"] == "none")].groupby("encoder")["auroc"].mean().sort_index()
    assert again.loc["crs_without_shift", "kendall_tau"] == pytest.approx(
        stats.kendalltau(predictor, target_moved).statistic
    )
    with pytest.raises(SchemaError, match="no shift rows"):
        lodo.site_b_prediction(site_a, standard)


def _both_arms() -> tuple[pd.DataFrame, ReferenceStandard]:
    """A table with a frozen and a lora arm, and the standard frozen from it."""
    both = synthetic_results(n_encoders=5, seeds=(0,), corruptions=("noise",), severities=(1, 3), arms=("frozen", "lora"))
    # Adaptation helps on every axis, so the adapted profiles dominate frozen panel entries.
    lora = both["arm"] == "lora"
    both.loc[lora, "auroc"] = (both.loc[lora, "auroc"] + 0.05).clip(upper=0.999)
    both.loc[lora, "ece"] = both.loc[lora, "ece"] / 2
    return both, freeze_standard(both, "t", created="2026-01-01T00:00:00Z")


def test_site_b_prediction_of_the_lora_arm_refreezes_the_standards_arm():
    both, standard = _both_arms()
    site_a = both[both["condition"] != "shift"]
    refrozen = freeze_standard(site_a, "s", base=standard, arm="frozen", created="2026-01-01T00:00:00Z")
    predictor = crs.score_results(site_a, refrozen, arm="lora").set_index("encoder")["crs"].sort_index()
    shift = both[(both["condition"] == "shift") & (both["arm"] == "lora")]
    target = shift.groupby("encoder")["auroc"].mean().sort_index()
    got = lodo.site_b_prediction(both, standard, arm="lora").set_index("predictor").loc["crs_without_shift"]
    assert got["kendall_tau"] == pytest.approx(stats.kendalltau(predictor, target).statistic)
    scores = lodo.shift_free_scores(both, standard, arm="lora").set_index("encoder")["crs"].sort_index()
    np.testing.assert_allclose(scores.to_numpy(), predictor.to_numpy(), rtol=0, atol=1e-12)
    # A panel refrozen from the adapted arm would be another reference (and other scores).
    lora_panel = freeze_standard(site_a, "l", base=standard, arm="lora", created="2026-01-01T00:00:00Z")
    assert not np.allclose(crs.score_results(site_a, lora_panel, arm="lora")["crs"].sort_values(), np.sort(scores))


def test_lodo_of_the_lora_arm_refreezes_the_panel_from_the_frozen_arm():
    both, standard = _both_arms()
    lora = both["arm"] == "lora"
    result = lodo.leave_one_dataset_out(standard_axes(both, standard, "lora"), standard,
                                       panel_raw=standard_axes(both, standard))
    reduced = both[both["dataset"] != "derm"]
    refrozen = freeze_standard(reduced, "r", base=standard, created="2026-01-01T00:00:00Z")
    expected = crs.score_results(reduced, refrozen, arm="lora").set_index("encoder")["crs"].sort_index()
    target = both[lora & (both["dataset"] == "derm") & (both["condition"] == "clean") & (both["calibration"] == "none")]
    target = target.groupby("encoder")["auroc"].mean().sort_index()
    row = result[(result["held_out"] == "derm") & (result["predictor"] == "crs")].iloc[0]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(expected, target).statistic)


# --- the difference of two predictors' taus, with a paired encoder bootstrap ---


def test_tau_difference_matches_the_lodo_taus_and_is_paired(table, standard):
    raw = standard_axes(table, standard)
    predictions = lodo.lodo_predictions(raw, standard)
    summary = lodo.lodo_summary(lodo.leave_one_dataset_out(raw, standard))
    diff = lodo.tau_difference(predictions, "crs", "auroc", "held_out", n_draws=300, random_state=1)
    assert diff.tau_first == pytest.approx(summary.loc["mean", "crs"], abs=1e-12)
    assert diff.tau_second == pytest.approx(summary.loc["mean", "auroc"], abs=1e-12)
    assert diff.estimate == pytest.approx(diff.tau_first - diff.tau_second)
    assert diff.n_blocks == 3 and diff.n_encoders == 6 and 0 < diff.n_draws <= 300
    assert diff.ci_low <= diff.ci_high
    # Paired: a predictor against itself differs by exactly 0 in every draw.
    same = lodo.tau_difference(predictions, "crs", "crs", "held_out", n_draws=100)
    assert same.estimate == 0.0 and same.ci_low == 0.0 and same.ci_high == 0.0
    assert str(same.direction) == "spans_zero"
    # Deterministic for a seed.
    again = lodo.tau_difference(predictions, "crs", "auroc", "held_out", n_draws=300, random_state=1)
    assert (again.ci_low, again.ci_high) == (diff.ci_low, diff.ci_high)


def test_tau_difference_separates_a_perfect_from_a_reversed_predictor():
    n = 12
    frame = pd.DataFrame({"block": "d", "encoder": [f"e{i}" for i in range(n)], "target": np.arange(n, dtype=float)})
    frame["perfect"] = frame["target"]
    frame["reversed"] = -frame["target"]
    diff = lodo.tau_difference(frame, "perfect", "reversed", "block", n_draws=200)
    assert diff.estimate == pytest.approx(2.0)
    assert str(diff.direction) == "above_zero"
    flipped = lodo.tau_difference(frame, "reversed", "perfect", "block", n_draws=200)
    assert str(flipped.direction) == "below_zero"


def test_tau_difference_input_errors():
    frame = pd.DataFrame({"block": "d", "encoder": ["a", "b", "c"], "target": [1.0, 2, 3], "p": [1.0, 3, 2]})
    with pytest.raises(SchemaError, match="missing column"):
        lodo.tau_difference(frame, "p", "q", "block")
    with pytest.raises(SchemaError, match="twice"):
        lodo.tau_difference(pd.concat([frame, frame]), "p", "p", "block")
    with pytest.raises(SchemaError, match="NaN"):
        lodo.tau_difference(frame.assign(p=[1.0, np.nan, 2]), "p", "p", "block")
    with pytest.raises(SchemaError, match="at least 2 encoders"):
        lodo.tau_difference(frame.iloc[:1], "p", "p", "block")


def test_site_b_predictions_hold_the_taus_of_site_b_prediction(table, standard):
    frame = lodo.site_b_predictions(table, standard)
    taus = lodo.site_b_prediction(table, standard).set_index("predictor")["kendall_tau"]
    diff = lodo.tau_difference(frame, "crs_without_shift", "clean_auroc", "dataset", n_draws=100)
    assert diff.tau_first == pytest.approx(taus["crs_without_shift"], abs=1e-12)
    assert diff.tau_second == pytest.approx(taus["clean_auroc"], abs=1e-12)


def test_tau_difference_table_has_one_row_per_comparison(table, standard):
    predictions = lodo.lodo_predictions(standard_axes(table, standard), standard)
    diff = lodo.tau_difference(predictions, "crs", "auroc", "held_out", n_draws=50)
    out = lodo.tau_difference_table({"a": diff, "b": diff})
    assert list(out["comparison"]) == ["a", "b"]
    assert out.loc[0, "estimate"] == diff.estimate and out.loc[0, "direction"] == str(diff.direction)


def test_tau_difference_compares_both_predictors_on_the_same_blocks():
    """A predictor constant in one block has no tau there; the other's tau there must not count either."""
    rows = []
    for block, p in (("d1", [1.0, 2, 3, 4, 5]), ("d2", [1.0, 1, 1, 1, 1])):
        for i in range(5):
            rows.append({"block": block, "encoder": f"e{i}", "target": float(i), "p": p[i], "q": [5.0, 1, 2, 3, 4][i]
                         if block == "d2" else p[i]})
    diff = lodo.tau_difference(pd.DataFrame(rows), "p", "q", "block", n_draws=200)
    # On d1, the only block where both are defined, p and q are the same predictor.
    assert diff.estimate == 0.0 and diff.tau_first == diff.tau_second == 1.0
    assert diff.ci_low == 0.0 and diff.ci_high == 0.0


def test_the_standards_axis_scales_reach_the_shift_free_scores(table, standard, monkeypatch):
    # The LoDO profiles come from standard_axes(results, standard, arm), so a standard's scales reach them.
    seen = []
    real = lodo.standard_axes

    def spy(results, std, arm="frozen"):
        seen.append(std)
        return real(results, std, arm=arm)

    monkeypatch.setattr(lodo, "standard_axes", spy)
    lodo.shift_free_scores(table, standard)
    assert seen and all(s is standard for s in seen)


def test_held_out_bootstrap_taus_are_two_independent_draws_of_each_held_out_auroc_ranking():
    from crsbench_lib.results.predictions import dataset_arrays, restrict_arrays
    from crsbench_lib.scoring.retest import bootstrap_retest_taus
    from crsbench_lib.scoring.two_level_bootstrap import two_level_bootstrap
    from tests.scoring.test_bootstrap_two_level import standard as make_standard
    from tests.scoring.test_bootstrap_two_level import synthetic_predictions

    arrays = dataset_arrays(synthetic_predictions(seed=1))
    std = make_standard({"alpha": np.array([0.6, 0.6, 0.6, 0.6]), "beta": np.array([0.7, 0.5, 0.6, 0.8])})
    out = lodo.held_out_bootstrap_taus(arrays, std, n_draws=10, random_state=3)
    assert list(out.columns) == list(lodo.HELD_OUT_BOOTSTRAP_COLUMNS)
    assert out.groupby("held_out").size().to_dict() == {"cxr": 5, "derm": 5}
    derm = two_level_bootstrap(restrict_arrays(arrays, datasets=["derm"]), std, n_draws=10, random_state=3, top_k=1)
    expected = bootstrap_retest_taus(derm.auroc_draws)["kendall_tau"].to_numpy()
    assert np.array_equal(out.loc[out["held_out"] == "derm", "kendall_tau"].to_numpy(), expected, equal_nan=True)
    again = lodo.held_out_bootstrap_taus(arrays, std, n_draws=10, random_state=3)
    pd.testing.assert_frame_equal(out, again)
    kept = lodo.held_out_bootstrap_taus(arrays, std, encoders=["alpha", "beta", "gamma"], n_draws=4)
    assert set(kept["n_encoders"]) == {3}
