"""End to end on the quick profile: per-image predictions, seeds that vary, the table derived from predictions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crsbench_lib.cli import main
from crsbench_lib.results.io import read_results
from crsbench_lib.results.predictions import load_prediction_arrays, load_run_predictions
from crsbench_lib.runner.recompute import max_abs_difference, recompute_results

pytestmark = pytest.mark.slow


def test_clean_auroc_varies_across_seeds(quick_run):
    table = read_results(quick_run.results_path)
    clean = table[(table["condition"] == "clean") & (table["calibration"] == "none") & (table["arm"] == "frozen")]
    spread = clean.groupby(["encoder", "dataset"])["auroc"].agg(lambda s: s.max() - s.min())
    assert (spread > 0).any()
    assert (clean["c_rule"] == "auroc").all() and (clean["calibrator_split"] == "calibration").all()
    assert clean["ece_floor"].between(0, 1).all() and clean["ece_excess"].notna().all()


def test_metrics_recomputed_from_predictions_equal_the_table(quick_run, tmp_path):
    done = recompute_results(quick_run.out_dir, tmp_path / "again.parquet")
    assert done.max_abs_difference is not None and done.max_abs_difference <= 1e-12
    assert max_abs_difference(done.table, read_results(quick_run.results_path)) <= 1e-12
    assert main(["recompute", str(quick_run.out_dir), "--out", str(tmp_path / "cli.parquet")]) == 0


def test_predictions_are_paired_across_seeds_and_encoders(quick_run):
    arrays = load_prediction_arrays(quick_run.out_dir)  # raises unless every test image is shared
    derm = arrays["derm"]
    assert derm.clean.dtype == np.float32 and derm.clean.shape[:2] == (len(derm.encoders), len(derm.seeds))
    assert arrays["cxr"].shift_proba is not None
    predictions = load_run_predictions(quick_run.out_dir)
    corrupted = [p for p in predictions if p.meta["condition"] == "corruption"]
    assert all(np.array_equal(p.image, corrupted[0].image) for p in corrupted if p.meta["dataset"] == corrupted[0].meta["dataset"])


def test_manifest_reports_lora_runs_store_size_and_splits(quick_run):
    manifest = json.loads(quick_run.manifest_path.read_text())
    lora = manifest["lora_runs"]
    assert lora["runs"] == sum(1 for c in manifest["cells"] if c["cell"].endswith("/lora"))
    assert lora["adapters"] == lora["runs"] * lora["adapters_per_run"]
    # Every LoRA cell records how each of its adapters trained; frozen cells record nothing of the kind.
    for entry in manifest["cells"]:
        if not entry["cell"].endswith("/lora"):
            assert "lora" not in entry
            continue
        facts = entry["lora"]
        assert len(facts["adapters"]) == lora["adapters_per_run"]
        assert [a["label_fraction"] for a in facts["adapters"]] == sorted(
            (a["label_fraction"] for a in facts["adapters"]), reverse=True)
        for adapter in facts["adapters"]:
            assert 0 <= adapter["best_step"] <= adapter["steps_run"] <= facts["max_steps"]
            if adapter["hit_cap"]:
                assert adapter["trained"] and adapter["steps_run"] == facts["max_steps"]
            assert adapter["n_train_labels"] > 0
            if adapter["trained"]:
                assert adapter["best_val_loss"] > 0 and adapter["best_val_loss"] <= adapter["start_val_loss"]
    assert manifest["predictions_bytes"] > 0
    splits = manifest["extra"]["development_splits"]
    assert set(splits) == {"derm", "fundus", "cxr"} and splits["derm"]["0"]["n_calibration"] == 100
