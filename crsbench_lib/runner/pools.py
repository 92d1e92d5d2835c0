"""Pretraining pools of the zoo: images, auxiliary attributes, sites and task labels.

:func:`draw_pool` is the one place that talks to the cohort's pool API
(:func:`crsbench_lib.cohort.pretraining_pool`). Pools are disjoint from every
evaluation split (see :mod:`crsbench_lib.cohort.datasets`).

Auxiliary attributes (the targets of the multi-task encoders) are the
generator's scene parameters of each pool image (:func:`content_attributes`):
lesion size and structures, lesion counts, heart size, support devices and so
on, never the evaluation labels (kept apart in :attr:`PoolDraw.labels` and used
only by the in-task supervised encoder) and never the acquisition nuisances or
the site.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from crsbench_lib.encoders.recipes import POOL_SEED, PRETRAIN_SIDE, PoolSpec

#: Where the auxiliary attributes come from (recorded in the weights manifest and the cards).
ATTRIBUTE_SOURCE = "scene attributes of the generator (acquisition nuisances, site and shortcut cue left out)"


@dataclass
class PoolDraw:
    """One dataset's share of a pretraining pool.

    Attributes
    ----------
    images : numpy.ndarray
        ``uint8`` ``(N, H, W)`` or ``(N, H, W, 3)``.
    attributes : dict of str to numpy.ndarray
        Auxiliary targets, each with ``N`` rows: integer ``(N,)`` class codes,
        float ``(N,)`` or ``(N, K)`` values, or 0/1 ``uint8`` ``(N, K)`` flags.
    site_ids : numpy.ndarray
        ``int64`` ``(N,)``: index of the simulated site of each image (0 is the
        evaluation site).
    labels : numpy.ndarray
        The evaluation task's labels of the pool images (only the in-task
        supervised encoder may read them).
    """

    images: np.ndarray
    attributes: dict[str, np.ndarray] = field(default_factory=dict)
    site_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __len__(self) -> int:
        return len(self.images)


def content_attributes(dataset: str, attributes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The scene attributes of a pool as pretraining targets: acquisition nuisances and the site left out.

    An encoder supervised to report exposure, gamma, noise, blur or the site
    would learn to encode acquisition, which is what a reliable encoder should
    ignore. Counts and continuous values are returned as ``float32`` (regressed),
    binary and categorical attributes as ``int64`` class codes.
    """
    from crsbench_lib.cohort import pool_attributes
    from crsbench_lib.cohort.acquisition import NUISANCE_ATTRIBUTES
    from crsbench_lib.cohort.datasets import SITE_ATTRIBUTE

    from crsbench_lib.cohort import shortcut_cue

    # The shortcut cue is how a site works, not what the image shows: no
    # generalist's targets name it (an encoder may still learn it unasked).
    cue = shortcut_cue(dataset).name
    out = {}
    for name, spec in pool_attributes(dataset).items():
        if name in NUISANCE_ATTRIBUTES or name in (SITE_ATTRIBUTE, cue):
            continue
        values = np.asarray(attributes[name])
        out[name] = values.astype(np.float32) if spec.kind in ("continuous", "count") else values.astype(np.int64)
    return out


def draw_pool(dataset: str, n_images: int, all_sites: bool, seed: int = POOL_SEED, image_side: int = PRETRAIN_SIDE) -> PoolDraw:
    """Draw one dataset's pool through the cohort's pool API (the adapter to switch).

    Parameters
    ----------
    dataset : str
        Phantom dataset name.
    n_images : int
        Images to draw.
    all_sites : bool
        Every simulated pool site (True) or the evaluation site only.
    seed : int
        Pool seed.
    image_side : int
        Side in pixels.

    Returns
    -------
    PoolDraw
    """
    from crsbench_lib.cohort import pool_sites, pretraining_pool

    sites = None if all_sites else pool_sites(dataset)[:1]
    pool = pretraining_pool(dataset, n_images, seed=seed, image_side=image_side, sites=sites)
    site_index = {site: k for k, site in enumerate(pool_sites(dataset))}
    return PoolDraw(
        images=pool.images,
        attributes=content_attributes(dataset, pool.attributes),
        site_ids=np.array([site_index[s] for s in pool.site_ids], dtype=np.int64),
        labels=pool.labels,
    )


