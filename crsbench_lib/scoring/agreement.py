"""Agreement between two rankings of the same encoders (crs-method section 6, item 1).

Both rankings put the *highest* value at rank 1 (higher AUROC, higher CRS).
For n items there are n(n-1)/2 pairs; a pair is

* concordant when both rankings order it the same way,
* discordant (a *reversed pair*) when they order it oppositely,
* tied when either ranking ties it (counted separately for each ranking).

Statistics:

* Kendall tau-b: ``(n_c - n_d) / sqrt((n0 - n1) (n0 - n2))`` with n0 the number
  of pairs and n1, n2 the pairs tied in each ranking (Kendall 1945; the
  variant of ``scipy.stats.kendalltau``). Without ties, reversed pairs =
  ``(1 - tau) / 2 * n0``.
* Spearman rho: the Pearson correlation of the average ranks (equal to
  ``1 - 6 sum d^2 / (n (n^2 - 1))`` without ties).
* Mean absolute rank displacement: mean over items of ``|rank_a - rank_b|``
  on average ranks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from crsbench_lib.errors import SchemaError


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


def descending_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks with the highest value at rank 1."""
    return rankdata(-np.asarray(values, dtype=float), method="average")


def pair_counts(a: np.ndarray, b: np.ndarray) -> dict[str, int]:
    """Concordant, discordant and tied pair counts of two score vectors (O(n^2), vectorised)."""
    i, j = np.triu_indices(a.size, k=1)
    da = np.sign(a[i] - a[j])
    db = np.sign(b[i] - b[j])
    product = da * db
    return {
        "concordant": int((product > 0).sum()),
        "discordant": int((product < 0).sum()),
        "tied_a": int((da == 0).sum()),
        "tied_b": int((db == 0).sum()),
        "tied_both": int(((da == 0) & (db == 0)).sum()),
        "pairs": int(i.size),
    }


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall tau-b of two score vectors (NaN when either is constant)."""
    c = pair_counts(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    denominator = np.sqrt(float(c["pairs"] - c["tied_a"]) * float(c["pairs"] - c["tied_b"]))
    if denominator == 0:
        return float("nan")
    return float((c["concordant"] - c["discordant"]) / denominator)


def spearman_rho(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rho: Pearson correlation of the average ranks (NaN when either is constant)."""
    ra, rb = rankdata(a, method="average"), rankdata(b, method="average")
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    if denominator == 0:
        return float("nan")
    return float((ra * rb).sum() / denominator)


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
    """Per-encoder ranks under both scores and the displacement between them.

    Returns
    -------
    pandas.DataFrame
        encoder, auroc, rank_auroc, crs, rank_crs, displacement
        (``rank_crs - rank_auroc``; positive = lower under CRS), sorted by CRS rank.
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
    table["displacement"] = table["rank_crs"] - table["rank_auroc"]
    for column in ("rank_auroc", "rank_crs", "displacement"):
        if (table[column] == table[column].round()).all():  # no ties: show whole ranks
            table[column] = table[column].astype("int64")
    order = np.lexsort((table["encoder"].to_numpy(), table["rank_crs"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)


def kendall_tau_to_reference(reference: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Kendall tau-b between one reference score vector and each row of ``draws``.

    Vectorised over draws (shape (B, n)): the sensitivity analyses compare
    thousands of perturbed rankings to the default one.
    """
    ref = np.asarray(reference, dtype=float)
    x = np.asarray(draws, dtype=float)
    i, j = np.triu_indices(ref.size, k=1)
    dr = np.sign(ref[i] - ref[j])
    dx = np.sign(x[:, i] - x[:, j])
    numerator = (dr[None, :] * dx).sum(axis=1)
    n0 = i.size
    tied_ref = float((dr == 0).sum())
    tied_x = (dx == 0).sum(axis=1).astype(float)
    denominator = np.sqrt((n0 - tied_ref) * (n0 - tied_x))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


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
