"""Fitting and pretraining of the default zoo, from a fixed seed, on the phantom pools.

Everything here reads only :func:`crsbench_lib.cohort.pretraining_pool` images,
which are disjoint from every evaluation split of every evaluation seed. Each
piece is produced from :data:`PRETRAIN_SEED` on CPU with
``torch.use_deterministic_algorithms(True)``, so rebuilding on the same
software stack gives the same files; the files (and their sha256 in
``manifest.json``) are what the encoders load, so a different torch version
changes nothing until someone rebuilds.

Pieces (see :data:`PIECES`):

- ``pca``: mean and top-64 principal axes of 32-px RGB pixels (thin SVD).
- ``kmeans``: ZCA whitening and 64 k-means centroids of normalised ``6x6``
  patches (Coates, Lee & Ng, 2011).
- ``cnn_random``, ``vit_random``: the initialisation from the seed, as is.
- ``cnn_autoencoder``: CNN encoder + transposed-conv decoder, MSE reconstruction.
- ``cnn_simclr``: SimCLR (Chen et al., 2020) with NT-Xent (temperature 0.2) on
  two views from :func:`augment` (random resized crop and flip via an affine
  grid, brightness/contrast jitter, random grey, Gaussian noise).
- ``vit_mae``: masked autoencoder (He et al., 2022), 75 % of patches masked,
  one-block decoder, loss on per-patch-normalised pixels of masked patches.
- ``cnn_generalist``: supervised on the pools of all three domains at once
  (one head per domain: cross-entropy, or binary cross-entropy for multi-label).
- ``cnn_specialist``: the same, dermatology only.

Floating-point weights are stored in float16 to keep the shipped folder small;
BatchNorm statistics stay float32. The stored file *is* the encoder.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from crsbench_lib.encoders.handcrafted import PCA_SIDE, KMeansPatchEncoder, PCAEncoder, normalise_patches
from crsbench_lib.encoders.imaging import to_tensor
from crsbench_lib.encoders.neural import NEURAL_ZOO, NORM_MEAN, NORM_STD, PRETRAIN_SIDE, SmallViT, make_backbone
from crsbench_lib.encoders.weights import save_state, weights_dir
from crsbench_lib.errors import EncoderError

PRETRAIN_SEED = 20261130
# Pool images per phantom dataset (pretraining_pool seeds are disjoint from evaluation).
POOL_SIZE = 1500
POOL_SEED = 0


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings of one pretraining run (Adam, cosine-free constant LR)."""

    epochs: int
    batch_size: int = 128
    lr: float = 2e-3
    weight_decay: float = 1e-4


TRAIN_CONFIGS: dict[str, TrainConfig] = {
    "cnn_autoencoder": TrainConfig(epochs=3),
    "cnn_simclr": TrainConfig(epochs=4, batch_size=256),
    "vit_mae": TrainConfig(epochs=6, batch_size=128, lr=1e-3),
    "cnn_generalist": TrainConfig(epochs=4),
    "cnn_specialist": TrainConfig(epochs=8),
}
# Which phantom pools each supervised encoder learns from.
SUPERVISED_DATASETS: dict[str, tuple[str, ...]] = {
    "cnn_generalist": ("derm", "fundus", "cxr"),
    "cnn_specialist": ("derm",),
}


@contextlib.contextmanager
def deterministic(seed: int) -> Iterator[torch.Generator]:
    """Seed torch, switch on deterministic algorithms, yield a seeded generator; restore afterwards."""
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    try:
        yield gen
    finally:
        torch.use_deterministic_algorithms(previous)


@dataclass
class Pools:
    """Pretraining pools: ``images[name]`` uint8 and ``labels[name]`` per phantom dataset."""

    images: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]

    def tensor(self, names: Sequence[str] | None = None, side: int = PRETRAIN_SIDE) -> torch.Tensor:
        """RGB float tensor in ``[0, 1]`` of the named pools, concatenated."""
        names = list(self.images) if names is None else list(names)
        return torch.cat([to_tensor(self.images[n], side, 3) for n in names])


def load_pools(n_images: int = POOL_SIZE, seed: int = POOL_SEED, image_side: int = PRETRAIN_SIDE) -> Pools:
    """Draw the pretraining pools of every phantom dataset (:func:`crsbench_lib.cohort.pretraining_pool`)."""
    from crsbench_lib.cohort import PHANTOM_DATASETS, pretraining_pool

    images, labels = {}, {}
    for name in PHANTOM_DATASETS:
        pool = pretraining_pool(name, n_images, seed=seed, image_side=image_side)
        images[name], labels[name] = pool.images, pool.labels
    return Pools(images, labels)


