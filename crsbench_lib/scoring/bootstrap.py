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
:func:`two_level_bootstrap` resamples the test images as well, from the stored
per-image predictions; :func:`paired_seed_bootstrap` works from a results table
alone and resamples the seeds only.

Vectorised: the per-seed raw axes are computed once as an
(encoder, dataset, seed, axis) array; a draw is a vector of seed multiplicities,
so all draws' profiles are one tensor contraction. In the two-level bootstrap a
draw of test images is a vector of image multiplicities: each score vector is
sorted once, and its weighted Mann-Whitney AUROC under every draw is one pass
over that fixed order in a compiled kernel (numba), in exact integers.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numba import njit

from crsbench_lib.errors import ConfigError, ReferenceStandardError, SchemaError
from crsbench_lib.results.predictions import DatasetPredictions
from crsbench_lib.scoring.axes import encoder_profiles, per_seed_axes, raw_axes
from crsbench_lib.scoring.crs import component_arrays, normalise_array, rank_descending, score_profiles
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard, as_standard, check_ece_bins


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
        reference). See :func:`interval_summary`.
    pairwise : pandas.DataFrame
        Per pair (encoder_a above encoder_b at the point): diff (point
        CRS_a - CRS_b), diff_low, diff_high (percentile interval),
        overlaps_zero, p_a_above_b, diff_bias (mean of the draws less the
        point), diff_basic_low, diff_basic_high (basic interval) and
        diff_point_inside (the point lies inside its percentile interval).
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
    roles = np.where(is_reference[order], "reference", "candidate")
    rank = pd.array([pd.NA] * n_e, dtype="Int64")
    candidate_rows = np.flatnonzero(roles == "candidate")
    rank[candidate_rows] = rank_descending(point_crs[candidate_rows]).astype("int64")
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
    })
    return summary, pairwise


def tied_with_leader(summary: pd.DataFrame, pairwise: pd.DataFrame, role: str = "candidate") -> list[str]:
    """The encoders the draws cannot separate from the leader.

    The leader is the candidate of rank 1 (highest point CRS among the
    candidates). Another encoder is tied with it when the percentile interval
    of the paired difference ``CRS_leader - CRS_other`` includes zero
    (``overlaps_zero`` of the pairwise table).

    Parameters
    ----------
    summary, pairwise : pandas.DataFrame
        A bootstrap result's ``summary`` and ``pairwise``.
    role : {"candidate", "reference"}
        Whose ties to list: the candidates (the leader first, then every tied
        candidate: the leading tier's members) or the references tied with the
        leader (never members of the tier, but worth saying).

    Returns
    -------
    list of str
        In point-CRS order.

    Examples
    --------
    >>> summary = pd.DataFrame({"encoder": ["a", "r", "b", "c"], "role": ["candidate", "reference", "candidate",
    ...                         "candidate"], "rank": pd.array([1, None, 2, 3], dtype="Int64")})
    >>> pairwise = pd.DataFrame({"encoder_a": ["a", "a", "a"], "encoder_b": ["r", "b", "c"],
    ...                          "overlaps_zero": [True, True, False]})
    >>> tied_with_leader(summary, pairwise), tied_with_leader(summary, pairwise, role="reference")
    (['a', 'b'], ['r'])
    """
    if role not in ("candidate", "reference"):
        raise ConfigError(f"parameter 'role' must be 'candidate' or 'reference', found {role!r}")
    for column in ("encoder", "role", "rank"):
        if column not in summary.columns:
            raise SchemaError(f"tied_with_leader: the summary lacks column {column!r}")
    candidates = summary[summary["role"] == "candidate"]
    if candidates.empty:
        raise SchemaError("tied_with_leader: the summary holds no candidate")
    leader = str(candidates.loc[candidates["rank"].astype(float).idxmin(), "encoder"])
    members = [leader] if role == "candidate" else []
    for name in summary.loc[summary["role"] == role, "encoder"].astype(str):
        if name == leader:
            continue
        pair = pairwise[((pairwise["encoder_a"] == leader) & (pairwise["encoder_b"] == name))
                        | ((pairwise["encoder_a"] == name) & (pairwise["encoder_b"] == leader))]
        if pair.empty:
            raise SchemaError(f"tied_with_leader: no pairwise row for {leader!r} and {name!r}")
        if bool(pair["overlaps_zero"].iloc[0]):
            members.append(name)
    return members


