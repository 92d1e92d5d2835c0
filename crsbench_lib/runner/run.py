"""Run a profile: every cell of its grid, resumable, on any executor.

``run_profile`` checks everything it can before any work starts (config, files,
encoder names, the Dask scheduler), prepares the dataset versions and weights
hashes that key the cells, skips the cells already stored under the output
folder (verified against their checksums; damaged ones are recomputed with a
warning), computes the rest (storing each as it finishes), then assembles
``results.parquet`` and ``manifest.json``. An interrupted run (Ctrl-C, a killed
process, a full disk) keeps every finished cell; running again finishes the
grid, and the table is byte-identical to an uninterrupted run's because it is
always assembled from the stored cells and written in canonical row order.
The whole run holds the output folder's lock (:mod:`crsbench_lib.runner.lock`),
so two runs never compute the same folder's cells twice.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from crsbench_lib.errors import ConfigError
from crsbench_lib.paths import cache_dir
from crsbench_lib.results.io import MANIFEST_FILE, RESULTS_FILE, run_dir, write_results
from crsbench_lib.results.manifest import data_check_warnings
from crsbench_lib.runner.cache import CellStatus, CellStore
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.profile import Profile
from crsbench_lib.runner.executors import (
    CellBackend,
    CellResult,
    connect_scheduler,
    dask_results,
    joblib_results,
    serial_results,
)
from crsbench_lib.runner.grid import Cell, build_cells, build_tasks, cell_key, not_adapted, ordered_tasks
from crsbench_lib.runner.lock import RunLock, describe_holder
from crsbench_lib.runner.manifest import host_info, library_versions, write_manifest
from crsbench_lib.runner.prediction_store import PredictionStore



@dataclass(frozen=True)
class RunOutcome:
    """What a finished run produced.

    Attributes
    ----------
    results_path, manifest_path : pathlib.Path
        The results table (Parquet) and the run manifest (JSON).
    out_dir : pathlib.Path
        The run's output folder (holds ``cells/``).
    n_cells, n_computed, n_reused : int
        Cells in the grid, computed by this call, reused from earlier calls.
    n_rows : int
        Rows of the results table.
    seconds : float
        Wall time of this call.
    config_hash : str
        The profile's config hash.
    """

    results_path: Path
    manifest_path: Path
    out_dir: Path
    n_cells: int
    n_computed: int
    n_reused: int
    n_rows: int
    seconds: float
    config_hash: str


def default_out_dir(profile: Profile) -> Path:
    """``cache_dir()/runs/<profile name>``."""
    return run_dir(profile.name)


def _default_backend() -> CellBackend:
    from crsbench_lib.runner.cell import RealBackend

    return RealBackend()


def _check_jobs(jobs: int) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"--jobs must be a positive integer, got {jobs!r}")
    return jobs


def assemble(store: CellStore, keys: dict[Cell, str], config_hash: str) -> pd.DataFrame:
    """The results table of a grid from its stored cells.

    The ``config_hash`` column is stamped with this run's hash: a reused cell's
    key proves that everything that determines its rows is unchanged, while the
    whole-config hash also covers parts that do not touch it (other seeds, say).
    """
    frames = [store.load(keys[cell]) for cell in sorted(keys)]
    table = pd.concat(frames, ignore_index=True)
    table["config_hash"] = config_hash
    return table


def reusable_cells(store: CellStore, keys: dict[Cell, str]) -> set[Cell]:
    """The cells whose stored results pass every check; the rest are to be computed.

    A damaged cell gets a one-line warning naming its file and what failed;
    cells stored by an older version without checksums get one line in all.
    """
    reused: set[Cell] = set()
    old_format = 0
    for cell in sorted(keys):
        status, reason = store.inspect(keys[cell])
        if status is CellStatus.INTACT:
            reused.add(cell)
        elif status is CellStatus.DAMAGED:
            print(f"crsbench: warning: cell {cell.label} is damaged, recomputing it: {reason}", file=sys.stderr)
        elif status is CellStatus.OLD_FORMAT:
            old_format += 1
    if old_format:
        print(f"crsbench: {old_format} cells in {store.folder} were stored without checksums "
              "by an older version; recomputing them", file=sys.stderr)
    return reused


def run_profile(
    profile: Profile | str | os.PathLike[str],
    out_dir: Path | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    *,
    backend: CellBackend | None = None,
    wait: bool = False,
) -> RunOutcome:
    """Compute every cell of a profile and write the results table and manifest.

    Parameters
    ----------
    profile : Profile, str or path-like
        A loaded profile, a shipped profile name or a config file.
    out_dir : pathlib.Path, optional
        Output folder; default ``cache_dir()/runs/<profile name>``. Finished cells
        under it are reused.
    jobs : int
        Local worker processes (joblib); 1 runs in this process.
    scheduler : str, optional
        Address of a Dask scheduler; the grid then runs on that cluster
        (``jobs`` is ignored).
    progress : bool
        Show a progress bar over cells (stderr).
    backend : CellBackend, optional
        What computes a cell; default the real pipeline
        (:class:`crsbench_lib.runner.cell.RealBackend`). Tests inject fakes.
    wait : bool
        If another run holds ``out_dir``: wait for it to finish (then reuse its
        cells) instead of stopping with :class:`~crsbench_lib.runner.lock.RunLockedError`.

    Returns
    -------
    RunOutcome

    Raises
    ------
    ConfigError, DataError, EncoderError
        Bad config, missing data, unknown encoder or unreachable scheduler,
        before any cell is computed.
    RunLockedError
        If another live run holds ``out_dir`` and ``wait`` is False.
    OutputError
        If the output folder is unwritable or full (finished cells are kept).
    KeyboardInterrupt
        On Ctrl-C, after the finished cells are stored.
    """
    if not isinstance(profile, Profile):
        profile = load_profile(profile)
    jobs = _check_jobs(jobs)
    out = Path(out_dir) if out_dir is not None else default_out_dir(profile)
    with RunLock(out, wait=wait) as lock:
        if lock.took_over is not None:
            print(f"crsbench: {out}: taking over from a run that stopped without finishing "
                  f"({describe_holder(lock.took_over)})", file=sys.stderr)
        return _run_locked(profile, out, jobs, scheduler, progress, backend)


def _run_locked(
    profile: Profile,
    out: Path,
    jobs: int,
    scheduler: str | None,
    progress: bool,
    backend: CellBackend | None,
) -> RunOutcome:
    """:func:`run_profile` once it holds the output folder's lock (the clock starts here, after any wait)."""
    started = time.perf_counter()
    started_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    client = connect_scheduler(scheduler) if scheduler is not None else None
    try:
        backend = _default_backend() if backend is None else backend
        prep = backend.prepare(profile)
        for line in data_check_warnings(prep.extra.get("data_checks") or {}):
            print(f"crsbench: warning: {line}", file=sys.stderr)
        cells = build_cells(profile, prep)
        if not cells:
            raise ConfigError(f"profile {profile.name}: the grid is empty (no encoder, dataset, seed or arm)")
        store = CellStore(out)
        store.remove_partial()
        keys = {cell: cell_key(profile, prep, cell) for cell in cells}
        with_predictions = bool(getattr(backend, "produces_predictions", False))
        predictions = PredictionStore(out) if with_predictions else None
        reused = reusable_cells(store, keys)
        if predictions is not None:
            # A cell is finished only with its predictions: rows alone are recomputed.
            predictions.remove_partial()
            reused &= reusable_cells(predictions, keys)
        todo = [cell for cell in cells if cell not in reused]
        tasks = ordered_tasks(build_tasks(todo, keys), [spec.name for spec in profile.datasets])
        env = {"CRSBENCH_CACHE": str(cache_dir())}
        if client is not None:
            executor = f"dask ({scheduler})"
            source: Iterator[CellResult] = dask_results(backend, profile, prep, tasks, client)
        elif jobs > 1 and len(tasks) > 1:
            executor = f"joblib ({jobs} processes)"
            source = joblib_results(backend, profile, prep, tasks, jobs, env)
        else:
            executor = "serial"
            source = serial_results(backend, profile, prep, tasks, env)
        computed = _consume(source, store, profile, len(cells), len(reused), progress, predictions)
    finally:
        if client is not None:
            client.close()

    table = assemble(store, keys, profile.config_hash)
    results_path = write_results(table, out / RESULTS_FILE)
    seconds = time.perf_counter() - started
    manifest = {
        "profile": profile.name,
        "config_source": str(profile.source) if profile.source else None,
        "config": profile.config,
        "config_hash": profile.config_hash,
        "standard": {"path": str(profile.standard_path), "version": profile.standard_version},
        "library_versions": {**library_versions(), **dict(prep.library_versions)},
        "dataset_versions": dict(prep.dataset_versions),
        "dataset_domains": dict(prep.dataset_domains),
        "corruption_families": {k: list(v) for k, v in prep.corruption_families.items()},
        "weights_hashes": {f"{e}@{d}": h for (e, d), h in sorted(prep.weights_hashes.items())},
        "code_versions": dict(prep.code_versions),
        "lora_encoders": sorted({c.encoder for c in cells if c.arm == "lora"}),
        "lora_not_adapted": not_adapted(profile, prep),
        "encoder_files": {name: dict(card) for name, card in prep.encoder_files.items()},
        "lora_runs": _lora_runs(cells, profile),
        "predictions_bytes": None if predictions is None else predictions.size_bytes(),
        "extra": dict(prep.extra),
        "executor": executor,
        "host": host_info(),
        "started_at": started_at,
        "wall_seconds": round(seconds, 3),
        "n_cells": len(cells),
        "n_computed": computed,
        "n_reused": len(reused),
        "n_rows": len(table),
        "cells": [_cell_entry(store, c, keys[c], c in reused) for c in sorted(cells)],
    }
    manifest_path = write_manifest(out / MANIFEST_FILE, manifest)
    return RunOutcome(
        results_path=results_path,
        manifest_path=manifest_path,
        out_dir=out,
        n_cells=len(cells),
        n_computed=computed,
        n_reused=len(reused),
        n_rows=len(table),
        seconds=seconds,
        config_hash=profile.config_hash,
    )