def _normalise(x: torch.Tensor) -> torch.Tensor:
    mean = torch.tensor(NORM_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(NORM_STD).view(1, 3, 1, 1)
    return (x - mean) / std


def _export(module: nn.Module) -> dict[str, torch.Tensor]:
    """State dict with float parameters in float16 (buffers such as BN statistics stay float32)."""
    params = {name for name, _ in module.named_parameters()}
    return {
        k: (v.detach().to(torch.float16) if k in params and v.is_floating_point() else v.detach().clone())
        for k, v in module.state_dict().items()
    }


def fit_pca(
    pools: Pools, n_components: int = PCAEncoder.n_components, seed: int = PRETRAIN_SEED, oversample: int = 32, power_iterations: int = 6
) -> dict[str, torch.Tensor]:
    """Mean and top principal axes of 32-px RGB pixels of all pools, sign-fixed.

    Randomised subspace iteration (Halko, Martinsson & Tropp, 2011, alg. 4.4)
    with ``oversample`` extra directions and ``power_iterations`` QR-stabilised
    power steps: BLAS-3 matrix products instead of a full SVD of the
    ``n x 3072`` pixel matrix. Each axis is flipped so that its
    largest-magnitude coefficient is positive, which makes the basis unique.
    """
    # torch's LAPACK is much faster than numpy's OpenBLAS QR on this kind of machine.
    x = pools.tensor(side=PCA_SIDE).reshape(-1, 3 * PCA_SIDE * PCA_SIDE).double()
    mean = x.mean(dim=0)
    xc = x - mean
    gen = torch.Generator().manual_seed(seed)
    omega = torch.randn(xc.shape[1], n_components + oversample, generator=gen, dtype=torch.float64)
    q, _ = torch.linalg.qr(xc @ omega)
    for _ in range(power_iterations):
        q, _ = torch.linalg.qr(xc.T @ q)
        q, _ = torch.linalg.qr(xc @ q)
    _, _, vt = torch.linalg.svd(q.T @ xc, full_matrices=False)
    comps = vt[:n_components]
    signs = torch.sign(comps[torch.arange(len(comps)), comps.abs().argmax(dim=1)])
    comps = comps * signs[:, None]
    return {"mean": mean.float(), "components": comps.float().contiguous()}


def fit_kmeans(
    pools: Pools,
    seed: int = PRETRAIN_SEED,
    n_patches: int = 60_000,
    n_centroids: int = KMeansPatchEncoder.n_centroids,
    iterations: int = 25,
    zca_eps: float = 0.1,
) -> dict[str, torch.Tensor]:
    """ZCA whitening and k-means centroids of normalised ``6x6`` pool patches (Coates et al., 2011).

    Patches are sampled uniformly (seeded) from all pools; Lloyd iterations
    start from randomly chosen patches; an emptied cluster is re-seeded with the
    patch farthest from its centroid.
    """
    p = KMeansPatchEncoder.patch
    gen = torch.Generator().manual_seed(seed)
    x = pools.tensor(side=PRETRAIN_SIDE)
    n, _, s, _ = x.shape
    positions = s - p + 1
    idx = torch.randint(0, n, (n_patches,), generator=gen)
    ys = torch.randint(0, positions, (n_patches,), generator=gen)
    xs = torch.randint(0, positions, (n_patches,), generator=gen)
    offs = torch.arange(p)
    rows = (ys[:, None] + offs[None, :])[:, :, None].expand(-1, p, p)
    cols = (xs[:, None] + offs[None, :])[:, None, :].expand(-1, p, p)
    patches = x[idx[:, None, None, None], torch.arange(3)[None, :, None, None], rows[:, None], cols[:, None]]
    patches = normalise_patches(patches.reshape(n_patches, -1).double())
    mean = patches.mean(0)
    cov = torch.cov((patches - mean).T)
    evals, evecs = torch.linalg.eigh(cov)
    zca = evecs @ torch.diag(1.0 / torch.sqrt(evals.clamp(min=0) + zca_eps)) @ evecs.T
    z = (patches - mean) @ zca
    centroids = z[torch.randperm(n_patches, generator=gen)[:n_centroids]].clone()
    for _ in range(iterations):
        d2 = (z * z).sum(1, keepdim=True) - 2 * z @ centroids.T + (centroids * centroids).sum(1)[None]
        assign = d2.argmin(1)
        counts = torch.bincount(assign, minlength=n_centroids)
        sums = torch.zeros_like(centroids).index_add_(0, assign, z)
        nonempty = counts > 0
        centroids[nonempty] = sums[nonempty] / counts[nonempty, None].double()
        if (~nonempty).any():
            far = d2.gather(1, assign[:, None]).squeeze(1).argsort(descending=True)
            centroids[~nonempty] = z[far[: int((~nonempty).sum())]]
    return {"zca_mean": mean.float(), "zca": zca.float(), "centroids": centroids.float()}


def _batches(n: int, batch_size: int, gen: torch.Generator) -> Iterator[torch.Tensor]:
    perm = torch.randperm(n, generator=gen)
    for start in range(0, n - batch_size + 1, batch_size):  # drop the ragged last batch
        yield perm[start : start + batch_size]


def _adam(module: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    return torch.optim.AdamW(module.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)


class ConvDecoder(nn.Module):
    """Decoder of the autoencoder: ``(N, 128, s/8, s/8)`` -> ``(N, 3, s, s)``."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(128, 64, 2, stride=2), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(64, 32, 2, stride=2), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(32, 16, 2, stride=2), nn.ReLU(inplace=True),
            nn.Conv2d(16, 3, 3, padding=1),
        )  # fmt: skip

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.net(h)


def train_autoencoder(pools: Pools, seed: int = PRETRAIN_SEED, cfg: TrainConfig | None = None) -> nn.Module:
    """Convolutional autoencoder on all pools; returns the trained CNN encoder."""
    cfg = cfg or TRAIN_CONFIGS["cnn_autoencoder"]
    with deterministic(seed) as gen:
        enc, dec = make_backbone("cnn"), ConvDecoder()
        x = _normalise(pools.tensor())
        opt = torch.optim.AdamW(list(enc.parameters()) + list(dec.parameters()), lr=cfg.lr, weight_decay=cfg.weight_decay)
        enc.train()
        for _ in range(cfg.epochs):
            for idx in _batches(len(x), cfg.batch_size, gen):
                loss = F.mse_loss(dec(enc.feature_map(x[idx])), x[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    return enc.eval()


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One random view of a ``[0, 1]`` RGB batch (the SimCLR augmentations of this project).

    Random resized crop (scale 0.5-1 of the area, aspect 3/4-4/3) with
    horizontal flip through one affine grid; brightness (+-0.2) and contrast
    (x0.7-1.3) jitter; grey with probability 0.2; Gaussian noise (sd 0-0.05).
    """
    n = len(x)

    def u(lo: float, hi: float, size: tuple[int, ...] = (n,)) -> torch.Tensor:
        return lo + (hi - lo) * torch.rand(size, generator=gen)

    area = u(0.5, 1.0)
    log_ratio = u(math.log(3 / 4), math.log(4 / 3))
    sx = torch.sqrt(area * torch.exp(log_ratio)).clamp(max=1.0)
    sy = torch.sqrt(area / torch.exp(log_ratio)).clamp(max=1.0)
    flip = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0)
    tx = (1 - sx) * u(-1.0, 1.0)
    ty = (1 - sy) * u(-1.0, 1.0)
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = sx * flip
    theta[:, 0, 2] = tx
    theta[:, 1, 1] = sy
    theta[:, 1, 2] = ty
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    v = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    mean = v.mean(dim=(1, 2, 3), keepdim=True)
    v = (v - mean) * u(0.7, 1.3).view(n, 1, 1, 1) + mean + u(-0.2, 0.2).view(n, 1, 1, 1)
    grey = (v * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True).expand_as(v)
    v = torch.where((torch.rand(n, generator=gen) < 0.2).view(n, 1, 1, 1), grey, v)
    v = v + torch.randn(v.shape, generator=gen) * u(0.0, 0.05).view(n, 1, 1, 1)
    return v.clamp(0.0, 1.0)


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.2) -> torch.Tensor:
    """NT-Xent loss of SimCLR (Chen et al., 2020) over ``2N`` views; positives are the paired views."""
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    n = len(z1)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, target)


