"""``crsbench reproduce write/check``: the summary file and the verdict with its exit status."""

from __future__ import annotations

from pathlib import Path

import pytest

from crsbench_lib.cli import main
from crsbench_lib.cli.reproduce import EXIT_NOT_REPRODUCED
from crsbench_lib.results.io import write_results
from crsbench_lib.results.synthetic import synthetic_results


def test_write_then_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = synthetic_results(n_encoders=3, corruptions=("noise",), random_state=5)
    results = tmp_path / "results.parquet"
    write_results(table, results)
    summary = tmp_path / "summary.json"
    assert main(["reproduce", "write", str(results), "--profile", "demo", "--out", str(summary)]) == 0
    assert "3 encoder profiles" in capsys.readouterr().out
    assert main(["reproduce", "check", str(results), "--summary", str(summary)]) == 0
    assert "exactly" in capsys.readouterr().out
    drifted = tmp_path / "drifted.parquet"
    write_results(table.assign(auroc=(table["auroc"] - 0.05).clip(0.0, 1.0)), drifted)
    assert main(["reproduce", "check", str(drifted), "--summary", str(summary)]) == EXIT_NOT_REPRODUCED
    assert "exceeds the tolerance 0.01" in capsys.readouterr().out


def test_missing_summary_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.parquet"
    write_results(synthetic_results(n_encoders=2, corruptions=("noise",)), results)
    code = main(["reproduce", "check", str(results), "--summary", str(tmp_path / "none.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no such reference-run summary" in err
