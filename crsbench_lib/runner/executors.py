"""Executors: run the grid's tasks serially, in local processes (joblib) or on Dask.

Every executor calls the same worker function, :func:`run_task`, on the same
tasks, and the parent stores each cell as its result arrives; so the results do
not depend on the executor. Two things could still make them depend on it, and
both are pinned here:

* seeds come from the config (the cell's seed), never from time, process or
  worker identity;
* thread counts change the last bits of parallel reductions: 1 vs 2 OpenBLAS
  threads change a logistic-regression fit by ~1e-16, and 1 vs 2 torch threads
  change a default-size ViT or k-means embedding enough to move an AUROC in its
  fourth decimal (measured: up to 0.0046 for k-means on the default profile,
  ``--jobs 1`` against ``--jobs 2``). So the probe fits run with one BLAS
  thread and every cell with :data:`TORCH_THREADS` torch threads, whatever the
  executor and the core count; parallelism comes from ``--jobs`` (processes),
  never from threads inside a cell.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from crsbench_lib.errors import ConfigError
from crsbench_lib.runner.profile import Profile
from crsbench_lib.runner.grid import Cell, Preparation, Task

# Seconds to wait for a Dask scheduler before declaring it unreachable.
SCHEDULER_CONNECT_TIMEOUT_S = 5.0
#: Torch intra-op threads of every cell, whatever the executor (see the module docstring).
TORCH_THREADS = 1


class CellBackend(Protocol):
    """What computes cells. The runner is generic; the real backend is
    :class:`crsbench_lib.runner.cell.RealBackend`, tests inject small fakes.

    ``prepare`` runs once in the parent before any cell (it may raise
    :class:`~crsbench_lib.errors.CRSBenchError` for bad input); ``compute`` runs
    in a worker and yields each cell's rows as soon as they exist, as
    ``(cell, rows)``, ``(cell, rows, predictions)`` (the per-image predictions
    the rows were computed from, stored beside them) or ``(cell, rows,
    predictions, facts)`` (a JSON mapping kept in the cell's manifest entry,
    such as the LoRA arm's adapter reports). A backend whose
    ``produces_predictions`` is true yields the latter, and its cells count as
    finished only when both are stored.
    """

    def prepare(self, profile: Profile) -> Preparation: ...

    def compute(self, profile: Profile, prep: Preparation, cells: Sequence[Cell]) -> Iterator[tuple[Cell, pd.DataFrame]]: ...


@dataclass(frozen=True)
class CellResult:
    """One computed cell, as returned by a worker."""

    cell: Cell
    key: str
    rows: pd.DataFrame
    seconds: float
    host: str
    pid: int
    predictions: list[Any] | None = None
    #: JSON facts for the manifest beside the timing (the LoRA arm's adapter reports).
    facts: Mapping[str, Any] | None = None


def set_torch_threads(threads: int) -> None:
    """Set torch's intra-op threads (if torch is importable)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def iter_task(
    backend: CellBackend,
    profile: Profile,
    prep: Preparation,
    task: Task,
    env: Mapping[str, str] | None = None,
) -> Iterator[CellResult]:
    """Compute a task's cells in this process, yielding each as it finishes.

    Torch runs on :data:`TORCH_THREADS` threads here (set before every task: a
    worker that loky restarted starts with torch's default again).
    """
    if env:
        os.environ.update(env)
    set_torch_threads(TORCH_THREADS)
    keys = dict(zip(task.cells, task.keys))
    host = platform.node()
    start = time.perf_counter()
    for item in backend.compute(profile, prep, task.cells):
        cell, rows = item[0], item[1]
        predictions = item[2] if len(item) > 2 else None
        facts = item[3] if len(item) > 3 else None
        now = time.perf_counter()
        yield CellResult(cell, keys[cell], rows, now - start, host, os.getpid(), predictions, facts)
        start = time.perf_counter()


def run_task(
    backend: CellBackend,
    profile: Profile,
    prep: Preparation,
    task: Task,
    env: Mapping[str, str] | None = None,
) -> list[CellResult]:
    """:func:`iter_task` collected into a list (what a remote worker returns)."""
    return list(iter_task(backend, profile, prep, task, env))


def serial_results(
    backend: CellBackend, profile: Profile, prep: Preparation, tasks: Sequence[Task], env: Mapping[str, str]
) -> Iterator[CellResult]:
    """Run tasks one after the other in this process."""
    for task in tasks:
        yield from iter_task(backend, profile, prep, task, env)


def joblib_results(
    backend: CellBackend,
    profile: Profile,
    prep: Preparation,
    tasks: Sequence[Task],
    jobs: int,
    env: Mapping[str, str],
) -> Iterator[CellResult]:
    """Run tasks in ``jobs`` local worker processes (joblib's loky backend)."""
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered")
    for results in parallel(delayed(run_task)(backend, profile, prep, t, env) for t in tasks):
        yield from results


def connect_scheduler(address: str, timeout: float | None = None) -> Any:
    """A ``distributed.Client`` connected to ``address``.

    Raises
    ------
    ConfigError
        If the address is malformed or no scheduler answers within ``timeout``
        seconds (default :data:`SCHEDULER_CONNECT_TIMEOUT_S`).
    """
    if not isinstance(address, str) or not address.strip():
        raise ConfigError("--scheduler must be a scheduler address such as tcp://host:8786")
    from distributed import Client

    timeout = SCHEDULER_CONNECT_TIMEOUT_S if timeout is None else timeout
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(
            f"--scheduler {address}: no Dask scheduler reachable within {timeout:g} s ({type(exc).__name__})"
        ) from exc


def dask_results(
    backend: CellBackend, profile: Profile, prep: Preparation, tasks: Sequence[Task], client: Any
) -> Iterator[CellResult]:
    """Run tasks on a Dask cluster through ``client``, yielding as they complete.

    Workers use their own ``CRSBENCH_CACHE`` (the client's folder may not exist
    on them) and :data:`TORCH_THREADS` torch threads per task.
    """
    from distributed import as_completed

    futures = [client.submit(run_task, backend, profile, prep, t, None, pure=False) for t in tasks]
    try:
        with client.as_current():
            completed = as_completed(futures)
        for future in completed:
            yield from future.result()
    finally:
        for future in futures:
            if not future.done():
                future.cancel()


ResultSource = Callable[[Sequence[Task]], Iterator[CellResult]]
