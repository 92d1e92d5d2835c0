import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.calibration_ablation import (
    calibration_ablation,
    calibration_summary,
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
