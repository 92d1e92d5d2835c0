"""Coverage of the benchmark's own intervals against a known truth (issue 27, item 7: the self-audit).

Three steps, tables in and tables out:

1. :func:`truth_table`: the truth from predictions on a large test set over
   many training draws (:mod:`crsbench_lib.runner.coverage` makes them). An
   encoder's true axis is the expectation over training draws of the axis on
   the population, estimated by the mean over the draws on the large test set;
   the true CRS is the standard's CRS of the true profile (scored, like every
   point estimate of the bootstrap, against the panel without the encoder's
   own entry); from it the true pairwise CRS differences, the true Kendall
   tau-b of AUROC (``D``) and CRS, and the truly best encoder. Every truth
   carries its Monte-Carlo standard error: the standard deviation of the same
   quantity over a two-level bootstrap of the truth's own training draws and
   test images.
2. :func:`replicate_intervals`: one replicate's intervals, from the package's
   own machinery and its public functions only
   (:func:`~crsbench_lib.scoring.two_level_bootstrap.two_level_bootstrap`,
   :func:`~crsbench_lib.scoring.bootstrap.interval_summary`,
   :func:`~crsbench_lib.scoring.agreement.agreement_uncertainty`,
   :func:`~crsbench_lib.scoring.bootstrap.tied_with_leader`), so that a change
   of their insides is audited as soon as it is made.
3. :func:`coverage_table`: how often the intervals hold the truth, with the
   Monte-Carlo error of that share.

Coverage of an interval ``[low, high]`` is the share of replicates with
``low <= truth <= high`` (Efron & Tibshirani 1993, ch. 12-14, evaluate
bootstrap intervals this way on simulated data). A set (the leading tier)
covers when it holds the true member.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from crsbench_lib.errors import ConfigError, SchemaError
from crsbench_lib.results.predictions import ConditionPredictions, dataset_arrays
from crsbench_lib.standard import AXES, ReferenceStandard

#: Columns of a truth table.
TRUTH_COLUMNS: tuple[str, ...] = ("quantity", "item", "truth", "truth_se")
#: Columns of an interval table.
INTERVAL_COLUMNS: tuple[str, ...] = ("replicate", "quantity", "item", "method", "estimate", "low", "high", "nominal")
#: The method of a set-valued "interval" (the leading tier): covers when it holds the truth's item.
SET_METHOD = "set"
#: The method of an axis's seed-level t interval (:func:`~crsbench_lib.scoring.two_level_bootstrap.axis_intervals`,
#: method section 9, amendment 26).
SEED_T = "seed_t"
#: Quantity names.
TAU = "tau_auroc_crs"
TIER = "leading_tier"
CRS = "crs"
DIFFERENCE = "crs_difference"


def axis_quantity(axis: str) -> str:
    """``axis_D`` for axis ``D``."""
    return f"axis_{axis}"


def pair_item(a: str, b: str) -> tuple[str, float]:
    """The canonical name of a pair (alphabetical) and the sign that orients ``a - b`` to it.

    Examples
    --------
    >>> pair_item("vit", "cnn")
    ('cnn - vit', -1.0)
    """
    return (f"{a} - {b}", 1.0) if a <= b else (f"{b} - {a}", -1.0)


def _bootstrap(predictions: Sequence[ConditionPredictions], standard: ReferenceStandard | str | None, n_draws: int,
               random_state: int, interval: float) -> object:
    from crsbench_lib.scoring.two_level_bootstrap import two_level_bootstrap

    arrays = dataset_arrays(predictions)
    encoders = next(iter(arrays.values())).encoders
    return two_level_bootstrap(arrays, standard, n_draws=n_draws, random_state=random_state,
                               top_k=min(3, len(encoders)), interval=interval, n_jobs=1)


def _pairs(encoders: Sequence[str], crs: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(canonical pair, CRS_first - CRS_second) for every pair; ``crs`` (..., E)."""
    out = []
    for i in range(len(encoders)):
        for j in range(i + 1, len(encoders)):
            item, sign = pair_item(encoders[i], encoders[j])
            out.append((item, sign * (crs[..., i] - crs[..., j])))
    return out


