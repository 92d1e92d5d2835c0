import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.calibration_ablation import (
    CalibrationVerdict,
    calibration_ablation,
    calibration_summary,
    calibrator_effect,
    population_of,
    paired_calibration,
    reduction_range,
)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=4, seeds=(0, 1), corruptions=("noise",), severities=(1, 3), arms=("frozen", "lora"))


def test_pairs_every_calibrator_with_its_uncalibrated_twin(table):
    paired = paired_calibration(table)
    # 4 encoders x 3 datasets x 2 seeds x 3 calibrators
    assert len(paired) == 4 * 3 * 2 * 3
    assert set(paired["calibration"]) == {"temperature", "vector", "isotonic"}
    assert set(paired["arm"]) == {"frozen"}
    row = paired.iloc[0]
    twin = table[
        (table["encoder"] == row["encoder"]) & (table["dataset"] == row["dataset"]) & (table["seed"] == row["seed"])
        & (table["arm"] == "frozen") & (table["condition"] == "clean") & (table["calibration"] == "none")
    ]
    assert row["ece_before"] == twin["ece"].item()
    assert row["auroc_before"] == twin["auroc"].item()


def test_summary_matches_hand_computation(table):
    paired = paired_calibration(table)
    summary = calibration_summary(paired)
    cell = paired[(paired["dataset"] == "derm") & (paired["calibration"] == "isotonic")]
    got = summary[(summary["dataset"] == "derm") & (summary["calibration"] == "isotonic")].iloc[0]
    before, after = cell["ece_before"].mean(), cell["ece_after"].mean()
    assert got["relative_ece_reduction"] == pytest.approx((before - after) / before)
    assert got["auroc_change"] == pytest.approx((cell["auroc_after"] - cell["auroc_before"]).mean())
    assert got["n"] == len(cell)
    # the synthetic calibrators divide ECE by 2 to 4
    low, high = reduction_range(summary)
    assert 0.4 < low <= high < 0.8


def test_lora_arm_and_grouping(table):
    summary = calibration_ablation(table, arm="lora", by=("calibration",))
    assert list(summary["calibration"]) == ["isotonic", "temperature", "vector"]
    assert (summary["n"] == 4 * 3 * 2).all()


def test_known_values():
    base = synthetic_results(n_encoders=2, seeds=(0,), datasets=(("derm", "dermatology", "multiclass"),), corruptions=(), shift_dataset=None)
    t = base.copy()
    clean = (t["condition"] == "clean")
    t.loc[clean & (t["calibration"] == "none"), "ece"] = 0.2
    t.loc[clean & (t["calibration"] == "none"), "auroc"] = 0.8
    t.loc[clean & (t["calibration"] != "none"), "ece"] = 0.05
    t.loc[clean & (t["calibration"] != "none"), "auroc"] = 0.79
    s = calibration_ablation(t)
    assert np.allclose(s["relative_ece_reduction"], 0.75)
    assert np.allclose(s["auroc_change"], -0.01)
    assert np.allclose(s["auroc_change_max_abs"], 0.01)


def test_errors(table):
    with pytest.raises(SchemaError, match="unknown arm"):
        paired_calibration(table, arm="adapted")
    only_none = table[table["calibration"] == "none"]
    with pytest.raises(SchemaError, match="no post-hoc calibration rows"):
        paired_calibration(only_none)
    orphan = table.drop(index=table[(table["condition"] == "clean") & (table["calibration"] == "none")].index[:1])
    with pytest.raises(SchemaError, match="without an uncalibrated twin"):
        paired_calibration(orphan)
    with pytest.raises(ValueError, match="must include 'calibration'"):
        calibration_summary(paired_calibration(table), by=("dataset",))
    with pytest.raises(ValueError, match="unknown grouping"):
        calibration_summary(paired_calibration(table), by=("calibration", "site"))


