"""The cell store: every stored cell is verified before reuse; damage reads as damage, never as data."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import CacheError, OutputError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.runner.cache import CellStatus, CellStore

INFO = {"cell": "pixels/derm/seed0/frozen", "seconds": 0.1234, "finished_at": "2026-01-01T00:00:00Z",
        "host": "here", "pid": 1}


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return synthetic_results(n_encoders=2, seeds=(0,))


@pytest.fixture()
def store(tmp_path: Path, rows: pd.DataFrame) -> CellStore:
    store = CellStore(tmp_path)
    store.save("k", rows, INFO)
    return store


def flip(path: Path, position: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[position % len(data)] ^= 1 << bit
    path.write_bytes(bytes(data))


def test_a_saved_cell_is_intact_and_loads_its_rows(store: CellStore, rows: pd.DataFrame) -> None:
    assert store.inspect("k") == (CellStatus.INTACT, "")
    pd.testing.assert_frame_equal(store.load("k"), store.load("k"))
    assert len(store.load("k")) == len(rows)
    assert store.inspect("other") == (CellStatus.MISSING, "")
    info = store.info("k")
    assert info["cell"] == INFO["cell"] and info["key"] == "k" and len(info["sha256"]) == 64


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(min_value=0, max_value=10**6), bit=st.integers(min_value=0, max_value=7))
def test_any_flipped_bit_in_the_data_is_damage(tmp_path: Path, rows: pd.DataFrame, position: int, bit: int) -> None:
    store = CellStore(tmp_path / f"p{position}-{bit}")
    store.save("k", rows, INFO)
    flip(store.path("k"), position, bit)
    status, reason = store.inspect("k")
    assert status is CellStatus.DAMAGED and str(store.path("k")) in reason and "\n" not in reason
    with pytest.raises(CacheError):
        store.load("k")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=st.integers(min_value=0, max_value=10**6), bit=st.integers(min_value=0, max_value=7))
def test_a_flipped_bit_in_the_sidecar_is_damage_or_changes_nothing(
    tmp_path: Path, rows: pd.DataFrame, position: int, bit: int
) -> None:
    store = CellStore(tmp_path / f"s{position}-{bit}")
    store.save("k", rows, INFO)
    before = store.info("k")
    flip(store.info_path("k"), position, bit)
    status, reason = store.inspect("k")
    if status is CellStatus.INTACT:
        # Only a flip that leaves the same JSON value (1e-05 vs 1E-05) may pass.
        assert store.info("k") == before
    else:
        assert status is CellStatus.DAMAGED and str(store.info_path("k")) in reason


def test_each_kind_of_damage_is_named(store: CellStore, rows: pd.DataFrame) -> None:
    data = store.path("k").read_bytes()
    store.path("k").write_bytes(data[: len(data) // 2])
    assert "sha256 does not match" in store.inspect("k")[1]
    store.path("k").write_bytes(data)

    sidecar = store.info_path("k").read_text()
    store.info_path("k").write_text(sidecar[:-10])
    assert "sidecar unreadable (JSONDecodeError)" in store.inspect("k")[1]
    edited = json.loads(sidecar)
    edited["seconds"] = 99.0
    store.info_path("k").write_text(json.dumps(edited))
    assert "sidecar fails its own checksum" in store.inspect("k")[1]
    store.info_path("k").unlink()
    assert store.inspect("k") == (CellStatus.DAMAGED, f"{store.info_path('k')}: sidecar missing")

    # Another cell's intact files under this key: not this cell.
    store.save("j", rows, INFO)
    store.info_path("j").rename(store.info_path("k"))
    store.path("j").rename(store.path("k"))
    assert "sidecar belongs to cell j" in store.inspect("k")[1]


def test_a_sidecar_without_data_is_an_unfinished_save(store: CellStore) -> None:
    store.path("k").unlink()
    assert store.inspect("k") == (CellStatus.MISSING, "")


def test_cells_from_before_checksums_are_old_format_not_damage(store: CellStore) -> None:
    store.info_path("k").write_text(json.dumps(INFO))  # what the previous version wrote
    assert store.inspect("k") == (CellStatus.OLD_FORMAT, "")


def test_a_failed_save_leaves_no_cell(tmp_path: Path, rows: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    import crsbench_lib.runner.cache as cache

    store = CellStore(tmp_path)

    def full(path, data):
        raise OutputError(f"{path}: no space left on device")

    monkeypatch.setattr(cache, "atomic_write_bytes", full)
    with pytest.raises(OutputError):
        store.save("k", rows, INFO)
    assert store.inspect("k") == (CellStatus.MISSING, "") and list(store.folder.iterdir()) == []
