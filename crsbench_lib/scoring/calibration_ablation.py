"""Post-hoc calibration ablation (method section 6, item 6).

Each post-hoc calibrator (temperature scaling, vector/Platt scaling, isotonic
regression) is fitted on the calibration split (method section 9, amendment
2) and applied to the test split by the evaluation engine, which writes one row
per calibrator beside the uncalibrated (``calibration == "none"``) row of the
same clean evaluation. This module pairs those rows and summarises, per group
(dataset by default):

* ``ece_before`` / ``ece_after``: mean ECE without and with the calibrator;
* ``relative_ece_reduction = (ece_before - ece_after) / ece_before``, the share
  of the mean ECE removed (the study reports 54-77 % across six primary tests);
* ``auroc_before`` / ``auroc_after`` and ``auroc_change = mean(after - before)``
  (the study: "essentially unchanged"; a monotone calibrator cannot change a
  binary AUROC, a non-strictly-monotone one such as isotonic regression can, by
  creating ties).

Calibration is an ablation only: it never enters the CRS, whose calibration axis
is the ECE of the uncalibrated probe.

The verdict (method section 9, amendments 5 and 27)
---------------------------------------------------
A finite test set gives even a perfectly calibrated predictor a positive
plug-in ECE: its *floor* ``ECE_floor = E[ECE(p, y*)]`` with ``y* ~ p`` (labels
drawn from the model's own probabilities, same confidences and n; the results
table's ``ece_floor`` column). The floor is the plug-in's bias for a perfectly
calibrated predictor, so for a miscalibrated one it bounds the bias from above;
subtracting it (the *excess*, ``ece_excess``, amendment 5) understates
miscalibration. Since amendment 27 the verdict reads the change of the
**debiased ECE** (``ece_debiased``, Kumar, Liang and Ma 2019, the measure of
the axis C), per paired evaluation (encoder, dataset, seed), with a
percentile interval from a crossed (pigeonhole) bootstrap that resamples
encoders and seeds with replacement, independently, keeping each evaluation's
before/after pair together (Owen 2007, Ann. Appl. Stat. 1(2)); the units share
encoders and seeds, so resampling them as independent rows would understate the
spread. The datasets are held fixed: the interval speaks of these datasets
(:func:`calibrator_effect`, column ``population``). The verdict is
:class:`CalibrationVerdict`: ``helped`` when the interval of the change lies
below zero, ``hurt`` when above, and ``no_difference`` when it contains zero.
The floor is shown beside it as the bound it is.

References
----------
Guo, Pleiss, Sun, Weinberger (2017), "On calibration of modern neural networks",
ICML (temperature and vector scaling). Zadrozny and Elkan (2002), "Transforming
classifier scores into accurate multiclass probability estimates", KDD (isotonic).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import ARMS, CALIBRATIONS
from crsbench_lib.results.validated import as_validated
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.resampling import (
    Direction,
    check_interval,
    crossed_weights,
    factor_codes,
    interval_direction,
    percentile_interval,
)

PAIR_KEYS: tuple[str, ...] = ("encoder", "dataset", "seed", "arm")
UNCALIBRATED = "none"
#: The factors shared between paired evaluations, resampled by the crossed bootstrap.
RESAMPLED_FACTORS: tuple[str, ...] = ("encoder", "dataset", "seed")
#: Columns of the ECE floor and the excess over it (written by the evaluation, method section 9, amendment 5).
FLOOR_COLUMNS: tuple[str, ...] = ("ece_floor", "ece_excess")
#: The debiased ECE (method section 9, amendment 21): the measure of the axis C.
DEBIASED = "ece_debiased"
#: What :func:`calibrator_effect` can measure: the name of the measure -> its paired columns (before, after).
MEASURES: dict[str, tuple[str, str]] = {
    "ece_debiased": ("ece_debiased_before", "ece_debiased_after"),
    "ece": ("ece_before", "ece_after"),
    "ece_excess": ("excess_before", "excess_after"),
}
#: The measure the page's verdict reads: the calibration axis's own ECE (issue 46, item 4; amendment 27).
DEFAULT_MEASURE = "ece_debiased"


class CalibrationVerdict(StrEnum):
    """What a post-hoc calibrator did to the calibration error (the interval of its change)."""

    HELPED = "helped"
    HURT = "hurt"
    NO_DIFFERENCE = "no_difference"
    UNDEFINED = "undefined"


_VERDICT: dict[Direction, CalibrationVerdict] = {
    Direction.BELOW_ZERO: CalibrationVerdict.HELPED,
    Direction.ABOVE_ZERO: CalibrationVerdict.HURT,
    Direction.SPANS_ZERO: CalibrationVerdict.NO_DIFFERENCE,
    Direction.UNDEFINED: CalibrationVerdict.UNDEFINED,
}


def _clean_rows(results: pd.DataFrame, arm: str) -> pd.DataFrame:
    if arm not in ARMS:
        raise SchemaError(f"unknown arm {arm!r} (expected one of {', '.join(ARMS)})")
    table = as_validated(results).frame
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
        auroc_before, auroc_after``, sorted by the keys; where the table has the
        ECE floor (columns ``ece_floor`` and ``ece_excess``), also
        ``ece_floor_before, ece_floor_after, excess_before, excess_after``
        (a calibrator changes the confidences, so its row has its own floor);
        where it has the debiased ECE (the axis C), also
        ``ece_debiased_before, ece_debiased_after``.

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
    # Older tables have no floor; validation fills the optional columns with NaN, so
    # the floor is used only where every clean row carries it.
    has_floor = set(FLOOR_COLUMNS) <= set(clean.columns) and bool(clean[list(FLOOR_COLUMNS)].notna().all().all())
    floors = list(FLOOR_COLUMNS) if has_floor else []
    if DEBIASED in clean.columns and bool(clean[DEBIASED].notna().all()):
        floors.append(DEBIASED)
    merged = after[keys + ["domain", "calibration", "ece", "auroc", *floors]].merge(
        before[keys + ["ece", "auroc", *floors]], on=keys, how="left", suffixes=("_after", "_before")
    )
    orphan = merged["ece_before"].isna()
    if orphan.any():
        first = merged.loc[orphan].iloc[0]
        raise SchemaError(
            f"results table: calibrated row without an uncalibrated twin "
            f"(encoder {first['encoder']!r}, dataset {first['dataset']!r}, seed {int(first['seed'])}, "
            f"calibration {first['calibration']!r})"
        )
    columns = keys[:2] + ["domain"] + keys[2:] + ["calibration", "ece_before", "ece_after", "auroc_before", "auroc_after"]
    if has_floor:
        merged = merged.rename(
            columns={"ece_excess_before": "excess_before", "ece_excess_after": "excess_after"}
        )
        columns += ["ece_floor_before", "ece_floor_after", "excess_before", "excess_after"]
    if DEBIASED in floors:
        columns += [f"{DEBIASED}_before", f"{DEBIASED}_after"]
    out = merged[columns]
    out = out.astype({"encoder": object, "dataset": object, "domain": object, "arm": object, "calibration": object})
    return out.sort_values(keys + ["calibration"], kind="mergesort").reset_index(drop=True)


def _grouping(by: Sequence[str], paired: pd.DataFrame) -> list[str]:
    """The grouping columns of a summary of ``paired``: known columns, ``calibration`` among them."""
    groups = list(by)
    if "calibration" not in groups:
        raise ValueError("by must include 'calibration': each calibrator is summarised on its own")
    unknown = [g for g in groups if g not in paired.columns]
    if unknown:
        raise ValueError(f"unknown grouping column(s) {unknown}; expected columns of the paired table")
    return groups


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

    Examples
    --------
    >>> paired = pd.DataFrame({
    ...     "dataset": ["d"] * 4, "calibration": ["temperature"] * 4,
    ...     "ece_before": [0.10, 0.12, 0.08, 0.09], "ece_after": [0.05, 0.06, 0.05, 0.05],
    ...     "auroc_before": [0.8] * 4, "auroc_after": [0.8] * 4})
    >>> row = calibration_summary(paired).iloc[0]
    >>> int(row["n"]), round(float(row["relative_ece_reduction"]), 4), float(row["auroc_change"])
    (4, 0.4615, 0.0)
    """
    groups = _grouping(by, paired)
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


