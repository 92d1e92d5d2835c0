"""Corruption cells: discrimination loss against calibration loss (method section 6, item 7).

A *cell* is one (dataset, corruption family). For every corrupted evaluation the
clean-trained probe's AUROC and ECE are compared with the same encoder's clean
evaluation (same dataset, seed and arm, uncalibrated):

* ``auroc_loss = auroc_clean - auroc_corrupted``
* ``ece_increase = ece_corrupted - ece_clean``

where ``auroc_clean`` and ``ece_clean`` are the clean metrics *on the same test
images* (the row's ``auroc_reference`` and ``ece_reference``, method section 9, amendment 9)
where the evaluation recorded them, else the clean row's (a cell may corrupt
only a subset of the test split, and comparing against the whole split adds
the sampling difference of two test sets), and each cell reports their means
over encoders, seeds and severities. The
study finds that the two correlate only moderately across cells (r = 0.63 over
43 cells): an encoder can keep its ranking ability while its probabilities
become less trustworthy.

By default the differences are *not* clipped at zero: a corruption that helps
by chance cancels one that hurts by chance, so the cell mean is unbiased. The
robustness axis of the CRS clips (``max(0, .)``), because there a gain must not
offset a loss; ``clip=True`` reproduces that convention here.

The cells are not independent observations: every cell averages the same
encoders, and the cells of one dataset share its images. The correlation's
interval is therefore a cluster bootstrap (:func:`cell_correlation_bootstrap`,
method section 9, amendment 6): each draw resamples encoders and datasets with replacement,
independently (a crossed, "pigeonhole" bootstrap: Owen 2007, Ann. Appl. Stat.
1(2); Field and Welsh 2007, J. R. Stat. Soc. B 69(3)), recomputes every cell's
means from the drawn encoders (with their multiplicities), repeats each drawn
dataset's cells as often as the dataset was drawn, and recomputes Pearson's r.

:func:`cell_correlation` keeps the textbook Fisher-z interval (``z =
artanh(r)``, ``se = 1 / sqrt(n - 3)``, ``tanh(z -/+ q se)``; Fisher 1915, Bonett
and Wright 2000), which treats the cells as independent and is too narrow here;
it stays for comparison with the study, which reports r only.

A correlation of cell means is driven by how strong each corruption is; the
study's per-model question (does an encoder that loses more AUROC also lose
more calibration?) is answered within cells, across encoders, by
:mod:`crsbench_lib.scoring.corruption_within`, whose bootstrap also resamples
the test images that every encoder shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import ARMS, validate_results
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.agreement import CorrelationUncertainty
from crsbench_lib.scoring.resampling import check_interval, crossed_weights, factor_codes, percentile_interval

PAIR_KEYS: tuple[str, ...] = ("encoder", "dataset", "seed", "arm")
CELL_KEYS: tuple[str, ...] = ("dataset", "corruption")
MIN_CELLS_FOR_CI = 4  # Fisher's se = 1/sqrt(n - 3) needs n > 3
#: Factors the cluster bootstrap may resample: inside a cell (rows) or whole cells.
ROW_FACTORS: tuple[str, ...] = ("encoder", "seed")
CELL_FACTORS: tuple[str, ...] = CELL_KEYS
DEFAULT_CLUSTERS: tuple[str, ...] = ("encoder", "dataset")
# Relative variance under which a draw's cell means count as constant.
_RELATIVE_SPREAD = 1e-20


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
        likewise the row's ``ece_reference`` where the table has it, else the
        clean row's ECE.

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
    references = ["auroc_reference"] + (["ece_reference"] if "ece_reference" in corrupted.columns else [])
    merged = corrupted[keys + ["corruption", "severity", "auroc", "ece", *references]].merge(
        clean[keys + ["auroc", "ece"]], on=keys, how="left", suffixes=("_corrupted", "_clean")
    )
    orphan = merged["auroc_clean"].isna()
    if orphan.any():
        first = merged.loc[orphan].iloc[0]
        raise SchemaError(
            f"results table: corruption row without a clean twin (encoder {first['encoder']!r}, "
            f"dataset {first['dataset']!r}, seed {int(first['seed'])})"
        )
    # Where the evaluation recorded them, the clean metrics of the very images that were
    # corrupted are the reference (as for the robustness axis); else the clean row's.
    merged["auroc_clean"] = merged["auroc_reference"].fillna(merged["auroc_clean"])
    if "ece_reference" in merged.columns:
        merged["ece_clean"] = merged["ece_reference"].astype(float).fillna(merged["ece_clean"])
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


def weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson r of x and y per row with non-negative weights, all of shape (B, C); NaN where undefined.

    ``r = sum w dx dy / sqrt(sum w dx^2 sum w dy^2)`` with ``dx = x - sum w x / sum w``
    (and ``dy`` alike): Pearson's r of the data set in which each point is
    repeated ``w`` times (Pearson 1896). A row whose spread is below rounding
    level (every weighted point the same) gives NaN, not +-1.

    Parameters
    ----------
    x, y, w : numpy.ndarray
        Shape (B, C); ``w`` non-negative.

    Returns
    -------
    numpy.ndarray
        Shape (B,), in [-1, 1] or NaN.

    Examples
    --------
    >>> weighted_pearson(np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 3.0, 2.0]]), np.ones((1, 3)))
    array([0.5])
    """
    total = w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = x - (w * x).sum(axis=1, keepdims=True) / total
        dy = y - (w * y).sum(axis=1, keepdims=True) / total
        sxx = (w * dx * dx).sum(axis=1)
        syy = (w * dy * dy).sum(axis=1)
        # Spread below rounding level (every drawn cell the same) means no correlation, not r = +-1.
        spread = (sxx > _RELATIVE_SPREAD * (w * x * x).sum(axis=1)) & (syy > _RELATIVE_SPREAD * (w * y * y).sum(axis=1))
        r = (w * dx * dy).sum(axis=1) / np.sqrt(sxx * syy)
    return np.where(spread, np.clip(r, -1.0, 1.0), np.nan)


