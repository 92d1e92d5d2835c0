"""Post-hoc calibration ablation (crs-method section 6, item 6).

Each post-hoc calibrator (temperature scaling, vector/Platt scaling, isotonic
regression) is fitted on the validation split and applied to the test split by
the evaluation engine, which writes one row per calibrator beside the
uncalibrated (``calibration == "none"``) row of the same clean evaluation. This
module pairs those rows and summarises, per group (dataset by default):

* ``ece_before`` / ``ece_after``: mean ECE without and with the calibrator;
* ``relative_ece_reduction = (ece_before - ece_after) / ece_before``, the share
  of the mean ECE removed (the study reports 54-77 % across six primary tests);
* ``auroc_before`` / ``auroc_after`` and ``auroc_change = mean(after - before)``
  (the study: "essentially unchanged"; a monotone calibrator cannot change a
  binary AUROC, a non-strictly-monotone one such as isotonic regression can, by
  creating ties).

Calibration is an ablation only: it never enters the CRS, whose calibration axis
is the ECE of the uncalibrated probe.

References
----------
Guo, Pleiss, Sun, Weinberger (2017), "On calibration of modern neural networks",
ICML (temperature and vector scaling). Zadrozny and Elkan (2002), "Transforming
classifier scores into accurate multiclass probability estimates", KDD (isotonic).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import ARMS, CALIBRATIONS, validate_results
from crsbench_lib.results.select import clean_rows

PAIR_KEYS: tuple[str, ...] = ("encoder", "dataset", "seed", "arm")
UNCALIBRATED = "none"


def _clean_rows(results: pd.DataFrame, arm: str) -> pd.DataFrame:
    if arm not in ARMS:
        raise SchemaError(f"unknown arm {arm!r} (expected one of {', '.join(ARMS)})")
    table = validate_results(results)
    clean = clean_rows(table, arm=arm)
    if clean.empty:
        raise SchemaError(f"results table: no clean rows for arm {arm!r}")
    return clean


def paired_calibration(results: pd.DataFrame, arm: str = "frozen") -> pd.DataFrame:
    """Pair every calibrated clean row with its uncalibrated twin.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table (validated here).
    arm : {"frozen", "lora"}
        Which arm to read.

    Returns
    -------
    pandas.DataFrame
        One row per (encoder, dataset, seed, calibrator) with columns
        ``encoder, dataset, domain, seed, arm, calibration, ece_before, ece_after,
        auroc_before, auroc_after``, sorted by the keys.

    Raises
    ------
    SchemaError
        If the arm is unknown, the table has no clean rows for it, no calibrated
        rows at all, or a calibrated row has no uncalibrated twin (the message
        names the first such encoder, dataset and seed).
    """
    clean = _clean_rows(results, arm)
    before = clean[clean["calibration"] == UNCALIBRATED]
    after = clean[clean["calibration"] != UNCALIBRATED]
    if after.empty:
        raise SchemaError(
            f"results table: no post-hoc calibration rows for arm {arm!r} "
            f"(expected calibration in {', '.join(c for c in CALIBRATIONS if c != UNCALIBRATED)})"
        )
    keys = list(PAIR_KEYS)
    merged = after[keys + ["domain", "calibration", "ece", "auroc"]].merge(
        before[keys + ["ece", "auroc"]], on=keys, how="left", suffixes=("_after", "_before")
    )
    orphan = merged["ece_before"].isna()
    if orphan.any():
        first = merged.loc[orphan].iloc[0]
        raise SchemaError(
            f"results table: calibrated row without an uncalibrated twin "
            f"(encoder {first['encoder']!r}, dataset {first['dataset']!r}, seed {int(first['seed'])}, "
            f"calibration {first['calibration']!r})"
        )
    out = merged[keys[:2] + ["domain"] + keys[2:] + ["calibration", "ece_before", "ece_after", "auroc_before", "auroc_after"]]
    out = out.astype({"encoder": object, "dataset": object, "domain": object, "arm": object, "calibration": object})
    return out.sort_values(keys + ["calibration"], kind="mergesort").reset_index(drop=True)


def calibration_summary(
    paired: pd.DataFrame,
    by: Sequence[str] = ("dataset", "calibration"),
) -> pd.DataFrame:
    """Mean ECE and AUROC before and after each calibrator, per group.

    Parameters
    ----------
    paired : pandas.DataFrame
        Output of :func:`paired_calibration`.
    by : sequence of str
        Grouping columns; must include ``"calibration"`` (each calibrator is its
        own intervention) and be columns of ``paired``.

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, n, ece_before, ece_after, relative_ece_reduction,
        auroc_before, auroc_after, auroc_change, auroc_change_max_abs``, where
        ``relative_ece_reduction = (ece_before - ece_after) / ece_before`` (ratio of
        the group means, so large-ECE cells weigh more) and ``auroc_change`` is
        the mean paired difference ``auroc_after - auroc_before``.

    Raises
    ------
    ValueError
        If ``by`` omits ``"calibration"`` or names an unknown column.
    """
    groups = list(by)
    if "calibration" not in groups:
        raise ValueError("by must include 'calibration': each calibrator is summarised on its own")
    unknown = [g for g in groups if g not in paired.columns]
    if unknown:
        raise ValueError(f"unknown grouping column(s) {unknown}; expected columns of the paired table")
    frame = paired.assign(auroc_change=paired["auroc_after"] - paired["auroc_before"])
    summary = frame.groupby(groups, sort=True, observed=True).agg(
        n=("ece_before", "size"),
        ece_before=("ece_before", "mean"),
        ece_after=("ece_after", "mean"),
        auroc_before=("auroc_before", "mean"),
        auroc_after=("auroc_after", "mean"),
        auroc_change=("auroc_change", "mean"),
        auroc_change_max_abs=("auroc_change", lambda s: float(np.max(np.abs(s)))),
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        reduction = (summary["ece_before"] - summary["ece_after"]) / summary["ece_before"]
    summary.insert(3, "relative_ece_reduction", reduction.where(summary["ece_before"] > 0, np.nan))
    return summary.reset_index()


def calibration_ablation(
    results: pd.DataFrame,
    arm: str = "frozen",
    by: Sequence[str] = ("dataset", "calibration"),
) -> pd.DataFrame:
    """Pair and summarise in one call: :func:`paired_calibration` then :func:`calibration_summary`."""
    return calibration_summary(paired_calibration(results, arm=arm), by=by)


def reduction_range(summary: pd.DataFrame, calibration: str | None = None) -> tuple[float, float]:
    """Smallest and largest relative ECE reduction over the rows of a summary.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`calibration_summary`.
    calibration : str, optional
        Restrict to one calibrator.

    Returns
    -------
    tuple of float
        ``(min, max)`` of ``relative_ece_reduction``, ignoring undefined values.
    """
    rows = summary if calibration is None else summary[summary["calibration"] == calibration]
    values = rows["relative_ece_reduction"].dropna()
    if values.empty:
        raise ValueError("no defined relative ECE reduction in the summary")
    return float(values.min()), float(values.max())