def paired_seed_bootstrap(
    results: pd.DataFrame,
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
    results : pandas.DataFrame
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
    raw = raw_axes(results, arm=arm, label_fractions=std.label_fractions)
    check_ece_bins(results, std, arm)
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
    point["rank"] = rank_descending(point["crs"].to_numpy()).astype("int64")
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


# =========================================================================== two-level, from predictions
#
# method section 9, amendment 4. Each draw resamples the seeds (with
# replacement) and, per dataset, the test images (a multinomial draw of the
# stable image indices, the same for every encoder, seed and condition: the
# corrupted images take the multiplicities of the clean images they were made
# from, the site-B test gets its own draw). The four raw axes are recomputed
# from the stored predictions under those multiplicities, exactly as the
# results table computes them from all images with multiplicity one.


@njit(cache=False, nogil=True)
def _mann_whitney_numerators(order: np.ndarray, positive: np.ndarray, group_end: np.ndarray,
                             weights_t: np.ndarray) -> np.ndarray:
    """``sum_{i pos} w_bi (W_neg,b(< s_i) + W_neg,b(<= s_i))`` for every item and draw, (items, B).

    One pass per item over its images in score order, a tie group at a time:
    its positives take the negative weight below the group, its negatives are
    added, its positives take the negative weight up to the group's end. The
    inner loops run over the draws (contiguous, so the compiler vectorises
    them), carrying each draw's cumulative negative weight.

    Parameters
    ----------
    order : numpy.ndarray
        ``(items, n)`` image positions sorted by each item's score.
    positive : numpy.ndarray
        ``(items, n)`` bool: whether the image at that position of ``order`` is positive.
    group_end : numpy.ndarray
        ``(items, n)`` bool: whether that position closes a group of equal scores.
    weights_t : numpy.ndarray
        ``(n, B)`` integer multiplicities (images are rows).

    Returns
    -------
    numpy.ndarray
        ``(items, B)`` int64.
    """
    items, n = order.shape
    n_draws = weights_t.shape[1]
    out = np.zeros((items, n_draws), dtype=np.int64)
    below = np.empty(n_draws, dtype=np.int64)
    for t in range(items):
        below[:] = 0
        total = out[t]
        start = 0
        while start < n:
            stop = start
            while not group_end[t, stop]:
                stop += 1
            if stop == start:  # an untied score: both halves see the same negatives
                row = weights_t[order[t, start]]
                if positive[t, start]:
                    for b in range(n_draws):
                        total[b] += 2 * row[b] * below[b]
                else:
                    for b in range(n_draws):
                        below[b] += row[b]
            else:
                for j in range(start, stop + 1):  # strictly below the group
                    if positive[t, j]:
                        row = weights_t[order[t, j]]
                        for b in range(n_draws):
                            total[b] += row[b] * below[b]
                for j in range(start, stop + 1):
                    if not positive[t, j]:
                        row = weights_t[order[t, j]]
                        for b in range(n_draws):
                            below[b] += row[b]
                for j in range(start, stop + 1):  # up to the group's end
                    if positive[t, j]:
                        row = weights_t[order[t, j]]
                        for b in range(n_draws):
                            total[b] += row[b] * below[b]
            start = stop + 1
    return out


def _weighted_auroc(scores: np.ndarray, positive: np.ndarray, weights_t: np.ndarray) -> np.ndarray:
    """AUROC of every item's scores under every draw's image multiplicities.

    ``AUROC = sum_{i pos} w_i (W_neg(< s_i) + W_neg(<= s_i)) / (2 W_pos W_neg)``,
    the Mann-Whitney statistic of the resampled set (each image counted with its
    multiplicity, ties one half; Mann and Whitney 1947; Hanley and McNeil 1982),
    in exact integer arithmetic. The score order and its tie groups are fixed
    per item, so they are found once and every draw is one scan of them
    (:func:`_mann_whitney_numerators`).

    Parameters
    ----------
    scores : numpy.ndarray
        ``(items, n)`` float64.
    positive : numpy.ndarray
        ``(n,)`` bool outcomes, the same for every item.
    weights_t : numpy.ndarray
        Integer ``(n, B)``: multiplicity of each image (rows) in each draw (columns).

    Returns
    -------
    numpy.ndarray
        ``(items, B)``; NaN where a draw has no positive or no negative.
    """
    order = np.argsort(scores, axis=1)  # the order within a tie group does not matter
    ordered = np.take_along_axis(scores, order, axis=1)
    group_end = np.ones(ordered.shape, dtype=bool)
    group_end[:, :-1] = ordered[:, 1:] != ordered[:, :-1]
    numerator2 = _mann_whitney_numerators(order, positive[order], group_end, weights_t)
    total_pos = weights_t[positive].sum(axis=0, dtype=np.int64)
    total_neg = weights_t[~positive].sum(axis=0, dtype=np.int64)
    denominator = 2 * total_pos[None, :] * total_neg[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator2 / np.maximum(denominator, 1), np.nan)


def _class_aurocs(proba: np.ndarray, labels: np.ndarray, task: str, weights: np.ndarray) -> np.ndarray:
    """AUROC per class (label) ``(K, items, B)`` of probabilities (items, n, W) under draw multiplicities (B, n).

    One-vs-rest per class for multiclass tasks, per label for multi-label
    ones, the positive class for binary ones (``K = 1``); NaN where a draw has
    a single outcome.
    """
    items, n, width = proba.shape
    if task == "binary":
        targets = [(proba[:, :, 0], labels == 1)]
    elif task == "multiclass":
        targets = [(proba[:, :, k], labels == k) for k in range(width)]
    else:
        targets = [(proba[:, :, k], labels[:, k] == 1) for k in range(width)]
    per_class = np.empty((len(targets), items, weights.shape[0]))
    weights_t = np.ascontiguousarray(weights.T, dtype=np.int32)  # images as rows: one row per kernel step
    for k, (scores, positive) in enumerate(targets):
        per_class[k] = _weighted_auroc(scores.astype(np.float64), positive, weights_t)
    return per_class


def _macro_auroc(proba: np.ndarray, labels: np.ndarray, task: str, weights: np.ndarray) -> np.ndarray:
    """Macro-AUROC (items, B) of probabilities (items, n, W) under draw multiplicities (B, n).

    Classes (labels) without both outcomes in a draw are skipped, as in
    :func:`crsbench_lib.evaluation.metrics.macro_auroc`.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a draw with no class defined stays NaN
        return np.nanmean(_class_aurocs(proba, labels, task, weights), axis=0)


def class_auroc(proba: np.ndarray, labels: np.ndarray, task: str) -> np.ndarray:
    """AUROC of each class (label) of each item's predictions on the same test images.

    The Mann-Whitney statistic ``AUROC_k = P(s_k(pos) > s_k(neg)) + P(tie) / 2``
    of class ``k``'s scores against its one-vs-rest outcomes (Hanley and McNeil
    1982), the terms whose mean is the macro-AUROC of
    :func:`crsbench_lib.evaluation.metrics.macro_auroc`; computed by the
    bootstrap's kernel with every image counted once.

    Parameters
    ----------
    proba : numpy.ndarray
        ``(items, n, W)`` probabilities, in the stored format of
        :class:`~crsbench_lib.results.predictions.DatasetPredictions` (``W = 1``,
        the positive class, for binary tasks).
    labels : numpy.ndarray
        ``(n,)`` class indices, or ``(n, L)`` 0/1 for multi-label tasks.
    task : {"binary", "multiclass", "multilabel"}

    Returns
    -------
    numpy.ndarray
        ``(items, K)`` float64; NaN for a class with a single outcome.

    Examples
    --------
    >>> proba = np.array([[[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]]])
    >>> class_auroc(proba, np.array([0, 1, 1]), "multiclass").round(3).tolist()
    [[1.0, 1.0]]
    """
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 3 or proba.shape[1] != len(labels):
        raise SchemaError(f"class_auroc: expected probabilities (items, {len(labels)}, W), got {proba.shape}")
    ones = np.ones((1, proba.shape[1]), dtype=np.int32)
    return _class_aurocs(proba, np.asarray(labels), task, ones)[:, :, 0].T


def _weighted_ece(proba: np.ndarray, labels: np.ndarray, task: str, weights: np.ndarray, n_bins: int) -> np.ndarray:
    """Binned ECE (items, B) under draw multiplicities, as :func:`~crsbench_lib.evaluation.metrics.expected_calibration_error`.

    ``ECE_b = sum_m |sum_{i in B_m} w_bi (o_i - c_i)| / sum_i w_bi``: one matrix
    product of the multiplicities with the per-bin gaps of every item.
    """
    items, n, width = proba.shape
    p = proba.astype(np.float64)
    if task == "multiclass":
        pairs = [(p.max(axis=2), (p.argmax(axis=2) == labels[None, :]).astype(np.float64))]
    elif task == "binary":
        pairs = [(p[:, :, 0], np.broadcast_to((labels == 1).astype(np.float64), (items, n)))]
    else:
        pairs = [(p[:, :, k], np.broadcast_to(labels[:, k].astype(np.float64), (items, n))) for k in range(width)]
    edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    weights = weights.astype(np.float64)
    total = weights.sum(axis=1)
    out = np.zeros((items, weights.shape[0]))
    for confidence, outcome in pairs:
        index = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)  # (items, n)
        gaps = np.zeros((n, items, n_bins))
        np.put_along_axis(gaps, index.T[:, :, None], (outcome - confidence).T[:, :, None], axis=2)
        binned = weights @ gaps.reshape(n, items * n_bins)  # (B, items * bins)
        out += np.abs(binned.reshape(-1, items, n_bins)).sum(axis=2).T / total[None, :]
    return out / len(pairs)


def _draw_seeds(rng: np.random.Generator, n_seeds: int, n_draws: int) -> np.ndarray:
    picks = rng.integers(0, n_seeds, size=(n_draws, n_seeds))
    return (picks[:, :, None] == np.arange(n_seeds)[None, None, :]).sum(axis=1)


def _draw_images(rng: np.random.Generator, n_images: int, n_draws: int) -> np.ndarray:
    """Multiplicities (n_draws, n_images) of a bootstrap resample of image indices (int16: small, exact)."""
    picks = rng.integers(0, n_images, size=(n_draws, n_images))
    counts = np.zeros((n_draws, n_images), dtype=np.int16)
    np.add.at(counts, (np.repeat(np.arange(n_draws), n_images), picks.ravel()), 1)
    return counts


def _fill_seed(
    out: np.ndarray, data: DatasetPredictions, s: int, weights: np.ndarray, shift_weights: np.ndarray | None,
    fractions: Sequence[float], seed_counts: np.ndarray,
) -> None:
    """Write seed ``s``'s raw axes into ``out`` (E, S, B, 4), in the draws that pick the seed only.

    About 70 % of the draws pick a given seed of three; elsewhere the axes stay 0
    and carry weight 0 in the profile.
    """
    drawn = np.flatnonzero(seed_counts[:, s] > 0)
    one = replace(
        data,
        seeds=(data.seeds[s],),
        clean=data.clean[:, s : s + 1],
        fraction_proba=data.fraction_proba[:, s : s + 1],
        corrupted_proba=data.corrupted_proba[:, s : s + 1],
        shift_proba=None if data.shift_proba is None else data.shift_proba[:, s : s + 1],
    )
    out[:, s, drawn] = _seed_axes(
        one, weights[drawn], None if shift_weights is None else shift_weights[drawn], fractions
    )[:, 0]


def _seed_axes(
    data: DatasetPredictions, weights: np.ndarray, shift_weights: np.ndarray | None, fractions: Sequence[float],
) -> np.ndarray:
    """Raw axes (E, S, B, 4) of every encoder and seed of ``data`` under multiplicities (B, n)."""
    n_enc, n_seed = len(data.encoders), len(data.seeds)
    n_draws = weights.shape[0]
    items = n_enc * n_seed

    def flat(array: np.ndarray) -> np.ndarray:  # (E, S, n, W) -> (E*S, n, W)
        return array.reshape(items, *array.shape[2:])

    clean = flat(data.clean)
    d_axis = _macro_auroc(clean, data.labels, data.task, weights)
    c_axis = _weighted_ece(clean, data.labels, data.task, weights, data.ece_bins)

    wanted = [f for f in (round(float(x), 9) for x in fractions) if f < 1.0]
    l_axis = np.full((items, n_draws), np.nan)
    if wanted:
        missing = [f for f in wanted if f not in data.fractions]
        if missing and len(missing) < len(wanted):
            raise SchemaError(f"predictions of dataset '{data.dataset}' lack label fraction {missing[0]!r}")
        if not missing:
            ratios = np.zeros((items, n_draws))
            for f in wanted:
                at = data.fraction_proba[:, :, data.fractions.index(f)]
                ratios += _macro_auroc(flat(at), data.labels, data.task, weights) / d_axis
            l_axis = ratios / len(wanted)

    losses = []
    if data.corruptions:
        # Each condition's loss pairs it with the clean AUROC of its own images in the
        # same draw; conditions on the same image block (under the per-family layout a
        # family's severities, under the per-condition one every 16th condition of a
        # 2,000-image split) share that reference and are scored together.
        n_c = len(data.corruptions)
        loss = np.empty((items, n_c, n_draws))
        blocks: dict[bytes, list[int]] = {}
        for c in range(n_c):
            blocks.setdefault(data.corrupted_images[c].tobytes(), []).append(c)
        for members in blocks.values():
            images = data.corrupted_images[members[0]]
            sub = weights[:, images]
            sub_labels = data.labels[images]
            reference = _macro_auroc(clean[:, images], sub_labels, data.task, sub)
            block = data.corrupted_proba[:, :, members]
            stacked = block.reshape(items * len(members), *block.shape[3:])
            corrupted = _macro_auroc(stacked, sub_labels, data.task, sub).reshape(items, len(members), n_draws)
            loss[:, members] = np.maximum(0.0, reference[:, None, :] - corrupted)
        families = sorted({c for c, _ in data.corruptions})
        per_family = np.stack(
            [loss[:, [i for i, (c, _) in enumerate(data.corruptions) if c == fam]].mean(axis=1) for fam in families],
            axis=1,
        )
        losses += [loss.mean(axis=1), per_family.max(axis=1)]
    if data.shift_proba is not None and shift_weights is not None:
        shift = _macro_auroc(flat(data.shift_proba), data.shift_labels, data.task, shift_weights)
        losses.append(np.maximum(0.0, d_axis - shift))
    r_axis = np.mean(losses, axis=0) if losses else np.full((items, n_draws), np.nan)
    axes = np.stack([d_axis, c_axis, l_axis, r_axis], axis=-1)  # (items, B, 4)
    return axes.reshape(n_enc, n_seed, n_draws, len(AXES))


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
        out[:, e] = component_arrays(normalised[:, e], panel[keep], std.weight_vector)
    return out


def _leave_self_out_crs(profiles: np.ndarray, encoders: Sequence[str], std: ReferenceStandard) -> np.ndarray:
    """CRS (B, E) with each encoder scored against the panel without its own entry."""
    return _leave_self_out_components(profiles, encoders, std)[:, :, 3]


def bias_decomposition(
    profile_draws: np.ndarray,
    point_profiles: pd.DataFrame,
    standard: ReferenceStandard | str | os.PathLike[str] | None,
) -> pd.DataFrame:
    """Where the bootstrap bias of the CRS comes from, per encoder.

    Two sources add up to the bias of the CRS draws (mean of the draws less
    the point, leave-self-out panel as in :func:`two_level_bootstrap`):

    * the axes' own resampling bias: a raw axis whose draws centre away from
      its point (binned ECE, a sum of absolute gaps, rises when images are
      resampled with replacement) moves every draw's profile the same way,
      while the panel entries stay as measured once;
    * the nonlinearity of the CRS: even with unbiased axes, a nonlinear score
      of noisy axes is biased (Jensen's inequality). Dominance (a share of
      panel members beaten on *every* axis) and the floor (a minimum) are
      non-smooth, the balance term is curved and the anchors clip; the net can
      go either way (a minimum loses more in unlucky draws than it gains in
      lucky ones, while dominance near a panel member can gain). The column
      keeps its name, ``from_nonsmooth``.

    The second is measured by recentring each encoder's profile draws on its
    point profile (subtracting the mean shift of every axis) and rescoring;
    the first is the rest. Efron & Tibshirani (1993, chapter 10) define the
    bootstrap bias estimate used here.

    Parameters
    ----------
    profile_draws : numpy.ndarray
        (B, E, 4) raw profiles of the draws (``profile_draws`` of a
        :class:`TwoLevelBootstrapResult`).
    point_profiles : pandas.DataFrame
        The un-resampled raw profiles, index encoder (the column order of the
        draws), columns D, C, L, R.
    standard : ReferenceStandard, path or None
        The fixed standard the draws were scored against.

    Returns
    -------
    pandas.DataFrame
        One row per encoder (index order of ``point_profiles``): ``bias``,
        ``from_axes``, ``from_nonsmooth`` (the two sources, summing to
        ``bias``); ``dominance``, ``balance``, ``floor`` (each component's
        weighted bias, summing to ``bias``); per axis, ``D`` ... ``R`` (the raw
        axis's bias, its unit) and ``D_se`` ... ``R_se`` (that bias in
        standard deviations of its draws, signed so that a negative value is a
        change for the worse).

    Raises
    ------
    ConfigError
        If the shapes disagree.

    Examples
    --------
    >>> from crsbench_lib.results.synthetic import synthetic_results
    >>> from crsbench_lib.scoring.freeze import freeze_standard
    >>> from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
    >>> table = synthetic_results(n_encoders=3, seeds=(0, 1, 2), corruptions=("noise",))
    >>> standard = freeze_standard(table, "demo", created="2026-01-01T00:00:00Z")
    >>> point = encoder_profiles(raw_axes(table))[list(AXES)]
    >>> draws = np.repeat(point.to_numpy()[None], 4, axis=0)  # draws equal to the point: no bias
    >>> float(bias_decomposition(draws, point, standard)["bias"].abs().max())
    0.0
    """
    std = as_standard(standard)
    encoders = [str(e) for e in point_profiles.index]
    point = point_profiles[list(AXES)].to_numpy(dtype=float)
    draws = np.asarray(profile_draws, dtype=float)
    if draws.ndim != 3 or draws.shape[1:] != point.shape:
        raise ConfigError(f"bias_decomposition: expected profile draws (B, {point.shape[0]}, {len(AXES)}), "
                          f"found {draws.shape}")
    at_point = _leave_self_out_components(point[None], encoders, std)[0]  # (E, 4)
    components = _leave_self_out_components(draws, encoders, std)  # (B, E, 4)
    shift = draws.mean(axis=0) - point  # (E, 4)
    recentred = _leave_self_out_crs(draws - shift[None], encoders, std)  # (B, E)
    weights = std.weight_vector
    total = components[:, :, 3].mean(axis=0) - at_point[:, 3]
    nonsmooth = recentred.mean(axis=0) - at_point[:, 3]
    spread = draws.std(axis=0, ddof=1) if draws.shape[0] > 1 else np.zeros_like(point)
    sign = np.array([1.0 if HIGHER_IS_BETTER[a] else -1.0 for a in AXES])
    with np.errstate(divide="ignore", invalid="ignore"):
        in_se = np.where(spread > 0, sign * shift / np.where(spread > 0, spread, 1.0), 0.0)
    out = pd.DataFrame({
        "bias": total,
        "from_axes": total - nonsmooth,
        "from_nonsmooth": nonsmooth,
        **{name: weights[i] * (components[:, :, i].mean(axis=0) - at_point[:, i])
           for i, name in enumerate(("dominance", "balance", "floor"))},
        **{axis: shift[:, a] for a, axis in enumerate(AXES)},
        **{f"{axis}_se": in_se[:, a] for a, axis in enumerate(AXES)},
    }, index=pd.Index(encoders, name="encoder"))
    return out


@dataclass(frozen=True, eq=False)
class TwoLevelBootstrapResult:
    """Outcome of :func:`two_level_bootstrap`.

    Attributes
    ----------
    encoders : tuple of str
        Column order of the draw matrices (sorted).
    seeds : tuple of int
    crs_draws : numpy.ndarray
        (n_draws, n_encoders): CRS in every draw (leave-self-out panel).
    auroc_draws : numpy.ndarray
        (n_draws, n_encoders): aggregate clean AUROC (the ``D`` profile) in every draw.
    profile_draws : numpy.ndarray
        (n_draws, n_encoders, 4): raw profiles.
    point : pandas.DataFrame
        Per encoder (point-rank order): encoder, rank, crs, auroc (no resampling,
        same leave-self-out panel).
    point_profiles : pandas.DataFrame
        The un-resampled raw profiles (index encoder, columns D, C, L, R), equal
        to :func:`~crsbench_lib.scoring.axes.encoder_profiles` of the table the
        predictions produce.
    summary : pandas.DataFrame
        Per encoder in point-CRS order: role, rank among the candidates, crs,
        the draws' median, mean, standard error and bias, the percentile and
        basic intervals, point_inside, p_rank1, p_top{k} (see :func:`_draw_summary`).
    pairwise : pandas.DataFrame
        Per pair (a ranked above b at the point): diff, diff_low, diff_high,
        overlaps_zero, p_a_above_b.
    n_distinct : int
        Distinct resamples among the draws (seed multiplicities and image
        multiplicities of every dataset together).
    n_distinct_seed_draws : int
        Distinct seed resamples alone.
    top_k, n_draws, interval, random_state
        The parameters.
    """

    encoders: tuple[str, ...]
    seeds: tuple[int, ...]
    crs_draws: np.ndarray
    auroc_draws: np.ndarray
    profile_draws: np.ndarray
    point: pd.DataFrame
    point_profiles: pd.DataFrame
    summary: pd.DataFrame
    pairwise: pd.DataFrame
    n_distinct: int
    n_distinct_seed_draws: int
    top_k: int
    n_draws: int
    interval: float
    random_state: int


def _profiles(axes: dict[str, np.ndarray], seed_counts: np.ndarray) -> np.ndarray:
    """Profiles (B, E, 4): seed-multiplicity-weighted mean over seeds, then mean over available datasets."""
    per_dataset = []
    for values in axes.values():  # (E, S, B, 4)
        weights = seed_counts.T[None, :, :, None].astype(float)  # (1, S, B, 1)
        per_dataset.append((values * weights).sum(axis=1) / weights.sum(axis=1))  # (E, B, 4)
    stacked = np.stack(per_dataset)  # (D, E, B, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        profile = np.nanmean(stacked, axis=0)  # (E, B, 4)
    return np.transpose(profile, (1, 0, 2))


def two_level_bootstrap(
    predictions: Mapping[str, DatasetPredictions],
    standard: ReferenceStandard | str | os.PathLike[str] | None,
    n_draws: int = 1000,
    random_state: int = 0,
    top_k: int = 3,
    interval: float = 0.95,
    n_jobs: int | None = None,
    references: Sequence[str] = (),
) -> TwoLevelBootstrapResult:
    """Two-level paired bootstrap of the CRS ranking from stored predictions.

    Each draw resamples the seeds (with replacement, the same for every encoder
    and dataset) and, per dataset, the test images (the same indices for every
    encoder, seed and condition; site B drawn separately), recomputes the four
    raw axes from the predictions under those multiplicities (macro-AUROC by the
    weighted Mann-Whitney statistic, binned ECE, ``L`` and ``R`` as in
    :func:`~crsbench_lib.scoring.axes.raw_axes`), normalises them with the
    standard's fixed anchors and scores every encoder against the standard's
    panel **without its own entry**, so no draw compares an encoder with
    itself (method section 9, amendment 4). The point estimate uses the
    same leave-self-out panel.

    Parameters
    ----------
    predictions : mapping
        Dataset -> :class:`~crsbench_lib.results.predictions.DatasetPredictions`
        of one arm (:func:`~crsbench_lib.results.predictions.load_prediction_arrays`),
        with the same encoders and seeds on every dataset.
    standard : ReferenceStandard, path or None
        The fixed standard (``None``: the shipped default).
    n_draws : int
        Number of draws.
    random_state : int
        Seed of the resampling.
    top_k : int
        The k of P(top k).
    interval : float
        Coverage of the percentile intervals.
    n_jobs : int, optional
        Threads computing seeds at once (default: the machine's cores). The
        result does not depend on it.
    references : sequence of str
        Encoders shown as references, scored but not ranked (see
        :func:`paired_seed_bootstrap`).

    Returns
    -------
    TwoLevelBootstrapResult

    Raises
    ------
    SchemaError
        If datasets disagree on encoders or seeds, or label fractions are partial.
    ReferenceStandardError
        If the panel is empty, holds only one encoder being scored, or the
        predictions' ECE bins differ from the standard's.
    ConfigError
        On an invalid parameter.

    Examples
    --------
    >>> from crsbench_lib.results.predictions import load_prediction_arrays
    >>> arrays = load_prediction_arrays(".crsbench-cache/runs/default")  # doctest: +SKIP
    >>> result = two_level_bootstrap(arrays, None, n_draws=1000)  # doctest: +SKIP
    >>> result.summary[["encoder", "p_rank1", "p_top3"]]  # doctest: +SKIP
    """
    std = as_standard(standard)
    std.require_panel()
    if not predictions:
        raise SchemaError("two_level_bootstrap: no predictions")
    datasets = sorted(predictions)
    first = predictions[datasets[0]]
    encoders, seeds = first.encoders, first.seeds
    for name in datasets:
        data = predictions[name]
        if data.encoders != encoders or data.seeds != seeds:
            raise SchemaError(
                f"two_level_bootstrap: dataset '{name}' has encoders {list(data.encoders)} and seeds "
                f"{list(data.seeds)}, dataset '{datasets[0]}' {list(encoders)} and {list(seeds)}"
            )
        if data.ece_bins != std.ece_bins:
            raise ReferenceStandardError(
                f"predictions of dataset '{name}' use {data.ece_bins} ECE bins, the standard {std.ece_bins}"
            )
    _check_parameters(n_draws, top_k, interval, len(encoders))
    reference = _reference_mask(encoders, references, int(top_k))
    n_draws = int(n_draws)
    rng = np.random.default_rng(random_state)
    seed_counts = _draw_seeds(rng, len(seeds), n_draws)  # (B, S)
    image_weights: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    digest = [hashlib.sha256() for _ in range(n_draws)]
    for b in range(n_draws):
        digest[b].update(seed_counts[b].tobytes())
    for name in datasets:
        data = predictions[name]
        weights = _draw_images(rng, data.labels.shape[0], n_draws)
        shift = None if data.shift_proba is None else _draw_images(rng, data.shift_labels.shape[0], n_draws)
        image_weights[name] = (weights, shift)
        for b in range(n_draws):
            digest[b].update(weights[b].tobytes())
            if shift is not None:
                digest[b].update(shift[b].tobytes())

    # Column 0 of every multiplicity matrix is the identity draw (every seed and image once):
    # the point estimate comes out of the same kernels as the draws.
    seed_counts = np.vstack([np.ones((1, len(seeds)), dtype=seed_counts.dtype), seed_counts])
    for name, (weights, shift) in image_weights.items():
        image_weights[name] = (
            np.vstack([np.ones((1, weights.shape[1]), weights.dtype), weights]),
            None if shift is None else np.vstack([np.ones((1, shift.shape[1]), shift.dtype), shift]),
        )
    fractions = std.label_fractions
    # One task per (dataset, seed), in threads: the kernels run in numpy, which releases the GIL.
    axes = {name: np.zeros((len(encoders), len(seeds), n_draws + 1, len(AXES))) for name in datasets}
    tasks = [(name, s) for name in datasets for s in range(len(seeds))]
    workers = max(1, (os.cpu_count() or 1) if n_jobs is None else int(n_jobs))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(_fill_seed, axes[name], predictions[name], s, *image_weights[name], fractions,
                        seed_counts)
            for name, s in tasks
        ]
        for future in futures:
            future.result()
    all_profiles = _profiles(axes, seed_counts)  # (1 + B, E, 4)
    for a, axis in enumerate(AXES):
        unavailable = np.isnan(all_profiles[:, :, a]).all(axis=0)
        if unavailable.any():
            raise SchemaError(f"encoder '{encoders[int(np.argmax(unavailable))]}' has axis {axis} unavailable")
    all_crs = _leave_self_out_crs(all_profiles, encoders, std)
    profiles, crs = all_profiles[1:], all_crs[1:]
    point_crs, point_auroc = all_crs[0], all_profiles[0, :, 0]
    order = np.lexsort((np.arange(len(encoders)), -point_crs))
    point = pd.DataFrame({
        "encoder": [encoders[i] for i in order],
        "rank": np.arange(1, len(encoders) + 1),
        "crs": point_crs[order],
        "auroc": point_auroc[order],
    })

    full_panel = component_arrays(normalise_array(all_profiles[0], std.worst, std.best), std.require_panel(),
                                  std.weight_vector)[:, 3]
    summary, pairwise = _draw_summary(crs, encoders, point, order, int(top_k), interval, reference, full_panel)
    return TwoLevelBootstrapResult(
        encoders=tuple(encoders),
        seeds=tuple(seeds),
        crs_draws=crs,
        auroc_draws=profiles[:, :, 0],
        profile_draws=profiles,
        point=point,
        point_profiles=pd.DataFrame(all_profiles[0], index=pd.Index(encoders, name="encoder"), columns=list(AXES)),
        summary=summary,
        pairwise=pairwise,
        n_distinct=len({d.hexdigest() for d in digest}),
        n_distinct_seed_draws=len({row.tobytes() for row in seed_counts}),
        top_k=int(top_k),
        n_draws=n_draws,
        interval=float(interval),
        random_state=int(random_state),
    )
