"""How much data a decision needs: what a run's test sets and seeds resolve, and what would resolve a tie.

A benchmark's verdicts are as sharp as its test sets and seeds allow. This
module turns a run's own two-level bootstrap (:mod:`.two_level_bootstrap`)
into the numbers a team needs before it collects data (issue 49, item 5;
method section 9, amendment 31):

* per dataset (:func:`dataset_precision`): the test-set size, the plug-in
  ECE floor (the plug-in ECE of a perfectly calibrated probe on that many
  images), the standard error of a candidate's clean AUROC and of its
  calibration axis, and how many candidate pairs the calibration axis
  separates, their intervals simultaneous over the pairs;
* for a pair of candidates (:func:`pair_projection`), per axis: the
  difference, its two variance components (seeds; test images), whether the
  run resolves it, and how many test images (with the seeds as they are) or
  seeds (with the test images as they are) would.

The projection rests on one stated assumption: the test-image variance of a
mean over seeds scales as ``1 / n_test`` (every test-image set of the profile,
site B's and the corruption blocks' included, grows by the same factor) and
the seed variance as ``1 / n_seeds``; the interval is the axes' seed-level
interval (:func:`~.two_level_bootstrap.seed_level_interval`, Banerjee 1960),
``|d| > sqrt(t_{n-1}^2 V_seed + z^2 V_img)``, and a study planned to resolve
a difference must also leave room for the estimate's own spread: at power
``1 - beta`` (80 % by default, the usual planning figure),
``|d| >= sqrt(t^2 V_seed + z^2 V_img) + z_{1-beta} sqrt(V_seed + V_img)``,
the observed difference taken as the truth. Solving it for the factor ``k``
by which the test images grow (``V_img / k``) or for the seeds ``m``
(``V_seed n / m`` with ``t_{m-1}``) gives the projections; when the seeds'
term alone exceeds ``|d|`` no test set resolves the pair, and when the test
images' term alone does, no number of seeds does.
The self-audit (``crsbench coverage``) checks the intervals themselves; the
projection is checked in ``tests/scoring/test_data_needs.py`` against a
simulated larger test set.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from crsbench_lib.standard import AXES, HIGHER_IS_BETTER

if TYPE_CHECKING:
    from crsbench_lib.results.predictions import DatasetPredictions
    from crsbench_lib.standard import ReferenceStandard

#: Columns of :func:`pair_projection`.
PROJECTION_COLUMNS: tuple[str, ...] = (
    "axis", "difference", "se_seed", "se_images", "half_width", "resolved", "image_factor", "seeds_needed",
    "interaction",
)
#: Columns of :func:`dataset_precision`.
PRECISION_COLUMNS: tuple[str, ...] = (
    "dataset", "n_test", "ece_floor", "auroc_se", "c_se", "c_spread", "c_half_width", "c_pairs_separated",
    "c_pairs", "c_separates",
)
#: The largest number of seeds :func:`seeds_needed` searches.
MAX_SEEDS = 200


#: The power the projections plan for: the share of repeated studies at the projected size whose interval
#: excludes zero when the true difference is the one observed (the usual 80 %; Cohen 1988).
DEFAULT_POWER = 0.8


def _quantiles(n_seeds: int, interval: float) -> tuple[float, float]:
    from scipy.stats import norm
    from scipy.stats import t as student

    q = 0.5 + interval / 2.0
    return float(student.ppf(q, n_seeds - 1)), float(norm.ppf(q))


def _margin(difference: float, var_seed: float, var_images: float, n_seeds: int, interval: float,
            power: float) -> float:
    """``|d|`` less the interval's half-width less ``z_power`` standard errors: positive when the design has the power."""
    from scipy.stats import norm

    t, z = _quantiles(n_seeds, interval)
    half = math.sqrt(t * t * var_seed + z * z * var_images)
    se = math.sqrt(var_seed + var_images)
    return abs(difference) - half - float(norm.ppf(power)) * se


