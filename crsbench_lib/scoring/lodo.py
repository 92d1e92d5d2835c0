"""Leave-one-dataset-out: is the CRS a predictor of AUROC on a new task? (crs-method 6.8)

For every dataset ``d`` the encoder profiles and the CRS are recomputed from the
other datasets only, and used to *predict* the ranking of the encoders by their
clean AUROC on ``d`` (mean over seeds). The held-out dataset leaves the
reference panel too (crs-method 9.7): the standard's panel members are refrozen
from their profiles without ``d`` (:func:`lodo_standard`, through
:func:`~crsbench_lib.scoring.freeze.freeze_profiles`), while anchors and
weights stay the standard's; otherwise ``d`` would reach the CRS through the
dominance term. The baseline predictor is the AUROC
without ``d`` (the discrimination axis of the reduced profile). Each predictor's
quality is Kendall's tau-b between its scores and the AUROC on ``d`` (Kendall
1945; scipy.stats.kendalltau). The other axes of the reduced profile are
reported as predictors too, each oriented so that larger is better (ECE and
robustness loss are negated), so that one can see which part of the profile
carries over.

:func:`site_b_prediction` asks the same question of the institutional shift (the
study's CheXpert -> MIMIC-CXR; here site A -> site B): does the CRS, or clean
AUROC, rank encoders by their AUROC on the second site? The full CRS contains
the site-B AUROC through the shift loss of the robustness axis, so it would
partly predict itself; the predictor is therefore a CRS computed without the
shift term (robustness from corruptions only, panel refrozen the same way).
:func:`shift_prediction` scores given (full) CRS values and is kept to show
the difference.

The study's conclusion, which this analysis lets a reader check on any cohort:
neither leave-one-dataset-out nor the external site supports treating the CRS
as a universal predictor of new-task AUROC.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
import pandas as pd
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import validate_results
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.scoring.freeze import freeze_profiles
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard, check_ece_bins

BASELINE = "auroc"

Scorer = Callable[[pd.DataFrame], pd.Series]


def _tau(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    tau, p_value = stats.kendalltau(x, y, variant="b")
    return float(tau), float(p_value)


def lodo_standard(standard: ReferenceStandard, profiles: pd.DataFrame, without: str) -> ReferenceStandard:
    """The standard with its panel refrozen from reduced profiles.

    Panel members that are encoders of ``profiles`` get their profile
    recomputed (here: without the held-out dataset, or without the shift term)
    and normalised against the standard's own anchors
    (:func:`~crsbench_lib.scoring.freeze.freeze_profiles`). Members that are
    not encoders of the table cannot be recomputed, and their stored profiles
    may contain what was left out, so they leave the panel. Anchors, weights,
    label fractions and ECE binning stay the standard's.

    Parameters
    ----------
    standard : ReferenceStandard
        The standard of the analysis.
    profiles : pandas.DataFrame
        Reduced raw profiles indexed by encoder (columns ``D, C, L, R``).
    without : str
        What was left out (a dataset name, ``"shift"``), for the version id.

    Returns
    -------
    ReferenceStandard
        Version ``<version>-without-<without>``, the standard's creation stamp
        (so the result is deterministic).

    Raises
    ------
    SchemaError
        If no panel member is an encoder of the table.
    """
    members = [name for name in standard.panel_names if name in profiles.index]
    if not members:
        raise SchemaError(
            f"no member of the panel of standard '{standard.version}' is an encoder of the results table, so the "
            f"panel cannot be refrozen without {without!r}; freeze a standard from this table (crsbench freeze)"
        )
    return freeze_profiles(
        profiles,
        f"{standard.version}-without-{without}",
        panel=members,
        base=standard,
        arm=standard.arm,
        created=standard.created,
        description=f"{standard.version} with its panel refrozen without {without}.",
        source_results_hash=standard.source_results_hash,
    )


def _crs(profiles: pd.DataFrame, standard: ReferenceStandard) -> pd.Series:
    scored = score_profiles(profiles, standard)
    return pd.Series(scored["crs"].to_numpy(dtype=float), index=scored["encoder"].astype(str).to_numpy())


def _check_raw(raw: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in ("encoder", "dataset", "seed", *AXES) if c not in raw.columns]
    if missing:
        raise SchemaError(f"raw axes table: missing column(s) {', '.join(repr(m) for m in missing)}")
    return raw.astype({"encoder": object, "dataset": object})


def leave_one_dataset_out(
    raw: pd.DataFrame,
    standard: ReferenceStandard | None = None,
    scorer: Scorer | None = None,
    panel_raw: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Kendall tau of each reduced-profile predictor against the held-out AUROC.

    Parameters
    ----------
    raw : pandas.DataFrame
        Raw axes per (encoder, dataset, seed): the output of
        ``axes.raw_axes(results, arm=...)`` (columns ``encoder, dataset, seed, D,
        C, L, R``).
    standard : ReferenceStandard, optional
        The reference standard: its panel is refrozen without each held-out
        dataset (:func:`lodo_standard`), its anchors and weights kept.
    scorer : callable, optional
        ``profiles -> Series of CRS indexed by encoder``; overrides ``standard``
        (used to study other aggregations; the scorer alone decides what
        reference it scores against).
    panel_raw : pandas.DataFrame, optional
        Raw axes of the standard's own arm, from which the panel is refrozen;
        default ``raw`` (right when ``raw`` comes from that arm; give the
        frozen arm's raw axes when predicting with the adapted arm).

    Returns
    -------
    pandas.DataFrame
        One row per (held-out dataset, predictor) with columns ``held_out,
        predictor, kendall_tau, p_value, n_encoders, panel_size``
        (``panel_size``: members of the refrozen panel, 0 under a custom
        scorer). Predictors: ``crs``,
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
    panel_table = table if panel_raw is None else _check_raw(panel_raw)
    if scorer is None and standard is None:
        raise ValueError("give a reference standard or a scorer to score the reduced profiles")
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
        if scorer is not None:
            crs_scores, panel_size = scorer(reduced.loc[shared]), 0
        else:
            panel_profiles = reduced if panel_raw is None else encoder_profiles(
                panel_table[panel_table["dataset"] != held_out]
            )
            refrozen = lodo_standard(cast(ReferenceStandard, standard), panel_profiles, held_out)
            crs_scores, panel_size = _crs(reduced.loc[shared], refrozen), len(refrozen.panel_names)
        predictors = {"crs": crs_scores.reindex(shared), BASELINE: reduced.loc[shared, "D"]}
        for axis in AXES[1:]:
            # Oriented so that a larger predictor is better on every axis.
            predictors[axis] = (1 if HIGHER_IS_BETTER[axis] else -1) * reduced.loc[shared, axis]
        y = target.reindex(shared).to_numpy(dtype=float)
        for name, values in predictors.items():
            tau, p_value = _tau(np.asarray(values, dtype=float), y)
            rows.append(
                {"held_out": held_out, "predictor": name, "kendall_tau": tau, "p_value": p_value,
                 "n_encoders": len(shared), "panel_size": panel_size}
            )
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
    """How well given CRS values and clean AUROC rank encoders by AUROC on the second site.

    A CRS whose robustness axis includes the shift loss contains the site-B
    AUROC it is asked to predict; :func:`site_b_prediction` is the test without
    that circularity. This function scores whatever CRS it is given.

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
    crs_scores = pd.Series(scores["crs"].to_numpy(dtype=float), index=scores["encoder"].astype(str).to_numpy())
    return _site_b_taus(validate_results(results), crs_scores, "crs", arm)


