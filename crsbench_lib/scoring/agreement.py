"""Agreement between two rankings of the same encoders (method section 6, item 1).

Both rankings put the *highest* value at rank 1 (higher AUROC, higher CRS).
For n items there are n(n-1)/2 pairs; a pair is

* concordant when both rankings order it the same way,
* discordant (a *reversed pair*) when they order it oppositely,
* tied when either ranking ties it (counted separately for each ranking).

Statistics (Kendall tau-b, reversed pairs counted exactly, Spearman rho on
average ranks) come from their one home, :mod:`crsbench_lib.scoring.rank_statistics`;
this module adds the mean absolute rank displacement: the mean over items of
``|rank_a - rank_b|`` on average ranks.

Uncertainty (method section 9, amendment 6): :func:`rank_correlation_uncertainty` gives tau-b
or rho a percentile interval over bootstrap draws (:func:`correlation_draws` on
the per-draw score matrices of the leading-tier bootstrap, or
:func:`item_bootstrap_draws` when there are none) and a two-sided permutation
p-value (:func:`~crsbench_lib.scoring.resampling.permutation_p_value`: exact up
to 8 items, else Monte Carlo with a fixed seed); :func:`agreement_uncertainty`
does both statistics of the AUROC-CRS agreement at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.rank_statistics import (
    descending_ranks,
    kendall_tau_b,
    kendall_tau_b_rows,
    pair_counts,
    spearman_rho,
    spearman_rho_rows,
)
from crsbench_lib.scoring.resampling import (
    Direction,
    check_count,
    check_interval,
    interval_direction,
    percentile_interval,
    permutation_p_value,
)
from crsbench_lib.standard import AXES

if TYPE_CHECKING:
    from crsbench_lib.scoring.retest import NoiseVerdict


@dataclass(frozen=True)
class RankAgreement:
    """Agreement figures of two rankings.

    Attributes
    ----------
    n : int
        Number of ranked items.
    tau_b, rho : float
        Kendall tau-b and Spearman rho (NaN when a ranking is constant).
    reversed_pairs : int
        Discordant pairs (ordered oppositely, tied in neither ranking).
    concordant_pairs : int
        Pairs ordered the same way.
    n_pairs : int
        n(n-1)/2.
    mean_abs_displacement : float
        Mean of |rank_a - rank_b| over items (average ranks).
    sum_abs_displacement, sum_sq_displacement : float
        Sum of |d| and of d^2 over items.
    ties : dict
        Pairs tied in ``"auroc"`` (the first ranking), in ``"crs"`` (the
        second) and in ``"both"``.
    """

    n: int
    tau_b: float
    rho: float
    reversed_pairs: int
    concordant_pairs: int
    n_pairs: int
    mean_abs_displacement: float
    sum_abs_displacement: float
    sum_sq_displacement: float
    ties: dict[str, int]

    @property
    def has_ties(self) -> bool:
        """Whether either ranking has a tied pair."""
        return self.ties["auroc"] > 0 or self.ties["crs"] > 0


def _align(first: pd.Series | np.ndarray, second: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    if isinstance(first, pd.Series) and isinstance(second, pd.Series):
        if set(first.index) != set(second.index) or len(first) != len(second):
            raise SchemaError("the two rankings must cover the same encoders (index labels differ)")
        if first.index.has_duplicates:
            raise SchemaError("a ranking names an encoder twice")
        second = second.reindex(first.index)
        names = [str(i) for i in first.index]
        a, b = first.to_numpy(dtype=float), second.to_numpy(dtype=float)
    else:
        a, b = np.asarray(first, dtype=float).reshape(-1), np.asarray(second, dtype=float).reshape(-1)
        if a.shape != b.shape:
            raise SchemaError(f"the two rankings must have the same length, found {a.size} and {b.size}")
        names = [str(i) for i in range(a.size)]
    if a.size < 2:
        raise SchemaError(f"rank agreement needs at least 2 items, found {a.size}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise SchemaError("rankings contain NaN")
    return a, b, names


def rank_agreement(auroc: pd.Series | np.ndarray, crs: pd.Series | np.ndarray) -> RankAgreement:
    """Agreement of the AUROC ranking and the CRS ranking of the same encoders.

    Parameters
    ----------
    auroc, crs : pandas.Series or numpy.ndarray
        Scores, higher is better (rank 1). Series are aligned on their index
        (encoder names); arrays by position.

    Returns
    -------
    RankAgreement

    Raises
    ------
    SchemaError
        If the inputs cover different encoders, have fewer than 2 items, or
        hold NaN.
    """
    a, b, _ = _align(auroc, crs)
    counts = pair_counts(a, b)
    d = descending_ranks(a) - descending_ranks(b)
    return RankAgreement(
        n=int(a.size),
        tau_b=kendall_tau_b(a, b),
        rho=spearman_rho(a, b),
        reversed_pairs=counts["discordant"],
        concordant_pairs=counts["concordant"],
        n_pairs=counts["pairs"],
        mean_abs_displacement=float(np.abs(d).mean()),
        sum_abs_displacement=float(np.abs(d).sum()),
        sum_sq_displacement=float((d * d).sum()),
        ties={"auroc": counts["tied_a"], "crs": counts["tied_b"], "both": counts["tied_both"]},
    )


def rank_table(auroc: pd.Series, crs: pd.Series) -> pd.DataFrame:
    """Per-encoder ranks under both scores and the change of rank between them.

    Returns
    -------
    pandas.DataFrame
        encoder, auroc, rank_auroc, crs, rank_crs, rank_change
        (``rank_auroc - rank_crs``: positive when the CRS ranks the encoder
        higher than AUROC does, the sign every page uses for a change of rank),
        sorted by CRS rank.
    """
    a, b, names = _align(auroc, crs)
    table = pd.DataFrame(
        {
            "encoder": names,
            "auroc": a,
            "rank_auroc": descending_ranks(a),
            "crs": b,
            "rank_crs": descending_ranks(b),
        }
    )
    table["rank_change"] = table["rank_auroc"] - table["rank_crs"]
    for column in ("rank_auroc", "rank_crs", "rank_change"):
        if (table[column] == table[column].round()).all():  # no ties: show whole ranks
            table[column] = table[column].astype("int64")
    order = np.lexsort((table["encoder"].to_numpy(), table["rank_crs"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)


def score_agreement(scores: pd.DataFrame) -> RankAgreement:
    """Agreement of aggregate AUROC (raw ``D``) and CRS in a scored table.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~crsbench_lib.scoring.crs.score_profiles` (columns
        encoder, D, crs).
    """
    missing = [c for c in ("encoder", "D", "crs") if c not in scores.columns]
    if missing:
        raise SchemaError(f"scored table lacks column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    indexed = scores.set_index("encoder")
    return rank_agreement(indexed["D"], indexed["crs"])


@dataclass(frozen=True)
class AgreementFacts:
    """Every number and verdict the agreement page's takeaway states (its text file's context).

    Attributes
    ----------
    n_candidates : int
        Candidates ranked.
    tau_b : float
        Kendall's tau-b between the AUROC and the CRS rankings.
    reversed_pairs, n_pairs : int
        Pairs the two rankings order oppositely (counted), of all pairs.
    leader_auroc, leader_crs : str
        The first candidate under each ranking.
    noise : NoiseVerdict
        Where tau_b lies against each ranking's test-retest range
        (:func:`crsbench_lib.scoring.retest.noise_verdict`).
    """

    n_candidates: int
    tau_b: float
    reversed_pairs: int
    n_pairs: int
    leader_auroc: str
    leader_crs: str
    noise: NoiseVerdict


def agreement_facts(result: RankAgreement, leaders: tuple[str, str], noise: pd.DataFrame | None = None,
                    level: float = 0.95) -> AgreementFacts:
    """The agreement page's facts from its :class:`RankAgreement`, its two leaders and its noise table.

    Examples
    --------
    >>> result = rank_agreement(np.array([0.9, 0.8, 0.7]), np.array([0.6, 0.7, 0.5]))
    >>> facts = agreement_facts(result, ("0", "1"))
    >>> facts.reversed_pairs, facts.n_pairs, facts.noise.verdict
    (1, 3, 'none')
    """
    from crsbench_lib.scoring.retest import noise_verdict

    return AgreementFacts(
        n_candidates=int(result.n),
        tau_b=float(result.tau_b),
        reversed_pairs=int(result.reversed_pairs),
        n_pairs=int(result.n_pairs),
        leader_auroc=str(leaders[0]),
        leader_crs=str(leaders[1]),
        noise=noise_verdict(float(result.tau_b), noise, level),
    )


def check_floor_columns(scores: pd.DataFrame) -> None:
    """Raise ValueError naming the first missing column of a scored table (``s_D .. s_R``, ``crs``)."""
    missing = [c for c in (*(f"s_{axis}" for axis in AXES), "crs") if c not in scores.columns]
    if missing:
        raise ValueError(f"scores: missing column {missing[0]!r} (expected crsbench_lib.scoring.crs.score_results rows)")


def floor_axis_counts(scores: pd.DataFrame) -> dict[str, int]:
    """How many candidates have each axis as their lowest normalised value, most first.

    Parameters
    ----------
    scores : pandas.DataFrame
        Candidates' rows with ``s_D, s_C, s_L, s_R`` and ``crs``
        (:func:`crsbench_lib.scoring.crs.score_results`).

    Returns
    -------
    dict
        Axis letter -> number of candidates whose lowest axis it is (ties
        count for every tied axis); axes that are nobody's floor are left out.
        Ordered by count, then D, C, L, R.

    Raises
    ------
    ValueError
        If a column is missing.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [(0.7, 0.8, 0.85, 0.82, 0.69), (0.5, 0.8, 0.6, 0.7, 0.52), (0.3, 0.7, 0.2, 0.5, 0.30)]
    >>> floor_axis_counts(pd.DataFrame(rows, columns=["s_D", "s_C", "s_L", "s_R", "crs"]))
    {'D': 2, 'L': 1}
    """
    check_floor_columns(scores)
    if len(scores) == 0:
        return {}
    values = scores[[f"s_{axis}" for axis in AXES]].to_numpy(dtype=float)
    lowest = np.isclose(values, values.min(axis=1, keepdims=True), rtol=0, atol=1e-12)
    counts = {axis: int(lowest[:, k].sum()) for k, axis in enumerate(AXES) if lowest[:, k].any()}
    return dict(sorted(counts.items(), key=lambda item: (-item[1], list(AXES).index(item[0]))))


def auroc_variance_share(scores: pd.DataFrame) -> float | None:
    """The share of the CRS's variance across candidates that the normalised AUROC explains (squared Pearson r).

    Parameters
    ----------
    scores : pandas.DataFrame
        Candidates' rows with ``s_D`` and ``crs``.

    Returns
    -------
    float or None
        ``r**2`` of ``s_D`` against ``crs``; None for fewer than 3 rows or a
        constant column.

    Examples
    --------
    >>> import pandas as pd
    >>> round(auroc_variance_share(pd.DataFrame({"s_D": [0.1, 0.5, 0.9], "crs": [0.2, 0.4, 0.9]})), 3)
    0.942
    >>> auroc_variance_share(pd.DataFrame({"s_D": [0.1, 0.5], "crs": [0.2, 0.4]})) is None
    True
    """
    s_d, score = scores["s_D"].to_numpy(dtype=float), scores["crs"].to_numpy(dtype=float)
    if len(s_d) < 3 or np.ptp(s_d) == 0 or np.ptp(score) == 0:
        return None
    r = float(np.corrcoef(s_d, score)[0, 1])
    return r * r



#: The rank correlations with an uncertainty statement, by name.
RANK_STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "kendall_tau_b": kendall_tau_b_rows,
    "spearman_rho": spearman_rho_rows,
}


@dataclass(frozen=True)
class CorrelationUncertainty:
    """A correlation with a percentile interval and a permutation p-value.

    Attributes
    ----------
    statistic : str
        ``"kendall_tau_b"``, ``"spearman_rho"`` or ``"pearson_r"``.
    estimate : float
        The statistic on the full data.
    ci_low, ci_high : float
        Percentile interval of the statistic over the draws.
    interval : float
        Coverage of the interval.
    interval_method : str
        Where the draws come from: ``"draws"`` (given bootstrap draw matrices,
        e.g. the leading-tier bootstrap), ``"item_bootstrap"`` (the ranked items
        resampled with replacement) or ``"cluster_bootstrap"``.
    n_draws : int
        Draws in which the statistic was defined (the interval's support).
    p_value : float
        Two-sided permutation p-value of no association (NaN where not computed).
    p_method : str
        ``"exact"``, ``"monte_carlo"`` or ``"none"``.
    n_permutations : int
        Pairings behind the p-value (0 when none).
    n : int
        Number of paired items (encoders, cells).
    """

    statistic: str
    estimate: float
    ci_low: float
    ci_high: float
    interval: float
    interval_method: str
    n_draws: int
    p_value: float
    p_method: str
    n_permutations: int
    n: int

    @property
    def direction(self) -> Direction:
        """On which side of zero the interval lies."""
        return interval_direction(self.ci_low, self.ci_high)

    def as_dict(self) -> dict[str, object]:
        """The fields and ``direction`` as a flat mapping (one row of a table)."""
        row: dict[str, object] = dict(asdict(self))
        row["direction"] = str(self.direction)
        return row


def _statistic(name: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    if name not in RANK_STATISTICS:
        raise ValueError(f"unknown rank statistic {name!r} (expected one of {', '.join(RANK_STATISTICS)})")
    return RANK_STATISTICS[name]


def correlation_draws(x_draws: np.ndarray, y_draws: np.ndarray, statistic: str = "kendall_tau_b") -> np.ndarray:
    """A rank correlation between the two score vectors of every bootstrap draw.

    Parameters
    ----------
    x_draws, y_draws : numpy.ndarray
        Shape (n_draws, n_items), paired by row (the same resample) and column
        (the same item), e.g. ``auroc_draws`` and ``crs_draws`` of the
        leading-tier bootstrap.
    statistic : {"kendall_tau_b", "spearman_rho"}

    Returns
    -------
    numpy.ndarray
        Shape (n_draws,); NaN where a draw's ranking is constant.

    Raises
    ------
    ValueError
        If the arrays are not 2-D of the same shape with at least 2 columns, or
        hold NaN.
    """
    a = np.asarray(x_draws, dtype=float)
    b = np.asarray(y_draws, dtype=float)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"draw matrices must be 2-D of the same shape (n_draws, n_items), found {a.shape} and {b.shape}")
    if a.shape[1] < 2:
        raise ValueError(f"draw matrices need at least 2 items (columns), found {a.shape[1]}")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("draw matrices contain NaN")
    return _statistic(statistic)(a, b)


def item_bootstrap_draws(
    x: np.ndarray, y: np.ndarray, statistic: str = "kendall_tau_b", n_draws: int = 1000, random_state: int = 0
) -> np.ndarray:
    """A rank correlation on item resamples: the n items drawn n times with replacement.

    A resampled item appears several times; its copies are tied in both
    rankings, which tau-b and the average ranks of rho discount.

    Parameters
    ----------
    x, y : numpy.ndarray
        Paired scores, shape (n,).
    statistic : {"kendall_tau_b", "spearman_rho"}
    n_draws : int
        Number of resamples.
    random_state : int
        Seed of the resampling.

    Returns
    -------
    numpy.ndarray
        Shape (n_draws,); NaN where a resample is constant in either score.
    """
    a, b, _ = _align(x, y)
    n_draws = check_count(n_draws, "n_draws")
    rng = np.random.default_rng(random_state)
    picks = rng.integers(0, a.size, size=(n_draws, a.size))
    return _statistic(statistic)(a[picks], b[picks])


def rank_correlation_uncertainty(
    x: pd.Series | np.ndarray,
    y: pd.Series | np.ndarray,
    statistic: str = "kendall_tau_b",
    *,
    x_draws: np.ndarray | None = None,
    y_draws: np.ndarray | None = None,
    n_draws: int = 1000,
    n_permutations: int = 9999,
    interval: float = 0.95,
    random_state: int = 0,
) -> CorrelationUncertainty:
    """A rank correlation with a percentile interval and a permutation p-value.

    The interval is the percentile interval (:func:`~.resampling.percentile_interval`)
    of the statistic over bootstrap draws: those of the given draw matrices
    (:func:`correlation_draws`) when given, else item resamples
    (:func:`item_bootstrap_draws`). The p-value is the two-sided permutation
    test of :func:`~.resampling.permutation_p_value` (exact up to 8 items).

    Parameters
    ----------
    x, y : pandas.Series or numpy.ndarray
        Point scores (aligned on the index when both are Series).
    statistic : {"kendall_tau_b", "spearman_rho"}
    x_draws, y_draws : numpy.ndarray, optional
        Bootstrap draws of the two scores, shape (n_draws, n), columns in the
        order of ``x`` (give both or neither).
    n_draws : int
        Item resamples when no draw matrices are given.
    n_permutations : int
        Random pairings of the Monte Carlo permutation test.
    interval : float
        Coverage of the interval.
    random_state : int
        Seed of the item resampling and of the permutations.

    Returns
    -------
    CorrelationUncertainty

    Raises
    ------
    SchemaError
        If the point scores do not pair up (see :func:`rank_agreement`).
    ValueError
        If only one draw matrix is given, the draws do not have one column per
        item, or a parameter is invalid.

    Examples
    --------
    >>> u = rank_correlation_uncertainty(np.arange(6.0), np.array([0.0, 2, 1, 3, 5, 4]))
    >>> round(u.estimate, 3), u.p_method, u.interval_method
    (0.733, 'exact', 'item_bootstrap')
    """
    a, b, _ = _align(x, y)
    coverage = check_interval(interval)
    row_statistic = _statistic(statistic)
    if (x_draws is None) != (y_draws is None):
        raise ValueError("give both draw matrices (x_draws and y_draws) or neither")
    if x_draws is not None and y_draws is not None:
        draws = correlation_draws(x_draws, y_draws, statistic)
        if np.asarray(x_draws).shape[1] != a.size:
            raise ValueError(f"draw matrices have {np.asarray(x_draws).shape[1]} columns for {a.size} items")
        method = "draws"
    else:
        draws = item_bootstrap_draws(a, b, statistic, n_draws=n_draws, random_state=random_state)
        method = "item_bootstrap"
    low, high, n_valid = percentile_interval(draws, coverage)
    test = permutation_p_value(a, b, row_statistic, n_permutations=n_permutations, random_state=random_state)
    return CorrelationUncertainty(
        statistic=statistic,
        estimate=test.statistic,
        ci_low=low,
        ci_high=high,
        interval=coverage,
        interval_method=method,
        n_draws=n_valid,
        p_value=test.p_value,
        p_method=test.method,
        n_permutations=test.n_permutations,
        n=int(a.size),
    )


def _draw_columns(draws: np.ndarray, encoders: Sequence[str], order: Sequence[str], name: str) -> np.ndarray:
    matrix = np.asarray(draws, dtype=float)
    if matrix.ndim != 2 or matrix.shape[1] != len(encoders):
        raise SchemaError(f"{name}: expected shape (n_draws, {len(encoders)}) for {len(encoders)} encoders, found {matrix.shape}")
    position = {str(e): i for i, e in enumerate(encoders)}
    missing = [e for e in order if e not in position]
    if missing:
        raise SchemaError(f"{name}: no draws for encoder {missing[0]!r}")
    return matrix[:, [position[e] for e in order]]


def agreement_uncertainty(
    auroc: pd.Series,
    crs: pd.Series,
    auroc_draws: np.ndarray,
    crs_draws: np.ndarray,
    encoders: Sequence[str],
    n_permutations: int = 9999,
    interval: float = 0.95,
    random_state: int = 0,
) -> dict[str, CorrelationUncertainty]:
    """Kendall tau-b and Spearman rho of AUROC and CRS, each with an interval and a p-value.

    The interval of each statistic is the percentile interval of its values in
    the bootstrap draws (the leading-tier bootstrap's per-draw aggregate AUROC
    and CRS, method section 9, amendments 4 and 6); the p-value is a two-sided permutation
    test of no association between the point rankings (Monte Carlo with
    ``n_permutations`` pairings beyond 8 encoders, Phipson and Smyth 2010).

    Parameters
    ----------
    auroc, crs : pandas.Series
        Point scores indexed by encoder (e.g. columns ``D`` and ``crs`` of a
        score table).
    auroc_draws, crs_draws : numpy.ndarray
        Shape (n_draws, len(encoders)): the scores in every bootstrap draw.
    encoders : sequence of str
        Column order of the draw matrices.
    n_permutations, interval, random_state
        See :func:`rank_correlation_uncertainty`.

    Returns
    -------
    dict of str to CorrelationUncertainty
        Keys ``"kendall_tau_b"`` and ``"spearman_rho"``.

    Raises
    ------
    SchemaError
        If the scores do not cover the same encoders, or the draws lack one of
        them or have the wrong shape.

    Examples
    --------
    >>> names = ["a", "b", "c", "d"]
    >>> auroc = pd.Series([0.9, 0.8, 0.7, 0.6], index=names)
    >>> crs = pd.Series([0.6, 0.7, 0.5, 0.4], index=names)
    >>> draws = np.tile(auroc.to_numpy(), (5, 1)), np.tile(crs.to_numpy(), (5, 1))
    >>> u = agreement_uncertainty(auroc, crs, *draws, encoders=names)
    >>> round(u["kendall_tau_b"].estimate, 3), u["kendall_tau_b"].ci_low == u["kendall_tau_b"].ci_high
    (0.667, True)
    """
    a, b, order = _align(auroc, crs)
    x_draws = _draw_columns(auroc_draws, encoders, order, "auroc_draws")
    y_draws = _draw_columns(crs_draws, encoders, order, "crs_draws")
    return {
        name: rank_correlation_uncertainty(
            a,
            b,
            name,
            x_draws=x_draws,
            y_draws=y_draws,
            n_permutations=n_permutations,
            interval=interval,
            random_state=random_state,
        )
        for name in RANK_STATISTICS
    }


def uncertainty_table(items: dict[str, CorrelationUncertainty]) -> pd.DataFrame:
    """One row per named correlation (``name`` first, then the fields and ``direction``)."""
    return pd.DataFrame([{"name": name, **item.as_dict()} for name, item in items.items()])


def decisive_reversal(scores: pd.DataFrame, references: Sequence[str] = ()) -> tuple[str, str, int] | None:
    """The reversed candidate pair with the largest CRS gap: the pair a worked decision walks through.

    A pair is reversed when clean AUROC (``D``) and the CRS order it oppositely
    (a tie in either is no reversal, as in :func:`pair_counts`). Of the reversed
    pairs the one whose CRS difference is largest is the decision the
    reliability axes change most; ties are broken by the names, so the choice
    does not depend on row order.

    Parameters
    ----------
    scores : pandas.DataFrame
        A score table (columns ``encoder``, ``D``, ``crs``).
    references : sequence of str
        Reference encoders, left out (never ranked).

    Returns
    -------
    (str, str, int) or None
        ``(auroc_choice, crs_choice, n_reversed)``: the encoder AUROC ranks
        higher, the one the CRS ranks higher, and how many candidate pairs are
        reversed; None when no pair is.

    Examples
    --------
    >>> table = pd.DataFrame({"encoder": ["a", "b", "c"], "D": [0.86, 0.84, 0.80], "crs": [0.60, 0.70, 0.65]})
    >>> decisive_reversal(table)
    ('a', 'b', 2)
    """
    kept = scores[~scores["encoder"].astype(str).isin(set(references))]
    names = kept["encoder"].astype(str).to_numpy()
    d = kept["D"].to_numpy(dtype=float)
    c = kept["crs"].to_numpy(dtype=float)
    i, j = np.triu_indices(len(names), k=1)
    reversed_ = np.sign(d[i] - d[j]) * np.sign(c[i] - c[j]) < 0
    if not reversed_.any():
        return None
    gaps = np.abs(c[i] - c[j])
    order = sorted(np.flatnonzero(reversed_), key=lambda k: (-gaps[k], *sorted((names[i[k]], names[j[k]]))))
    k = order[0]
    a, b = (i[k], j[k]) if d[i[k]] > d[j[k]] else (j[k], i[k])
    return str(names[a]), str(names[b]), int(reversed_.sum())
