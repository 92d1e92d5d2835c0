"""Vectorised drawing primitives shared by the phantom generators.

Every primitive works on a whole batch at once: per-image parameters are arrays
of shape ``(N,)`` or ``(N, K)`` and are broadcast against one coordinate grid of
shape ``(H, W)``. Coordinates are normalised to ``[-1, 1]`` on both axes (``x``
to the right, ``y`` downwards), so that shapes keep their proportions at any
image side; lengths "in pixels" are converted with :func:`px`.

Edges are anti-aliased by a linear ramp one pixel wide over the signed
distance, which is what a real optical system does to a sharp edge at this
resolution, and what keeps small images from looking like pixel art.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage


def grid(side: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates in ``[-1, 1]``.

    Parameters
    ----------
    side : int
        Image side in pixels.

    Returns
    -------
    x, y : numpy.ndarray
        ``float32`` arrays of shape ``(1, side, side)``, ready to broadcast
        against a batch axis.
    """
    c = (np.arange(side, dtype=np.float32) + 0.5) / side * 2.0 - 1.0
    y, x = np.meshgrid(c, c, indexing="ij")
    return x[None], y[None]


def px(n_pixels: float, side: int) -> float:
    """Length of ``n_pixels`` pixels in normalised units (the grid spans 2).

    Generators write anatomical sizes as ``px(k, 32)`` ("k pixels at the
    reference side of 32"), so that they scale with the image, and
    anti-aliasing ramps as ``px(1.0, side)`` (one pixel at any side).
    """
    return 2.0 * n_pixels / side


def col(values: np.ndarray) -> np.ndarray:
    """Reshape per-image values ``(N,)`` to ``(N, 1, 1)`` for broadcasting."""
    return np.asarray(values, dtype=np.float32)[:, None, None]


def ramp(signed_distance: np.ndarray, width: np.ndarray | float) -> np.ndarray:
    """Soft inside-mask: 1 well inside (negative distance), 0 well outside.

    A linear ramp of ``width`` (normalised units) centred on the boundary.
    """
    return np.clip(0.5 - signed_distance / width, 0.0, 1.0).astype(np.float32)


def smooth_noise(rng: np.random.Generator, n: int, side: int, sigma_px: float) -> np.ndarray:
    """Gaussian random field, zero mean and unit standard deviation per image.

    White noise low-passed by a Gaussian of ``sigma_px`` pixels (periodic
    boundary), then standardised. Shape ``(n, side, side)``, ``float32``.
    """
    field = rng.standard_normal((n, side, side), dtype=np.float32)
    field = ndimage.gaussian_filter(field, sigma=(0.0, sigma_px, sigma_px), mode="wrap")
    field -= field.mean(axis=(1, 2), keepdims=True)
    field /= field.std(axis=(1, 2), keepdims=True) + 1e-6
    return field


def blur(images: np.ndarray, sigma_px: float | np.ndarray) -> np.ndarray:
    """Gaussian blur over the two spatial axes of ``(N, H, W)`` or ``(N, H, W, C)``.

    ``sigma_px`` may be a scalar or a per-image array; per-image sigmas are
    quantised to 0.1 px and each distinct value is filtered once as a group,
    which keeps the work batched.
    """
    sig = np.asarray(sigma_px, dtype=np.float64)
    spatial = (0.0, 1.0, 1.0) + ((0.0,) if images.ndim == 4 else ())
    if sig.ndim == 0:
        if float(sig) <= 0:
            return images
        return ndimage.gaussian_filter(images, sigma=tuple(float(sig) * s for s in spatial), mode="nearest")
    out = images.copy()
    q = np.round(sig, 1)
    for value in np.unique(q):
        if value <= 0:
            continue
        idx = np.flatnonzero(q == value)
        out[idx] = ndimage.gaussian_filter(images[idx], sigma=tuple(float(value) * s for s in spatial), mode="nearest")
    return out