def shift_free_scores(results: pd.DataFrame, standard: ReferenceStandard, arm: str = "frozen") -> pd.DataFrame:
    """The CRS of every encoder computed without the shift term.

    The results lose their ``shift`` rows, so the robustness axis is the mean of
    the average and the worst corruption loss only (crs-method 9.7); the
    standard's panel is refrozen the same way from the standard's own arm
    (:func:`lodo_standard`), anchors and weights kept.

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with corruption rows.
    standard : ReferenceStandard
        The standard of the analysis.
    arm : {"frozen", "lora"}
        The arm to score.

    Returns
    -------
    pandas.DataFrame
        A score table (:func:`~crsbench_lib.scoring.crs.score_profiles`) of the
        shift-free profiles against the refrozen standard.

    Raises
    ------
    SchemaError
        If an encoder has no corruption rows on any dataset (no shift-free
        robustness axis), or no panel member is an encoder of the table.
    """
    table = validate_results(results)
    check_ece_bins(table, standard, arm)
    site_a = table[table["condition"] != "shift"]

    def profiles_of(which: str) -> pd.DataFrame:
        return encoder_profiles(raw_axes(site_a, arm=which, label_fractions=standard.label_fractions))

    profiles = profiles_of(arm)
    # The panel holds profiles of the standard's own arm, whichever arm is scored.
    panel_profiles = profiles if standard.arm == arm else profiles_of(standard.arm)
    return score_profiles(profiles, lodo_standard(standard, panel_profiles, "shift"))