def paired_frame(before: np.ndarray, after: np.ndarray, calibration: str = "temperature") -> pd.DataFrame:
    """A paired table over an (encoder, dataset, seed) grid given the debiased ECE (and the excess) before and after."""
    n_enc, n_ds, n_seed = before.shape
    grid = pd.MultiIndex.from_product(
        [[f"e{i}" for i in range(n_enc)], [f"d{i}" for i in range(n_ds)], list(range(n_seed))],
        names=["encoder", "dataset", "seed"],
    ).to_frame(index=False)
    floor = 0.02
    return grid.assign(
        calibration=calibration,
        ece_before=before.reshape(-1) + floor,
        ece_after=after.reshape(-1) + floor,
        excess_before=before.reshape(-1),
        excess_after=after.reshape(-1),
        ece_debiased_before=before.reshape(-1),
        ece_debiased_after=after.reshape(-1),
        ece_floor_before=floor,
        ece_floor_after=floor,
        auroc_before=0.8,
        auroc_after=0.8,
    )


def test_paired_table_carries_the_floor(table):
    paired = paired_calibration(table)
    assert {"ece_floor_before", "ece_floor_after", "excess_before", "excess_after"} <= set(paired.columns)
    row = paired.iloc[0]
    twin = table[
        (table["encoder"] == row["encoder"]) & (table["dataset"] == row["dataset"]) & (table["seed"] == row["seed"])
        & (table["arm"] == "frozen") & (table["condition"] == "clean") & (table["calibration"] == row["calibration"])
    ]
    assert row["excess_after"] == twin["ece_excess"].item()
    assert row["ece_floor_after"] == twin["ece_floor"].item()
    # a table without the floor still pairs, without the floor columns
    bare = paired_calibration(table.drop(columns=["ece_floor", "ece_excess"]))
    assert "excess_before" not in bare.columns




def test_paired_table_carries_the_debiased_ece(table):
    paired = paired_calibration(table)
    assert {"ece_debiased_before", "ece_debiased_after"} <= set(paired.columns)
    row = paired.iloc[0]
    twin = table[
        (table["encoder"] == row["encoder"]) & (table["dataset"] == row["dataset"]) & (table["seed"] == row["seed"])
        & (table["arm"] == "frozen") & (table["condition"] == "clean") & (table["calibration"] == row["calibration"])
    ]
    assert row["ece_debiased_after"] == twin["ece_debiased"].item()


def test_change_by_hand():
    before = np.array([[[0.06, 0.08]], [[0.04, 0.05]]])
    after = np.array([[[0.01, 0.02]], [[0.01, 0.01]]])
    row = calibrator_effect(paired_frame(before, after), n_draws=300).iloc[0]
    assert row["n"] == 4 and row["measure"] == "ece_debiased"
    assert row["change"] == pytest.approx(np.mean(after - before))
    assert row["relative_change"] == pytest.approx((after - before).sum() / before.sum())
    assert row["before"] == pytest.approx(before.mean())
    assert row["floor_before"] == pytest.approx(0.02)
    assert row["relative_ece_reduction"] == pytest.approx((before.mean() - after.mean()) / (before.mean() + 0.02))
    assert row["auroc_change"] == 0.0 and row["auroc_change_low"] == 0.0
    assert row["verdict"] == CalibrationVerdict.HELPED
    assert row["change_low"] <= row["change"] <= row["change_high"] < 0


def test_verdicts():
    rng = np.random.default_rng(0)
    before = rng.uniform(0.03, 0.06, size=(6, 3, 3))
    assert calibrator_effect(paired_frame(before, before + 0.02)).iloc[0]["verdict"] == "hurt"
    # Well calibrated: before and after both scatter around zero.
    at_floor = calibrator_effect(paired_frame(rng.normal(0, 0.005, (6, 3, 3)), rng.normal(0, 0.005, (6, 3, 3)))).iloc[0]
    assert at_floor["verdict"] == CalibrationVerdict.NO_DIFFERENCE
    assert at_floor["change_low"] < 0 < at_floor["change_high"]


def test_one_encoder_carries_the_effect_so_the_interval_is_wide():
    # Calibration helps one encoder of six a lot and the others not at all: resampling
    # encoders (not rows) must show that the mean change is not reliably below zero.
    before = np.full((6, 3, 3), 0.05)
    after = before.copy()
    after[0] -= 0.05
    row = calibrator_effect(paired_frame(before, after), n_draws=2000).iloc[0]
    assert row["change"] == pytest.approx(-0.05 / 6)
    assert row["change_high"] == pytest.approx(0.0)  # draws without encoder 0 change nothing
    assert row["verdict"] == CalibrationVerdict.NO_DIFFERENCE


