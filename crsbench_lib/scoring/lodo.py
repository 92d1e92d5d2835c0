"""Leave-one-dataset-out: is the CRS a predictor of AUROC on a new task? (method section 6, item 8)

For every dataset ``d`` the encoder profiles and the CRS are recomputed from the
other datasets only, and used to *predict* the ranking of the encoders by their
clean AUROC on ``d`` (mean over seeds). The held-out dataset leaves the
reference panel too (method section 9, amendment 7): the standard's panel members are refrozen
from their profiles without ``d`` (:func:`lodo_standard`, through
:func:`~crsbench_lib.scoring.freeze.freeze_profiles`), while anchors and
weights stay the standard's; otherwise ``d`` would reach the CRS through the
dominance term. The baseline predictor is the AUROC
without ``d`` (the discrimination axis of the reduced profile). Each predictor's
quality is Kendall's tau-b between its scores and the AUROC on ``d`` (Kendall
1945; :func:`~crsbench_lib.scoring.rank_statistics.kendall_tau_b_test`). The other axes of the reduced profile are
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

Whether one predictor beats the other is a statement about the difference of
their taus, which needs an interval: :func:`tau_difference` resamples the
encoders with replacement (the same resample for both predictors and every
held-out dataset, a paired bootstrap; Efron and Tibshirani 1993) and reports
the percentile interval of ``tau(first) - tau(second)``.

A held-out tau is read beside the noise of the ranking it predicts:
:func:`held_out_bootstrap_taus` gives the tau between two independent draws
of each held-out AUROC ranking (the bootstrap-draw baseline of
:mod:`crsbench_lib.scoring.retest`); the seed-redraw baseline is
:func:`crsbench_lib.scoring.lodo_new_domain.new_domain_retest`. Profiles come
from :func:`~crsbench_lib.scoring.axes.standard_axes`, so a standard's axis
scales reach every LoDO score.

The study's conclusion, which this analysis lets a reader check on any cohort:
neither leave-one-dataset-out nor the external site supports treating the CRS
as a universal predictor of new-task AUROC.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import cast

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.predictions import DatasetPredictions, restrict_arrays
from crsbench_lib.results.schema import validate_results
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
from crsbench_lib.scoring.crs import score_profiles
from crsbench_lib.scoring.freeze import freeze_profiles
from crsbench_lib.scoring.resampling import (
    Direction,
    check_count,
    check_interval,
    interval_direction,
    multiplicities,
    percentile_interval,
)
from crsbench_lib.scoring.rank_statistics import kendall_tau_b_test, weighted_kendall_tau_b
from crsbench_lib.scoring.retest import bootstrap_retest_taus
from crsbench_lib.scoring.two_level_bootstrap import two_level_bootstrap
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard, check_ece_bins

BASELINE = "auroc"
#: The predictors of the held-out AUROC, in the order of :func:`lodo_summary`.
LODO_PREDICTORS: tuple[str, ...] = ("crs", BASELINE, *AXES[1:])
#: The predictors of the site-B AUROC: a CRS without the shift term, and the same dataset's clean AUROC.
SITE_B_PREDICTORS: tuple[str, ...] = ("crs_without_shift", "clean_auroc")

Scorer = Callable[[pd.DataFrame], pd.Series]


def _block_taus(frame: pd.DataFrame, block: str, predictors: tuple[str, ...]) -> list[dict[str, object]]:
    """Kendall tau-b (and its scipy p-value) of each predictor column with ``target``, per block."""
    rows: list[dict[str, object]] = []
    for key, rows_of_block in frame.groupby(block, sort=True):
        y = rows_of_block["target"].to_numpy(dtype=float)
        for name in predictors:
            tau, p_value = kendall_tau_b_test(rows_of_block[name].to_numpy(dtype=float), y)
            rows.append({block: key, "predictor": name, "kendall_tau": tau, "p_value": p_value,
                         "n_encoders": len(rows_of_block)})
    return rows


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


def lodo_predictions(
    raw: pd.DataFrame,
    standard: ReferenceStandard | None = None,
    scorer: Scorer | None = None,
    panel_raw: pd.DataFrame | None = None,
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """Each reduced-profile predictor and the held-out AUROC, per held-out dataset and encoder.

    Parameters
    ----------
    raw, standard, scorer, panel_raw, references
        See :func:`leave_one_dataset_out`.

    Returns
    -------
    pandas.DataFrame
        One row per (held-out dataset, encoder) with columns ``held_out,
        encoder, target`` (the clean AUROC on the held-out dataset, mean over
        seeds), one column per predictor (:data:`LODO_PREDICTORS`: ``crs``, the
        baseline ``auroc`` and the oriented axes ``C, L, R``) and
        ``panel_size``.

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
    excluded = {str(name) for name in references}
    encoders = sorted(e for e in table["encoder"].unique() if str(e) not in excluded)
    if len(datasets) < 2:
        raise SchemaError(f"leave-one-dataset-out needs at least 2 datasets, found {len(datasets)}")
    if len(encoders) < 2:
        raise SchemaError(f"leave-one-dataset-out needs at least 2 encoders, found {len(encoders)}")
    blocks: list[pd.DataFrame] = []
    for held_out in datasets:
        target = table[table["dataset"] == held_out].groupby("encoder")["D"].mean()
        reduced = encoder_profiles(table[table["dataset"] != held_out])
        # References stay in the panel (refrozen from every profile) but are never ranked.
        shared = sorted(set(target.index) & set(reduced.index) - excluded)
        if scorer is not None:
            crs_scores, panel_size = scorer(reduced.loc[shared]), 0
        else:
            panel_profiles = reduced if panel_raw is None else encoder_profiles(
                panel_table[panel_table["dataset"] != held_out]
            )
            refrozen = lodo_standard(cast(ReferenceStandard, standard), panel_profiles, held_out)
            crs_scores, panel_size = _crs(reduced.loc[shared], refrozen), len(refrozen.panel_names)
        block = pd.DataFrame({"held_out": held_out, "encoder": shared,
                              "target": target.reindex(shared).to_numpy(dtype=float)})
        block["crs"] = crs_scores.reindex(shared).to_numpy(dtype=float)
        block[BASELINE] = reduced.loc[shared, "D"].to_numpy(dtype=float)
        for axis in AXES[1:]:
            # Oriented so that a larger predictor is better on every axis.
            block[axis] = (1 if HIGHER_IS_BETTER[axis] else -1) * reduced.loc[shared, axis].to_numpy(dtype=float)
        block["panel_size"] = panel_size
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True)


