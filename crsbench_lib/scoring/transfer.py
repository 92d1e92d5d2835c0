"""Adaptation transfer: does the frozen ranking survive LoRA? (method section 6, item 9)

The LoRA-adapted arm is scored exactly like the frozen arm (same standard, same
axes). This module compares the two score tables over the encoders present in
both (hand-crafted encoders have no adapted arm):

* Kendall tau-b between the frozen and the adapted CRS (the study: 0.562);
* the overlap of the two top-k sets (the study: the same top 3);
* per encoder (and dataset), the clean AUROC gain ``mean AUROC_lora - mean
  AUROC_frozen`` over seeds (the study: discrimination improves).

Kendall's tau-b and its p-value of no association come from
:func:`~crsbench_lib.scoring.rank_statistics.kendall_tau_b_test` (the formula and
its reference are there).

With a handful of adaptable encoders, tau alone says little: :func:`transfer_uncertainty`
adds a percentile interval, over paired bootstrap draws of both arms when given
or else over encoder resamples, and a permutation p-value (exact up to 8
encoders; method section 9, amendment 6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.schema import validate_results
from crsbench_lib.results.select import clean_rows
from crsbench_lib.scoring.agreement import CorrelationUncertainty, rank_correlation_uncertainty
from crsbench_lib.scoring.rank_statistics import descending_ranks, kendall_tau_b_test, reversed_pairs
from crsbench_lib.scoring.resampling import check_interval, percentile_interval


@dataclass(frozen=True)
class TransferSummary:
    """Agreement of the frozen and adapted CRS rankings.

    Attributes
    ----------
    kendall_tau : float
        Kendall tau-b between frozen and adapted CRS over the shared encoders.
    reversed_pairs : int
        Pairs of those encoders the two arms order oppositely (counted, ties in
        either arm not reversed).
    p_value : float
        Two-sided p-value of tau = 0.
    top_k : int
        Size of the compared leading sets.
    top_k_frozen, top_k_lora : tuple of str
        The two top-k sets, best first.
    top_k_overlap : int
        Encoders in both top-k sets.
    n_encoders : int
        Encoders scored in both arms.
    mean_auroc_gain : float
        Mean over shared encoders of the clean AUROC gain (NaN when not given).
    """

    kendall_tau: float
    reversed_pairs: int
    p_value: float
    top_k: int
    top_k_frozen: tuple[str, ...]
    top_k_lora: tuple[str, ...]
    top_k_overlap: int
    n_encoders: int
    mean_auroc_gain: float


def _scores(table: pd.DataFrame, name: str) -> pd.Series:
    for column in ("encoder", "crs"):
        if column not in table.columns:
            raise SchemaError(f"{name} scores: missing column {column!r}")
    if table["encoder"].duplicated().any():
        raise SchemaError(f"{name} scores: duplicate encoder {table.loc[table['encoder'].duplicated(), 'encoder'].iloc[0]!r}")
    return pd.Series(table["crs"].to_numpy(dtype=float), index=table["encoder"].astype(str).to_numpy(), name=name)


def top_k(scores: pd.Series, k: int) -> tuple[str, ...]:
    """The ``k`` best encoders by score (ties broken by name, so the result is deterministic)."""
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return tuple(name for name, _ in ordered[:k])


def rank_comparison(frozen_scores: pd.DataFrame, lora_scores: pd.DataFrame) -> pd.DataFrame:
    """Frozen and adapted CRS and ranks of the encoders scored in both arms.

    Parameters
    ----------
    frozen_scores, lora_scores : pandas.DataFrame
        Score tables with at least ``encoder`` and ``crs`` columns (e.g. the
        output of ``crs.score_results(..., arm=...)``).

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder, crs_frozen, crs_lora, rank_frozen, rank_lora,
        rank_change`` (rank 1 = best, among shared encoders; ``rank_change =
        rank_frozen - rank_lora``, positive when adaptation moves an encoder up),
        sorted by frozen rank.

    Raises
    ------
    SchemaError
        If a table lacks a column, repeats an encoder, or fewer than two
        encoders are shared.
    """
    frozen = _scores(frozen_scores, "frozen")
    lora = _scores(lora_scores, "lora")
    shared = sorted(set(frozen.index) & set(lora.index))
    if len(shared) < 2:
        raise SchemaError(f"frozen and lora scores share {len(shared)} encoder(s); need at least 2 to compare rankings")
    frame = pd.DataFrame({"encoder": shared, "crs_frozen": frozen[shared].to_numpy(), "crs_lora": lora[shared].to_numpy()})
    frame["rank_frozen"] = descending_ranks(frame["crs_frozen"].to_numpy(float), ties="min")
    frame["rank_lora"] = descending_ranks(frame["crs_lora"].to_numpy(float), ties="min")
    frame["rank_change"] = frame["rank_frozen"] - frame["rank_lora"]
    return frame.sort_values(["rank_frozen", "encoder"], kind="mergesort").reset_index(drop=True)


def auroc_gain(results: pd.DataFrame, by_dataset: bool = False) -> pd.DataFrame:
    """Clean AUROC gain of the adapted arm over the frozen arm.

    ``gain = mean_seeds(AUROC_lora) - mean_seeds(AUROC_frozen)`` per encoder and
    dataset (clean, 100 % labels, uncalibrated); per encoder it is then the mean
    over datasets (each dataset weighs the same, as in the profile).

    Parameters
    ----------
    results : pandas.DataFrame
        A results table with both arms.
    by_dataset : bool
        Return one row per (encoder, dataset) instead of per encoder.

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder, [dataset,] auroc_frozen, auroc_lora, auroc_gain``.

    Raises
    ------
    SchemaError
        If no encoder has clean rows in both arms.
    """
    table = validate_results(results)
    clean = clean_rows(table, calibration="none")
    clean = clean.astype({"encoder": object, "dataset": object, "arm": object})
    per_cell = clean.groupby(["encoder", "dataset", "arm"], sort=True)["auroc"].mean().unstack("arm")
    if "frozen" not in per_cell.columns or "lora" not in per_cell.columns:
        raise SchemaError("results table: AUROC gain needs clean rows in both the frozen and the lora arm")
    per_cell = per_cell[["frozen", "lora"]].dropna()
    if per_cell.empty:
        raise SchemaError("results table: no (encoder, dataset) has clean rows in both arms")
    per_cell.columns = ["auroc_frozen", "auroc_lora"]
    per_cell["auroc_gain"] = per_cell["auroc_lora"] - per_cell["auroc_frozen"]
    if by_dataset:
        return per_cell.reset_index()
    return per_cell.groupby(level="encoder", sort=True).mean().reset_index()


def mean_gain_interval(
    gains: pd.DataFrame, n_draws: int = 1000, interval: float = 0.95, random_state: int = 0
) -> tuple[float, float]:
    """Percentile interval of the mean AUROC gain over encoders, resampling the encoders.

    The encoders are the unit the mean generalises over (their gains already
    average datasets and seeds), so each draw resamples them with
    replacement and takes the mean gain (Efron and Tibshirani 1993).

    Parameters
    ----------
    gains : pandas.DataFrame
        :func:`auroc_gain` output (one row per encoder).
    n_draws : int
    interval : float
        Coverage.
    random_state : int

    Returns
    -------
    (float, float)
        The interval's bounds (NaN for fewer than two encoders).

    Examples
    --------
    >>> gains = pd.DataFrame({"encoder": list("abcd"), "auroc_gain": [0.01, 0.02, 0.015, 0.012]})
    >>> low, high = mean_gain_interval(gains, n_draws=200)
    >>> bool(0.01 <= low < high <= 0.02)
    True
    """
    check_interval(interval)
    values = gains["auroc_gain"].to_numpy(dtype=float)
    if values.size < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(random_state)
    draws = values[rng.integers(0, values.size, size=(int(n_draws), values.size))].mean(axis=1)
    low, high, _ = percentile_interval(draws, interval)
    return float(low), float(high)


def transfer_summary(
    frozen_scores: pd.DataFrame,
    lora_scores: pd.DataFrame,
    gains: pd.DataFrame | None = None,
    k: int = 3,
    references: Sequence[str] = (),
) -> TransferSummary:
    """Kendall tau, top-k overlap and mean AUROC gain between the two arms.

    Parameters
    ----------
    frozen_scores, lora_scores : pandas.DataFrame
        Score tables (``encoder``, ``crs``).
    gains : pandas.DataFrame, optional
        Output of :func:`auroc_gain` (per encoder).
    k : int
        Size of the leading set, at least 1.
    references : sequence of str
        Encoders left out of tau, of the leading sets and of the mean gain: a
        reference pretrained on the evaluation labels is not a candidate, and
        every rank comparison of the book ranks candidates only.

    Returns
    -------
    TransferSummary
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    frame = rank_comparison(frozen_scores, lora_scores)
    frame = frame[~frame["encoder"].isin([str(name) for name in references])].reset_index(drop=True)
    tau, p_value = kendall_tau_b_test(frame["crs_frozen"].to_numpy(float), frame["crs_lora"].to_numpy(float))
    frozen = pd.Series(frame["crs_frozen"].to_numpy(), index=frame["encoder"])
    lora = pd.Series(frame["crs_lora"].to_numpy(), index=frame["encoder"])
    k_eff = min(k, len(frozen))
    top_frozen, top_lora = top_k(frozen, k_eff), top_k(lora, k_eff)
    mean_gain = float("nan")
    if gains is not None:
        shared = gains[gains["encoder"].isin(frame["encoder"])]
        mean_gain = float(shared["auroc_gain"].mean()) if not shared.empty else float("nan")
    return TransferSummary(
        kendall_tau=float(tau),
        reversed_pairs=reversed_pairs(frame["crs_frozen"].to_numpy(float), frame["crs_lora"].to_numpy(float)),
        p_value=float(p_value) if np.isfinite(p_value) else float("nan"),
        top_k=k_eff,
        top_k_frozen=top_frozen,
        top_k_lora=top_lora,
        top_k_overlap=len(set(top_frozen) & set(top_lora)),
        n_encoders=len(frame),
        mean_auroc_gain=mean_gain,
    )