def truth_table(
    predictions: Sequence[ConditionPredictions],
    standard: ReferenceStandard | str | os.PathLike[str] | None = None,
    n_draws: int = 200,
    random_state: int = 0,
) -> pd.DataFrame:
    """The truth and its Monte-Carlo standard error from predictions of many training draws.

    Parameters
    ----------
    predictions : sequence of ConditionPredictions
        One dataset, one arm: each training draw as a seed, all on one large
        test set (:func:`crsbench_lib.runner.coverage.truth_predictions`).
    standard : ReferenceStandard, path or None
        The fixed standard (None: the shipped default).
    n_draws : int
        Draws of the two-level bootstrap that gives the truth's Monte-Carlo error.
    random_state : int

    Returns
    -------
    pandas.DataFrame
        Columns quantity, item, truth, truth_se. Quantities: ``axis_D`` ...
        ``axis_R`` and ``crs`` per encoder, ``crs_difference`` per pair
        (alphabetical, first minus second), ``tau_auroc_crs`` (item ``all``)
        and ``leading_tier`` (item: the truly best encoder; truth: its CRS
        margin over the runner-up).

    Examples
    --------
    >>> truth_table([])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    SchemaError: truth_table: no predictions
    """
    from crsbench_lib.scoring.rank_statistics import kendall_tau_b, kendall_tau_b_rows

    if len(predictions) == 0:
        raise SchemaError("truth_table: no predictions")
    boot = _bootstrap(predictions, standard, n_draws, random_state, 0.95)
    encoders = list(boot.encoders)
    point = boot.point.set_index("encoder").loc[encoders]
    rows = []
    for a, axis in enumerate(AXES):
        for e, name in enumerate(encoders):
            rows.append((axis_quantity(axis), name, float(boot.point_profiles.loc[name, axis]),
                         float(np.std(boot.profile_draws[:, e, a], ddof=1))))
    crs, crs_draws = point["crs"].to_numpy(dtype=float), boot.crs_draws
    for e, name in enumerate(encoders):
        rows.append((CRS, name, float(crs[e]), float(np.std(crs_draws[:, e], ddof=1))))
    for (item, diff), (_, diff_draws) in zip(_pairs(encoders, crs), _pairs(encoders, crs_draws), strict=True):
        rows.append((DIFFERENCE, item, float(diff), float(np.std(diff_draws, ddof=1))))
    tau = kendall_tau_b(point["auroc"].to_numpy(dtype=float), crs)
    tau_draws = kendall_tau_b_rows(boot.auroc_draws, crs_draws)
    rows.append((TAU, "all", float(tau), float(np.nanstd(tau_draws, ddof=1))))
    order = np.argsort(-crs, kind="stable")
    best, second = int(order[0]), int(order[1])
    margin_draws = crs_draws[:, best] - crs_draws[:, second]
    rows.append((TIER, encoders[best], float(crs[best] - crs[second]), float(np.std(margin_draws, ddof=1))))
    return pd.DataFrame(rows, columns=list(TRUTH_COLUMNS))


