"""Validation of (labels, probabilities) for binary, multi-class and multi-label tasks.

Conventions (method section 2, step 3), fixed here once:

* **Shapes.** ``binary``: labels ``(n,)`` in {0, 1}; probabilities either
  ``(n,)`` (probability of the positive class) or ``(n, 2)`` (rows sum to 1).
  ``multiclass``: labels ``(n,)`` integers in ``0..K-1``; probabilities
  ``(n, K)``, rows sum to 1. ``multilabel``: labels ``(n, L)`` in {0, 1};
  probabilities ``(n, L)``, each entry the probability that the label is present.
* **Validation.** Every public metric checks its input here: lengths must match,
  probabilities lie in [0, 1] (no tolerance), multi-class rows sum to 1 within
  :data:`PROB_SUM_ATOL` (float32 softmax outputs are accepted), and nothing is
  NaN or infinite. Any violation raises :class:`~crsbench_lib.errors.EvaluationError`
  naming the problem.
"""

from __future__ import annotations

import numpy as np

from crsbench_lib.errors import EvaluationError
from crsbench_lib.results.schema import TASKS

#: Absolute tolerance on multi-class (and two-column binary) row sums.
PROB_SUM_ATOL: float = 1e-6


def check_task(task: str) -> str:
    """Return ``task`` if it is one of ``binary``, ``multiclass``, ``multilabel``.

    Raises
    ------
    EvaluationError
        On any other value.
    """
    if task not in TASKS:
        raise EvaluationError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
    return task


def _as_float_array(values: object, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"{name} must be numeric: {exc}") from None
    if array.size and not np.all(np.isfinite(array)):
        bad = int(np.count_nonzero(~np.isfinite(array)))
        raise EvaluationError(f"{name} contains {bad} NaN or infinite value{'s' if bad > 1 else ''}")
    return array


def _as_label_array(values: object, name: str) -> np.ndarray:
    array = _as_float_array(values, name)
    if array.size and not np.all(array == np.round(array)):
        raise EvaluationError(f"{name} must hold integer class indices, found a non-integer value")
    return array.astype(np.int64)


def validate_predictions(labels: object, probabilities: object, task: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate labels and probabilities and bring them to the canonical shapes.

    Parameters
    ----------
    labels : array-like
        ``(n,)`` class indices (binary, multiclass) or ``(n, L)`` 0/1 (multilabel).
    probabilities : array-like
        See the module docstring for the accepted shapes.
    task : {"binary", "multiclass", "multilabel"}

    Returns
    -------
    labels : numpy.ndarray
        ``int64``, ``(n,)`` or ``(n, L)``.
    probabilities : numpy.ndarray
        ``float64``: ``(n,)`` positive-class probabilities for binary, ``(n, K)``
        for multiclass, ``(n, L)`` for multilabel.

    Raises
    ------
    EvaluationError
        Unknown task, empty input, wrong dimensions, mismatched lengths, NaN or
        infinite values, probabilities outside [0, 1], rows not summing to 1
        (multiclass, two-column binary; tolerance :data:`PROB_SUM_ATOL`), or
        labels outside the classes.
    """
    check_task(task)
    y = _as_label_array(labels, "labels")
    p = _as_float_array(probabilities, "probabilities")
    if y.shape[0:1] != p.shape[0:1]:
        raise EvaluationError(
            f"labels and probabilities have mismatched lengths ({y.shape[0] if y.ndim else 0} vs {p.shape[0] if p.ndim else 0})"
        )
    if y.shape[0] == 0:
        raise EvaluationError("labels and probabilities are empty")
    if np.any(p < 0) or np.any(p > 1):
        raise EvaluationError(
            f"probabilities must lie in [0, 1], found values in [{p.min():.6g}, {p.max():.6g}]"
        )
    if task == "binary":
        if y.ndim != 1:
            raise EvaluationError(f"binary labels must be 1-D, got shape {y.shape}")
        if p.ndim == 2 and p.shape[1] == 2:
            _check_row_sums(p)
            p = p[:, 1]
        elif p.ndim != 1:
            raise EvaluationError(f"binary probabilities must have shape (n,) or (n, 2), got {p.shape}")
        if np.any((y != 0) & (y != 1)):
            raise EvaluationError("binary labels must be 0 or 1")
    elif task == "multiclass":
        if y.ndim != 1:
            raise EvaluationError(f"multiclass labels must be 1-D class indices, got shape {y.shape}")
        if p.ndim != 2 or p.shape[1] < 2:
            raise EvaluationError(f"multiclass probabilities must have shape (n, K) with K >= 2, got {p.shape}")
        _check_row_sums(p)
        if np.any((y < 0) | (y >= p.shape[1])):
            raise EvaluationError(f"multiclass labels must lie in 0..{p.shape[1] - 1}, found {y.min()}..{y.max()}")
    else:
        if y.ndim != 2 or p.ndim != 2:
            raise EvaluationError(
                f"multilabel labels and probabilities must be 2-D (n, L), got {y.shape} and {p.shape}"
            )
        if y.shape != p.shape:
            raise EvaluationError(f"multilabel labels and probabilities have mismatched shapes {y.shape} vs {p.shape}")
        if np.any((y != 0) & (y != 1)):
            raise EvaluationError("multilabel labels must be 0 or 1")
    return y, p


def _check_row_sums(p: np.ndarray) -> None:
    deviation = np.abs(p.sum(axis=1) - 1.0)
    if np.any(deviation > PROB_SUM_ATOL):
        row = int(np.argmax(deviation))
        raise EvaluationError(
            f"probability rows must sum to 1 (tolerance {PROB_SUM_ATOL:g}); row {row} sums to {p[row].sum():.9g}"
        )
