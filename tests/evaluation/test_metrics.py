"""Metrics against independent references (scikit-learn; plain reference loops)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss, roc_auc_score

from crsbench_lib.errors import EvaluationError
from crsbench_lib.evaluation.metrics import (
    ECE_VARIANTS,
    NLL_EPS,
    accuracy,
    adaptive_ece,
    brier_score,
    classwise_ece,
    evaluate_predictions,
    expected_calibration_error,
    macro_auroc,
    negative_log_likelihood,
    reliability_diagram,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EDGES15 = [m / 15 for m in range(16)]


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


# --------------------------------------------------------------------------- strategies


@st.composite
def multiclass_case(draw, require_all_classes: bool = True):
    k = draw(st.integers(2, 5))
    n = draw(st.integers(k, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    style = draw(st.sampled_from(["dirichlet", "ties", "onehot", "uniform", "peaked"]))
    if style == "dirichlet":
        p = rng.dirichlet(np.ones(k), n)
    elif style == "ties":  # softmax of small integer logits: many exact ties across rows
        z = rng.integers(-2, 3, (n, k)).astype(float)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    elif style == "onehot":
        p = np.eye(k)[rng.integers(0, k, n)]
    elif style == "uniform":
        p = np.full((n, k), 1.0 / k)
    else:
        z = rng.normal(0, 8, (n, k))
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    if require_all_classes:
        y[:k] = rng.permutation(k)
    return y, p, k


@st.composite
def binary_case(draw):
    n = draw(st.integers(2, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    style = draw(st.sampled_from(["uniform", "edges", "coarse", "extreme"]))
    if style == "uniform":
        p = rng.random(n)
    elif style == "edges":  # exactly on the bin edges, including 0 and 1
        p = rng.choice(EDGES15, n)
    elif style == "coarse":
        p = np.round(rng.random(n), 1)
    else:
        p = rng.choice([0.0, 1.0, 1e-300, 1 - 1e-16], n)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    return y, p


@st.composite
def multilabel_case(draw):
    n_labels = draw(st.integers(1, 5))
    n = draw(st.integers(2, 50))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    p = rng.choice(EDGES15, (n, n_labels)) if draw(st.booleans()) else rng.random((n, n_labels))
    y = (rng.random((n, n_labels)) < rng.uniform(0.05, 0.95)).astype(int)
    return y, p


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


def test_evaluate_predictions_bundles_everything():
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(3), 60)
    y = rng.integers(0, 3, 60)
    metrics = evaluate_predictions(y, p, "multiclass", n_bins=10)
    assert metrics.ece == expected_calibration_error(y, p, "multiclass", 10)
    assert metrics.auroc == macro_auroc(y, p, "multiclass").value
    assert (metrics.n_test, metrics.ece_bins, metrics.ece_variant) == (60, 10, ECE_VARIANTS["multiclass"])
    assert set(metrics.as_dict()) >= {"auroc", "ece", "brier", "nll", "accuracy", "n_test", "n_skipped"}


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


@pytest.mark.parametrize("n_bins", [0, -3, 2.5, True])
def test_bad_bin_count(n_bins):
    with pytest.raises(EvaluationError, match="n_bins"):
        expected_calibration_error(np.array([0, 1]), np.array([0.2, 0.7]), "binary", n_bins)


# --------------------------------------------------------------------------- ECE floor


def test_ece_floor_hand_computed_cases():
    from crsbench_lib.evaluation.metrics import ece_floor

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

    from crsbench_lib.evaluation.metrics import ece_floor

    c = np.array(confidences)
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=c.size):
        o = np.array(outcome)
        weight = float(np.prod(np.where(o == 1, c, 1.0 - c)))
        if weight > 0:
            total += weight * expected_calibration_error(o, c, "binary", n_bins)
    assert ece_floor(c, "binary", n_bins) == pytest.approx(total, abs=1e-12)


def test_ece_floor_matches_sampled_labels_of_a_multiclass_model():
    from crsbench_lib.evaluation.metrics import ece_floor

    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.full(4, 0.7), size=300)
    cumulative = np.cumsum(p, axis=1)
    draws = [
        expected_calibration_error((rng.random(300)[:, None] > cumulative).sum(axis=1), p, "multiclass", 15)
        for _ in range(400)
    ]
    se = np.std(draws) / np.sqrt(len(draws))
    assert abs(ece_floor(p, "multiclass", 15) - np.mean(draws)) < 4 * se


def test_evaluate_predictions_reports_floor_and_excess():
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(3), size=100)
    y = rng.integers(0, 3, 100)
    metrics = evaluate_predictions(y, p, "multiclass", 10).as_dict()
    assert metrics["ece_excess"] == metrics["ece"] - metrics["ece_floor"]
    assert 0.0 < metrics["ece_floor"] < 1.0
