"""Modality-specific image corruptions with five severities on physical scales (after MedMNIST-C).

The design follows MedMNIST-C (Di Salvo, Doerrich & Ledig, "MedMNIST-C:
Comprehensive benchmark and improved classifier robustness by simulating
realistic image corruptions", 2024): acquisition and processing corruptions
plus artefacts specific to a modality. Severity 1 is barely visible, severity
5 is an image a clinician would ask to retake.

Families (per domain, see :func:`corruption_families`):

- sensor noise (cameras: additive read noise; radiographs: quantum noise, whose
  sd grows with the square root of the signal), defocus (Gaussian) blur, motion
  blur (a line kernel in a random direction per image), JPEG compression
  (Pillow, image by image), pixelation (a lower-resolution sensor), exposure up
  and down (in stops, applied in linear light, so bright regions clip), contrast,
  and a gamma (tone-curve) error in a random direction per image: the last four
  include non-affine photometric changes a linear read-out is not blind to;
- dermatology: the dermoscope's black corner, ruler marks;
- ophthalmology: uneven illumination (a smooth bias field), haze (media opacity);
- radiology: over-processed local contrast (unsharp masking, as vendors' edge
  enhancement), anti-scatter grid lines, burned-in markers;
- ultrasound, pathology, microscopy, ct and oct: catalogues of their own
  (speckle, stain variation, low-dose noise, window errors, B-scan
  misalignment, ...), defined with their reasons in
  :mod:`crsbench_lib.cohort.corruption_modalities` and read through the same
  table; they reuse the families above where the physics is the same.

Every family's five severities are one row of :data:`SEVERITY_TABLE` (per
domain, in physical units: lengths in pixels of a 32-px image, exposure in
stops, noise as sd of [0, 1] intensities). Every corruption is a function of
(images, family, severity, seed, domain): the same arguments give bit-identical
output. Random parts (noise, directions, artefact positions) are drawn from one
stream for the whole array, so callers corrupt a whole evaluation cell at once;
the stream depends on (family, seed) but not on the severity, so severities
differ only in strength. Operations are vectorised over the batch except JPEG.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable, Mapping

import numpy as np
from PIL import Image

from crsbench_lib.cohort import _render as r
from crsbench_lib.cohort.corruption_modalities import MODALITY_BLOCKS, MODALITY_IMPLEMENTATIONS, MODALITY_TABLES
from crsbench_lib.errors import DataError
from crsbench_lib.results.schema import SEVERITIES

#: Bump whenever any corruption's output changes (part of corrupted-embedding cache keys).
CORRUPTION_VERSION = "3"
#: Entropy of the corruption streams (distinct from the phantom generators').
CORRUPTION_ENTROPY = 0x636F_7272_7570_7469_6F6E_7331

Row = Mapping[str, tuple[float, ...]]

# Acquisition and processing families shared by the camera domains (derm, fundus).
_CAMERA: dict[str, Row] = {
    "gaussian_noise": {"read": (0.02, 0.035, 0.05, 0.07, 0.10), "shot": (0, 0, 0, 0, 0)},
    "gaussian_blur": {"sigma_px": (0.5, 0.75, 1.0, 1.3, 1.7)},
    "motion_blur": {"length_px": (1.5, 2.5, 3.5, 4.5, 6.0)},
    "jpeg": {"quality": (60, 45, 30, 20, 12)},
    "pixelate": {"fraction": (0.6, 0.5, 0.4, 0.3, 0.22)},
    "brightness_up": {"stops": (0.25, 0.5, 0.75, 1.0, 1.3), "level": (0, 0, 0, 0, 0)},
    "brightness_down": {"stops": (-0.25, -0.5, -0.75, -1.0, -1.3), "level": (0, 0, 0, 0, 0)},
    "contrast": {"factor": (0.85, 0.72, 0.6, 0.5, 0.4)},
    "gamma": {"log_gamma": (0.15, 0.3, 0.45, 0.6, 0.8)},
}
# Radiographs: quantum noise, detector unsharpness, and window level instead of camera exposure.
_RADIOGRAPH: dict[str, Row] = {
    **_CAMERA,
    "gaussian_noise": {"read": (0, 0, 0, 0, 0), "shot": (0.035, 0.055, 0.08, 0.11, 0.15)},
    "brightness_up": {"stops": (0, 0, 0, 0, 0), "level": (0.05, 0.1, 0.15, 0.2, 0.27)},
    "brightness_down": {"stops": (0, 0, 0, 0, 0), "level": (-0.05, -0.1, -0.15, -0.2, -0.27)},
    "local_contrast": {"amount": (0.6, 1.2, 1.8, 2.6, 3.5), "radius_px": (1.5, 1.5, 1.5, 1.5, 1.5)},
    "grid_lines": {"amplitude": (0.025, 0.045, 0.07, 0.1, 0.14)},
    "burned_markers": {"count": (1, 2, 3, 4, 5)},
}
#: Parameters of every family at severities 1-5 (tuple index = severity - 1), per domain.
SEVERITY_TABLE: dict[str, dict[str, Row]] = {
    "dermatology": {
        **_CAMERA,
        "black_corner": {"radius": (1.4, 1.3, 1.2, 1.1, 1.0)},
        "ruler_marks": {"count": (1, 1, 1, 2, 2), "width_px": (0.5, 0.6, 0.8, 1.0, 1.2)},
    },
    "ophthalmology": {
        **_CAMERA,
        "uneven_illumination": {"drop": (0.12, 0.2, 0.28, 0.36, 0.45)},
        "haze": {"strength": (0.07, 0.14, 0.21, 0.28, 0.35), "blur_px": (0.2, 0.4, 0.6, 0.8, 1.0)},
    },
    "radiology": _RADIOGRAPH,
    # After the three original domains, so that a family's default table (_DEFAULT_DOMAIN) does not move.
    **MODALITY_TABLES,
}
#: Domains with a corruption catalogue (a real dataset's ``domain`` key names one).
CORRUPTION_DOMAINS: tuple[str, ...] = tuple(SEVERITY_TABLE)

# Each family's block of test images, declared by name (method section 9,
# amendment 11) so that a family added to a catalogue takes a new index and
# moves no other family's images. The indices are the families' catalogue
# positions when blocks were introduced; never renumber them.
_CAMERA_BLOCKS: dict[str, int] = {
    "gaussian_noise": 0, "gaussian_blur": 1, "motion_blur": 2, "jpeg": 3, "pixelate": 4,
    "brightness_up": 5, "brightness_down": 6, "contrast": 7, "gamma": 8,
}
#: Block index of every family, per domain (keys: the families of :data:`SEVERITY_TABLE`).
IMAGE_BLOCKS: dict[str, dict[str, int]] = {
    "dermatology": {**_CAMERA_BLOCKS, "black_corner": 9, "ruler_marks": 10},
    "ophthalmology": {**_CAMERA_BLOCKS, "uneven_illumination": 9, "haze": 10},
    "radiology": {**_CAMERA_BLOCKS, "local_contrast": 9, "grid_lines": 10, "burned_markers": 11},
    **MODALITY_BLOCKS,
}
#: Which test images each corruption condition uses (a profile's ``corruptions.layout``; see :func:`first_image`).
CORRUPTION_LAYOUTS: tuple[str, ...] = ("per_condition", "per_family", "shared")
_DOMAIN_ALIASES = {"derm": "dermatology", "fundus": "ophthalmology", "cxr": "radiology"}
#: Table used for a family on an image set of unknown domain: the first domain that defines it.
_DEFAULT_DOMAIN = {f: d for d in reversed(SEVERITY_TABLE) for f in SEVERITY_TABLE[d]}


def _domain_key(domain: str) -> str:
    key = _DOMAIN_ALIASES.get(domain, domain)
    if key not in SEVERITY_TABLE:
        raise DataError(
            f"unknown domain {domain!r} for corruptions (expected one of {', '.join(SEVERITY_TABLE)} "
            f"or {', '.join(_DOMAIN_ALIASES)})"
        )
    return key


def corruption_families(domain: str) -> tuple[str, ...]:
    """Corruption families that apply to a domain.

    Parameters
    ----------
    domain : str
        ``dermatology``, ``ophthalmology``, ``radiology``, ``ultrasound``,
        ``pathology``, ``microscopy``, ``ct`` or ``oct`` (:data:`CORRUPTION_DOMAINS`),
        or a phantom dataset name: ``derm``, ``fundus``, ``cxr``.

    Returns
    -------
    tuple of str
        The families, acquisition and processing ones first.

    Raises
    ------
    DataError
        On an unknown domain.

    Examples
    --------
    >>> corruption_families("derm")[-2:]
    ('black_corner', 'ruler_marks')
    >>> corruption_families("ultrasound")[:2]
    ('speckle', 'depth_attenuation')
    """
    return tuple(SEVERITY_TABLE[_domain_key(domain)])


def image_block_index(domain: str, family: str) -> int:
    """The block index a family declares in its domain's catalogue (:data:`IMAGE_BLOCKS`).

    Raises
    ------
    DataError
        On an unknown domain, or a family the domain does not define.
    """
    blocks = IMAGE_BLOCKS[_domain_key(domain)]
    if family not in blocks:
        raise DataError(f"corruption family {family!r} is not in the {domain} catalogue")
    return blocks[family]


def images_per_condition(n_images: int | None, n_test: int) -> int:
    """How many test images each (family, severity) corrupts: ``n_images``, at most the split (None: all)."""
    return n_test if n_images is None else min(n_images, n_test)


def first_image(layout: str, block: int, severity: int, n_images: int | None, n_test: int) -> int:
    """Index of the first test image of a corruption condition's block (method section 9, amendment 11).

    The block wraps around the test split and holds
    :func:`images_per_condition` images. Under ``"per_condition"`` severity
    ``s`` of the family whose declared block index is ``k``
    (:func:`image_block_index`) corrupts block ``5 k + s - 1``; under
    ``"per_family"`` the family's severities share block ``k``; block ``b``
    starts at image ``b * n`` modulo ``n_test``, with ``n`` the images per
    condition. Under ``"shared"`` every condition corrupts the first ``n``
    images. A condition so corrupts the same images whichever other families
    or severities a profile measures.

    Parameters
    ----------
    layout : {"per_condition", "per_family", "shared"}
        The profile's ``corruptions.layout``.
    block : int
        The family's declared block index.
    severity : int
        1..5.
    n_images : int or None
        The profile's ``corruptions.n_images`` (None: the whole test split).
    n_test : int
        Size of the test split.

    Returns
    -------
    int

    Raises
    ------
    DataError
        On an unknown layout.

    Examples
    --------
    >>> [first_image("per_condition", 0, s, 125, 2000) for s in (1, 2, 5)]
    [0, 125, 500]
    >>> first_image("per_condition", 1, 1, 125, 2000)
    625
    >>> first_image("per_family", 9, 4, 250, 2000)
    250
    """
    if layout not in CORRUPTION_LAYOUTS:
        raise DataError(f"unknown corruption layout {layout!r} (expected one of {', '.join(CORRUPTION_LAYOUTS)})")
    if layout == "shared":
        return 0
    index = int(block)
    if layout == "per_condition":
        index = len(SEVERITIES) * index + int(severity) - 1
    return (index * images_per_condition(n_images, n_test)) % int(n_test)


def all_families() -> tuple[str, ...]:
    """Every corruption family of every domain, without repetition."""
    seen: dict[str, None] = {}
    for fams in SEVERITY_TABLE.values():
        seen.update(dict.fromkeys(fams))
    return tuple(seen)


def severity_parameters(domain: str, family: str, severity: int) -> dict[str, float]:
    """The physical parameters of one family at one severity on one domain (a row of the table)."""
    row = SEVERITY_TABLE[_domain_key(domain)].get(family)
    if row is None:
        raise DataError(f"corruption {family!r} is not a family of domain {domain!r}")
    return {k: float(v[severity - 1]) for k, v in row.items()}


# --- implementations: float images in [0, 1], (N, H, W) or (N, H, W, 3); p = one severity's row ----


def _like(field: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Give a per-pixel ``(N, H, W)`` field a channel axis when ``x`` is RGB."""
    return field[..., None] if x.ndim == 4 else field