def leave_one_dataset_out(
    raw: pd.DataFrame,
    standard: ReferenceStandard | None = None,
    scorer: Scorer | None = None,
    panel_raw: pd.DataFrame | None = None,
    references: Sequence[str] = (),
) -> pd.DataFrame:
    """Kendall tau of each reduced-profile predictor against the held-out AUROC.

    Parameters
    ----------
    raw : pandas.DataFrame
        Raw axes per (encoder, dataset, seed): the output of
        ``axes.standard_axes(results, standard, arm)`` (columns ``encoder, dataset, seed, D,
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
    references : sequence of str
        Reference encoders: their profiles refreeze the panel they belong to,
        but they are left out of every ranking (no tau counts them).

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
    predictions = lodo_predictions(raw, standard, scorer=scorer, panel_raw=panel_raw, references=references)
    taus = pd.DataFrame(_block_taus(predictions, "held_out", LODO_PREDICTORS))
    panel_size = predictions.groupby("held_out", sort=True)["panel_size"].first()
    taus["panel_size"] = panel_size.reindex(taus["held_out"]).to_numpy(dtype=np.int64)
    return taus


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
    frame = _site_b_frame(validate_results(results), crs_scores, "crs", arm)
    return pd.DataFrame(_block_taus(frame, "dataset", ("crs", "clean_auroc")))


def shift_free_scores(results: pd.DataFrame, standard: ReferenceStandard, arm: str = "frozen") -> pd.DataFrame:
    """The CRS of every encoder computed without the shift term.

    The results lose their ``shift`` rows, so the robustness axis is the mean of
    the average and the worst corruption loss only (method section 9, amendment 7); the
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
        return encoder_profiles(standard_axes(site_a, standard, arm=which))

    profiles = profiles_of(arm)
    # The panel holds profiles of the standard's own arm, whichever arm is scored.
    panel_profiles = profiles if standard.arm == arm else profiles_of(standard.arm)
    return score_profiles(profiles, lodo_standard(standard, panel_profiles, "shift"))


