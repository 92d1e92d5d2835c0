"""Calibration error (crsbench_lib.metrics.calibration) against plain reference loops, and the weighted ECE against the metric."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import EvaluationError
from crsbench_lib.metrics.calibration import (
    adaptive_ece,
    classwise_ece,
    debiased_ece,
    ece_floor,
    expected_calibration_error,
    reliability_diagram,
    weighted_ece,
)
from crsbench_lib.scoring.two_level_bootstrap import _draw_images
from tests.metrics.cases import EDGES15, SETTINGS, binary_case, multiclass_case, multilabel_case


# --------------------------------------------------------------------------- reference loops


def ref_binned_gap(confidence: list[float], correct: list[float], n_bins: int) -> float:
    """Plain-python ECE over bins (m/M, (m+1)/M], a confidence of 0 in the first bin."""
    n = len(confidence)
    total = 0.0
    for m in range(n_bins):
        lo, hi = m / n_bins, (m + 1) / n_bins
        members = [i for i in range(n) if (lo < confidence[i] <= hi) or (m == 0 and confidence[i] == 0.0)]
        if not members:
            continue
        acc = sum(correct[i] for i in members) / len(members)
        conf = sum(confidence[i] for i in members) / len(members)
        total += len(members) / n * abs(acc - conf)
    return total


def ref_ece(labels, probs, task: str, n_bins: int = 15) -> float:
    labels = np.asarray(labels).tolist()
    probs = np.asarray(probs, dtype=float).tolist()
    if task == "multiclass":
        confidence, correct = [], []
        for row, y in zip(probs, labels):
            top = max(row)
            confidence.append(top)
            correct.append(1.0 if row.index(top) == y else 0.0)
        return ref_binned_gap(confidence, correct, n_bins)
    if task == "binary":
        return ref_binned_gap(probs, [float(y) for y in labels], n_bins)
    n_labels = len(probs[0])
    gaps = [
        ref_binned_gap([row[k] for row in probs], [float(y[k]) for y in labels], n_bins) for k in range(n_labels)
    ]
    return sum(gaps) / n_labels


# --------------------------------------------------------------------------- ECE


@SETTINGS
@given(multiclass_case(require_all_classes=False), st.sampled_from([1, 5, 10, 15]))
def test_multiclass_ece_equals_reference_loop(case, n_bins):
    y, p, _ = case
    assert expected_calibration_error(y, p, "multiclass", n_bins) == pytest.approx(
        ref_ece(y, p, "multiclass", n_bins), abs=1e-12
    )


@SETTINGS
@given(binary_case(), st.sampled_from([1, 7, 15]))
def test_binary_ece_equals_reference_loop(case, n_bins):
    y, p = case
    assert expected_calibration_error(y, p, "binary", n_bins) == pytest.approx(ref_ece(y, p, "binary", n_bins), abs=1e-12)


@SETTINGS
@given(multilabel_case())
def test_multilabel_ece_equals_reference_loop(case):
    y, p = case
    assert expected_calibration_error(y, p, "multilabel") == pytest.approx(ref_ece(y, p, "multilabel"), abs=1e-12)


def test_ece_hand_computed():
    # positive-class convention, bins (0, .5] and (.5, 1]:
    # (0, .5] holds p = 0.3 with outcome 1 -> |1 - 0.3| * 1/4
    # (.5, 1] holds p = 0.6, 1.0, 0.8 with outcomes 1, 1, 0 -> |2/3 - 0.8| * 3/4
    y = np.array([1, 1, 1, 0])
    p = np.array([0.3, 0.6, 1.0, 0.8])
    expected = 0.25 * 0.7 + 0.75 * abs(2 / 3 - 0.8)
    assert expected_calibration_error(y, p, "binary", n_bins=2) == pytest.approx(expected, abs=1e-15)


def test_edge_values_fall_in_the_lower_bin():
    # 1/3 is an edge of 3 bins: it belongs to (0, 1/3], not (1/3, 2/3]
    diagram = reliability_diagram(np.array([1]), np.array([1 / 3]), "binary", n_bins=3)
    assert diagram["count"].tolist() == [1, 0, 0]


def test_classwise_ece_equals_reference_loop():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(4), 80)
    y = rng.integers(0, 4, 80)
    expected = np.mean([ref_binned_gap(p[:, k].tolist(), (y == k).astype(float).tolist(), 15) for k in range(4)])
    assert classwise_ece(y, p, "multiclass") == pytest.approx(expected, abs=1e-12)
    yb, pb = (y > 1).astype(int), p[:, 0]
    expected_b = np.mean([ref_binned_gap((1 - pb).tolist(), (yb == 0).astype(float).tolist(), 15),
                          ref_binned_gap(pb.tolist(), yb.astype(float).tolist(), 15)])
    assert classwise_ece(yb, pb, "binary") == pytest.approx(expected_b, abs=1e-12)


def test_adaptive_ece_limits():
    rng = np.random.default_rng(4)
    p = rng.random(37)
    y = rng.integers(0, 2, 37)
    # one bin: |mean outcome - mean confidence|; one example per bin: mean |outcome - confidence|
    assert adaptive_ece(y, p, "binary", n_bins=1) == pytest.approx(abs(y.mean() - p.mean()), abs=1e-12)
    assert adaptive_ece(y, p, "binary", n_bins=37) == pytest.approx(np.mean(np.abs(y - p)), abs=1e-12)
    # equal-mass bins: sizes differ by at most one
    q = rng.dirichlet(np.ones(3), 50)
    z = rng.integers(0, 3, 50)
    conf = q.max(axis=1)
    order = np.argsort(conf, kind="stable")
    expected = sum(
        abs((q[b].argmax(axis=1) == z[b]).sum() - conf[b].sum()) for b in np.array_split(order, 15)
    ) / 50
    assert adaptive_ece(z, q, "multiclass") == pytest.approx(expected, abs=1e-12)


def test_reliability_diagram_reproduces_ece():
    rng = np.random.default_rng(5)
    for task, y, p in [
        ("multiclass", rng.integers(0, 3, 90), rng.dirichlet(np.ones(3), 90)),
        ("binary", rng.integers(0, 2, 90), rng.random(90)),
        ("multilabel", rng.integers(0, 2, (90, 3)), rng.random((90, 3))),
    ]:
        diagram = reliability_diagram(y, p, task)
        assert list(diagram.columns) == ["target", "bin", "lower", "upper", "confidence", "accuracy", "count"]
        filled = diagram[diagram["count"] > 0]
        gaps = (filled["count"] * (filled["accuracy"] - filled["confidence"]).abs()).groupby(filled["target"]).sum() / 90
        assert gaps.mean() == pytest.approx(expected_calibration_error(y, p, task), abs=1e-12)
        assert (diagram.groupby("target")["count"].sum() == 90).all()
        assert diagram.loc[diagram["count"] == 0, "confidence"].isna().all()


@pytest.mark.parametrize("n_bins", [0, -3, 2.5, True])
def test_bad_bin_count(n_bins):
    with pytest.raises(EvaluationError, match="n_bins"):
        expected_calibration_error(np.array([0, 1]), np.array([0.2, 0.7]), "binary", n_bins)


# --------------------------------------------------------------------------- ECE floor


def test_ece_floor_hand_computed_cases():
    # binary, two examples at 0.5 in one bin: S ~ Binomial(2, 1/2), E|S - 1| = 1/2, floor = (1/2) / 2
    assert ece_floor(np.array([0.5, 0.5]), "binary", n_bins=2) == pytest.approx(0.25, abs=1e-12)
    # one example at 0.7: E|Y - 0.7| = 0.7 * 0.3 + 0.3 * 0.7 = 0.42
    assert ece_floor(np.array([0.7]), "binary", n_bins=15) == pytest.approx(0.42, abs=1e-12)
    # multiclass top-label: confidences 0.6 and 0.8 fall in different bins of 15;
    # each contributes 2 c (1 - c): (0.48 + 0.32) / 2 = 0.40
    p = np.array([[0.6, 0.4], [0.2, 0.8]])
    assert ece_floor(p, "multiclass", n_bins=15) == pytest.approx(0.40, abs=1e-12)
    # multilabel: the mean over labels of the binary floors
    q = np.array([[0.5, 0.7], [0.5, 0.7]])
    per_label = [ece_floor(q[:, 0], "binary", 2), ece_floor(q[:, 1], "binary", 2)]
    assert ece_floor(q, "multilabel", n_bins=2) == pytest.approx(np.mean(per_label), abs=1e-15)
    # certain predictions have no floor
    assert ece_floor(np.array([0.0, 1.0, 1.0]), "binary") == 0.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=9), st.integers(1, 6))
def test_ece_floor_is_the_expected_ece_over_every_outcome(confidences, n_bins):
    # the definition, by enumeration: outcomes drawn from the model's own probabilities
    import itertools

    c = np.array(confidences)
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=c.size):
        o = np.array(outcome)
        weight = float(np.prod(np.where(o == 1, c, 1.0 - c)))
        if weight > 0:
            total += weight * expected_calibration_error(o, c, "binary", n_bins)
    assert ece_floor(c, "binary", n_bins) == pytest.approx(total, abs=1e-12)


def test_ece_floor_matches_sampled_labels_of_a_multiclass_model():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(4, 0.7), size=300)
    cumulative = np.cumsum(p, axis=1)
    draws = [
        expected_calibration_error((rng.random(300)[:, None] > cumulative).sum(axis=1), p, "multiclass", 15)
        for _ in range(400)
    ]
    se = np.std(draws) / np.sqrt(len(draws))
    assert abs(ece_floor(p, "multiclass", 15) - np.mean(draws)) < 4 * se


# --------------------------------------------------------------------------- weighted ECE


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


# --------------------------------------------------------------------------- debiased ECE


def ref_debiased_gap(confidence: list[float], correct: list[float], n_bins: int, draws: int = 0,
                     rng: np.random.Generator | None = None) -> float:
    """Kumar et al.'s normal debiasing per bin, its expectation by plain Monte Carlo when ``draws`` > 0.

    ``2 |g| - E|g*|`` with ``g* = y* - conf`` and ``y* ~ N(acc, acc (1 - acc) / n_b)``;
    with ``draws == 0`` the folded-normal mean by numerical integration.
    """
    from scipy import integrate

    n = len(confidence)
    total = 0.0
    for m in range(n_bins):
        lo, hi = m / n_bins, (m + 1) / n_bins
        members = [i for i in range(n) if (lo < confidence[i] <= hi) or (m == 0 and confidence[i] == 0.0)]
        if not members:
            continue
        acc = sum(correct[i] for i in members) / len(members)
        conf = sum(confidence[i] for i in members) / len(members)
        gap, sd = acc - conf, (acc * (1 - acc) / len(members)) ** 0.5
        if sd == 0:
            folded = abs(gap)
        elif draws:
            folded = float(np.abs(rng.normal(gap, sd, draws)).mean())
        else:
            density = lambda x: abs(x) * np.exp(-0.5 * ((x - gap) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))  # noqa: E731
            folded = integrate.quad(density, gap - 12 * sd, gap + 12 * sd, points=[0.0], limit=200)[0]
        total += len(members) / n * (2 * abs(gap) - folded)
    return total


@SETTINGS
@given(multiclass_case(require_all_classes=False), st.sampled_from([1, 5, 15]))
def test_debiased_ece_equals_the_integrated_reference(case, n_bins):
    y, p, _ = case
    confidence = p.max(axis=1)
    correct = (p.argmax(axis=1) == y).astype(float)
    expected = ref_debiased_gap(confidence.tolist(), correct.tolist(), n_bins)
    assert debiased_ece(y, p, "multiclass", n_bins) == pytest.approx(expected, abs=1e-7)


@SETTINGS
@given(st.one_of(multiclass_case(require_all_classes=False).map(lambda c: (c[0], c[1], "multiclass")),
                 binary_case().map(lambda c: (c[0], c[1], "binary")),
                 multilabel_case().map(lambda c: (c[0], c[1], "multilabel"))))
def test_debiased_ece_never_exceeds_the_plugin_ece(case):
    y, p, task = case
    assert debiased_ece(y, p, task) <= expected_calibration_error(y, p, task) + 1e-12


def test_debiased_ece_matches_monte_carlo_debiasing():
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(4) * 0.7, 300)
    y = rng.integers(0, 4, 300)
    confidence, correct = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    sampled = ref_debiased_gap(confidence.tolist(), correct.tolist(), 15, draws=200_000, rng=rng)
    assert debiased_ece(y, p, "multiclass") == pytest.approx(sampled, abs=2e-3)


def test_debiased_ece_hand_computed():
    # One bin of four predictions at 0.5 with two positives: gap 0, sd sqrt(0.25 / 4) = 0.25.
    y, p = np.array([0, 1, 0, 1]), np.full(4, 0.5)
    assert debiased_ece(y, p, "binary", n_bins=2) == pytest.approx(-0.25 * np.sqrt(2 / np.pi), abs=1e-12)
    # Certain outcomes (frequency 0 or 1) have no sampling variance: the plug-in gap stays.
    y, p = np.array([1, 1, 1, 1]), np.full(4, 0.9)
    assert debiased_ece(y, p, "binary", n_bins=10) == pytest.approx(0.1, abs=1e-12)


def test_debiased_ece_removes_most_of_the_plugin_bias():
    """A miscalibrated model scored on 2,000 images, 200 times: the debiased mean lies nearer the population value."""
    rng = np.random.default_rng(5)

    def model(n: int) -> tuple[np.ndarray, np.ndarray]:
        truth = rng.dirichlet(np.ones(5) * 0.6, n)  # the true class probabilities
        labels = (truth.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
        shown = truth ** 1.15  # a slightly overconfident model
        return labels, shown / shown.sum(axis=1, keepdims=True)

    population = expected_calibration_error(*model(400_000), "multiclass")
    plugin, debiased = np.array([[expected_calibration_error(*case, "multiclass"), debiased_ece(*case, "multiclass")]
                                 for case in (model(2000) for _ in range(200))]).mean(axis=0)
    assert plugin - population > 0.002  # the plug-in's bias is visible at this size
    assert abs(debiased - population) < 0.5 * (plugin - population)


def test_weighted_debiased_ece_equals_the_metric_on_resampled_images():
    rng = np.random.default_rng(4)
    n = 150
    weights = _draw_images(rng, n, 5)
    labels = rng.integers(0, 3, n)
    proba = rng.dirichlet(np.ones(3), size=(2, n))
    ece = weighted_ece(proba.astype(np.float32), labels, "multiclass", weights, 10, debias=True)
    for b in range(5):
        idx = np.repeat(np.arange(n), weights[b])
        for t in range(2):
            expected = debiased_ece(labels[idx], proba[t, idx].astype(np.float32).astype(float), "multiclass", 10)
            assert ece[t, b] == pytest.approx(expected, abs=1e-12)
    multilabel = rng.integers(0, 2, (n, 2))
    ece = weighted_ece(proba[:, :, :2].astype(np.float32), multilabel, "multilabel", weights, 15, debias=True)
    idx = np.repeat(np.arange(n), weights[0])
    assert ece[1, 0] == pytest.approx(
        debiased_ece(multilabel[idx], proba[1, idx, :2].astype(np.float32).astype(float), "multilabel"), abs=1e-12)