def replicate_intervals(
    predictions: Sequence[ConditionPredictions],
    replicate: int,
    standard: ReferenceStandard | str | os.PathLike[str] | None = None,
    n_draws: int = 1000,
    interval: float = 0.95,
    n_permutations: int = 999,
) -> pd.DataFrame:
    """One replicate's intervals, as the book computes them.

    The two-level bootstrap of the replicate's predictions (random state =
    ``replicate``) gives, per encoder and axis, the percentile and the basic
    interval of the profile draws (:func:`~crsbench_lib.scoring.bootstrap.interval_summary`)
    and the axis interval of
    :func:`~crsbench_lib.scoring.two_level_bootstrap.axis_intervals` (method
    ``seed_t``: the seed level by Student's t with a Satterthwaite df, the test
    images by the bootstrap, centred on the point);
    per encoder the CRS intervals and per pair the CRS-difference intervals of
    its summary and pairwise tables; the Kendall tau-b interval of
    :func:`~crsbench_lib.scoring.agreement.agreement_uncertainty`; and the
    leading tier of :func:`~crsbench_lib.scoring.bootstrap.tied_with_leader`
    (one row per member, method ``set``).

    Parameters
    ----------
    predictions : sequence of ConditionPredictions
        One replicate of the protocol (one dataset, the profile's seeds).
    replicate : int
        Its index (also the bootstrap's random state).
    standard : ReferenceStandard, path or None
    n_draws : int
    interval : float
        Nominal coverage.
    n_permutations : int
        Of the tau's permutation test (not used by the coverage; kept small).

    Returns
    -------
    pandas.DataFrame
        Columns replicate, quantity, item, method, estimate, low, high, nominal.
    """
    from crsbench_lib.scoring.agreement import agreement_uncertainty
    from crsbench_lib.scoring.bootstrap import interval_summary, tied_with_leader
    from crsbench_lib.scoring.two_level_bootstrap import axis_intervals

    if len(predictions) == 0:
        raise SchemaError(f"replicate_intervals: replicate {replicate} has no predictions")
    boot = _bootstrap(predictions, standard, n_draws, int(replicate), interval)
    encoders = list(boot.encoders)
    rows = []
    seed_t = axis_intervals(boot, interval).set_index(["encoder", "axis"])
    for a, axis in enumerate(AXES):
        point = boot.point_profiles.loc[encoders, axis].to_numpy(dtype=float)
        spread = interval_summary(boot.profile_draws[:, :, a], point, interval)
        for e, name in enumerate(encoders):
            rows.append((axis_quantity(axis), name, "percentile", point[e], spread["low"][e], spread["high"][e]))
            rows.append((axis_quantity(axis), name, "basic", point[e], spread["basic_low"][e],
                         spread["basic_high"][e]))
            # The axis interval of amendment 26: the seed level by Student's t, the images by the bootstrap.
            own = seed_t.loc[(name, axis)]
            rows.append((axis_quantity(axis), name, SEED_T, own["centre"], own["low"], own["high"]))
    for _, r in boot.summary.iterrows():
        rows.append((CRS, str(r["encoder"]), "percentile", r["crs"], r["crs_low"], r["crs_high"]))
        rows.append((CRS, str(r["encoder"]), "basic", r["crs"], r["crs_basic_low"], r["crs_basic_high"]))
    for _, r in boot.pairwise.iterrows():
        item, sign = pair_item(str(r["encoder_a"]), str(r["encoder_b"]))
        for method, low, high in (("percentile", r["diff_low"], r["diff_high"]),
                                  ("basic", r["diff_basic_low"], r["diff_basic_high"])):
            ends = sorted((sign * float(low), sign * float(high)))
            rows.append((DIFFERENCE, item, method, sign * float(r["diff"]), ends[0], ends[1]))
    point = boot.point.set_index("encoder")
    tau = agreement_uncertainty(point["auroc"], point["crs"], boot.auroc_draws, boot.crs_draws, encoders,
                                n_permutations=n_permutations, interval=interval,
                                random_state=int(replicate))["kendall_tau_b"]
    rows.append((TAU, "all", "percentile", tau.estimate, tau.ci_low, tau.ci_high))
    for name in tied_with_leader(boot.summary, boot.pairwise):
        rows.append((TIER, name, SET_METHOD, np.nan, np.nan, np.nan))
    frame = pd.DataFrame(rows, columns=["quantity", "item", "method", "estimate", "low", "high"])
    frame.insert(0, "replicate", int(replicate))
    frame["nominal"] = float(interval)
    frame[["estimate", "low", "high"]] = frame[["estimate", "low", "high"]].astype(float)
    return frame[list(INTERVAL_COLUMNS)]


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SchemaError(f"{what} lacks column {missing[0]!r}")


