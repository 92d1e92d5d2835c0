"""Hand-crafted encoders of the default zoo, vectorised over the batch.

Each descriptor is written with whole-batch numpy/torch array operations (no
per-image loop, no per-image scikit-image call), which is what makes the zoo
run in minutes on two cores. Conversions from the input images follow
:mod:`crsbench_lib.encoders.imaging`: grey-only descriptors (HOG, LBP, Gabor,
GLCM) read RGB as BT.601 luma; colour descriptors (pixels, PCA, k-means, colour
histogram) read grey as three equal channels.

PCA and k-means are fitted on the phantom pretraining pools (disjoint from every
evaluation split) by :mod:`crsbench_lib.runner.pretrain`; their fitted state is
shipped under ``encoders/weights/`` with a sha256. The others have no state.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from pathlib import Path
from typing import Any

import numpy as np
import scipy.fft
import torch
import torch.nn.functional as F

from crsbench_lib.encoders.base import Encoder
from crsbench_lib.encoders.imaging import check_images, to_array, to_tensor
from crsbench_lib.encoders.weights import load_state, params_hash
from crsbench_lib.encoders.zoo import HANDCRAFTED_ZOO
from crsbench_lib.errors import EncoderError

# Bump when a descriptor's code changes what it computes: part of weights_hash.
HANDCRAFTED_CODE_VERSION = "2"
# Images per internal chunk: bounds the memory of the patch/filter intermediates.
CHUNK = 256
# Working side of the PCA basis (images of other sides are resized to it first).
PCA_SIDE = 32


class HandcraftedEncoder(Encoder):
    """A training-free (or pool-fitted) descriptor computed on whole batches.

    Subclasses set ``name``, ``embedding_dim``, ``channels`` and implement
    :meth:`features` on the preprocessed ``(n, channels, side, side)`` array.
    """

    family = "handcrafted"
    channels = 3

    def __init__(self, image_side: int = 32) -> None:
        if image_side < 8 or image_side % 4:
            raise EncoderError(f"{self.name}: image_side must be a multiple of 4 and >= 8, got {image_side}")
        self.image_side = int(image_side)
        self._state_hash = ""

    def params(self) -> dict[str, Any]:
        """Hyper-parameters that determine the embedding (for :attr:`weights_hash`)."""
        return {"image_side": self.image_side}

    @property
    def weights_hash(self) -> str:
        return params_hash(
            {"name": self.name, "code": HANDCRAFTED_CODE_VERSION, "params": self.params(), "state": self._state_hash}
        )

    def preprocess(self, images: np.ndarray) -> np.ndarray:
        """``uint8`` batch -> float32 ``(N, channels, side, side)`` in ``[0, 1]``."""
        return to_array(images, self.image_side, self.channels)

    @abstractmethod
    def features(self, x: np.ndarray) -> np.ndarray:
        """Descriptor of a preprocessed chunk ``(n, channels, side, side)`` -> ``(n, embedding_dim)``."""

    def embed(self, images: np.ndarray) -> np.ndarray:
        images = check_images(images)
        out = np.empty((len(images), self.embedding_dim), dtype=np.float32)
        for start in range(0, len(images), CHUNK):
            x = self.preprocess(images[start : start + CHUNK])
            out[start : start + len(x)] = self.features(x)
        return out


def _grid_sum(a: np.ndarray, cells: int) -> np.ndarray:
    """Sum ``(..., H, W)`` over a ``cells x cells`` grid of equal blocks -> ``(..., cells, cells)``."""
    h, w = a.shape[-2:]
    a = a.reshape(*a.shape[:-2], cells, h // cells, cells, w // cells)
    return a.sum(axis=(-3, -1))


def _batched_bincount(codes: np.ndarray, n_bins: int) -> np.ndarray:
    """Histogram of integer ``codes`` ``(N, K)`` per row -> ``(N, n_bins)`` counts (float32)."""
    n = codes.shape[0]
    offsets = (np.arange(n, dtype=np.int64) * n_bins)[:, None]
    counts = np.bincount((codes.astype(np.int64) + offsets).ravel(), minlength=n * n_bins)
    return counts.reshape(n, n_bins).astype(np.float32)


class PixelsEncoder(HandcraftedEncoder):
    """Raw pixels down-sampled to ``12 x 12`` RGB (432 values in ``[0, 1]``).

    The baseline every learned representation must beat; the anti-aliased
    down-sampling keeps only the coarse colour layout.
    """

    name = "pixels"
    grid = 12
    embedding_dim = 3 * grid * grid

    def preprocess(self, images: np.ndarray) -> np.ndarray:
        return to_array(images, self.grid, 3)

    def features(self, x: np.ndarray) -> np.ndarray:
        return x.reshape(len(x), -1)


class ColourHistogramEncoder(HandcraftedEncoder):
    """Colour histograms: 16 bins per RGB channel plus a joint ``4 x 4 x 4`` RGB histogram.

    Each histogram is normalised to sum 1 (112 values). Grey images give three
    equal channel histograms and a joint histogram on the grey diagonal.
    """

    name = "colour_hist"
    bins = 16
    joint_bins = 4
    embedding_dim = 3 * bins + joint_bins**3

    def features(self, x: np.ndarray) -> np.ndarray:
        n = len(x)
        n_pix = x.shape[2] * x.shape[3]
        q = np.minimum((x * self.bins).astype(np.int64), self.bins - 1).reshape(n, 3, -1)
        per_channel = [_batched_bincount(q[:, c], self.bins) for c in range(3)]
        qj = np.minimum((x * self.joint_bins).astype(np.int64), self.joint_bins - 1).reshape(n, 3, -1)
        joint_codes = (qj[:, 0] * self.joint_bins + qj[:, 1]) * self.joint_bins + qj[:, 2]
        joint = _batched_bincount(joint_codes, self.joint_bins**3)
        return (np.concatenate(per_channel + [joint], axis=1) / np.float32(n_pix)).astype(np.float32)


class HOGEncoder(HandcraftedEncoder):
    """Histogram of oriented gradients (Dalal & Triggs, 2005), batched.

    Central-difference gradients (zero at the border, as scikit-image), unsigned
    orientation in 9 bins over ``[0, 180)`` with linear vote interpolation
    between neighbouring bins, a ``4 x 4`` grid of cells (cell side =
    ``image_side / 4``), ``2 x 2``-cell blocks with stride one cell and L2-Hys
    block normalisation (clip 0.2). ``3 * 3 * 2 * 2 * 9 = 324`` values.
    """

    name = "hog"
    channels = 1
    orientations = 9
    cells = 4
    clip = 0.2
    embedding_dim = (cells - 1) ** 2 * 4 * orientations

    def features(self, x: np.ndarray) -> np.ndarray:
        g = x[:, 0]
        gx = np.zeros_like(g)
        gy = np.zeros_like(g)
        gx[:, :, 1:-1] = g[:, :, 2:] - g[:, :, :-2]
        gy[:, 1:-1, :] = g[:, 2:, :] - g[:, :-2, :]
        mag = np.sqrt(gx * gx + gy * gy)
        ang = np.rad2deg(np.arctan2(gy, gx)) % 180.0
        pos = ang / (180.0 / self.orientations) - 0.5
        b0 = np.floor(pos)
        w1 = (pos - b0).astype(np.float32)
        b0 = b0.astype(np.int64) % self.orientations
        b1 = (b0 + 1) % self.orientations
        hist = np.empty((len(g), self.orientations, self.cells, self.cells), dtype=np.float32)
        for b in range(self.orientations):
            vote = mag * ((b0 == b) * (1.0 - w1) + (b1 == b) * w1)
            hist[:, b] = _grid_sum(vote, self.cells)
        blocks = np.stack(
            [hist[:, :, i : i + 2, j : j + 2].reshape(len(g), -1) for i in range(self.cells - 1) for j in range(self.cells - 1)],
            axis=1,
        )
        eps = np.float32(1e-5)
        blocks = blocks / np.sqrt((blocks**2).sum(-1, keepdims=True) + eps**2)
        blocks = np.minimum(blocks, self.clip)
        blocks = blocks / np.sqrt((blocks**2).sum(-1, keepdims=True) + eps**2)
        return blocks.reshape(len(g), -1).astype(np.float32)


def _riu2_table(n_points: int = 8) -> np.ndarray:
    """Rotation-invariant uniform LBP mapping (Ojala et al., 2002): code -> 0..P+1."""
    table = np.empty(2**n_points, dtype=np.int64)
    for code in range(2**n_points):
        bits = [(code >> k) & 1 for k in range(n_points)]
        transitions = sum(bits[k] != bits[(k + 1) % n_points] for k in range(n_points))
        table[code] = sum(bits) if transitions <= 2 else n_points + 1
    return table


class LBPEncoder(HandcraftedEncoder):
    """Local binary patterns (Ojala et al., 2002), rotation-invariant uniform, batched.

    Eight neighbours on the square ring at radius 1 and at radius 2 (integer
    offsets, edge-replicated border); a neighbour >= the centre sets its bit; the
    8-bit code is mapped to the 10 ``riu2`` classes; histograms are taken over a
    ``2 x 2`` grid of quadrants and normalised to sum 1 per quadrant.
    ``2 radii * 4 quadrants * 10 = 80`` values.
    """

    name = "lbp"
    channels = 1
    radii = (1, 2)
    grid = 2
    n_codes = 10
    embedding_dim = len(radii) * grid * grid * n_codes
    _table = _riu2_table(8)

    def features(self, x: np.ndarray) -> np.ndarray:
        # Quantise to the 8-bit grid so ties are decided on the image's own levels.
        g = np.round(x[:, 0] * 255.0).astype(np.int16)
        n, h, w = g.shape
        parts = []
        for r in self.radii:
            p = np.pad(g, ((0, 0), (r, r), (r, r)), mode="edge")
            offsets = [(0, r), (-r, r), (-r, 0), (-r, -r), (0, -r), (r, -r), (r, 0), (r, r)]
            code = np.zeros((n, h, w), dtype=np.int64)
            for k, (dy, dx) in enumerate(offsets):
                nb = p[:, r + dy : r + dy + h, r + dx : r + dx + w]
                code |= (nb >= g).astype(np.int64) << k
            cls = self._table[code]
            quad = cls.reshape(n, self.grid, h // self.grid, self.grid, w // self.grid).transpose(0, 1, 3, 2, 4)
            quad = quad.reshape(n, self.grid * self.grid, -1)
            q_codes = quad + (np.arange(self.grid * self.grid) * self.n_codes)[None, :, None]
            hist = _batched_bincount(q_codes.reshape(n, -1), self.grid * self.grid * self.n_codes)
            parts.append(hist / np.float32(quad.shape[-1]))
        return np.concatenate(parts, axis=1).astype(np.float32)


class GaborEncoder(HandcraftedEncoder):
    """Gabor filter bank (4 orientations x 3 frequencies), applied by FFT over the batch.

    Complex Gabor kernels ``exp(-(x'^2 + y'^2) / (2 sigma^2)) exp(2 pi i f x')``
    with ``sigma = 0.56 / f`` (about one octave bandwidth) at frequencies of
    0.08, 0.16 and 0.32 cycles per pixel of a 32-px image (scaled with
    ``image_side``); each image's mean is removed first; convolution is circular
    (FFT). Per filter: mean response magnitude in each quadrant and its standard
    deviation over the image. ``12 * 5 = 60`` values.
    """

    name = "gabor"
    channels = 1
    frequencies = (0.08, 0.16, 0.32)
    orientations = 4
    embedding_dim = len(frequencies) * orientations * 5

    def __init__(self, image_side: int = 32) -> None:
        super().__init__(image_side)
        self._bank = self._make_bank()

    def params(self) -> dict[str, Any]:
        return {"image_side": self.image_side, "frequencies": list(self.frequencies), "orientations": self.orientations}

    def _make_bank(self) -> np.ndarray:
        s = self.image_side
        coords = np.fft.fftfreq(s) * s  # 0, 1, ..., -1: kernel centred at the origin for circular convolution
        yy, xx = np.meshgrid(coords, coords, indexing="ij")
        bank = []
        for f32 in self.frequencies:
            f = f32 * 32.0 / s
            sigma = 0.56 / f
            for k in range(self.orientations):
                theta = math.pi * k / self.orientations
                xr = xx * math.cos(theta) + yy * math.sin(theta)
                yr = -xx * math.sin(theta) + yy * math.cos(theta)
                kern = np.exp(-(xr**2 + yr**2) / (2 * sigma**2)) * np.exp(2j * math.pi * f * xr)
                kern /= np.abs(kern).sum()
                bank.append(np.fft.fft2(kern))
        return np.stack(bank).astype(np.complex64)

    def features(self, x: np.ndarray) -> np.ndarray:
        g = x[:, 0]
        g = g - g.mean(axis=(1, 2), keepdims=True)
        # scipy.fft keeps single precision (numpy.fft would upcast to complex128).
        spec = scipy.fft.fft2(g.astype(np.complex64))[:, None]
        mag = np.abs(scipy.fft.ifft2(spec * self._bank[None]))
        n, k, h, w = mag.shape
        quads = _grid_sum(mag, 2).reshape(n, k, 4) / (h * w / 4)
        std = mag.reshape(n, k, -1).std(axis=-1)[:, :, None]
        return np.concatenate([quads, std], axis=2).reshape(n, -1).astype(np.float32)


class GLCMEncoder(HandcraftedEncoder):
    """Grey-level co-occurrence texture statistics (Haralick et al., 1973), batched.

    Grey quantised to 8 levels; symmetric, normalised co-occurrence matrices
    ``P`` for distances 1 and 2 at 0, 45, 90 and 135 degrees; six statistics per
    matrix: contrast ``sum (i-j)^2 P``, dissimilarity ``sum |i-j| P``,
    homogeneity ``sum P / (1 + (i-j)^2)``, angular second moment ``sum P^2``,
    correlation ``sum (i-mu)(j-mu) P / sigma^2`` (1 for a flat image, as
    scikit-image) and entropy ``-sum P log P``. ``8 * 6 = 48`` values.
    """

    name = "glcm"
    channels = 1
    levels = 8
    distances = (1, 2)
    embedding_dim = len(distances) * 4 * 6

    def features(self, x: np.ndarray) -> np.ndarray:
        q = np.minimum((x[:, 0] * self.levels).astype(np.int64), self.levels - 1)
        n, h, w = q.shape
        L = self.levels
        i, j = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
        i = i.ravel().astype(np.float64)
        j = j.ravel().astype(np.float64)
        feats = []
        for d in self.distances:
            for dy, dx in ((0, d), (-d, -d), (-d, 0), (-d, d)):
                y0, y1 = max(0, -dy), h - max(0, dy)
                x0, x1 = max(0, -dx), w - max(0, dx)
                a = q[:, y0:y1, x0:x1]
                b = q[:, y0 + dy : y1 + dy, x0 + dx : x1 + dx]
                counts = _batched_bincount((a * L + b).reshape(n, -1), L * L).astype(np.float64)
                counts = counts + counts.reshape(n, L, L).transpose(0, 2, 1).reshape(n, -1)
                p = counts / counts.sum(axis=1, keepdims=True)
                mu = (p * i).sum(1, keepdims=True)
                var = (p * (i - mu) ** 2).sum(1)
                cov = (p * (i - mu) * (j - mu)).sum(1)
                corr = np.where(var > 1e-12, cov / np.maximum(var, 1e-12), 1.0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    ent = -np.where(p > 0, p * np.log(p), 0.0).sum(1)
                feats += [
                    (p * (i - j) ** 2).sum(1),
                    (p * np.abs(i - j)).sum(1),
                    (p / (1.0 + (i - j) ** 2)).sum(1),
                    (p**2).sum(1),
                    corr,
                    ent,
                ]
        return np.stack(feats, axis=1).astype(np.float32)


class PCAEncoder(HandcraftedEncoder):
    """Projection of the RGB pixels at 32 px onto the top 64 principal components.

    The basis and mean are fitted on the phantom pretraining pools of all three
    domains (:func:`crsbench_lib.runner.pretrain.fit_pca`) and shipped as
    ``pca.pt``. Images of another side are resized to 32 px first, so one basis
    serves every ``image_side``.
    """

    name = "pca"
    n_components = 64
    embedding_dim = n_components
    state_file = "pca.pt"

    def __init__(self, image_side: int = 32, weights_dir: str | Path | None = None) -> None:
        super().__init__(image_side)
        state, self._state_hash = load_state(self.state_file, None if weights_dir is None else Path(weights_dir))
        self._mean = state["mean"].numpy().astype(np.float64)
        self._components = state["components"].numpy().astype(np.float64)
        if self._components.shape != (self.n_components, 3 * PCA_SIDE * PCA_SIDE):
            raise EncoderError(f"{self.state_file}: components have shape {self._components.shape}")

    def preprocess(self, images: np.ndarray) -> np.ndarray:
        return to_array(images, PCA_SIDE, 3)

    def features(self, x: np.ndarray) -> np.ndarray:
        # float64 products rounded to float32: the result does not depend on how BLAS
        # blocks the batch, so an image's embedding is the same in any batch.
        centred = x.reshape(len(x), -1).astype(np.float64) - self._mean
        return (centred @ self._components.T).astype(np.float32)


def normalise_patches(patches: torch.Tensor) -> torch.Tensor:
    """Per-patch brightness/contrast normalisation of Coates & Ng (2011), on ``[0, 1]`` values.

    ``(p - mean(p)) / sqrt(var(p) + 10 / 255^2)``: their ``+10`` on a 0-255 scale.
    """
    mean = patches.mean(dim=-1, keepdim=True)
    var = patches.var(dim=-1, keepdim=True, unbiased=True)
    return (patches - mean) / torch.sqrt(var + 10.0 / 255.0**2)


class KMeansPatchEncoder(HandcraftedEncoder):
    """Single-layer k-means patch features (Coates, Lee & Ng, 2011).

    Every ``6 x 6`` RGB patch (stride 2) is brightness/contrast normalised,
    ZCA-whitened, and encoded against 64 k-means centroids with the "triangle"
    activation ``f_k = max(0, mean_k(z) - z_k)`` (``z_k`` = distance to centroid
    ``k``); activations are sum-pooled over the four image quadrants (256
    values). Float32 matrix products: bit-for-bit reproducible for a given batch
    size; across batch sizes equal to float32 rounding (BLAS blocking).
    Whitening and centroids are fitted on the pretraining pools
    (:func:`crsbench_lib.runner.pretrain.fit_kmeans`), shipped as ``kmeans.pt``.
    """

    name = "kmeans"
    patch = 6
    # Patch stride: Coates et al. found stride 1 best and 2 close; 2 is ~4x cheaper.
    stride = 2
    n_centroids = 64
    embedding_dim = 4 * n_centroids
    state_file = "kmeans.pt"

    def __init__(self, image_side: int = 32, weights_dir: str | Path | None = None) -> None:
        super().__init__(image_side)
        state, self._state_hash = load_state(self.state_file, None if weights_dir is None else Path(weights_dir))
        self._zca_mean = state["zca_mean"].to(torch.float32)
        self._zca = state["zca"].to(torch.float32)
        self._centroids = state["centroids"].to(torch.float32)
        if self._centroids.shape != (self.n_centroids, 3 * self.patch**2):
            raise EncoderError(f"{self.state_file}: centroids have shape {tuple(self._centroids.shape)}")

    def preprocess(self, images: np.ndarray) -> torch.Tensor:  # type: ignore[override]
        return to_tensor(images, self.image_side, 3)

    def features(self, x: torch.Tensor) -> np.ndarray:  # type: ignore[override]
        # Whitened normalised patches z = W (p - mu_p 1) / sigma_p - W m, computed for all
        # positions at once as a convolution with the rows of W (same numbers as unfolding
        # the patches, without materialising them).
        n, p, d = x.shape[0], self.patch, 3 * self.patch**2
        filters = self._zca.reshape(d, 3, p, p)
        st = self.stride
        s1 = F.conv2d(x, filters, stride=st)
        mu = F.avg_pool2d(x.mean(dim=1, keepdim=True), p, stride=st)
        sq = F.avg_pool2d((x * x).mean(dim=1, keepdim=True), p, stride=st)
        var = torch.clamp((sq - mu * mu) * (d / (d - 1.0)), min=0.0)
        sigma = torch.sqrt(var + 10.0 / 255.0**2)
        w_sum = self._zca.sum(dim=1).view(1, d, 1, 1)
        w_mean = (self._zca @ self._zca_mean).view(1, d, 1, 1)
        z = (s1 - mu * w_sum) / sigma - w_mean
        side = z.shape[-1]
        z = z.permute(0, 2, 3, 1).reshape(-1, d)
        c = self._centroids
        d2 = (z * z).sum(1, keepdim=True) - 2.0 * (z @ c.T) + (c * c).sum(1)[None, :]
        dist = torch.sqrt(torch.clamp(d2, min=0.0))
        act = torch.clamp(dist.mean(dim=1, keepdim=True) - dist, min=0.0)
        act = act.reshape(n, side, side, self.n_centroids)
        half = (side + 1) // 2
        pooled = [
            act[:, :half, :half].sum((1, 2)),
            act[:, :half, half:].sum((1, 2)),
            act[:, half:, :half].sum((1, 2)),
            act[:, half:, half:].sum((1, 2)),
        ]
        return torch.cat(pooled, dim=1).numpy().astype(np.float32)

    def embed(self, images: np.ndarray) -> np.ndarray:
        images = check_images(images)
        out = np.empty((len(images), self.embedding_dim), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(images), CHUNK):
                x = self.preprocess(images[start : start + CHUNK])
                out[start : start + len(x)] = self.features(x)
        return out


_IMPLEMENTATIONS: dict[str, type[HandcraftedEncoder]] = {
    cls.name: cls
    for cls in (
        PixelsEncoder,
        PCAEncoder,
        HOGEncoder,
        LBPEncoder,
        GaborEncoder,
        GLCMEncoder,
        KMeansPatchEncoder,
        ColourHistogramEncoder,
    )
}
#: The classical baselines by name, in the zoo's order (:data:`~crsbench_lib.encoders.zoo.HANDCRAFTED_ZOO`
#: lists them; a name listed there without an implementation here fails at import).
HANDCRAFTED: dict[str, type[HandcraftedEncoder]] = {name: _IMPLEMENTATIONS[name] for name in HANDCRAFTED_ZOO}
