"""Resampling primitives shared by the uncertainty statements (method section 9, amendments 5-6).

Three building blocks, all on arrays and all deterministic for a given
``random_state``:

* :func:`percentile_interval`: the percentile bootstrap interval of a vector of
  draws, ``[q_{(1-c)/2}, q_{(1+c)/2}]`` with ``numpy.percentile``'s linear
  interpolation (Efron and Tibshirani 1993, "An Introduction to the Bootstrap",
  ch. 13), over the finite draws only.
* :func:`permutation_p_value`: a two-sided permutation test of the association
  of two paired vectors. Under the null of no association every pairing of
  ``y`` with ``x`` is equally likely; the p-value is the share of pairings
  whose statistic is at least as extreme (``|T*| >= |t|``). It is exact
  (every one of the ``n!`` pairings) when ``n! <= exact_limit``; otherwise
  Monte Carlo with ``B`` random pairings and ``p = (1 + #{|T*_b| >= |t|}) /
  (1 + B)``, which never reports 0 and is a valid p-value (Phipson and Smyth
  2010, "Permutation p-values should never be zero", Stat. Appl. Genet. Mol.
  Biol. 9(1)).
* :func:`crossed_weights`: the *pigeonhole* (crossed-factor) bootstrap for
  observations that share levels of several factors (encoders, datasets,
  seeds): each factor's levels are resampled with replacement independently,
  and an observation's weight in a draw is the product of its levels'
  multiplicities (Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat.
  1(2); McCullagh 2000, "Resampling and exchangeable arrays", Bernoulli 6(2)).
  Treating such observations as independent understates the variance.

:class:`Direction` says on which side of zero an interval lies; the words for
it are the report's business.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import pandas as pd

#: A statistic evaluated between one vector ``x`` (n,) and each row of ``Y`` (B, n).
RowStatistic = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: Largest ``n!`` enumerated by the exact permutation test (8! = 40320 pairings).
EXACT_PERMUTATION_LIMIT = 40320
# Permutations evaluated per batch: bounds memory at about batch x n(n-1)/2 floats.
_BATCH = 2048
# Relative tolerance under which a permuted statistic counts as equal to the
# observed one (the same value reached through a different summation order).
_TIE_RTOL = 1e-12


class Direction(StrEnum):
    """Where an interval lies relative to zero."""

    BELOW_ZERO = "below_zero"
    ABOVE_ZERO = "above_zero"
    SPANS_ZERO = "spans_zero"
    UNDEFINED = "undefined"


def interval_direction(low: float, high: float) -> Direction:
    """Side of zero of the interval ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Interval bounds.

    Returns
    -------
    Direction
        ``BELOW_ZERO`` if ``high < 0``, ``ABOVE_ZERO`` if ``low > 0``,
        ``UNDEFINED`` if a bound is NaN, else ``SPANS_ZERO`` (zero inside or on a
        bound).

    Examples
    --------
    >>> interval_direction(-0.03, -0.01)
    <Direction.BELOW_ZERO: 'below_zero'>
    >>> str(interval_direction(-0.01, 0.02))
    'spans_zero'
    """
    if math.isnan(low) or math.isnan(high):
        return Direction.UNDEFINED
    if high < 0.0:
        return Direction.BELOW_ZERO
    if low > 0.0:
        return Direction.ABOVE_ZERO
    return Direction.SPANS_ZERO


def check_interval(interval: float) -> float:
    """Return ``interval`` as a float, or raise ``ValueError`` if it is outside (0, 1)."""
    if isinstance(interval, bool) or not isinstance(interval, (int, float, np.floating)) or not 0.0 < interval < 1.0:
        raise ValueError(f"interval must be a coverage in (0, 1), got {interval!r}")
    return float(interval)


def check_count(value: int, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int, or raise ``ValueError`` if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def percentile_interval(draws: np.ndarray, interval: float = 0.95) -> tuple[float, float, int]:
    """Percentile interval of bootstrap draws, ignoring non-finite draws.

    Parameters
    ----------
    draws : numpy.ndarray
        One value per draw (any shape; flattened). NaN marks a draw in which the
        statistic was undefined (a constant ranking, say).
    interval : float
        Coverage ``c`` in (0, 1).

    Returns
    -------
    low, high : float
        The ``(1 - c) / 2`` and ``(1 + c) / 2`` percentiles (NaN if no draw is
        finite).
    n_valid : int
        Number of finite draws behind the interval.

    Examples
    --------
    >>> percentile_interval(np.arange(101.0), 0.5)
    (25.0, 75.0, 101)
    """
    coverage = check_interval(interval)
    values = np.asarray(draws, dtype=float).reshape(-1)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan"), 0
    tail = (1.0 - coverage) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return float(low), float(high), int(values.size)


@dataclass(frozen=True)
class PermutationTest:
    """Outcome of :func:`permutation_p_value`.

    Attributes
    ----------
    statistic : float
        The observed statistic.
    p_value : float
        Two-sided p-value (NaN when the observed statistic is undefined).
    method : str
        ``"exact"`` (every pairing) or ``"monte_carlo"``.
    n_permutations : int
        Pairings evaluated (``n!`` when exact).
    """

    statistic: float
    p_value: float
    method: str
    n_permutations: int


def _permutation_batches(
    n: int, n_permutations: int, random_state: int, exact_limit: int
) -> tuple[str, int, list[np.ndarray]]:
    if math.factorial(n) <= exact_limit:
        every = np.array(list(itertools.permutations(range(n))), dtype=np.intp)
        return "exact", len(every), [every[i : i + _BATCH] for i in range(0, len(every), _BATCH)]
    rng = np.random.default_rng(random_state)
    batches = []
    for start in range(0, n_permutations, _BATCH):
        size = min(_BATCH, n_permutations - start)
        batches.append(rng.permuted(np.tile(np.arange(n), (size, 1)), axis=1))
    return "monte_carlo", n_permutations, batches


def permutation_p_value(
    x: np.ndarray,
    y: np.ndarray,
    statistic: RowStatistic,
    n_permutations: int = 9999,
    random_state: int = 0,
    exact_limit: int = EXACT_PERMUTATION_LIMIT,
) -> PermutationTest:
    """Two-sided permutation p-value of the association of ``x`` and ``y``.

    ``p = #{pi : |T(x, y_pi)| >= |T(x, y)|} / n!`` over all pairings when
    ``n! <= exact_limit``; otherwise ``(1 + #{b : |T_b| >= |t|}) / (1 + B)`` over
    ``B = n_permutations`` random pairings (Phipson and Smyth 2010). Permuting
    ``y`` keeps its ties, so tie-corrected statistics (tau-b) stay comparable.

    Parameters
    ----------
    x, y : numpy.ndarray
        Paired observations, shape (n,), n >= 2.
    statistic : callable
        ``statistic(x, Y)`` returns the statistic of ``x`` with each row of ``Y``
        (shape (B, n) -> (B,)), NaN where undefined.
    n_permutations : int
        Random pairings when the test is not exact.
    random_state : int
        Seed of the random pairings (the exact test uses none).
    exact_limit : int
        Enumerate every pairing when ``n!`` is at most this.

    Returns
    -------
    PermutationTest

    Raises
    ------
    ValueError
        If the shapes differ, n < 2, or a count is not a positive integer.

    Examples
    --------
    >>> from crsbench_lib.scoring.rank_statistics import kendall_tau_b_rows
    >>> test = permutation_p_value(np.arange(5.0), np.arange(5.0), kendall_tau_b_rows)
    >>> test.method, test.n_permutations, round(test.p_value, 4)  # 2 of 120 pairings have |tau| = 1
    ('exact', 120, 0.0167)
    """
    a = np.asarray(x, dtype=float).reshape(-1)
    b = np.asarray(y, dtype=float).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"x and y must have the same length, found {a.size} and {b.size}")
    if a.size < 2:
        raise ValueError(f"a permutation test needs at least 2 pairs, found {a.size}")
    n_permutations = check_count(n_permutations, "n_permutations")
    exact_limit = check_count(exact_limit, "exact_limit", minimum=0)
    observed = float(statistic(a, b[None, :])[0])
    method, count, batches = _permutation_batches(a.size, n_permutations, random_state, exact_limit)
    if not np.isfinite(observed):
        return PermutationTest(statistic=observed, p_value=float("nan"), method=method, n_permutations=count)
    threshold = abs(observed) * (1.0 - _TIE_RTOL)
    extreme = 0
    for order in batches:
        values = statistic(a, b[order])
        extreme += int(np.count_nonzero(np.abs(values) >= threshold))
    p_value = extreme / count if method == "exact" else (1 + extreme) / (1 + count)
    return PermutationTest(statistic=observed, p_value=float(p_value), method=method, n_permutations=count)


def multiplicities(n_levels: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of ``n_levels`` levels is picked when drawing ``n_levels`` with replacement.

    Returns
    -------
    numpy.ndarray
        Shape (n_draws, n_levels), float, each row summing to ``n_levels``.
    """
    picks = rng.integers(0, n_levels, size=(n_draws, n_levels))
    counts = np.zeros((n_draws, n_levels))
    np.add.at(counts, (np.repeat(np.arange(n_draws), n_levels), picks.reshape(-1)), 1.0)
    return counts


def crossed_weights(
    codes: Mapping[str, np.ndarray],
    n_draws: int,
    random_state: int | np.random.Generator = 0,
    factors: Sequence[str] | None = None,
) -> np.ndarray:
    """Observation weights of a crossed-factor (pigeonhole) bootstrap.

    For each resampled factor ``f`` with ``m_f`` levels, every draw picks
    ``m_f`` levels with replacement; observation ``i`` then weighs
    ``w_i = prod_f count_f(level_f(i))`` (Owen 2007). A weighted statistic with
    these weights equals the statistic on the data set in which each resampled
    level is repeated as often as it was drawn. The factors are drawn in the
    order given, from one generator, so the same ``random_state`` gives the
    same draws.

    Parameters
    ----------
    codes : mapping of str to numpy.ndarray
        Per factor, the integer level code (0..m_f-1) of every observation;
        all arrays of the same length N.
    n_draws : int
        Number of bootstrap draws B.
    random_state : int or numpy.random.Generator
        Seed of the draws, or a generator to draw from (to chain several calls
        on one stream).
    factors : sequence of str, optional
        The factors to resample (default every key of ``codes``); the others
        are kept fixed.

    Returns
    -------
    numpy.ndarray
        Shape (B, N), non-negative weights.

    Raises
    ------
    ValueError
        If a factor is unknown, codes differ in length or are not 0-based
        integers, or ``n_draws`` is not a positive integer.

    Examples
    --------
    >>> w = crossed_weights({"encoder": np.array([0, 0, 1, 1]), "seed": np.array([0, 1, 0, 1])}, 2)
    >>> w.shape
    (2, 4)
    """
    n_draws = check_count(n_draws, "n_draws")
    chosen = list(codes) if factors is None else list(factors)
    unknown = [f for f in chosen if f not in codes]
    if unknown:
        raise ValueError(f"unknown resampling factor(s) {unknown}; expected some of {sorted(codes)}")
    lengths = {len(np.asarray(v)) for v in codes.values()}
    if len(lengths) != 1:
        raise ValueError(f"factor codes must all have the same length, found lengths {sorted(lengths)}")
    (n_obs,) = lengths
    rng = np.random.default_rng(random_state)
    weights = np.ones((n_draws, n_obs))
    for factor in chosen:
        level = np.asarray(codes[factor])
        if level.size and (not np.issubdtype(level.dtype, np.integer) or level.min() < 0):
            raise ValueError(f"codes of factor {factor!r} must be non-negative integers")
        n_levels = int(level.max()) + 1 if level.size else 0
        if n_levels == 0:
            continue
        weights *= multiplicities(n_levels, n_draws, rng)[:, level]
    return weights


def factor_codes(frame: pd.DataFrame, factors: Sequence[str]) -> dict[str, np.ndarray]:
    """Integer level codes (sorted levels) of some columns of a DataFrame.

    Parameters
    ----------
    frame : pandas.DataFrame
        The observations.
    factors : sequence of str
        Columns to code.

    Returns
    -------
    dict of str to numpy.ndarray
        Per column, the 0-based code of each row (levels in sorted order, so
        the codes do not depend on row order).
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    out: dict[str, np.ndarray] = {}
    for factor in factors:
        if factor not in frame.columns:
            raise ValueError(f"no column {factor!r} to resample (columns: {', '.join(map(str, frame.columns))})")
        values = frame[factor].astype(str).to_numpy()
        levels = np.unique(values)
        out[factor] = np.searchsorted(levels, values).astype(np.intp)
    return out
