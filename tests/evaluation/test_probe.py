"""The linear probe: standardisation on train only, C chosen on validation, all classes out."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from crsbench_lib.errors import EvaluationError
from crsbench_lib.evaluation.probe import DEFAULT_C_GRID, Standardiser, fit_probe, logits_to_proba
from crsbench_lib.metrics.auroc import macro_auroc
from crsbench_lib.metrics.scores import negative_log_likelihood


def test_standardiser_is_fitted_on_train_only(rng, make_clusters, make_multilabel):
    train, y = make_clusters(200, 8, 3, rng)
    val, yv = make_clusters(60, 8, 3, rng, shift=50.0)
    probe = fit_probe(train, y, val, yv, "multiclass", 3)
    np.testing.assert_allclose(probe.standardiser.mean, train.astype(np.float64).mean(axis=0))
    np.testing.assert_allclose(probe.standardiser.scale, train.astype(np.float64).std(axis=0))
    assert probe.standardiser.transform(train).dtype == np.float64


def test_constant_feature_does_not_break(rng, make_clusters, make_multilabel):
    train, y = make_clusters(100, 5, 2, rng)
    train[:, 2] = 7.0
    probe = fit_probe(train, y, train, y, "binary", 2)
    assert np.isfinite(probe.predict_proba(train)).all()


def test_c_is_chosen_by_validation_nll_under_the_log_loss_rule(rng, make_clusters, make_multilabel):
    train, y = make_clusters(300, 20, 4, rng, separation=0.4)
    val, yv = make_clusters(200, 20, 4, rng, separation=0.4)
    probe = fit_probe(train, y, val, yv, "multiclass", 4, c_rule="log_loss")
    assert set(probe.val_nll) == set(DEFAULT_C_GRID) and probe.c_rule == "log_loss"
    assert probe.C == min(probe.val_nll, key=lambda c: (probe.val_nll[c], c))
    # the stored NLL is the NLL of the chosen probe on validation
    assert probe.val_nll[probe.C] == pytest.approx(
        negative_log_likelihood(yv, probe.predict_proba(val), "multiclass"), abs=1e-12
    )


@pytest.mark.parametrize("task, k", [("multiclass", 4), ("binary", 2), ("multilabel", 3)])
def test_c_is_chosen_by_validation_auroc_ties_to_stronger_regularisation(rng, make_clusters, make_multilabel, task, k):
    if task == "multilabel":
        train, y = make_multilabel(300, 20, k, rng)
        val, yv = make_multilabel(150, 20, k, rng)
    else:
        train, y = make_clusters(300, 20, k, rng, separation=0.4)
        val, yv = make_clusters(150, 20, k, rng, separation=0.4)
    probe = fit_probe(train, y, val, yv, task, k)
    assert probe.c_rule == "auroc"
    best = max(probe.val_auroc.values())
    assert probe.C == min(c for c, a in probe.val_auroc.items() if a == best)
    p = probe.predict_proba(val)
    assert probe.val_auroc[probe.C] == pytest.approx(
        macro_auroc(yv, p[:, 1] if task == "binary" else p, task).value, abs=1e-12
    )


def test_undefined_validation_auroc_takes_the_smallest_c(rng, make_clusters, make_multilabel):
    train, y = make_multilabel(200, 10, 2, rng)
    val, yv = make_multilabel(20, 10, 2, rng)
    yv[:] = 0  # every label has one outcome: AUROC undefined for every C
    probe = fit_probe(train, y, val, yv, "multilabel", 2, c_grid=(0.01, 0.1, 1.0))
    assert probe.C == 0.01 and all(np.isnan(a) for a in probe.val_auroc.values())


def test_unknown_c_rule(rng, make_clusters, make_multilabel):
    train, y = make_clusters(50, 4, 2, rng)
    with pytest.raises(EvaluationError, match="c_rule"):
        fit_probe(train, y, train, y, "binary", 2, c_rule="accuracy")


@pytest.mark.parametrize("task, k", [("multiclass", 4), ("binary", 2)])
def test_warm_started_path_matches_a_cold_fit(rng, make_clusters, make_multilabel, task, k):
    train, y = make_clusters(300, 10, k, rng, separation=0.5)
    val, yv = make_clusters(100, 10, k, rng, separation=0.5)
    probe = fit_probe(train, y, val, yv, task, k, tol=1e-8, max_iter=5000)
    xs = probe.standardiser.transform(train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cold = LogisticRegression(C=probe.C, tol=1e-8, max_iter=5000).fit(xs, y)
    np.testing.assert_allclose(probe.predict_proba(train), cold.predict_proba(xs), atol=1e-4)


def test_class_absent_from_train_gets_probability_zero(rng, make_clusters, make_multilabel):
    train, y = make_clusters(120, 6, 4, rng)
    keep = y != 3
    test, _ = make_clusters(50, 6, 4, rng)
    probe = fit_probe(train[keep], y[keep], train, y, "multiclass", 4)
    p = probe.predict_proba(test)
    assert p.shape == (50, 4)
    assert (p[:, 3] == 0).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.isneginf(probe.logits(test)[:, 3]).all()


def test_two_present_classes_of_four(rng, make_clusters, make_multilabel):
    train, y = make_clusters(120, 6, 4, rng)
    keep = y < 2
    probe = fit_probe(train[keep], y[keep], train[keep], y[keep], "multiclass", 4)
    p = probe.predict_proba(train)
    assert p.shape == (120, 4) and (p[:, 2:] == 0).all()
    # the binary weight vector is placed on the second present class
    accuracy = np.mean(p[keep].argmax(axis=1) == y[keep])
    assert accuracy > 0.8


def test_multilabel_probe_and_constant_label(rng, make_clusters, make_multilabel):
    train, y = make_multilabel(200, 10, 3, rng)
    y[:, 2] = 0  # a label with no positive in train
    probe = fit_probe(train, y, train, y, "multilabel", 3)
    p = probe.predict_proba(train)
    assert p.shape == (200, 3)
    np.testing.assert_allclose(p[:, 2], 0.5 / 201)  # (n_pos + 0.5) / (n + 1)
    assert np.mean((p[:, :2] >= 0.5) == (y[:, :2] == 1)) > 0.8


def test_deterministic(rng, make_clusters, make_multilabel):
    train, y = make_clusters(150, 12, 3, rng)
    a = fit_probe(train, y, train, y, "multiclass", 3, seed=5).predict_proba(train)
    b = fit_probe(train.copy(), y.copy(), train, y, "multiclass", 3, seed=5).predict_proba(train)
    assert a.tobytes() == b.tobytes()


def test_logits_to_proba_formats():
    z = np.array([-2.0, 0.0, 3.0])
    p = logits_to_proba(z, "binary")
    assert p.shape == (3, 2) and p[1, 1] == 0.5
    m = logits_to_proba(np.array([[0.0, -np.inf, 0.0]]), "multiclass")
    np.testing.assert_array_equal(m, [[0.5, 0.0, 0.5]])


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.update(train=np.where(np.arange(d["train"].size).reshape(d["train"].shape) == 7, np.nan, d["train"])),
         "train embeddings contains NaN"),
        (lambda d: d.update(val=d["val"][:, :3]), "dimension"),
        (lambda d: d.update(train_labels=d["train_labels"][:-1]), "train labels has 29 rows"),
        (lambda d: d.update(train=d["train"][:1], train_labels=d["train_labels"][:1]), "needs at least 2"),
        (lambda d: d.update(train_labels=np.zeros(30, int)), "single class"),
        (lambda d: d.update(val_labels=np.full(20, 5)), "must lie in 0..2"),
        (lambda d: d.update(train=d["train"][0]), "2-D"),
        (lambda d: d.update(c_grid=(0.1, -1.0)), "c_grid"),
        (lambda d: d.update(max_iter=0), "max_iter"),
        (lambda d: d.update(n_classes=1), "n_classes >= 2"),
    ],
)
def test_bad_input(rng, make_clusters, make_multilabel, mutate, message):
    train, y = make_clusters(30, 4, 3, rng)
    val, yv = make_clusters(20, 4, 3, rng)
    args = {"train": train, "train_labels": y, "val": val, "val_labels": yv, "n_classes": 3}
    mutate(args)
    with pytest.raises(EvaluationError, match=message):
        fit_probe(
            args.pop("train"), args.pop("train_labels"), args.pop("val"), args.pop("val_labels"),
            "multiclass", args.pop("n_classes"), **args,
        )


def test_binary_needs_two_classes(rng, make_clusters, make_multilabel):
    x = rng.normal(size=(10, 3))
    with pytest.raises(EvaluationError, match="binary task has n_classes = 2"):
        fit_probe(x, np.zeros(10), x, np.zeros(10), "binary", 3)
    with pytest.raises(EvaluationError, match="single class"):
        fit_probe(x, np.ones(10), x, np.ones(10), "binary", 2)
