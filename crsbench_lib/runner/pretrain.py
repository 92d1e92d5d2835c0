"""Fitting and pretraining of the default zoo, from a fixed seed, on the phantom pools.

Everything here reads only pretraining pools (:mod:`crsbench_lib.runner.pools`),
which are disjoint from every evaluation split of every evaluation seed. The
recipes (pool, objective, augmentations, steps, optimiser) are data in
:mod:`crsbench_lib.encoders.recipes`; this module turns them into weights.
Each piece is produced from :data:`~crsbench_lib.encoders.recipes.PRETRAIN_SEED`
on CPU with ``torch.use_deterministic_algorithms(True)`` and
:data:`~crsbench_lib.encoders.recipes.PRETRAIN_THREADS` torch threads, so
rebuilding on the same software stack gives the same files; the files (and
their sha256 in ``manifest.json``) are what the encoders load, so a different
torch version changes nothing until someone rebuilds.

Pieces (see :data:`PIECES`):

- ``pca``: mean and top-64 principal axes of 32-px RGB pixels (randomised SVD).
- ``kmeans``: ZCA whitening and 64 k-means centroids of normalised ``6x6``
  patches (Coates, Lee & Ng, 2011).
- ``random``: the initialisation from the seed, as is.
- ``simclr``: SimCLR (Chen et al., 2020): NT-Xent (temperature 0.2) on two
  views per image from :func:`crsbench_lib.runner.augment.view`, through a
  two-layer projection head that is discarded.
- ``multitask``: one head per (domain, auxiliary attribute): cross-entropy for
  class codes, binary cross-entropy for 0/1 flags, mean squared error for
  standardised continuous values; each domain's attributes weigh equally. Its
  views (:func:`crsbench_lib.runner.augment.target_view`) vary acquisition
  only: a crop, flip or colour jitter would change the targets.
- ``intask``: the same machinery on the evaluation task's labels of the pool.
- ``mae``: masked autoencoder (He et al., 2022), 75 % of patches masked,
  one-block decoder, loss on per-patch-normalised pixels of masked patches.

Every optimiser is AdamW with a linear warm-up over the first 5 % of steps and
a cosine decay to zero. Floating-point weights are stored in float16 to keep
the shipped folder small; BatchNorm statistics stay float32. The stored file
*is* the encoder.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from crsbench_lib.encoders.handcrafted import PCA_SIDE, KMeansPatchEncoder, PCAEncoder, normalise_patches
from crsbench_lib.encoders.neural import NEURAL_ZOO, SmallViT, make_backbone
from crsbench_lib.encoders.recipes import CNN_WIDTHS, BROAD_POOL, PRETRAIN_SEED, PRETRAIN_SIDE, PRETRAIN_THREADS, NeuralSpec, PoolSpec
from crsbench_lib.atomic import atomic_write_bytes
from crsbench_lib.encoders.registry import shape_facts
from crsbench_lib.encoders.weights import read_manifest, save_state, weights_dir, write_manifest
from crsbench_lib.errors import EncoderError
from crsbench_lib.runner.augment import target_view, view
from crsbench_lib.runner.pools import (
    ATTRIBUTE_SOURCE,
    PoolCache,
    PoolDraw,
    draw_file,
    draw_from_folder,
    draw_pool,
    generator_version,
    save_draw,
)

#: Images per domain of the broad pool that PCA and k-means are fitted on.
CLASSICAL_FIT_PER_DATASET = 2000
#: Share of the steps spent in linear learning-rate warm-up.
WARMUP_FRACTION = 0.05
#: NT-Xent temperature of SimCLR.
SIMCLR_TEMPERATURE = 0.2
#: Share of ViT patches hidden from the MAE encoder.
MAE_MASK_RATIO = 0.75
NORM_MEAN, NORM_STD = 0.5, 0.25


@contextlib.contextmanager
def deterministic(seed: int) -> Iterator[torch.Generator]:
    """Seed torch, fix the thread count, switch on deterministic algorithms; restore afterwards.

    Yields
    ------
    torch.Generator
        Seeded with ``seed``; every random draw of a training run comes from it.
    """
    previous = torch.are_deterministic_algorithms_enabled()
    threads = torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(PRETRAIN_THREADS)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    try:
        yield gen
    finally:
        torch.use_deterministic_algorithms(previous)
        torch.set_num_threads(threads)


def as_uint8_tensor(images: np.ndarray) -> torch.Tensor:
    """``uint8`` images ``(N, H, W[, 3])`` -> ``uint8`` tensor ``(N, 3, H, W)`` (grey replicated)."""
    t = torch.from_numpy(np.ascontiguousarray(images))
    if t.ndim == 3:
        t = t[:, None].expand(-1, 3, -1, -1)
    else:
        t = t.permute(0, 3, 1, 2)
    return t.contiguous()


def _float(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.float32) / 255.0


def _normalise(x: torch.Tensor) -> torch.Tensor:
    return (x - NORM_MEAN) / NORM_STD


def _export(module: nn.Module) -> dict[str, torch.Tensor]:
    """State dict with float parameters in float16 (buffers such as BN statistics stay float32)."""
    params = {name for name, _ in module.named_parameters()}
    return {
        k: (v.detach().to(torch.float16) if k in params and v.is_floating_point() else v.detach().clone())
        for k, v in module.state_dict().items()
    }


def fit_pca(
    x: torch.Tensor, n_components: int = PCAEncoder.n_components, seed: int = PRETRAIN_SEED, oversample: int = 32, power_iterations: int = 6
) -> dict[str, torch.Tensor]:
    """Mean and top principal axes of 32-px RGB pixels ``x`` ``(N, 3, 32, 32)`` in ``[0, 1]``, sign-fixed.

    Randomised subspace iteration (Halko, Martinsson & Tropp, 2011, alg. 4.4)
    with ``oversample`` extra directions and ``power_iterations`` QR-stabilised
    power steps: BLAS-3 matrix products instead of a full SVD of the
    ``n x 3072`` pixel matrix. Each axis is flipped so that its
    largest-magnitude coefficient is positive, which makes the basis unique.
    """
    # torch's LAPACK is much faster than numpy's OpenBLAS QR on this kind of machine.
    x = x.reshape(-1, 3 * PCA_SIDE * PCA_SIDE).double()
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
    x: torch.Tensor,
    seed: int = PRETRAIN_SEED,
    n_patches: int = 60_000,
    n_centroids: int = KMeansPatchEncoder.n_centroids,
    iterations: int = 25,
    zca_eps: float = 0.1,
) -> dict[str, torch.Tensor]:
    """ZCA whitening and k-means centroids of normalised ``6x6`` patches of ``x`` (Coates et al., 2011).

    ``x`` is ``(N, 3, side, side)`` in ``[0, 1]``. Patches are sampled uniformly (seeded); Lloyd iterations
    start from randomly chosen patches; an emptied cluster is re-seeded with the
    patch farthest from its centroid.
    """
    p = KMeansPatchEncoder.patch
    gen = torch.Generator().manual_seed(seed)
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


def index_stream(n: int, batch_size: int, gen: torch.Generator) -> Iterator[torch.Tensor]:
    """Endless batches of indices: one seeded permutation per epoch, the ragged tail dropped."""
    if batch_size > n:
        raise EncoderError(f"batch of {batch_size} images from a pool of {n}")
    while True:
        perm = torch.randperm(n, generator=gen)
        for start in range(0, n - batch_size + 1, batch_size):
            yield perm[start : start + batch_size]


def _optimiser(params: Sequence[nn.Parameter], spec: NeuralSpec) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    opt = torch.optim.AdamW(params, lr=spec.lr, weight_decay=spec.weight_decay)
    warm = max(1, int(WARMUP_FRACTION * spec.steps))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, spec.steps - warm)))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


def _backbone(spec: NeuralSpec) -> nn.Module:
    net = make_backbone(spec.architecture)
    # channels-last convolutions run about twice as fast on CPU (oneDNN); the export is contiguous.
    return net.to(memory_format=torch.channels_last) if spec.architecture in CNN_WIDTHS else net


def _channels(x: torch.Tensor, spec: NeuralSpec) -> torch.Tensor:
    return x.contiguous(memory_format=torch.channels_last) if spec.architecture in CNN_WIDTHS else x


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float = SIMCLR_TEMPERATURE) -> torch.Tensor:
    """NT-Xent loss of SimCLR (Chen et al., 2020) over ``2N`` views; positives are the paired views.

    ``L = -1/(2N) sum_i log( exp(s(i, p(i)) / t) / sum_{k != i} exp(s(i, k) / t) )`` with cosine similarity ``s``.
    """
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.T / temperature
    n = len(z1)
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, target)


def train_simclr(draws: Mapping[str, PoolDraw], spec: NeuralSpec, seed: int = PRETRAIN_SEED) -> nn.Module:
    """SimCLR on the concatenated pool; returns the trained backbone (projection head discarded)."""
    with deterministic(seed) as gen:
        enc = _backbone(spec)
        head = nn.Sequential(nn.Linear(enc.out_dim, 256), nn.ReLU(inplace=True), nn.Linear(256, 64))
        x = torch.cat([as_uint8_tensor(d.images) for d in draws.values()])
        opt, sched = _optimiser([*enc.parameters(), *head.parameters()], spec)
        stream = index_stream(len(x), spec.batch_size, gen)
        enc.train()
        for _ in range(spec.steps):
            xb = _float(x[next(stream)])
            v1 = _channels(_normalise(view(xb, gen, spec.acquisition_augmentation)), spec)
            v2 = _channels(_normalise(view(xb, gen, spec.acquisition_augmentation)), spec)
            loss = nt_xent(head(enc(v1)), head(enc(v2)))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
    return enc.eval()


def target_kind(values: np.ndarray) -> str:
    """How an auxiliary target is learned: ``"class"``, ``"flags"`` or ``"regress"``.

    Integer or boolean vectors are class codes, 0/1 matrices of integers are
    multi-label flags, anything floating is regressed after standardisation.
    """
    v = np.asarray(values)
    if v.dtype.kind in "iub" and v.ndim == 1:
        return "class"
    if v.dtype.kind in "iub" and v.ndim == 2:
        return "flags"
    if v.dtype.kind == "f" and v.ndim in (1, 2):
        return "regress"
    raise EncoderError(f"auxiliary target of dtype {v.dtype} and shape {v.shape}: expected a class vector, 0/1 flags or floats")


def _targets(values: np.ndarray) -> tuple[str, torch.Tensor, int]:
    kind = target_kind(values)
    v = np.asarray(values)
    if kind == "class":
        t = torch.from_numpy(v.astype(np.int64))
        return kind, t, int(t.max()) + 1
    if kind == "flags":
        return kind, torch.from_numpy(v.astype(np.float32)), v.shape[1]
    v = v.reshape(len(v), -1).astype(np.float64)
    v = (v - v.mean(0)) / np.maximum(v.std(0), 1e-6)
    return kind, torch.from_numpy(v.astype(np.float32)), v.shape[1]


def _loss(kind: str, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if kind == "class":
        return F.cross_entropy(logits, target)
    if kind == "flags":
        return F.binary_cross_entropy_with_logits(logits, target)
    return F.mse_loss(logits, target)


def train_multitask(draws: Mapping[str, PoolDraw], spec: NeuralSpec, seed: int = PRETRAIN_SEED) -> nn.Module:
    """Supervised multi-task pretraining: one linear head per (domain, target), all trained together.

    The targets are the domain's auxiliary attributes (``spec.method ==
    "multitask"``) or its evaluation labels (``"intask"``). Each step draws an
    equal share of ``spec.batch_size`` from every domain and runs them through
    the backbone as one batch; the loss is the sum over domains of the mean
    over that domain's targets.
    """
    if spec.method not in ("multitask", "intask"):
        raise EncoderError(f"{spec.name}: train_multitask needs a multitask or intask recipe, not {spec.method}")
    with deterministic(seed) as gen:
        enc = _backbone(spec)
        names = list(draws)
        per_domain = spec.batch_size // len(names)
        xs = {d: as_uint8_tensor(draws[d].images) for d in names}
        raw = {d: ({"label": draws[d].labels} if spec.method == "intask" else draws[d].attributes) for d in names}
        targets: dict[str, dict[str, tuple[str, torch.Tensor]]] = {}
        heads = nn.ModuleDict()
        for d in names:
            if not raw[d]:
                raise EncoderError(f"{spec.name}: the {d} pool has no targets for {spec.method} pretraining")
            targets[d] = {}
            for a in sorted(raw[d]):
                kind, t, width = _targets(raw[d][a])
                targets[d][a] = (kind, t)
                heads[f"{d}__{a}"] = nn.Linear(enc.out_dim, width)
        opt, sched = _optimiser([*enc.parameters(), *heads.parameters()], spec)
        streams = {d: index_stream(len(xs[d]), per_domain, gen) for d in names}
        enc.train()
        for _ in range(spec.steps):
            idx = {d: next(streams[d]) for d in names}
            xb = _float(torch.cat([xs[d][idx[d]] for d in names]))
            feats = enc(_channels(_normalise(target_view(xb, gen, spec.acquisition_augmentation)), spec))
            loss = torch.zeros(())
            for k, d in enumerate(names):
                f = feats[k * per_domain : (k + 1) * per_domain]
                losses = [_loss(kind, heads[f"{d}__{a}"](f), t[idx[d]]) for a, (kind, t) in targets[d].items()]
                loss = loss + torch.stack(losses).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
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


def train_mae(draws: Mapping[str, PoolDraw], spec: NeuralSpec, seed: int = PRETRAIN_SEED, mask_ratio: float = MAE_MASK_RATIO) -> nn.Module:
    """Masked autoencoder on base views of the concatenated pool; returns the trained ViT encoder."""
    with deterministic(seed) as gen:
        vit = make_backbone(spec.architecture)
        if not isinstance(vit, SmallViT):
            raise EncoderError(f"{spec.name}: the masked autoencoder needs a ViT, not {spec.architecture}")
        p = vit.patch
        n_patches = (PRETRAIN_SIDE // p) ** 2
        dec = MAEDecoder(vit.dim, n_patches, 3 * p * p)
        x = torch.cat([as_uint8_tensor(d.images) for d in draws.values()])
        n_keep = int(round(n_patches * (1 - mask_ratio)))
        opt, sched = _optimiser([*vit.parameters(), *dec.parameters()], spec)
        stream = index_stream(len(x), spec.batch_size, gen)
        vit.train()
        for _ in range(spec.steps):
            xb = _normalise(view(_float(x[next(stream)]), gen, spec.acquisition_augmentation))
            # Target: each patch's pixels, normalised per patch (He et al., 2022).
            target = F.unfold(xb, p, stride=p).transpose(1, 2)
            target = (target - target.mean(-1, keepdim=True)) / (target.var(-1, keepdim=True) + 1e-6).sqrt()
            tokens = vit.patch_tokens(xb)
            keep = torch.rand(len(xb), n_patches, generator=gen).argsort(dim=1)[:, :n_keep]
            visible = tokens.gather(1, keep[:, :, None].expand(-1, -1, vit.dim))
            pred = dec(vit.encode(visible)[:, 1:], keep, n_patches)
            masked = torch.ones(len(xb), n_patches, dtype=torch.bool)
            masked.scatter_(1, keep, False)
            loss = ((pred - target) ** 2).mean(-1)[masked].mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
    return vit.eval()


def random_init(architecture: str, seed: int = PRETRAIN_SEED) -> nn.Module:
    """A backbone initialised from ``seed`` (PyTorch default initialisation)."""
    with deterministic(seed):
        return make_backbone(architecture).eval()


TRAINERS: dict[str, Callable[[Mapping[str, PoolDraw], NeuralSpec], nn.Module]] = {
    "simclr": train_simclr,
    "multitask": train_multitask,
    "intask": train_multitask,
    "mae": train_mae,
}
#: Every piece ``zoo pretrain`` builds: the fitted classical state, then the neural zoo.
PIECES: tuple[str, ...] = ("pca", "kmeans", *NEURAL_ZOO)
# vit_random has its own seed so that it is not the MAE's starting point.
_SEED_OFFSET = {"vit_random": 1}


def piece_seed(piece: str) -> int:
    """Seed of one piece."""
    return PRETRAIN_SEED + _SEED_OFFSET.get(piece, 0)


def build_piece(piece: str, pools: PoolCache) -> tuple[dict[str, torch.Tensor], dict[str, object]]:
    """Fit or train one piece; returns its state and the facts recorded beside its hash."""
    seed = piece_seed(piece)
    if piece in ("pca", "kmeans"):
        draws = pools.get(BROAD_POOL)
        x = _float(torch.cat([as_uint8_tensor(d.images[:CLASSICAL_FIT_PER_DATASET]) for d in draws.values()]))
        with deterministic(seed):  # LAPACK reductions also depend on the thread count
            state = fit_pca(x, seed=seed) if piece == "pca" else fit_kmeans(x, seed=seed)
        return state, {"seed": seed, "pool": BROAD_POOL.name, "images": len(x), "generator": generator_version()}
    spec = NEURAL_ZOO[piece]
    if spec.method == "random":
        return _export(random_init(spec.architecture, seed)), {"seed": seed}
    assert spec.pool is not None
    draws = pools.get(spec.pool)
    module = TRAINERS[spec.method](draws, spec, seed)
    images = sum(len(d) for d in draws.values())
    meta: dict[str, object] = {"seed": seed, "pool": spec.pool.name, "images": images, "steps": spec.steps, "generator": generator_version()}
    if spec.method == "multitask":
        meta["attributes"] = ATTRIBUTE_SOURCE
    return _export(module), meta


def _cost(piece: str) -> float:
    """Rough relative cost of a piece (images through the network), for balancing workers."""
    spec = NEURAL_ZOO.get(piece)
    if spec is None or spec.method == "random":
        return 1.0
    views = 2 if spec.method == "simclr" else 1
    width = 2.2 if spec.architecture == "cnn_l" else 1.0
    return spec.steps * spec.batch_size * views * width


def _split(pieces: Sequence[str], jobs: int) -> list[list[str]]:
    """Pieces per worker: longest first, each to the least-loaded worker (order kept within a worker)."""
    groups: list[list[str]] = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for piece in sorted(pieces, key=_cost, reverse=True):
        k = load.index(min(load))
        groups[k].append(piece)
        load[k] += _cost(piece)
    return [sorted(g, key=list(pieces).index) for g in groups if g]


def _worker(folder: str, pieces: list[str], pool_seed: int, pool_folder: str, verbose: bool) -> dict[str, float]:
    pools = PoolCache(pool_seed, draw=functools.partial(draw_from_folder, pool_folder))
    return pretrain_zoo(Path(folder), pieces, pools, log=(lambda line: print(line, flush=True)) if verbose else None)


def _draw_to_folder(folder: str, dataset: str, n_images: int, all_sites: bool, pool_seed: int) -> None:
    save_draw(draw_file(Path(folder), dataset, n_images, all_sites), draw_pool(dataset, n_images, all_sites, seed=pool_seed))


def _pools_of(pieces: Sequence[str]) -> list[PoolSpec]:
    """The pools the pieces train or fit on, each once."""
    out: list[PoolSpec] = []
    for piece in pieces:
        spec = NEURAL_ZOO.get(piece)
        pool = BROAD_POOL if spec is None else spec.pool
        if pool is not None and pool not in out:
            out.append(pool)
    return out


def pretrain_zoo(
    out: Path | None = None,
    pieces: Sequence[str] | None = None,
    pools: PoolCache | None = None,
    log: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> dict[str, float]:
    """Rebuild the zoo's fitted and pretrained state into ``out`` (default: the weights folder).

    Parameters
    ----------
    out : pathlib.Path, optional
        Destination folder; files and ``manifest.json`` entries are (re)written.
    pieces : sequence of str, optional
        Subset of :data:`PIECES` (default: all).
    pools : PoolCache, optional
        Where pools come from (default: the cohort's pools at
        :data:`~crsbench_lib.encoders.recipes.POOL_SEED`).
    log : callable, optional
        Called with one line per finished piece.
    jobs : int
        Worker processes (each with its own pools and
        :data:`~crsbench_lib.encoders.recipes.PRETRAIN_THREADS` torch threads).
        The files do not depend on it; use one per core.

    Returns
    -------
    dict of str to float
        Seconds per piece, plus ``"pools"`` (time to draw the pools) and ``"total"``.

    Examples
    --------
    >>> import tempfile
    >>> t = pretrain_zoo(Path(tempfile.mkdtemp()), pieces=["cnn_random"])
    >>> sorted(t)
    ['cnn_random', 'pools', 'total']
    """
    pieces = list(PIECES if pieces is None else pieces)
    unknown = [p for p in pieces if p not in PIECES]
    if unknown:
        raise EncoderError(f"unknown pretraining piece(s) {unknown}; valid: {', '.join(PIECES)}")
    if not isinstance(jobs, int) or jobs < 1:
        raise EncoderError(f"jobs must be a positive integer, got {jobs!r}")
    folder = weights_dir(out)
    pools = pools or PoolCache()
    if jobs > 1 and len(pieces) > 1:
        timings = _pretrain_parallel(folder, pieces, pools.seed, log, jobs)
    else:
        timings = _pretrain_serial(folder, pieces, pools, log)
    # The zoo's shapes, for the torch-free cards (encoders.cards).
    manifest = read_manifest(folder)
    manifest["encoders"] = shape_facts(folder)
    write_manifest(folder, manifest)
    return timings


def _pretrain_serial(folder: Path, pieces: list[str], pools: PoolCache, log: Callable[[str], None] | None) -> dict[str, float]:
    """Build the pieces one after another in this process."""
    timings: dict[str, float] = {"pools": 0.0}
    t0 = time.perf_counter()
    for piece in pieces:
        spec = NEURAL_ZOO.get(piece)
        pool = BROAD_POOL if spec is None else spec.pool
        if pool is not None:  # drawn (once) before the clock of the piece starts
            t = time.perf_counter()
            pools.get(pool)
            timings["pools"] += time.perf_counter() - t
        t = time.perf_counter()
        state, meta = build_piece(piece, pools)
        seconds = time.perf_counter() - t
        timings[piece] = seconds
        meta.update(
            {
                "pool_seed": pools.seed,
                "torch": torch.__version__,
                "threads": PRETRAIN_THREADS,
                "seconds": round(seconds, 1),
                # The wall time means little without the machine's load (one-minute load average at the end).
                "load": round(os.getloadavg()[0], 1),
            }
        )
        digest = save_state(folder, f"{piece}.pt", state, meta)
        if log is not None:
            log(f"{piece}: {seconds:.1f} s, sha256 {digest[:12]}")
    timings["total"] = time.perf_counter() - t0
    return timings


def _pretrain_parallel(folder: Path, pieces: list[str], pool_seed: int, log: Callable[[str], None] | None, jobs: int) -> dict[str, float]:
    """Build groups of pieces in worker processes, each into a scratch folder, then move them into ``folder``."""
    import multiprocessing
    import tempfile
    from concurrent.futures import ProcessPoolExecutor

    t0 = time.perf_counter()
    groups = _split(pieces, jobs)
    timings: dict[str, float] = {"pools": 0.0}
    with tempfile.TemporaryDirectory(prefix="crsbench-pretrain-") as scratch:
        dirs = [Path(scratch) / f"worker{k}" for k in range(len(groups))]
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(len(groups), mp_context=ctx) as pool:
            # Every pool draw once, spread over the workers, stored for all of them to read.
            keys = {key for spec in _pools_of(pieces) for key in PoolCache(pool_seed).keys(spec)}
            draws = [pool.submit(_draw_to_folder, scratch, *key, pool_seed) for key in sorted(keys, key=lambda k: (-k[1], k))]
            for f in draws:
                f.result()
            timings["pools"] = time.perf_counter() - t0
            futures = [pool.submit(_worker, str(d), g, pool_seed, scratch, log is not None) for d, g in zip(dirs, groups)]
            for f in futures:
                for key, value in f.result().items():
                    if key != "total":
                        timings[key] = timings.get(key, 0.0) + value
        folder.mkdir(parents=True, exist_ok=True)
        manifest = read_manifest(folder)
        for d in dirs:
            for name, entry in read_manifest(d)["files"].items():
                atomic_write_bytes(folder / name, (d / name).read_bytes())
                manifest["files"][name] = entry
        write_manifest(folder, manifest)
    timings["total"] = time.perf_counter() - t0
    return timings