def train_simclr(pools: Pools, seed: int = PRETRAIN_SEED, cfg: TrainConfig | None = None) -> nn.Module:
    """SimCLR on all pools; returns the trained CNN (projection head discarded)."""
    cfg = cfg or TRAIN_CONFIGS["cnn_simclr"]
    with deterministic(seed) as gen:
        enc = make_backbone("cnn")
        head = nn.Sequential(nn.Linear(enc.out_dim, 128), nn.ReLU(inplace=True), nn.Linear(128, 64))
        x = pools.tensor()
        opt = torch.optim.AdamW(list(enc.parameters()) + list(head.parameters()), lr=cfg.lr, weight_decay=cfg.weight_decay)
        enc.train()
        for _ in range(cfg.epochs):
            for idx in _batches(len(x), cfg.batch_size, gen):
                v1, v2 = _normalise(augment(x[idx], gen)), _normalise(augment(x[idx], gen))
                loss = nt_xent(head(enc(v1)), head(enc(v2)))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    return enc.eval()


class MAEDecoder(nn.Module):
    """Light MAE decoder: project to width 32, add mask tokens and positions, one block, predict pixels."""

    dim = 32

    def __init__(self, enc_dim: int, n_patches: int, patch_pixels: int) -> None:
        super().__init__()
        from crsbench_lib.encoders.neural import Block

        self.embed = nn.Linear(enc_dim, self.dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, self.dim))
        self.pos = nn.Parameter(torch.randn(1, n_patches, self.dim) * 0.02)
        self.block = Block(self.dim, 2, 64)
        self.norm = nn.LayerNorm(self.dim)
        self.out = nn.Linear(self.dim, patch_pixels)

    def forward(self, visible: torch.Tensor, keep: torch.Tensor, n_patches: int) -> torch.Tensor:
        n = len(visible)
        h = self.mask_token.expand(n, n_patches, -1).clone()
        h.scatter_(1, keep[:, :, None].expand(-1, -1, self.dim), self.embed(visible))
        return self.out(self.norm(self.block(h + self.pos)))


