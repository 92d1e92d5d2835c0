"""Rank statistics of two scorings of the same items: the one home of each.

Every page that compares two rankings (AUROC against CRS, frozen against
adapted, a weight draw against the default, a held-out block against its
prediction) reads them from here, so that a tie is treated the same way
everywhere. Higher scores rank first throughout.

For n items there are ``n0 = n (n - 1) / 2`` pairs; a pair is *concordant* when
both scorings order it the same way, *discordant* (a **reversed pair**) when
they order it oppositely, and *tied* in a scoring that gives both items the same
score. A pair tied in either scoring is neither concordant nor reversed.

* **Kendall's tau-b** (Kendall 1945, "The treatment of ties in ranking
  problems", Biometrika 33: 239-251)::

      tau_b = (n_c - n_d) / sqrt((n0 - n_1) (n0 - n_2))

  with ``n_c`` and ``n_d`` the concordant and reversed pairs and ``n_1``,
  ``n_2`` the pairs tied in each scoring; NaN when either scoring is constant.
  The same variant as ``scipy.stats.kendalltau(variant="b")``, computed here
  exactly from pair counts (O(n^2), vectorised over bootstrap rows).
* **Reversed pairs** are counted, never inferred from tau: without ties
  ``n_d = (1 - tau_b) n0 / 2``, with ties that identity fails.
* **Spearman's rho**: the Pearson correlation of the average ranks.
* **Rank rules**: :func:`descending_ranks` with ``ties="average"`` (a tied
  group shares the mean of the ranks it spans; used for displacements and
  correlations) or ``ties="min"`` (competition ranking, "1, 2, 2, 4": used for
  the rank a table prints).

Examples
--------
>>> import numpy as np
>>> a, b = np.array([4.0, 3, 2, 1]), np.array([4.0, 2, 3, 1])
>>> reversed_pairs(a, b), round(kendall_tau_b(a, b), 4)
(1, 0.6667)
>>> descending_ranks(np.array([0.9, 0.8, 0.8, 0.1]), ties="min").tolist()
[1, 2, 2, 4]
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import kendalltau, rankdata

TieRule = Literal["average", "min"]


def descending_ranks(values: np.ndarray, ties: TieRule = "average", axis: int = -1) -> np.ndarray:
    """Ranks with the highest value at rank 1, along ``axis``.

    Parameters
    ----------
    values : numpy.ndarray
        Scores, higher is better.
    ties : {"average", "min"}
        ``"average"``: a tied group shares the mean of its ranks (float);
        ``"min"``: it shares the best of them (competition ranking, int64).
    axis : int
        The axis that holds the items (rows of draws rank separately).

    Returns
    -------
    numpy.ndarray
        Same shape as ``values``.

    Examples
    --------
    >>> descending_ranks(np.array([0.2, 0.9, 0.2])).tolist()
    [2.5, 1.0, 2.5]
    >>> descending_ranks(np.array([[1.0, 2.0], [2.0, 2.0]]), ties="min").tolist()
    [[2, 1], [1, 1]]
    """
    if ties not in ("average", "min"):
        raise ValueError(f"ties must be 'average' or 'min', got {ties!r}")
    ranks = rankdata(-np.asarray(values, dtype=float), method=ties, axis=axis)
    return ranks.astype(np.int64) if ties == "min" else ranks


def pair_counts(a: np.ndarray, b: np.ndarray) -> dict[str, int]:
    """Concordant, reversed (``"discordant"``) and tied pair counts of two score vectors.

    Returns
    -------
    dict
        ``concordant``, ``discordant``, ``tied_a``, ``tied_b``, ``tied_both``
        and ``pairs`` (= n (n - 1) / 2).

    Examples
    --------
    >>> pair_counts(np.array([1.0, 2, 2]), np.array([1.0, 2, 3]))["tied_a"]
    1
    """
    a, b = np.asarray(a, dtype=float).reshape(-1), np.asarray(b, dtype=float).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"two scorings of the same items must have the same length, found {a.size} and {b.size}")
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


def reversed_pairs(a: np.ndarray, b: np.ndarray) -> int:
    """The pairs two scorings order oppositely (a pair tied in either is not reversed).

    Examples
    --------
    >>> reversed_pairs(np.array([3.0, 2, 1]), np.array([1.0, 2, 3]))
    3
    >>> reversed_pairs(np.array([3.0, 2, 2]), np.array([1.0, 2, 3]))
    2
    """
    return pair_counts(a, b)["discordant"]


def order_changes(before: ArrayLike, after: ArrayLike) -> int:
    """Pairs of items that two score vectors order differently.

    A pair ``(i, j)`` counts when ``sign(before_i - before_j) !=
    sign(after_i - after_j)``: a reversal, or a tie that forms or breaks. It
    counts more than reversed pairs (:func:`reversed_pairs`), which leave out pairs
    tied in either vector; it is 0 exactly when the relative order of the
    items, ties included, is unchanged, whatever happened to their positions in
    a longer list.

    Parameters
    ----------
    before, after : array-like
        Scores of the same items, in the same order, shape (n,).

    Returns
    -------
    int
        Between 0 and ``n (n - 1) / 2``.

    Raises
    ------
    ValueError
        If the shapes differ or a score is NaN.

    Examples
    --------
    >>> order_changes([0.9, 0.5, 0.1], [0.8, 0.6, 0.2])  # every score moved, no pair swapped
    0
    >>> order_changes([0.9, 0.5, 0.1], [0.4, 0.6, 0.2])
    1
    """
    a = np.asarray(before, dtype=float).reshape(-1)
    b = np.asarray(after, dtype=float).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"before and after must score the same items, found {a.size} and {b.size} scores")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("scores must not be NaN")
    upper = np.triu_indices(a.size, k=1)
    sign_before = np.sign(a[:, None] - a[None, :])[upper]
    sign_after = np.sign(b[:, None] - b[None, :])[upper]
    return int(np.count_nonzero(sign_before != sign_after))


def _paired_rows(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two score arrays as float rows of one shape (B, n); a vector pairs with every row of the other."""
    x, y = np.broadcast_arrays(np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float)))
    return x, y