def site_b_prediction(results: pd.DataFrame, standard: ReferenceStandard, arm: str = "frozen",
                      references: Sequence[str] = ()) -> pd.DataFrame:
    """How well a shift-free CRS and clean AUROC rank encoders by AUROC on the second site.

    The predictor is :func:`shift_free_scores`: the CRS computed without the
    results' ``shift`` rows, against the standard with its panel refrozen the
    same way (method section 9, amendment 7). The target is the mean site-B AUROC over seeds;
    each predictor's quality is Kendall's tau-b with it (:mod:`~crsbench_lib.scoring.rank_statistics`).

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with ``shift`` rows (site B) and corruption rows (the
        shift-free robustness axis needs them).
    standard : ReferenceStandard
        The standard of the analysis.
    arm : {"frozen", "lora"}
        Which arm to read.
    references : sequence of str
        Reference encoders: scored (and in the refrozen panel), never ranked.

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
    return pd.DataFrame(_block_taus(site_b_predictions(results, standard, arm=arm, references=references), "dataset",
                                    SITE_B_PREDICTORS))


def _site_b_frame(table: pd.DataFrame, crs_scores: pd.Series, name: str, arm: str) -> pd.DataFrame:
    table = table[(table["arm"] == arm) & (table["calibration"] == "none")].astype({"encoder": object, "dataset": object})
    shift = table[table["condition"] == "shift"]
    if shift.empty:
        raise SchemaError(f"results table: no shift rows for arm {arm!r}")
    clean = clean_rows(table)
    blocks: list[pd.DataFrame] = []
    for dataset in sorted(shift["dataset"].unique()):
        target = shift[shift["dataset"] == dataset].groupby("encoder")["auroc"].mean()
        baseline = clean[clean["dataset"] == dataset].groupby("encoder")["auroc"].mean()
        shared = sorted(set(target.index) & set(baseline.index) & set(crs_scores.index))
        blocks.append(pd.DataFrame({
            "dataset": dataset,
            "encoder": shared,
            "target": target.reindex(shared).to_numpy(dtype=float),
            name: crs_scores.reindex(shared).to_numpy(dtype=float),
            "clean_auroc": baseline.reindex(shared).to_numpy(dtype=float),
        }))
    return pd.concat(blocks, ignore_index=True)


def site_b_predictions(results: pd.DataFrame, standard: ReferenceStandard, arm: str = "frozen",
                       references: Sequence[str] = ()) -> pd.DataFrame:
    """The shift-free CRS, the clean AUROC and the site-B AUROC of every encoder, per shift dataset.

    Parameters
    ----------
    results, standard, arm, references
        See :func:`site_b_prediction`.

    Returns
    -------
    pandas.DataFrame
        One row per (shift dataset, encoder): ``dataset, encoder, target``
        (mean site-B AUROC over seeds) and the predictors
        :data:`SITE_B_PREDICTORS`.

    Raises
    ------
    SchemaError
        As :func:`site_b_prediction`.
    """
    table = validate_results(results)
    if not ((table["condition"] == "shift") & (table["arm"] == arm)).any():
        raise SchemaError(f"results table: no shift rows for arm {arm!r}")
    scores = shift_free_scores(table, standard, arm=arm)
    crs_scores = pd.Series(scores["crs"].to_numpy(dtype=float), index=scores["encoder"].astype(str).to_numpy())
    # Every encoder was scored against the panel (references included); only the candidates are ranked.
    crs_scores = crs_scores.drop(index=[str(name) for name in references], errors="ignore")
    return _site_b_frame(table, crs_scores, SITE_B_PREDICTORS[0], arm)


@dataclass(frozen=True)
class TauDifference:
    """Difference of two predictors' Kendall tau-b with one target, with a paired bootstrap interval.

    Attributes
    ----------
    first, second : str
        The predictors; the difference is ``tau(first) - tau(second)``, each tau
        averaged over the blocks (held-out datasets, or shift datasets).
    tau_first, tau_second : float
        The two mean taus on the data.
    estimate : float
        ``tau_first - tau_second``.
    ci_low, ci_high : float
        Percentile interval of the difference over encoder resamples.
    interval : float
        Its coverage.
    n_draws : int
        Resamples behind the interval (those in which both taus are defined).
    n_encoders, n_blocks : int
        Encoders resampled, and blocks averaged over.
    """

    first: str
    second: str
    tau_first: float
    tau_second: float
    estimate: float
    ci_low: float
    ci_high: float
    interval: float
    n_draws: int
    n_encoders: int
    n_blocks: int

    @property
    def direction(self) -> Direction:
        """Side of zero of the interval (``ABOVE_ZERO``: ``first`` predicts better)."""
        return interval_direction(self.ci_low, self.ci_high)


def _joint_means(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Means over axis 0 of two (blocks, ...) arrays, each over the blocks where both are defined.

    Averaging each predictor over its own defined blocks would compare taus on
    different blocks and break the pairing; a column with no block defined for
    both is NaN (and a NaN draw is dropped from the interval).

    Examples
    --------
    >>> [float(m) for m in _joint_means(np.array([1.0, 0.5]), np.array([1.0, np.nan]))]
    [1.0, 1.0]
    """
    both = ~np.isnan(first) & ~np.isnan(second)
    n = both.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(both, first, 0.0).sum(axis=0) / np.where(n > 0, n, np.nan),
                np.where(both, second, 0.0).sum(axis=0) / np.where(n > 0, n, np.nan))


