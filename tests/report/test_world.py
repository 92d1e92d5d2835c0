"""Tests of the world's must-show checks (crsbench_lib/report/world.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from crsbench_lib.report.world import MIN_LORA_RUNS, world_checks

FAMILIES = {"pixels": "classical", "pca": "classical", "broad": "broad_ssl", "narrow": "narrow"}


def _rows(encoder: str, dataset: str, auroc: float, condition: str = "clean", arm: str = "frozen") -> list[dict]:
    return [
        {"encoder": encoder, "dataset": dataset, "seed": seed, "arm": arm, "condition": condition,
         "label_fraction": 1.0, "calibration": "none", "auroc": auroc + (0.01 if seed else -0.01)}
        for seed in (0, 1)
    ]


def _table(broad: float, shift: float = 0.7, narrow: float = 0.99) -> pd.DataFrame:
    rows = []
    for dataset in ("derm", "cxr"):
        rows += _rows("pixels", dataset, 0.6) + _rows("pca", dataset, 0.62) + _rows("broad", dataset, broad)
        rows += _rows("narrow", dataset, narrow if dataset == "derm" else 0.7)
    rows += _rows("broad", "cxr", shift, condition="shift") + _rows("pixels", "cxr", 0.5, condition="shift")
    return pd.DataFrame(rows)


def _holds(checks: pd.DataFrame, check: str, dataset: str) -> bool:
    return bool(checks.set_index(["check", "dataset"]).at[(check, dataset), "holds"])


def test_margins_are_means_over_seeds_against_each_baseline() -> None:
    checks = world_checks(_table(broad=0.75), FAMILIES)
    row = checks.set_index(["check", "dataset"]).loc[("margin over pixels", "derm")]
    assert row["value"] == pytest.approx(0.15)
    assert row["holds"]
    tight = world_checks(_table(broad=0.71), FAMILIES)
    assert not _holds(tight, "margin over pca", "derm")  # 0.09 over PCA
    assert _holds(tight, "margin over pixels", "derm")  # 0.11 over pixels


def test_a_solved_task_fails_and_the_site_b_drop_is_the_strong_candidates_median() -> None:
    checks = world_checks(_table(broad=0.8, shift=0.55), FAMILIES)
    assert not _holds(checks, "highest clean AUROC", "derm")  # the narrow encoder reaches 0.99
    assert _holds(checks, "highest clean AUROC", "cxr")
    drops = checks.set_index(["check", "dataset"])
    # Only the broad candidate is above 0.75 clean on cxr: its drop 0.8 - 0.55 = 0.25 is too large.
    assert drops.at[("site-B median drop", "cxr"), "value"] == pytest.approx(0.25)
    assert not _holds(checks, "site-B median drop", "cxr")
    assert _holds(world_checks(_table(broad=0.8, shift=0.7), FAMILIES), "site-B median drop", "cxr")
    assert not _holds(world_checks(_table(broad=0.8, shift=0.78), FAMILIES), "site-B median drop", "cxr")
    # A reference encoder never counts, however strong: pixels (clean 0.6) is below the threshold anyway.
    assert drops.at[("site-B strong candidates", "cxr"), "value"] == 1


def test_site_b_calibration_must_be_worse_than_clean() -> None:
    table = _table(broad=0.8, shift=0.7)
    table["ece"] = 0.03
    table.loc[table["condition"] == "shift", "ece"] = 0.08
    assert _holds(world_checks(table, FAMILIES), "site-B ECE minus clean ECE", "cxr")
    table.loc[table["condition"] == "shift", "ece"] = 0.02
    assert not _holds(world_checks(table, FAMILIES), "site-B ECE minus clean ECE", "cxr")


def test_zoo_counts_candidates_their_families_and_lora_runs() -> None:
    table = _table(broad=0.8)
    checks = world_checks(table, FAMILIES).set_index(["check", "dataset"])
    assert checks.at[("pretrained candidates", "all"), "value"] == 2
    assert checks.at[("candidate families", "all"), "value"] == 2
    assert checks.at[("LoRA runs", "all"), "value"] == 0
    lora = pd.concat([table.assign(arm="lora", seed=s) for s in range(MIN_LORA_RUNS)], ignore_index=True)
    assert _holds(world_checks(pd.concat([table, lora]), FAMILIES), "LoRA runs", "all")


def test_missing_baseline_does_not_hold() -> None:
    table = _table(broad=0.9)
    checks = world_checks(table[table["encoder"] != "pca"], FAMILIES)
    assert not _holds(checks, "margin over pca", "derm")


def test_calibration_floor_averages_clean_frozen_uncalibrated_rows() -> None:
    from crsbench_lib.report.world import calibration_floor

    rows = []
    for calibration, ece in (("none", 0.05), ("temperature", 0.5)):
        for seed in (0, 1):
            rows.append({"encoder": "a", "dataset": "derm", "seed": seed, "arm": "frozen", "condition": "clean",
                         "label_fraction": 1.0, "calibration": calibration, "auroc": 0.8, "n_test": 2000,
                         "ece": ece + 0.01 * seed, "ece_floor": 0.02, "ece_excess": ece + 0.01 * seed - 0.02})
    floor = calibration_floor(pd.DataFrame(rows)).set_index("dataset")
    assert floor.at["derm", "test_images"] == 2000
    assert floor.at["derm", "ece"] == pytest.approx(0.055)
    assert floor.at["derm", "ece_excess"] == pytest.approx(0.035)


def test_run_cost_sums_cell_seconds_per_arm(tmp_path) -> None:
    import json

    from crsbench_lib.report.world import run_cost

    cells = [{"cell": "a/derm/seed0/frozen", "seconds": 30.0}, {"cell": "a/derm/seed1/frozen", "seconds": 30.0},
             {"cell": "a/derm/seed0/lora", "seconds": 120.0}]
    (tmp_path / "manifest.json").write_text(json.dumps({"cells": cells}))
    cost = run_cost(tmp_path).set_index("arm")
    assert cost.at["frozen", "cells"] == 2 and cost.at["frozen", "cpu_minutes"] == pytest.approx(1.0)
    assert cost.at["lora", "cpu_minutes"] == pytest.approx(2.0)
    (tmp_path / "manifest.json").write_text("{not json")
    assert run_cost(tmp_path).empty


def test_counts_are_integers_and_show_without_decimals() -> None:
    from crsbench_lib.report.tables import show_table

    checks = world_checks(_table(broad=0.8), FAMILIES).set_index(["check", "dataset"])
    for count in (("pretrained candidates", "all"), ("LoRA runs", "all")):
        assert isinstance(checks.at[count, "value"], int)
    assert isinstance(checks.at[("highest clean AUROC", "derm"), "value"], float)
    html = show_table(checks.reset_index())._repr_html_()
    assert ">2<" in html and "2.000" not in html


def test_a_failing_count_reads_as_an_integer() -> None:
    from crsbench_lib.report.sentences.cohort import describe_world_checks

    text = describe_world_checks(world_checks(_table(broad=0.8), FAMILIES))
    assert "The check 'LoRA runs' fails: 0 against the rule" in text


# ---------------------------------------------------------------- per-class margins

def _margin_predictions():
    from crsbench_lib.results.predictions import dataset_arrays
    from tests.scoring.test_bootstrap_two_level import synthetic_predictions

    predictions = synthetic_predictions(n=60, n_corrupt=20)
    return predictions, dataset_arrays(predictions)


# synthetic_predictions' encoders grow stronger from alpha to delta.
MARGIN_FAMILIES = {"alpha": "classical", "beta": "classical", "gamma": "broad_ssl", "delta": "broad_multitask"}


def test_class_margins_average_to_the_macro_margins_of_the_world_checks():
    from crsbench_lib.evaluation.cell import rows_from_predictions
    from crsbench_lib.report.world import class_margins

    predictions, arrays = _margin_predictions()
    margins = class_margins(arrays, MARGIN_FAMILIES, pixel="alpha", pca="beta")
    checks = world_checks(rows_from_predictions(predictions), MARGIN_FAMILIES, pixel="alpha", pca="beta")
    assert set(margins["dataset"]) == {"derm", "cxr"} and set(margins["best_broad"]) == {"delta"}
    for dataset, rows in margins.groupby("dataset"):
        assert len(rows) == {"derm": 3, "cxr": 2}[dataset]
        for baseline, column in (("alpha", "pixels"), ("beta", "pca")):
            macro = checks.loc[(checks["check"] == "margin over " + baseline) & (checks["dataset"] == dataset), "value"]
            assert (rows["broad"] - rows[column]).mean() == pytest.approx(float(macro.iloc[0]), abs=1e-12)
        assert (rows["margin"] == rows["broad"] - rows[["pixels", "pca"]].max(axis=1)).all()
    assert (margins["reference"] == "").all() and margins["reference_auroc"].isna().all()


def test_class_margins_name_classes_and_the_reference():
    from crsbench_lib.report.world import class_margins

    _, arrays = _margin_predictions()
    families = {**MARGIN_FAMILIES, "delta": "intask"}
    margins = class_margins(arrays, families, pixel="alpha", pca="beta", class_names={"cxr": ("heart", "nodule")})
    assert set(margins["best_broad"]) == {"gamma"}  # the reference is not a broad encoder
    assert (margins["reference"] == "delta").all() and (margins["reference_auroc"] > margins["broad"]).all()
    assert margins.loc[margins["dataset"] == "cxr", "class"].tolist() == ["heart", "nodule"]
    assert margins.loc[margins["dataset"] == "derm", "class"].tolist() == ["class 0", "class 1", "class 2"]
    # Without a broad encoder there is nothing to explain; without a baseline its column is NaN.
    assert class_margins(arrays, {}, pixel="alpha", pca="beta").empty
    assert class_margins(arrays, MARGIN_FAMILIES, pixel="alpha", pca="nope")["pca"].isna().all()


def test_adapter_training_reads_the_lora_cells_of_the_manifest(tmp_path):
    import json

    from crsbench_lib.report.world import ADAPTER_COLUMNS, adapter_training

    from crsbench_lib.runner.lora import LoraReport, adaptation_facts

    facts = adaptation_facts(LoraReport(True, 480, 320, 2000, False, 1.2, 1.1, 1e-3, 900, 2, 100, 50),
                             {0.1: LoraReport.untrained(2000, 1e-3, 10, 5)})
    cells = [
        {"cell": "m/derm/seed1/lora", "encoder": "m", "dataset": "derm", "seed": 1, "arm": "lora", "lora": facts},
        {"cell": "m/derm/seed1/frozen", "encoder": "m", "dataset": "derm", "seed": 1, "arm": "frozen"},
        {"cell": "m/cxr/seed0/lora", "encoder": "m", "dataset": "cxr", "seed": 0, "arm": "lora"},  # an older cell
        {"cell": "m/cxr/seed1/lora", "encoder": "m", "dataset": "cxr", "seed": 1, "arm": "lora",  # epoch protocol
         "lora": {"max_epochs": 3, "adapters": [{"label_fraction": 1.0, "epochs_run": 3, "best_epoch": 3}]}},
    ]
    (tmp_path / "manifest.json").write_text(json.dumps({"cells": cells}))
    table = adapter_training(tmp_path)
    assert list(table.columns) == list(ADAPTER_COLUMNS)
    assert table[["dataset", "seed", "label_fraction", "trained", "best_step", "max_steps", "hit_cap"]].values.tolist() == [
        ["derm", 1, 1.0, True, 320, 2000, False], ["derm", 1, 0.1, False, 0, 2000, False]]
    assert table["best_val_loss"].isna().tolist() == [False, True]
    assert not table["improving_at_end"].any()
    (tmp_path / "manifest.json").write_text("{not json")
    assert adapter_training(tmp_path).empty


def test_v3_checks_need_a_strong_best_broad_encoder_and_a_testable_site_b():
    from crsbench_lib.report.world import MIN_BEST_BROAD, MIN_SITE_B_STRONG

    weak = world_checks(_table(broad=0.8, shift=0.65), FAMILIES).set_index(["check", "dataset"])
    best = weak.xs("best broad AUROC", level="check")
    assert not best["holds"].any() and (best["value"].astype(float) < MIN_BEST_BROAD).all()
    strong = weak.xs("site-B strong candidates", level="check")
    assert (strong["value"].astype(int) < MIN_SITE_B_STRONG).all() == (not strong["holds"].any())
    assert world_checks(_table(broad=0.9, shift=0.65), FAMILIES).set_index(["check", "dataset"]).xs(
        "best broad AUROC", level="check")["holds"].all()


def test_cue_ablation_is_the_clean_auroc_minus_the_cue_removed_auroc() -> None:
    from crsbench_lib.report.world import cue_ablation

    table = pd.DataFrame(_rows("broad", "derm", 0.8) + _rows("broad", "derm", 0.74, condition="cue_removed")
                         + _rows("narrow", "derm", 0.7) + _rows("narrow", "derm", 0.71, condition="cue_removed"))
    ablation = cue_ablation(table).set_index("encoder")
    assert ablation.at["broad", "cue_gain"] == pytest.approx(0.06)
    assert ablation.at["narrow", "cue_gain"] == pytest.approx(-0.01)
    assert ablation.at["broad", "without_cue"] == pytest.approx(0.74)


def test_calibration_under_shift_reports_what_site_a_calibrators_keep() -> None:
    from crsbench_lib.report.world import calibration_under_shift

    rows = []
    for encoder in ("broad", "pixels"):
        for condition, method, ece in (("clean", "none", 0.08), ("clean", "temperature", 0.03),
                                       ("shift", "none", 0.12), ("shift", "temperature", 0.10)):
            for row in _rows(encoder, "cxr", 0.8, condition=condition):
                rows.append({**row, "calibration": method, "ece": ece + (0.5 if encoder == "pixels" else 0.0)})
    out = calibration_under_shift(pd.DataFrame(rows), FAMILIES).set_index("calibration")
    assert list(out.index) == ["none", "temperature"]
    # The candidate only (pixels is a reference): clean 0.08 -> 0.03, site B 0.12 -> 0.10.
    assert out.at["temperature", "change_clean"] == pytest.approx(-0.05)
    assert out.at["temperature", "change_site_b"] == pytest.approx(-0.02)
    assert out.at["none", "ece_site_b"] == pytest.approx(0.12) and out.at["none", "change_site_b"] == 0
