"""Small synthetic images that look like each modality's MedMNIST images (for the corruption tests).

numpy only, fixed seeds: a B-mode scan with a dark lesion, an H&E patch built
in optical density, a blood smear, a fluorescence field of nuclei, an abdominal
CT slice in its window and a layered OCT B-scan. Not data: just enough of each
modality's structure (white slide background, air outside the body, dark
vitreous above the retina) for the corruptions to act as they would on the
real images.
"""

from __future__ import annotations

import numpy as np

_HE = np.array([[0.65, 0.70, 0.29], [0.07, 0.99, 0.11]])
_HE = _HE / np.linalg.norm(_HE, axis=1, keepdims=True)


def _grid(side: int) -> tuple[np.ndarray, np.ndarray]:
    c = (np.arange(side) + 0.5) / side * 2 - 1
    y, x = np.meshgrid(c, c, indexing="ij")
    return x[None], y[None]


def _discs(rng: np.random.Generator, n: int, side: int, k: int, radius: tuple[float, float]) -> np.ndarray:
    """(n, side, side) union of k soft discs per image."""
    x, y = _grid(side)
    cx, cy = rng.uniform(-0.9, 0.9, (2, n, k, 1, 1))
    rad = rng.uniform(*radius, (n, k, 1, 1))
    d = np.sqrt((x[:, None] - cx) ** 2 + (y[:, None] - cy) ** 2) - rad
    return np.clip(0.5 - d * side / 2, 0, 1).max(axis=1)


def _smooth(rng: np.random.Generator, n: int, side: int, passes: int = 3) -> np.ndarray:
    f = rng.standard_normal((n, side, side))
    for _ in range(passes):  # a cheap low-pass: average with the four neighbours
        f = (f + np.roll(f, 1, 1) + np.roll(f, -1, 1) + np.roll(f, 1, 2) + np.roll(f, -1, 2)) / 5
    return (f - f.mean()) / f.std()


def _u8(a: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(a * 255), 0, 255).astype(np.uint8)


def ultrasound(n: int = 6, side: int = 28, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = _grid(side)
    tissue = 0.45 + 0.12 * _smooth(rng, n, side) + 0.1 * rng.standard_normal((n, side, side))
    lesion = _discs(rng, n, side, 1, (0.2, 0.4))
    return _u8(tissue * (1 - 0.75 * lesion) * (1 - 0.2 * (y + 1) / 2))


def he_patch(n: int = 6, side: int = 28, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    nuclei = _discs(rng, n, side, 12, (0.06, 0.14))
    tissue = np.clip(0.8 + 0.3 * _smooth(rng, n, side), 0, 1)
    tissue[: n // 3, :, : side // 3] = 0  # some white slide background
    od = (1.1 * nuclei * tissue)[..., None] * _HE[0] + (0.55 * tissue)[..., None] * _HE[1]
    return _u8(np.exp(-od))


def blood_smear(n: int = 6, side: int = 28, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    cells = _discs(rng, n, side, 6, (0.15, 0.25))
    nucleus = _discs(rng, n, side, 1, (0.25, 0.35))
    od = (0.35 * cells)[..., None] * _HE[1] + (1.0 * nucleus)[..., None] * _HE[0] + 0.05
    return _u8(np.exp(-od))


def fluorescence(n: int = 6, side: int = 28, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    nuclei = _discs(rng, n, side, 3, (0.15, 0.3))
    return _u8(0.05 + 0.7 * nuclei * (1 + 0.2 * _smooth(rng, n, side)))


def ct_slice(n: int = 6, side: int = 28, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = _grid(side)
    body = np.clip(0.5 - ((x / 0.85) ** 2 + (y / 0.7) ** 2 - 1) * side / 2, 0, 1)
    organs = _discs(rng, n, side, 3, (0.15, 0.3))
    bone = _discs(rng, n, side, 1, (0.06, 0.1))
    grey = body * (0.45 + 0.15 * organs + 0.04 * rng.standard_normal((n, side, side)))
    return _u8(np.maximum(grey, bone * body * 1.2))


def oct_scan(n: int = 6, side: int = 28, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = _grid(side)
    top = rng.uniform(-0.5, -0.1, (n, 1, 1)) + 0.15 * np.sin(2 * x + rng.uniform(0, 6, (n, 1, 1)))
    depth = y - top
    layers = (depth > 0) * (0.35 + 0.3 * np.cos(depth * 9) ** 2) * np.exp(-np.clip(depth, 0, None))
    rpe = np.exp(-(((depth - 0.7) / 0.06) ** 2))
    return _u8(0.04 + layers + 0.5 * rpe + 0.05 * rng.standard_normal((n, side, side)))


#: Test images of every modality: name -> (catalogue, maker).
MODALITY_IMAGES = {
    "ultrasound": ("ultrasound", ultrasound),
    "he_patch": ("pathology", he_patch),
    "blood_smear": ("microscopy", blood_smear),
    "fluorescence": ("microscopy", fluorescence),
    "ct_slice": ("ct", ct_slice),
    "oct_scan": ("oct", oct_scan),
}
