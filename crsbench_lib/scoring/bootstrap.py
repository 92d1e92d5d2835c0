"""Paired-seed bootstrap of the CRS ranking (method section 6, item 2).

Each draw resamples the seeds with replacement, the *same* resampled seeds for
every encoder and every dataset (the seeds pair the encoders: seed s fixes the
same train subsample for all of them), recomputes every encoder's profile
(mean over the resampled seeds, then over datasets) and scores it against the
fixed standard. From the draws: P(rank 1) and P(top k) per encoder, and
percentile intervals of every pairwise CRS difference. Encoders named as
*references* (one pretrained on the evaluation labels, say) are scored and
summarised but not ranked: rank probabilities are among the candidates.

The draws of the CRS are biased: dominance (a share of panel members beaten
on every axis) and the floor (a minimum) are non-smooth functions of noisy
profiles, and the binned ECE rises under resampling, so a draw's profile falls
behind fixed panel entries it matched at the point. For the leading encoders
the draws can centre well below the point, and the percentile interval can
exclude it. The summary therefore reports the draws' median and bias beside
the point, and the basic (reflected) interval beside the percentile one
(:func:`interval_summary`; Efron & Tibshirani 1993, Davison & Hinkley 1997).

The standard's anchors and panel stay fixed in every draw, but each encoder is
scored against the panel **without its own entry** (method section 9,
amendment 4): its entry is its own full-sample profile, so a draw in which it
does a little better on every axis would dominate itself, inflating its CRS in
exactly the draws where it is lucky. The point estimate uses the same
leave-self-out panel. A draw that picks every seed once reproduces the profile
to the last bit (see :func:`~crsbench_lib.scoring.axes.sequential_mean`).

Seeds redraw the train, validation and calibration splits (amendment 1), so
every axis varies between seeds; the test images are the same for every seed.
:func:`~crsbench_lib.scoring.two_level_bootstrap.two_level_bootstrap` resamples
the test images as well, from the stored per-image predictions;
:func:`paired_seed_bootstrap` works from a results table alone and resamples
the seeds only. This module holds the paired bootstrap and what both share:
the draw summaries and the leave-self-out scoring.

Vectorised: the per-seed raw axes are computed once as an
(encoder, dataset, seed, axis) array; a draw is a vector of seed multiplicities,
so all draws' profiles are one tensor contraction.
"""


from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import ConfigError, ReferenceStandardError, SchemaError
from crsbench_lib.results.validated import ValidatedResults, as_validated
from crsbench_lib.scoring.axes import encoder_profiles, per_seed_axes, standard_axes
from crsbench_lib.scoring.crs import component_arrays, normalise_array, score_profiles
from crsbench_lib.scoring.rank_statistics import descending_ranks
from crsbench_lib.scoring.tier import best_confidence_set
from crsbench_lib.standard import ReferenceStandard, as_standard, check_ece_bins


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """Outcome of :func:`paired_seed_bootstrap`.

    Attributes
    ----------
    encoders : tuple of str
        Column order of ``crs_draws`` (sorted names).
    seeds : tuple of int
        The seeds that were resampled.
    crs_draws : numpy.ndarray
        Shape (n_draws, n_encoders): the CRS of every encoder in every draw.
    point : pandas.DataFrame
        The un-resampled score table (:func:`~crsbench_lib.scoring.crs.score_profiles`),
        with ``crs`` and ``rank`` against the leave-self-out panel.
    summary : pandas.DataFrame
        Per encoder, in point-CRS order: role, rank among the candidates, crs
        (point), the draws' median, mean, standard error and bias, the
        percentile and basic intervals, point_inside, p_rank1, p_top{k}
        (see :func:`_draw_summary`).
    pairwise : pandas.DataFrame
        Per pair (encoder_a ranked above encoder_b at the point estimate):
        diff (point CRS_a - CRS_b), diff_low, diff_high, overlaps_zero, p_a_above_b.
    top_k, n_draws, interval, random_state
        The parameters.
    """

    encoders: tuple[str, ...]
    seeds: tuple[int, ...]
    crs_draws: np.ndarray
    point: pd.DataFrame
    summary: pd.DataFrame
    pairwise: pd.DataFrame
    top_k: int
    n_draws: int
    interval: float
    random_state: int


