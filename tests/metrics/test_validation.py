"""Validation of labels and probabilities (crsbench_lib.metrics.validation): every metric rejects bad input clearly."""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.errors import EvaluationError
from crsbench_lib.metrics.auroc import macro_auroc
from crsbench_lib.metrics.calibration import expected_calibration_error
from crsbench_lib.metrics.scores import accuracy, brier_score, negative_log_likelihood


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "task, y, p, message",
    [
        ("multiclass", np.array([0, 1, 1]), np.full((2, 2), 0.5), "mismatched lengths"),
        ("binary", np.array([0, 1]), np.array([0.5]), "mismatched lengths"),
        ("multiclass", np.array([0, 1]), np.array([[1.2, -0.2], [0.5, 0.5]]), r"must lie in \[0, 1\]"),
        ("binary", np.array([0, 1]), np.array([0.5, 1.5]), r"must lie in \[0, 1\]"),
        ("multiclass", np.array([0, 1]), np.array([[0.5, 0.4], [0.5, 0.5]]), "sum to 1"),
        ("binary", np.array([0, 1]), np.array([[0.5, 0.4], [0.5, 0.5]]), "sum to 1"),
        ("multiclass", np.array([0, 1]), np.array([[np.nan, 0.5], [0.5, 0.5]]), "NaN"),
        ("binary", np.array([0.0, np.nan]), np.array([0.5, 0.5]), "NaN"),
        ("multiclass", np.array([0, 3]), np.full((2, 2), 0.5), "labels must lie in 0..1"),
        ("multiclass", np.array([0.5, 1]), np.full((2, 2), 0.5), "integer"),
        ("binary", np.array([0, 2]), np.array([0.5, 0.5]), "0 or 1"),
        ("multilabel", np.array([[0, 2]]), np.array([[0.5, 0.5]]), "0 or 1"),
        ("multilabel", np.array([[0, 1]]), np.array([[0.5, 0.5, 0.5]]), "mismatched shapes"),
        ("multiclass", np.array([], int), np.empty((0, 2)), "empty"),
        ("regression", np.array([0, 1]), np.array([0.5, 0.5]), "task must be one of"),
    ],
)
def test_bad_input_is_a_clear_error(task, y, p, message):
    for func in (macro_auroc, expected_calibration_error, brier_score, negative_log_likelihood, accuracy):
        with pytest.raises(EvaluationError, match=message):
            func(y, p, task)


def test_row_sum_tolerance_accepts_float32_softmax():
    rng = np.random.default_rng(8)
    z = rng.normal(0, 3, (200, 7)).astype(np.float32)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = rng.integers(0, 7, 200)
    assert 0 <= expected_calibration_error(y, p, "multiclass") <= 1