def resolved_with_power(difference: float, var_seed: float, var_images: float, n_seeds: int,
                        interval: float = 0.95, power: float = DEFAULT_POWER) -> bool:
    """Whether a study of this size would resolve ``difference`` with probability ``power`` if it were the truth.

    The interval's half-width ``h = sqrt(t_{n-1}^2 V_seed + z^2 V_img)``
    (:func:`~.two_level_bootstrap.seed_level_interval`) must leave room for the
    estimate's own spread: ``|d| >= h + z_power * sqrt(V_seed + V_img)``.

    Examples
    --------
    >>> resolved_with_power(0.02, 0.0, 0.004 ** 2, 3), resolved_with_power(0.01, 0.0, 0.004 ** 2, 3)
    (True, False)
    """
    return _margin(difference, var_seed, var_images, n_seeds, interval, power) >= 0


def _scaled(var_seed: float, var_images: float, interaction: float, n_seeds: int, k: float = 1.0,
            m: int | None = None) -> tuple[float, float]:
    """The two variance components with the test images ``k`` times as many and ``m`` seeds (default as now).

    ``interaction`` is the seed-by-image variance of one seed's statistic (the
    part of its image variance other seeds do not share). On one shared test
    set it shows up in the seeds' spread (``V_seed = (sigma_seed^2 + I) / n``)
    and in the image variance (``V_img = C + I / n``); more test images shrink
    ``I`` wherever it appears, more seeds shrink it through ``1 / m``.
    """
    n = n_seeds
    m = n if m is None else m
    pure_seed = max(var_seed * n - interaction, 0.0)  # sigma_seed^2, the interaction taken out
    common = max(var_images - interaction / n, 0.0)  # C, the image variance every seed shares
    return (pure_seed + interaction / k) / m, (common + interaction / m) / k


def image_factor(difference: float, var_seed: float, var_images: float, n_seeds: int, interval: float = 0.95,
                 power: float = DEFAULT_POWER, interaction: float = 0.0) -> float:
    """By how much the test images must grow to resolve ``difference`` with ``power`` (seeds as they are).

    The test-image variance shrinks as ``1 / k``, and so does the seed-by-image
    interaction hidden in the seeds' spread (:func:`_scaled`): the smallest
    ``k`` with :func:`resolved_with_power`, by bisection (the margin grows with
    ``k``); at most 1 when the run already has the power, ``inf`` when the
    seeds' own spread prevents it whatever the test set.

    Examples
    --------
    >>> round(image_factor(0.02, 0.0, 0.01 ** 2, 3), 2)  # ((1.96 + 0.84) * 0.01 / 0.02) ** 2
    1.96
    >>> image_factor(0.01, 0.0001, 0.0001, 3)
    inf
    >>> round(image_factor(0.01, 0.0001, 0.0001, 3, interaction=0.0003), 1)  # the spread was the interaction
    35.0
    """
    def margin(k: float) -> float:
        vs, vi = _scaled(var_seed, var_images, interaction, n_seeds, k=k)
        return _margin(difference, vs, vi, n_seeds, interval, power)

    if margin(math.inf) <= 0:
        return math.inf
    high = 1.0
    while margin(high) < 0:
        high *= 2.0
    return _smallest_factor(margin, high)


def _smallest_factor(margin: Callable[[float], float], high: float) -> float:
    """The smallest factor ``k <= high`` with ``margin(k) >= 0`` (``margin`` grows with ``k``, ``margin(high) >= 0``), by bisection on a log scale."""
    low = 1e-9
    for _ in range(100):
        mid = math.sqrt(low * high)
        if margin(mid) >= 0:
            high = mid
        else:
            low = mid
    return high


def seeds_needed(difference: float, var_seed: float, var_images: float, n_seeds: int, interval: float = 0.95,
                 power: float = DEFAULT_POWER, interaction: float = 0.0, max_seeds: int = MAX_SEEDS) -> float:
    """The fewest seeds that resolve ``difference`` with ``power`` (test images as they are); ``inf`` if none up to ``max_seeds``.

    With ``m`` seeds the seed variance is ``(sigma_seed^2 + I) / m`` and the
    image variance ``C + I / m`` (:func:`_scaled`), read with ``t_{m-1}``.

    Examples
    --------
    >>> seeds_needed(0.02, 0.0001, 0.00001, 3)  # the seeds dominate: more of them resolve it
    10
    >>> seeds_needed(0.01, 0.0, 0.0001, 3)  # the test images alone cover the difference
    inf
    """
    for m in range(2, max_seeds + 1):
        vs, vi = _scaled(var_seed, var_images, interaction, n_seeds, m=m)
        if resolved_with_power(difference, vs, vi, m, interval, power):
            return m
    return math.inf