#: Differences of mean tau_b closer to zero than this are float noise around an exact tie.
FLOAT_TIE = 1e-12


def tau_difference(
    predictions: pd.DataFrame,
    first: str,
    second: str,
    block: str,
    n_draws: int = 1000,
    interval: float = 0.95,
    random_state: int = 0,
) -> TauDifference:
    """Which of two predictors ranks encoders closer to a target: the difference of Kendall taus, with an interval.

    The difference is ``mean_b tau(first, target) - mean_b tau(second, target)``
    over the blocks ``b`` (held-out datasets, shift datasets). Its interval is
    a paired percentile bootstrap over encoders (Efron and Tibshirani 1993,
    ch. 13): each draw resamples the encoders with replacement
    (:func:`~crsbench_lib.scoring.resampling.multiplicities`), the same
    resample for both predictors and for every block, and recomputes both
    taus on it (:func:`weighted_kendall_tau_b`). Both predictors' taus are
    averaged over the same blocks: those in which both are defined.

    Parameters
    ----------
    predictions : pandas.DataFrame
        One row per (block, encoder) with columns ``block``, ``encoder``,
        ``target``, ``first`` and ``second`` (:func:`lodo_predictions`,
        :func:`site_b_predictions`).
    first, second : str
        The two predictor columns.
    block : str
        The column that names the blocks.
    n_draws : int
        Encoder resamples.
    interval : float
        Coverage of the interval.
    random_state : int
        Seed of the resamples.

    Returns
    -------
    TauDifference

    Raises
    ------
    SchemaError
        If a column is missing, a value is NaN, an encoder repeats within a
        block, or fewer than two encoders exist.
    ValueError
        If ``n_draws`` or ``interval`` is invalid.

    Examples
    --------
    >>> frame = pd.DataFrame({"block": "d", "encoder": list("abcdef"), "target": [1.0, 2, 3, 4, 5, 6],
    ...                       "good": [1.0, 2, 3, 4, 6, 5], "poor": [6.0, 1, 5, 2, 4, 3]})
    >>> diff = tau_difference(frame, "good", "poor", "block", n_draws=200)
    >>> round(diff.estimate, 3), diff.n_blocks
    (1.067, 1)
    """
    missing = [c for c in (block, "encoder", "target", first, second) if c not in predictions.columns]
    if missing:
        raise SchemaError(f"predictions: missing column(s) {', '.join(repr(m) for m in missing)}")
    if predictions[["target", first, second]].isna().to_numpy().any():
        raise SchemaError(f"predictions: NaN in 'target', {first!r} or {second!r}")
    if predictions.duplicated([block, "encoder"]).any():
        raise SchemaError(f"predictions: an encoder appears twice within one {block!r}")
    n_draws = check_count(n_draws, "n_draws")
    coverage = check_interval(interval)
    encoders = sorted(predictions["encoder"].astype(str).unique())
    if len(encoders) < 2:
        raise SchemaError(f"a tau difference needs at least 2 encoders, found {len(encoders)}")
    position = {e: i for i, e in enumerate(encoders)}
    counts = multiplicities(len(encoders), n_draws, np.random.default_rng(random_state))
    point: dict[str, list[float]] = {first: [], second: []}
    drawn: dict[str, list[np.ndarray]] = {first: [], second: []}
    blocks = sorted(predictions[block].unique())
    for _, rows in predictions.groupby(block, sort=True):
        columns = [position[str(e)] for e in rows["encoder"]]
        y = rows["target"].to_numpy(dtype=float)
        for name in (first, second):
            x = rows[name].to_numpy(dtype=float)
            point[name].append(float(weighted_kendall_tau_b(x, y, np.ones((1, len(columns))))[0]))
            drawn[name].append(weighted_kendall_tau_b(x, y, counts[:, columns]))
    tau_first, tau_second = _joint_means(np.array(point[first]), np.array(point[second]))
    draws = np.subtract(*_joint_means(np.vstack(drawn[first]), np.vstack(drawn[second])))
    # Two means of tau_b (ratios of pair counts) that are equal in exact arithmetic can differ by ~1e-17 in
    # floating point; such a difference is zero, not a sign (an interval end of 2.8e-18 read as "above zero").
    draws = np.where(np.abs(draws) < FLOAT_TIE, 0.0, draws)
    low, high, n_valid = percentile_interval(draws, coverage)
    return TauDifference(
        first=first,
        second=second,
        tau_first=float(tau_first),
        tau_second=float(tau_second),
        estimate=0.0 if abs(tau_first - tau_second) < FLOAT_TIE else float(tau_first - tau_second),
        ci_low=low,
        ci_high=high,
        interval=coverage,
        n_draws=n_valid,
        n_encoders=len(encoders),
        n_blocks=len(blocks),
    )


