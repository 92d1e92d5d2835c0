"""Post-hoc calibrators: they fix over-confidence, keep rankings, survive absent classes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, softmax

from crsbench_lib.errors import EvaluationError
from crsbench_lib.evaluation.calibration import CALIBRATOR_NAMES, Calibrator, fit_calibrator
from crsbench_lib.evaluation.probe import logits_to_proba
from crsbench_lib.metrics.auroc import macro_auroc
from crsbench_lib.metrics.calibration import expected_calibration_error
from crsbench_lib.metrics.metric_set import evaluate_predictions

OVERCONFIDENCE = 4.0


def calibrated_binary(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    z = rng.normal(0.0, 2.0, n)
    return z, (rng.random(n) < expit(z)).astype(int)


def calibrated_multiclass(n: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    z = rng.normal(0.0, 1.5, (n, k))
    p = softmax(z, axis=1)
    y = (rng.random((n, 1)) > np.cumsum(p, axis=1)).sum(axis=1)
    return z, np.minimum(y, k - 1)


def test_temperature_fixes_overconfident_binary_and_keeps_auroc():
    rng = np.random.default_rng(0)
    z_val, y_val = calibrated_binary(3000, rng)
    z_test, y_test = calibrated_binary(3000, rng)
    before = logits_to_proba(OVERCONFIDENCE * z_test, "binary")[:, 1]
    calibrator = fit_calibrator("temperature", OVERCONFIDENCE * z_val, y_val, "binary")
    after = calibrator.predict_proba(OVERCONFIDENCE * z_test)[:, 1]
    assert np.exp(-calibrator._impl.log_scale[0]) == pytest.approx(OVERCONFIDENCE, rel=0.15)
    ece_before = expected_calibration_error(y_test, before, "binary")
    ece_after = expected_calibration_error(y_test, after, "binary")
    assert ece_after < 0.5 * ece_before
    assert macro_auroc(y_test, after, "binary").value == pytest.approx(
        macro_auroc(y_test, before, "binary").value, abs=1e-12
    )


def test_temperature_fixes_overconfident_multiclass_and_keeps_accuracy():
    rng = np.random.default_rng(1)
    z_val, y_val = calibrated_multiclass(3000, 4, rng)
    z_test, y_test = calibrated_multiclass(3000, 4, rng)
    calibrator = fit_calibrator("temperature", OVERCONFIDENCE * z_val, y_val, "multiclass")
    assert calibrator._impl.temperature == pytest.approx(OVERCONFIDENCE, rel=0.15)
    before = evaluate_predictions(y_test, softmax(OVERCONFIDENCE * z_test, axis=1), "multiclass")
    after = evaluate_predictions(y_test, calibrator.predict_proba(OVERCONFIDENCE * z_test), "multiclass")
    assert after.ece < 0.5 * before.ece
    assert after.nll < before.nll
    assert after.accuracy == before.accuracy  # a single temperature keeps every argmax


def test_per_label_scalings_keep_multilabel_auroc():
    rng = np.random.default_rng(2)
    z = rng.normal(0.0, 2.0, (2000, 3))
    y = (rng.random((2000, 3)) < expit(z)).astype(int)
    scaled = z * np.array([OVERCONFIDENCE, 0.5, 2.0]) + np.array([0.0, 1.0, -1.0])
    before = expit(scaled)
    for method in ("temperature", "vector"):
        after = fit_calibrator(method, scaled[:1000], y[:1000], "multilabel").predict_proba(scaled[1000:])
        assert macro_auroc(y[1000:], after, "multilabel").value == pytest.approx(
            macro_auroc(y[1000:], before[1000:], "multilabel").value, abs=1e-12
        )
        assert expected_calibration_error(y[1000:], after, "multilabel") < expected_calibration_error(
            y[1000:], before[1000:], "multilabel"
        )


def test_vector_scaling_undoes_per_class_distortion():
    rng = np.random.default_rng(3)
    z, y = calibrated_multiclass(4000, 3, rng)
    distorted = z * np.array([3.0, 0.5, 1.0]) + np.array([1.0, 0.0, -1.0])
    vector = fit_calibrator("vector", distorted[:2000], y[:2000], "multiclass")
    temperature = fit_calibrator("temperature", distorted[:2000], y[:2000], "multiclass")
    nll_vector = evaluate_predictions(y[2000:], vector.predict_proba(distorted[2000:]), "multiclass").nll
    nll_temp = evaluate_predictions(y[2000:], temperature.predict_proba(distorted[2000:]), "multiclass").nll
    nll_true = evaluate_predictions(y[2000:], softmax(z[2000:], axis=1), "multiclass").nll
    assert nll_vector < nll_temp
    assert nll_vector == pytest.approx(nll_true, abs=0.02)


@pytest.mark.parametrize("method", CALIBRATOR_NAMES)
def test_class_absent_from_validation(method):
    rng = np.random.default_rng(4)
    z, y = calibrated_multiclass(600, 4, rng)
    val = y != 2  # class 2 never in validation
    calibrator = fit_calibrator(method, OVERCONFIDENCE * z[val], y[val], "multiclass")
    p = calibrator.predict_proba(OVERCONFIDENCE * z)
    assert p.shape == (600, 4) and np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    assert (p[:, 2] > 0).any()  # the absent class is not wiped out
    evaluate_predictions(y, p, "multiclass")  # valid probabilities
    if method == "vector":  # documented fallback: identity parameters for the absent class
        assert calibrator._impl.log_scale[2] == 0.0 and calibrator._impl.bias[2] == 0.0
    if method == "isotonic":
        assert calibrator._impl.maps[2] is None


@pytest.mark.parametrize("method", CALIBRATOR_NAMES)
def test_class_absent_from_training_stays_at_zero(method):
    rng = np.random.default_rng(5)
    z, y = calibrated_multiclass(500, 4, rng)
    z[:, 1] = -np.inf  # the probe never saw class 1
    p = fit_calibrator(method, z, y, "multiclass").predict_proba(z)
    assert (p[:, 1] == 0).all() and np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("method", CALIBRATOR_NAMES)
def test_single_outcome_label_keeps_identity(method):
    rng = np.random.default_rng(6)
    z = rng.normal(0.0, 2.0, (300, 2))
    y = (rng.random((300, 2)) < expit(z)).astype(int)
    y[:, 1] = 0
    p = fit_calibrator(method, z, y, "multilabel").predict_proba(z)
    np.testing.assert_array_equal(p[:, 1], expit(z[:, 1]))


@pytest.mark.parametrize("method", CALIBRATOR_NAMES)
def test_binary_output_format(method):
    rng = np.random.default_rng(7)
    z, y = calibrated_binary(400, rng)
    p = fit_calibrator(method, z, y, "binary").predict_proba(z)
    assert p.shape == (400, 2)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_isotonic_renormalises_rows():
    rng = np.random.default_rng(8)
    z, y = calibrated_multiclass(800, 3, rng)
    p = fit_calibrator("isotonic", z, y, "multiclass").predict_proba(z)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)


def test_deterministic():
    rng = np.random.default_rng(9)
    z, y = calibrated_multiclass(500, 3, rng)
    for method in CALIBRATOR_NAMES:
        a = fit_calibrator(method, z, y, "multiclass").predict_proba(z)
        b = fit_calibrator(method, z.copy(), y.copy(), "multiclass").predict_proba(z)
        assert a.tobytes() == b.tobytes()


def test_bad_input():
    z = np.zeros((4, 3))
    with pytest.raises(EvaluationError, match="calibrator must be one of"):
        Calibrator("beta", "multiclass")
    with pytest.raises(EvaluationError, match="mismatched lengths"):
        fit_calibrator("temperature", z, np.zeros(5, int), "multiclass")
    with pytest.raises(EvaluationError, match="NaN"):
        fit_calibrator("vector", np.full((4, 3), np.nan), np.zeros(4, int), "multiclass")
    with pytest.raises(EvaluationError, match=r"labels must lie in 0..2"):
        fit_calibrator("isotonic", z, np.array([0, 1, 2, 3]), "multiclass")
    with pytest.raises(EvaluationError, match=r"labels must lie in 0..1"):
        fit_calibrator("vector", np.zeros((2, 2)), np.array([[0, 2], [1, 1]]), "multilabel")
    with pytest.raises(EvaluationError, match="finite integers"):
        fit_calibrator("temperature", np.zeros(2), np.array([0.5, 1.0]), "binary")
    with pytest.raises(EvaluationError, match="before fit"):
        Calibrator("isotonic", "binary").predict_proba(np.zeros(3))
    with pytest.raises(EvaluationError, match="1-D"):
        fit_calibrator("temperature", z, np.zeros(4, int), "binary")
    with pytest.raises(EvaluationError, match="no validation example"):
        zz = z.copy()
        zz[:, 0] = -np.inf
        fit_calibrator("temperature", zz, np.zeros(4, int), "multiclass")
