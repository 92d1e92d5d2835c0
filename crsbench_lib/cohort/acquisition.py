"""Acquisition sites: the imaging chain that turns a phantom scene into pixels.

A *site* is a vector of scanner parameters (:class:`Scanner`): the centre and
spread of exposure, tone curve (gamma), sensor noise, optical blur, vignetting
and white balance. Every image draws its own nuisance values around its site's
centre, so acquisition varies image to image within every split (as it does
between patients, operators and sessions at one real site), and sites differ by
where their distributions sit.

The chain follows a camera or detector in order (Szeliski, *Computer Vision*,
2nd ed., 2022, section 2.3): scene radiance -> vignetting (lens fall-off) ->
exposure (gain, in stops) -> white balance (per-channel gains) -> optical blur
(point-spread function) -> sensor noise (signal-dependent: a shot-noise term
growing with the square root of the signal plus a read-noise floor) -> tone
curve (``out = in ** (1 / gamma)``) -> 8-bit quantisation. Three steps of the
chain are off at the default values and differ between vendors and detector
generations (world v4, the second sites): the detector's sampling
(``resolution``: a computed-radiography plate reads 200 um pixels where a flat
panel reads 139-143 um, a phone dermoscope or a hand-held fundus camera
resolves less than a desktop one), the noise texture (``noise_grain``: the
phosphor plate's and a phone sensor's noise is spatially correlated, a flat
panel's close to white) and the vendor's processing (``sharpen``: the unsharp
masking and edge enhancement that radiography consoles and phone cameras apply
after the tone curve).

Each generator module keeps a table ``SCANNERS`` of its sites; the nuisance
values each image received are returned as auxiliary attributes
(:data:`NUISANCE_ATTRIBUTES`), for supervised multi-task pretraining.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from crsbench_lib.cohort import _render as r


class Attribute(NamedTuple):
    """What one auxiliary attribute of a phantom image is.

    Attributes
    ----------
    kind : {"continuous", "binary", "count", "categorical"}
        ``continuous`` values are ``float32``; the others ``int64``
        (``binary`` in {0, 1}, ``categorical`` in ``0..n_classes-1``).
    n_classes : int
        Number of categories (``categorical``), else 0.
    description : str
        What the generator parameter is, in one line.
    """

    kind: str
    n_classes: int
    description: str


@dataclass(frozen=True)
class Scanner:
    """One acquisition site: where its per-image nuisance distributions sit.

    Lengths are in pixels of a 32-px image (scaled with the image side).

    Attributes
    ----------
    exposure, exposure_sd : float
        Mean and sd of the exposure offset, in stops (gain ``2 ** e``).
    gamma, gamma_sd : float
        Median display gamma and the sd of its logarithm.
    noise : float
        Median shot-noise sd at full signal (log-normal spread ``noise_sd``).
    noise_sd : float
        Sd of the logarithm of the noise level.
    read_noise : float
        Signal-independent noise floor (sd).
    blur_px : float
        Median optical blur sigma; each image draws ``blur_px * U(0.6, 1.5)``.
    vignette : float
        Mean fall-off at the image corner (0 = none); per image ``U(0, 2) * vignette``.
    white_balance : tuple of float
        Per-channel gains (RGB); ignored for grey images.
    white_balance_sd : float
        Sd of the log of each image's per-channel gain.
    resolution : float
        Detector sampling relative to the image grid (1 = the grid's own; 0.7
        = pixels 1/0.7 times as wide): the image is averaged onto the coarser
        grid and interpolated back before the noise is added.
    noise_grain : float
        Correlation length of the sensor noise, pixels at 32 px (0 = white):
        the same noise draws, low-passed and rescaled to the same sd.
    sharpen : float
        Gain of the vendor's unsharp mask after the tone curve
        (``out + sharpen * (out - blur(out, 1 px))``; 0 = none).
    """

    exposure: float = 0.0
    exposure_sd: float = 0.25
    gamma: float = 1.0
    gamma_sd: float = 0.12
    noise: float = 0.03
    noise_sd: float = 0.4
    read_noise: float = 0.006
    blur_px: float = 0.45
    vignette: float = 0.15
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0)
    white_balance_sd: float = 0.04
    resolution: float = 1.0
    noise_grain: float = 0.0
    sharpen: float = 0.0


#: The nuisance values each image records (one home for their names and meaning).
NUISANCE_ATTRIBUTES: dict[str, Attribute] = {
    "exposure": Attribute("continuous", 0, "exposure offset of the image, in stops"),
    "gamma": Attribute("continuous", 0, "log of the tone curve's gamma"),
    "noise": Attribute("continuous", 0, "log of the shot-noise sd at full signal"),
    "blur": Attribute("continuous", 0, "optical blur sigma, pixels at 32 px"),
    "vignette": Attribute("continuous", 0, "fall-off of brightness at the image corner"),
    "warmth": Attribute("continuous", 0, "log ratio of red to blue white-balance gain (colour images only)"),
}
#: Nuisances that only colour images have.
COLOUR_ONLY: tuple[str, ...] = ("warmth",)


def nuisance_attributes(rgb: bool) -> dict[str, Attribute]:
    """The nuisance attributes :func:`acquire` records for colour (``rgb``) or grey images."""
    return {k: v for k, v in NUISANCE_ATTRIBUTES.items() if rgb or k not in COLOUR_ONLY}


def acquire(
    rng: np.random.Generator, scene: np.ndarray, scanner: Scanner
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Image a batch of scenes through one site's chain (see the module docstring).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the nuisance draws and the noise.
    scene : numpy.ndarray
        ``float32`` radiance in about ``[0, 1]``, ``(N, H, W)`` or ``(N, H, W, 3)``.
    scanner : Scanner
        The site.

    Returns
    -------
    images : numpy.ndarray
        ``uint8``, same shape as ``scene``.
    nuisances : dict of str to numpy.ndarray
        ``float32`` ``(N,)`` per key of :func:`nuisance_attributes`.
    """
    n, side = scene.shape[0], scene.shape[1]
    rgb = scene.ndim == 4
    exposure = rng.normal(scanner.exposure, scanner.exposure_sd, n)
    log_gamma = np.log(scanner.gamma) + rng.normal(0.0, scanner.gamma_sd, n)
    log_noise = np.log(scanner.noise) + rng.normal(0.0, scanner.noise_sd, n)
    blur = scanner.blur_px * rng.uniform(0.6, 1.5, n)
    vignette = scanner.vignette * rng.uniform(0.0, 2.0, n)
    wb = np.asarray(scanner.white_balance, dtype=np.float64)[None, :] * np.exp(
        rng.normal(0.0, scanner.white_balance_sd, (n, 3))
    )

    x, y = r.grid(side)
    fall = 1.0 - r.col(np.minimum(vignette, 0.9)) * (0.5 * (x * x + y * y)) ** 1.5
    gain = r.col(2.0 ** exposure) * fall
    img = scene * (gain[..., None] if rgb else gain)
    if rgb:
        img = img * wb[:, None, None, :].astype(np.float32)
    img = r.blur(img, blur * side / 32.0)
    if scanner.resolution != 1.0:
        img = resample_detector(img, scanner.resolution)
    signal = np.clip(img, 0.0, None)
    sd = np.sqrt(signal) * (r.col(np.exp(log_noise))[..., None] if rgb else r.col(np.exp(log_noise))) + scanner.read_noise
    noise = rng.standard_normal(img.shape, dtype=np.float32)
    if scanner.noise_grain > 0:
        noise = grain(noise, scanner.noise_grain * side / 32.0)
    img = img + sd * noise
    inv_gamma = 1.0 / np.exp(log_gamma)
    img = np.clip(img, 0.0, 1.0) ** (r.col(inv_gamma)[..., None] if rgb else r.col(inv_gamma))
    if scanner.sharpen > 0:
        img = img + scanner.sharpen * (img - r.blur(img, side / 32.0))
    nuisances = {
        "exposure": exposure,
        "gamma": log_gamma,
        "noise": log_noise,
        "blur": blur,
        "vignette": vignette,
        "warmth": np.log(wb[:, 0] / wb[:, 2]),
    }
    return r.to_uint8(img), {k: nuisances[k].astype(np.float32) for k in nuisance_attributes(rgb)}


