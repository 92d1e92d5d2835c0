"""The registry's SQLite file: where it lives, how it is opened, its schema.

The file is an ordinary SQLite database (the standard library's ``sqlite3``)
in WAL mode, so readers never block the one writer. It is recognised by its
header: ``PRAGMA application_id`` holds :data:`APPLICATION_ID` and
``PRAGMA user_version`` the schema version. A file that is not SQLite, or is a
SQLite database of another application, or of a newer schema, is refused with
:class:`~crsbench_lib.errors.RegistryError` *before* anything is written to it
(the check runs on a read-only connection).

Published rows are append-only: triggers abort every ``UPDATE`` and ``DELETE``
on the standards, entries, log and meta tables. A correction is a new entry
whose ``supersedes`` column names the entry it replaces.

Writers take the write lock up front (``BEGIN IMMEDIATE``) and wait for it up
to a busy timeout, so concurrent processes queue instead of failing; SQLite's
journal makes each transaction all-or-nothing even when the process is killed
(https://www.sqlite.org/atomiccommit.html, https://www.sqlite.org/wal.html).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import platformdirs

from crsbench_lib.errors import RegistryError

#: ``PRAGMA application_id`` of a CRS-Bench registry: the bytes "CRSB".
APPLICATION_ID: int = 0x43525342
#: ``PRAGMA user_version``: the schema version this code writes and reads.
SCHEMA_VERSION: int = 1
#: Environment variable that overrides the default registry path.
ENV_REGISTRY: str = "CRSBENCH_REGISTRY"
#: Seconds a connection waits for another writer's lock before giving up.
DEFAULT_BUSY_TIMEOUT_S: float = 60.0

_APPEND_ONLY_TABLES: tuple[str, ...] = ("meta", "standards", "entries", "log")

SCHEMA_SQL: str = """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE standards (
    version TEXT PRIMARY KEY,
    content_hash TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    yaml_text TEXT NOT NULL,
    registered_at TEXT NOT NULL
);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    encoder TEXT NOT NULL,
    arm TEXT NOT NULL,
    standard_version TEXT NOT NULL REFERENCES standards(version),
    raw_D REAL NOT NULL, raw_C REAL NOT NULL, raw_L REAL NOT NULL, raw_R REAL NOT NULL,
    norm_D REAL NOT NULL, norm_C REAL NOT NULL, norm_L REAL NOT NULL, norm_R REAL NOT NULL,
    dominance REAL NOT NULL,
    balance REAL NOT NULL,
    floor REAL NOT NULL,
    crs REAL NOT NULL,
    rows_hash TEXT NOT NULL,
    n_rows INTEGER NOT NULL,
    rows_blob BLOB NOT NULL,
    provenance TEXT NOT NULL,
    created_at TEXT NOT NULL,
    supersedes INTEGER UNIQUE REFERENCES entries(id),
    digest TEXT NOT NULL
);
CREATE INDEX entries_by_encoder ON entries (encoder, arm, standard_version);
CREATE TABLE log (
    seq INTEGER PRIMARY KEY,
    recorded_at TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE VIEW current_entries AS
    SELECT e.* FROM entries AS e
    WHERE NOT EXISTS (SELECT 1 FROM entries AS c WHERE c.supersedes = e.id);
""" + "".join(
    f"""
CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
BEGIN SELECT RAISE(ABORT, 'registry table {table} is append-only: rows are never updated'); END;
CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
BEGIN SELECT RAISE(ABORT, 'registry table {table} is append-only: rows are never deleted'); END;
"""
    for table in _APPEND_ONLY_TABLES
)

#: Names of the triggers that make the tables append-only (checked by verify).
APPEND_ONLY_TRIGGERS: tuple[str, ...] = tuple(
    f"{table}_{what}" for table in _APPEND_ONLY_TABLES for what in ("no_update", "no_delete")
)


def utc_now() -> str:
    """The current UTC time, ISO 8601 with microseconds (``...Z``)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_registry_path() -> Path:
    """Where the registry lives unless a path is given.

    ``$CRSBENCH_REGISTRY`` if set, else ``<user data dir>/crsbench/registry.sqlite``
    (platformdirs; e.g. ``~/.local/share/crsbench/registry.sqlite`` on Linux).
    """
    env = os.environ.get(ENV_REGISTRY)
    if env:
        return Path(env).expanduser()
    return platformdirs.user_data_path("crsbench") / "registry.sqlite"


def resolve_path(path: str | os.PathLike[str] | None) -> Path:
    """``path`` as a Path, or :func:`default_registry_path` when None."""
    return default_registry_path() if path is None else Path(path).expanduser()


#: A registry file's identity read in a single statement (one consistent snapshot):
#: application id, schema version and number of schema objects.
IDENTITY_SQL = (
    "SELECT (SELECT application_id FROM pragma_application_id), "
    "(SELECT user_version FROM pragma_user_version), "
    "(SELECT count(*) FROM sqlite_master)"
)


def _identify(path: Path) -> tuple[int, int, bool]:
    """(application_id, user_version, has_tables) of an existing file, read-only.

    Raises
    ------
    RegistryError
        If the file cannot be read or is not an SQLite database.
    """
    if path.is_dir():
        raise RegistryError(f"{path}: is a folder, not a registry file")
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise RegistryError(f"{path}: cannot read the registry file ({exc.strerror or exc})") from exc
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=DEFAULT_BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise RegistryError(f"{path}: cannot open the registry file ({exc})") from exc
    try:
        # One statement, so one read snapshot: read one by one, another process
        # could commit a new registry between the reads (no application id yet,
        # but tables already), and this file would be refused as foreign.
        application_id, user_version, n_objects = conn.execute(IDENTITY_SQL).fetchone()
    except sqlite3.DatabaseError as exc:
        raise RegistryError(f"{path}: not a CRS-Bench registry (not an SQLite database: {exc})") from exc
    finally:
        conn.close()
    return int(application_id), int(user_version), int(n_objects) > 0


def _check_identity(path: Path, application_id: int, user_version: int, has_tables: bool) -> None:
    if application_id != APPLICATION_ID:
        if application_id == 0 and not has_tables:
            return  # an empty database (e.g. a zero-byte file): a new registry
        raise RegistryError(
            f"{path}: not a CRS-Bench registry (SQLite application_id {application_id:#x}, "
            f"expected {APPLICATION_ID:#x}); refusing to touch it"
        )
    if user_version > SCHEMA_VERSION:
        raise RegistryError(
            f"{path}: registry schema version {user_version} is newer than this crsbench understands "
            f"({SCHEMA_VERSION}); upgrade crsbench"
        )
    if user_version < 1:
        raise RegistryError(f"{path}: registry file has no schema version (damaged or foreign)")


def _configure(conn: sqlite3.Connection, timeout_s: float) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    # FULL: a committed entry survives a power cut too (writes are rare and small).
    conn.execute("PRAGMA synchronous = FULL")


def _set_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    # Switching the journal mode needs a moment without other connections'
    # transactions; it is not covered by the busy handler in every case, so retry.
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    if str(mode).lower() != "wal":
        raise RegistryError(f"cannot switch the registry to WAL mode (journal mode is {mode!r})")


def _initialise(conn: sqlite3.Connection, path: Path) -> bool:
    """Create the schema if the database is still empty; True when it did."""
    from crsbench_lib.registry import chain  # local: chain imports nothing of db

    conn.execute("BEGIN IMMEDIATE")
    try:
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) != 0:
            conn.execute("ROLLBACK")
            return False  # another process created it while we waited for the lock
        if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise RegistryError(f"{path}: not a CRS-Bench registry (an SQLite database with other tables)")
        # Statement by statement: executescript() would commit mid-transaction.
        for statement in _statements(SCHEMA_SQL):
            conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        now = utc_now()
        from crsbench_lib import __version__

        conn.execute("INSERT INTO meta (key, value) VALUES ('created_at', ?)", (now,))
        conn.execute("INSERT INTO meta (key, value) VALUES ('created_by', ?)", (f"crsbench {__version__}",))
        chain.append(conn, "create", {"schema_version": SCHEMA_VERSION, "created_by": f"crsbench {__version__}"}, now)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True


