"""All metrics of one prediction at once (crsbench_lib.metrics.metric_set)."""

from __future__ import annotations

import numpy as np

from crsbench_lib.metrics.auroc import macro_auroc
from crsbench_lib.metrics.calibration import ECE_VARIANTS, expected_calibration_error
from crsbench_lib.metrics.metric_set import evaluate_predictions


def test_evaluate_predictions_bundles_everything():
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(3), 60)
    y = rng.integers(0, 3, 60)
    metrics = evaluate_predictions(y, p, "multiclass", n_bins=10)
    assert metrics.ece == expected_calibration_error(y, p, "multiclass", 10)
    assert metrics.auroc == macro_auroc(y, p, "multiclass").value
    assert (metrics.n_test, metrics.ece_bins, metrics.ece_variant) == (60, 10, ECE_VARIANTS["multiclass"])
    assert set(metrics.as_dict()) >= {"auroc", "ece", "brier", "nll", "accuracy", "n_test", "n_skipped"}


def test_evaluate_predictions_reports_floor_and_excess():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), size=100)
    y = rng.integers(0, 3, 100)
    metrics = evaluate_predictions(y, p, "multiclass", 10).as_dict()
    assert metrics["ece_excess"] == metrics["ece"] - metrics["ece_floor"]
    assert 0.0 < metrics["ece_floor"] < 1.0
