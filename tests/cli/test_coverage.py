"""``crsbench coverage``: a tiny self-audit end to end, its resume, and bad input as one line with exit status 2."""

from __future__ import annotations

import pandas as pd
import pytest

from crsbench_lib.cli import main
from crsbench_lib.cli.coverage import audit_settings, report_lines
from crsbench_lib.runner.coverage import AUDIT_PRESETS
from crsbench_lib.standard import template_standard_path

TINY = ["coverage", "--profile", "quick", "--preset", "smoke", "--encoders", "pixels,colour_hist",
        "--replicates", "2", "--truth-draws", "2", "--truth-test", "400", "--truth-corrupted", "100",
        "--draws", "30", "--truth-bootstrap-draws", "20", "--jobs", "1"]


@pytest.mark.slow
def test_a_tiny_audit_writes_its_tables_reports_and_resumes(tmp_path, capsys):
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert main([*TINY, "--out", str(out), "--cache", str(cache)]) == 0
    captured = capsys.readouterr()
    truth, intervals, table = (pd.read_parquet(out / f"{n}.parquet") for n in ("truth", "intervals", "coverage"))
    assert set(truth.loc[truth["quantity"] == "crs", "item"]) == {"pixels", "colour_hist"}
    assert set(intervals["replicate"]) == {0, 1}
    # One report line per quantity and method, with the table's numbers.
    lines = [line for line in captured.out.splitlines() if line.startswith("coverage ")]
    assert len(lines) == len(table)
    row = table[(table["quantity"] == "axis_C") & (table["method"] == "percentile")].iloc[0]
    assert f"coverage axis_C.percentile 0.95 {row['observed']:.3f} {int(row['n'])}" in lines
    assert "encoders pixels, colour_hist" in captured.out
    # Progress on stderr, none on stdout.
    assert "replicate 2/2 done" in captured.err and "replicate" not in "".join(lines)
    # Resumed from the cache: nothing recomputed, the same numbers bit for bit.
    assert main([*TINY, "--out", str(tmp_path / "again"), "--cache", str(cache)]) == 0
    assert "replicates cached: 2" in capsys.readouterr().err
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "again" / "coverage.parquet"), table)
    # Other bootstrap draws are other scored tables (not the cached ones), from the cached predictions.
    assert main([*TINY[:-2], "--draws", "31", "--jobs", "1", "--cache", str(cache), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("change", "message"), [
    (["--encoders", "pixels,hogg"], "unknown encoder 'hogg'; valid encoders: pixels"),
    (["--families", "gaussian_blurr"], "unknown corruption family 'gaussian_blurr' for derm; valid families:"),
    (["--dataset", "retina"], "'retina' is not a phantom dataset of profile 'quick' (its phantom datasets: derm"),
    (["--preset", "huge"], "unknown audit preset 'huge'; valid presets: benchmark, chapter, smoke, close_race, all_families, book"),
    (["--encoders", "pixels"], "at least two distinct encoders"),
    (["--replicates", "0"], "argument --replicates: expected a positive integer, got '0'"),
    (["--truth-test", "-5"], "argument --truth-test: expected a positive integer, got '-5'"),
    (["--draws", "x"], "argument --draws: expected a positive integer, got 'x'"),
    (["--encoders", "pixels,,hog"], "expected comma-separated names"),
    (["--profile", "nope"], "nope"),
    (["--standard", "missing.yaml"], "missing.yaml: no such reference standard file"),
    (["--standard", str(template_standard_path())], "empty panel"),
])
def test_bad_input_is_one_line_and_exit_2(change, message, tmp_path, capsys):
    args = ["coverage", "--profile", "quick", "--cache", str(tmp_path), *change]
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's usage errors exit from the parser (crsbench_lib.cli._Parser)
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("crsbench: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # refused before any work


def _parse(argv):
    import argparse

    from crsbench_lib.cli.coverage import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_options_override_the_preset_and_book_follows_the_profile():
    settings = audit_settings(_parse(["--preset", "chapter", "--replicates", "3"]))
    assert settings["replicates"] == 3 and settings["encoders"] == AUDIT_PRESETS["chapter"].encoders
    assert audit_settings(_parse(["--profile", "quick", "--preset", "book"]))["encoders"] == AUDIT_PRESETS["smoke"].encoders
    assert audit_settings(_parse(["--preset", "book"]))["truth_test"] == AUDIT_PRESETS["chapter"].truth_test
    assert audit_settings(_parse([]))["replicates"] == AUDIT_PRESETS["benchmark"].replicates


def test_the_benchmark_script_is_a_thin_caller_of_the_same_command(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_coverage.py"
    source = path.read_text()
    assert "run_audit" not in source and "coverage_table" not in source and "add_argument(" not in source
    spec = importlib.util.spec_from_file_location("bench_coverage", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--profile", "quick", "--encoders", "pixels,nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crsbench: error: coverage audit: unknown encoder 'nope'") and len(err.splitlines()) == 1


def test_report_lines_carry_the_table():
    from types import SimpleNamespace

    design = SimpleNamespace(dataset="derm", encoders=("a", "b"), n_replicates=2, seeds=(0, 1), train=3, val=2,
                             test=4, families=("gaussian_blur",), severities=(1,), n_truth_draws=2, truth_test=9,
                             truth_corrupted=3)
    truth = pd.DataFrame({"quantity": ["axis_C", "crs_difference", "leading_tier"], "item": ["a", "a - b", "a"],
                          "truth": [0.1, 0.2, 0.2], "truth_se": [0.01, 0.02, 0.02]})
    table = pd.DataFrame({"quantity": ["axis_C", "leading_tier"], "method": ["percentile", "set"], "nominal": 0.95,
                          "observed": [0.5, 1.0], "n": [4, 2], "mc_se": [0.3, 0.0], "mean_width": [0.1, float("nan")],
                          "mean_truth_se": [0.01, 0.02], "mean_set_size": [float("nan"), 1.5],
                          "mean_error": [0.05, float("nan")], "error_se": [0.01, float("nan")]})
    lines = report_lines({"profile": "quick", "design": design, "draws": 30}, truth, table)
    assert "coverage axis_C.percentile 0.95 0.500 4" in lines and "coverage leading_tier.set 0.95 1.000 2" in lines
    assert any("error +0.0500 (0.0100)" in line for line in lines)
    assert any("truly best: a (CRS margin 0.2000 +/- 0.0200" in line for line in lines)
