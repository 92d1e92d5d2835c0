"""Paired-seed bootstrap of the CRS ranking (crs-method section 6, item 2).

Each draw resamples the seeds with replacement, the *same* resampled seeds for
every encoder and every dataset (the seeds pair the encoders: seed s fixes the
same train subsample for all of them), recomputes every encoder's profile
(mean over the resampled seeds, then over datasets) and scores it against the
fixed standard. From the draws: P(rank 1) and P(top k) per encoder, and
percentile intervals of every pairwise CRS difference.

The standard stays fixed in every draw, panel included: each encoder's own
frozen panel entry is the full-sample profile, so a draw in which an encoder
does better on every axis dominates that entry, exactly as a re-evaluated model
would. A draw that picks every seed once reproduces the profile to the last bit
(see :func:`~crsbench_lib.scoring.axes.sequential_mean`).

What the seeds vary is whatever the evaluation lets them vary. With frozen
embeddings and a deterministic convex probe, a seed changes the label-fraction
subsets (and so ``L``) and, in the LoRA arm, the adapter's training; clean,
corruption and shift rows of the frozen arm are identical across seeds. The
bootstrap's spread therefore measures seed-to-seed variation of exactly those
parts, which is narrower than a study whose seeds also redraw data splits.

Vectorised: the per-seed raw axes are computed once as an
(encoder, dataset, seed, axis) array; a draw is a vector of seed multiplicities,
so all draws' profiles are one tensor contraction.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import ConfigError
from crsbench_lib.scoring.axes import encoder_profiles, per_seed_axes, raw_axes
from crsbench_lib.scoring.crs import component_arrays, normalise_array, score_profiles
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
        The un-resampled score table (:func:`~crsbench_lib.scoring.crs.score_profiles`).
    summary : pandas.DataFrame
        Per encoder, in point-rank order: crs (point), crs_mean, crs_low,
        crs_high (percentile interval), p_rank1, p_top_k.
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


def _first_k(crs: np.ndarray, k: int) -> np.ndarray:
    """Membership (B, E) of the k highest per row; ties go to the earlier (alphabetical) encoder."""
    order = np.argsort(-crs, axis=1, kind="stable")
    member = np.zeros(crs.shape, dtype=bool)
    np.put_along_axis(member, order[:, :k], True, axis=1)
    return member


def paired_seed_bootstrap(
    results: pd.DataFrame,
    standard: ReferenceStandard | str | os.PathLike[str] | None,
    n_draws: int = 1000,
    random_state: int = 0,
    top_k: int = 3,
    arm: str = "frozen",
    interval: float = 0.95,
) -> BootstrapResult:
    """Paired-seed bootstrap of the CRS against a fixed standard.

    Parameters
    ----------
    results : pandas.DataFrame
        Results table with the same seeds for every encoder and dataset.
    standard : ReferenceStandard, path or None
        The fixed standard (``None``: the shipped default).
    n_draws : int
        Number of bootstrap draws (crs-method default 1000).
    random_state : int
        Seed of the resampling.
    top_k : int
        The k of P(top k).
    arm : {"frozen", "lora"}
    interval : float
        Coverage of the percentile intervals.

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
    """
    std = as_standard(standard)
    panel = std.require_panel()
    raw = raw_axes(results, arm=arm, label_fractions=std.label_fractions)
    check_ece_bins(results, std, arm)
    encoders, _, seeds, values = per_seed_axes(raw)
    _check_parameters(n_draws, top_k, interval, len(encoders))
    point = score_profiles(encoder_profiles(raw), std)

    multiplicities = seed_multiplicities(len(seeds), int(n_draws), random_state)
    profiles = resampled_profiles(values, multiplicities)  # (B, E, 4)
    n_b, n_e = profiles.shape[:2]
    s = normalise_array(profiles.reshape(n_b * n_e, -1), std.worst, std.best)
    crs = component_arrays(s, panel, std.weight_vector)[:, 3].reshape(n_b, n_e)

    tail = (1.0 - interval) / 2.0 * 100.0
    winners = np.argmax(crs, axis=1)  # first maximum: ties go to the alphabetical first
    p_rank1 = np.bincount(winners, minlength=n_e) / n_b
    p_top = _first_k(crs, int(top_k)).mean(axis=0)
    low, high = np.percentile(crs, [tail, 100.0 - tail], axis=0)
    position = {name: i for i, name in enumerate(encoders)}
    point_order = [position[e] for e in point["encoder"]]
    summary = pd.DataFrame(
        {
            "encoder": point["encoder"].to_numpy(),
            "rank": point["rank"].to_numpy(),
            "crs": point["crs"].to_numpy(),
            "crs_mean": crs.mean(axis=0)[point_order],
            "crs_low": low[point_order],
            "crs_high": high[point_order],
            "p_rank1": p_rank1[point_order],
            f"p_top{int(top_k)}": p_top[point_order],
        }
    )

    a_idx, b_idx = np.triu_indices(n_e, k=1)
    ordered = np.asarray(point_order)
    first, second = ordered[a_idx], ordered[b_idx]
    diffs = crs[:, first] - crs[:, second]
    d_low, d_high = np.percentile(diffs, [tail, 100.0 - tail], axis=0)
    point_crs = dict(zip(point["encoder"], point["crs"], strict=True))
    pairwise = pd.DataFrame(
        {
            "encoder_a": [encoders[i] for i in first],
            "encoder_b": [encoders[i] for i in second],
            "diff": [point_crs[encoders[i]] - point_crs[encoders[j]] for i, j in zip(first, second, strict=True)],
            "diff_low": d_low,
            "diff_high": d_high,
            "overlaps_zero": (d_low <= 0.0) & (d_high >= 0.0),
            "p_a_above_b": (diffs > 0).mean(axis=0),
        }
    )
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
