"""Stored rows: canonical text, hash and blob."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import RegistryError, SchemaError
from crsbench_lib.registry.rows import canonical_rows, decode_rows, encode_rows, rows_hash


@pytest.fixture(scope="module")
def one_encoder(small_results: pd.DataFrame) -> pd.DataFrame:
    return small_results[(small_results["encoder"] == "enc03") & (small_results["arm"] == "frozen")]


def test_round_trip_is_exact(one_encoder: pd.DataFrame) -> None:
    blob, digest, n_rows = encode_rows(one_encoder)
    back = decode_rows(blob)
    assert n_rows == len(one_encoder) == len(back)
    pd.testing.assert_frame_equal(back, canonical_rows(one_encoder), check_exact=True)
    assert rows_hash(back) == digest


def test_hash_ignores_row_order_and_extra_columns(one_encoder: pd.DataFrame) -> None:
    shuffled = one_encoder.sample(frac=1.0, random_state=3).assign(extra="x")
    assert rows_hash(shuffled) == rows_hash(one_encoder)


def test_hash_sees_the_last_bit(one_encoder: pd.DataFrame) -> None:
    nudged = one_encoder.copy()
    nudged.iloc[0, nudged.columns.get_loc("auroc")] = np.nextafter(nudged["auroc"].iloc[0], 1.0)
    assert rows_hash(nudged) != rows_hash(one_encoder)


def test_nan_label_fraction_used_survives(one_encoder: pd.DataFrame) -> None:
    rows = one_encoder.copy()
    rows["label_fraction_used"] = np.nan
    back = decode_rows(encode_rows(rows)[0])
    assert back["label_fraction_used"].isna().all()


def test_invalid_rows_are_refused(one_encoder: pd.DataFrame) -> None:
    with pytest.raises(SchemaError, match="auroc"):
        encode_rows(one_encoder.assign(auroc=1.5))


@pytest.mark.parametrize("blob", [b"not zlib", zlib.compress(b"[1, 2]"), zlib.compress(b'{"format": "other"}')])
def test_unreadable_blob_is_a_registry_error(blob: bytes) -> None:
    with pytest.raises(RegistryError, match="stored rows blob"):
        decode_rows(blob)
