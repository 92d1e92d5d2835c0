"""Two-level paired bootstrap of the CRS ranking from stored predictions (method section 9, amendment 4).

Each draw resamples the seeds (with replacement) and, per dataset, the test
images (a multinomial draw of the stable image indices, the same for every
encoder, seed and condition: the corrupted images take the multiplicities of
the clean images they were made from, the site-B test gets its own draw). The
four raw axes are recomputed from the stored predictions under those
multiplicities, exactly as the results table computes them from all images
with multiplicity one, and scored against the fixed standard's panel without
each encoder's own entry, as in :mod:`crsbench_lib.scoring.bootstrap` (which
also summarises the draws). :func:`bias_decomposition` splits the bias of the
draws into its two sources.

Two doses of bias, one removed (method section 9, amendment 15). A raw axis that is a
nonlinear function of the images (binned ECE, a sum of absolute gaps; the
clipped corruption losses) is biased once in the point estimate and again,
by about as much, in the draws. The panel entries were measured once, so
draws compared with them would carry the second dose alone: in the v2 default
build the leader's draws sat 0.055 below its point CRS, 0.053 of it from the
axes. By default (``recentre=True``) each encoder's profile draws are
therefore recentred on its point profile (the mean shift of every axis is
subtracted) before they are scored. This keeps the fixed standard's meaning
(the panel is a constant of the standard, not data, and a new candidate scored
years later against a published panel is recentred alike), whereas resampling
the panel with the candidates works only when the panel came from the same
run and changes what the score is measured against. What remains in the
draws' bias is the nonlinearity of the CRS itself (dominance and floor), which
:func:`bias_decomposition` reports.

Vectorised: a draw of test images is a vector of image multiplicities; the
weighted macro-AUROC and ECE of every draw come from the kernels of
:mod:`crsbench_lib.metrics.auroc` and :mod:`crsbench_lib.metrics.calibration`.
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

from crsbench_lib.errors import ConfigError, ReferenceStandardError, SchemaError
from crsbench_lib.metrics.auroc import weighted_macro_auroc
from crsbench_lib.metrics.calibration import weighted_ece
from crsbench_lib.results.predictions import DatasetPredictions
from crsbench_lib.scoring.bootstrap import (
    _check_parameters,
    _draw_summary,
    _leave_self_out_components,
    _leave_self_out_crs,
    _reference_mask,
)
from crsbench_lib.scoring.axes import chance_scaled, robustness_composite
from crsbench_lib.scoring.crs import component_arrays, normalise_array
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER, ReferenceStandard, RobustnessComposite, as_standard


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
    fractions: Sequence[float], seed_counts: np.ndarray, debias_ece: bool = False,
    robustness: RobustnessComposite | None = None,
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
        one, weights[drawn], None if shift_weights is None else shift_weights[drawn], fractions, debias_ece,
        robustness,
    )[:, 0]


def _seed_axes(
    data: DatasetPredictions, weights: np.ndarray, shift_weights: np.ndarray | None, fractions: Sequence[float],
    debias_ece: bool = False, robustness: RobustnessComposite | None = None,
) -> np.ndarray:
    """Raw axes (E, S, B, 4) of every encoder and seed of ``data`` under multiplicities (B, n).

    ``R`` combines its pieces by the standard's ``robustness``
    (:func:`~crsbench_lib.scoring.axes.robustness_composite`).
    """
    n_enc, n_seed = len(data.encoders), len(data.seeds)
    n_draws = weights.shape[0]
    items = n_enc * n_seed

    def flat(array: np.ndarray) -> np.ndarray:  # (E, S, n, W) -> (E*S, n, W)
        return array.reshape(items, *array.shape[2:])

    clean = flat(data.clean)
    d_axis = weighted_macro_auroc(clean, data.labels, data.task, weights)
    c_axis = weighted_ece(clean, data.labels, data.task, weights, data.ece_bins, debias=debias_ece)

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
                ratios += weighted_macro_auroc(flat(at), data.labels, data.task, weights) / d_axis
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
            reference = weighted_macro_auroc(clean[:, images], sub_labels, data.task, sub)
            block = data.corrupted_proba[:, :, members]
            stacked = block.reshape(items * len(members), *block.shape[3:])
            corrupted = weighted_macro_auroc(stacked, sub_labels, data.task, sub).reshape(items, len(members), n_draws)
            loss[:, members] = np.maximum(0.0, reference[:, None, :] - corrupted)
        families = sorted({c for c, _ in data.corruptions})
        per_family = np.stack(
            [loss[:, [i for i, (c, _) in enumerate(data.corruptions) if c == fam]].mean(axis=1) for fam in families],
            axis=1,
        )
        losses += [loss.mean(axis=1), per_family.max(axis=1)]
    if data.shift_proba is not None and shift_weights is not None:
        shift = weighted_macro_auroc(flat(data.shift_proba), data.shift_labels, data.task, shift_weights)
        losses.append(np.maximum(0.0, d_axis - shift))
    if robustness is None or robustness.is_study:
        # The study's mean of the available pieces, in its order of operations (standards v1-v7).
        r_axis = np.mean(losses, axis=0) if losses else np.full((items, n_draws), np.nan)
    else:
        missing = np.full((items, n_draws), np.nan)
        pieces = losses[:2] if data.corruptions else [missing, missing]
        pieces = pieces + [losses[-1] if data.shift_proba is not None and shift_weights is not None else missing]
        r_axis = robustness_composite(np.stack(pieces, axis=-1), robustness)
    axes = np.stack([d_axis, c_axis, l_axis, r_axis], axis=-1)  # (items, B, 4)
    return axes.reshape(n_enc, n_seed, n_draws, len(AXES))



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
    >>> from crsbench_lib.scoring.axes import encoder_profiles, standard_axes
    >>> table = synthetic_results(n_encoders=3, seeds=(0, 1, 2), corruptions=("noise",))
    >>> standard = freeze_standard(table, "demo", created="2026-01-01T00:00:00Z")
    >>> point = encoder_profiles(standard_axes(table, standard))[list(AXES)]
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
    axis_shift : pandas.DataFrame
        Per encoder (index) and axis: the mean of the raw profile draws less
        the point profile, the axes' own resampling bias. With ``recentre``
        it was subtracted from ``profile_draws`` before scoring.
    recentred : bool
        Whether the CRS draws were scored on recentred profiles.
    top_k, n_draws, interval, random_state
        The parameters.
    seed_profiles : numpy.ndarray
        (n_seeds, n_encoders, 4): each seed's raw profile on all test images
        (its axes averaged over the datasets); their mean over seeds is
        ``point_profiles``.
    seed_profile_draws : numpy.ndarray
        (n_draws, n_seeds, n_encoders, 4): each seed's raw profile under the
        draw's image multiplicities, NaN in the draws that do not pick the
        seed (they were not computed). Read by :func:`axis_intervals`.
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
    axis_shift: pd.DataFrame
    recentred: bool
    top_k: int
    n_draws: int
    interval: float
    random_state: int
    seed_profiles: np.ndarray | None = None
    seed_profile_draws: np.ndarray | None = None


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


def _seed_profiles(axes: dict[str, np.ndarray], seed_counts: np.ndarray) -> np.ndarray:
    """Per-seed profiles (1 + B, S, E, 4): each seed's axes averaged over the available datasets.

    NaN where a draw does not pick the seed: :func:`_fill_seed` computes a seed
    only in the draws that pick it, and a value left at 0 must not pass for a
    measurement.
    """
    stacked = np.stack(list(axes.values()))  # (D, E, S, 1 + B, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        per_seed = np.nanmean(stacked, axis=0)  # (E, S, 1 + B, 4)
    per_seed = np.transpose(per_seed, (2, 1, 0, 3))  # (1 + B, S, E, 4)
    return np.where((seed_counts > 0)[:, :, None, None], per_seed, np.nan)


def seed_level_interval(
    seed_values: np.ndarray,
    seed_draws: np.ndarray,
    interval: float = 0.95,
    shift: np.ndarray | float | None = None,
) -> dict[str, np.ndarray]:
    """A mean over a few seeds on one shared test set: each variance component with its own quantile.

    The estimate is the mean over ``n`` seeds of a statistic measured on one
    test set that every seed shares, ``theta_hat = mean_s P_s(T)``. Seeds
    (their training sets and label subsets) and test images are crossed
    random factors, so (Owen 2007, the crossed "pigeonhole" design)

        Var(theta_hat) = sigma_seed^2 / n + Var_T(mean_s P_s(T)).

    The two-level bootstrap resamples both factors. Its seed level sees a
    plug-in variance, ``(n - 1) / n * s^2 / n``, two thirds of the unbiased
    ``s^2 / n`` at three seeds (Davison & Hinkley 1997, section 3.8), and a
    percentile interval then reads normal quantiles off a variance that rests
    on ``n - 1 = 2`` degrees of freedom: even with the variance right, a normal
    interval on a 2-df variance covers about 81 % (``P(|t_2| < 1.96)``). Where
    the seed level dominates (label efficiency: each seed draws one label
    subset per fraction, 1 % of the labels being a few dozen images) the
    percentile interval falls short by both.

    Here the two components are estimated apart:

    * seed level: ``V_seed = s^2 / n``, ``s^2`` the unbiased variance of the
      seeds' values on the full test set (given the test set, the seeds are
      independent draws of the training data and label subsets), with
      ``n - 1`` degrees of freedom;
    * test images: ``V_img``, the image-bootstrap variance of the seed mean
      with every seed kept once, ``(1 / n^2) sum_{s,t} Cov*(P_s, P_t)``, each
      covariance over the draws that computed both seeds (a draw's image
      multiplicities do not depend on which seeds it picks, so this subset is
      a fair sample of image draws); estimated from thousands of images, it
      is counted as known (normal quantile);

    and combined as Banerjee's (1960) interval for a sum of variance
    components with their own degrees of freedom:

        theta_hat - shift +/- sqrt(t_{n-1}^2 V_seed + z^2 V_img),

    ``t_{n-1}`` and ``z`` the ``(1 + level) / 2`` quantiles. It is the
    t interval of the seeds where they dominate and the normal interval of the
    images where those do, and its coverage is at least nominal in between
    (Banerjee 1960; at three seeds at most about 0.976 for 0.95). The
    Welch-Satterthwaite degrees of freedom, the usual alternative, fall short
    here: estimated from a 2-df ``s^2``, they grow exactly when ``s^2`` comes
    out small, and a simulation with the images at 5-30 % of the variance
    covers 0.92-0.93.

    The seed-by-image interaction enters both components (``s^2`` sees it
    through the shared test set, ``V_img`` through the mean of the seeds), so
    the variance errs, by that term over ``n``, on the wide side.

    Parameters
    ----------
    seed_values : numpy.ndarray
        (n_seeds, ...) each seed's statistic on all test images.
    seed_draws : numpy.ndarray
        (n_draws, n_seeds, ...) each seed's statistic under bootstrap image
        multiplicities (the same multiplicities for every seed of a draw);
        NaN or infinite where not computed.
    interval : float
        Coverage.
    shift : array-like or float, optional
        Subtracted from the mean to centre the interval (e.g. the resampling
        bias of :func:`resampling_shift`); default none.

    Returns
    -------
    dict of numpy.ndarray
        ``estimate`` (the seed mean), ``centre`` (less ``shift``),
        ``se_seed``, ``se_images``, ``se`` (``sqrt(V_seed + V_img)``),
        ``half_width``, ``low``, ``high``, each of the shape of one seed's
        value. With fewer than two seeds the seed level cannot be estimated:
        ``se_seed``, ``se``, ``half_width``, ``low`` and ``high`` are NaN.

    Raises
    ------
    ConfigError
        On mismatched shapes or an interval outside (0, 1).

    Examples
    --------
    Three seeds far apart, images that do not matter: the t interval of three
    values (``t_{2, 0.975} = 4.303``).

    >>> values = np.array([0.70, 0.80, 0.90])
    >>> draws = values[None, :] + np.zeros((50, 3))
    >>> out = seed_level_interval(values, draws)
    >>> round(float(out["se"]), 4), [round(float(out[k]), 3) for k in ("low", "high")]
    (0.0577, [0.552, 1.048])
    """
    from scipy.stats import norm
    from scipy.stats import t as student

    values = np.asarray(seed_values, dtype=float)
    draws = np.asarray(seed_draws, dtype=float)
    if draws.ndim != values.ndim + 1 or draws.shape[1:] != values.shape or values.shape[0] < 1:
        raise ConfigError(f"seed_level_interval: expected seed values (S, ...) and draws (B, S, ...), found "
                          f"{values.shape} and {draws.shape}")
    if not 0.0 < float(interval) < 1.0:
        raise ConfigError(f"seed_level_interval: interval must lie in (0, 1), found {interval!r}")
    n = values.shape[0]
    estimate = values.mean(axis=0)
    centre = estimate - (0.0 if shift is None else np.asarray(shift, dtype=float))
    finite = np.isfinite(draws)
    covariance = np.zeros(values.shape[1:])
    for s in range(n):
        for t in range(s, n):
            both = finite[:, s] & finite[:, t]
            count = both.sum(axis=0)
            a, b = np.where(both, draws[:, s], 0.0), np.where(both, draws[:, t], 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                mean_a, mean_b = a.sum(axis=0) / count, b.sum(axis=0) / count
                cross = np.where(both, (a - mean_a) * (b - mean_b), 0.0).sum(axis=0) / (count - 1)
            covariance = covariance + (1.0 if s == t else 2.0) * np.where(count > 1, cross, np.nan)
    v_images = np.maximum(covariance / n**2, 0.0)
    level = 0.5 + float(interval) / 2.0
    if n < 2:
        v_seed = np.full(values.shape[1:], np.nan)
        t_seed = np.nan
    else:
        v_seed = values.var(axis=0, ddof=1) / n
        t_seed = float(student.ppf(level, n - 1))
    half = np.sqrt(t_seed**2 * v_seed + float(norm.ppf(level)) ** 2 * v_images)
    return {
        "estimate": estimate, "centre": centre, "se_seed": np.sqrt(v_seed), "se_images": np.sqrt(v_images),
        "se": np.sqrt(v_seed + v_images), "half_width": half, "low": centre - half, "high": centre + half,
    }


def axis_intervals(
    result: TwoLevelBootstrapResult, interval: float | None = None, bias_correct: bool = False,
) -> pd.DataFrame:
    """Each encoder's raw-axis interval: the seed level by Student's t, the test images by the bootstrap.

    The interval of a raw axis (method section 9, amendment 26) is
    :func:`seed_level_interval` of the seeds' profiles
    (``result.seed_profiles``) with the test-image variance from the draws
    (``result.seed_profile_draws``), centred on the point, as amendment 15
    recentres the CRS draws on it: the draws' mean shift is the bias of
    resampling with duplicated images, which for the debiased ECE is not the
    point's own bias (the debiasing assumes distinct images). With
    ``bias_correct`` the centre is the point less that shift
    (``result.axis_shift``; Efron & Tibshirani 1993, section 10.6), right for a
    plug-in estimator whose resampling bias mirrors its sampling bias; on the
    self-audit it overshot C and R (mean error -0.007 and -0.004 against
    +0.003 and +0.001 at the point).

    Parameters
    ----------
    result : TwoLevelBootstrapResult
        Of :func:`two_level_bootstrap` (it carries the per-seed profiles).
    interval : float, optional
        Coverage (default: the bootstrap's).
    bias_correct : bool
        Centre on the point less the resampling bias, or on the point (default).

    Returns
    -------
    pandas.DataFrame
        One row per encoder and axis (encoders in ``result.encoders`` order):
        encoder, axis, estimate (the point), centre, se_seed, se_images, se,
        half_width, low, high.

    Raises
    ------
    ConfigError
        If the result carries no per-seed profiles.

    Examples
    --------
    >>> from crsbench_lib.results.predictions import load_prediction_arrays
    >>> boot = two_level_bootstrap(load_prediction_arrays(".crsbench-cache/runs/default"), None)  # doctest: +SKIP
    >>> axis_intervals(boot).query("axis == 'L'")[["encoder", "estimate", "low", "high"]]  # doctest: +SKIP
    """
    if result.seed_profiles is None or result.seed_profile_draws is None:
        raise ConfigError("axis_intervals: the bootstrap result carries no per-seed profiles")
    level = result.interval if interval is None else float(interval)
    shift = result.axis_shift.loc[list(result.encoders), list(AXES)].to_numpy(dtype=float) if bias_correct else None
    out = seed_level_interval(result.seed_profiles, result.seed_profile_draws, level, shift)
    frame = pd.DataFrame({
        "encoder": np.repeat(list(result.encoders), len(AXES)),
        "axis": np.tile(list(AXES), len(result.encoders)),
        **{key: np.asarray(value, dtype=float).ravel() for key, value in out.items()},
    })
    return frame


def resampling_shift(draws: np.ndarray, point: np.ndarray) -> np.ndarray:
    """The mean of the draws minus the point: each axis's resampling bias.

    A draw whose axis is not finite (a study-scale label-efficiency ratio over a
    resampled clean AUROC of 0 on a tiny test set) carries no bias to average:
    the mean runs over the finite draws only, and an axis without any finite
    draw is not shifted. Non-finite draws stay as they are, so normalisation
    clips them as it did before recentring.

    Parameters
    ----------
    draws : numpy.ndarray
        (B, E, A) profile draws.
    point : numpy.ndarray
        (E, A) point profiles.

    Returns
    -------
    numpy.ndarray
        (E, A) shifts; 0 where the point or every draw is not finite.

    Examples
    --------
    >>> draws = np.array([[[0.9]], [[np.inf]], [[0.7]]])
    >>> resampling_shift(draws, np.array([[0.75]])).round(6).tolist()
    [[0.05]]
    """
    values = np.asarray(draws, dtype=float)
    finite = np.isfinite(values)
    count = finite.sum(axis=0)
    mean = np.where(finite, values, 0.0).sum(axis=0) / np.maximum(count, 1)
    shift = mean - np.asarray(point, dtype=float)
    return np.where((count > 0) & np.isfinite(shift), shift, 0.0)


def two_level_bootstrap(
    predictions: Mapping[str, DatasetPredictions],
    standard: ReferenceStandard | str | os.PathLike[str] | None,
    n_draws: int = 1000,
    random_state: int = 0,
    top_k: int = 3,
    interval: float = 0.95,
    n_jobs: int | None = None,
    references: Sequence[str] = (),
    recentre: bool = True,
) -> TwoLevelBootstrapResult:
    """Two-level paired bootstrap of the CRS ranking from stored predictions.

    Each draw resamples the seeds (with replacement, the same for every encoder
    and dataset) and, per dataset, the test images (the same indices for every
    encoder, seed and condition; site B drawn separately), recomputes the four
    raw axes from the predictions under those multiplicities (macro-AUROC by the
    weighted Mann-Whitney statistic, binned ECE, ``L`` and ``R`` as in
    :func:`~crsbench_lib.scoring.axes.raw_axes`, on the standard's axis
    scales), recentres each encoder's profile draws on its point profile
    (``recentre``; see the module docstring), normalises them with the
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
    recentre : bool
        Score the profile draws recentred on the point profiles (default),
        removing the axes' second dose of resampling bias; ``False`` scores
        them as drawn (the v2 behaviour).

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
                        seed_counts, std.ece_estimator == "debiased", std.robustness)
            for name, s in tasks
        ]
        for future in futures:
            future.result()
    for name in datasets:  # the standard's scales of L and R, per seed and draw, before averaging
        axes[name] = chance_scaled(axes[name], std.axis_scales)[0]
    all_profiles = _profiles(axes, seed_counts)  # (1 + B, E, 4)
    # Each seed's profile in every draw that picks it: the seed level of the axes' intervals (axis_intervals).
    seed_profiles = _seed_profiles(axes, seed_counts)  # (1 + B, S, E, 4)
    for a, axis in enumerate(AXES):
        unavailable = np.isnan(all_profiles[:, :, a]).all(axis=0)
        if unavailable.any():
            raise SchemaError(f"encoder '{encoders[int(np.argmax(unavailable))]}' has axis {axis} unavailable")
    profiles = all_profiles[1:]
    shift = resampling_shift(profiles, all_profiles[0])  # (E, 4): the axes' resampling bias
    scored = profiles - shift[None] if recentre else profiles
    point_crs = _leave_self_out_crs(all_profiles[:1], encoders, std)[0]
    crs = _leave_self_out_crs(scored, encoders, std)
    point_auroc = all_profiles[0, :, 0]
    order = np.lexsort((np.arange(len(encoders)), -point_crs))
    point = pd.DataFrame({
        "encoder": [encoders[i] for i in order],
        "rank": np.arange(1, len(encoders) + 1),
        "crs": point_crs[order],
        "auroc": point_auroc[order],
    })

    full_panel = component_arrays(normalise_array(all_profiles[0], std.worst, std.best), std.require_panel(),
                                  std.weight_vector, std.dominance_noise)[:, 3]
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
        axis_shift=pd.DataFrame(shift, index=pd.Index(encoders, name="encoder"), columns=list(AXES)),
        recentred=bool(recentre),
        top_k=int(top_k),
        n_draws=n_draws,
        interval=float(interval),
        random_state=int(random_state),
        seed_profiles=seed_profiles[0],
        seed_profile_draws=seed_profiles[1:],
    )