@dataclass(frozen=True)
class TransferFacts:
    """Every number and verdict the transfer page's words state (its text file's context).

    Attributes
    ----------
    n_encoders : int
        Candidates ranked in both arms.
    tau_b : float
        Frozen against adapted Kendall tau-b.
    reversed_pairs, n_pairs : int
        Pairs the two arms order oppositely (counted), of all pairs.
    verdict : str
        Where tau_b lies against the noise of one ranking
        (:func:`crsbench_lib.scoring.retest.tau_against_draws`): ``"inside"``,
        ``"above"``, ``"below"``, ``"between"``; ``"unchanged"`` when tau_b is 1
        (the order is kept whatever the noise); ``"none"`` without bootstrap draws.
    top_k : int
        Size of the compared top sets (0 when there are none).
    top_frozen, top_adapted : tuple of str
        The two top-k sets, best first.
    shared, leaving, entering : tuple of str
        Members of both sets (in frozen order), of the frozen set only, and of
        the adapted set only.
    """

    n_encoders: int
    tau_b: float
    reversed_pairs: int
    n_pairs: int
    verdict: str
    top_k: int
    top_frozen: tuple[str, ...]
    top_adapted: tuple[str, ...]
    shared: tuple[str, ...]
    leaving: tuple[str, ...]
    entering: tuple[str, ...]


