"""``verify``: recomputation bit for bit, and tamper evidence on the file itself."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from crsbench_lib.registry import Registry, verify_registry
from crsbench_lib.registry.rows import encode_rows


@pytest.fixture(scope="module")
def populated_template(
    tmp_path_factory: pytest.TempPathFactory, small_results: pd.DataFrame, files: dict[str, Path]
) -> Path:
    path = tmp_path_factory.mktemp("populated") / "registry.sqlite"
    with Registry(path, create=True) as reg:
        reg.add(small_results, files["v1"], encoders=["enc00", "enc01", "enc02"])
        reg.add(small_results, files["v2"], encoders=["enc03"])
        reg.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture
def populated(populated_template: Path, db_path: Path) -> Path:
    """A fresh copy of a registry with 4 entries under 2 standards (copying is cheaper than scoring)."""
    shutil.copyfile(populated_template, db_path)
    return db_path


def _tamper(path: Path, *statements: str, params: tuple = ()) -> None:
    """Edit the file behind the registry's back: drop the guard trigger, then write."""
    conn = sqlite3.connect(path, isolation_level=None)
    for table in ("entries", "standards", "log"):
        conn.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
        conn.execute(f"DROP TRIGGER IF EXISTS {table}_no_delete")
    for statement in statements:
        conn.execute(statement, params if "?" in statement else ())
    conn.close()


def _verify(path: Path, **kwargs: object) -> list[str]:
    with Registry(path) as reg:
        report = verify_registry(reg, **kwargs)
    assert report.ok == (not report.problems)
    return report.problems


def test_clean_registry_verifies(populated: Path) -> None:
    with Registry(populated) as reg:
        report = verify_registry(reg)
        assert report.ok, report.problems
        assert (report.n_entries, report.n_standards) == (4, 2)
        assert report.n_log_records == 1 + 2 + 4
        assert report.head_hash == reg.head_hash()
        assert report.differences.empty
        assert "OK" in report.summary()


def test_edited_crs_is_caught_bit_for_bit(populated: Path) -> None:
    # The smallest possible edit: one unit in the last place of one CRS.
    conn = sqlite3.connect(populated)
    crs = conn.execute("SELECT crs FROM entries WHERE id = 2").fetchone()[0]
    conn.close()
    import math

    _tamper(populated, "UPDATE entries SET crs = ? WHERE id = 2", params=(math.nextafter(crs, 1.0),))
    with Registry(populated) as reg:
        report = verify_registry(reg)
    assert not report.ok
    assert list(report.differences["field"]) == ["crs"]
    assert int(report.differences["entry_id"].iloc[0]) == 2
    assert any("digest" in p for p in report.problems)


TAMPERINGS: dict[str, tuple[Callable[[Path], None], str]] = {
    "raw axis": (lambda p: _tamper(p, "UPDATE entries SET raw_D = raw_D + 0.01 WHERE id = 1"), "raw_D stored"),
    "normalised axis": (lambda p: _tamper(p, "UPDATE entries SET norm_C = 0.5 WHERE id = 3"), "norm_C stored"),
    "provenance": (lambda p: _tamper(p, "UPDATE entries SET provenance = '{}' WHERE id = 1"), "digest"),
    "time": (lambda p: _tamper(p, "UPDATE entries SET created_at = '1999-01-01' WHERE id = 1"), "digest"),
    "deleted entry": (lambda p: _tamper(p, "DELETE FROM entries WHERE id = 4"), "missing from the entries table"),
    "log record": (lambda p: _tamper(p, "UPDATE log SET recorded_at = 'x' WHERE seq = 3"), "hash does not match"),
    "deleted log record": (lambda p: _tamper(p, "DELETE FROM log WHERE seq = 4"), "records missing"),
    "standard text": (
        lambda p: _tamper(p, "UPDATE standards SET yaml_text = replace(yaml_text, 'worst: 0.5', 'worst: 0.4')"),
        "text hash",
    ),
    "standard hash": (
        lambda p: _tamper(p, "UPDATE standards SET content_hash = 'sha256:0' WHERE version = 'test-v2'"),
        "register_standard",
    ),
    "trigger dropped": (lambda p: _tamper(p), "trigger 'entries_no_update' is missing"),
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_tampering_is_caught(populated: Path, name: str) -> None:
    tamper, expected = TAMPERINGS[name]
    tamper(populated)
    problems = _verify(populated)
    assert problems, name
    assert any(expected in p for p in problems), problems


def test_replaced_rows_are_caught(populated: Path, small_results: pd.DataFrame) -> None:
    other = small_results[(small_results["encoder"] == "enc07") & (small_results["arm"] == "frozen")]
    blob, digest, _ = encode_rows(other)
    _tamper(populated, "UPDATE entries SET rows_blob = ? WHERE id = 1", params=(blob,))
    problems = _verify(populated)
    assert any("do not match the rows hash" in p for p in problems)
    # A forger who also rewrites the rows hash still fails on the scores and the digest.
    _tamper(populated, "UPDATE entries SET rows_hash = ? WHERE id = 1", params=(digest,))
    problems = _verify(populated)
    assert any("crs stored" in p for p in problems) and any("digest" in p for p in problems)


def test_expected_head(populated: Path, small_results: pd.DataFrame, files: dict[str, Path]) -> None:
    with Registry(populated) as reg:
        head = reg.head_hash()
        reg.add(small_results, files["v1"], encoders=["enc05"])
        assert verify_registry(reg, expect_head=head).ok  # the log grew past it: fine
    _tamper(populated, "DELETE FROM log WHERE seq >= 7", "DELETE FROM entries WHERE id >= 4")
    problems = _verify(populated, expect_head=head)
    assert any("expected head hash" in p for p in problems)


def test_verify_reports_are_read_only(populated: Path) -> None:
    before = populated.read_bytes()
    assert not _verify(populated)
    assert populated.read_bytes() == before


def test_batched_recomputation_equals_one_by_one(populated: Path, small_results: pd.DataFrame,
                                                 files: dict[str, Path]) -> None:
    from crsbench_lib.registry.entries import SCORE_FIELDS, recompute, recompute_many, same_float

    with Registry(populated) as reg:
        corrected = small_results.assign(ece=small_results["ece"] * 0.97,
                                          ece_debiased=small_results["ece_debiased"] * 0.97)
        reg.add(corrected, "test-v1", encoders=["enc00"], correct=True)  # same encoder twice under test-v1
        rows = reg.connection.execute(
            "SELECT id, rows_blob FROM entries WHERE standard_version = 'test-v1' AND arm = 'frozen'"
        ).fetchall()
        std = reg.get_standard("test-v1")
    blobs = {int(r[0]): r[1] for r in rows}
    assert len(blobs) == 4
    batch = recompute_many(blobs, std, "frozen")
    for entry_id, blob in blobs.items():
        alone = recompute(blob, std, "frozen")
        assert all(same_float(batch[entry_id][n], alone[n]) for n in SCORE_FIELDS)


def test_one_unscorable_entry_does_not_hide_the_others(populated: Path, small_results: pd.DataFrame) -> None:
    rows = small_results[(small_results["encoder"] == "enc01") & (small_results["arm"] == "frozen")]
    blob, _, _ = encode_rows(rows[rows["condition"] != "clean"])
    _tamper(populated, "UPDATE entries SET rows_blob = ? WHERE id = 2", params=(blob,))
    problems = _verify(populated)
    assert any(p.startswith("entry #2") and "cannot recompute" in p for p in problems)
    assert not any("recomputed" in p and not p.startswith("entry #2") for p in problems)