def _ratio_or_nan(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` per row, NaN where the denominator is 0 (a constant row)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def kendall_tau_b_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall tau-b between paired rows of two score arrays (the module's formula, per row).

    Parameters
    ----------
    a, b : numpy.ndarray
        Shapes broadcastable to (B, n) (a single vector of shape (n,) pairs with
        every row of the other).

    Returns
    -------
    numpy.ndarray
        Shape (B,); NaN where a row is constant in either array.

    Examples
    --------
    >>> kendall_tau_b_rows(np.arange(4.0), np.array([[0.0, 1, 2, 3], [3, 2, 1, 0]]))
    array([ 1., -1.])
    """
    x, y = _paired_rows(a, b)
    i, j = np.triu_indices(x.shape[1], k=1)
    dx = np.sign(x[:, i] - x[:, j])
    dy = np.sign(y[:, i] - y[:, j])
    numerator = (dx * dy).sum(axis=1)
    n0 = float(i.size)
    denominator = np.sqrt((n0 - (dx == 0).sum(axis=1)) * (n0 - (dy == 0).sum(axis=1)))
    return _ratio_or_nan(numerator, denominator)


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall tau-b of two score vectors (the module's formula; NaN when either is constant).

    Examples
    --------
    >>> kendall_tau_b(np.array([1.0, 2, 3]), np.array([1.0, 3, 2]))
    0.3333333333333333
    """
    a, b = np.asarray(a, dtype=float).reshape(-1), np.asarray(b, dtype=float).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"two scorings of the same items must have the same length, found {a.size} and {b.size}")
    if a.size < 2:
        return float("nan")
    return float(kendall_tau_b_rows(a, b)[0])


def kendall_tau_to_reference(reference: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Kendall tau-b between one reference score vector and each row of ``draws`` (shape (B, n)).

    Examples
    --------
    >>> kendall_tau_to_reference(np.arange(3.0), np.array([[0.0, 1, 2], [0.0, 2, 1]])).round(3).tolist()
    [1.0, 0.333]
    """
    return kendall_tau_b_rows(np.asarray(reference, dtype=float)[None, :], draws)


def kendall_tau_b_test(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Kendall tau-b with the two-sided p-value of no association (tau = 0).

    The statistic is :func:`kendall_tau_b`; the p-value is scipy's
    (``scipy.stats.kendalltau``: exact for small untied samples, else the
    normal approximation with the tie-corrected variance). Both are NaN when
    fewer than 2 items or either scoring is constant.

    Examples
    --------
    >>> tau, p = kendall_tau_b_test(np.arange(6.0), np.arange(6.0))
    >>> tau, round(p, 4)
    (1.0, 0.0028)
    """
    a, b = np.asarray(a, dtype=float).reshape(-1), np.asarray(b, dtype=float).reshape(-1)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan"), float("nan")
    return kendall_tau_b(a, b), float(kendalltau(a, b, variant="b").pvalue)


def weighted_kendall_tau_b(x: np.ndarray, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Kendall tau-b of ``x`` and ``y`` on data sets in which item ``i`` appears ``weights[b, i]`` times.

    With ``w`` copies of each item, pairs of distinct items count ``w_i w_j``
    times, and the ``w_i (w_i - 1) / 2`` pairs of copies of one item are tied in
    both variables, so tau-b is

        tau_b = sum_{i<j} w_i w_j s_ij / sqrt((n0 - T_x)(n0 - T_y))

    with ``s_ij = sign(x_i - x_j) sign(y_i - y_j)``, ``n0 = N (N - 1) / 2``,
    ``N = sum_i w_i`` and ``T_x`` the (weighted) pairs tied in ``x``, copies
    included. This equals tau-b computed on the data set with the copies
    written out, as an item bootstrap produces it.

    Parameters
    ----------
    x, y : numpy.ndarray
        Scores of n items, shape (n,).
    weights : numpy.ndarray
        Non-negative integer multiplicities, shape (B, n).

    Returns
    -------
    numpy.ndarray
        Shape (B,): tau-b per row, NaN where a resample is constant in ``x`` or ``y``.

    Examples
    --------
    >>> float(weighted_kendall_tau_b(np.arange(4.0), np.array([0.0, 2, 1, 3]), np.ones((1, 4)))[0])
    0.6666666666666666
    """
    a = np.asarray(x, dtype=float).reshape(-1)
    b = np.asarray(y, dtype=float).reshape(-1)
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    if a.shape != b.shape or w.shape[1] != a.size:
        raise ValueError(f"x, y and the weights' columns must have one entry per item, found {a.size}, {b.size}, "
                         f"{w.shape[1]}")
    sign_x = np.sign(a[:, None] - a[None, :])
    sign_y = np.sign(b[:, None] - b[None, :])
    tied_x = (sign_x == 0).astype(float)
    tied_y = (sign_y == 0).astype(float)
    np.fill_diagonal(tied_x, 0.0)
    np.fill_diagonal(tied_y, 0.0)
    # Each quadratic form counts every unordered pair twice (the matrices are symmetric).
    numerator = np.einsum("bi,ij,bj->b", w, sign_x * sign_y, w) / 2.0
    copies = (w * (w - 1.0)).sum(axis=1) / 2.0
    total = w.sum(axis=1)
    n0 = total * (total - 1.0) / 2.0
    untied_x = n0 - np.einsum("bi,ij,bj->b", w, tied_x, w) / 2.0 - copies
    untied_y = n0 - np.einsum("bi,ij,bj->b", w, tied_y, w) / 2.0 - copies
    return _ratio_or_nan(numerator, np.sqrt(untied_x * untied_y))


def spearman_rho_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman rho between paired rows: Pearson correlation of the average ranks, per row.

    Parameters
    ----------
    a, b : numpy.ndarray
        Shapes broadcastable to (B, n).

    Returns
    -------
    numpy.ndarray
        Shape (B,); NaN where a row is constant in either array.

    Examples
    --------
    >>> spearman_rho_rows(np.arange(4.0), np.array([[0.0, 1, 2, 3], [3, 2, 1, 0]]))
    array([ 1., -1.])
    """
    x, y = _paired_rows(a, b)
    rx = rankdata(x, method="average", axis=1)
    ry = rankdata(y, method="average", axis=1)
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=1, keepdims=True)
    denominator = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    return _ratio_or_nan((rx * ry).sum(axis=1), denominator)


def spearman_rho(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rho: Pearson correlation of the average ranks (NaN when either is constant).

    Examples
    --------
    >>> spearman_rho(np.array([1.0, 2, 3]), np.array([3.0, 2, 1]))
    -1.0
    """
    return float(spearman_rho_rows(np.asarray(a, dtype=float).reshape(-1), np.asarray(b, dtype=float).reshape(-1))[0])
