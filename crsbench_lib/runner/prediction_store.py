"""The store of finished cells' per-image predictions, beside the cell store.

Layout under a run's output folder::

    predictions/<key>.parquet   the cell's test predictions (results/predictions.py)

Same key (content address) and same guarantees as :class:`~crsbench_lib.runner.cache.CellStore`,
whose API it reuses: files are renamed into place only once fully written, a
file without a complete Parquet footer counts as missing, and a cell counts as
finished only when both its rows and its predictions are stored.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from crsbench_lib.results.predictions import (
    PREDICTIONS_DIR,
    ConditionPredictions,
    read_predictions,
    write_predictions,
)
from crsbench_lib.runner.cache import CellStore


class PredictionStore(CellStore):
    """Per-image predictions of the finished cells of one output folder.

    Parameters
    ----------
    root : path-like
        The run's output folder; predictions live in ``root / "predictions"``.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.folder = Path(root) / PREDICTIONS_DIR
        self.folder.mkdir(parents=True, exist_ok=True)

    def load(self, key: str) -> list[ConditionPredictions]:  # type: ignore[override]
        """The stored predictions of a cell.

        Raises
        ------
        SchemaError
            If the file is missing, unreadable or lacks a column.
        """
        return read_predictions(self.path(key))

    def save(self, key: str, predictions: Sequence[ConditionPredictions]) -> Path:  # type: ignore[override]
        """Store a cell's predictions (atomically)."""
        return write_predictions(predictions, self.path(key))

    def size_bytes(self) -> int:
        """Total size of the stored prediction files."""
        return sum(p.stat().st_size for p in self.folder.glob("*.parquet"))
