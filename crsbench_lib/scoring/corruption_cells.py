"""Corruption cells: discrimination loss against calibration loss (crs-method 6.7).

A *cell* is one (dataset, corruption family). For every corrupted evaluation the
clean-trained probe's AUROC and ECE are compared with the same encoder's clean
evaluation (same dataset, seed and arm, uncalibrated):

* ``auroc_loss = auroc_clean - auroc_corrupted``
* ``ece_increase = ece_corrupted - ece_clean``

and each cell reports their means over encoders, seeds and severities. The
study finds that the two correlate only moderately across cells (r = 0.63 over
43 cells): an encoder can keep its ranking ability while its probabilities
become less trustworthy.

By default the differences are *not* clipped at zero: a corruption that helps
by chance cancels one that hurts by chance, so the cell mean is unbiased. The
robustness axis of the CRS clips (``max(0, .)``), because there a gain must not
offset a loss; ``clip=True`` reproduces that convention here.

The correlation's confidence interval uses Fisher's z transform:
``z = artanh(r)``, ``se = 1 / sqrt(n - 3)``, interval ``tanh(z -/+ q se)`` with
``q`` the standard normal quantile (Fisher 1915; see e.g. Bonett and Wright,
Psychometrika 65, 2000).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import ARMS, validate_results
from crsbench_lib.results.select import clean_rows

PAIR_KEYS: tuple[str, ...] = ("encoder", "dataset", "seed", "arm")
CELL_KEYS: tuple[str, ...] = ("dataset", "corruption")
MIN_CELLS_FOR_CI = 4  # Fisher's se = 1/sqrt(n - 3) needs n > 3


@dataclass(frozen=True)
class CellCorrelation:
    """Pearson correlation of two per-cell quantities with a Fisher-z interval.

    Attributes
    ----------
    r : float
        Pearson's r.
    ci_low, ci_high : float
        Bounds of the ``confidence`` interval (Fisher z).
    p_value : float
        Two-sided p-value of r = 0 (scipy.stats.pearsonr).
    n : int
        Number of cells.
    confidence : float
        Coverage of the interval.
    """

    r: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    confidence: float


def corrupted_pairs(results: pd.DataFrame, arm: str = "frozen", clip: bool = False) -> pd.DataFrame:
    """Every corrupted evaluation beside its clean twin.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table (validated here).
    arm : {"frozen", "lora"}
        Which arm to read.
    clip : bool
        Clip both differences at zero (the robustness axis's convention).

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder, dataset, seed, arm, corruption, severity, auroc_clean,
        auroc_corrupted, ece_clean, ece_corrupted, auroc_loss, ece_increase``.
        ``auroc_clean`` is the row's ``auroc_reference`` (clean AUROC on the same
        test images) where present, else the clean row's AUROC; ``ece_clean`` is
        always the clean row's.

    Raises
    ------
    SchemaError
        If the arm is unknown, there are no corruption rows, or a corrupted row
        has no clean twin (the message names encoder, dataset and seed).
    """
    if arm not in ARMS:
        raise SchemaError(f"unknown arm {arm!r} (expected one of {', '.join(ARMS)})")
    table = validate_results(results)
    table = table[(table["arm"] == arm) & (table["calibration"] == "none")]
    corrupted = table[table["condition"] == "corruption"]
    clean = clean_rows(table)
    if corrupted.empty:
        raise SchemaError(f"results table: no corruption rows for arm {arm!r}")
    keys = list(PAIR_KEYS)
    merged = corrupted[keys + ["corruption", "severity", "auroc", "ece", "auroc_reference"]].merge(
        clean[keys + ["auroc", "ece"]], on=keys, how="left", suffixes=("_corrupted", "_clean")
    )
    orphan = merged["auroc_clean"].isna()
    if orphan.any():
        first = merged.loc[orphan].iloc[0]
        raise SchemaError(
            f"results table: corruption row without a clean twin (encoder {first['encoder']!r}, "
            f"dataset {first['dataset']!r}, seed {int(first['seed'])})"
        )
    # Where the evaluation recorded it, the clean AUROC of the very images that were
    # corrupted is the reference (as for the robustness axis); else the clean row's.
    merged["auroc_clean"] = merged["auroc_reference"].fillna(merged["auroc_clean"])
    loss = merged["auroc_clean"] - merged["auroc_corrupted"]
    increase = merged["ece_corrupted"] - merged["ece_clean"]
    if clip:
        loss, increase = loss.clip(lower=0.0), increase.clip(lower=0.0)
    merged["auroc_loss"] = loss
    merged["ece_increase"] = increase
    merged = merged.astype({"encoder": object, "dataset": object, "arm": object, "corruption": object})
    order = keys + ["corruption", "severity"]
    columns = order + ["auroc_clean", "auroc_corrupted", "ece_clean", "ece_corrupted", "auroc_loss", "ece_increase"]
    return merged[columns].sort_values(order, kind="mergesort").reset_index(drop=True)


def corruption_cells(results: pd.DataFrame, arm: str = "frozen", clip: bool = False) -> pd.DataFrame:
    """Mean AUROC loss and mean ECE increase per (dataset, corruption) cell.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table.
    arm : {"frozen", "lora"}
        Which arm to read.
    clip : bool
        See :func:`corrupted_pairs`.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, corruption, n, mean_auroc_loss, mean_ece_increase``
        (``n``: evaluations averaged), sorted by dataset and corruption.
    """
    pairs = corrupted_pairs(results, arm=arm, clip=clip)
    cells = pairs.groupby(list(CELL_KEYS), sort=True).agg(
        n=("auroc_loss", "size"),
        mean_auroc_loss=("auroc_loss", "mean"),
        mean_ece_increase=("ece_increase", "mean"),
    )
    return cells.reset_index()


def cell_correlation(
    cells: pd.DataFrame,
    x: str = "mean_auroc_loss",
    y: str = "mean_ece_increase",
    confidence: float = 0.95,
) -> CellCorrelation:
    """Pearson r between two per-cell columns with a Fisher-z confidence interval.

    Parameters
    ----------
    cells : pandas.DataFrame
        Output of :func:`corruption_cells`.
    x, y : str
        Columns to correlate.
    confidence : float
        Coverage of the interval, in (0, 1).

    Returns
    -------
    CellCorrelation

    Raises
    ------
    ValueError
        If there are fewer than 4 cells, ``confidence`` is outside (0, 1), or a
        column is constant (r undefined).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    n = len(cells)
    if n < MIN_CELLS_FOR_CI:
        raise ValueError(f"need at least {MIN_CELLS_FOR_CI} cells for a Fisher-z interval, got {n}")
    a = cells[x].to_numpy(dtype=float)
    b = cells[y].to_numpy(dtype=float)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise ValueError(f"column {x if np.ptp(a) == 0 else y!r} is constant across cells: r is undefined")
    r, p_value = stats.pearsonr(a, b)
    r = float(r)
    q = float(stats.norm.ppf(0.5 + confidence / 2))
    # artanh(+-1) is infinite; clamp so a perfect correlation gives the degenerate interval [r, r].
    z = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
    se = 1.0 / np.sqrt(n - 3)
    low, high = np.tanh(z - q * se), np.tanh(z + q * se)
    return CellCorrelation(r=r, ci_low=float(low), ci_high=float(high), p_value=float(p_value), n=n, confidence=confidence)