def train_mae(pools: Pools, seed: int = PRETRAIN_SEED, cfg: TrainConfig | None = None, mask_ratio: float = 0.75) -> nn.Module:
    """Masked autoencoder on all pools; returns the trained ViT encoder."""
    cfg = cfg or TRAIN_CONFIGS["vit_mae"]
    with deterministic(seed) as gen:
        vit = make_backbone("vit")
        assert isinstance(vit, SmallViT)
        p = vit.patch
        n_patches = (PRETRAIN_SIDE // p) ** 2
        dec = MAEDecoder(vit.dim, n_patches, 3 * p * p)
        x = _normalise(pools.tensor())
        # Target: each patch's pixels, normalised per patch (He et al., 2022).
        target_all = F.unfold(x, p, stride=p).transpose(1, 2)
        target_all = (target_all - target_all.mean(-1, keepdim=True)) / (target_all.var(-1, keepdim=True) + 1e-6).sqrt()
        n_keep = int(round(n_patches * (1 - mask_ratio)))
        opt = torch.optim.AdamW(list(vit.parameters()) + list(dec.parameters()), lr=cfg.lr, weight_decay=cfg.weight_decay)
        vit.train()
        for _ in range(cfg.epochs):
            for idx in _batches(len(x), cfg.batch_size, gen):
                tokens = vit.patch_tokens(x[idx])
                order = torch.rand(len(idx), n_patches, generator=gen).argsort(dim=1)
                keep = order[:, :n_keep]
                visible = tokens.gather(1, keep[:, :, None].expand(-1, -1, vit.dim))
                pred = dec(vit.encode(visible)[:, 1:], keep, n_patches)
                masked = torch.ones(len(idx), n_patches, dtype=torch.bool)
                masked.scatter_(1, keep, False)
                loss = ((pred - target_all[idx]) ** 2).mean(-1)[masked].mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    return vit.eval()


def train_supervised(
    pools: Pools, datasets: Sequence[str], seed: int = PRETRAIN_SEED, cfg: TrainConfig | None = None
) -> nn.Module:
    """Supervised CNN on the named pools, one linear head per dataset, all trained together.

    Each step draws one batch from every named pool and sums their losses:
    cross-entropy for class-index labels, binary cross-entropy for 0/1
    multi-label matrices.
    """
    cfg = cfg or TrainConfig(epochs=5)
    with deterministic(seed) as gen:
        enc = make_backbone("cnn")
        xs = {d: _normalise(to_tensor(pools.images[d], PRETRAIN_SIDE, 3)) for d in datasets}
        ys = {d: torch.from_numpy(np.asarray(pools.labels[d])) for d in datasets}
        heads = nn.ModuleDict()
        for d in datasets:
            y = ys[d]
            n_out = y.shape[1] if y.ndim == 2 else int(y.max()) + 1
            heads[d] = nn.Linear(enc.out_dim, n_out)
        opt = torch.optim.AdamW(list(enc.parameters()) + list(heads.parameters()), lr=cfg.lr, weight_decay=cfg.weight_decay)
        enc.train()
        for _ in range(cfg.epochs):
            iters = [_batches(len(xs[d]), cfg.batch_size, gen) for d in datasets]
            for batch in zip(*iters):
                loss = torch.zeros(())
                for d, idx in zip(datasets, batch):
                    logits = heads[d](enc(xs[d][idx]))
                    y = ys[d][idx]
                    if y.ndim == 2:
                        loss = loss + F.binary_cross_entropy_with_logits(logits, y.float())
                    else:
                        loss = loss + F.cross_entropy(logits, y.long())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
    return enc.eval()


def random_init(architecture: str, seed: int = PRETRAIN_SEED) -> nn.Module:
    """A backbone initialised from ``seed`` (PyTorch default initialisation)."""
    with deterministic(seed):
        return make_backbone(architecture).eval()


def _piece_builders() -> dict[str, Callable[[Pools], dict[str, torch.Tensor]]]:
    return {
        "pca": fit_pca,
        "kmeans": fit_kmeans,
        "cnn_random": lambda pools: _export(random_init("cnn")),
        "vit_random": lambda pools: _export(random_init("vit", PRETRAIN_SEED + 1)),
        "cnn_autoencoder": lambda pools: _export(train_autoencoder(pools)),
        "cnn_simclr": lambda pools: _export(train_simclr(pools)),
        "vit_mae": lambda pools: _export(train_mae(pools)),
        "cnn_generalist": lambda pools: _export(
            train_supervised(pools, SUPERVISED_DATASETS["cnn_generalist"], cfg=TRAIN_CONFIGS["cnn_generalist"])
        ),
        "cnn_specialist": lambda pools: _export(
            train_supervised(pools, SUPERVISED_DATASETS["cnn_specialist"], cfg=TRAIN_CONFIGS["cnn_specialist"])
        ),
    }


PIECES: tuple[str, ...] = ("pca", "kmeans", *NEURAL_ZOO)


def pretrain_zoo(
    out: Path | None = None, pieces: Sequence[str] | None = None, pool_size: int = POOL_SIZE, log: Callable[[str], None] | None = None
) -> dict[str, float]:
    """Rebuild the zoo's fitted and pretrained state into ``out`` (default: the weights folder).

    Parameters
    ----------
    out : pathlib.Path, optional
        Destination folder; files and ``manifest.json`` entries are (re)written.
    pieces : sequence of str, optional
        Subset of :data:`PIECES` (default: all).
    pool_size : int
        Pool images per phantom dataset.
    log : callable, optional
        Called with one line per finished piece.

    Returns
    -------
    dict of str to float
        Seconds per piece, plus ``"pools"`` (time to draw the pools) and ``"total"``.
    """
    pieces = list(PIECES if pieces is None else pieces)
    unknown = [p for p in pieces if p not in PIECES]
    if unknown:
        raise EncoderError(f"unknown pretraining piece(s) {unknown}; valid: {', '.join(PIECES)}")
    folder = weights_dir(out)
    builders = _piece_builders()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    pools = load_pools(pool_size)
    timings["pools"] = time.perf_counter() - t0
    for piece in pieces:
        t = time.perf_counter()
        state = builders[piece](pools)
        seconds = time.perf_counter() - t
        timings[piece] = seconds
        digest = save_state(
            folder,
            f"{piece}.pt",
            state,
            {"seed": PRETRAIN_SEED, "pool_size": pool_size, "pool_seed": POOL_SEED, "torch": torch.__version__},
        )
        if log is not None:
            log(f"{piece}: {seconds:.1f} s, sha256 {digest[:12]}")
    timings["total"] = time.perf_counter() - t0
    return timings
