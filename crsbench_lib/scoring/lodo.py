"""Leave-one-dataset-out: is the CRS a predictor of AUROC on a new task? (crs-method 6.8)

For every dataset ``d`` the encoder profiles and the CRS are recomputed from the
other datasets only, and used to *predict* the ranking of the encoders by their
clean AUROC on ``d`` (mean over seeds). The baseline predictor is the AUROC
without ``d`` (the discrimination axis of the reduced profile). Each predictor's
quality is Kendall's tau-b between its scores and the AUROC on ``d`` (Kendall
1945; scipy.stats.kendalltau). The other axes of the reduced profile are
reported as predictors too, each oriented so that larger is better (ECE and
robustness loss are negated), so that one can see which part of the profile
carries over.

:func:`shift_prediction` asks the same question of the institutional shift (the
study's CheXpert -> MIMIC-CXR; here site A -> site B): does the CRS, or clean
AUROC, rank encoders by their AUROC on the second site?

The study's conclusion, which this analysis lets a reader check on any cohort:
neither leave-one-dataset-out nor the external site supports treating the CRS
as a universal predictor of new-task AUROC.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import validate_results
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.axes import encoder_profiles
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard

BASELINE = "auroc"

Scorer = Callable[[pd.DataFrame], pd.Series]


def _tau(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    tau, p_value = stats.kendalltau(x, y, variant="b")
    return float(tau), float(p_value)


def _standard_scorer(standard: ReferenceStandard) -> Scorer:
    def score(profiles: pd.DataFrame) -> pd.Series:
        scored = score_profiles(profiles, standard)
        return pd.Series(scored["crs"].to_numpy(dtype=float), index=scored["encoder"].astype(str).to_numpy())

    return score


def _check_raw(raw: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in ("encoder", "dataset", "seed", *AXES) if c not in raw.columns]
    if missing:
        raise SchemaError(f"raw axes table: missing column(s) {', '.join(repr(m) for m in missing)}")
    return raw.astype({"encoder": object, "dataset": object})


def leave_one_dataset_out(
    raw: pd.DataFrame,
    standard: ReferenceStandard | None = None,
    scorer: Scorer | None = None,
) -> pd.DataFrame:
    """Kendall tau of each reduced-profile predictor against the held-out AUROC.

    Parameters
    ----------
    raw : pandas.DataFrame
        Raw axes per (encoder, dataset, seed): the output of
        ``axes.raw_axes(results, arm=...)`` (columns ``encoder, dataset, seed, D,
        C, L, R``).
    standard : ReferenceStandard, optional
        The reference standard used to score the reduced profiles.
    scorer : callable, optional
        ``profiles -> Series of CRS indexed by encoder``; overrides ``standard``
        (used to study other aggregations).

    Returns
    -------
    pandas.DataFrame
        One row per (held-out dataset, predictor) with columns ``held_out,
        predictor, kendall_tau, p_value, n_encoders``. Predictors: ``crs``,
        ``auroc`` (the baseline: AUROC without ``d``) and the oriented axes ``C``,
        ``L``, ``R`` of the reduced profile (``D`` equals the baseline).
        ``kendall_tau`` is NaN where a predictor or the target is constant.

    Raises
    ------
    SchemaError
        If columns are missing or fewer than two datasets or two encoders exist.
    ValueError
        If neither ``standard`` nor ``scorer`` is given.
    """
    table = _check_raw(raw)
    if scorer is None:
        if standard is None:
            raise ValueError("give a reference standard or a scorer to score the reduced profiles")
        scorer = _standard_scorer(standard)
    datasets = sorted(table["dataset"].unique())
    encoders = sorted(table["encoder"].unique())
    if len(datasets) < 2:
        raise SchemaError(f"leave-one-dataset-out needs at least 2 datasets, found {len(datasets)}")
    if len(encoders) < 2:
        raise SchemaError(f"leave-one-dataset-out needs at least 2 encoders, found {len(encoders)}")
    rows: list[dict[str, object]] = []
    for held_out in datasets:
        target = table[table["dataset"] == held_out].groupby("encoder")["D"].mean()
        reduced = encoder_profiles(table[table["dataset"] != held_out])
        shared = sorted(set(target.index) & set(reduced.index))
        crs_scores = scorer(reduced.loc[shared])
        predictors = {"crs": crs_scores.reindex(shared), BASELINE: reduced.loc[shared, "D"]}
        for axis in AXES[1:]:
            # Oriented so that a larger predictor is better on every axis.
            predictors[axis] = (1 if HIGHER_IS_BETTER[axis] else -1) * reduced.loc[shared, axis]
        y = target.reindex(shared).to_numpy(dtype=float)
        for name, values in predictors.items():
            tau, p_value = _tau(np.asarray(values, dtype=float), y)
            rows.append({"held_out": held_out, "predictor": name, "kendall_tau": tau, "p_value": p_value, "n_encoders": len(shared)})
    return pd.DataFrame(rows)


def lodo_summary(lodo: pd.DataFrame) -> pd.DataFrame:
    """Held-out datasets as rows, predictors as columns, Kendall tau as values, plus a mean row.

    Parameters
    ----------
    lodo : pandas.DataFrame
        Output of :func:`leave_one_dataset_out`.

    Returns
    -------
    pandas.DataFrame
        Index ``held_out`` (with a final ``"mean"`` row), one column per predictor
        in the order ``crs, auroc, C, L, R``.
    """
    wide = lodo.pivot(index="held_out", columns="predictor", values="kendall_tau")
    order = [p for p in ("crs", BASELINE, *AXES[1:]) if p in wide.columns]
    wide = wide[order]
    wide.loc["mean"] = wide.mean(axis=0, skipna=True)
    wide.columns.name = None
    return wide


def shift_prediction(results: pd.DataFrame, scores: pd.DataFrame, arm: str = "frozen") -> pd.DataFrame:
    """How well the CRS and clean AUROC rank encoders by AUROC on the second site.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with ``shift`` rows (site B).
    scores : pandas.DataFrame
        Score table with ``encoder`` and ``crs`` (e.g. ``crs.score_results``).
    arm : {"frozen", "lora"}
        Which arm's shift rows to read.

    Returns
    -------
    pandas.DataFrame
        One row per (shift dataset, predictor) with ``dataset, predictor,
        kendall_tau, p_value, n_encoders``; predictors ``crs`` and
        ``clean_auroc`` (the same dataset's site-A AUROC).

    Raises
    ------
    SchemaError
        If the table has no shift rows for the arm.
    """
    table = validate_results(results)
    table = table[(table["arm"] == arm) & (table["calibration"] == "none")].astype({"encoder": object, "dataset": object})
    shift = table[table["condition"] == "shift"]
    if shift.empty:
        raise SchemaError(f"results table: no shift rows for arm {arm!r}")
    clean = clean_rows(table)
    crs_scores = pd.Series(scores["crs"].to_numpy(dtype=float), index=scores["encoder"].astype(str).to_numpy())
    rows: list[dict[str, object]] = []
    for dataset in sorted(shift["dataset"].unique()):
        target = shift[shift["dataset"] == dataset].groupby("encoder")["auroc"].mean()
        baseline = clean[clean["dataset"] == dataset].groupby("encoder")["auroc"].mean()
        shared = sorted(set(target.index) & set(baseline.index) & set(crs_scores.index))
        y = target.reindex(shared).to_numpy(dtype=float)
        for name, values in (("crs", crs_scores.reindex(shared)), ("clean_auroc", baseline.reindex(shared))):
            tau, p_value = _tau(values.to_numpy(dtype=float), y)
            rows.append({"dataset": dataset, "predictor": name, "kendall_tau": tau, "p_value": p_value, "n_encoders": len(shared)})
    return pd.DataFrame(rows)
