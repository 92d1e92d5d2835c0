"""Brier score, negative log-likelihood and accuracy of predictions (method section 2, step 3)."""

from __future__ import annotations

import numpy as np

from crsbench_lib.metrics.validation import validate_predictions

#: Probabilities are clipped to [NLL_EPS, 1 - NLL_EPS] before taking logs in the NLL.
NLL_EPS: float = 1e-15
#: Threshold on a positive-class (or per-label) probability for a positive prediction.
DECISION_THRESHOLD: float = 0.5


def _one_hot(y: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.zeros((y.size, n_classes), dtype=np.float64)
    out[np.arange(y.size), y] = 1.0
    return out


def _brier_checked(y: np.ndarray, p: np.ndarray, task: str) -> float:
    if task == "binary":
        return float(np.mean((p - y) ** 2))
    target = _one_hot(y, p.shape[1]) if task == "multiclass" else y.astype(np.float64)
    return float(np.mean((p - target) ** 2))


def brier_score(labels: object, probabilities: object, task: str) -> float:
    """Brier score, averaged over classes (labels) so that it lies in [0, 1].

    ``Brier = (1 / (n K)) sum_i sum_k (p_ik - 1[y_i = k])^2`` (Brier 1950), which is
    the usual multi-class Brier score divided by ``K``; binary:
    ``(1/n) sum_i (p_i - y_i)^2`` (identical to the two-column form);
    multilabel: the mean over examples and labels.
    """
    y, p = validate_predictions(labels, probabilities, task)
    return _brier_checked(y, p, task)


def _nll_checked(y: np.ndarray, p: np.ndarray, task: str) -> float:
    if task == "multiclass":
        chosen = np.clip(p[np.arange(y.size), y], NLL_EPS, 1.0)
        return float(-np.mean(np.log(chosen)))
    q = np.clip(p, NLL_EPS, 1.0 - NLL_EPS)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)))


def negative_log_likelihood(labels: object, probabilities: object, task: str) -> float:
    """Mean negative log-likelihood with clipped probabilities.

    Multiclass: ``NLL = -(1/n) sum_i log max(p_{i, y_i}, eps)``; binary and
    multilabel: the binary cross-entropy
    ``-(1/(nL)) sum_ik [y_ik log q_ik + (1 - y_ik) log(1 - q_ik)]`` with
    ``q = clip(p, eps, 1 - eps)``, averaged over labels like the Brier score.
    ``eps`` is :data:`NLL_EPS` (1e-15), so one confidently wrong example costs at
    most ``-log(1e-15) = 34.5`` nats (Good 1952; Quinonero-Candela et al. 2006).
    """
    y, p = validate_predictions(labels, probabilities, task)
    return _nll_checked(y, p, task)


def _accuracy_checked(y: np.ndarray, p: np.ndarray, task: str) -> float:
    if task == "multiclass":
        return float(np.mean(np.argmax(p, axis=1) == y))
    return float(np.mean((p >= DECISION_THRESHOLD) == (y == 1)))


def accuracy(labels: object, probabilities: object, task: str) -> float:
    """Accuracy: top-1 (argmax, first class on ties) for multiclass; for binary and
    multilabel, the prediction is ``p >= 0.5`` (:data:`DECISION_THRESHOLD`) and the
    value is the mean over examples (and labels)."""
    y, p = validate_predictions(labels, probabilities, task)
    return _accuracy_checked(y, p, task)
