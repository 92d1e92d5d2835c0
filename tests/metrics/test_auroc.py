"""AUROC (crsbench_lib.metrics.auroc) against scikit-learn, and the weighted Mann-Whitney kernel against a slow reference and the metric."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given
from sklearn.metrics import roc_auc_score

from crsbench_lib.errors import EvaluationError, SchemaError
from crsbench_lib.metrics.metric_set import evaluate_predictions
from crsbench_lib.metrics.auroc import binary_auroc, class_auroc, macro_auroc, weighted_auroc
from crsbench_lib.scoring.two_level_bootstrap import _draw_images
from tests.metrics.cases import SETTINGS, binary_case, multiclass_case, multilabel_case


# --------------------------------------------------------------------------- AUROC


@SETTINGS
@given(binary_case())
def test_binary_auroc_equals_sklearn(case):
    y, p = case
    result = macro_auroc(y, p, "binary")
    assert result.value == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert result.n_skipped == 0
    # the two-column form is the same thing
    assert macro_auroc(y, np.column_stack([1 - p, p]), "binary").value == pytest.approx(result.value, abs=1e-12)


@SETTINGS
@given(multiclass_case())
def test_multiclass_auroc_equals_sklearn_ovr_macro(case):
    y, p, k = case
    if k == 2:
        # scikit-learn scores two classes as binary on the second column; one-vs-rest averages both
        # columns, which differ from it only where softmax rounding breaks a tie in one column
        expected = np.mean([roc_auc_score(y == c, p[:, c]) for c in range(2)])
    else:
        expected = roc_auc_score(y, p, multi_class="ovr", average="macro")
    assert macro_auroc(y, p, "multiclass").value == pytest.approx(expected, abs=1e-12)


@SETTINGS
@given(multilabel_case())
def test_multilabel_auroc_equals_sklearn_macro(case):
    y, p = case
    valid = [k for k in range(y.shape[1]) if 0 < y[:, k].sum() < y.shape[0]]
    assume(valid)
    result = macro_auroc(y, p, "multilabel")
    if len(valid) == y.shape[1]:
        expected = roc_auc_score(y, p, average="macro")
    else:  # scikit-learn refuses a single-outcome label; the reference mean skips it as we do
        expected = np.mean([roc_auc_score(y[:, k], p[:, k]) for k in valid])
    assert result.value == pytest.approx(expected, abs=1e-12)
    assert result.n_skipped == y.shape[1] - len(valid)


def test_absent_class_is_skipped_and_counted():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), 40)
    y = rng.integers(0, 3, 40)  # class 3 never occurs
    result = macro_auroc(y, p, "multiclass")
    assert result.n_skipped == 1 and np.isnan(result.per_class[3])
    expected = np.mean([roc_auc_score(y == k, p[:, k]) for k in range(3)])
    assert result.value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "task, y, p",
    [
        ("binary", np.zeros(5, int), np.linspace(0, 1, 5)),
        ("multiclass", np.full(6, 2), np.full((6, 3), 1 / 3)),
        ("multilabel", np.ones((4, 2), int), np.full((4, 2), 0.5)),
    ],
)
def test_single_outcome_test_split_is_an_error(task, y, p):
    with pytest.raises(EvaluationError, match="single outcome in the test split"):
        macro_auroc(y, p, task)
    with pytest.raises(EvaluationError, match="single outcome"):
        evaluate_predictions(y, p, task)


def test_perfect_and_reversed_ranking():
    y = np.array([0, 0, 1, 1])
    assert macro_auroc(y, np.array([0.1, 0.2, 0.8, 0.9]), "binary").value == 1.0
    assert macro_auroc(y, np.array([0.9, 0.8, 0.2, 0.1]), "binary").value == 0.0
    assert macro_auroc(y, np.full(4, 0.5), "binary").value == 0.5


# --------------------------------------------------------------------------- weighted AUROC


def _proba(rng, labels, task, k, strength):
    target = labels.astype(float) if task == "multilabel" else np.eye(k)[labels]
    logits = strength * target + rng.normal(size=target.shape)
    if task == "multilabel":
        return 1 / (1 + np.exp(-(logits - 1)))
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- slow reference of the AUROC kernel
# The first implementation, kept to prove that the fast kernel computes the same
# numbers: cumulative negative weights over the score order of every draw at once,
# (B, items, n) in memory, read at each positive's tie-group bounds.


@dataclass(frozen=True)
class _AurocPlan:
    """Sorted positions of one class's outcomes for many items (score vectors) on one image set.

    The outcomes (which images are positive) are the same for every item; only
    the order of the scores differs. ``lo``/``hi`` index the cumulative negative
    weights (with a leading zero row) strictly below / at most each positive's
    score, so ties count one half.
    """

    neg_order: np.ndarray  # (items, n_neg) image positions, sorted by score
    pos_order: np.ndarray  # (items, n_pos)
    lo: np.ndarray  # (items, n_pos)
    hi: np.ndarray  # (items, n_pos)
    ties: bool  # whether any positive ties a negative (else lo == hi)


def _auroc_plan(scores: np.ndarray, positive: np.ndarray) -> _AurocPlan:
    """Plan of the weighted AUROC kernel for ``scores`` (items, n) against ``positive`` (n,).

    One sort per item (vectorised over items); ties are found in the sorted
    order, so a positive tied with negatives gets ``lo < hi``.
    """
    items, n = scores.shape
    pos = np.flatnonzero(positive)
    order = np.argsort(scores, axis=1, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=1)
    is_neg = ~positive[order]
    negatives_upto = np.cumsum(is_neg, axis=1)  # negatives at or before each sorted position
    position = np.broadcast_to(np.arange(n), (items, n))
    new_group = np.ones((items, n), dtype=bool)
    new_group[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    start = np.maximum.accumulate(np.where(new_group, position, 0), axis=1)
    last = np.ones((items, n), dtype=bool)
    last[:, :-1] = new_group[:, 1:]
    end = np.minimum.accumulate(np.where(last, position, n - 1)[:, ::-1], axis=1)[:, ::-1]
    rows = np.arange(items)[:, None]
    lo_sorted = negatives_upto[rows, start] - is_neg[rows, start]  # negatives strictly below the tie group
    hi_sorted = negatives_upto[rows, end]  # negatives up to the end of the tie group
    lo = np.empty((items, n), dtype=np.int64)
    hi = np.empty((items, n), dtype=np.int64)
    np.put_along_axis(lo, order, lo_sorted, axis=1)
    np.put_along_axis(hi, order, hi_sorted, axis=1)
    neg_order = order[is_neg].reshape(items, n - pos.size)
    lo, hi = lo[:, pos], hi[:, pos]
    return _AurocPlan(neg_order, np.broadcast_to(pos, (items, pos.size)), lo, hi, bool((lo != hi).any()))


def _reference_kernel(plan: _AurocPlan, weights: np.ndarray) -> np.ndarray:
    """AUROC of every item under every draw's image multiplicities.

    ``AUROC = sum_{i pos} w_i (W_neg(< s_i) + W_neg(= s_i) / 2) / (W_pos W_neg)``,
    the Mann-Whitney statistic of the resampled set (each image counted with its
    multiplicity), in exact integer arithmetic (doubled to keep the halves).

    Parameters
    ----------
    plan : _AurocPlan
    weights : numpy.ndarray
        Integer ``(B, n)``: multiplicity of each image (columns) in each draw (rows).

    Returns
    -------
    numpy.ndarray
        ``(items, B)``; NaN where a draw has no positive or no negative.
    """
    items, n_neg = plan.neg_order.shape
    n_pos = plan.pos_order.shape[1]
    n_draws = weights.shape[0]
    if n_pos == 0 or n_neg == 0:
        return np.full((items, n_draws), np.nan)
    # int32 is exact: a doubled numerator is at most 2 W_pos W_neg <= n^2 / 2. The
    # cumulative sum runs along the last (contiguous) axis.
    cumulative = np.zeros((n_draws, items, n_neg + 1), dtype=np.int32)
    np.cumsum(weights[:, plan.neg_order], axis=2, dtype=np.int32, out=cumulative[:, :, 1:])
    rows = np.arange(items)[:, None]
    below2 = cumulative[:, rows, plan.lo]  # (B, items, n_pos)
    if plan.ties:
        below2 += cumulative[:, rows, plan.hi]
    else:  # no positive ties a negative: both halves are the count below
        below2 *= 2
    w_pos = weights[:, plan.pos_order[0]]  # (B, n_pos): the positives are the same images for every item
    below2 *= w_pos[:, None, :]
    numerator2 = below2.sum(axis=2, dtype=np.int32).T.astype(np.int64)  # (items, B)
    total_pos = w_pos.sum(axis=1, dtype=np.int64)
    total_neg = cumulative[:, :, -1].astype(np.int64).T
    denominator = 2 * total_pos[None, :] * total_neg
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator2 / np.maximum(denominator, 1), np.nan)


def reference_weighted_auroc(scores: np.ndarray, positive: np.ndarray, weights_t: np.ndarray) -> np.ndarray:
    return _reference_kernel(_auroc_plan(scores, positive), weights_t.T)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_auroc_kernel_equals_the_reference(seed):
    rng = np.random.default_rng(seed)
    n = 90
    scores = np.vstack([np.round(rng.random((3, n)), 1), rng.random((2, n))])  # heavy ties and none
    positive = rng.random(n) < 0.2
    weights = _draw_images(rng, n, 25)
    weights[0] = 0
    weights[0, np.flatnonzero(positive)[:2]] = 1  # a draw without negatives: NaN
    weights_t = np.ascontiguousarray(weights.T, dtype=np.int32)
    np.testing.assert_array_equal(weighted_auroc(scores, positive, weights_t),
                                  reference_weighted_auroc(scores, positive, weights_t))


def test_weighted_auroc_equals_the_metric_on_resampled_images():
    rng = np.random.default_rng(3)
    n = 120
    scores = np.round(rng.random((4, n)), 2)  # ties
    positive = rng.random(n) < 0.3
    weights = _draw_images(rng, n, 6)
    got = weighted_auroc(scores, positive, weights.T.astype(np.int32))
    for b in range(6):
        idx = np.repeat(np.arange(n), weights[b])
        for t in range(4):
            assert got[t, b] == pytest.approx(binary_auroc(positive[idx], scores[t, idx]), abs=1e-12)


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_class_auroc_is_the_per_class_auroc_of_the_metric(task):
    rng = np.random.default_rng(3)
    n, k = 50, 3
    labels = {"binary": rng.integers(0, 2, n), "multiclass": rng.integers(0, k, n),
              "multilabel": (rng.random((n, k)) < 0.4).astype(np.uint8)}[task]
    as_proba = "multiclass" if task == "binary" else task  # binary: two-column probabilities
    items = [_proba(rng, labels, as_proba, 2 if task == "binary" else k, strength) for strength in (0.5, 2.0)]
    items[0][:10] = items[0][0]  # ties count one half
    stored = np.stack([p[:, 1:] if task == "binary" else p for p in items])
    got = class_auroc(stored, labels, task)
    for item, p in enumerate(items):
        expected = macro_auroc(labels, p[:, 1] if task == "binary" else p, task).per_class
        np.testing.assert_allclose(got[item], expected, rtol=0, atol=1e-12)
    with pytest.raises(SchemaError, match="expected probabilities"):
        class_auroc(stored[0], labels, task)