def _check_parameters(n_draws: int, top_k: int, interval: float, n_encoders: int) -> None:
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 1:
        raise ConfigError(f"parameter 'n_draws' must be a positive integer, found {n_draws!r}")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= n_encoders:
        raise ConfigError(f"parameter 'top_k' must be an integer in 1..{n_encoders}, found {top_k!r}")
    if not 0.0 < interval < 1.0:
        raise ConfigError(f"parameter 'interval' must lie in (0, 1), found {interval!r}")


def seed_multiplicities(n_seeds: int, n_draws: int, random_state: int) -> np.ndarray:
    """How often each seed is picked in each draw, shape (n_draws, n_seeds)."""
    rng = np.random.default_rng(random_state)
    picks = rng.integers(0, n_seeds, size=(n_draws, n_seeds))
    return (picks[:, :, None] == np.arange(n_seeds)[None, None, :]).sum(axis=1).astype(float)


def resampled_profiles(values: np.ndarray, multiplicities: np.ndarray) -> np.ndarray:
    """Profiles of every draw from per-seed axes.

    Parameters
    ----------
    values : numpy.ndarray
        Shape (E, D, S, 4) from :func:`~crsbench_lib.scoring.axes.per_seed_axes`;
        NaN where an axis is unavailable on a dataset (for every seed).
    multiplicities : numpy.ndarray
        Shape (B, S), rows summing to S.

    Returns
    -------
    numpy.ndarray
        Shape (B, E, 4): mean over the resampled seeds, then over the datasets
        where the axis is available.
    """
    n_encoders, n_datasets, n_seeds, n_axes = values.shape
    available = ~np.isnan(values[:, :, 0, :])  # (E, D, 4), constant over seeds
    filled = np.nan_to_num(values, nan=0.0)
    counts = np.asarray(multiplicities, dtype=float)
    # Sums run over sorted seeds, then sorted datasets, left to right, exactly as
    # axes.sequential_mean does, so the identity draw reproduces the profiles bit for bit.
    totals = np.zeros((counts.shape[0], n_encoders, n_datasets, n_axes))
    for s in range(n_seeds):
        totals = totals + counts[:, s, None, None, None] * filled[None, :, :, s, :]
    per_dataset = totals / n_seeds
    summed = np.zeros((counts.shape[0], n_encoders, n_axes))
    for d in range(n_datasets):
        summed = summed + np.where(available[None, :, d, :], per_dataset[:, :, d, :], 0.0)
    return summed / available.sum(axis=1)[None].astype(float)


def _top_k_shares(crs: np.ndarray, k: int) -> np.ndarray:
    """Share (B, E) of a place among the k highest of each row, exact ties split evenly.

    An encoder with ``g`` scores strictly above it and ``t`` equal to it (itself
    included) holds a place with certainty when ``g + t <= k``, none when
    ``g >= k``, and otherwise ``(k - g) / t``: the chance that a random order of
    the tied encoders gives it one of the ``k - g`` places left. Profiles that
    saturate at the anchors give exactly equal CRS draws; breaking such ties by
    name would hand every shared place to the alphabetically first encoder.

    Examples
    --------
    >>> _top_k_shares(np.array([[0.9, 0.5, 0.5, 0.1]]), 2).tolist()
    [[1.0, 0.5, 0.5, 0.0]]
    >>> _top_k_shares(np.array([[0.7, 0.7, 0.2]]), 1).tolist()  # P(rank 1) of a tie
    [[0.5, 0.5, 0.0]]
    """
    above = (crs[:, None, :] > crs[:, :, None]).sum(axis=2)
    tied = (crs[:, None, :] == crs[:, :, None]).sum(axis=2)
    return np.clip((k - above) / tied, 0.0, 1.0)


def _reference_mask(encoders: Sequence[str], references: Sequence[str], top_k: int) -> np.ndarray:
    """Which columns are references (bool, E); checks the names and that ``top_k`` candidates remain."""
    if isinstance(references, str):
        raise ConfigError(f"parameter 'references' must be a sequence of encoder names, found the string {references!r}")
    unknown = sorted(set(references) - set(encoders))
    if unknown:
        raise ConfigError(f"reference encoder {unknown[0]!r} is not among the scored encoders ({', '.join(encoders)})")
    mask = np.array([name in set(references) for name in encoders], dtype=bool)
    n_candidates = int((~mask).sum())
    if top_k > n_candidates:
        raise ConfigError(f"parameter 'top_k' must be at most the {n_candidates} candidates "
                          f"({len(encoders)} encoders less {int(mask.sum())} references), found {top_k!r}")
    return mask