def transfer_facts(summary: TransferSummary, noise: pd.DataFrame | None) -> TransferFacts:
    """The transfer page's facts: its summary and the verdict of its tau_b against the page's noise table.

    Parameters
    ----------
    summary : TransferSummary
        :func:`transfer_summary` of the page.
    noise : pandas.DataFrame or None
        :func:`crsbench_lib.scoring.retest.noise_baseline_table` of the page.

    Examples
    --------
    >>> summary = TransferSummary(1.0, 0, 0.01, 2, ("a", "b"), ("a", "b"), 2, 4, 0.01)
    >>> facts = transfer_facts(summary, None)
    >>> facts.verdict, facts.n_pairs, facts.shared
    ('unchanged', 6, ('a', 'b'))
    """
    from crsbench_lib.scoring.retest import tau_against_draws

    tau = float(summary.kendall_tau)
    if tau >= 1.0:
        verdict = "unchanged"
    elif noise is None or not len(noise):
        verdict = "none"
    else:
        verdict = tau_against_draws(tau, noise)
    frozen, adapted = tuple(summary.top_k_frozen), tuple(summary.top_k_lora)
    n = int(summary.n_encoders)
    return TransferFacts(
        n_encoders=n,
        tau_b=tau,
        reversed_pairs=int(summary.reversed_pairs),
        n_pairs=n * (n - 1) // 2,
        verdict=verdict,
        top_k=max(len(frozen), len(adapted)),
        top_frozen=frozen,
        top_adapted=adapted,
        shared=tuple(x for x in frozen if x in adapted),
        leaving=tuple(x for x in frozen if x not in adapted),
        entering=tuple(x for x in adapted if x not in frozen),
    )


