"""Small synthetic embeddings shared by the evaluation tests."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits


def gaussian_clusters(
    n: int, dim: int, n_classes: int, rng: np.random.Generator, separation: float = 1.0, shift: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Class-conditional Gaussians with fixed class means (same for every split)."""
    centres = np.random.default_rng(1234).normal(0.0, separation, (n_classes, dim))
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    x = centres[y] + rng.normal(0.0, 1.0, (n, dim)) + shift
    return x.astype(np.float32), y


def multilabel_clusters(
    n: int, dim: int, n_labels: int, rng: np.random.Generator, prevalence: float = 0.3
) -> tuple[np.ndarray, np.ndarray]:
    directions = np.random.default_rng(4321).normal(0.0, 1.0, (n_labels, dim))
    y = (rng.random((n, n_labels)) < prevalence).astype(np.int64)
    y[0] = 1
    y[1] = 0
    x = y @ directions + rng.normal(0.0, 1.0, (n, dim))
    return x.astype(np.float32), y


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture
def make_clusters():
    """The :func:`gaussian_clusters` helper (importlib mode: tests cannot import conftest)."""
    return gaussian_clusters


@pytest.fixture
def make_multilabel():
    """The :func:`multilabel_clusters` helper."""
    return multilabel_clusters


@pytest.fixture(autouse=True)
def single_blas_thread():
    """Small matrices: BLAS threads only oversubscribe the shared cores (evaluate_cell does the same)."""
    with threadpool_limits(limits=1):
        yield
