"""Small image batches shared by the encoder tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def rgb_batch() -> np.ndarray:
    """Twelve 32-px RGB images: smooth blobs plus noise (not constant, not pure noise)."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:32, 0:32]
    imgs = []
    for k in range(12):
        cy, cx, r = rng.uniform(8, 24), rng.uniform(8, 24), rng.uniform(4, 10)
        blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
        colour = rng.uniform(0.2, 1.0, 3)
        img = 0.3 + 0.6 * blob[..., None] * colour + rng.normal(0, 0.05, (32, 32, 3))
        imgs.append(np.clip(img * 255, 0, 255).astype(np.uint8))
    return np.stack(imgs)


@pytest.fixture(scope="session")
def grey_batch(rgb_batch: np.ndarray) -> np.ndarray:
    """The same images as grey ``(N, 32, 32)``."""
    return rgb_batch.mean(axis=-1).astype(np.uint8)
