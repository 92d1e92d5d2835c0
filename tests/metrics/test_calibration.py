"""Calibration error (crsbench_lib.metrics.calibration): the weighted ECE against the metric on resampled images."""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.evaluation.metrics import expected_calibration_error
from crsbench_lib.metrics.calibration import weighted_ece
from crsbench_lib.scoring.two_level_bootstrap import _draw_images


def test_weighted_ece_equals_the_metric_on_resampled_images():
    rng = np.random.default_rng(3)
    n = 120
    rng.random((4, n)), rng.random(n)  # the AUROC test's scores and outcomes: the same stream, the same draws
    weights = _draw_images(rng, n, 6)
    labels = rng.integers(0, 3, n)
    proba = rng.dirichlet(np.ones(3), size=(2, n))
    ece = weighted_ece(proba.astype(np.float32), labels, "multiclass", weights, 10)
    for b in range(6):
        idx = np.repeat(np.arange(n), weights[b])
        for t in range(2):
            expected = expected_calibration_error(labels[idx], proba[t, idx].astype(np.float32).astype(float),
                                                  "multiclass", 10)
            assert ece[t, b] == pytest.approx(expected, abs=1e-12)
