"""A results table validated once and carried along (crsbench_lib.results.validated)."""

from __future__ import annotations

import pandas as pd
import pytest

import crsbench_lib.results.validated as validated
from crsbench_lib.errors import SchemaError
from crsbench_lib.results.io import write_results
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.results.validated import ValidatedResults, as_validated, read_validated, table_hash


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=2, corruptions=("noise",))


def test_a_validated_table_is_not_validated_again(table, monkeypatch):
    once = as_validated(table)
    monkeypatch.setattr(validated, "validate_results", lambda *a, **k: pytest.fail("validated twice"))
    assert as_validated(once) is once


def test_the_hash_is_computed_once_and_ignores_row_order(table, monkeypatch):
    once = as_validated(table)
    first = once.hash
    assert as_validated(table.iloc[::-1]).hash == table_hash(table) == first
    monkeypatch.setattr(validated, "table_hash", lambda frame: pytest.fail("hashed twice"))
    assert once.hash == first


def test_memo_computes_a_key_once(table):
    once, calls = as_validated(table), []
    assert once.memo("k", lambda: calls.append(1) or 7) == 7 and once.memo("k", lambda: 8) == 7 and calls == [1]


def test_a_bad_frame_fails_at_the_boundary(table):
    with pytest.raises(SchemaError, match="mine: missing required column"):
        as_validated(table.drop(columns=["auroc"]), source="mine")


def test_read_validated_names_its_file(table, tmp_path):
    path = write_results(table, tmp_path / "r.parquet")
    read = read_validated(path)
    assert isinstance(read, ValidatedResults) and read.source == str(path) and read.hash == table_hash(table)