def resample_detector(images: np.ndarray, resolution: float) -> np.ndarray:
    """Average ``(N, H, W[, 3])`` images onto a grid ``resolution`` times as fine, then interpolate back.

    Area averaging (a detector integrates over its pixels) down, bilinear
    interpolation up: detail finer than the coarse pixel is lost, the image
    keeps its size.

    Examples
    --------
    >>> flat = np.full((1, 8, 8), 0.5, dtype=np.float32)
    >>> bool(np.allclose(resample_detector(flat, 0.5), 0.5))
    True
    """
    from scipy import ndimage

    n, h, w = images.shape[:3]
    coarse = max(2, int(round(h * resolution)))
    # Area averaging: the coarse pixel's value is the mean of the fine pixels it covers.
    edges = np.linspace(0, h, coarse + 1)
    lo, hi = np.floor(edges[:-1]).astype(int), np.ceil(edges[1:]).astype(int)
    weights = np.zeros((coarse, h), dtype=np.float32)
    for k in range(coarse):
        for i in range(lo[k], hi[k]):
            weights[k, i] = max(0.0, min(edges[k + 1], i + 1) - max(edges[k], i))
    weights /= weights.sum(axis=1, keepdims=True)
    if images.ndim == 4:
        small = np.einsum("ki,nijc,lj->nklc", weights, images, weights, optimize=True)
        zoom = (1.0, h / coarse, w / coarse, 1.0)
    else:
        small = np.einsum("ki,nij,lj->nkl", weights, images, weights, optimize=True)
        zoom = (1.0, h / coarse, w / coarse)
    out = ndimage.zoom(small.astype(np.float32), zoom, order=1, mode="nearest", grid_mode=True)
    return out[:, :h, :w].astype(np.float32)


