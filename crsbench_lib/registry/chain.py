"""The registry's append-only log, chained by hashes.

Each log record stores the hash of the record before it and its own hash::

    hash_n = sha256(hash_{n-1} + "\\n" + seq + "\\n" + recorded_at + "\\n" + event + "\\n" + payload)

with ``hash_0`` = 64 zeros (the genesis value) and ``payload`` the record's
canonical JSON text (:func:`stored_registry_json`). Editing, inserting or removing a
record anywhere but at the very end breaks every later link; truncating the end
changes the head hash, which :func:`verify_chain` reports so that a user can
keep it elsewhere and compare (the construction of a hash chain / linked
timestamping: Haber and Stornetta, "How to time-stamp a digital document",
J. Cryptology 3, 1991).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

GENESIS_HASH: str = "0" * 64


def stored_registry_json(value: Any) -> str:
    """The one text form of a JSON value used for every hash of the registry.

    Keys sorted, no whitespace, non-ASCII kept, floats by ``repr`` (shortest
    text that reads back to the same double, so the text is exact), NaN written
    as ``NaN``. It differs from :func:`crsbench_lib.hashing.canonical_json`
    (ASCII only, no NaN) on purpose and must not change: every registry on disk
    stores hashes of this text, and verification recomputes them.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_hash(prev_hash: str, seq: int, recorded_at: str, event: str, payload: str) -> str:
    """Hash of one log record given the previous record's hash (module docstring)."""
    return sha256_text("\n".join((prev_hash, str(int(seq)), recorded_at, event, payload)))


def head(conn: sqlite3.Connection) -> tuple[int, str]:
    """The last record's (seq, hash), or ``(0, GENESIS_HASH)`` for an empty log."""
    row = conn.execute("SELECT seq, hash FROM log ORDER BY seq DESC LIMIT 1").fetchone()
    return (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))


def append(conn: sqlite3.Connection, event: str, payload: Mapping[str, Any], recorded_at: str) -> str:
    """Append one record to the log (inside the caller's write transaction).

    Parameters
    ----------
    conn : sqlite3.Connection
        A connection holding a write transaction (``BEGIN IMMEDIATE``), so that
        no other writer can append between reading the head and inserting.
    event : str
        Record kind (``"create"``, ``"register_standard"``, ``"add_entry"``).
    payload : mapping
        JSON-serialisable content of the record.
    recorded_at : str
        UTC time stamp (ISO 8601).

    Returns
    -------
    str
        The new record's hash (the new head).
    """
    if not conn.in_transaction:
        raise RuntimeError("log records are appended inside a write transaction only")
    seq, prev = head(conn)
    text = stored_registry_json(dict(payload))
    digest = record_hash(prev, seq + 1, recorded_at, event, text)
    conn.execute(
        "INSERT INTO log (seq, recorded_at, event, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)",
        (seq + 1, recorded_at, event, text, prev, digest),
    )
    return digest


@dataclass
class ChainReport:
    """Outcome of :func:`verify_chain`.

    Attributes
    ----------
    n_records : int
        Number of log records read.
    head_hash : str
        Hash of the last record (:data:`GENESIS_HASH` for an empty log).
    problems : list of str
        One line per broken link, bad hash, gap in the sequence or unreadable
        payload; empty when the chain holds.
    """

    n_records: int = 0
    head_hash: str = GENESIS_HASH
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def verify_chain(conn: sqlite3.Connection) -> ChainReport:
    """Check every link of the log: sequence, previous hash, own hash, payload.

    Parameters
    ----------
    conn : sqlite3.Connection
        An open registry connection.

    Returns
    -------
    ChainReport
        The number of records, the head hash and the problems found.
    """
    report = ChainReport()
    prev = GENESIS_HASH
    expected_seq = 1
    for seq, recorded_at, event, payload, prev_hash, digest in conn.execute(
        "SELECT seq, recorded_at, event, payload, prev_hash, hash FROM log ORDER BY seq"
    ):
        report.n_records += 1
        if seq != expected_seq:
            report.problems.append(f"log record {seq}: expected sequence number {expected_seq} (records missing)")
        if prev_hash != prev:
            report.problems.append(f"log record {seq}: previous-hash link broken")
        if not isinstance(payload, str) or record_hash(prev_hash, seq, recorded_at, event, payload) != digest:
            report.problems.append(f"log record {seq}: hash does not match its content")
        else:
            try:
                if stored_registry_json(json.loads(payload)) != payload:
                    report.problems.append(f"log record {seq}: payload is not in canonical form")
            except ValueError:
                report.problems.append(f"log record {seq}: payload is not JSON")
        prev = str(digest)
        expected_seq = int(seq) + 1
    report.head_hash = prev
    return report