def test_the_interval_holds_the_datasets_fixed_unless_asked_and_says_so():
    # One dataset carries the whole effect: over these datasets the mean change is
    # certain (every encoder and seed shows it); over new datasets like these it is not.
    before = np.full((6, 3, 3), 0.05)
    after = before.copy()
    after[:, 0, :] -= 0.03
    fixed = calibrator_effect(paired_frame(before, after), n_draws=2000).iloc[0]
    sampled = calibrator_effect(paired_frame(before, after), n_draws=2000,
                                factors=("encoder", "dataset", "seed")).iloc[0]
    assert fixed["population"] == "these datasets" and sampled["population"] == "new datasets like these"
    assert fixed["change_low"] == pytest.approx(-0.01) and fixed["change_high"] == pytest.approx(-0.01)
    assert sampled["change_high"] - sampled["change_low"] > 0.01
    assert population_of(["encoder", "seed"]) == "these datasets"


def test_the_excess_understates_miscalibration_the_debiased_ece_measures():
    # Issue 46 item 4: the floor is the plug-in's bias for a perfectly calibrated predictor, an
    # upper bound for a miscalibrated one. Simulated probes with a known calibration gap: the
    # debiased ECE lands nearer the gap than the excess (plug-in minus floor), which falls below it.
    from crsbench_lib.metrics.calibration import debiased_ece, ece_floor, expected_calibration_error

    rng = np.random.default_rng(3)
    n, gap = 600, 0.04
    debiased, excess = [], []
    for _ in range(60):
        p = rng.uniform(0.2, 0.8, n)
        y = (rng.uniform(size=n) < np.clip(p - gap, 0, 1)).astype(int)
        probs = np.column_stack([1 - p, p])
        debiased.append(debiased_ece(y, probs, "binary"))
        excess.append(expected_calibration_error(y, probs, "binary") - ece_floor(probs, "binary"))
    assert np.mean(excess) < np.mean(debiased)
    assert abs(np.mean(debiased) - gap) < abs(np.mean(excess) - gap)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(-0.05, 0.05))
def test_interval_shifts_with_the_change_and_stays_within_the_data(seed, shift):
    rng = np.random.default_rng(seed)
    before = rng.uniform(0.0, 0.05, size=(4, 2, 3))
    after = before + rng.normal(0, 0.01, size=before.shape)
    base = calibrator_effect(paired_frame(before, after), n_draws=200, random_state=seed % 1000).iloc[0]
    moved = calibrator_effect(paired_frame(before, after + shift), n_draws=200, random_state=seed % 1000).iloc[0]
    assert moved["change_low"] == pytest.approx(base["change_low"] + shift, abs=1e-12)
    assert moved["change_high"] == pytest.approx(base["change_high"] + shift, abs=1e-12)
    delta = after - before
    assert delta.min() - 1e-12 <= base["change_low"] <= base["change_high"] <= delta.max() + 1e-12


def test_calibrator_effect_on_a_table(table):
    paired = paired_calibration(table)
    overall = calibrator_effect(paired, n_draws=200)
    assert list(overall["calibration"]) == ["isotonic", "temperature", "vector"]
    assert (overall["n"] == 4 * 3 * 2).all() and (overall["n_draws"] == 200).all()
    assert set(overall["verdict"]) <= {v.value for v in CalibrationVerdict}
    per_dataset = calibrator_effect(paired, by=("dataset", "calibration"), n_draws=200)
    assert len(per_dataset) == 3 * 3
    again = calibrator_effect(paired, n_draws=200)
    pd.testing.assert_frame_equal(overall, again)
    excess = calibrator_effect(paired, measure="ece_excess", n_draws=200)
    assert (excess["measure"] == "ece_excess").all()


def test_calibrator_effect_errors(table):
    paired = paired_calibration(table)
    with pytest.raises(SchemaError, match="no 'ece_debiased'"):
        calibrator_effect(paired.drop(columns=["ece_debiased_before"]))
    with pytest.raises(SchemaError, match="no 'ece_excess'"):
        calibrator_effect(paired.assign(excess_after=np.nan), measure="ece_excess")
    with pytest.raises(ValueError, match="unknown measure"):
        calibrator_effect(paired, measure="brier")
    with pytest.raises(ValueError, match="must include 'calibration'"):
        calibrator_effect(paired, by=("dataset",))
    with pytest.raises(ValueError, match="coverage"):
        calibrator_effect(paired, interval=95)
