"""AUROC of predictions (method section 2, step 3), plain and under bootstrap draws.

:func:`macro_auroc` is the results table's AUROC: the Mann-Whitney statistic by
the rank-sum identity, one-vs-rest per class. The weighted form computes the
same statistic for many score vectors under many draws of image
multiplicities (the two-level bootstrap of
:mod:`crsbench_lib.scoring.two_level_bootstrap`): each score vector is sorted
once, and its AUROC under every draw is one pass over that fixed order in a
compiled kernel (numba), in exact integers.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.stats import rankdata

from crsbench_lib.errors import EvaluationError, SchemaError
from crsbench_lib.metrics.validation import validate_predictions


@dataclass(frozen=True)
class AurocResult:
    """Macro-AUROC with its bookkeeping.

    Attributes
    ----------
    value : float
        Mean AUROC over the classes (labels) that have both outcomes in the test split.
    n_skipped : int
        Classes (labels) skipped for having a single outcome.
    per_class : numpy.ndarray
        AUROC per class (label); NaN where skipped. Binary: one entry.
    """

    value: float
    n_skipped: int
    per_class: np.ndarray


def binary_auroc(positive: np.ndarray, scores: np.ndarray) -> float:
    """AUROC of scores against boolean outcomes by the rank-sum identity.

    ``AUROC = (R_+ - n_+ (n_+ + 1) / 2) / (n_+ n_-)``, with ``R_+`` the sum of the
    (tie-averaged) ranks of the positives: the Mann-Whitney U statistic over
    ``n_+ n_-`` (Hanley & McNeil 1982), equal to the trapezoidal area under the
    ROC curve with ties counted one half.

    Returns NaN when one outcome is absent (the caller skips and counts it).
    """
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _auroc_checked(y: np.ndarray, p: np.ndarray, task: str) -> AurocResult:
    if task == "binary":
        per_class = np.array([binary_auroc(y == 1, p)])
    elif task == "multiclass":
        per_class = np.array([binary_auroc(y == k, p[:, k]) for k in range(p.shape[1])])
    else:
        per_class = np.array([binary_auroc(y[:, k] == 1, p[:, k]) for k in range(p.shape[1])])
    kept = ~np.isnan(per_class)
    if not kept.any():
        what = "label" if task == "multilabel" else "class"
        raise EvaluationError(
            f"AUROC undefined: every {what} has a single outcome in the test split ({per_class.size} skipped)"
        )
    return AurocResult(float(per_class[kept].mean()), int((~kept).sum()), per_class)


def macro_auroc(labels: object, probabilities: object, task: str) -> AurocResult:
    """Macro-AUROC: one-vs-rest over classes (multiclass), mean over labels (multilabel).

    ``AUROC_macro = (1 / |K'|) * sum_{k in K'} AUROC(1[y = k], p_k)`` where ``K'``
    holds the classes (labels) with both outcomes in the split; the others are
    skipped and counted (``n_skipped``). Binary: AUROC of the positive-class
    probability. Agrees with scikit-learn's ``roc_auc_score`` (``multi_class="ovr",
    average="macro"``; ``average="macro"`` for multilabel) where every class is
    present (Hand & Till 2001; Fawcett 2006).

    Raises
    ------
    EvaluationError
        Invalid input, or no class (label) with both outcomes.
    """
    y, p = validate_predictions(labels, probabilities, task)
    return _auroc_checked(y, p, task)


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


def weighted_auroc(scores: np.ndarray, positive: np.ndarray, weights_t: np.ndarray) -> np.ndarray:
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
        per_class[k] = weighted_auroc(scores.astype(np.float64), positive, weights_t)
    return per_class


def weighted_macro_auroc(proba: np.ndarray, labels: np.ndarray, task: str, weights: np.ndarray) -> np.ndarray:
    """Macro-AUROC (items, B) of probabilities (items, n, W) under draw multiplicities (B, n).

    Classes (labels) without both outcomes in a draw are skipped, as in
    :func:`macro_auroc`.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a draw with no class defined stays NaN
        return np.nanmean(_class_aurocs(proba, labels, task, weights), axis=0)


def class_auroc(proba: np.ndarray, labels: np.ndarray, task: str) -> np.ndarray:
    """AUROC of each class (label) of each item's predictions on the same test images.

    The Mann-Whitney statistic ``AUROC_k = P(s_k(pos) > s_k(neg)) + P(tie) / 2``
    of class ``k``'s scores against its one-vs-rest outcomes (Hanley and McNeil
    1982), the terms whose mean is the macro-AUROC of
    :func:`macro_auroc`; computed by the
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
