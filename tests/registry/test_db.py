"""Opening, recognising and protecting the registry file."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from crsbench_lib.errors import RegistryError
from crsbench_lib.registry import db
from crsbench_lib.registry.chain import verify_chain


def _snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    """Bytes, mtime and sibling files: what "no change to the file" compares."""
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


def test_new_registry_has_header_wal_schema_and_log(db_path: Path) -> None:
    conn = db.connect(db_path, create=True)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == db.APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == db.SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert set(db.APPEND_ONLY_TRIGGERS) <= triggers
    report = verify_chain(conn)
    assert report.ok and report.n_records == 1
    conn.close()
    # Reopening neither re-creates nor appends.
    conn = db.connect(db_path)
    assert verify_chain(conn).n_records == 1
    conn.close()


@pytest.mark.parametrize("table", ["meta", "log"])
def test_published_rows_cannot_be_updated_or_deleted(db_path: Path, table: str) -> None:
    conn = db.connect(db_path, create=True)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute(f"UPDATE {table} SET rowid = rowid")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute(f"DELETE FROM {table}")
    conn.close()


def test_missing_file_without_create_is_an_error_and_creates_nothing(db_path: Path) -> None:
    with pytest.raises(RegistryError, match="no registry there"):
        db.connect(db_path)
    assert not db_path.exists()


def test_creates_missing_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "registry.sqlite"
    db.connect(path, create=True).close()
    assert path.is_file()


def test_non_sqlite_file_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    before = _snapshot(path)
    for create in (False, True):
        with pytest.raises(RegistryError, match="not a CRS-Bench registry"):
            db.connect(path, create=create)
    assert _snapshot(path) == before


def test_foreign_sqlite_database_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE entries (id INTEGER, crs REAL)")
    other.execute("INSERT INTO entries VALUES (1, 0.5)")
    other.commit()
    other.close()
    before = _snapshot(path)
    with pytest.raises(RegistryError, match="application_id 0x0"):
        db.connect(path, create=True)
    assert _snapshot(path) == before


def test_other_application_id_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    other = sqlite3.connect(path)
    other.execute("PRAGMA application_id = 1234")
    other.commit()
    other.close()
    before = _snapshot(path)
    with pytest.raises(RegistryError, match="not a CRS-Bench registry"):
        db.connect(path, create=True)
    assert _snapshot(path) == before


def test_newer_schema_is_refused_unchanged(db_path: Path) -> None:
    db.connect(db_path, create=True).close()
    raw = sqlite3.connect(db_path)
    raw.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()
    before = _snapshot(db_path)[:2]
    with pytest.raises(RegistryError, match="newer than this crsbench"):
        db.connect(db_path, create=True)
    # A WAL-mode file may gain its -shm/-wal companions on a read; the file itself is untouched.
    assert _snapshot(db_path)[:2] == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_file_is_refused(db_path: Path) -> None:
    db.connect(db_path, create=True).close()
    db_path.chmod(0)
    try:
        with pytest.raises(RegistryError, match="cannot read"):
            db.connect(db_path)
    finally:
        db_path.chmod(0o644)


def test_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="is a folder"):
        db.connect(tmp_path, create=True)


def test_empty_file_becomes_a_registry_only_with_create(db_path: Path) -> None:
    db_path.write_bytes(b"")
    with pytest.raises(RegistryError, match="empty database"):
        db.connect(db_path)
    assert db_path.read_bytes() == b""
    db.connect(db_path, create=True).close()
    assert db.connect(db_path).execute("PRAGMA application_id").fetchone()[0] == db.APPLICATION_ID


def test_default_path_and_environment_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(db.ENV_REGISTRY, raising=False)
    default = db.default_registry_path()
    assert default.name == "registry.sqlite" and default.parent.name == "crsbench"
    monkeypatch.setenv(db.ENV_REGISTRY, str(tmp_path / "elsewhere.sqlite"))
    assert db.default_registry_path() == tmp_path / "elsewhere.sqlite"
    assert db.resolve_path(None) == tmp_path / "elsewhere.sqlite"
    assert db.resolve_path(tmp_path / "x.sqlite") == tmp_path / "x.sqlite"


def test_write_transaction_rolls_back_on_error(db_path: Path) -> None:
    conn = db.connect(db_path, create=True)
    with pytest.raises(ValueError, match="boom"):
        with db.write_transaction(conn):
            conn.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
            raise ValueError("boom")
    assert conn.execute("SELECT count(*) FROM meta WHERE key = 'k'").fetchone()[0] == 0
    assert not conn.in_transaction


def test_busy_registry_reports_a_registry_error(db_path: Path) -> None:
    holder = db.connect(db_path, create=True)
    holder.execute("BEGIN IMMEDIATE")
    waiter = db.connect(db_path, timeout_s=0.2)
    try:
        with pytest.raises(RegistryError, match="busy"):
            with db.write_transaction(waiter):
                pass
    finally:
        holder.execute("ROLLBACK")


def test_damaged_registry_file_is_refused_unchanged(db_path: Path) -> None:
    conn = db.connect(db_path, create=True)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = db_path.read_bytes()
    db_path.write_bytes(data[:100] + b"\xff" * (len(data) - 100))  # header kept, pages destroyed
    before = _snapshot(db_path)[:2]
    with pytest.raises(RegistryError, match=str(db_path.name)):
        db.connect(db_path)
    assert _snapshot(db_path)[:2] == before



class _RacingReadOnlyConnection:
    """A read-only connection during whose first read another process commits a new registry."""

    def __init__(self, conn: sqlite3.Connection, on_first_read) -> None:
        self._conn = conn
        self._on_first_read = on_first_read

    def execute(self, *args):
        cursor = self._conn.execute(*args)
        row = cursor.fetchone()
        if self._on_first_read is not None:
            hook, self._on_first_read = self._on_first_read, None
            hook()
        return _OneRow(row)

    def close(self) -> None:
        self._conn.close()


class _OneRow:
    def __init__(self, row) -> None:
        self._row = row

    def fetchone(self):
        return self._row


def test_registry_created_during_the_identity_check_is_not_refused(tmp_path: Path, monkeypatch) -> None:
    # Regression (seen in CI): concurrent first adders. One process found the file
    # another had just created, read its application id (0: nothing committed yet),
    # then in a second read saw the other's committed tables, and refused the file
    # as a foreign database. The identity must be read in one snapshot.
    path = tmp_path / "shared.sqlite"
    sqlite3.connect(path).close()  # the empty file a creating process leaves before its schema commits
    real_connect = sqlite3.connect

    def other_process_creates_the_registry() -> None:
        monkeypatch.setattr(db.sqlite3, "connect", real_connect)
        db.connect(path, create=True).close()

    def racing_connect(*args, **kwargs):
        return _RacingReadOnlyConnection(real_connect(*args, **kwargs), other_process_creates_the_registry)

    monkeypatch.setattr(db.sqlite3, "connect", racing_connect)
    conn = db.connect(path, create=True)
    try:
        assert int(conn.execute("PRAGMA application_id").fetchone()[0]) == db.APPLICATION_ID
        assert conn.execute("SELECT count(*) FROM log").fetchone()[0] == 1  # created once, not twice
    finally:
        conn.close()