def _cell_entry(store: CellStore, cell: Cell, key: str, reused: bool) -> dict[str, Any]:
    info = store.info(key)
    return {
        "cell": cell.label,
        "encoder": cell.encoder,
        "dataset": cell.dataset,
        "seed": cell.seed,
        "arm": cell.arm,
        "key": key,
        "reused": reused,
        "seconds": info.get("seconds"),
        "finished_at": info.get("finished_at"),
        "host": info.get("host"),
        **({"lora": info["lora"]} if "lora" in info else {}),
    }


def _lora_runs(cells: list[Cell], profile: Profile) -> dict[str, Any]:
    """Runs of the LoRA arm, to report beside the study's (``scoring.published.PUBLISHED.lora_runs``).

    A run is one (encoder, dataset, seed), the study's unit. Every run trains
    one adapter on its full train split and one per label fraction below 1 on
    that fraction's subset only (method section 9, amendment 8).
    """
    lora_cells = [c for c in cells if c.arm == "lora"]
    fractions = [f for f in profile.label_fractions if f < 1.0]
    return {
        "runs": len(lora_cells),
        "adapters_per_run": 1 + len(fractions),
        "adapters": len(lora_cells) * (1 + len(fractions)),
    }


def _consume(
    source: Iterator[CellResult],
    store: CellStore,
    profile: Profile,
    total: int,
    done: int,
    progress: bool,
    predictions: PredictionStore | None = None,
) -> int:
    """Store results as they arrive; on Ctrl-C report what is kept and re-raise."""
    from tqdm.auto import tqdm

    bar = tqdm(total=total, initial=done, desc=f"crsbench run {profile.name}", unit="cell",
               disable=not progress, file=sys.stderr, dynamic_ncols=True)
    computed = 0
    try:
        for result in source:
            if predictions is not None:
                if result.predictions is None:
                    raise ConfigError(f"cell {result.cell.label}: the backend returned no predictions")
                # Predictions first: a cell whose rows exist is reused only with its predictions.
                predictions.save(result.key, result.predictions)
            store.save(
                result.key,
                result.rows,
                {
                    "cell": result.cell.label,
                    "seconds": round(result.seconds, 4),
                    "finished_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "host": result.host,
                    "pid": result.pid,
                    **dict(result.facts or {}),
                },
            )
            computed += 1
            bar.set_postfix_str(result.cell.label, refresh=False)
            bar.update(1)
    except KeyboardInterrupt:
        bar.close()
        print(
            f"crsbench: {done + computed} of {total} cells are stored in {store.folder}; "
            "run the same command again to resume",
            file=sys.stderr,
        )
        raise
    finally:
        closer = getattr(source, "close", None)
        if closer is not None:
            closer()
        bar.close()
    return computed
