"""The store of finished cells: one Parquet file per cell, written atomically.

Layout under a run's output folder::

    cells/<key>.parquet   the cell's result rows (validated results-table rows)
    cells/<key>.json      when, where and how long it took (for the manifest)

A cell counts as finished when its Parquet file exists with a complete footer
(files are renamed into place only once fully written, so a partial file can
only come from outside); a truncated file is treated as missing and recomputed,
and every file is validated as a results table when the table is assembled.
Files are written by the process that collects results (the run's parent), so
the folder does not need to be shared with remote Dask workers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from crsbench_lib.atomic import atomic_path, atomic_write_text
from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import validate_results

CELLS_DIR = "cells"


class CellStore:
    """Finished cells of one output folder.

    Parameters
    ----------
    root : path-like
        The run's output folder; cells live in ``root / "cells"``.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.folder = Path(root) / CELLS_DIR
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        """Parquet file of the cell with this key."""
        return self.folder / f"{key}.parquet"

    def info_path(self, key: str) -> Path:
        """JSON sidecar (timings) of the cell with this key."""
        return self.folder / f"{key}.json"

    def has(self, key: str) -> bool:
        """Whether a complete result file exists for ``key``.

        Checks the Parquet footer only (cheap); the rows are validated when the
        table is assembled. A file cut short by a killed writer has no footer.
        """
        path = self.path(key)
        if not path.is_file():
            return False
        try:
            pq.read_metadata(path)
        except (OSError, ValueError, pa.ArrowException):
            return False
        return True

    def load(self, key: str) -> pd.DataFrame:
        """The stored rows of a cell.

        Raises
        ------
        SchemaError
            If the file is missing, unreadable or not a valid results table.
        """
        path = self.path(key)
        try:
            frame = pd.read_parquet(path, engine="pyarrow")
        except (OSError, ValueError) as exc:
            raise SchemaError(f"{path}: unreadable cell file ({type(exc).__name__})") from exc
        return validate_results(frame, source=str(path))

    def save(self, key: str, rows: pd.DataFrame, info: Mapping[str, Any]) -> Path:
        """Validate and store a cell's rows (atomically), then its info sidecar."""
        table = validate_results(rows, source=f"cell {info.get('cell', key)}")
        path = self.path(key)
        with atomic_path(path, suffix=".parquet") as tmp:
            table.to_parquet(tmp, index=False, engine="pyarrow")
        atomic_write_text(self.info_path(key), json.dumps(dict(info), sort_keys=True, indent=1))
        return path

    def info(self, key: str) -> dict[str, Any]:
        """The info sidecar of a cell ({} if missing or unreadable)."""
        try:
            return dict(json.loads(self.info_path(key).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return {}

    def remove_partial(self) -> int:
        """Delete temporary files left by a writer that was killed; returns how many."""
        removed = 0
        for tmp in self.folder.glob(".*"):
            if tmp.is_file():
                try:
                    tmp.unlink()
                    removed += 1
                except OSError:
                    pass
        return removed