def transfer_uncertainty(
    frozen_scores: pd.DataFrame,
    lora_scores: pd.DataFrame,
    *,
    frozen_draws: np.ndarray | None = None,
    lora_draws: np.ndarray | None = None,
    encoders: Sequence[str] | None = None,
    n_draws: int = 1000,
    n_permutations: int = 9999,
    interval: float = 0.95,
    random_state: int = 0,
) -> CorrelationUncertainty:
    """Kendall tau-b of the frozen and adapted CRS with an interval and a permutation p-value.

    Over the encoders scored in both arms (:func:`rank_comparison`). The
    interval is the percentile interval of tau-b over the bootstrap draws of
    the two arms when both draw matrices are given (draw ``b`` of each arm must
    be the same resample, i.e. the two bootstraps were run with the same seed on
    the same seeds and test images), else over ``n_draws`` resamples of the
    shared encoders (:func:`~.agreement.item_bootstrap_draws`). The p-value is
    the two-sided permutation test of no association
    (:func:`~.resampling.permutation_p_value`).

    Parameters
    ----------
    frozen_scores, lora_scores : pandas.DataFrame
        Score tables (``encoder``, ``crs``).
    frozen_draws, lora_draws : numpy.ndarray, optional
        Shape (n_draws, len(encoders)): CRS per bootstrap draw of each arm
        (give both or neither).
    encoders : sequence of str, optional
        Column order of the draw matrices (required with them).
    n_draws : int
        Encoder resamples when no draws are given.
    n_permutations, interval, random_state
        See :func:`~.agreement.rank_correlation_uncertainty`.

    Returns
    -------
    CorrelationUncertainty
        ``statistic="kendall_tau_b"``; ``estimate`` equals
        :func:`transfer_summary`'s ``kendall_tau``.

    Raises
    ------
    SchemaError
        As :func:`rank_comparison`, or if the draws lack a shared encoder.
    ValueError
        If only one draw matrix is given, or draws come without ``encoders``.

    Examples
    --------
    >>> frozen = pd.DataFrame({"encoder": list("abcde"), "crs": [0.7, 0.6, 0.5, 0.4, 0.3]})
    >>> lora = pd.DataFrame({"encoder": list("abcde"), "crs": [0.8, 0.6, 0.7, 0.4, 0.5]})
    >>> u = transfer_uncertainty(frozen, lora, n_draws=200)
    >>> round(u.estimate, 2), u.p_method, u.n_permutations
    (0.6, 'exact', 120)
    """
    frame = rank_comparison(frozen_scores, lora_scores)
    x_draws = y_draws = None
    if (frozen_draws is None) != (lora_draws is None):
        raise ValueError("give both draw matrices (frozen_draws and lora_draws) or neither")
    if frozen_draws is not None and lora_draws is not None:
        if encoders is None:
            raise ValueError("draw matrices need 'encoders', the names of their columns")
        position = {str(e): i for i, e in enumerate(encoders)}
        absent = [e for e in frame["encoder"] if e not in position]
        if absent:
            raise SchemaError(f"bootstrap draws: no column for encoder {absent[0]!r}")
        columns = [position[e] for e in frame["encoder"]]
        for name, draws in (("frozen_draws", frozen_draws), ("lora_draws", lora_draws)):
            if np.asarray(draws).ndim != 2 or np.asarray(draws).shape[1] != len(position):
                raise SchemaError(f"{name}: expected shape (n_draws, {len(position)}), found {np.asarray(draws).shape}")
        x_draws = np.asarray(frozen_draws, dtype=float)[:, columns]
        y_draws = np.asarray(lora_draws, dtype=float)[:, columns]
    return rank_correlation_uncertainty(
        frame["crs_frozen"].to_numpy(dtype=float),
        frame["crs_lora"].to_numpy(dtype=float),
        "kendall_tau_b",
        x_draws=x_draws,
        y_draws=y_draws,
        n_draws=n_draws,
        n_permutations=n_permutations,
        interval=interval,
        random_state=random_state,
    )


