"""``crsbench data-needs`` and the run's calibration-reach warning, on the quick profile's run."""

from __future__ import annotations

import pytest

from crsbench_lib.cli import main

pytestmark = pytest.mark.slow


def test_data_needs_prints_each_dataset_and_the_closest_call(quick_results_path, capsys):
    assert main(["data-needs", str(quick_results_path), "--n-draws", "100"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"data needs of {quick_results_path}")
    assert "what each dataset's test set resolves" in out
    for dataset in ("derm", "fundus", "cxr"):
        assert f"  {dataset}: " in out and "ECE floor" in out
    assert "closest call: " in out and "positive = " in out
    for axis in "DCLR":
        assert f"\n  {axis}: " in out
    assert "projected for 80 % power" in out


def test_data_needs_refuses_a_pair_that_is_not_a_candidate(quick_results_path, capsys):
    assert main(["data-needs", str(quick_results_path), "--n-draws", "50", "--pair", "hog", "pixels"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("crsbench: error: ") and "'hog' is not a candidate of the run" in err
    assert "\n" not in err


def test_the_runs_reach_warning_is_one_line_or_nothing(quick_results_path):
    from crsbench_lib.cli.run import calibration_reach_warning
    from crsbench_lib.runner.config import load_profile

    line = calibration_reach_warning(load_profile("quick").standard_path, quick_results_path, n_draws=60)
    assert "\n" not in line
    assert line == "" or (line.startswith("warning: the calibration axis cannot separate any two candidates on ")
                          and "crsbench data-needs" in line)
    # No stored predictions: the advice is skipped, never an error.
    assert calibration_reach_warning(load_profile("quick").standard_path, quick_results_path.parent / "nope.parquet") == ""


def test_the_reach_warning_names_each_dataset_c_cannot_read(quick_results_path, monkeypatch):
    import pandas as pd

    from crsbench_lib.cli.run import calibration_reach_warning
    from crsbench_lib.runner.config import load_profile
    from crsbench_lib.scoring import data_needs

    table = pd.DataFrame({"dataset": ["cxr", "derm"], "n_test": [600, 2000], "ece_floor": [0.04, 0.02],
                          "auroc_se": [0.01, 0.006], "c_se": [0.01, 0.004], "c_spread": [0.012, 0.03],
                          "c_half_width": [0.02, 0.01], "c_pairs_separated": [0, 4], "c_pairs": [10, 10],
                          "c_separates": [False, True]})
    monkeypatch.setattr(data_needs, "precision_by_dataset", lambda *a, **k: table)
    line = calibration_reach_warning(load_profile("quick").standard_path, quick_results_path)
    assert line == ("warning: the calibration axis cannot separate any two candidates on cxr (600 test images: "
                    "none of 10 pairs, the largest C difference 0.012 within ±0.020); `crsbench data-needs "
                    "RESULTS` says what would")
    monkeypatch.setattr(data_needs, "precision_by_dataset", lambda *a, **k: table.assign(c_separates=True))
    assert calibration_reach_warning(load_profile("quick").standard_path, quick_results_path) == ""