def cell_correlation_bootstrap(
    results: pd.DataFrame,
    arm: str = "frozen",
    clip: bool = False,
    clusters: tuple[str, ...] = DEFAULT_CLUSTERS,
    n_draws: int = 1000,
    interval: float = 0.95,
    random_state: int = 0,
) -> CorrelationUncertainty:
    """Pearson r of mean AUROC loss and mean ECE increase over cells, with a cluster bootstrap.

    In draw ``b`` each resampled factor's levels are drawn with replacement
    (:func:`~.resampling.crossed_weights`). A row (one corrupted evaluation)
    weighs the product of its encoder's (and seed's) multiplicities; cell ``c``
    gets the weighted means ``L_c = sum w_i loss_i / sum w_i`` and ``E_c`` alike;
    a cell weighs the product of its dataset's (and corruption's)
    multiplicities ``v_c``, so that a dataset drawn twice contributes its cells
    twice; and ``r_b`` is the ``v``-weighted Pearson correlation of ``(L_c,
    E_c)``. A cell left without rows in a draw drops out of it; a draw in which
    r is undefined (fewer than two distinct cells) is not counted.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with corruption rows.
    arm : {"frozen", "lora"}
        Which arm to read.
    clip : bool
        See :func:`corrupted_pairs`.
    clusters : tuple of str
        Factors to resample, among ``encoder, seed`` (inside cells) and
        ``dataset, corruption`` (whole cells); default encoders and datasets.
    n_draws : int
        Bootstrap draws.
    interval : float
        Coverage of the percentile interval.
    random_state : int
        Seed of the draws.

    Returns
    -------
    CorrelationUncertainty
        ``statistic="pearson_r"``, the point r over the cells of
        :func:`corruption_cells`, the percentile interval
        (``interval_method="cluster_bootstrap"``), ``n`` cells and no p-value
        (``p_method="none"``).

    Raises
    ------
    SchemaError
        As :func:`corrupted_pairs`.
    ValueError
        If a cluster factor is unknown, fewer than 4 cells exist, r is
        undefined on the full data, or a parameter is invalid.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> table = synthetic_results(n_encoders=4, corruptions=("noise", "blur"), severities=(1, 3))
    >>> u = cell_correlation_bootstrap(table, n_draws=200)
    >>> u.n, u.interval_method, u.ci_low <= u.ci_high
    (6, 'cluster_bootstrap', True)
    """
    allowed = ROW_FACTORS + CELL_FACTORS
    unknown = [c for c in clusters if c not in allowed]
    if unknown or not clusters:
        raise ValueError(f"clusters must name some of {', '.join(allowed)}, got {list(clusters)}")
    coverage = check_interval(interval)
    pairs = corrupted_pairs(results, arm=arm, clip=clip)
    cell_frame = pairs[list(CELL_KEYS)].drop_duplicates().sort_values(list(CELL_KEYS), kind="mergesort")
    n_cells = len(cell_frame)
    if n_cells < MIN_CELLS_FOR_CI:
        raise ValueError(f"need at least {MIN_CELLS_FOR_CI} cells for a correlation interval, got {n_cells}")
    cell_index = pd.MultiIndex.from_frame(cell_frame)
    cell_of_row = cell_index.get_indexer(pd.MultiIndex.from_frame(pairs[list(CELL_KEYS)]))
    row_codes = factor_codes(pairs, list(ROW_FACTORS))
    cell_codes = factor_codes(cell_frame.reset_index(drop=True), list(CELL_FACTORS))
    rng = np.random.default_rng(random_state)  # one stream: row factors first, then cell factors
    row_weights = crossed_weights(row_codes, n_draws, random_state=rng, factors=[c for c in clusters if c in ROW_FACTORS])
    cell_weights = crossed_weights(
        cell_codes, n_draws, random_state=rng, factors=[c for c in clusters if c in CELL_FACTORS]
    )
    membership = np.zeros((len(pairs), n_cells))
    membership[np.arange(len(pairs)), cell_of_row] = 1.0
    loss = pairs["auroc_loss"].to_numpy(dtype=float)
    increase = pairs["ece_increase"].to_numpy(dtype=float)
    count = row_weights @ membership
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_loss = (row_weights * loss) @ membership / count
        mean_increase = (row_weights * increase) @ membership / count
    present = count > 0
    v = np.where(present, cell_weights, 0.0)
    r_draws = weighted_pearson(np.where(present, mean_loss, 0.0), np.where(present, mean_increase, 0.0), v)
    cells = corruption_cells(results, arm=arm, clip=clip)
    a = cells["mean_auroc_loss"].to_numpy(dtype=float)
    b = cells["mean_ece_increase"].to_numpy(dtype=float)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        raise ValueError("a cell column is constant across cells: r is undefined")
    low, high, n_valid = percentile_interval(r_draws, coverage)
    return CorrelationUncertainty(
        statistic="pearson_r",
        estimate=float(stats.pearsonr(a, b)[0]),
        ci_low=low,
        ci_high=high,
        interval=coverage,
        interval_method="cluster_bootstrap",
        n_draws=n_valid,
        p_value=float("nan"),
        p_method="none",
        n_permutations=0,
        n=n_cells,
    )
