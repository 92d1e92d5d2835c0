"""Small summaries of the results table that only the book draws.

The CRS itself reduces label efficiency and calibration to one number per
encoder; the four-axes chapter shows the curves behind those numbers, and the
leading-tier chapter the full distribution of bootstrap ranks. These helpers
compute them (pure pandas/numpy; the scoring layer computes every reported
statistic).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import validate_results
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.axes import CELL, label_retention


def _arm_rows(results: pd.DataFrame, arm: str) -> pd.DataFrame:
    table = validate_results(results)
    rows = table[(table["arm"] == arm) & (table["calibration"] == "none")]
    if rows.empty:
        raise SchemaError(f"results table has no uncalibrated rows for arm {arm!r}")
    return rows.astype({"encoder": object, "dataset": object, "condition": object, "corruption": object})


def label_efficiency_curves(results: pd.DataFrame, arm: str = "frozen") -> pd.DataFrame:
    """AUROC retention per encoder and label fraction.

    ``retention_f = AUROC_f / AUROC_1.0`` per (encoder, dataset, seed), averaged
    over seeds and then datasets, like the label-efficiency axis ``L`` (whose
    value is the mean of these retentions over the fractions below 1).

    Returns
    -------
    pandas.DataFrame
        ``encoder, label_fraction, retention, auroc`` including fraction 1.0
        (retention 1), sorted by encoder and fraction.
    """
    rows = _arm_rows(results, arm)
    clean = clean_rows(rows).set_index(CELL)["auroc"]
    fractions = rows[rows["condition"] == "label_fraction"]
    if fractions.empty:
        raise SchemaError(f"results table has no label-fraction rows for arm {arm!r}")
    frame = fractions[CELL + ["label_fraction", "auroc"]].copy()
    frame["retention"] = label_retention(frame, clean)
    full = clean.reset_index().assign(label_fraction=1.0, retention=1.0)
    frame = pd.concat([frame, full[frame.columns]], ignore_index=True)
    per_dataset = frame.groupby(["encoder", "dataset", "label_fraction"])[["retention", "auroc"]].mean()
    curves = per_dataset.groupby(level=["encoder", "label_fraction"]).mean().reset_index()
    return curves.sort_values(["encoder", "label_fraction"], kind="mergesort").reset_index(drop=True)


def condition_labels(rows: pd.DataFrame) -> pd.Series:
    """A readable label per row: "clean", "labels 25%", "corruption s3", "shift (site B)"."""
    labels = pd.Series("clean", index=rows.index, dtype=object)
    lf = rows["condition"] == "label_fraction"
    labels[lf] = [f"labels {100 * f:g}%" for f in rows.loc[lf, "label_fraction"]]
    corr = rows["condition"] == "corruption"
    labels[corr] = [f"corruption s{int(s)}" for s in rows.loc[corr, "severity"]]
    labels[rows["condition"] == "shift"] = "shift (site B)"
    return labels


def ece_by_condition(results: pd.DataFrame, arm: str = "frozen") -> pd.DataFrame:
    """Mean ECE per encoder and condition (seeds, then datasets, averaged; corruptions pooled per severity).

    Returns
    -------
    pandas.DataFrame
        ``encoder, condition, ece, auroc`` with conditions ordered clean,
        decreasing label fractions, increasing severities, shift.
    """
    rows = _arm_rows(results, arm).copy()
    rows["label"] = condition_labels(rows)
    per_dataset = rows.groupby(["encoder", "dataset", "label"])[["ece", "auroc"]].mean()
    table = per_dataset.groupby(level=["encoder", "label"]).mean().reset_index().rename(columns={"label": "condition"})
    order: list[str] = ["clean"]
    order += [f"labels {100 * f:g}%" for f in sorted(rows.loc[rows["condition"] == "label_fraction", "label_fraction"].unique(), reverse=True)]
    order += [f"corruption s{int(s)}" for s in sorted(rows.loc[rows["condition"] == "corruption", "severity"].unique())]
    order += ["shift (site B)"] if (rows["condition"] == "shift").any() else []
    table["condition"] = pd.Categorical(table["condition"], categories=order, ordered=True)
    table = table.sort_values(["encoder", "condition"], kind="mergesort").reset_index(drop=True)
    table["condition"] = table["condition"].astype(str)
    return table


def rank_probabilities(crs_draws: np.ndarray, encoders: Sequence[str], order: Sequence[str] | None = None) -> pd.DataFrame:
    """P(rank = r) per encoder from bootstrap CRS draws.

    Parameters
    ----------
    crs_draws : numpy.ndarray
        Shape (n_draws, n_encoders): the CRS of each encoder in each draw.
    encoders : sequence of str
        Column names of ``crs_draws``.
    order : sequence of str, optional
        Row order (default: by mean rank, best first).

    Returns
    -------
    pandas.DataFrame
        Index encoder, columns 1..n; rank 1 = highest CRS, ties share the best
        rank (so a row can sum to 1 while a column sums to more than 1).
    """
    draws = np.asarray(crs_draws, dtype=float)
    names = [str(e) for e in encoders]
    if draws.ndim != 2 or draws.shape[1] != len(names):
        raise ValueError(f"crs_draws must have shape (n_draws, {len(names)}), got {draws.shape}")
    ranks = stats.rankdata(-draws, method="min", axis=1).astype(int)
    n = len(names)
    counts = np.stack([(ranks == r).mean(axis=0) for r in range(1, n + 1)], axis=1)
    table = pd.DataFrame(counts, index=pd.Index(names, name="encoder"), columns=range(1, n + 1))
    if order is None:
        mean_rank = ranks.mean(axis=0)
        order = [names[i] for i in np.lexsort((np.array(names), mean_rank))]
    return table.loc[list(order)]
