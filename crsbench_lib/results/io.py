"""Read and write the results table (Parquet, with CSV export), and where a run keeps it."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from crsbench_lib.atomic import atomic_path
from crsbench_lib.errors import SchemaError
from crsbench_lib.paths import cache_dir
from crsbench_lib.results.schema import COLUMNS, KEY_COLUMNS, validate_results

#: File names inside a run folder: the results table, the run manifest, and the standard frozen from the run
#: (written by ``crsbench run`` when its profile names no standard).
RESULTS_FILE = "results.parquet"
MANIFEST_FILE = "manifest.json"
OWN_STANDARD_FILE = "standard.yaml"


def own_standard_beside(results_path: str | os.PathLike[str]) -> Path | None:
    """The standard a run froze from itself (:data:`OWN_STANDARD_FILE` beside its table), or ``None``."""
    path = Path(results_path).parent / OWN_STANDARD_FILE
    return path if path.is_file() else None


def run_dir(profile_name: str) -> Path:
    """The default folder of a profile's run, ``cache_dir()/runs/<profile name>``.

    Examples
    --------
    >>> run_dir("quick").parts[-2:]
    ('runs', 'quick')
    """
    return cache_dir() / "runs" / profile_name


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """Validated table in a canonical row order, so equal tables write equal bytes."""
    table = validate_results(frame)
    return table.sort_values(list(KEY_COLUMNS), kind="mergesort").reset_index(drop=True)


def write_results(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Validate ``frame`` and write it as Parquet at ``path`` (atomically).

    Rows are sorted by the key columns first, so that two runs that computed the
    same rows in a different order write bit-identical files.

    Parameters
    ----------
    frame : pandas.DataFrame
        A results table.
    path : path-like
        Destination ``.parquet`` file.

    Returns
    -------
    pathlib.Path
        The written path.
    """
    table = _canonical(frame)
    destination = Path(path)
    with atomic_path(destination, suffix=".parquet") as tmp:
        table.to_parquet(tmp, index=False, engine="pyarrow")
    return destination


def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate a results table from Parquet (or CSV, by suffix).

    Raises
    ------
    SchemaError
        If the file is missing, unreadable, or breaks the schema; the message
        names the file, and the column and rows at fault.
    """
    source = Path(path)
    if not source.is_file():
        raise SchemaError(f"{source}: no such results file")
    try:
        if source.suffix.lower() == ".csv":
            frame = pd.read_csv(source, keep_default_na=False, na_values=[""])
            # CSV cannot tell "" from a missing value: restore the neutral text values.
            for column in COLUMNS:
                if column.kind == "str" and column.default == "" and column.name in frame.columns:
                    frame[column.name] = frame[column.name].fillna("").astype(str)
        else:
            frame = pd.read_parquet(source, engine="pyarrow")
    except (OSError, ValueError) as exc:
        raise SchemaError(f"{source}: not a readable results table ({type(exc).__name__}: {exc})") from exc
    return validate_results(frame, source=str(source))


def to_csv(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Validate ``frame`` and export it as CSV at ``path`` (atomically)."""
    table = _canonical(frame)
    destination = Path(path)
    with atomic_path(destination, suffix=".csv") as tmp:
        table.to_csv(tmp, index=False)
    return destination