def _statements(script: str) -> list[str]:
    """Split a schema script into complete statements (triggers hold inner ';')."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def connect(
    path: str | os.PathLike[str] | None = None,
    *,
    create: bool = False,
    timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
) -> sqlite3.Connection:
    """Open a registry database, checking that it is one.

    Parameters
    ----------
    path : path-like, optional
        The registry file; :func:`default_registry_path` when None.
    create : bool
        Create the file (and its folder) and the schema when it does not exist.
        Without it a missing file is an error.
    timeout_s : float
        Busy timeout: how long to wait for another process's write lock.

    Returns
    -------
    sqlite3.Connection
        In autocommit mode (``isolation_level=None``): callers open their own
        ``BEGIN IMMEDIATE`` transactions.

    Raises
    ------
    RegistryError
        If the file is missing (and ``create`` is false), unreadable, not an
        SQLite database, another application's database, or of a newer schema.
        The file is not modified in any of these cases.
    """
    target = resolve_path(path)
    exists = target.exists()
    if exists:
        _check_identity(target, *_identify(target))
    elif not create:
        raise RegistryError(f"{target}: no registry there (create one with `crsbench registry add`)")
    else:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RegistryError(f"{target}: cannot create the registry folder ({exc.strerror or exc})") from exc
    try:
        conn = sqlite3.connect(str(target), timeout=timeout_s, isolation_level=None)
    except sqlite3.Error as exc:
        raise RegistryError(f"{target}: cannot open the registry file ({exc})") from exc
    try:
        _configure(conn, timeout_s)
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) == 0:
            if not create:
                raise RegistryError(f"{target}: an empty database, not a registry yet (run `crsbench registry add`)")
            _set_wal(conn, timeout_s)
            _initialise(conn, target)
        _check_identity(
            target,
            int(conn.execute("PRAGMA application_id").fetchone()[0]),
            int(conn.execute("PRAGMA user_version").fetchone()[0]),
            True,
        )
    except sqlite3.Error as exc:
        conn.close()
        raise RegistryError(f"{target}: registry database error ({exc})") from exc
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception.

    Taking the write lock at ``BEGIN`` (not at the first write) means that what
    the transaction reads (the current entry of an encoder, the log head) cannot
    change before it writes: concurrent adders are serialised, none is lost.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise RegistryError(f"registry is busy: could not take the write lock ({exc})") from exc
    try:
        yield conn
        _test_pause_before_commit()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


#: Test hooks (crash-safety tests): seconds to sleep inside the transaction just
#: before COMMIT, and a file to create when the sleep starts.
ENV_TEST_PAUSE: str = "_CRSBENCH_REGISTRY_TEST_PAUSE_S"
ENV_TEST_MARKER: str = "_CRSBENCH_REGISTRY_TEST_MARKER"


def _test_pause_before_commit() -> None:
    pause = os.environ.get(ENV_TEST_PAUSE)
    if not pause:
        return
    marker = os.environ.get(ENV_TEST_MARKER)
    if marker:
        Path(marker).write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(float(pause))
