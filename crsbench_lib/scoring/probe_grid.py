"""Where the probes' regularisation sits on its grid (method section 9, amendment 16).

Each linear probe picks its inverse regularisation strength ``C`` from a grid by
the validation criterion of ``probe.c_rule`` (the results table's ``probe_c``
column). A probe that picks the grid's smallest or largest value may have
preferred a value outside it: its fit, and with it the calibration axis (the
ECE of that probe), then measures the grid's end rather than the encoder. An
overfitted probe (large ``C``) is over-confident and a heavily regularised one
(small ``C``) under-confident, so an edge choice moves ECE in a known direction
(Guo et al. 2017 on capacity and calibration; for linear probing, Kumar et al.
2022). This module counts the edge choices of the clean, full-label probes: one
probe per encoder, dataset and seed.

Examples
--------
>>> import numpy as np
>>> from crsbench_lib.results.synthetic import synthetic_results
>>> table = synthetic_results(n_encoders=2, corruptions=("noise",), random_state=0)
>>> table["probe_c"] = np.where(table["encoder"] == table["encoder"].iloc[0], 0.01, 1.0)
>>> grid_edges(table, (0.01, 1.0, 100.0)).groupby("encoder")["edge"].first().tolist()
['low', 'interior']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.manifest import RunManifest
from crsbench_lib.results.schema import ARMS
from crsbench_lib.results.select import clean_rows
from crsbench_lib.results.validated import as_validated

#: Relative tolerance when matching a probe's C with a grid value (written and read back as float64).
GRID_RTOL = 1e-9


@dataclass(frozen=True)
class EdgeShare:
    """How many probes chose an edge of the grid.

    Attributes
    ----------
    n_probes : int
        Clean, full-label probes counted (one per encoder, dataset and seed).
    n_low, n_high : int
        Probes at the grid's smallest and largest ``C``.
    grid : tuple of float
        The grid, ascending.
    """

    n_probes: int
    n_low: int
    n_high: int
    grid: tuple[float, ...]

    @property
    def fixed(self) -> bool:
        """Whether the grid holds one value (C fixed by the profile, not chosen)."""
        return len(self.grid) == 1

    @property
    def share(self) -> float:
        """Share of probes at either edge (NaN without probes)."""
        return (self.n_low + self.n_high) / self.n_probes if self.n_probes else float("nan")


def _check_grid(grid: Sequence[float]) -> tuple[float, ...]:
    try:
        values = tuple(sorted(float(c) for c in grid))
    except (TypeError, ValueError):
        raise SchemaError(f"probe grid must be a list of numbers, got {grid!r}") from None
    if not values or not all(np.isfinite(values)) or values[0] <= 0:
        raise SchemaError(f"probe grid needs positive finite C values, got {list(grid)!r}")
    return values


def manifest_grid(manifest: RunManifest | None) -> tuple[float, ...] | None:
    """The C grid a run's probes chose from: the manifest's ``config.probe.C`` (``None`` if not recorded).

    Raises
    ------
    SchemaError
        If the key holds anything but a list of numbers (naming the manifest file).
    """
    if manifest is None:
        return None
    probe = (manifest.config or {}).get("probe")
    grid = probe.get("C") if isinstance(probe, Mapping) else None
    if grid is None:
        return None
    if not isinstance(grid, list) or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in grid):
        raise SchemaError(f"{manifest.path}: run manifest key 'config.probe.C' must be a list of numbers")
    return tuple(float(c) for c in grid)


def grid_edges(results: pd.DataFrame, grid: Sequence[float], arm: str = "frozen") -> pd.DataFrame:
    """The chosen ``C`` of every clean, full-label probe and whether it is an edge of ``grid``.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with the ``probe_c`` column.
    grid : sequence of float
        The C grid the probes chose from (:func:`manifest_grid`).
    arm : str
        The arm whose probes are counted.

    Returns
    -------
    pandas.DataFrame
        One row per (encoder, dataset, seed): ``probe_c`` and ``edge`` (``"low"``,
        ``"high"`` or ``"interior"``; ``"fixed"`` for every probe of a one-value
        grid), sorted by the three keys.

    Raises
    ------
    SchemaError
        Unknown arm, no ``probe_c`` column or no clean rows, a bad grid, or a
        probe whose ``C`` is not on the grid (the table came from another grid).
    """
    if arm not in ARMS:
        raise SchemaError(f"unknown arm {arm!r} (expected one of {', '.join(ARMS)})")
    values = _check_grid(grid)
    table = as_validated(results).frame
    if "probe_c" not in table.columns:
        raise SchemaError("results table: no 'probe_c' column (the probes' chosen C)")
    clean = clean_rows(table, arm=arm, calibration="none")
    if clean.empty:
        raise SchemaError(f"results table: no clean rows for arm {arm!r}")
    probes = clean.groupby(["encoder", "dataset", "seed"], sort=True)["probe_c"].first().reset_index()
    chosen = probes["probe_c"].to_numpy(dtype=float)
    if np.isnan(chosen).any():
        row = probes.loc[np.isnan(chosen)].iloc[0]
        raise SchemaError(f"results table: no 'probe_c' recorded for {row['encoder']} on {row['dataset']}, seed "
                          f"{row['seed']} (the probes' chosen C)")
    on_grid = np.isclose(chosen[:, None], np.asarray(values)[None, :], rtol=GRID_RTOL, atol=0.0).any(axis=1)
    if not on_grid.all():
        row = probes.loc[~on_grid].iloc[0]
        raise SchemaError(
            f"results table: probe of {row['encoder']} on {row['dataset']}, seed {row['seed']}, chose C = "
            f"{float(row['probe_c']):g}, which is not on the grid {list(values)!r}"
        )
    if len(values) == 1:  # C fixed by the profile: nothing was chosen, so there is no edge to run into
        probes["edge"] = "fixed"
        return probes
    low = np.isclose(chosen, values[0], rtol=GRID_RTOL, atol=0.0)
    high = np.isclose(chosen, values[-1], rtol=GRID_RTOL, atol=0.0)
    probes["edge"] = np.where(low, "low", np.where(high, "high", "interior"))
    return probes


def edge_share(edges: pd.DataFrame, grid: Sequence[float]) -> EdgeShare:
    """Counts of :func:`grid_edges`.

    Examples
    --------
    >>> edges = pd.DataFrame({"edge": ["low", "interior", "high", "interior"]})
    >>> share = edge_share(edges, (0.1, 1.0, 10.0))
    >>> share.n_low, share.n_high, share.share
    (1, 1, 0.5)
    """
    kinds = edges["edge"]
    return EdgeShare(n_probes=int(len(kinds)), n_low=int((kinds == "low").sum()), n_high=int((kinds == "high").sum()),
                     grid=_check_grid(grid))


__all__ = ["GRID_RTOL", "EdgeShare", "edge_share", "grid_edges", "manifest_grid"]