def population_of(resampled: Sequence[str]) -> str:
    """Which datasets an interval of :func:`calibrator_effect` speaks of, from the factors it resampled.

    Examples
    --------
    >>> population_of(["encoder", "seed"]), population_of(["encoder", "dataset", "seed"])
    ('these datasets', 'new datasets like these')
    """
    return "new datasets like these" if "dataset" in resampled else "these datasets"


def calibrator_effect(
    paired: pd.DataFrame,
    measure: str = DEFAULT_MEASURE,
    by: Sequence[str] = ("calibration",),
    n_draws: int = 1000,
    interval: float = 0.95,
    random_state: int = 0,
    factors: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Change of a calibration error per calibrator, with crossed-bootstrap intervals and a verdict.

    Per group (each calibrator by default) over its paired evaluations ``i``
    (encoder, dataset, seed), with ``delta_i = after_i - before_i`` of the
    chosen ``measure``:

    * ``change = sum_i w_i delta_i / sum_i w_i``;
    * ``relative_change = sum_i w_i delta_i / sum_i w_i before_i`` (NaN when the
      denominator is not positive);
    * ``auroc_change = sum_i w_i (auroc_after_i - auroc_before_i) / sum_i w_i``;

    with ``w_i = 1`` for the estimate and the crossed-bootstrap weights of
    :func:`~.resampling.crossed_weights` (Owen 2007; the same draws for every
    group) for the percentile intervals. The verdict reads the interval of
    ``change`` (:class:`CalibrationVerdict`).

    Which measure (method section 9, amendment 27): the default is the
    debiased ECE (Kumar, Liang and Ma 2019), the measure of the axis C, so that
    the ablation and the axis speak of one quantity. ``"ece_excess"`` (the
    plug-in ECE minus its floor, amendment 5) over-corrects: the floor is the
    plug-in's bias for a *perfectly calibrated* predictor with these
    confidences, an upper bound of its bias for a miscalibrated one, so the
    excess understates miscalibration; the page shows the floor as that bound
    (``floor_before``, ``floor_after``), not subtracted.

    Which datasets the interval speaks of: by default the encoders and seeds
    are resampled and the datasets held fixed, so the interval is about *these
    datasets* (the page's question: does calibrating help on these tasks?).
    With ``factors`` including ``"dataset"`` it speaks of new datasets like
    these, but a crossed bootstrap over three datasets has at most ten distinct
    resamples of that factor and its percentiles are coarse. The column
    ``population`` says which. Either way the test and calibration images,
    shared by every encoder and seed, are not resampled: the interval is
    conditional on these image sets (the chapters' two-level bootstrap
    resamples test images for the axes; this ablation's question is the
    calibrators' effect across encoders and seeds).

    Parameters
    ----------
    paired : pandas.DataFrame
        Output of :func:`paired_calibration`.
    measure : {"ece_debiased", "ece", "ece_excess"}
        The calibration error compared (:data:`MEASURES`).
    by : sequence of str
        Grouping columns; must include ``"calibration"``. A grouping column is
        never resampled.
    n_draws : int
        Bootstrap draws.
    interval : float
        Coverage of the percentile intervals.
    random_state : int
        Seed of the bootstrap.
    factors : sequence of str, optional
        Factors to resample; default ``encoder`` and ``seed`` (those not in
        ``by``).

    Returns
    -------
    pandas.DataFrame
        One row per group: ``*by, measure, n, before, after, change,
        change_low, change_high, relative_change, relative_change_low,
        relative_change_high, verdict, auroc_change, auroc_change_low,
        auroc_change_high, floor_before, floor_after, population, ece_before,
        ece_after, relative_ece_reduction, n_draws`` (``floor_*``: the mean ECE
        floor, NaN without one; ``relative_ece_reduction``: the plug-in ECE's
        figure of :func:`calibration_summary`, kept for comparison with the
        study; ``n_draws``: draws in which the change was defined).

    Raises
    ------
    SchemaError
        If the paired table lacks the measure's columns or holds NaN in them
        (the results predate it).
    ValueError
        If the measure is unknown, ``by`` omits ``"calibration"`` or names an
        unknown column, or a parameter is invalid.

    Examples
    --------
    >>> paired = pd.DataFrame({
    ...     "encoder": ["a", "a", "b", "b"], "dataset": ["d"] * 4, "seed": [0, 1, 0, 1],
    ...     "calibration": ["temperature"] * 4,
    ...     "ece_before": [0.10, 0.12, 0.08, 0.09], "ece_after": [0.05, 0.06, 0.05, 0.05],
    ...     "ece_debiased_before": [0.08, 0.10, 0.06, 0.07], "ece_debiased_after": [0.03, 0.04, 0.03, 0.03],
    ...     "auroc_before": [0.8] * 4, "auroc_after": [0.8] * 4})
    >>> row = calibrator_effect(paired, n_draws=200).iloc[0]
    >>> round(float(row["change"]), 4), row["verdict"], row["population"]
    (-0.045, 'helped', 'these datasets')
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r} (expected one of {', '.join(MEASURES)})")
    groups = _grouping(by, paired)
    before_column, after_column = MEASURES[measure]
    missing = [c for c in (before_column, after_column) if c not in paired.columns]
    if missing or paired[[before_column, after_column]].isna().to_numpy().any():
        raise SchemaError(
            f"results table: no {measure!r} for the calibration ablation (paired columns "
            f"{before_column!r} and {after_column!r} missing or NaN); rerun the evaluation with a version that "
            "records it"
        )
    coverage = check_interval(interval)
    resampled = [f for f in ("encoder", "seed") if f not in groups] if factors is None else list(factors)
    weights = crossed_weights(
        factor_codes(paired, resampled), n_draws=n_draws, random_state=random_state, factors=resampled
    )
    before = paired[before_column].to_numpy(dtype=float)
    after = paired[after_column].to_numpy(dtype=float)
    delta = after - before
    auroc_delta = (paired["auroc_after"] - paired["auroc_before"]).to_numpy(dtype=float)
    has_floor = {"ece_floor_before", "ece_floor_after"} <= set(paired.columns)
    rows: list[dict[str, object]] = []
    for key, members in paired.groupby(groups, sort=True, observed=True).indices.items():
        w = weights[:, members]
        total = w.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            change = np.where(total > 0, w @ delta[members] / total, np.nan)
            auroc = np.where(total > 0, w @ auroc_delta[members] / total, np.nan)
            denominator = w @ before[members]
            relative = np.where(denominator > 0, w @ delta[members] / denominator, np.nan)
        mean_before = float(before[members].mean())
        point_change = float(delta[members].mean())
        change_low, change_high, n_valid = percentile_interval(change, coverage)
        relative_low, relative_high, _ = percentile_interval(relative, coverage)
        auroc_low, auroc_high, _ = percentile_interval(auroc, coverage)
        labels = key if isinstance(key, tuple) else (key,)
        rows.append(
            {
                **dict(zip(groups, labels, strict=True)),
                "measure": measure,
                "n": int(len(members)),
                "before": mean_before,
                "after": float(after[members].mean()),
                "change": point_change,
                "change_low": change_low,
                "change_high": change_high,
                "relative_change": point_change / mean_before if mean_before > 0 else float("nan"),
                "relative_change_low": relative_low,
                "relative_change_high": relative_high,
                "verdict": str(_VERDICT[interval_direction(change_low, change_high)]),
                "auroc_change": float(auroc_delta[members].mean()),
                "auroc_change_low": auroc_low,
                "auroc_change_high": auroc_high,
                "floor_before": float(paired["ece_floor_before"].to_numpy(dtype=float)[members].mean())
                if has_floor else float("nan"),
                "floor_after": float(paired["ece_floor_after"].to_numpy(dtype=float)[members].mean())
                if has_floor else float("nan"),
                "population": population_of(resampled),
                "n_draws": n_valid,
            }
        )
    raw = calibration_summary(paired, by=groups)[groups + ["ece_before", "ece_after", "relative_ece_reduction"]]
    table = pd.DataFrame(rows).merge(raw, on=groups, how="left", validate="one_to_one")
    return table[[c for c in table.columns if c != "n_draws"] + ["n_draws"]]


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
