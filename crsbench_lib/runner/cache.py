"""The store of finished cells: one Parquet file per cell plus a checksummed sidecar.

Layout under a run's output folder::

    cells/<key>.parquet   the cell's result rows (validated results-table rows)
    cells/<key>.json      the sidecar: the cell key, the sha256 and size of the
                          Parquet bytes, when, where and how long it took, and
                          the sha256 of the sidecar's own content

A stored cell is reused only when both files read back, the sidecar's own
checksum matches, it names this key, the Parquet bytes match its sha256, and
the rows pass the results-table schema (:meth:`CellStore.inspect`). Anything
else (a flipped bit, a truncated file, a missing half) is *damaged*: the run
recomputes that cell and says so in one line; damage is never reused and never
fatal. Cells stored by a version that wrote no checksums are recomputed too.

Both files are written atomically (temporary file, then rename), the sidecar
first: the Parquet file's arrival finishes the cell, and a writer killed
between the two leaves only a sidecar, which counts as nothing stored. Files are written by the process that collects
results (the run's parent), so the folder does not need to be shared with
remote Dask workers.
"""

from __future__ import annotations

import enum
import hashlib
import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from crsbench_lib.atomic import atomic_write_bytes, atomic_write_text
from crsbench_lib.errors import CacheError, CRSBenchError
from crsbench_lib.hashing import sha256_of
from crsbench_lib.results.schema import validate_results

CELLS_DIR = "cells"
# Sidecar layout; 2 added the checksums. Bump when the sidecar's meaning changes.
CELL_FORMAT = 2
# Sidecar fields that hold checksums (a sidecar with none of them predates them).
_CHECKSUM_FIELDS = ("format", "sha256", "sidecar_sha256")


class CellStatus(enum.Enum):
    """What :meth:`CellStore.inspect` found for one key."""

    MISSING = "missing"  # nothing stored
    INTACT = "intact"  # verified: reuse it
    OLD_FORMAT = "old format"  # stored without checksums by an older version: recompute
    DAMAGED = "damaged"  # unreadable or fails a check: recompute, and say which