def generator_version() -> str:
    """Version of the cohort's generators that draw the pools (recorded beside every pretrained file)."""
    from crsbench_lib.cohort.datasets import GENERATOR_VERSION

    return str(GENERATOR_VERSION)


def phantom_datasets() -> tuple[str, ...]:
    """Names of the cohort's phantom datasets (the domains of a broad pool)."""
    from crsbench_lib.cohort import PHANTOM_DATASETS

    return tuple(PHANTOM_DATASETS)


DrawFn = Callable[..., PoolDraw]


def save_draw(path: Path, draw: PoolDraw) -> None:
    """Store a draw as one uncompressed ``.npz`` (attributes under ``attr:<name>``)."""
    arrays = {"images": draw.images, "site_ids": draw.site_ids, "labels": draw.labels}
    arrays.update({f"attr:{k}": v for k, v in draw.attributes.items()})
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def load_draw(path: Path) -> PoolDraw:
    """Read a draw stored by :func:`save_draw`."""
    with np.load(path) as z:
        attributes = {k.removeprefix("attr:"): z[k] for k in z.files if k.startswith("attr:")}
        return PoolDraw(z["images"], attributes, z["site_ids"], z["labels"])


def draw_file(folder: Path, dataset: str, n_images: int, all_sites: bool) -> Path:
    """Where a worker finds a pool draw that the parent process stored in ``folder``."""
    return Path(folder) / f"{dataset}-{n_images}-{'all' if all_sites else 'one'}.npz"


def draw_from_folder(folder: str, dataset: str, n_images: int, all_sites: bool, seed: int = POOL_SEED, image_side: int = PRETRAIN_SIDE) -> PoolDraw:
    """A :data:`DrawFn` that reads draws stored in ``folder`` (bind ``folder`` with :func:`functools.partial`)."""
    return load_draw(draw_file(Path(folder), dataset, n_images, all_sites))


class PoolCache:
    """Draws each (dataset, size, sites) pool once per pretraining session.

    Parameters
    ----------
    seed : int
        Pool seed.
    image_side : int
        Side in pixels.
    draw : callable, optional
        Replaces :func:`draw_pool` (tests use synthetic pools).
    datasets : sequence of str, optional
        Domains of a broad pool (default: :func:`phantom_datasets`).
    """

    def __init__(
        self, seed: int = POOL_SEED, image_side: int = PRETRAIN_SIDE, draw: DrawFn | None = None, datasets: Sequence[str] | None = None
    ) -> None:
        self.seed = seed
        self.image_side = image_side
        self._draw = draw or draw_pool
        self._datasets = tuple(datasets) if datasets is not None else None
        self._cache: dict[tuple[str, int, bool], PoolDraw] = {}

    def domains(self, spec: PoolSpec) -> tuple[str, ...]:
        """The datasets a pool spec draws from."""
        if spec.datasets is not None:
            return spec.datasets
        if self._datasets is None:
            self._datasets = phantom_datasets()
        return self._datasets

    def keys(self, spec: PoolSpec) -> list[tuple[str, int, bool]]:
        """The (dataset, size, all sites) draws a pool spec consists of."""
        return [(d, spec.n_per_dataset, spec.all_sites) for d in self.domains(spec)]

    def store(self, folder: Path) -> None:
        """Save every draw made so far into ``folder`` (see :func:`draw_from_folder`)."""
        for (d, n, all_sites), draw in self._cache.items():
            save_draw(draw_file(folder, d, n, all_sites), draw)

    def get(self, spec: PoolSpec) -> dict[str, PoolDraw]:
        """Per-dataset draws of a pool spec."""
        out = {}
        for d in self.domains(spec):
            key = (d, spec.n_per_dataset, spec.all_sites)
            if key not in self._cache:
                self._cache[key] = self._draw(d, spec.n_per_dataset, spec.all_sites, seed=self.seed, image_side=self.image_side)
            out[d] = self._cache[key]
        return out