def splat(n: int, side: int, image_index: np.ndarray, x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Deposit point masses on a batch of canvases with bilinear weights.

    Parameters
    ----------
    n, side : int
        Batch size and image side.
    image_index : numpy.ndarray
        ``(M,)`` index of the image each point belongs to.
    x, y : numpy.ndarray
        ``(M,)`` normalised coordinates of the points.
    weight : numpy.ndarray
        ``(M,)`` mass of each point.

    Returns
    -------
    numpy.ndarray
        ``(n, side, side)`` ``float32`` canvas; blur it afterwards to turn the
        points into blobs (one filter for all points of one size).
    """
    canvas = np.zeros(n * side * side, dtype=np.float32)
    if len(image_index) == 0:
        return canvas.reshape(n, side, side)
    fx = (np.asarray(x) + 1.0) / 2.0 * side - 0.5
    fy = (np.asarray(y) + 1.0) / 2.0 * side - 0.5
    x0 = np.floor(fx).astype(np.int64)
    y0 = np.floor(fy).astype(np.int64)
    dx = (fx - x0).astype(np.float32)
    dy = (fy - y0).astype(np.float32)
    w = np.asarray(weight, dtype=np.float32)
    for ox, oy, wx, wy in ((0, 0, 1 - dx, 1 - dy), (1, 0, dx, 1 - dy), (0, 1, 1 - dx, dy), (1, 1, dx, dy)):
        xi = x0 + ox
        yi = y0 + oy
        ok = (xi >= 0) & (xi < side) & (yi >= 0) & (yi < side)
        flat = (image_index[ok] * side + yi[ok]) * side + xi[ok]
        np.add.at(canvas, flat, (w * wx * wy)[ok])
    return canvas.reshape(n, side, side)


def arc_distance(
    x: np.ndarray, y: np.ndarray, cx: np.ndarray, cy: np.ndarray, radius: np.ndarray
) -> np.ndarray:
    """Unsigned distance to circles, broadcast over ``(N, K, H, W)``.

    ``cx``, ``cy`` and ``radius`` are ``(N, K)``; ``x``/``y`` the ``(1, H, W)``
    grid. Large radii give gently curved lines (hairs, vessels, ribs).
    """
    f32 = np.float32
    dxs = x[:, None] - cx.astype(f32)[:, :, None, None]
    dys = y[:, None] - cy.astype(f32)[:, :, None, None]
    dxs *= dxs
    dys *= dys
    dxs += dys
    np.sqrt(dxs, out=dxs)
    dxs -= radius.astype(f32)[:, :, None, None]
    return np.abs(dxs, out=dxs)


def segment_distance(
    x: np.ndarray, y: np.ndarray, x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray
) -> np.ndarray:
    """Distance to line segments, broadcast over ``(N, K, H, W)``; endpoints ``(N, K)``.

    Computed in ``float32`` with in-place steps: this is the generators' hot spot.
    """
    f32 = np.float32
    ax, ay = x0.astype(f32)[:, :, None, None], y0.astype(f32)[:, :, None, None]
    vx, vy = x1.astype(f32)[:, :, None, None] - ax, y1.astype(f32)[:, :, None, None] - ay
    wx, wy = x[:, None] - ax, y[:, None] - ay
    t = wx * vx
    t += wy * vy
    t *= 1.0 / (vx * vx + vy * vy + f32(1e-9))
    np.clip(t, 0.0, 1.0, out=t)
    wx -= t * vx
    wy -= t * vy
    wx *= wx
    wy *= wy
    wx += wy
    return np.sqrt(wx, out=wx)


def composite(base: np.ndarray, colour: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Alpha-blend ``colour`` over ``base``; ``alpha`` is ``(N, H, W)``.

    ``base``/``colour`` are ``(N, H, W)`` (grey) or ``(N, H, W, 3)``; ``colour``
    may also be ``(N, 3)`` (one colour per image).
    """
    a = alpha[..., None] if base.ndim == 4 else alpha
    if base.ndim == 4 and colour.ndim == 2:
        colour = colour[:, None, None, :]
    return base * (1.0 - a) + colour * a


def to_uint8(images: np.ndarray) -> np.ndarray:
    """Clip float images in ``[0, 1]`` and round to ``uint8``."""
    return np.clip(np.rint(images * 255.0), 0, 255).astype(np.uint8)


def gamma_poisson(rng: np.random.Generator, mean: np.ndarray, shape: float) -> np.ndarray:
    """Over-dispersed counts: Poisson with a Gamma(``shape``) distributed rate.

    Overdispersion is what makes lesion counts overlap between neighbouring
    grades, as they do in real screening images.
    """
    mean = np.asarray(mean, dtype=np.float64)
    rate = rng.gamma(shape, np.maximum(mean, 1e-9) / shape)
    return rng.poisson(rate)



def blobs(n: int, side: int, owner: np.ndarray, x: np.ndarray, y: np.ndarray, sigma_px: float, strength: np.ndarray | float = 1.0) -> np.ndarray:
    """Alpha ``(n, side, side)`` of round Gaussian blobs, one blur for all of them.

    ``sigma_px`` is the blob's sigma in pixels of a 32-px image; each blob's
    peak alpha is about ``strength`` (overlapping blobs saturate at 1).
    """
    weight = np.broadcast_to(np.asarray(strength, dtype=np.float32), np.shape(owner))
    sigma = sigma_px * side / 32.0
    canvas = splat(n, side, owner, x, y, weight)
    return np.clip(blur(canvas, sigma) * (2.0 * np.pi * sigma * sigma), 0.0, 1.0)


def strokes(
    x: np.ndarray,
    y: np.ndarray,
    ends: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    on: np.ndarray,
    width: np.ndarray | float,
    side: int,
) -> np.ndarray:
    """Alpha ``(N, H, W)`` of line segments: the union of the ``on`` segments of each image.

    ``ends`` are the ``(N, K)`` endpoint coordinates ``(x0, y0, x1, y1)``; ``on``
    is an ``(N, K)`` boolean of which segments exist; ``width`` the half-width
    (normalised units, scalar or ``(N, K)``).
    """
    d = segment_distance(x, y, *ends)
    w = np.asarray(width, dtype=np.float32)
    if w.ndim == 2:
        w = w[:, :, None, None]
    return (ramp(d - w, px(1.0, side)) * on[:, :, None, None]).max(axis=1)


def rotate(x: np.ndarray, y: np.ndarray, cx: np.ndarray, cy: np.ndarray, angle: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates of the grid in a frame centred at ``(cx, cy)`` and turned by ``angle`` (per image)."""
    c, s = col(np.cos(angle)), col(np.sin(angle))
    dx, dy = x - col(cx), y - col(cy)
    return dx * c + dy * s, -dx * s + dy * c