def interval_hits(truth: pd.DataFrame, intervals: pd.DataFrame) -> pd.DataFrame:
    """One row per replicate and interval (or set): whether it covers the truth.

    Parameters
    ----------
    truth : pandas.DataFrame
        Columns quantity, item, truth, truth_se (:func:`truth_table`).
    intervals : pandas.DataFrame
        Columns replicate, quantity, item, method, estimate, low, high, nominal
        (:func:`replicate_intervals`). Rows of method ``set`` list the members
        of a set per replicate; the truth's row of that quantity names the
        true member.

    Returns
    -------
    pandas.DataFrame
        replicate, quantity, item, method, nominal, covered, width (NaN for a
        set: its size is in ``set_size``), truth_se, set_size, and ``error``:
        the interval's point estimate less the truth (NaN for a set).

    Raises
    ------
    SchemaError
        On a missing column, an interval without a truth, or a truth that
        names more than one member of a set quantity.

    Examples
    --------
    >>> truth = pd.DataFrame({"quantity": ["axis_D", "tier"], "item": ["a", "b"], "truth": [0.7, 0.0],
    ...                       "truth_se": [0.001, 0.0]})
    >>> intervals = pd.DataFrame({"replicate": [0, 0, 1], "quantity": ["axis_D", "tier", "tier"],
    ...     "item": ["a", "b", "a"], "method": ["percentile", "set", "set"], "estimate": [0.71, 0, 0],
    ...     "low": [0.69, 0, 0], "high": [0.72, 0, 0], "nominal": 0.95})
    >>> interval_hits(truth, intervals)[["replicate", "quantity", "covered"]].values.tolist()
    [[0, 'axis_D', True], [0, 'tier', True], [1, 'tier', False]]
    """
    _require(truth, TRUTH_COLUMNS, "the truth table")
    _require(intervals, INTERVAL_COLUMNS, "the interval table")
    if truth.duplicated(["quantity", "item"]).any():
        raise SchemaError("the truth table names a (quantity, item) twice")
    is_set = intervals["method"] == SET_METHOD
    bounded = intervals[~is_set].merge(truth, on=["quantity", "item"], how="left", validate="many_to_one")
    if bounded["truth"].isna().any():
        row = bounded[bounded["truth"].isna()].iloc[0]
        raise SchemaError(f"no truth for {row['quantity']} of {row['item']!r}")
    bounded["covered"] = (bounded["low"] <= bounded["truth"]) & (bounded["truth"] <= bounded["high"])
    bounded["width"] = bounded["high"] - bounded["low"]
    bounded["error"] = bounded["estimate"] - bounded["truth"]
    bounded["set_size"] = np.nan
    parts = [bounded]
    sets = intervals[is_set]
    if not sets.empty:
        rows = []
        for quantity, members in sets.groupby("quantity", sort=True):
            named = truth[truth["quantity"] == quantity]
            if len(named) != 1:
                raise SchemaError(f"the truth table must name exactly one member of set {quantity!r}, "
                                  f"found {len(named)}")
            true_item, se = str(named["item"].iloc[0]), float(named["truth_se"].iloc[0])
            for replicate, group in members.groupby("replicate", sort=True):
                rows.append({"replicate": replicate, "quantity": quantity, "item": true_item, "method": SET_METHOD,
                             "nominal": float(group["nominal"].iloc[0]),
                             "covered": bool((group["item"].astype(str) == true_item).any()),
                             "width": np.nan, "truth_se": se, "set_size": float(len(group)), "error": np.nan})
        parts.append(pd.DataFrame(rows))
    columns = ["replicate", "quantity", "item", "method", "nominal", "covered", "width", "truth_se", "set_size",
               "error"]
    out = pd.concat([p[columns] for p in parts], ignore_index=True)
    out["covered"] = out["covered"].astype(bool)
    return out.sort_values(["quantity", "method", "replicate", "item"], kind="stable").reset_index(drop=True)


