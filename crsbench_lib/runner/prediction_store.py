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

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from crsbench_lib.errors import CacheError, CRSBenchError
from crsbench_lib.results.predictions import PREDICTIONS_DIR, ConditionPredictions, predictions_from_table, predictions_table
from crsbench_lib.runner.cache import CellStore


class PredictionStore(CellStore):
    """Per-image predictions of the finished cells of one output folder.

    Parameters
    ----------
    root : path-like
        The run's output folder; predictions live in ``root / "predictions"``.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from crsbench_lib.results.predictions import META_COLUMNS, ConditionPredictions
    >>> meta = {name: "x" for name in META_COLUMNS}
    >>> meta.update(task="binary", seed=0, severity=0, ece_bins=10, label_fraction=1.0,
    ...             label_fraction_used=1.0, probe_c=1.0, condition="clean", calibration="none")
    >>> clean = ConditionPredictions.build(meta, np.arange(4), np.array([0, 1, 0, 1]),
    ...                                    np.array([0.2, 0.7, 0.4, 0.9]), "binary")
    >>> store = PredictionStore(tempfile.mkdtemp())
    >>> _ = store.save("k1", [clean], {"cell": "demo"})
    >>> store.inspect("k1")[0].value, len(store.load("k1"))
    ('intact', 1)
    """

    subdir = PREDICTIONS_DIR

    def load(self, key: str) -> list[ConditionPredictions]:  # type: ignore[override]
        """The stored predictions of a cell, after the cell store's checks.

        Raises
        ------
        CacheError
            If either file is missing or unreadable, or a checksum does not match.
        """
        return self._load_verified(key)

    def _decode(self, data: bytes, path: Path) -> list[ConditionPredictions]:  # type: ignore[override]
        try:
            return predictions_from_table(pq.read_table(pa.BufferReader(data)), str(path))
        except (CRSBenchError, OSError, ValueError, pa.ArrowException) as exc:
            raise CacheError(f"{path}: not valid predictions ({type(exc).__name__})") from exc

    def save(self, key: str, predictions: Sequence[ConditionPredictions],  # type: ignore[override]
             info: Mapping[str, Any] | None = None) -> Path:
        """Store a cell's predictions, sidecar first (each atomically)."""
        buffer = io.BytesIO()
        pq.write_table(predictions_table(predictions), buffer, compression="zstd")
        return self._store(key, buffer.getvalue(), info or {})

    def size_bytes(self) -> int:
        """Total size of the stored prediction files."""
        return sum(p.stat().st_size for p in self.folder.glob("*.parquet"))
