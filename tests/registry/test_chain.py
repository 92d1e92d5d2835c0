"""The hash-chained log."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.registry import chain


def _log_db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute(
        "CREATE TABLE log (seq INTEGER PRIMARY KEY, recorded_at TEXT, event TEXT, payload TEXT, prev_hash TEXT, hash TEXT)"
    )
    return conn


def _fill(conn: sqlite3.Connection, payloads: list[dict]) -> list[str]:
    hashes = []
    for i, payload in enumerate(payloads):
        conn.execute("BEGIN IMMEDIATE")
        hashes.append(chain.append(conn, "event", payload, f"2026-01-01T00:00:{i:02d}Z"))
        conn.execute("COMMIT")
    return hashes


def test_canonical_json_is_exact_and_sorted() -> None:
    value = {"b": 0.1 + 0.2, "a": [1, "é"], "c": float("nan")}
    text = chain.stored_registry_json(value)
    assert text.startswith('{"a":[1,"é"],"b":0.30000000000000004')
    assert json.loads(text)["b"] == 0.1 + 0.2


def test_record_hash_links_previous() -> None:
    first = chain.record_hash(chain.GENESIS_HASH, 1, "t", "e", "{}")
    assert first != chain.record_hash(chain.GENESIS_HASH, 1, "t", "e", '{"x":1}')
    assert first != chain.record_hash("1" * 64, 1, "t", "e", "{}")
    assert len(first) == 64


def test_empty_log_is_valid_with_genesis_head() -> None:
    report = chain.verify_chain(_log_db())
    assert report.ok and report.n_records == 0 and report.head_hash == chain.GENESIS_HASH


def test_append_requires_transaction() -> None:
    with pytest.raises(RuntimeError, match="write transaction"):
        chain.append(_log_db(), "event", {}, "t")


@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
                                max_size=3), min_size=1, max_size=6))
def test_chain_verifies_and_head_is_last_hash(payloads: list[dict]) -> None:
    conn = _log_db()
    hashes = _fill(conn, payloads)
    report = chain.verify_chain(conn)
    assert report.ok, report.problems
    assert report.n_records == len(payloads)
    assert report.head_hash == hashes[-1] == chain.head(conn)[1]


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("UPDATE log SET payload = '{\"x\":5}' WHERE seq = 2", "hash does not match"),
        ("UPDATE log SET event = 'other' WHERE seq = 1", "hash does not match"),
        ("DELETE FROM log WHERE seq = 2", "records missing"),
        ("UPDATE log SET prev_hash = hash WHERE seq = 3", "link broken"),
        ("UPDATE log SET payload = '{ \"x\":1}' WHERE seq = 1", "hash does not match"),
    ],
)
def test_tampering_breaks_the_chain(statement: str, expected: str) -> None:
    conn = _log_db()
    _fill(conn, [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}])
    conn.execute(statement)
    report = chain.verify_chain(conn)
    assert not report.ok
    assert any(expected in p for p in report.problems), report.problems


def test_recomputed_consistent_forgery_still_changes_the_head() -> None:
    # Someone who rewrites a record *and* recomputes every later hash keeps the
    # chain valid but cannot keep the head: a recorded head exposes it.
    conn = _log_db()
    hashes = _fill(conn, [{"x": 1}, {"x": 2}])
    conn.execute("DELETE FROM log")
    forged = _fill(conn, [{"x": 1}, {"x": 99}])
    assert chain.verify_chain(conn).ok
    assert forged[-1] != hashes[-1]