def joint_needs(difference: float, var_seed: float, var_images: float, n_seeds: int, interval: float = 0.95,
                power: float = DEFAULT_POWER, interaction: float = 0.0, seed_grid: Sequence[int] = (5, 10, 20, 50, 100),
                max_factor: float = 100.0) -> tuple[int, float] | None:
    """The fewest seeds of ``seed_grid`` at which some test-image factor up to ``max_factor`` resolves the difference.

    For a difference that neither more test images alone nor more seeds alone
    resolves: with ``m`` seeds and ``k`` times the test images the components
    are :func:`_scaled`'s.

    Returns
    -------
    (int, float) or None
        ``(m, k)``, or None when no seed count of the grid with at most
        ``max_factor`` times the test images resolves it.

    Examples
    --------
    >>> m, k = joint_needs(0.005, 0.0045 ** 2, 0.0036 ** 2, 3)
    >>> m, round(k, 1)
    (50, 6.7)
    """
    for m in seed_grid:
        def margin(k: float, m: int = m) -> float:
            vs, vi = _scaled(var_seed, var_images, interaction, n_seeds, k=k, m=m)
            return _margin(difference, vs, vi, m, interval, power)

        if margin(max_factor) < 0:
            continue
        return int(m), float(max(_smallest_factor(margin, max_factor), 1.0))
    return None


def interaction_variance(seed_draws: np.ndarray) -> np.ndarray:
    """The seed-by-image variance of one seed's statistic, per trailing index, from the bootstrap's image draws.

    ``mean_s Var*(P_s) - mean_{s != t} Cov*(P_s, P_t)`` over the draws that
    computed both seeds (NaN where not computed), floored at 0: the part of a
    seed's image variance that the other seeds do not share.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> shared, own = rng.normal(0, 0.01, (4000, 1)), rng.normal(0, 0.02, (4000, 3))
    >>> round(float(interaction_variance(shared + own)), 4)  # own sd 0.02: 0.0004
    0.0004
    """
    draws = np.asarray(seed_draws, dtype=float)
    n_seeds = draws.shape[1]
    flat = draws.reshape(draws.shape[0], n_seeds, -1)
    variances, covariances = [], []
    for s in range(n_seeds):
        for t in range(s, n_seeds):
            ok = np.isfinite(flat[:, s, :]) & np.isfinite(flat[:, t, :])
            out = np.full(flat.shape[2], np.nan)
            for j in range(flat.shape[2]):
                x, y = flat[ok[:, j], s, j], flat[ok[:, j], t, j]
                if x.size > 2:
                    out[j] = float(np.cov(x, y, ddof=1)[0, 1])
            (variances if s == t else covariances).append(out)
    var = np.nanmean(np.vstack(variances), axis=0)
    cov = np.nanmean(np.vstack(covariances), axis=0) if covariances else np.zeros_like(var)
    return np.maximum(var - cov, 0.0).reshape(draws.shape[2:])


