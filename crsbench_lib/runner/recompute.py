"""Recompute a run's results table from its stored per-image predictions.

The results table of a run is computed from the predictions its cells stored
(``predictions/<cell key>.parquet``, method section 9, amendment 3), so it
can be recomputed without re-embedding or refitting anything: after a change
to a metric, say, or to check that a table is what its predictions say.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.io import MANIFEST_FILE, RESULTS_FILE, read_results, write_results
from crsbench_lib.results.manifest import read_manifest
from crsbench_lib.results.schema import KEY_COLUMNS, METRIC_COLUMNS
from crsbench_lib.runner.cache import CellStatus
from crsbench_lib.runner.prediction_store import PredictionStore

#: Default file name of a recomputed table (beside the run's own table).
RECOMPUTED_FILE = "results_recomputed.parquet"
#: Columns compared between the recomputed and the stored table.
COMPARED_COLUMNS: tuple[str, ...] = METRIC_COLUMNS + ("ece_floor", "ece_excess", "ece_debiased", "auroc_reference",
                                                   "ece_reference")


@dataclass(frozen=True)
class Recomputed:
    """What :func:`recompute_results` produced.

    Attributes
    ----------
    table : pandas.DataFrame
        The recomputed results table (canonical row order).
    path : pathlib.Path
        Where it was written.
    max_abs_difference : float or None
        Largest absolute difference of :data:`COMPARED_COLUMNS` against the
        run's ``results.parquet`` (None without one).
    n_cells : int
    """

    table: pd.DataFrame
    path: Path
    max_abs_difference: float | None
    n_cells: int


def max_abs_difference(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Largest absolute difference of :data:`COMPARED_COLUMNS` between two tables with the same keys.

    NaN equals NaN (a reference column outside corruption rows).

    Raises
    ------
    SchemaError
        If the tables do not hold the same rows (keys).
    """
    left = a.set_index(list(KEY_COLUMNS)).sort_index()
    right = b.set_index(list(KEY_COLUMNS)).sort_index()
    if not left.index.equals(right.index):
        raise SchemaError("the recomputed table and the stored table hold different rows")
    worst = 0.0
    for column in COMPARED_COLUMNS:
        x = left[column].to_numpy(dtype=float)
        y = right[column].to_numpy(dtype=float)
        if not np.array_equal(np.isnan(x), np.isnan(y)):
            return float("inf")
        both = ~np.isnan(x)
        if both.any():
            worst = max(worst, float(np.abs(x[both] - y[both]).max()))
    return worst


def recompute_results(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> Recomputed:
    """Recompute the results table of a run folder from its stored predictions.

    Parameters
    ----------
    run_dir : path-like
        A folder written by :func:`crsbench_lib.runner.run.run_profile`.
    out : path-like, optional
        Where to write the table (default ``run_dir/results_recomputed.parquet``).

    Returns
    -------
    Recomputed

    Raises
    ------
    SchemaError
        If the manifest or a cell's predictions are missing or unreadable.

    Examples
    --------
    >>> done = recompute_results(".crsbench-cache/runs/quick")  # doctest: +SKIP
    >>> done.max_abs_difference  # doctest: +SKIP
    0.0
    """
    from crsbench_lib.evaluation.cell import rows_from_predictions

    folder = Path(run_dir)
    manifest = read_manifest(folder / MANIFEST_FILE)
    store = PredictionStore(folder)
    frames = []
    for entry in manifest.cells:
        key = entry["key"]
        status, reason = store.inspect(key)
        if status is not CellStatus.INTACT:
            what = reason or status.value
            raise SchemaError(f"{store.path(key)}: the predictions of cell {entry['cell']} are not usable ({what})")
        frames.append(rows_from_predictions(store.load(key), source=str(store.path(key))))
    if not frames:
        raise SchemaError(f"{folder / MANIFEST_FILE}: the manifest lists no cells")
    table = pd.concat(frames, ignore_index=True)
    table["config_hash"] = manifest.config_hash
    destination = Path(out) if out is not None else folder / RECOMPUTED_FILE
    write_results(table, destination)
    recomputed = read_results(destination)
    stored = folder / RESULTS_FILE
    difference = max_abs_difference(recomputed, read_results(stored)) if stored.is_file() else None
    return Recomputed(recomputed, destination, difference, len(frames))
