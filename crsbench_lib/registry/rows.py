"""The results rows an entry was computed from: canonical text, hash and blob.

An entry stores its rows so that ``registry verify`` can recompute it. The rows
are reduced to the schema columns, validated, sorted by the key columns, and
written column by column as canonical JSON (floats by ``repr``, which reads back
to the same double). The SHA-256 of that text is the entry's *rows hash*: two
tables with the same rows in another order, or with extra columns, have the same
hash. The stored blob is the same text, zlib-compressed.
"""

from __future__ import annotations

import json
import zlib

import numpy as np
import pandas as pd

from crsbench_lib.errors import RegistryError
from crsbench_lib.registry.chain import sha256_text, stored_registry_json
from crsbench_lib.results.schema import COLUMNS, KEY_COLUMNS, validate_results

#: Format tag written into every rows blob (read back and checked).
ROWS_FORMAT: str = "crsbench-rows/1"
_ZLIB_LEVEL = 9


def canonical_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Validated schema columns only, sorted by the key columns, fresh index."""
    table = validate_results(rows)[[c.name for c in COLUMNS]]
    return table.sort_values(list(KEY_COLUMNS), kind="mergesort").reset_index(drop=True)


def _column_values(series: pd.Series, kind: str) -> list[object]:
    if kind == "str":
        return [str(v) for v in series]
    if kind == "int":
        return [int(v) for v in series.to_numpy(dtype=np.int64)]
    return [float(v) for v in series.to_numpy(dtype=np.float64)]


def _text_and_count(rows: pd.DataFrame) -> tuple[str, int]:
    table = canonical_rows(rows)
    data = {c.name: _column_values(table[c.name], c.kind) for c in COLUMNS}
    return stored_registry_json({"format": ROWS_FORMAT, "n_rows": len(table), "columns": data}), len(table)


def rows_text(rows: pd.DataFrame) -> str:
    """The canonical JSON text of a set of result rows (module docstring)."""
    return _text_and_count(rows)[0]


def rows_hash(rows: pd.DataFrame) -> str:
    """SHA-256 of :func:`rows_text`: the identity of an entry's inputs."""
    return sha256_text(rows_text(rows))


def encode_rows(rows: pd.DataFrame) -> tuple[bytes, str, int]:
    """Blob, hash and row count of a set of result rows.

    Returns
    -------
    blob : bytes
        zlib-compressed canonical text.
    digest : str
        SHA-256 of the canonical text (:func:`rows_hash`).
    n_rows : int
        Number of rows.
    """
    text, n_rows = _text_and_count(rows)
    return zlib.compress(text.encode("utf-8"), _ZLIB_LEVEL), sha256_text(text), n_rows


def decode_text(blob: bytes) -> str:
    """The canonical text inside a rows blob.

    Raises
    ------
    RegistryError
        If the blob does not decompress to UTF-8 text.
    """
    try:
        return zlib.decompress(bytes(blob)).decode("utf-8")
    except (zlib.error, UnicodeDecodeError, TypeError) as exc:
        raise RegistryError(f"stored rows blob is unreadable ({type(exc).__name__}: {exc})") from exc


def decode_rows(blob: bytes, validate: bool = True) -> pd.DataFrame:
    """The results rows stored in a blob (inverse of :func:`encode_rows`).

    Parameters
    ----------
    blob : bytes
        A stored rows blob.
    validate : bool
        Validate the rows against the schema (skip it only when the caller
        validates them anyway, as the scorer does).

    Raises
    ------
    RegistryError
        If the blob is unreadable or not in the rows format.
    """
    text = decode_text(blob)
    try:
        content = json.loads(text)
        if content.get("format") != ROWS_FORMAT:
            raise ValueError(f"format {content.get('format')!r}, expected {ROWS_FORMAT!r}")
        frame = pd.DataFrame({c.name: content["columns"][c.name] for c in COLUMNS})
    except (ValueError, KeyError, AttributeError, TypeError) as exc:
        raise RegistryError(f"stored rows blob is not a rows table ({type(exc).__name__}: {exc})") from exc
    for column in COLUMNS:
        if column.kind == "str":
            frame[column.name] = frame[column.name].astype("string")
        elif column.kind == "int":
            frame[column.name] = frame[column.name].astype("int64")
        else:
            frame[column.name] = frame[column.name].astype("float64")
    return validate_results(frame, source="stored rows") if validate else frame