def interval_summary(draws: np.ndarray, point: np.ndarray, interval: float = 0.95) -> pd.DataFrame:
    """Centre, bias and two intervals of bootstrap draws beside their point estimates.

    A statistic that is a non-smooth function of the data (the CRS's dominance
    share and floor are) can be biased under resampling: its draws then centre
    away from the point, and the percentile interval can exclude the point
    itself. This function reports what the draws say, column by column:

    * ``median`` and ``mean`` of the draws, ``se`` their standard deviation;
    * ``bias = mean - point``, the bootstrap estimate of the estimator's bias
      (Efron & Tibshirani 1993, eq. 10.2), and ``bias_se = bias / se``: Efron
      and Tibshirani (section 10.6) treat a ratio below 0.25 as negligible and
      a larger one as a warning that the statistic may be unsuitable, and
      advise against subtracting it;
    * the percentile interval ``[q(a), q(1 - a)]`` (``low``, ``high``,
      ``a = (1 - interval) / 2``), which describes where resampled values fall;
    * the basic (reflected) interval ``[2 point - q(1 - a), 2 point - q(a)]``
      (Davison & Hinkley 1997, eq. 5.6), which assumes ``point - truth`` behaves
      like ``draw - point`` and so reflects the percentile interval about the
      point; a downward bias of the draws moves it upwards;
    * ``point_inside``: whether ``low <= point <= high``. The basic interval
      holds its point exactly when the percentile interval does, so one flag
      serves both.

    Parameters
    ----------
    draws : numpy.ndarray
        (B, n): B draws of n statistics.
    point : numpy.ndarray
        (n,): the point estimates.
    interval : float
        Coverage, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        One row per statistic: median, mean, se, bias, bias_se, low, high,
        basic_low, basic_high, point_inside.

    Raises
    ------
    ConfigError
        If ``interval`` is outside (0, 1) or the shapes disagree.

    References
    ----------
    Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*,
    chapters 10 (bias) and 13 (percentile intervals). Chapman & Hall.
    Davison, A. C. and Hinkley, D. V. (1997). *Bootstrap Methods and their
    Application*, section 5.2 (basic and percentile intervals). Cambridge
    University Press.

    Examples
    --------
    >>> draws = np.array([[0.4], [0.5], [0.6]]) - 0.2  # centred 0.2 below the point 0.5
    >>> row = interval_summary(draws, np.array([0.5]), interval=0.5).iloc[0]
    >>> [round(float(row[c]), 6) for c in ("bias", "low", "high", "basic_low", "basic_high")], bool(row["point_inside"])
    ([-0.2, 0.25, 0.35, 0.65, 0.75], False)
    """
    values = np.asarray(draws, dtype=float)
    centre = np.asarray(point, dtype=float)
    if not 0.0 < interval < 1.0:
        raise ConfigError(f"parameter 'interval' must lie in (0, 1), found {interval!r}")
    if values.ndim != 2 or centre.shape != (values.shape[1],):
        raise ConfigError(f"interval_summary: expected draws (B, n) and point (n,), found {values.shape} and {centre.shape}")
    tail = (1.0 - interval) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail], axis=0)
    mean = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros(values.shape[1])
    bias = mean - centre
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(se > 0, bias / np.where(se > 0, se, 1.0), np.where(bias == 0, 0.0, np.sign(bias) * np.inf))
    return pd.DataFrame({
        "median": np.median(values, axis=0),
        "mean": mean,
        "se": se,
        "bias": bias,
        "bias_se": ratio,
        "low": low,
        "high": high,
        "basic_low": 2.0 * centre - high,
        "basic_high": 2.0 * centre - low,
        "point_inside": (low <= centre) & (centre <= high),
    })


