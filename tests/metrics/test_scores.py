"""Brier score, NLL and accuracy (crsbench_lib.metrics.scores) against scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

from crsbench_lib.metrics.scores import NLL_EPS, accuracy, brier_score, negative_log_likelihood


# --------------------------------------------------------------------------- Brier, NLL, accuracy


def test_brier_nll_accuracy_equal_sklearn():
    rng = np.random.default_rng(6)
    p = rng.dirichlet(np.ones(4), 100)
    y = rng.integers(0, 4, 100)
    y[:4] = np.arange(4)
    onehot = np.eye(4)[y]
    assert brier_score(y, p, "multiclass") == pytest.approx(np.mean(np.sum((p - onehot) ** 2, axis=1)) / 4, abs=1e-15)
    assert negative_log_likelihood(y, p, "multiclass") == pytest.approx(log_loss(y, p), abs=1e-12)
    assert accuracy(y, p, "multiclass") == accuracy_score(y, p.argmax(axis=1))
    pb, yb = p[:, 0], (y == 0).astype(int)
    assert brier_score(yb, pb, "binary") == pytest.approx(brier_score_loss(yb, pb), abs=1e-15)
    assert negative_log_likelihood(yb, pb, "binary") == pytest.approx(log_loss(yb, pb), abs=1e-12)
    assert accuracy(yb, pb, "binary") == accuracy_score(yb, pb >= 0.5)
    ym, pm = rng.integers(0, 2, (100, 3)), rng.random((100, 3))
    assert negative_log_likelihood(ym, pm, "multilabel") == pytest.approx(
        np.mean([log_loss(ym[:, k], pm[:, k]) for k in range(3)]), abs=1e-12
    )
    assert brier_score(ym, pm, "multilabel") == pytest.approx(np.mean((pm - ym) ** 2), abs=1e-15)


def test_nll_clips_certain_mistakes():
    y = np.array([0, 1])
    p = np.array([[0.0, 1.0], [0.0, 1.0]])
    assert negative_log_likelihood(y, p, "multiclass") == pytest.approx(-math.log(NLL_EPS) / 2)
    assert np.isfinite(negative_log_likelihood(np.array([1, 0]), np.array([0.0, 1.0]), "binary"))
