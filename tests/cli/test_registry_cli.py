"""``crsbench registry``: the command line over the score registry."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from crsbench_lib.cli import main
from crsbench_lib.registry import ENV_REGISTRY
from crsbench_lib.results.io import write_results
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.standard import load_template, save_standard


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("registry-cli")
    results = synthetic_results(n_encoders=5, seeds=(0, 1), corruptions=("noise",), severities=(1, 3), random_state=3)
    v1 = freeze_standard(results, "cli-v1", panel=["enc00", "enc01"])
    template = load_template()
    tight = dataclasses.replace(template, anchors={**template.anchors, "D": (0.5, 0.7), "L": (0.5, 0.85)})
    v2 = freeze_standard(results, "cli-v2", panel=["enc02"], base=tight)
    changed = results.assign(ece=results["ece"] * 0.95, ece_debiased=results["ece_debiased"] * 0.95)
    bad = results.copy()
    bad.loc[3, "auroc"] = 1.7
    bad_csv = root / "bad.csv"
    bad.to_csv(bad_csv, index=False)  # bypasses validation on purpose
    broken = root / "broken.yaml"
    save_standard(v1, broken)
    broken.write_text(broken.read_text().replace("worst: 0.5", "worst: 1.0", 1))
    return {
        "results": write_results(results, root / "results.parquet"),
        "changed": write_results(changed, root / "changed.parquet"),
        "bad_results": bad_csv,
        "v1": save_standard(v1, root / "v1.yaml"),
        "v2": save_standard(v2, root / "v2.yaml"),
        "broken": broken,
    }


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _bytes(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def _checkpoint(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_full_session(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path], tmp_path: Path) -> None:
    db = str(tmp_path / "reg.sqlite")
    code, out, _ = _run(capsys, "registry", "--db", db, "add", str(inputs["results"]), "--standard",
                        str(inputs["v1"]), "--encoder", "enc00", "--encoder", "enc03")
    assert code == 0 and "registered new standard 'cli-v1'" in out and "2 added" in out

    code, out, _ = _run(capsys, "registry", "--db", db, "add", str(inputs["results"]), "--standard", "cli-v1")
    assert code == 0 and "already registered" in out and "3 added, 0 corrected, 2 unchanged" in out

    code, out, _ = _run(capsys, "registry", "--db", db, "add", str(inputs["results"]), "--standard", str(inputs["v2"]))
    assert code == 0 and "registered new standard 'cli-v2'" in out

    code, out, _ = _run(capsys, "registry", "--db", db, "list")
    assert code == 0
    assert "standard cli-v1: 5 current entries" in out and "standard cli-v2: 5 current entries" in out
    assert out.count("saturation (entries at worst/best anchor)") == 2
    assert "consider freezing a new standard version" in out  # the tight cli-v2 anchors saturate

    code, out, _ = _run(capsys, "registry", "--db", db, "list", "--standard", "cli-v1")
    assert code == 0 and "cli-v2" not in out

    code, out, _ = _run(capsys, "registry", "--db", db, "add", str(inputs["changed"]), "--standard", "cli-v1",
                        "--encoder", "enc03")
    assert code == 2 and "--correct" in _ and out == ""
    code, out, _ = _run(capsys, "registry", "--db", db, "add", str(inputs["changed"]), "--standard", "cli-v1",
                        "--encoder", "enc03", "--correct", "--note", "rerun with fixed ECE")
    assert code == 0 and "1 corrected" in out

    code, out, _ = _run(capsys, "registry", "--db", db, "history", "enc03")
    assert code == 0 and "history of enc03: 3 entries" in out

    code, out, _ = _run(capsys, "registry", "--db", db, "show", "enc03")
    assert code == 0 and "supersedes entry #2" in out and "provenance.note: rerun with fixed ECE" in out

    code, out, _ = _run(capsys, "registry", "--db", db, "verify")
    assert code == 0 and "registry verify: OK: 11 entries" in out

    code, out, _ = _run(capsys, "registry", "--db", db, "export", "--format", "json")
    assert code == 0 and len(json.loads(out)["entries"]) == 11
    target = tmp_path / "entries.csv"
    code, _, err = _run(capsys, "registry", "--db", db, "export", "--format", "csv", "--out", str(target),
                        "--current-only")
    assert code == 0 and "wrote" in err and len(pd.read_csv(target)) == 10

    code, out, _ = _run(capsys, "registry", "--db", db, "standards")
    assert code == 0 and "cli-v1" in out and "cli-v2" in out


def test_verify_fails_with_exit_1_on_an_edited_row(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path],
                                                    tmp_path: Path) -> None:
    db = tmp_path / "reg.sqlite"
    assert main(["registry", "--db", str(db), "add", str(inputs["results"]), "--standard", str(inputs["v1"]),
                 "--encoder", "enc01"]) == 0
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER entries_no_update")
    conn.execute("UPDATE entries SET crs = crs + 0.001")
    conn.commit()
    conn.close()
    capsys.readouterr()
    code, out, _ = _run(capsys, "registry", "--db", str(db), "verify")
    assert code == 1
    assert "problem: entry #1" in out and "crs stored" in out and "FAILED" in out


@pytest.mark.parametrize(
    ("key", "argv_tail", "message"),
    [
        ("broken", ["--standard", "{broken}"], "anchors.D"),
        ("bad_results", ["--standard", "{v1}"], "column 'auroc' must lie in [0, 1]"),
        ("unknown_standard", ["--standard", "no-such-version"], "no-such-version"),
        ("unknown_encoder", ["--standard", "{v1}", "--encoder", "enc99"], "encoder 'enc99' has no rows"),
    ],
)
def test_bad_input_leaves_the_database_unchanged(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path],
                                                 tmp_path: Path, key: str, argv_tail: list[str], message: str) -> None:
    fresh = tmp_path / "never-created.sqlite"
    existing = tmp_path / "existing.sqlite"
    assert main(["registry", "--db", str(existing), "add", str(inputs["results"]), "--standard", str(inputs["v1"]),
                 "--encoder", "enc00"]) == 0
    _checkpoint(existing)
    before = _bytes(existing)
    results = inputs["bad_results"] if key == "bad_results" else inputs["results"]
    tail = [a.format(**{k: str(v) for k, v in inputs.items()}) for a in argv_tail]
    for db in (existing, fresh):
        capsys.readouterr()
        code, out, err = _run(capsys, "registry", "--db", str(db), "add", str(results), *tail)
        assert code == 2, (out, err)
        assert err.startswith("crsbench: error: ") and err.count("\n") == 1 and message in err
    assert _bytes(existing) == before
    assert not fresh.exists()


def test_foreign_database_is_refused_unchanged(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path],
                                               tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"\x00\x01 not a database " * 100)
    for path in (foreign, garbage):
        before = _bytes(path)
        for argv in (["add", str(inputs["results"]), "--standard", str(inputs["v1"])], ["list"], ["verify"]):
            code, _, err = _run(capsys, "registry", "--db", str(path), *argv)
            assert code == 2 and "not a CRS-Bench registry" in err
        assert _bytes(path) == before


def test_read_commands_need_an_existing_registry(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite"
    for argv in (["list"], ["verify"], ["history", "enc00"], ["show", "enc00"], ["export", "--format", "csv"]):
        code, _, err = _run(capsys, "registry", "--db", str(missing), *argv)
        assert code == 2 and "no registry there" in err
    assert not missing.exists()


def test_environment_variable_chooses_the_registry(capsys: pytest.CaptureFixture[str], inputs: dict[str, Path],
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "from-env.sqlite"
    monkeypatch.setenv(ENV_REGISTRY, str(target))
    code, out, _ = _run(capsys, "registry", "add", str(inputs["results"]), "--standard", str(inputs["v1"]),
                        "--encoder", "enc02")
    assert code == 0 and str(target) in out and target.is_file()
    code, out, _ = _run(capsys, "registry", "history", "enc02")
    assert code == 0 and "1 entry" in out
    code, _, err = _run(capsys, "registry", "show", "enc04")
    assert code == 2 and "no entry for encoder 'enc04'" in err and "enc02" in err
