"""Modality-specific image corruptions with five severities (after MedMNIST-C).

The design follows MedMNIST-C (Di Salvo, Doerrich & Ledig, "MedMNIST-C:
Comprehensive benchmark and improved classifier robustness by simulating
realistic image corruptions", 2024): generic acquisition and processing
corruptions (noise, blur, compression, pixelation, brightness both ways,
contrast) plus artefacts specific to a modality (a dermoscope's black corner
and ruler marks; uneven illumination and haze in fundus photographs; speckle,
anti-scatter grid lines and burned-in markers in radiographs). Severity 1 is
barely visible, severity 5 is an image a clinician would ask to retake.

Every corruption is a function of (images, family, severity, seed): the same
arguments give bit-identical output. Random parts (noise, artefact positions)
are drawn from one stream for the whole array, so callers corrupt a whole
evaluation cell at once; the stream depends on (family, seed) but not on the
severity, so severities differ only in strength. Operations are vectorised over the batch
except JPEG, which goes through Pillow image by image.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

import numpy as np
from PIL import Image
from scipy import ndimage

from crsbench_lib.cohort import _render as r
from crsbench_lib.errors import DataError
from crsbench_lib.results.schema import SEVERITIES

#: Bump whenever any corruption's output changes (part of corrupted-embedding cache keys).
CORRUPTION_VERSION = "2"
#: Entropy of the corruption streams (distinct from the phantom generators').
CORRUPTION_ENTROPY = 0x636F_7272_7570_7469_6F6E_7331

# Severity parameters (index 0 = severity 1). Lengths in pixels refer to a 32 px image.
# Version 2 halves version 1's strengths: at 32 px version 1 cost the default zoo
# 0.02-0.15 AUROC already at severity 1 and up to 0.32 at severity 5 (near chance),
# so the robustness axis sat on its worst anchor and swamped the other three.
# MedMNIST-C aims at corruptions that degrade without destroying the image.
GAUSSIAN_NOISE_SD = (0.02, 0.04, 0.06, 0.09, 0.13)
SPECKLE_SD = (0.06, 0.11, 0.17, 0.25, 0.35)
BLUR_SIGMA_PX = (0.5, 0.8, 1.1, 1.5, 2.0)
JPEG_QUALITY = (60, 45, 30, 20, 12)
PIXELATE_FRACTION = (0.7, 0.55, 0.45, 0.35, 0.27)
BRIGHTNESS_DELTA = (0.05, 0.1, 0.15, 0.22, 0.3)
CONTRAST_FACTOR = (0.88, 0.78, 0.68, 0.58, 0.48)
BLACK_CORNER_RADIUS = (1.4, 1.3, 1.2, 1.1, 1.0)
RULER_COUNT = (1, 1, 1, 2, 2)
RULER_WIDTH_PX = (0.5, 0.6, 0.8, 1.0, 1.2)
ILLUMINATION_DROP = (0.12, 0.2, 0.28, 0.36, 0.45)
HAZE_STRENGTH = (0.07, 0.14, 0.21, 0.28, 0.35)
HAZE_BLUR_PX = (0.2, 0.4, 0.6, 0.8, 1.0)
GRID_AMPLITUDE = (0.025, 0.045, 0.07, 0.1, 0.14)
MARKER_COUNT = (1, 2, 3, 4, 5)

_GENERIC = ("gaussian_noise", "gaussian_blur", "jpeg", "pixelate", "brightness_up", "brightness_down", "contrast")
_FAMILIES: dict[str, tuple[str, ...]] = {
    "dermatology": _GENERIC + ("black_corner", "ruler_marks"),
    "ophthalmology": _GENERIC + ("uneven_illumination", "haze"),
    "radiology": _GENERIC + ("speckle_noise", "grid_lines", "burned_markers"),
}
#: Domains with a corruption catalogue (a real dataset's ``domain`` key names one).
CORRUPTION_DOMAINS: tuple[str, ...] = tuple(_FAMILIES)
_DOMAIN_ALIASES = {"derm": "dermatology", "fundus": "ophthalmology", "cxr": "radiology"}


def corruption_families(domain: str) -> tuple[str, ...]:
    """Corruption families that apply to a domain.

    Parameters
    ----------
    domain : str
        ``dermatology``, ``ophthalmology`` or ``radiology`` (or a phantom
        dataset name: ``derm``, ``fundus``, ``cxr``).

    Returns
    -------
    tuple of str
        The families, generic ones first.

    Raises
    ------
    DataError
        On an unknown domain.
    """
    key = _DOMAIN_ALIASES.get(domain, domain)
    if key not in _FAMILIES:
        raise DataError(
            f"unknown domain {domain!r} for corruptions (expected one of {', '.join(_FAMILIES)} "
            f"or {', '.join(_DOMAIN_ALIASES)})"
        )
    return _FAMILIES[key]


def all_families() -> tuple[str, ...]:
    """Every corruption family of every domain, without repetition."""
    seen: dict[str, None] = {}
    for fams in _FAMILIES.values():
        seen.update(dict.fromkeys(fams))
    return tuple(seen)


# --- implementations: float images in [0, 1], (N, H, W) or (N, H, W, 3) --------------------


def _like(field: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Give a per-pixel ``(N, H, W)`` field a channel axis when ``x`` is RGB."""
    return field[..., None] if x.ndim == 4 else field