def _per_image(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per-image values ``(N,)`` shaped to broadcast against ``x``."""
    v = r.col(values)
    return v[..., None] if x.ndim == 4 else v


def _scale_px(value: float, side: int) -> float:
    return value * side / 32.0


def _gaussian_noise(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    sd = p["read"] + p["shot"] * np.sqrt(np.clip(x, 0.0, None))
    return x + sd * rng.standard_normal(x.shape, dtype=np.float32)


def _gaussian_blur(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    return r.blur(x, _scale_px(p["sigma_px"], x.shape[1]))


def _shift(x: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Translate each image by ``(dx, dy)`` pixels (bilinear, edges repeated)."""
    n, side = x.shape[0], x.shape[1]
    grid = np.arange(side, dtype=np.float32)
    fx = np.clip(grid[None, None, :] - r.col(dx), 0, side - 1)
    fy = np.clip(grid[None, :, None] - r.col(dy), 0, side - 1)
    x0, y0 = np.floor(fx).astype(np.int64), np.floor(fy).astype(np.int64)
    x1, y1 = np.minimum(x0 + 1, side - 1), np.minimum(y0 + 1, side - 1)
    wx, wy = fx - x0, fy - y0
    img = np.arange(n)[:, None, None]
    shape = (n, side, side)
    x0, x1, y0, y1 = (np.broadcast_to(a, shape) for a in (x0, x1, y0, y1))
    wx, wy = (_like(np.broadcast_to(a, shape), x) for a in (wx, wy))
    top = x[img, y0, x0] * (1 - wx) + x[img, y0, x1] * wx
    bottom = x[img, y1, x0] * (1 - wx) + x[img, y1, x1] * wx
    return top * (1 - wy) + bottom * wy


def _motion_blur(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    n = x.shape[0]
    length = _scale_px(p["length_px"], x.shape[1])
    phi = rng.uniform(0, np.pi, n)
    taps = max(3, int(np.ceil(length * 2)) | 1)
    out = np.zeros_like(x)
    for t in np.linspace(-length / 2, length / 2, taps):
        out += _shift(x, t * np.cos(phi), t * np.sin(phi))
    return out / taps


def _jpeg(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    u8 = r.to_uint8(x)
    out = np.empty_like(u8)
    for i, im in enumerate(u8):
        buf = io.BytesIO()
        Image.fromarray(im).save(buf, format="JPEG", quality=int(p["quality"]))
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


def _linear_matrix(small: int, side: int) -> np.ndarray:
    """Linear-interpolation matrix from ``small`` to ``side`` samples (pixel centres aligned)."""
    pos = np.clip((np.arange(side) + 0.5) * small / side - 0.5, 0, small - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, small - 1)
    m = np.zeros((side, small), dtype=np.float32)
    np.add.at(m, (np.arange(side), lo), 1.0 - (pos - lo))
    np.add.at(m, (np.arange(side), hi), pos - lo)
    return m


def _pixelate(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """A lower-resolution sensor: area-average to ``fraction`` of the side, interpolate back.

    Linear (not nearest) interpolation back to the side, as a viewer displays
    a small image, keeps the loss monotone in the fraction (nearest-neighbour
    blocks of non-integer size alias unevenly).
    """
    side = x.shape[1]
    small = max(2, int(round(side * p["fraction"])))
    a = _box_matrix(side, small)
    u = _linear_matrix(small, side)
    return np.einsum("ih,nhw...,jw->nij...", u @ a, x, u @ a, optimize=True)


#: Display gamma used to take camera images to linear light and back.
_DISPLAY_GAMMA = 2.2


def _exposure(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    """Exposure change in stops in linear light (bright regions clip), plus a window-level shift."""
    out = x
    if p["stops"]:
        lin = np.clip(x, 0.0, 1.0) ** _DISPLAY_GAMMA * 2.0 ** p["stops"]
        out = np.clip(lin, 0.0, 1.0) ** (1.0 / _DISPLAY_GAMMA)
    return out + p["level"]


def _contrast(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    axes = tuple(range(1, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    return mean + (x - mean) * p["factor"]


def _gamma(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    direction = np.where(rng.uniform(size=x.shape[0]) < 0.5, -1.0, 1.0)
    return np.clip(x, 0.0, 1.0) ** _per_image(np.exp(direction * p["log_gamma"]), x)


def _local_contrast(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    return x + p["amount"] * (x - r.blur(x, _scale_px(p["radius_px"], x.shape[1])))


def _radius_map(x: np.ndarray, rng: np.random.Generator, jitter: float) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    cx = r.col(rng.normal(0, jitter, n))
    cy = r.col(rng.normal(0, jitter, n))
    return np.sqrt((gx - cx) ** 2 + (gy - cy) ** 2)


def _black_corner(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    keep = r.ramp(_radius_map(x, rng, 0.06) - p["radius"], r.px(1.0, x.shape[1]))
    return x * _like(keep, x)


def _ruler_marks(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    out = x
    width = r.px(_scale_px(p["width_px"], side), side) / 2
    for _ in range(int(p["count"])):
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


def _uneven_illumination(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    phi = rng.uniform(0, 2 * np.pi, n)
    proj = gx * r.col(np.cos(phi)) + gy * r.col(np.sin(phi))
    gain = 1.0 - p["drop"] * np.clip((proj + 1.0) / 2.0, 0, 1) ** 1.5
    return x * _like(gain, x)


def _haze(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    h = p["strength"]
    veil = 0.75 + 0.1 * r.smooth_noise(rng, n, side, _scale_px(4.0, side))
    veil = veil[..., None] * np.array([1.0, 0.95, 0.85], dtype=np.float32) if x.ndim == 4 else veil
    blurred = r.blur(x, _scale_px(p["blur_px"], side))
    return blurred * (1.0 - h) + veil * h


def _grid_lines(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    vertical = r.col(rng.uniform(size=n) < 0.5)
    period = r.col(r.px(2.5, side) * rng.uniform(0.9, 1.4, n))
    phase = r.col(rng.uniform(0, 2 * np.pi, n))
    coord = np.where(vertical, gx, gy)
    pattern = np.cos(2 * np.pi * coord / period + phase)
    return x + p["amplitude"] * _like(pattern, x)


def _burned_markers(x: np.ndarray, p: dict[str, float], rng: np.random.Generator) -> np.ndarray:
    n, side = x.shape[0], x.shape[1]
    gx, gy = r.grid(side)
    k = int(p["count"])
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


_IMPLEMENTATIONS: dict[str, Callable[[np.ndarray, dict[str, float], np.random.Generator], np.ndarray]] = {
    "gaussian_noise": _gaussian_noise,
    "gaussian_blur": _gaussian_blur,
    "motion_blur": _motion_blur,
    "jpeg": _jpeg,
    "pixelate": _pixelate,
    "brightness_up": _exposure,
    "brightness_down": _exposure,
    "contrast": _contrast,
    "gamma": _gamma,
    "local_contrast": _local_contrast,
    "black_corner": _black_corner,
    "ruler_marks": _ruler_marks,
    "uneven_illumination": _uneven_illumination,
    "haze": _haze,
    "grid_lines": _grid_lines,
    "burned_markers": _burned_markers,
    **MODALITY_IMPLEMENTATIONS,
}
if set(_IMPLEMENTATIONS) != set(all_families()):  # one table, one implementation per family
    raise AssertionError(f"corruption table and implementations differ: {set(_IMPLEMENTATIONS) ^ set(all_families())}")


def _resolve_domain(images: np.ndarray, family: str, domain: str | None) -> str:
    """The table a family is read from: the given domain, else radiographs for grey images.

    The camera domains share their acquisition rows, and every original
    artefact belongs to one domain, so the image's channels (grey: radiology)
    settle the table; any other family takes the first domain that defines it.
    """
    if domain is not None:
        key = _domain_key(domain)
        if family not in SEVERITY_TABLE[key]:
            raise DataError(f"corruption {family!r} is not a family of domain {key!r}")
        return key
    if images.ndim == 3 and family in SEVERITY_TABLE["radiology"]:
        return "radiology"
    if images.ndim == 4 and family in _CAMERA:
        return "dermatology"
    return _DEFAULT_DOMAIN[family]


def corrupt(images: np.ndarray, family: str, severity: int, seed: int = 0, domain: str | None = None) -> np.ndarray:
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
    domain : str, optional
        Whose physical scale to use (a row of :data:`SEVERITY_TABLE`); by
        default radiology's for grey images and the cameras' for RGB ones
        (a family neither has: the first domain that defines it).

    Returns
    -------
    numpy.ndarray
        ``uint8``, same shape as ``images``.

    Raises
    ------
    DataError
        On an unknown family or domain, a family foreign to ``domain``, a
        severity outside 1..5, a negative seed or images that are not a
        ``uint8`` batch.

    Examples
    --------
    >>> import numpy as np
    >>> grey = np.full((2, 32, 32), 128, dtype=np.uint8)
    >>> corrupt(grey, "gamma", 3).shape
    (2, 32, 32)
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
    params = severity_parameters(_resolve_domain(images, family, domain), family, int(severity))
    if len(images) == 0:
        return images.copy()
    # The stream does not depend on the severity: one seed gives the same noise
    # pattern and artefact layout at every severity, only stronger, so that
    # severities of one cell are comparable (and the sheet reads as a progression).
    key = (zlib.crc32(family.encode()), int(seed))
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(CORRUPTION_ENTROPY, spawn_key=key)))
    out = _IMPLEMENTATIONS[family](images.astype(np.float32) / 255.0, params, rng)
    return r.to_uint8(out)