def pair_projection(seed_values: np.ndarray, seed_draws: np.ndarray, interval: float = 0.95,
                    power: float = DEFAULT_POWER) -> pd.DataFrame:
    """Per axis, a pair's difference, its noise, and the data that would resolve it.

    Parameters
    ----------
    seed_values : numpy.ndarray
        (n_seeds, 4): each seed's raw profile of the first candidate less the
        second's, on all test images (``seed_profiles[:, a] - seed_profiles[:, b]``
        of a :class:`~.two_level_bootstrap.TwoLevelBootstrapResult`).
    seed_draws : numpy.ndarray
        (n_draws, n_seeds, 4): the same under the bootstrap's image draws.
    interval : float
    power : float
        The power the projections plan for (:data:`DEFAULT_POWER`).

    Returns
    -------
    pandas.DataFrame
        :data:`PROJECTION_COLUMNS`, one row per axis: ``difference`` (first
        less second, raw units), ``se_seed`` and ``se_images`` (the two
        components of the seed mean's standard error), ``half_width`` (the
        interval's), ``resolved`` (the interval excludes zero), ``image_factor``
        (:func:`image_factor`), ``seeds_needed`` (:func:`seeds_needed`) and
        ``interaction`` (:func:`interaction_variance`, which both projections use).

    Examples
    --------
    >>> values = np.array([[0.02, 0.0, 0.0, 0.0]] * 3) + np.array([[0.001], [0.0], [-0.001]])
    >>> draws = values[None] + np.random.default_rng(0).normal(0, 0.004, (400, 1, 4))
    >>> table = pair_projection(values, draws)
    >>> bool(table.loc[0, "resolved"]), bool(table.loc[1, "resolved"])
    (True, False)
    """
    from crsbench_lib.scoring.two_level_bootstrap import seed_level_interval

    values = np.asarray(seed_values, dtype=float)
    n_seeds = values.shape[0]
    out = seed_level_interval(values, np.asarray(seed_draws, dtype=float), interval)
    interaction = interaction_variance(seed_draws)
    rows = []
    for a, axis in enumerate(AXES):
        d = float(out["estimate"][a])
        v_seed = float(out["se_seed"][a]) ** 2
        v_img = float(out["se_images"][a]) ** 2
        i_var = float(interaction[a])
        half = float(out["half_width"][a])
        rows.append({"axis": axis, "difference": d, "se_seed": math.sqrt(v_seed), "se_images": math.sqrt(v_img),
                     "half_width": half, "resolved": bool(abs(d) > half),
                     "image_factor": image_factor(d, v_seed, v_img, n_seeds, interval, power, i_var),
                     "seeds_needed": seeds_needed(d, v_seed, v_img, n_seeds, interval, power, i_var),
                     "interaction": i_var})
    return pd.DataFrame(rows, columns=list(PROJECTION_COLUMNS))


def dataset_precision(
    results: pd.DataFrame,
    seed_profiles: Mapping[str, np.ndarray],
    seed_profile_draws: Mapping[str, np.ndarray],
    encoders: Mapping[str, Sequence[str]],
    n_test: Mapping[str, int],
    candidates: Sequence[str],
    interval: float = 0.95,
) -> pd.DataFrame:
    """What each dataset's test set resolves: the ECE floor, the AUROC and C standard errors, and C's reach.

    Parameters
    ----------
    results : pandas.DataFrame
        The run's results table (for the ECE floor: clean, frozen, uncalibrated
        rows at 100 % labels).
    seed_profiles, seed_profile_draws : mapping of str to numpy.ndarray
        Per dataset, a two-level bootstrap's ``seed_profiles`` (n_seeds,
        n_encoders, 4) and ``seed_profile_draws`` (n_draws, n_seeds,
        n_encoders, 4) on that dataset's predictions alone.
    encoders : mapping of str to sequence of str
        Per dataset, the bootstrap's encoder order.
    n_test : mapping of str to int
        Per dataset, its test images.
    candidates : sequence of str
        The ranked encoders (references left out).
    interval : float

    Returns
    -------
    pandas.DataFrame
        :data:`PRECISION_COLUMNS`: ``ece_floor`` (the candidates' mean),
        ``auroc_se`` and ``c_se`` (the median over candidates of the standard
        error of their seed-mean D and C), ``c_spread`` (the largest difference
        between two candidates' C) and ``c_half_width`` (that pair's interval's
        half-width), ``c_pairs_separated`` of ``c_pairs`` (candidate pairs whose
        C difference excludes zero, every interval simultaneous over the pairs
        by Bonferroni) and ``c_separates`` (at least one does).
    """
    from crsbench_lib.scoring.two_level_bootstrap import seed_level_interval

    rows = []
    for dataset in sorted(seed_profiles):
        names = [str(e) for e in encoders[dataset]]
        keep = [i for i, e in enumerate(names) if e in set(candidates)]
        values, draws = np.asarray(seed_profiles[dataset]), np.asarray(seed_profile_draws[dataset])
        own = seed_level_interval(values[:, keep, :], draws[:, :, keep, :], interval)
        c_point = values[:, keep, 1].mean(axis=0)
        half, separated, n_pairs = math.nan, 0, len(keep) * (len(keep) - 1) // 2
        if n_pairs:
            # Every candidate pair's C difference, its interval simultaneous over the pairs (Bonferroni): "C
            # separates some candidates" is a family statement, and a single pair's 95 % interval would make it
            # by chance in about one build in four with five equal candidates.
            level = 1.0 - (1.0 - interval) / n_pairs
            far = (keep[int(np.argmax(c_point))], keep[int(np.argmin(c_point))])
            for x in range(len(keep)):
                for y in range(x + 1, len(keep)):
                    i, j = keep[x], keep[y]
                    diff = seed_level_interval(values[:, i, 1] - values[:, j, 1],
                                               draws[:, :, i, 1] - draws[:, :, j, 1], level)
                    separated += int(abs(float(diff["estimate"])) > float(diff["half_width"]))
                    if {i, j} == set(far):
                        half = float(diff["half_width"])
        rows_ds = results[(results["dataset"] == dataset) & (results["condition"] == "clean")
                          & (results["arm"] == "frozen") & (results["calibration"] == "none")
                          & results["encoder"].astype(str).isin(candidates)]
        if "label_fraction" in rows_ds.columns:
            rows_ds = rows_ds[rows_ds["label_fraction"] == 1.0]
        floor = float(rows_ds["ece_floor"].mean()) if "ece_floor" in rows_ds.columns and len(rows_ds) else math.nan
        spread = float(c_point.max() - c_point.min()) if len(keep) else math.nan
        rows.append({"dataset": dataset, "n_test": int(n_test[dataset]), "ece_floor": floor,
                     "auroc_se": float(np.nanmedian(own["se"][:, 0])), "c_se": float(np.nanmedian(own["se"][:, 1])),
                     "c_spread": spread, "c_half_width": half, "c_pairs_separated": separated,
                     "c_pairs": n_pairs, "c_separates": separated > 0})
    return pd.DataFrame(rows, columns=list(PRECISION_COLUMNS))