def _scale_px(value: float, side: int) -> float:
    return value * side / 32.0


def _gaussian_noise(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    return x + rng.normal(0, GAUSSIAN_NOISE_SD[s - 1], x.shape).astype(np.float32)


def _speckle_noise(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    return x * (1.0 + rng.normal(0, SPECKLE_SD[s - 1], x.shape).astype(np.float32))


def _gaussian_blur(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    return r.blur(x, _scale_px(BLUR_SIGMA_PX[s - 1], x.shape[1]))


def _jpeg(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    u8 = r.to_uint8(x)
    out = np.empty_like(u8)
    for i, im in enumerate(u8):
        buf = io.BytesIO()
        Image.fromarray(im).save(buf, format="JPEG", quality=JPEG_QUALITY[s - 1])
        buf.seek(0)
        out[i] = np.asarray(Image.open(buf).convert("L" if im.ndim == 2 else "RGB"))
    return out.astype(np.float32) / 255.0


def _box_matrix(side: int, small: int) -> np.ndarray:
    """Area-averaging matrix from ``side`` to ``small`` samples (rows sum to 1)."""
    edges = np.linspace(0, side, small + 1)
    lo, hi = edges[:-1, None], edges[1:, None]
    pix = np.arange(side)[None, :]
    overlap = np.clip(np.minimum(hi, pix + 1) - np.maximum(lo, pix), 0, None)
    return (overlap / overlap.sum(axis=1, keepdims=True)).astype(np.float32)


def _pixelate(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    side = x.shape[1]
    small = max(2, int(round(side * PIXELATE_FRACTION[s - 1])))
    a = _box_matrix(side, small)
    down = np.einsum("ih,nhw...,jw->nij...", a, x, a, optimize=True)
    idx = np.minimum((np.arange(side) * small) // side, small - 1)
    return down[:, idx][:, :, idx]


_HUE_FLOOR = 0.15


def _value_shift(x: np.ndarray, delta: float) -> np.ndarray:
    """Shift brightness: for RGB, the HSV value channel (hue kept); for grey, the level."""
    if x.ndim == 3:
        return x + delta
    v = x.max(axis=-1, keepdims=True)
    # Keep the hue where it is defined; fade to a grey shift in near-black pixels,
    # whose hue is sensor noise (lifting it would paint the background in confetti).
    weight = (x + np.clip(_HUE_FLOOR - v, 0.0, None)) / np.maximum(v, _HUE_FLOOR)
    return x + delta * weight


def _brightness_up(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    return _value_shift(x, BRIGHTNESS_DELTA[s - 1])


def _brightness_down(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    return _value_shift(x, -BRIGHTNESS_DELTA[s - 1])


def _contrast(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    axes = tuple(range(1, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    return mean + (x - mean) * CONTRAST_FACTOR[s - 1]


def _radius_map(x: np.ndarray, rng: np.random.Generator, jitter: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    cx = r.col(rng.normal(0, jitter, n))
    cy = r.col(rng.normal(0, jitter, n))
    return np.sqrt((gx - cx) ** 2 + (gy - cy) ** 2), gx, gy


def _black_corner(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    rad, _, _ = _radius_map(x, rng, 0.06)
    keep = r.ramp(rad - BLACK_CORNER_RADIUS[s - 1], r.px(1.0, x.shape[1]))
    return x * _like(keep, x)


def _ruler_marks(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    out = x
    width = r.px(RULER_WIDTH_PX[s - 1] * side / 32.0, side) / 2
    for _ in range(RULER_COUNT[s - 1]):
        horizontal = rng.uniform(size=n) < 0.5
        pos = rng.uniform(0.55, 0.9, n) * np.where(rng.uniform(size=n) < 0.5, -1, 1)
        along = np.where(r.col(horizontal), gx, gy)
        across = np.where(r.col(horizontal), gy, gx) - r.col(pos)
        line = r.ramp(np.abs(across) - width, r.px(0.8, side))
        ticks = (np.cos(along * 2 * np.pi / r.px(4.0, side)) > 0.3) & (across > 0) & (across < r.px(3.0, side))
        mark = np.maximum(line, ticks.astype(np.float32)) * 0.9
        colour = np.where(rng.uniform(size=n) < 0.7, 0.08, 0.95)
        out = r.composite(out, (np.repeat(colour[:, None], 3, 1) if x.ndim == 4 else r.col(colour)), mark)
    return out


def _uneven_illumination(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    phi = rng.uniform(0, 2 * np.pi, n)
    proj = gx * r.col(np.cos(phi)) + gy * r.col(np.sin(phi))
    gain = 1.0 - ILLUMINATION_DROP[s - 1] * np.clip((proj + 1.0) / 2.0, 0, 1) ** 1.5
    return x * _like(gain, x)


def _haze(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    h = HAZE_STRENGTH[s - 1]
    veil = 0.75 + 0.1 * r.smooth_noise(rng, n, side, _scale_px(4.0, side))
    veil = veil[..., None] * np.array([1.0, 0.95, 0.85], dtype=np.float32) if x.ndim == 4 else veil
    blurred = r.blur(x, _scale_px(HAZE_BLUR_PX[s - 1], side))
    return blurred * (1.0 - h) + veil * h


def _grid_lines(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    vertical = r.col(rng.uniform(size=n) < 0.5)
    period = r.col(r.px(2.5, side) * rng.uniform(0.9, 1.4, n))
    phase = r.col(rng.uniform(0, 2 * np.pi, n))
    coord = np.where(vertical, gx, gy)
    pattern = np.cos(2 * np.pi * coord / period + phase)
    return x + GRID_AMPLITUDE[s - 1] * _like(pattern, x)


def _burned_markers(x: np.ndarray, s: int, rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    k = MARKER_COUNT[s - 1]
    cx = rng.uniform(-0.85, 0.85, (n, k))
    cy = rng.uniform(-0.85, 0.85, (n, k))
    hw = rng.uniform(0.06, 0.16, (n, k))
    hh = rng.uniform(0.04, 0.1, (n, k))
    d = np.maximum(
        np.abs(gx[:, None] - cx[:, :, None, None]) - hw[:, :, None, None],
        np.abs(gy[:, None] - cy[:, :, None, None]) - hh[:, :, None, None],
    )
    mark = r.ramp(d, r.px(0.8, side)).max(axis=1)
    return np.maximum(x, _like(mark, x) * 0.97)


_IMPLEMENTATIONS: dict[str, Callable[[np.ndarray, int, np.random.Generator], np.ndarray]] = {
    "gaussian_noise": _gaussian_noise,
    "speckle_noise": _speckle_noise,
    "gaussian_blur": _gaussian_blur,
    "jpeg": _jpeg,
    "pixelate": _pixelate,
    "brightness_up": _brightness_up,
    "brightness_down": _brightness_down,
    "contrast": _contrast,
    "black_corner": _black_corner,
    "ruler_marks": _ruler_marks,
    "uneven_illumination": _uneven_illumination,
    "haze": _haze,
    "grid_lines": _grid_lines,
    "burned_markers": _burned_markers,
}


def corrupt(images: np.ndarray, family: str, severity: int, seed: int = 0) -> np.ndarray:
    """Apply one corruption at one severity to a batch of images.

    Parameters
    ----------
    images : numpy.ndarray
        ``uint8`` ``(N, H, W)`` (grey) or ``(N, H, W, 3)`` (RGB).
    family : str
        A corruption family (see :func:`corruption_families`).
    severity : int
        1 (mild) to 5 (severe).
    seed : int, default 0
        Seed of the random parts; same arguments give bit-identical output.

    Returns
    -------
    numpy.ndarray
        ``uint8``, same shape as ``images``.

    Raises
    ------
    DataError
        On an unknown family, a severity outside 1..5, a negative seed or
        images that are not a ``uint8`` batch.
    """
    if family not in _IMPLEMENTATIONS:
        raise DataError(f"unknown corruption {family!r} (expected one of {', '.join(all_families())})")
    if isinstance(severity, bool) or not isinstance(severity, (int, np.integer)) or not 1 <= severity <= 5:
        raise DataError(f"corruption severity must be an integer in 1..5, got {severity!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError(f"corruption seed must be a non-negative integer, got {seed!r}")
    images = np.asarray(images)
    if images.dtype != np.uint8:
        raise DataError(f"corrupt: images must be uint8, got {images.dtype}")
    if images.ndim not in (3, 4) or (images.ndim == 4 and images.shape[-1] != 3):
        raise DataError(f"corrupt: images must be (N, H, W) or (N, H, W, 3), got {images.shape}")
    if len(images) == 0:
        return images.copy()
    # The stream does not depend on the severity: one seed gives the same noise
    # pattern and artefact layout at every severity, only stronger, so that
    # severities of one cell are comparable (and the sheet reads as a progression).
    key = (zlib.crc32(family.encode()), int(seed))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(CORRUPTION_ENTROPY, spawn_key=key)))
    out = _IMPLEMENTATIONS[family](images.astype(np.float32) / 255.0, int(severity), rng)
    return r.to_uint8(out)
