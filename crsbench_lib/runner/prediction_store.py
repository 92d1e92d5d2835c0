"""The store of finished cells' per-image predictions, beside the cell store.

Layout under a run's output folder::

    predictions/<key>.parquet   the cell's test predictions (results/predictions.py)
    predictions/<key>.json      its checksummed sidecar, as for the cell store

Same key (content address), same integrity checks and the same API as
:class:`~crsbench_lib.runner.cache.CellStore` (``inspect``, ``load``, ``save``,
``path``, ``remove_partial``): a file whose checksum or sidecar does not match
is damaged and recomputed, never reused. A cell counts as finished only when
both its rows and its predictions are intact.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from crsbench_lib.atomic import atomic_write_bytes, atomic_write_text
from crsbench_lib.errors import CacheError, CRSBenchError
from crsbench_lib.results.predictions import PREDICTIONS_DIR, ConditionPredictions, predictions_from_table, predictions_table
from crsbench_lib.runner import cache
from crsbench_lib.runner.cache import CellStore


class PredictionStore(CellStore):
    """Per-image predictions of the finished cells of one output folder.

    Parameters
    ----------
    root : path-like
        The run's output folder; predictions live in ``root / "predictions"``.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        super().__init__(root)
        self.folder = Path(root) / PREDICTIONS_DIR
        self.folder.mkdir(parents=True, exist_ok=True)

    def load(self, key: str) -> list[ConditionPredictions]:  # type: ignore[override]
        """The stored predictions of a cell, after the cell store's checks.

        Raises
        ------
        CacheError
            If either file is missing or unreadable, or a checksum does not match.
        """
        if key in self._verified:
            return self._verified[key]
        sidecar = self._read_sidecar(key)
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CacheError(f"{path}: unreadable ({exc.strerror or type(exc).__name__})") from exc
        if hashlib.sha256(data).hexdigest() != sidecar["sha256"]:
            raise CacheError(f"{path}: sha256 does not match its sidecar")
        try:
            predictions = predictions_from_table(pq.read_table(pa.BufferReader(data)), str(path))
        except (CRSBenchError, OSError, ValueError, pa.ArrowException) as exc:
            raise CacheError(f"{path}: not valid predictions ({type(exc).__name__})") from exc
        self._verified[key] = predictions
        return predictions

    def save(self, key: str, predictions: Sequence[ConditionPredictions],  # type: ignore[override]
             info: Mapping[str, Any] | None = None) -> Path:
        """Store a cell's predictions, sidecar first (each atomically)."""
        self._verified.pop(key, None)
        buffer = io.BytesIO()
        pq.write_table(predictions_table(predictions), buffer, compression="zstd")
        data = buffer.getvalue()
        content = {**dict(info or {}), "format": cache.CELL_FORMAT, "key": key,
                   "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        sidecar = {**content, "sidecar_sha256": cache._digest(content)}
        path = self.path(key)
        atomic_write_text(self.info_path(key), json.dumps(sidecar, sort_keys=True, indent=1))
        try:
            atomic_write_bytes(path, data)
        except BaseException:
            self.info_path(key).unlink(missing_ok=True)
            raise
        return path

    def size_bytes(self) -> int:
        """Total size of the stored prediction files."""
        return sum(p.stat().st_size for p in self.folder.glob("*.parquet"))