@dataclass(frozen=True)
class DataNeeds:
    """What a run resolves and what would resolve its closest call (:func:`data_needs`).

    Attributes
    ----------
    precision : pandas.DataFrame
        :func:`dataset_precision`.
    pair : tuple of str
        The pair projected: the leader and its closest rival in the leading tier
        (or, when the tier holds the leader alone, the runner-up).
    pair_in_tier : bool
        Whether the rival shares the tier (the tie the projection is about).
    projection : pandas.DataFrame
        :func:`pair_projection` of the pair, on every dataset together.
    crs_difference, crs_resolution : float
        The pair's CRS difference, and the CRS difference the tier resolves:
        the median over the leader's rivals of ``q_i se_Li``, the lead at which
        rival ``i`` leaves the tier (its own critical value times the standard
        error of its difference from the leader).
    n_test : dict of str to int
        Test images per dataset.
    n_seeds : int
    interval : float
    """

    precision: pd.DataFrame
    pair: tuple[str, str]
    pair_in_tier: bool
    projection: pd.DataFrame
    crs_difference: float
    crs_resolution: float
    n_test: dict[str, int]
    n_seeds: int
    interval: float


def data_needs(
    predictions: Mapping[str, "DatasetPredictions"],
    results: pd.DataFrame,
    standard: "ReferenceStandard",
    references: Sequence[str] = (),
    pair: tuple[str, str] | None = None,
    n_draws: int = 1000,
    random_state: int = 0,
    interval: float = 0.95,
    boot: Any = None,
) -> DataNeeds:
    """The run's precision per dataset and the data its closest call would need.

    Runs the two-level bootstrap (:func:`~.two_level_bootstrap.two_level_bootstrap`)
    on every dataset together (the tier, the pair) and on each dataset alone
    (its precision), with the same settings as the book's chapters.

    Parameters
    ----------
    predictions : mapping
        Dataset -> stored predictions of the frozen arm.
    results : pandas.DataFrame
        The run's results table.
    standard : ReferenceStandard
    references : sequence of str
        Reference encoders (never ranked; left out of the pair and of C's reach).
    pair : (str, str), optional
        The pair to project; default the leader and its closest rival in the tier.
    n_draws, random_state, interval
        The bootstrap's settings.
    boot : TwoLevelBootstrapResult, optional
        The bootstrap of every dataset together, when the caller already ran it
        with these settings (a chapter reuses its own).

    Returns
    -------
    DataNeeds

    Raises
    ------
    ValueError
        With fewer than two candidates, fewer than two seeds, or a pair member
        that is not a candidate of the run.
    """
    from crsbench_lib.scoring.tier import best_confidence_set
    from crsbench_lib.scoring.two_level_bootstrap import two_level_bootstrap

    if boot is None:
        boot = two_level_bootstrap(predictions, standard, n_draws=n_draws, random_state=random_state, top_k=1,
                                   interval=interval, references=references)
    names = [str(e) for e in boot.encoders]
    candidates = [e for e in names if e not in set(references)]
    if len(candidates) < 2:
        raise ValueError(f"data needs: {len(candidates)} candidate(s); at least 2 are needed to compare")
    if len(boot.seeds) < 2:
        raise ValueError("data needs: one seed; the seed level cannot be estimated (the profile needs two or more)")
    point = boot.point.set_index("encoder").loc[names, "crs"].to_numpy(dtype=float)
    is_candidate = np.array([e in set(candidates) for e in names])
    decision = best_confidence_set(boot.crs_draws, point, is_candidate, interval)
    order = [i for i in np.argsort(-point, kind="stable") if is_candidate[i]]
    leader = order[0]
    if pair is None:
        rivals = [i for i in order[1:] if decision.in_tier[i]] or order[1:2]
        first, second = leader, rivals[0]
    else:
        unknown = [p for p in pair if p not in candidates]
        if unknown:
            raise ValueError(f"data needs: {unknown[0]!r} is not a candidate of the run "
                             f"(candidates: {', '.join(candidates)})")
        first, second = names.index(pair[0]), names.index(pair[1])
    values = boot.seed_profiles[:, first, :] - boot.seed_profiles[:, second, :]
    draws = boot.seed_profile_draws[:, :, first, :] - boot.seed_profile_draws[:, :, second, :]
    projection = pair_projection(values, draws, interval)
    # A rival i leaves the tier when the leader's lead exceeds q_i se_Li (its own critical value): the typical
    # such threshold over the rivals is the CRS difference the tier resolves.
    diffs = boot.crs_draws[:, order[1:]] - boot.crs_draws[:, [leader]]
    se = np.nanstd(diffs, axis=0, ddof=1)
    thresholds = np.asarray(decision.critical_values, dtype=float)[order[1:]] * se
    resolution = float(np.nanmedian(thresholds)) if thresholds.size else math.nan
    precision = precision_by_dataset(predictions, results, standard, references, n_draws, random_state, interval)
    n_test = dict(zip(precision["dataset"], (int(n) for n in precision["n_test"]), strict=True))
    return DataNeeds(precision, (names[first], names[second]), bool(decision.in_tier[second]), projection,
                     float(point[first] - point[second]), resolution, n_test, len(boot.seeds), interval)