def grain(noise: np.ndarray, sigma_px: float) -> np.ndarray:
    """Spatially correlated noise from white ``noise``: low-passed, rescaled to unit sd.

    The same draws with another noise power spectrum, so a site's noise
    *texture* can change while its level stays what the scanner says.

    Examples
    --------
    >>> white = np.random.default_rng(0).standard_normal((4, 32, 32)).astype(np.float32)
    >>> round(float(grain(white, 1.0).std()), 2)
    1.0
    """
    spatial = (0.0, sigma_px, sigma_px) + ((0.0,) if noise.ndim == 4 else ())
    from scipy import ndimage

    out = ndimage.gaussian_filter(noise, sigma=spatial, mode="wrap")
    return (out / (out.std() + 1e-12)).astype(np.float32)


class Phantoms(NamedTuple):
    """What a generator returns for one batch.

    Attributes
    ----------
    images : numpy.ndarray
        ``uint8`` ``(N, H, W)`` or ``(N, H, W, 3)``.
    labels : numpy.ndarray
        The evaluation labels (``int64`` ``(N,)`` or ``uint8`` ``(N, L)``), after label noise.
    attributes : dict of str to numpy.ndarray
        Auxiliary attributes ``(N,)`` (the generator's ``ATTRIBUTES`` keys):
        scene parameters and acquisition nuisances, never the evaluation label.
    """

    images: np.ndarray
    labels: np.ndarray
    attributes: dict[str, np.ndarray]


def typed(attributes: dict[str, np.ndarray], spec: dict[str, Attribute]) -> dict[str, np.ndarray]:
    """Cast attribute arrays to their kinds' dtypes, in ``spec`` order (keys must match)."""
    if set(attributes) != set(spec):
        missing, extra = sorted(set(spec) - set(attributes)), sorted(set(attributes) - set(spec))
        raise AssertionError(f"attributes differ from their specification: missing {missing}, extra {extra}")
    return {
        k: np.asarray(attributes[k], dtype=np.float32 if a.kind == "continuous" else np.int64) for k, a in spec.items()
    }