def tau_difference_table(named: Mapping[str, TauDifference]) -> pd.DataFrame:
    """One row per named :class:`TauDifference`: ``comparison``, its fields and ``direction``.

    Examples
    --------
    >>> frame = pd.DataFrame({"block": "d", "encoder": list("abcd"), "target": [1.0, 2, 3, 4],
    ...                       "x": [1.0, 2, 4, 3], "y": [4.0, 3, 2, 1]})
    >>> table = tau_difference_table({"one": tau_difference(frame, "x", "y", "block", n_draws=50)})
    >>> list(table.columns[:4])
    ['comparison', 'first', 'second', 'tau_first']
    """
    rows = [{"comparison": name, **asdict(diff), "direction": str(diff.direction)} for name, diff in named.items()]
    return pd.DataFrame(rows, columns=["comparison", *(f.name for f in fields(TauDifference)), "direction"])


#: Columns of :func:`held_out_bootstrap_taus`.
HELD_OUT_BOOTSTRAP_COLUMNS: tuple[str, ...] = ("held_out", "draw_a", "draw_b", "kendall_tau", "n_encoders")


def held_out_bootstrap_taus(
    predictions: Mapping[str, DatasetPredictions],
    standard: ReferenceStandard,
    encoders: Sequence[str] | None = None,
    n_draws: int = 1000,
    random_state: int = 0,
) -> pd.DataFrame:
    """The bootstrap-draw baseline of every held-out AUROC ranking: tau between two independent draws of it.

    A held-out tau cannot exceed the reproducibility of the ranking it
    predicts. For each dataset ``d``, the two-level bootstrap of ``d`` alone
    (:func:`~crsbench_lib.scoring.two_level_bootstrap.two_level_bootstrap`:
    seeds and test images resampled) gives ``n_draws`` replicates of the
    encoders' clean AUROC on ``d`` (the LoDO target), and
    :func:`~crsbench_lib.scoring.retest.bootstrap_retest_taus` the Kendall
    tau-b between draw ``b`` and draw ``b + n_draws // 2``.

    Parameters
    ----------
    predictions : mapping
        Dataset -> :class:`~crsbench_lib.results.predictions.DatasetPredictions` of one arm.
    standard : ReferenceStandard
    encoders : sequence of str, optional
        Rank only these encoders (default: every encoder of the predictions).
    n_draws : int
        Bootstrap draws per dataset (at least 2).
    random_state : int
        Seed of the draws (the same for every dataset).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`HELD_OUT_BOOTSTRAP_COLUMNS`, ``n_draws // 2`` rows per dataset.
    """
    frames = []
    for dataset in sorted(predictions):
        boot = two_level_bootstrap(restrict_arrays(predictions, datasets=[dataset]), standard, n_draws=n_draws,
                                   random_state=random_state, top_k=1)
        taus = bootstrap_retest_taus(boot.auroc_draws, boot.encoders, keep=encoders)
        frames.append(taus.assign(held_out=dataset))
    if not frames:
        return pd.DataFrame(columns=list(HELD_OUT_BOOTSTRAP_COLUMNS))
    return pd.concat(frames, ignore_index=True)[list(HELD_OUT_BOOTSTRAP_COLUMNS)]
