"""Label-fraction subsets: nested, stratified, seeded by labels and seed only."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import EvaluationError
from crsbench_lib.evaluation.fractions import fractions_used, label_fraction_subsets, validation_subsets

FRACTIONS = (1.0, 0.25, 0.10, 0.05, 0.01)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def class_labels(draw):
    k = draw(st.integers(2, 6))
    n = draw(st.integers(k, 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    weights = rng.dirichlet(np.full(k, 0.5))  # imbalanced, some classes rare
    y = rng.choice(k, n, p=weights)
    y[:k] = np.arange(k)
    return y


@SETTINGS
@given(class_labels(), st.integers(0, 1000))
def test_nested_stratified_and_every_class_kept(y, seed):
    subsets = label_fraction_subsets(y, FRACTIONS, seed, "multiclass")
    ordered = sorted(subsets)
    for small, large in zip(ordered, ordered[1:]):
        assert np.isin(subsets[small], subsets[large]).all()
    assert np.array_equal(subsets[1.0], np.arange(y.size))
    for f, idx in subsets.items():
        assert np.array_equal(idx, np.unique(idx))
        counts = np.bincount(y[idx], minlength=y.max() + 1)
        for c, n_c in enumerate(np.bincount(y)):
            # stratified: each class contributes round(f * n_c), and at least one example
            assert counts[c] == max(1, int(np.floor(f * n_c + 0.5)))


@SETTINGS
@given(class_labels(), st.integers(0, 1000))
def test_reproducible_and_identical_for_any_encoder(y, seed):
    first = label_fraction_subsets(y, FRACTIONS, seed, "multiclass")
    # a second encoder at the same seed: the function sees only labels and seed
    second = label_fraction_subsets(y.copy(), list(reversed(FRACTIONS)), seed, "multiclass")
    assert all(np.array_equal(first[f], second[f]) for f in FRACTIONS)


def test_seed_changes_the_draw():
    y = np.repeat(np.arange(4), 250)
    a = label_fraction_subsets(y, (0.1,), 0, "multiclass")[0.1]
    b = label_fraction_subsets(y, (0.1,), 1, "multiclass")[0.1]
    assert a.size == b.size and not np.array_equal(a, b)


def test_binary_and_fraction_used():
    y = np.array([0] * 990 + [1] * 10)
    subsets = label_fraction_subsets(y, (0.01, 0.5), 3, "binary")
    assert (y[subsets[0.01]] == 1).sum() == 1  # the rare class is kept
    used = fractions_used(subsets, y.size)
    assert used[0.01] == pytest.approx(11 / 1000)
    assert used[0.5] == pytest.approx(500 / 1000)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(0, 100))
def test_multilabel_positives_kept_and_nested(data_seed, seed):
    rng = np.random.default_rng(data_seed)
    n, n_labels = int(rng.integers(5, 300)), int(rng.integers(1, 6))
    y = (rng.random((n, n_labels)) < rng.uniform(0.01, 0.5, n_labels)).astype(int)
    subsets = label_fraction_subsets(y, FRACTIONS, seed, "multilabel")
    ordered = sorted(subsets)
    for small, large in zip(ordered, ordered[1:]):
        assert np.isin(subsets[small], subsets[large]).all()
    for idx in subsets.values():
        has_positive = y.sum(axis=0) > 0
        assert (y[idx].sum(axis=0)[has_positive] >= 1).all()
    assert np.array_equal(subsets[1.0], np.arange(n))


def test_multilabel_is_roughly_stratified():
    rng = np.random.default_rng(0)
    y = (rng.random((5000, 4)) < np.array([0.4, 0.2, 0.05, 0.01])).astype(int)
    idx = label_fraction_subsets(y, (0.1,), 0, "multilabel")[0.1]
    assert abs(idx.size / 5000 - 0.1) < 0.01
    np.testing.assert_allclose(y[idx].mean(axis=0), y.mean(axis=0), atol=0.02)


def test_validation_policies():
    y = np.repeat(np.arange(3), 40)
    matched = validation_subsets(y, (0.05, 0.5), 0, "multiclass", "matched")
    assert np.bincount(y[matched[0.05]]).tolist() == [2, 2, 2]
    full = validation_subsets(y, (0.05,), 0, "multiclass", "full")
    assert np.array_equal(full[0.05], np.arange(y.size))
    # an independent stream: not the train draw on the same labels
    train = label_fraction_subsets(y, (0.5,), 0, "multiclass")
    assert not np.array_equal(train[0.5], matched[0.5])


@pytest.mark.parametrize(
    "labels, fractions, task, message",
    [
        (np.array([0, 1]), (0.0,), "multiclass", r"\(0, 1\]"),
        (np.array([0, 1]), (1.5,), "multiclass", r"\(0, 1\]"),
        (np.array([0, 1]), (), "multiclass", "empty"),
        (np.array([0, 1]), ("a",), "multiclass", "numbers"),
        (np.array([0.0, np.nan]), (0.5,), "multiclass", "finite integers"),
        (np.array([], dtype=int), (0.5,), "multiclass", "empty"),
        (np.array([[0, 1]]), (0.5,), "multiclass", "1-D"),
        (np.array([0, 2]), (0.5,), "multilabel", "2-D"),
        (np.array([0, 1]), (0.5,), "ordinal", "task must be one of"),
    ],
)
def test_bad_input(labels, fractions, task, message):
    with pytest.raises(EvaluationError, match=message):
        label_fraction_subsets(labels, fractions, 0, task)


def test_bad_policy():
    with pytest.raises(EvaluationError, match="val_fraction_policy"):
        validation_subsets(np.array([0, 1]), (0.5,), 0, "binary", "half")