def precision_by_dataset(
    predictions: Mapping[str, "DatasetPredictions"],
    results: pd.DataFrame,
    standard: "ReferenceStandard",
    references: Sequence[str] = (),
    n_draws: int = 1000,
    random_state: int = 0,
    interval: float = 0.95,
) -> pd.DataFrame:
    """:func:`dataset_precision` from stored predictions: one two-level bootstrap per dataset.

    Returns
    -------
    pandas.DataFrame
        :data:`PRECISION_COLUMNS`, one row per dataset.
    """
    from crsbench_lib.scoring.two_level_bootstrap import two_level_bootstrap

    per_values, per_draws, per_names, n_test = {}, {}, {}, {}
    candidates: list[str] = []
    for dataset, arrays in sorted(predictions.items()):
        one = two_level_bootstrap({dataset: arrays}, standard, n_draws=n_draws, random_state=random_state,
                                  top_k=1, interval=interval, references=references)
        per_values[dataset], per_draws[dataset] = one.seed_profiles, one.seed_profile_draws
        per_names[dataset] = one.encoders
        n_test[dataset] = int(np.asarray(arrays.clean).shape[2])
        candidates = [str(e) for e in one.encoders if str(e) not in set(references)]
    return dataset_precision(results, per_values, per_draws, per_names, n_test, candidates, interval)


def oriented(difference: float, axis: str) -> float:
    """A raw difference with its sign turned so that positive means the first candidate is better on ``axis``.

    Examples
    --------
    >>> oriented(0.01, "D"), oriented(0.01, "C")
    (0.01, -0.01)
    """
    return difference if HIGHER_IS_BETTER[axis] else -difference


__all__ = ["DEFAULT_POWER", "MAX_SEEDS", "PRECISION_COLUMNS", "PROJECTION_COLUMNS", "DataNeeds", "data_needs", "dataset_precision",
           "interaction_variance", "joint_needs", "precision_by_dataset", "resolved_with_power",
           "oriented",
           "pair_projection", "seeds_needed", "image_factor"]
