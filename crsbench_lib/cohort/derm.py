"""Dermatology phantom: dermoscopy-like RGB images of four lesion types.

Each image is skin of a random tone and texture, a lesion, optional hairs and
an optional dermoscope vignette. The lesion class sets the *distributions* of

- size (melanoma largest, naevus smallest),
- asymmetry (axis ratio of the lesion) and border irregularity (amplitude of
  the 2nd-7th harmonics of the border in polar coordinates),
- border sharpness (seborrhoeic keratosis "stuck on", naevus soft),
- colour count and palette (naevus: 1-2 browns; melanoma: 2-5 of dark brown,
  black, blue-grey, red and white; seborrhoeic keratosis: tan/brown; BCC-like:
  pearly pink with blue-grey nests),
- texture (regular pigment network, atypical network with globules, crypt-like
  grid, arborising red vessels).

All class-dependent parameters are drawn from overlapping distributions, and
``LABEL_NOISE`` of the labels are replaced by another class, so that the class
signal is real but imperfect (the ABCD rule of dermoscopy: Asymmetry, Border,
Colour, Dermoscopic structures; Stolz et al., 1994).
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from crsbench_lib.cohort import _render as r

NAME = "derm"
DOMAIN = "dermatology"
TASK = "multiclass"
CLASS_NAMES: tuple[str, ...] = ("naevus", "melanoma", "seborrhoeic keratosis", "BCC-like")
SITES: tuple[str, ...] = ("A",)
#: Class prior (benign naevi dominate, as in dermoscopy archives, but less extremely).
CLASS_PRIOR = np.array([0.40, 0.20, 0.20, 0.20])
#: Fraction of labels replaced by a uniformly drawn other class.
LABEL_NOISE = 0.04

# Colours in linear [0, 1] RGB.
SKIN_LIGHT = np.array([0.93, 0.78, 0.68], dtype=np.float32)
SKIN_DARK = np.array([0.50, 0.34, 0.25], dtype=np.float32)
PALETTE = np.array(
    [
        [0.62, 0.42, 0.28],  # 0 light brown
        [0.40, 0.24, 0.15],  # 1 dark brown
        [0.16, 0.11, 0.10],  # 2 black
        [0.40, 0.48, 0.60],  # 3 blue-grey
        [0.76, 0.38, 0.38],  # 4 red
        [0.86, 0.82, 0.80],  # 5 white (regression)
        [0.74, 0.60, 0.44],  # 6 tan
        [0.88, 0.68, 0.68],  # 7 pearly pink
    ],
    dtype=np.float32,
)
# Per class: preference over PALETTE entries (relative weights).
PALETTE_WEIGHTS = np.array(
    [
        [6, 5, 0.3, 0.2, 0.3, 0.1, 3, 0.3],  # naevus
        [3, 5, 4, 3, 2, 1.5, 1, 0.5],  # melanoma
        [4, 3, 0.8, 0.3, 0.2, 0.3, 5, 0.5],  # seborrhoeic keratosis
        [1, 0.6, 0.3, 3, 3, 1.2, 1, 6],  # BCC-like
    ],
    dtype=np.float64,
)
# Per class: (radius mean, radius sd) in normalised units (the image spans 2).
RADIUS = np.array([[0.34, 0.09], [0.48, 0.11], [0.42, 0.10], [0.37, 0.10]])
#: Mean extra axis ratio (asymmetry) per class: axis ratio = 1 + Gamma(2, mean/2).
ELONGATION = np.array([0.12, 0.35, 0.22, 0.18])
#: Mean border-harmonic amplitude (irregularity) per class.
IRREGULARITY = np.array([0.05, 0.16, 0.09, 0.08])
#: Mean number of colours beyond the first (Poisson), per class.
EXTRA_COLOURS = np.array([0.4, 2.0, 1.0, 1.2])
#: Border ramp width in pixels, per class.
EDGE_PX = np.array([2.0, 1.2, 0.8, 1.2])
#: Amplitude of the pigment-network / crypt texture, per class.
NETWORK = np.array([0.12, 0.22, 0.32, 0.04])
#: Lesion opacity (mean), per class; BCC-like lesions are translucent.
OPACITY = np.array([0.85, 0.92, 0.88, 0.70])
#: Expected numbers of dark globules (melanoma periphery) and blue-grey nests (BCC).
GLOBULES = np.array([0.5, 3.0, 0.8, 0.3])
NESTS = np.array([0.1, 0.6, 0.1, 2.0])
#: Expected arborising vessels per class.
VESSELS = np.array([0.05, 0.3, 0.1, 1.6])
N_HARMONICS = 6
MAX_HAIRS = 5
HAIR_RATE = 0.9


def _choose_palette(rng: np.random.Generator, labels: np.ndarray, k: int) -> np.ndarray:
    """``k`` distinct palette indices per image, drawn by class weights (Gumbel top-k)."""
    logw = np.log(PALETTE_WEIGHTS[labels])
    gumbel = -np.log(-np.log(rng.uniform(1e-12, 1.0, size=logw.shape)))
    return np.argsort(-(logw + gumbel), axis=1)[:, :k]


def generate(rng: np.random.Generator, n: int, side: int, site: str = "A") -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` dermoscopy-like images.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of all randomness (the caller owns the stream).
    n : int
        Number of images.
    side : int
        Image side in pixels.
    site : str
        Only ``"A"`` (one acquisition site).

    Returns
    -------
    images : numpy.ndarray
        ``uint8`` ``(n, side, side, 3)``.
    labels : numpy.ndarray
        ``int64`` ``(n,)`` indices into :data:`CLASS_NAMES`.
    """
    del site
    x, y = r.grid(side)
    s32 = side / 32.0
    true = rng.choice(len(CLASS_NAMES), size=n, p=CLASS_PRIOR)

    # Skin: tone, low-frequency mottling and fine grain.
    tone = rng.beta(2.0, 2.0, size=n).astype(np.float32)
    skin = SKIN_LIGHT + (SKIN_DARK - SKIN_LIGHT) * tone[:, None] + rng.normal(0, 0.025, (n, 3)).astype(np.float32)
    mottling = r.smooth_noise(rng, n, side, 3.0 * s32)
    img = skin[:, None, None, :] * (1.0 + 0.045 * mottling[..., None])

    # Lesion geometry: centre, size, asymmetry (elongation) and border harmonics.
    cx = np.clip(rng.normal(0, 0.10, n), -0.25, 0.25)
    cy = np.clip(rng.normal(0, 0.10, n), -0.25, 0.25)
    radius = np.clip(rng.normal(RADIUS[true, 0], RADIUS[true, 1]), 0.14, 0.72)
    ratio = 1.0 + rng.gamma(2.0, ELONGATION[true] / 2.0)
    angle = rng.uniform(0, np.pi, n)
    ca, sa = r.col(np.cos(angle)), r.col(np.sin(angle))
    dx, dy = x - r.col(cx), y - r.col(cy)
    u = (dx * ca + dy * sa) / r.col(np.sqrt(ratio))
    v = (-dx * sa + dy * ca) * r.col(np.sqrt(ratio))
    rho = np.sqrt(u * u + v * v)
    theta = np.arctan2(v, u)
    amp = rng.gamma(3.0, IRREGULARITY[true] / 3.0)
    k = np.arange(2, 2 + N_HARMONICS, dtype=np.float32)
    coef = (amp[:, None] * rng.normal(0, 1, (n, N_HARMONICS)) / k**0.6).astype(np.float32)
    phase = rng.uniform(0, 2 * np.pi, (n, N_HARMONICS)).astype(np.float32)
    wobble = np.einsum("nk,nkhw->nhw", coef, np.cos(k[None, :, None, None] * theta[:, None] + phase[:, :, None, None]))
    border = r.col(radius) * (1.0 + np.clip(wobble, -0.6, 0.8))
    edge = r.px(1.0, 32) * r.col(EDGE_PX[true] * rng.uniform(0.7, 1.4, n))
    mask = r.ramp(rho - border, edge)
    rel = np.clip(rho / np.maximum(border, 1e-3), 0.0, 1.5)

    # Colours: a smooth field cut into n_colours regions, each painted from the class palette.
    n_col = np.clip(1 + rng.poisson(EXTRA_COLOURS[true]), 1, 5)
    chosen = _choose_palette(rng, true, 5)
    field = r.smooth_noise(rng, n, side, 2.0 * s32) + r.col(rng.normal(0, 0.8, n)) * (rel - 0.5) * 2.0
    level = np.minimum((ndtr(field / 1.3) * r.col(n_col)).astype(np.int64), r.col(n_col).astype(np.int64) - 1)
    pal_idx = np.take_along_axis(chosen, level.reshape(n, -1), axis=1).reshape(n, side, side)
    lesion = PALETTE[pal_idx] * r.col(rng.uniform(0.85, 1.12, n))[..., None]
    # Naevi and keratoses darken towards the centre; melanoma has no such order.
    centre_dark = r.col(np.where(true == 1, 0.0, 0.18) * rng.uniform(0.3, 1.2, n))
    lesion = lesion * (1.0 - centre_dark * (1.0 - np.clip(rel, 0, 1)))[..., None]

    # Texture: network (regular or atypical) / crypt-like grid.
    period = r.px(3.0, 32) * rng.uniform(0.8, 1.4, n)
    f = r.col(2 * np.pi / period)
    net = 0.5 + 0.5 * np.cos(f * (u * 0.9 + 0.3 * v)) * np.cos(f * (v * 0.9 - 0.3 * u))
    atypical = np.where(true == 1, 1.0, 0.25)
    net_amp = r.col(rng.gamma(3.0, NETWORK[true] / 3.0)) * (1.0 + r.col(atypical) * r.smooth_noise(rng, n, side, 2.0 * s32))
    lesion = lesion * (1.0 - np.clip(net_amp, 0, 0.6) * net)[..., None]
    alpha = mask * r.col(np.clip(rng.normal(OPACITY[true], 0.06), 0.4, 1.0))
    img = r.composite(img, lesion, alpha)

    # Dots inside the lesion: dark globules and blue-grey nests, then arborising vessels.
    for rate, colour, size_px, strength in ((GLOBULES, PALETTE[2], 0.6, 0.9), (NESTS, PALETTE[3], 0.9, 0.8)):
        counts = np.minimum(r.gamma_poisson(rng, rate[true], 1.5), 8)
        owner = np.repeat(np.arange(n), counts)
        t = rng.uniform(0, 2 * np.pi, owner.size)
        rr = np.sqrt(rng.uniform(0.2, 0.9, owner.size)) * radius[owner]
        canvas = r.splat(n, side, owner, cx[owner] + rr * np.cos(t), cy[owner] + rr * np.sin(t), np.ones(owner.size))
        a = np.clip(r.blur(canvas, size_px * s32) * (2 * np.pi * (size_px * s32) ** 2) * strength, 0, 1) * mask
        img = r.composite(img, np.broadcast_to(colour, (n, 3)), a)
    n_vessels = np.minimum(r.gamma_poisson(rng, VESSELS[true], 1.0), 3)
    if n_vessels.max() > 0:
        kv = int(n_vessels.max())
        t0 = rng.uniform(0, 2 * np.pi, (n, kv))
        t1 = t0 + rng.uniform(2.0, 4.0, (n, kv))
        rv = radius[:, None] * rng.uniform(0.5, 0.9, (n, kv))
        # Distances only for the images that have vessels (most have none).
        idx = np.flatnonzero(n_vessels > 0)
        d = r.segment_distance(
            x, y,
            (cx[:, None] + rv * np.cos(t0))[idx], (cy[:, None] + rv * np.sin(t0))[idx],
            (cx[:, None] + rv * np.cos(t1))[idx], (cy[:, None] + rv * np.sin(t1))[idx],
        )
        on = (np.arange(kv)[None, :] < n_vessels[idx, None])[:, :, None, None]
        a = np.zeros_like(mask)
        a[idx] = (r.ramp(d - r.px(0.3, 32), r.px(1.0, side)) * on).max(axis=1) * 0.8 * mask[idx]
        img = r.composite(img, np.broadcast_to(np.array([0.72, 0.18, 0.2], dtype=np.float32), (n, 3)), a)

    # Hairs: gently curved dark (or fair) arcs crossing the field.
    n_hairs = np.minimum(rng.poisson(HAIR_RATE, n), MAX_HAIRS)
    if n_hairs.max() > 0:
        kh = int(n_hairs.max())
        px0 = rng.uniform(-1, 1, (n, kh))
        py0 = rng.uniform(-1, 1, (n, kh))
        phi = rng.uniform(0, 2 * np.pi, (n, kh))
        rad = rng.uniform(1.5, 6.0, (n, kh))
        idx = np.flatnonzero(n_hairs > 0)
        d = r.arc_distance(x, y, (px0 + rad * np.cos(phi))[idx], (py0 + rad * np.sin(phi))[idx], rad[idx])
        width = r.px(0.35, 32) * rng.uniform(0.6, 1.5, (n, kh))[idx, :, None, None]
        on = (np.arange(kh)[None, :] < n_hairs[idx, None])[:, :, None, None]
        a = np.zeros_like(mask)
        a[idx] = (r.ramp(d - width, r.px(1.0, side)) * on).max(axis=1) * 0.85
        hair = np.where(rng.uniform(size=n)[:, None] < 0.85, 0.10, 0.55) * np.array([1.0, 0.85, 0.75])
        img = r.composite(img, hair.astype(np.float32), a)

    # Dermoscope: vignette, exposure, optics and sensor noise.
    rr2 = np.sqrt(x * x + y * y)
    vig = r.col(np.where(rng.uniform(size=n) < 0.5, rng.uniform(0.15, 0.6, n), 0.0))
    img = img * (1.0 - vig * np.clip((rr2 - 0.8) / 0.6, 0, 1) ** 2)[..., None]
    img = img * r.col(rng.uniform(0.9, 1.08, n))[..., None]
    img = r.blur(img, 0.35 * s32)
    img = img + rng.normal(0, 0.012, img.shape).astype(np.float32)

    labels = true.copy()
    flip = rng.uniform(size=n) < LABEL_NOISE
    labels[flip] = (true[flip] + rng.integers(1, len(CLASS_NAMES), flip.sum())) % len(CLASS_NAMES)
    return r.to_uint8(img), labels.astype(np.int64)