class CellStore:
    """Finished cells of one output folder.

    Parameters
    ----------
    root : path-like
        The run's output folder; cells live in ``root / "cells"``.

    Examples
    --------
    >>> import tempfile
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> store = CellStore(tempfile.mkdtemp())
    >>> _ = store.save("k1", synthetic_results(n_encoders=2, seeds=(0,)), {"cell": "demo"})
    >>> store.inspect("k1")[0].value, store.inspect("k2")[0].value
    ('intact', 'missing')
    """

    #: Folder of the run's output folder that holds this store's files.
    subdir: str = CELLS_DIR

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.folder = Path(root) / self.subdir
        self.folder.mkdir(parents=True, exist_ok=True)
        # Contents that passed every check, by key: checking is mostly schema validation, and a
        # run checks each reused cell before the work and assembles it after.
        self._verified: dict[str, Any] = {}

    def path(self, key: str) -> Path:
        """Parquet file of the cell with this key."""
        return self.folder / f"{key}.parquet"

    def info_path(self, key: str) -> Path:
        """JSON sidecar of the cell with this key."""
        return self.folder / f"{key}.json"

    def inspect(self, key: str) -> tuple[CellStatus, str]:
        """Whether the cell ``key`` is stored and can be reused.

        Parameters
        ----------
        key : str
            Cell key.

        Returns
        -------
        status : CellStatus
        reason : str
            For a damaged cell, the file and what is wrong with it (one line);
            empty otherwise.
        """
        if not self.path(key).exists():
            return CellStatus.MISSING, ""  # a sidecar alone is a save that stopped before its data
        try:
            self.load(key)
        except _OldFormat:
            return CellStatus.OLD_FORMAT, ""
        except CacheError as exc:
            return CellStatus.DAMAGED, str(exc)
        return CellStatus.INTACT, ""

    def load(self, key: str) -> pd.DataFrame:
        """The stored rows of a cell, after every check of :meth:`inspect`.

        Raises
        ------
        CacheError
            If either file is missing or unreadable, a checksum does not match,
            or the rows break the results-table schema (the message names the
            file and the check).

        Notes
        -----
        Rows are read and checked once per store object; later calls return
        the same frame (the run holds the folder's lock, so nobody else
        writes it in between).
        """
        return self._load_verified(key)

    def _load_verified(self, key: str) -> Any:
        """The decoded content of ``key`` once its sidecar and checksum hold (memoised)."""
        if key in self._verified:
            return self._verified[key]
        sidecar = self._read_sidecar(key)
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CacheError(f"{path}: unreadable ({exc.strerror or type(exc).__name__})") from exc
        if hashlib.sha256(data).hexdigest() != sidecar["sha256"]:
            raise CacheError(f"{path}: sha256 does not match its sidecar ({len(data)} bytes, "
                             f"{sidecar.get('bytes')} recorded)")
        content = self._decode(data, path)
        self._verified[key] = content
        return content

    def _decode(self, data: bytes, path: Path) -> pd.DataFrame:
        """The cell's rows from its checksum-verified Parquet bytes.

        A store of other content (:class:`~crsbench_lib.runner.prediction_store.PredictionStore`)
        overrides this and :meth:`save`; the sidecar, checksums and atomic writes stay here.
        """
        try:
            return validate_results(pd.read_parquet(io.BytesIO(data), engine="pyarrow"), source=str(path))
        except (CRSBenchError, OSError, ValueError) as exc:
            # A matching checksum with bad rows: written by a version with another schema.
            raise CacheError(f"{path}: not a valid cell ({_first_line(exc)})") from exc

    def _read_sidecar(self, key: str) -> dict[str, Any]:
        path = self.info_path(key)
        try:
            sidecar = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise CacheError(f"{path}: sidecar missing") from exc
        except (OSError, ValueError) as exc:  # ValueError covers bad JSON and bad UTF-8
            raise CacheError(f"{path}: sidecar unreadable ({type(exc).__name__})") from exc
        if not isinstance(sidecar, dict):
            raise CacheError(f"{path}: sidecar is not a JSON object")
        if not any(name in sidecar for name in _CHECKSUM_FIELDS):
            raise _OldFormat(str(path))
        content = {k: v for k, v in sidecar.items() if k != "sidecar_sha256"}
        if sidecar.get("sidecar_sha256") != _digest(content):
            raise CacheError(f"{path}: sidecar fails its own checksum")
        if sidecar.get("format") != CELL_FORMAT:
            raise _OldFormat(str(path))
        if sidecar.get("key") != key:
            raise CacheError(f"{path}: sidecar belongs to cell {str(sidecar.get('key'))[:16]}..., not this one")
        return sidecar

    def save(self, key: str, rows: pd.DataFrame, info: Mapping[str, Any]) -> Path:
        """Validate and store a cell's rows, then its sidecar (each atomically).

        Parameters
        ----------
        key : str
            Cell key.
        rows : pandas.DataFrame
            The cell's result rows.
        info : mapping
            JSON-serialisable facts for the manifest (cell label, seconds, host, ...).

        Returns
        -------
        pathlib.Path
            The Parquet file.

        Raises
        ------
        SchemaError
            If the rows break the schema.
        OutputError
            If the folder is unwritable or full (the cell is then not stored).
        """
        table = validate_results(rows, source=f"cell {info.get('cell', key)}")
        buffer = io.BytesIO()
        table.to_parquet(buffer, index=False, engine="pyarrow")
        return self._store(key, buffer.getvalue(), info)

    def _store(self, key: str, data: bytes, info: Mapping[str, Any]) -> Path:
        """Write ``data`` and its checksummed sidecar for ``key``; returns the data file."""
        self._verified.pop(key, None)
        content = {**dict(info), "format": CELL_FORMAT, "key": key,
                   "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        sidecar = {**content, "sidecar_sha256": _digest(content)}
        path = self.path(key)
        # The sidecar first: the Parquet file's arrival is what makes the cell finished.
        atomic_write_text(self.info_path(key), json.dumps(sidecar, sort_keys=True, indent=1))
        try:
            atomic_write_bytes(path, data)
        except BaseException:
            self.info_path(key).unlink(missing_ok=True)
            raise
        return path

    def info(self, key: str) -> dict[str, Any]:
        """The sidecar of a cell ({} if missing or unreadable)."""
        try:
            return dict(json.loads(self.info_path(key).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
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


class _OldFormat(CacheError):
    """A cell stored without checksums (by an older version): recomputed, not reported as damage."""


def _digest(content: Mapping[str, Any]) -> str:
    return sha256_of(dict(content))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
