"""Hypothesis strategies of (labels, probabilities) cases, shared by the metric tests."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EDGES15 = [m / 15 for m in range(16)]


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