def site_b_prediction(results: pd.DataFrame, standard: ReferenceStandard, arm: str = "frozen") -> pd.DataFrame:
    """How well a shift-free CRS and clean AUROC rank encoders by AUROC on the second site.

    The predictor is :func:`shift_free_scores`: the CRS computed without the
    results' ``shift`` rows, against the standard with its panel refrozen the
    same way (crs-method 9.7). The target is the mean site-B AUROC over seeds;
    each predictor's quality is Kendall's tau-b with it (scipy.stats.kendalltau).

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with ``shift`` rows (site B) and corruption rows (the
        shift-free robustness axis needs them).
    standard : ReferenceStandard
        The standard of the analysis.
    arm : {"frozen", "lora"}
        Which arm to read.

    Returns
    -------
    pandas.DataFrame
        One row per (shift dataset, predictor) with ``dataset, predictor,
        kendall_tau, p_value, n_encoders``; predictors ``crs_without_shift``
        and ``clean_auroc`` (the same dataset's site-A AUROC).

    Raises
    ------
    SchemaError
        If the table has no shift rows for the arm, or as :func:`shift_free_scores`.
    """
    table = validate_results(results)
    if not ((table["condition"] == "shift") & (table["arm"] == arm)).any():
        raise SchemaError(f"results table: no shift rows for arm {arm!r}")
    scores = shift_free_scores(table, standard, arm=arm)
    crs_scores = pd.Series(scores["crs"].to_numpy(dtype=float), index=scores["encoder"].astype(str).to_numpy())
    return _site_b_taus(table, crs_scores, "crs_without_shift", arm)


def _site_b_taus(table: pd.DataFrame, crs_scores: pd.Series, name: str, arm: str) -> pd.DataFrame:
    table = table[(table["arm"] == arm) & (table["calibration"] == "none")].astype({"encoder": object, "dataset": object})
    shift = table[table["condition"] == "shift"]
    if shift.empty:
        raise SchemaError(f"results table: no shift rows for arm {arm!r}")
    clean = clean_rows(table)
    rows: list[dict[str, object]] = []
    for dataset in sorted(shift["dataset"].unique()):
        target = shift[shift["dataset"] == dataset].groupby("encoder")["auroc"].mean()
        baseline = clean[clean["dataset"] == dataset].groupby("encoder")["auroc"].mean()
        shared = sorted(set(target.index) & set(baseline.index) & set(crs_scores.index))
        y = target.reindex(shared).to_numpy(dtype=float)
        for predictor, values in ((name, crs_scores.reindex(shared)), ("clean_auroc", baseline.reindex(shared))):
            tau, p_value = _tau(values.to_numpy(dtype=float), y)
            rows.append(
                {"dataset": dataset, "predictor": predictor, "kendall_tau": tau, "p_value": p_value,
                 "n_encoders": len(shared)}
            )
    return pd.DataFrame(rows)