def _draw_summary(
    crs: np.ndarray, encoders: Sequence[str], point: pd.DataFrame, order: np.ndarray, top_k: int, interval: float,
    reference: np.ndarray | None = None,
    full_panel: np.ndarray | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-encoder summary and the pairwise differences of the CRS draws.

    Parameters
    ----------
    crs : numpy.ndarray
        (B, E) CRS draws, columns in ``encoders`` order.
    encoders : sequence of str
        Column names of ``crs``.
    point : pandas.DataFrame
        Point estimate in CRS order, with ``encoder`` and ``crs``.
    order : numpy.ndarray
        Column of ``crs`` of each row of ``point``.
    top_k : int
        The k of P(top k).
    interval : float
        Coverage of the intervals.
    reference : numpy.ndarray, optional
        (E,) bool: reference encoders, scored but not ranked (default none).
    full_panel : numpy.ndarray, optional
        (E,) the CRS against the standard's whole panel (the score table's,
        in which a panel member meets its own entry), in ``encoders`` order.

    Returns
    -------
    summary : pandas.DataFrame
        Per encoder in the order of ``point`` (point CRS, highest first):
        encoder, role ("candidate" or "reference"), rank (among the candidates;
        missing for a reference), crs (point, leave-self-out), crs_full_panel
        (the score table's CRS; NaN when not given), crs_median, crs_mean, crs_se,
        bias, bias_se, crs_low, crs_high (percentile interval), crs_basic_low,
        crs_basic_high (basic interval), point_inside, p_rank1, p_top{k}
        (among the candidates, exact ties in a draw shared evenly; NaN for a
        reference), in_tier (the leading tier: the confidence set for the best
        candidate, :func:`~crsbench_lib.scoring.tier.best_confidence_set`),
        critical_value (the candidate's own one-sided critical value ``q_i``;
        NaN for a reference or with one draw).
        See :func:`interval_summary`.
    pairwise : pandas.DataFrame
        Per pair (encoder_a above encoder_b at the point): diff (point
        CRS_a - CRS_b), diff_low, diff_high (percentile interval),
        overlaps_zero, p_a_above_b, diff_bias (mean of the draws less the
        point), diff_basic_low, diff_basic_high (basic interval),
        diff_point_inside (the point lies inside its percentile interval),
        diff_se, sim_low, sim_high (the tier's centred interval: ``sim_low`` =
        diff - q_b se tests b's membership, ``sim_high`` = diff + q_a se a's),
        critical_low, critical_high (``q_b`` and ``q_a``) and separated (the
        interval excludes zero).
    """
    tail = (1.0 - interval) / 2.0 * 100.0
    n_e = crs.shape[1]
    is_reference = np.zeros(n_e, dtype=bool) if reference is None else np.asarray(reference, dtype=bool)
    candidates = np.flatnonzero(~is_reference)
    # Rank probabilities among the candidates only: a reference is shown, never ranked.
    ranked = crs[:, candidates]
    p_rank1 = np.full(n_e, np.nan)
    p_rank1[candidates] = _top_k_shares(ranked, 1).mean(axis=0)
    p_top = np.full(n_e, np.nan)
    p_top[candidates] = _top_k_shares(ranked, top_k).mean(axis=0)
    point_crs = point["crs"].to_numpy()
    spread = interval_summary(crs[:, order], point_crs, interval)
    in_encoder_order = np.empty(n_e)
    in_encoder_order[order] = point_crs
    if crs.shape[0] > 1:
        tier = best_confidence_set(crs, in_encoder_order, ~is_reference, interval)
        in_tier = tier.in_tier
    else:  # one draw cannot compare: the tier is the point leader alone
        tier = None
        in_tier = np.zeros(n_e, dtype=bool)
        in_tier[candidates[np.argmax(in_encoder_order[candidates])]] = True
    roles = np.where(is_reference[order], "reference", "candidate")
    rank = pd.array([pd.NA] * n_e, dtype="Int64")
    candidate_rows = np.flatnonzero(roles == "candidate")
    rank[candidate_rows] = descending_ranks(point_crs[candidate_rows], ties="min").astype("int64")
    summary = pd.DataFrame({
        "encoder": point["encoder"].to_numpy(),
        "role": roles,
        "rank": rank,
        "crs": point_crs,
        "crs_full_panel": np.full(n_e, np.nan) if full_panel is None else np.asarray(full_panel, dtype=float)[order],
        "crs_median": spread["median"].to_numpy(),
        "crs_mean": spread["mean"].to_numpy(),
        "crs_se": spread["se"].to_numpy(),
        "bias": spread["bias"].to_numpy(),
        "bias_se": spread["bias_se"].to_numpy(),
        "crs_low": spread["low"].to_numpy(),
        "crs_high": spread["high"].to_numpy(),
        "crs_basic_low": spread["basic_low"].to_numpy(),
        "crs_basic_high": spread["basic_high"].to_numpy(),
        "point_inside": spread["point_inside"].to_numpy(),
        "p_rank1": p_rank1[order],
        f"p_top{top_k}": p_top[order],
        "in_tier": in_tier[order],
        "critical_value": np.full(n_e, np.nan) if tier is None else np.where(is_reference, np.nan,
                                                                            tier.critical_values)[order],
    })
    a_idx, b_idx = np.triu_indices(n_e, k=1)
    first, second = order[a_idx], order[b_idx]
    diffs = crs[:, first] - crs[:, second]
    d_low, d_high = np.percentile(diffs, [tail, 100.0 - tail], axis=0)
    diff_point = point_crs[a_idx] - point_crs[b_idx]
    # The two encoders' draws may be biased by different amounts, so the tier
    # decision (percentile interval) is reported beside the basic interval.
    diff_spread = interval_summary(diffs, diff_point, interval)
    pairwise = pd.DataFrame({
        "encoder_a": [encoders[i] for i in first],
        "encoder_b": [encoders[i] for i in second],
        "diff": diff_point,
        "diff_low": d_low,
        "diff_high": d_high,
        "overlaps_zero": (d_low <= 0.0) & (d_high >= 0.0),
        "p_a_above_b": (diffs > 0).mean(axis=0),
        "diff_bias": diff_spread["bias"].to_numpy(),
        "diff_basic_low": diff_spread["basic_low"].to_numpy(),
        "diff_basic_high": diff_spread["basic_high"].to_numpy(),
        "diff_point_inside": diff_spread["point_inside"].to_numpy(),
        "diff_se": np.nan if tier is None else tier.se[first, second],
        "sim_low": np.nan if tier is None else tier.low[first, second],
        "sim_high": np.nan if tier is None else tier.high[first, second],
        "critical_low": np.nan if tier is None else tier.critical_values[second],
        "critical_high": np.nan if tier is None else tier.critical_values[first],
    })
    pairwise["separated"] = (pairwise["sim_low"] > 0) | (pairwise["sim_high"] < 0) | (
        (pairwise["diff_se"] == 0) & (pairwise["diff"] != 0))
    return summary, pairwise


def tied_with_leader(summary: pd.DataFrame, pairwise: pd.DataFrame, role: str = "candidate") -> list[str]:
    """The leading tier, or the references the draws cannot separate from the leader.

    The leading tier is the confidence set for the best candidate
    (:func:`~crsbench_lib.scoring.tier.best_confidence_set`: simultaneous
    centred intervals over every candidate pair), read from the summary's
    ``in_tier`` column; it is the tier's one definition. The leader is the
    candidate of rank 1 and always a member. A reference is never a member;
    ``role="reference"`` lists the references whose simultaneous interval with
    the leader includes zero (``separated`` false), which is worth saying.

    Parameters
    ----------
    summary, pairwise : pandas.DataFrame
        A bootstrap result's ``summary`` and ``pairwise``.
    role : {"candidate", "reference"}

    Returns
    -------
    list of str
        In point-CRS order (the leader first).

    Examples
    --------
    >>> summary = pd.DataFrame({"encoder": ["a", "r", "b", "c"], "role": ["candidate", "reference", "candidate",
    ...                         "candidate"], "rank": pd.array([1, None, 2, 3], dtype="Int64"),
    ...                         "in_tier": [True, False, True, False]})
    >>> pairwise = pd.DataFrame({"encoder_a": ["a", "a", "a"], "encoder_b": ["r", "b", "c"],
    ...                          "separated": [False, False, True]})
    >>> tied_with_leader(summary, pairwise), tied_with_leader(summary, pairwise, role="reference")
    (['a', 'b'], ['r'])
    """
    if role not in ("candidate", "reference"):
        raise ConfigError(f"parameter 'role' must be 'candidate' or 'reference', found {role!r}")
    for column in ("encoder", "role", "rank", "in_tier"):
        if column not in summary.columns:
            raise SchemaError(f"tied_with_leader: the summary lacks column {column!r}")
    candidates = summary[summary["role"] == "candidate"]
    if candidates.empty:
        raise SchemaError("tied_with_leader: the summary holds no candidate")
    leader = str(candidates.loc[candidates["rank"].astype(float).idxmin(), "encoder"])
    if role == "candidate":
        members = candidates[candidates["in_tier"].astype(bool)]["encoder"].astype(str).tolist()
        return [leader] + [m for m in members if m != leader]
    if "separated" not in pairwise.columns:
        raise SchemaError("tied_with_leader: the pairwise table lacks column 'separated'")
    tied = []
    for name in summary.loc[summary["role"] == "reference", "encoder"].astype(str):
        pair = pairwise[((pairwise["encoder_a"] == leader) & (pairwise["encoder_b"] == name))
                        | ((pairwise["encoder_a"] == name) & (pairwise["encoder_b"] == leader))]
        if pair.empty:
            raise SchemaError(f"tied_with_leader: no pairwise row for {leader!r} and {name!r}")
        if not bool(pair["separated"].iloc[0]):
            tied.append(name)
    return tied


def paired_seed_bootstrap(
    results: pd.DataFrame | ValidatedResults,
    standard: ReferenceStandard | str | os.PathLike[str] | None,
    n_draws: int = 1000,
    random_state: int = 0,
    top_k: int = 3,
    arm: str = "frozen",
    interval: float = 0.95,
    references: Sequence[str] = (),
) -> BootstrapResult:
    """Paired-seed bootstrap of the CRS against a fixed standard.

    Parameters
    ----------
    results : pandas.DataFrame or ValidatedResults
        Results table with the same seeds for every encoder and dataset.
    standard : ReferenceStandard, path or None
        The fixed standard (``None``: the shipped default).
    n_draws : int
        Number of bootstrap draws (method section 6, item 2: 1000).
    random_state : int
        Seed of the resampling.
    top_k : int
        The k of P(top k).
    arm : {"frozen", "lora"}
    interval : float
        Coverage of the percentile intervals.
    references : sequence of str
        Encoders shown as references (e.g. one pretrained on the evaluation
        labels): scored and summarised like the others, but not ranked, so they
        take no candidate's rank or top-k place (``rank``, ``p_rank1`` and
        ``p_top{k}`` are missing for them).

    Returns
    -------
    BootstrapResult

    Raises
    ------
    SchemaError
        If the table is malformed or unpaired (a seed missing somewhere).
    ReferenceStandardError
        If the standard's panel is empty or its ECE binning differs.
    ConfigError
        On an invalid parameter.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring.freeze import freeze_standard
    >>> table = synthetic_results(n_encoders=4, seeds=(0, 1, 2), corruptions=("noise",))
    >>> standard = freeze_standard(table, "demo", created="2026-01-01T00:00:00Z")
    >>> result = paired_seed_bootstrap(table, standard, n_draws=200, top_k=2)
    >>> result.crs_draws.shape, len(result.pairwise), float(result.summary["p_rank1"].sum())
    ((200, 4), 6, 1.0)
    """
    std = as_standard(standard)
    std.require_panel()
    table = as_validated(results)
    raw = standard_axes(table, std, arm=arm)
    check_ece_bins(table.frame, std, arm)
    encoders, _, seeds, values = per_seed_axes(raw)
    _check_parameters(n_draws, top_k, interval, len(encoders))
    reference = _reference_mask(encoders, references, int(top_k))
    profile_table = encoder_profiles(raw)
    point = score_profiles(profile_table, std)
    full_panel = point.set_index("encoder").loc[encoders, "crs"].to_numpy()
    own_out = _leave_self_out_components(profile_table.loc[encoders].to_numpy()[None], encoders, std)[0]
    rows = [encoders.index(e) for e in point["encoder"]]
    point["dominance"] = own_out[rows, 0]
    point["crs"] = own_out[rows, 3]
    point["rank"] = descending_ranks(point["crs"].to_numpy(), ties="min").astype("int64")
    point = point.sort_values(["rank", "encoder"], kind="mergesort").reset_index(drop=True)

    multiplicities = seed_multiplicities(len(seeds), int(n_draws), random_state)
    profiles = resampled_profiles(values, multiplicities)  # (B, E, 4)
    crs = _leave_self_out_crs(profiles, encoders, std)

    position = {name: i for i, name in enumerate(encoders)}
    summary, pairwise = _draw_summary(crs, encoders, point, np.asarray([position[e] for e in point["encoder"]]),
                                      int(top_k), interval, reference, full_panel)
    return BootstrapResult(
        encoders=tuple(encoders),
        seeds=tuple(seeds),
        crs_draws=crs,
        point=point,
        summary=summary,
        pairwise=pairwise,
        top_k=int(top_k),
        n_draws=int(n_draws),
        interval=float(interval),
        random_state=int(random_state),
    )

def _leave_self_out_components(profiles: np.ndarray, encoders: Sequence[str], std: ReferenceStandard) -> np.ndarray:
    """Dominance, balance, floor and CRS (B, E, 4), each encoder against the panel without its own entry."""
    panel = std.require_panel()
    names = list(std.panel_names)
    n_b, n_e = profiles.shape[:2]
    normalised = normalise_array(profiles.reshape(n_b * n_e, -1), std.worst, std.best).reshape(n_b, n_e, -1)
    out = np.empty((n_b, n_e, 4))
    for e, name in enumerate(encoders):
        keep = np.array([other != name for other in names], dtype=bool)
        if not keep.any():
            raise ReferenceStandardError(f"the panel holds only '{name}': nothing to compare it with")
        out[:, e] = component_arrays(normalised[:, e], panel[keep], std.weight_vector, std.dominance_noise)
    return out


def _leave_self_out_crs(profiles: np.ndarray, encoders: Sequence[str], std: ReferenceStandard) -> np.ndarray:
    """CRS (B, E) with each encoder scored against the panel without its own entry."""
    return _leave_self_out_components(profiles, encoders, std)[:, :, 3]


def paired_reference_se(
    profile_draws: np.ndarray, crs_draws: np.ndarray, encoders: Sequence[str], reference: str
) -> pd.DataFrame:
    """Standard errors of every encoder's paired difference with a reference, per axis and for the CRS.

    Parameters
    ----------
    profile_draws : numpy.ndarray
        (B, E, 4) raw profile draws (D, C, L, R) of the bootstrap.
    crs_draws : numpy.ndarray
        (B, E) CRS draws of the same bootstrap.
    encoders : sequence of str
        The E column names.
    reference : str
        The reference encoder.

    Returns
    -------
    pandas.DataFrame
        Index encoder (the reference left out); columns CRS, D, C, L, R: the
        standard deviation over draws of ``x_encoder - x_reference`` (the same
        resampled seeds and images for both, so shared luck cancels).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> profiles, crs = rng.normal(size=(50, 3, 4)), rng.normal(size=(50, 3))
    >>> paired_reference_se(profiles, crs, ["a", "b", "r"], "r").round(2).columns.tolist()
    ['CRS', 'D', 'C', 'L', 'R']
    """
    names = [str(e) for e in encoders]
    if reference not in names:
        raise ValueError(f"paired_reference_se: no column for reference {reference!r}")
    at = names.index(reference)
    profiles = np.asarray(profile_draws, dtype=float)
    crs = np.asarray(crs_draws, dtype=float)
    if profiles.shape[:2] != crs.shape or profiles.shape[1] != len(names):
        raise ValueError(f"paired_reference_se: draws of shapes {profiles.shape} and {crs.shape} for {len(names)} encoders")
    rows = {}
    for i, name in enumerate(names):
        if i == at:
            continue
        axes = (profiles[:, i, :] - profiles[:, at, :]).std(axis=0, ddof=1)
        rows[name] = [float((crs[:, i] - crs[:, at]).std(ddof=1)), *map(float, axes)]
    return pd.DataFrame.from_dict(rows, orient="index", columns=["CRS", "D", "C", "L", "R"])