def coverage_table(truth: pd.DataFrame, intervals: pd.DataFrame) -> pd.DataFrame:
    """Observed coverage per quantity and interval method, with its Monte-Carlo error.

    ``observed`` is the share of covering intervals over replicates and items.
    Its standard error treats the replicate as the unit (the items of one
    replicate share its draws): ``se = sd_r(c_r) / sqrt(R)`` of the
    per-replicate shares ``c_r`` (every replicate holds the same items), or the
    binomial ``sqrt(p (1 - p) / R)`` for one item per replicate, whichever is
    larger (a sample of replicates that all cover has sd 0). The replicate is
    the cluster of a cluster-robust standard error (Cameron & Miller 2015,
    *J. Human Resources* 50, 317-372).

    Parameters
    ----------
    truth, intervals : pandas.DataFrame
        As :func:`interval_hits`.

    Returns
    -------
    pandas.DataFrame
        quantity, method, nominal, observed, n (intervals), n_replicates,
        mc_se, mean_width, mean_truth_se, mean_set_size; ``mean_error``, the
        mean of point estimate less truth (the estimator's bias over the
        replicates, ``E[theta_hat] - theta``; Efron & Tibshirani 1993, eq. 10.1),
        and ``error_se``, its standard error with the replicate as unit (NaN
        for a set or a single replicate); quantities in alphabetical order.

    Examples
    --------
    >>> truth = pd.DataFrame({"quantity": ["m"], "item": ["x"], "truth": [0.0], "truth_se": [0.0]})
    >>> intervals = pd.DataFrame({"replicate": [0, 1, 2, 3], "quantity": "m", "item": "x", "method": "t",
    ...     "estimate": 0.0, "low": [-1, -1, 0.5, -2], "high": [1, 1, 1, 2], "nominal": 0.95})
    >>> row = coverage_table(truth, intervals).iloc[0]
    >>> float(row["observed"]), int(row["n"]), round(float(row["mc_se"]), 4)
    (0.75, 4, 0.25)
    """
    hits = interval_hits(truth, intervals)
    if hits.empty:
        raise SchemaError("coverage_table: no intervals")
    rows = []
    for (quantity, method), group in hits.groupby(["quantity", "method"], sort=True):
        per_replicate = group.groupby("replicate")["covered"].mean()
        r = len(per_replicate)
        p = float(group["covered"].mean())
        cluster = float(per_replicate.std(ddof=1) / np.sqrt(r)) if r > 1 else np.nan
        binomial = float(np.sqrt(p * (1.0 - p) / r))
        errors = group.groupby("replicate")["error"].mean()
        error_se = float(errors.std(ddof=1) / np.sqrt(r)) if r > 1 and errors.notna().all() else np.nan
        rows.append({
            "quantity": quantity, "method": method, "nominal": float(group["nominal"].iloc[0]), "observed": p,
            "n": len(group), "n_replicates": r, "mc_se": max(cluster, binomial) if r > 1 else np.nan,
            "mean_width": float(group["width"].mean()), "mean_truth_se": float(group["truth_se"].mean()),
            "mean_set_size": float(group["set_size"].mean()),
            "mean_error": float(group["error"].mean()), "error_se": error_se,
        })
    return pd.DataFrame(rows)


def normal_mean_intervals(
    mean: float, sd: float, n: int, n_replicates: int, interval: float = 0.95, random_state: int = 0,
) -> pd.DataFrame:
    """t intervals of a normal mean over simulated replicates, as an interval table.

    The known-truth check of :func:`coverage_table`: Student's t interval
    ``xbar +/- t_{n-1, 1-a/2} s / sqrt(n)`` of a normal sample covers the mean
    with probability exactly ``interval`` (Student 1908).

    Parameters
    ----------
    mean, sd : float
        The population.
    n : int
        Sample size (at least 2).
    n_replicates : int
    interval : float
    random_state : int

    Returns
    -------
    pandas.DataFrame
        An interval table (quantity ``normal_mean``, item ``mu``, method ``t``).

    Examples
    --------
    >>> table = normal_mean_intervals(0.0, 1.0, 10, 3)
    >>> table[["replicate", "quantity", "method"]].values.tolist()[0]
    [0, 'normal_mean', 't']
    """
    from scipy.stats import t as student

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ConfigError(f"parameter 'n' must be an integer of at least 2, found {n!r}")
    if not 0.0 < interval < 1.0:
        raise ConfigError(f"parameter 'interval' must lie in (0, 1), found {interval!r}")
    sample = np.random.default_rng(random_state).normal(mean, sd, size=(int(n_replicates), int(n)))
    centre = sample.mean(axis=1)
    half = student.ppf(0.5 + interval / 2.0, n - 1) * sample.std(axis=1, ddof=1) / np.sqrt(n)
    return pd.DataFrame({"replicate": np.arange(int(n_replicates)), "quantity": "normal_mean", "item": "mu",
                         "method": "t", "estimate": centre, "low": centre - half, "high": centre + half,
                         "nominal": float(interval)})


def scoring_fingerprint() -> str:
    """SHA-256 over the source of this module and every package module it runs.

    A scored audit is cached under it, so a change of the interval machinery
    (the bootstrap, the tier, the axes) rescores the cached predictions.
    """
    from crsbench_lib.imports import import_closure, import_graph, package_modules, source_fingerprint

    return source_fingerprint(import_closure([__name__], import_graph()), package_modules())


__all__ = [
    "CRS", "DIFFERENCE", "INTERVAL_COLUMNS", "SEED_T", "SET_METHOD", "TAU", "TIER", "TRUTH_COLUMNS", "axis_quantity",
    "coverage_table", "interval_hits", "normal_mean_intervals", "pair_item", "replicate_intervals", "scoring_fingerprint",
    "truth_table",
]
