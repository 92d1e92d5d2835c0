"""The leading tier: a confidence set for the best candidate (method section 9, amendments 15 and 24).

One definition, used by every page that names the tier (leading tier, selection
gate, glossary, method): the leading tier is the set of candidates that the
bootstrap cannot show to be worse than some other candidate, each candidate
tested with its own one-sided comparisons, so that the set holds the truly
best candidate with probability **at least** ``interval`` (95 %). Membership is
decided here only (the ``in_tier`` column of a bootstrap summary, which the
selection gate copies); its words live in one place too,
``LEADING_TIER_DEFINITION`` of the report's leading-tier sentences, which the
glossary and the method page repeat verbatim (a test checks it).

For candidates ``i`` and ``j`` with point CRS ``c_i`` and ``c_j`` and bootstrap
draws ``d*_ji = c*_j - c*_i`` of their difference:

* ``se_ji`` is the standard deviation of the draws ``d*_ji``;
* the draws are centred on their own mean, ``t*_ji = (d*_ji - mean(d*_ji)) / se_ji``,
  so that a bias of the draws (they can centre away from the point: see
  :func:`~crsbench_lib.scoring.bootstrap.interval_summary`) moves no decision;
* candidate ``i``'s critical value ``q_i`` is the ``interval`` quantile over
  draws of ``max_{j != i} t*_ji``: the largest *one-sided* standardised
  deviation among ``i``'s own comparisons with its rivals;
* ``i`` is shown worse than ``j`` when the lower bound
  ``(c_j - c_i) - q_i se_ji`` lies above zero, and belongs to the tier unless
  some rival ``j`` is shown better.

Why this holds the best (the marginal confidence set of Mogstad, Romano, Shaikh
and Wilhelm 2024, for the rank of one population, applied to rank 1): the
truly best candidate ``b`` leaves the set only if some lower bound
``(c_j - c_b) - q_b se_jb`` exceeds zero although ``theta_j - theta_b <= 0``;
that is a one-sided max-t test of the single null hypothesis "b is the best"
(all ``theta_j - theta_b <= 0``), of level ``1 - interval`` under the least
favourable configuration (all rivals tied with ``b``) and conservative
elsewhere: coverage is at least ``interval`` (asymptotically, as for any
bootstrap max-t test; Romano and Wolf 2005). Only ``b``'s comparisons need to
hold, not all pairs at once, so ``q_i`` is taken over ``E - 1`` one-sided
comparisons instead of the ``E (E - 1) / 2`` two-sided ones of the earlier
construction (``method="max_t"``, kept for comparison). A stepdown would not
change the set: membership asks only whether *some* comparison of ``i``
rejects, which the first step of a stepdown decides.

The pair interval reported for ``c_a - c_b`` is ``[(c_a - c_b) - q_b se_ab,
(c_a - c_b) + q_a se_ab]``: its lower end tests ``b``'s membership, its upper
end ``a``'s. A pair whose draws never differ (``se = 0``: both saturate
identically) is separated exactly when its point difference is not zero. The
point leader is always in the tier.

References
----------
Romano, J. P. and Wolf, M. (2005). Exact and approximate stepdown methods for
multiple hypothesis testing. *Journal of the American Statistical Association*
100(469), 94-108.
Mogstad, M., Romano, J. P., Shaikh, A. M. and Wilhelm, D. (2024). Inference for
ranks with applications to mobility across neighbourhoods and academic
achievement across countries. *Review of Economic Studies* 91(1), 476-518.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.errors import ConfigError, SchemaError

#: Constructions of the tier: per-candidate one-sided critical values (the default, amendment 24), or one
#: two-sided max-t critical value over every candidate pair (amendment 15, kept to compare).
TIER_METHODS: tuple[str, ...] = ("marginal", "max_t")


@dataclass(frozen=True, eq=False)
class TierDecision:
    """The comparisons behind a leading tier.

    Attributes
    ----------
    in_tier : numpy.ndarray
        (E,) bool: the candidate belongs to the confidence set for the best
        (False for every non-candidate).
    critical_values : numpy.ndarray
        (E,) ``q_i``: each candidate's critical value (NaN for a
        non-candidate; under ``max_t`` one value shared by all).
    critical_value : float
        The largest of ``critical_values`` (under ``max_t``, the shared one).
    se : numpy.ndarray
        (E, E): standard deviation of the draws of ``c_i - c_j``.
    low, high : numpy.ndarray
        (E, E): the interval of ``c_i - c_j``, ``low = (c_i - c_j) - q_j se``
        and ``high = (c_i - c_j) + q_i se`` (NaN on the diagonal).
    interval : float
    method : {"marginal", "max_t"}
    """

    in_tier: np.ndarray
    critical_values: np.ndarray
    critical_value: float
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    interval: float
    method: str = "marginal"


def best_confidence_set(
    draws: np.ndarray, point: np.ndarray, candidates: np.ndarray | None = None, interval: float = 0.95,
    method: str = "marginal",
) -> TierDecision:
    """The candidates not shown worse than another one: a confidence set for the best of level at least ``interval``.

    Parameters
    ----------
    draws : numpy.ndarray
        (B, E) bootstrap draws of the scores (higher is better), B >= 2.
    point : numpy.ndarray
        (E,) point estimates.
    candidates : numpy.ndarray, optional
        (E,) bool: which columns compete (default all). Critical values are
        taken over the candidates' comparisons only; intervals are reported
        for every pair (a non-candidate's own end with the largest candidate
        critical value).
    interval : float
        The set's coverage of the best (at least), in (0, 1).
    method : {"marginal", "max_t"}
        ``marginal``: per-candidate one-sided critical values (see the module
        docstring); ``max_t``: one two-sided critical value over every
        candidate pair, the quantile of ``max_ij |t*_ij|`` (wider; also
        covers at least ``interval``).

    Returns
    -------
    TierDecision

    Raises
    ------
    ConfigError
        On mismatched shapes, fewer than two draws, no candidate, an unknown
        method, or ``interval`` outside (0, 1).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> truth = np.array([0.70, 0.69, 0.50])
    >>> draws = truth + rng.normal(0.0, 0.01, (2000, 3))
    >>> best_confidence_set(draws, truth).in_tier.tolist()  # 0.01 apart: tied; 0.2 apart: not
    [True, True, False]
    """
    values = np.asarray(draws, dtype=float)
    centre = np.asarray(point, dtype=float)
    if values.ndim != 2 or centre.shape != (values.shape[1],):
        raise ConfigError(f"best_confidence_set: expected draws (B, E) and point (E,), found {values.shape} "
                          f"and {centre.shape}")
    if values.shape[0] < 2:
        raise ConfigError("best_confidence_set: needs at least two draws")
    if not 0.0 < interval < 1.0:
        raise ConfigError(f"parameter 'interval' must lie in (0, 1), found {interval!r}")
    if method not in TIER_METHODS:
        raise ConfigError(f"parameter 'method' must be one of {', '.join(TIER_METHODS)}, found {method!r}")
    n_e = values.shape[1]
    competing = np.ones(n_e, dtype=bool) if candidates is None else np.asarray(candidates, dtype=bool)
    if competing.shape != (n_e,) or not competing.any():
        raise ConfigError("best_confidence_set: 'candidates' must be (E,) bool with at least one True")
    # (B, E, E) differences c_i - c_j; E is small (tens), B a few thousand.
    diffs = values[:, :, None] - values[:, None, :]
    se = diffs.std(axis=0, ddof=1)
    deviation = diffs - diffs.mean(axis=0)
    pair = competing[:, None] & competing[None, :] & ~np.eye(n_e, dtype=bool) & (se > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        standardised = deviation / np.where(se > 0, se, 1.0)  # t*[b, j, i] of c_j - c_i
    critical = np.full(n_e, np.nan)
    if method == "max_t":
        shared = float(np.quantile(np.abs(standardised[:, pair]).max(axis=1), interval)) if pair.any() else 0.0
        critical[competing] = shared
    else:
        for i in np.flatnonzero(competing):
            rivals = pair[:, i]  # j with a comparison c_j - c_i
            # One-sided: only a rival's upward deviation can exclude i. Never below 0: a negative value would
            # exclude a candidate tied with a rival at the point (and the point leader); 0 only widens.
            quantile = float(np.quantile(standardised[:, rivals, i].max(axis=1), interval)) if rivals.any() else 0.0
            critical[i] = max(0.0, quantile)
    largest = float(np.nanmax(critical))
    own = np.where(np.isnan(critical), largest, critical)  # a non-candidate's end: the widest candidate value
    point_diff = centre[:, None] - centre[None, :]
    low = point_diff - own[None, :] * se  # tests j's membership: is i above j?
    high = point_diff + own[:, None] * se  # tests i's membership: is j above i?
    np.fill_diagonal(low, np.nan)
    np.fill_diagonal(high, np.nan)
    # j beats i when the lower bound of c_j - c_i (at q_i) lies above zero (for se = 0: when c_j > c_i).
    beats = np.where(se > 0, low > 0, point_diff > 0)  # beats[j, i]: j above i
    np.fill_diagonal(beats, False)
    beaten = (beats & competing[:, None]).any(axis=0)
    return TierDecision(competing & ~beaten, critical, largest, se, low, high, float(interval), method)


_PAIR_COLUMNS = ("encoder_a", "encoder_b", "diff", "sim_low", "sim_high", "diff_bias", "separated")


def leader_comparisons(pairwise: pd.DataFrame, leader: str, others: Sequence[str]) -> pd.DataFrame:
    """The intervals of ``CRS_leader - CRS_other`` that decide the tier, with their bias.

    Reads the pairwise table of a bootstrap (``sim_low``, ``sim_high``: the
    interval ``[(c_a - c_b) - q_b se_ab, (c_a - c_b) + q_a se_ab]`` of
    :func:`best_confidence_set`, centred on the point difference) and orients every row as the leader less
    the other encoder; a row stored the other way round is negated and its
    ends swapped.

    Parameters
    ----------
    pairwise : pandas.DataFrame
        A bootstrap result's ``pairwise`` table (encoder_a, encoder_b, diff,
        sim_low, sim_high, diff_bias, separated).
    leader : str
        The point leader.
    others : sequence of str
        The encoders compared with it, in the order wanted.

    Returns
    -------
    pandas.DataFrame
        One row per name of ``others``: ``encoder``, ``diff`` (point CRS of
        the leader less the encoder's), ``low``, ``high`` (its simultaneous
        interval), ``bias`` (mean of the draws of the difference less the
        point) and ``separated`` (the interval excludes zero).

    Raises
    ------
    SchemaError
        If a column or a pair is missing.

    Examples
    --------
    >>> pairwise = pd.DataFrame({"encoder_a": ["a", "c"], "encoder_b": ["b", "a"], "diff": [0.02, -0.1],
    ...                          "sim_low": [-0.01, -0.13], "sim_high": [0.05, -0.07], "diff_bias": [0.001, 0.002],
    ...                          "separated": [False, True]})
    >>> leader_comparisons(pairwise, "a", ["b", "c"])[["encoder", "low", "high", "separated"]]
      encoder   low  high  separated
    0       b -0.01  0.05      False
    1       c  0.07  0.13       True
    """
    missing = [c for c in _PAIR_COLUMNS if c not in pairwise.columns]
    if missing:
        raise SchemaError(f"leader_comparisons: the pairwise table lacks column {missing[0]!r}")
    rows = []
    for name in others:
        forward = pairwise[(pairwise["encoder_a"] == leader) & (pairwise["encoder_b"] == name)]
        backward = pairwise[(pairwise["encoder_a"] == name) & (pairwise["encoder_b"] == leader)]
        if not forward.empty:
            row = forward.iloc[0]
            values = (float(row["diff"]), float(row["sim_low"]), float(row["sim_high"]), float(row["diff_bias"]))
        elif not backward.empty:
            row = backward.iloc[0]
            values = (-float(row["diff"]), -float(row["sim_high"]), -float(row["sim_low"]), -float(row["diff_bias"]))
        else:
            raise SchemaError(f"leader_comparisons: no pairwise row for {leader!r} and {name!r}")
        rows.append({"encoder": str(name), "diff": values[0], "low": values[1], "high": values[2],
                     "bias": values[3], "separated": bool(row["separated"])})
    return pd.DataFrame(rows, columns=["encoder", "diff", "low", "high", "bias", "separated"])


__all__ = ["TIER_METHODS", "TierDecision", "best_confidence_set", "leader_comparisons"]


@dataclass(frozen=True)
class TierFacts:
    """The leading tier as the words that say what a team does next read it.

    Attributes
    ----------
    n_candidates : int
        Candidates ranked (references not counted).
    members : tuple of str
        The leading tier, the point leader first.
    """

    n_candidates: int
    members: tuple[str, ...]