def adapted_runs(results: pd.DataFrame) -> pd.DataFrame:
    """The LoRA runs of a results table: one row per (encoder, dataset, seed) with a clean adapted row.

    Examples
    --------
    >>> from crsbench_lib.results.schema import empty_results
    >>> len(adapted_runs(empty_results()))
    0
    """
    table = results.loc[(results["arm"] == "lora") & (results["condition"] == "clean")
                        & (results["calibration"] == "none"), ["encoder", "dataset", "seed"]]
    return table.drop_duplicates().astype({"encoder": str, "dataset": str, "seed": int}).reset_index(drop=True)


#: Why an encoder was not adapted when its run's manifest does not say.
UNRECORDED_REASON = "not adapted in this run (its manifest records no reason)"


def not_adapted(results: pd.DataFrame, reasons: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The candidates of a table that the LoRA arm did not adapt, and why.

    A candidate is an encoder with frozen rows; it was adapted when it has
    LoRA rows. The reasons come from the run's manifest
    (:attr:`crsbench_lib.results.manifest.RunManifest.lora_not_adapted`: a
    hand-crafted descriptor has no network, an exported model file no layers
    for adapters, another encoder was not listed under ``lora.encoders``).

    Parameters
    ----------
    results : pandas.DataFrame
        A results table (columns ``encoder`` and ``arm``).
    reasons : mapping, optional
        Encoder -> why it was left out, as the run recorded it.

    Returns
    -------
    pandas.DataFrame
        Columns ``encoder`` and ``reason``, one row per frozen-only encoder in
        table order; empty when the table has no LoRA rows (no arm to leave
        anyone out of).

    Examples
    --------
    >>> rows = pd.DataFrame({"encoder": ["hog", "mine", "cnn", "cnn"], "arm": ["frozen", "frozen", "frozen", "lora"]})
    >>> not_adapted(rows, {"mine": "an exported graph cannot be LoRA-adapted"}).to_dict("records")
    [{'encoder': 'hog', 'reason': 'not adapted in this run (its manifest records no reason)'}, {'encoder': 'mine', 'reason': 'an exported graph cannot be LoRA-adapted'}]
    """
    reasons = dict(reasons or {})
    adapted = set(results.loc[results["arm"] == "lora", "encoder"].astype(str))
    if not adapted:
        return pd.DataFrame(columns=["encoder", "reason"])
    frozen = pd.unique(results.loc[results["arm"] == "frozen", "encoder"].astype(str))
    rows = [(e, reasons.get(e, UNRECORDED_REASON)) for e in frozen if e not in adapted]
    return pd.DataFrame(rows, columns=["encoder", "reason"])


def adapted_fractions(results: pd.DataFrame) -> pd.DataFrame:
    """How many of the LoRA arm's label-fraction rows were fitted on adapted embeddings, per fraction.

    Reads the protocol column ``features`` (method section 9, amendment 12):
    a fraction whose validation subset was too small for early stopping keeps
    the frozen encoder, so its rows say ``frozen``. Tables written before the
    column (``features`` empty) count as unknown.

    Returns
    -------
    pandas.DataFrame
        One row per label fraction, descending: ``label_fraction``, ``n_rows``,
        ``n_adapted``, ``n_frozen``, ``n_unknown``.

    Examples
    --------
    >>> rows = pd.DataFrame({"arm": ["lora"] * 3 + ["frozen"], "condition": ["label_fraction"] * 4,
    ...                      "label_fraction": [0.25, 0.01, 0.01, 0.01], "features": ["adapted", "frozen", "", "frozen"]})
    >>> adapted_fractions(rows).to_dict("records")[1]
    {'label_fraction': 0.01, 'n_rows': 2, 'n_adapted': 0, 'n_frozen': 1, 'n_unknown': 1}
    """
    features = results["features"] if "features" in results else pd.Series("", index=results.index)
    rows = results.assign(features=features.fillna("").astype(str))
    rows = rows[(rows["arm"] == "lora") & (rows["condition"] == "label_fraction")]
    out = rows.groupby("label_fraction", sort=True)["features"].agg(
        n_rows="size", n_adapted=lambda f: int((f == "adapted").sum()), n_frozen=lambda f: int((f == "frozen").sum()),
        n_unknown=lambda f: int((f == "").sum()))
    out = out.reset_index().sort_values("label_fraction", ascending=False, ignore_index=True)
    return out.astype({"label_fraction": float, "n_rows": int, "n_adapted": int, "n_frozen": int, "n_unknown": int})


def training_of_runs(training: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """The adapter reports (:func:`crsbench_lib.report.world.adapter_training`) of the runs in ``results``.

    A chapter restricted to some encoders, datasets or seeds describes only
    the adapters behind its own rows.
    """
    return training.astype({"seed": int}).merge(adapted_runs(results), on=["encoder", "dataset", "seed"])


def same_resamples(frozen: Mapping[str, Any], lora: Mapping[str, Any]) -> bool:
    """Whether draw ``b`` of the two arms' two-level bootstraps is the same resample.

    It is when both arms hold the same datasets and seeds, test sets of the
    same sizes and the same site-B test (present in both or neither), and
    the two bootstraps run with the same ``random_state``.

    Parameters
    ----------
    frozen, lora : mapping of str to DatasetPredictions
        :func:`~crsbench_lib.results.predictions.load_prediction_arrays` of each arm.
    """
    if sorted(frozen) != sorted(lora):
        return False
    for name in frozen:
        a, b = frozen[name], lora[name]
        if a.encoders != b.encoders or a.seeds != b.seeds or a.clean.shape[2] != b.clean.shape[2]:
            return False
        if (a.shift_proba is None) != (b.shift_proba is None):
            return False
        if a.shift_proba is not None and a.shift_proba.shape[2] != b.shift_proba.shape[2]:
            return False
    return True


#: Columns of :func:`axis_changes`, in order.
AXIS_CHANGE_COLUMNS: tuple[str, ...] = (
    "group", "n_encoders", "axis", "frozen", "lora", "change", "ci_low", "ci_high", "bias", "interval",
)


def axis_changes(frozen: Any, lora: Any, groups: Mapping[str, str] | None = None,
                 interval: float = 0.95) -> pd.DataFrame:
    """The change of every raw axis from the frozen to the adapted arm, per group of encoders, with intervals.

    ``change = mean over the group's encoders of (axis_lora - axis_frozen)``
    on the raw profiles (D: clean AUROC, C: clean ECE, L: AUROC retention, R:
    robustness loss; method section 3). The interval is the percentile
    interval of the same mean over the paired draws of the two arms'
    two-level bootstraps (draw ``b`` resamples the same seeds and test images
    in both, :func:`same_resamples`), so it carries the measurement's noise
    (seeds and test images) for these encoders; it does not generalise to
    other encoders of the family. With three seeds the seed level has only
    ten distinct resamples, so the interval understates the seed noise.
    ``bias`` is the mean of the draws' change minus the point change: binned
    ECE and losses clipped at zero rise under resampling, and where the two
    arms differ in level their rises need not cancel, so a large ``bias``
    says the percentile interval is off-centre. Draws where an axis is
    undefined are left out of its interval.

    Parameters
    ----------
    frozen, lora : TwoLevelBootstrapResult
        Of the same encoders, run with the same ``random_state`` and draws.
    groups : mapping of str to str, optional
        Encoder -> group (e.g. the zoo family); every encoder also counts in
        the group ``"all"``. None: the group ``"all"`` only.
    interval : float
        Coverage.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`AXIS_CHANGE_COLUMNS`: ``"all"`` first, then the groups
        in order of first appearance among the encoders; axes D, C, L, R.

    Raises
    ------
    SchemaError
        If the two bootstraps differ in encoders or draws.
    """
    check_interval(interval)
    if (tuple(frozen.encoders) != tuple(lora.encoders) or frozen.profile_draws.shape != lora.profile_draws.shape
            or getattr(frozen, "random_state", None) != getattr(lora, "random_state", None)
            or tuple(getattr(frozen, "seeds", ())) != tuple(getattr(lora, "seeds", ()))):
        raise SchemaError("axis changes: the two bootstraps must share encoders, seeds, random_state and draws "
                          f"({len(frozen.encoders)} vs {len(lora.encoders)} encoders, "
                          f"{frozen.profile_draws.shape[0]} vs {lora.profile_draws.shape[0]} draws)")
    encoders = [str(e) for e in frozen.encoders]
    axes = [str(a) for a in frozen.point_profiles.columns]
    point = (lora.point_profiles.loc[encoders, axes].to_numpy(dtype=float)
             - frozen.point_profiles.loc[encoders, axes].to_numpy(dtype=float))
    draws = np.asarray(lora.profile_draws, dtype=float) - np.asarray(frozen.profile_draws, dtype=float)
    members: dict[str, list[int]] = {"all": list(range(len(encoders)))}
    for i, name in enumerate(encoders):
        group = (groups or {}).get(name)
        if group is not None and group != "all":
            members.setdefault(str(group), []).append(i)
    rows = []
    for group, idx in members.items():
        for j, axis in enumerate(axes):
            group_draws = draws[:, idx, j].mean(axis=1)
            low, high, _ = percentile_interval(group_draws, interval)
            finite = group_draws[np.isfinite(group_draws)]
            change = float(point[idx, j].mean())
            rows.append((group, len(idx), axis,
                         float(frozen.point_profiles.loc[[encoders[i] for i in idx], axis].mean()),
                         float(lora.point_profiles.loc[[encoders[i] for i in idx], axis].mean()),
                         change, float(low), float(high),
                         float(finite.mean() - change) if finite.size else float("nan"), float(interval)))
    return pd.DataFrame(rows, columns=list(AXIS_CHANGE_COLUMNS))


def ece_by_calibrator(results: pd.DataFrame, encoders: Sequence[str] | None = None) -> pd.DataFrame:
    """Clean ECE of each arm without and after each post-hoc calibrator.

    Mean over the encoders (``encoders``, default: those with adapted rows),
    datasets and seeds of the clean rows at 100 % labels, over the
    (encoder, dataset, seed, calibration) cells present in both arms only, so
    the two means cover the same cells.

    Returns
    -------
    pandas.DataFrame
        Columns ``calibration, ece_frozen, ece_lora, change``, one row per
        calibrator present in both arms (``none`` first).
    """
    table = validate_results(results)
    names = adapted_runs(table)["encoder"].unique() if encoders is None else [str(e) for e in encoders]
    clean = clean_rows(table)
    clean = clean[clean["encoder"].astype(str).isin(names)].astype(
        {"arm": object, "calibration": object, "encoder": object, "dataset": object})
    cells = clean.pivot_table(index=["encoder", "dataset", "seed", "calibration"], columns="arm", values="ece",
                              aggfunc="mean", observed=True)
    if "frozen" not in cells.columns or "lora" not in cells.columns:
        raise SchemaError("results table: the ECE by calibrator needs clean rows in both the frozen and the lora arm")
    means = cells[["frozen", "lora"]].dropna().groupby(level="calibration", sort=False).mean()
    order = [c for c in ("none", "temperature", "vector", "isotonic") if c in means.index]
    order += [c for c in means.index if c not in order]
    frame = means.loc[order].reset_index()
    frame.columns = ["calibration", "ece_frozen", "ece_lora"]
    frame["change"] = frame["ece_lora"] - frame["ece_frozen"]
    return frame
