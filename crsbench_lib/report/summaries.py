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

CELL: list[str] = ["encoder", "dataset", "seed"]


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
    clean = rows[(rows["condition"] == "clean") & (rows["label_fraction"] == 1.0)].set_index(CELL)["auroc"]
    fractions = rows[rows["condition"] == "label_fraction"]
    if fractions.empty:
        raise SchemaError(f"results table has no label-fraction rows for arm {arm!r}")
    frame = fractions[CELL + ["label_fraction", "auroc"]].copy()
    frame["retention"] = frame["auroc"].to_numpy() / clean.reindex(pd.MultiIndex.from_frame(frame[CELL])).to_numpy()
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


def dataset_overview(results: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset of a run: domain, task, test size, and what the grid covers.

    Returns
    -------
    pandas.DataFrame
        ``dataset, domain, task, test images, encoders, seeds, corruptions,
        site B`` (test images: the largest clean ``n_test``; corruptions: the
        number of corruption families; site B: whether a shift condition
        exists), sorted by dataset.
    """
    table = validate_results(results)
    rows = []
    for name, group in table.groupby("dataset", sort=True, observed=True):
        clean = group.loc[group["condition"] == "clean", "n_test"]
        rows.append({
            "dataset": str(name),
            "domain": str(group["domain"].iloc[0]),
            "task": str(group["task"].iloc[0]),
            "test images": int(clean.max()) if not clean.empty else 0,
            "encoders": int(group["encoder"].nunique()),
            "seeds": int(group["seed"].nunique()),
            "corruptions": int(group.loc[group["condition"] == "corruption", "corruption"].nunique()),
            "site B": bool((group["condition"] == "shift").any()),
        })
    return pd.DataFrame(rows)


def insertion_bars(fixed: pd.DataFrame, renormalised: pd.DataFrame) -> pd.DataFrame:
    """Absolute CRS change of each published entry under both schemes, aligned by entry.

    Parameters
    ----------
    fixed, renormalised : pandas.DataFrame
        ``entry_id, candidate, crs_displacement`` per published entry (the
        registry's ``displacement`` and ``renormalised`` tables).

    Returns
    -------
    pandas.DataFrame
        ``encoder, fixed, cohort`` in the order of ``fixed`` (the input of
        :func:`crsbench_lib.report.plots.insertion_displacement`).

    Raises
    ------
    SchemaError
        If an entry of ``fixed`` is missing from ``renormalised``.
    """
    cohort = renormalised.set_index("entry_id")["crs_displacement"]
    missing = sorted(set(fixed["entry_id"]) - set(cohort.index))
    if missing:
        raise SchemaError(f"insertion_bars: entry {missing[0]!r} has no renormalised displacement")
    return pd.DataFrame({
        "encoder": fixed["candidate"].astype(str).to_numpy(),
        "fixed": fixed["crs_displacement"].abs().to_numpy(dtype=float),
        "cohort": cohort.loc[fixed["entry_id"]].abs().to_numpy(dtype=float),
    })
