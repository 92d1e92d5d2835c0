"""The phantom cohort as :class:`~crsbench_lib.data.base.ImageDataset` objects.

Random streams
--------------
Every split is drawn in chunks of :data:`CHUNK` images. Chunk ``c`` of the test
split at site ``site`` of dataset ``name`` with data seed ``data_seed`` uses its
own generator, seeded by

    SeedSequence(ROOT_ENTROPY, spawn_key=(EVALUATION, dataset, data_seed, TEST, site, c))

and chunk ``c`` of a development split (train, val, calibration) of evaluation
seed ``s`` by

    SeedSequence(ROOT_ENTROPY, spawn_key=(EVALUATION, dataset, data_seed, split, site, DEVELOPMENT, s, c))

so the test images (and, through them, their corrupted versions and the site-B
test) are the same for every evaluation seed, while every seed draws new
training, validation and calibration images (method section 9, amendment 1).

and chunk ``c`` of a pretraining pool's share drawn at acquisition site ``site`` by

    SeedSequence(ROOT_ENTROPY, spawn_key=(POOL, dataset, seed, site, c)).

The first element of the spawn key separates the two key spaces, so no pool
stream is ever the stream of an evaluation split, whatever the seeds: an
encoder pretrained on a pool has seen images of the same *distribution* as the
evaluation splits (like a foundation model pretrained on other patients), but
never one of the evaluation images themselves. Images are continuous-valued
renderings of dozens of random parameters, so two distinct streams yielding a
bit-identical image is, in practice, impossible; ``tests/cohort`` checks it by
hashing. Chunking also makes splits prefix-stable (the first ``k`` images of a
split do not depend on the split's size, up to a chunk) and bounds memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from crsbench_lib.cohort import cxr, derm, fundus
from crsbench_lib.cohort.acquisition import Attribute
from crsbench_lib.cohort.shortcuts import SHIFT_PARTS, ShortcutCue, check_shift_parts
from crsbench_lib.data.base import DEVELOPMENT_SPLITS, SPLITS, ImageDataset, ImageSplit
from crsbench_lib.errors import DataError

#: Bump whenever any generator's output changes (part of every dataset version).
GENERATOR_VERSION = "10"
#: Root entropy of every phantom stream (an arbitrary fixed 128-bit number).
ROOT_ENTROPY = 0x6372_7362_656E_6368_2D63_6F68_6F72_7431
#: Images per independently seeded chunk.
CHUNK = 128
#: Smallest image side the generators support: below it lesions, microaneurysms
#: and nodules fall under one pixel and the anatomy is no longer drawn.
MIN_IMAGE_SIDE = 16
#: Default split sizes (the default profile's cohort); ``calibration`` defaults to ``val``.
DEFAULT_SIZES: Mapping[str, int] = {"train": 2000, "val": 1000, "test": 2000}
#: Keys of a sizes mapping.
SIZE_KEYS: tuple[str, ...] = ("train", "val", "calibration", "test", "shift_test")

_GENERATORS: dict[str, ModuleType] = {"derm": derm, "fundus": fundus, "cxr": cxr}
PHANTOM_DATASETS: tuple[str, ...] = tuple(_GENERATORS)

_EVALUATION, _POOL = 0, 1
_SPLIT_KEYS = {"train": 0, "val": 1, "test": 2, "calibration": 3}
# Marks a development split's stream (its spawn key then carries the evaluation seed).
_DEVELOPMENT = 1
_SITE_KEYS = {"A": 0, "B": 1, "P1": 2, "P2": 3, "P3": 4}
#: The auxiliary attribute every pool image carries besides its domain's ``ATTRIBUTES``.
SITE_ATTRIBUTE = "site"
#: The test-only "site" that holds the training site's test images with the shortcut cue removed
#: (the same images but for the cue: the cue ablation, :mod:`crsbench_lib.cohort.shortcuts`).
CUE_REMOVED_SITE = "A:cue_removed"


def generator_module(name: str) -> ModuleType:
    """The generator module of a phantom dataset (``derm``, ``fundus`` or ``cxr``).

    Raises
    ------
    DataError
        If ``name`` is not a phantom dataset.
    """
    try:
        return _GENERATORS[name]
    except KeyError:
        raise DataError(
            f"unknown phantom dataset {name!r} (expected one of {', '.join(PHANTOM_DATASETS)})"
        ) from None


def _check_side(image_side: int) -> int:
    if isinstance(image_side, bool) or not isinstance(image_side, (int, np.integer)):
        raise DataError(f"image_side must be an integer, got {image_side!r}")
    if image_side < MIN_IMAGE_SIDE:
        raise DataError(f"image_side must be at least {MIN_IMAGE_SIDE} pixels, got {image_side}")
    return int(image_side)


def _check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise DataError(f"{what} must be a positive integer, got {value!r}")
    if value <= 0:
        raise DataError(f"{what} must be a positive integer, got {value}")
    return int(value)


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _draw(
    module: ModuleType, keys: tuple[int, ...], n: int, side: int, site: str,
    shift_parts: tuple[str, ...] = SHIFT_PARTS, cue: bool = True,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``n`` images, labels and attributes, drawn chunk by chunk from the streams of ``keys``."""
    chunks = []
    for c in range(-(-n // CHUNK)):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(ROOT_ENTROPY, spawn_key=keys + (c,))))
        chunks.append(module.generate(rng, CHUNK, side, site, shift_parts=shift_parts, cue=cue))
    attributes = {k: np.concatenate([ch.attributes[k] for ch in chunks])[:n] for k in module.ATTRIBUTES}
    return np.concatenate([ch.images for ch in chunks])[:n], np.concatenate([ch.labels for ch in chunks])[:n], attributes


def resolve_sizes(sizes: Mapping[str, int] | None) -> dict[str, int]:
    """Validated split sizes: ``train``, ``val``, ``calibration``, ``test`` and ``shift_test``.

    Missing keys take :data:`DEFAULT_SIZES`; ``calibration`` defaults to ``val``
    and ``shift_test`` to ``test``.

    Raises
    ------
    DataError
        On an unknown key or a non-positive size.
    """
    given = dict(sizes or {})
    unknown = sorted(set(given) - set(SIZE_KEYS))
    if unknown:
        raise DataError(f"sizes: unknown key(s) {', '.join(unknown)} (expected {', '.join(SIZE_KEYS)})")
    out = {split: _check_count(given.get(split, DEFAULT_SIZES[split]), f"sizes[{split!r}]") for split in SPLITS}
    out["calibration"] = _check_count(given.get("calibration", out["val"]), "sizes['calibration']")
    out["shift_test"] = _check_count(given.get("shift_test", out["test"]), "sizes['shift_test']")
    return out


def dataset_version(
    name: str, seed: int, sizes: Mapping[str, int], image_side: int,
    shift_parts: Sequence[str] | None = None, cues: bool = True,
) -> str:
    """Version string of a phantom dataset: changes whenever its images would.

    Examples
    --------
    >>> dataset_version("cxr", 0, {}, 32)
    'phantom-cxr-g10-seed0-side32-n2000.1000.1000.2000.2000'
    >>> dataset_version("cxr", 0, {}, 32, shift_parts=["acquisition"], cues=False)
    'phantom-cxr-g10-seed0-side32-n2000.1000.1000.2000.2000-shift.acquisition-nocue'
    """
    s = resolve_sizes(sizes)
    parts = check_shift_parts(shift_parts)
    switches = ("" if parts == SHIFT_PARTS else "-shift." + ".".join(parts) if parts else "-shift.none") + (
        "" if cues else "-nocue")
    return (
        f"phantom-{name}-g{GENERATOR_VERSION}-seed{seed}-side{image_side}"
        f"-n{s['train']}.{s['val']}.{s['calibration']}.{s['test']}.{s['shift_test']}{switches}"
    )


def build_dataset(
    name: str, seed: int = 0, sizes: Mapping[str, int] | None = None, image_side: int = 32,
    shift_parts: Sequence[str] | None = None, cues: bool = True,
) -> ImageDataset:
    """Build a phantom dataset (lazily: each split is drawn on first access).

    Parameters
    ----------
    name : {"derm", "fundus", "cxr"}
        Phantom dataset (see :data:`PHANTOM_DATASETS`).
    seed : int, default 0
        Data seed: different data seeds give different test images (and
        different development images for every evaluation seed). The evaluation
        seed is the ``seed`` of :meth:`ImageDataset.split`.
    sizes : mapping, optional
        Split sizes with keys ``train``, ``val``, ``test`` and optionally
        ``calibration`` (defaults to ``val``) and ``shift_test`` (site B test
        size; defaults to ``test``). Missing keys take :data:`DEFAULT_SIZES`.
    image_side : int, default 32
        Image side in pixels, at least :data:`MIN_IMAGE_SIDE`.
    shift_parts : sequence of str, optional
        Which parts of site B's difference apply (:data:`SHIFT_PARTS`;
        None: all; an empty list: site B is site A's process on new patients).
    cues : bool, default True
        Draw the domain's shortcut cue at every site. With cues, the dataset
        also has the test-only site :data:`CUE_REMOVED_SITE`: the training
        site's test images without the cue.

    Returns
    -------
    ImageDataset
        With ``sites == ("A", "B")`` (train at A; site B has only a test split
        that differs from A's) and, with cues, ``ablation_sites ==
        (CUE_REMOVED_SITE,)``.

    Raises
    ------
    DataError
        On an unknown name, a bad seed, a non-positive size or a too small side.
    """
    module = generator_module(name)
    seed = _check_seed(seed)
    side = _check_side(image_side)
    resolved = resolve_sizes(sizes)
    parts = check_shift_parts(shift_parts)
    cues = bool(cues)
    ds_key = PHANTOM_DATASETS.index(name)

    def loader(split: str, site: str) -> ImageSplit:
        if split != "test":
            raise DataError(f"phantom dataset {name}: split {split!r} is drawn per evaluation seed (use split(..., seed=s))")
        drawn_at, cue = site, cues
        if site == CUE_REMOVED_SITE:  # the training site's test streams, drawn without the cue
            drawn_at, cue = module.SITES[0], False
        n = resolved["shift_test"] if drawn_at != module.SITES[0] else resolved["test"]
        keys = (_EVALUATION, ds_key, seed, _SPLIT_KEYS[split], _SITE_KEYS[drawn_at])
        images, labels, _ = _draw(module, keys, n, side, drawn_at, parts, cue)
        return ImageSplit(images=images, labels=labels, split=split, site=site)

    def development_loader(evaluation_seed: int) -> dict[str, ImageSplit]:
        site = module.SITES[0]
        out = {}
        for split in DEVELOPMENT_SPLITS:
            keys = (_EVALUATION, ds_key, seed, _SPLIT_KEYS[split], _SITE_KEYS[site], _DEVELOPMENT, int(evaluation_seed))
            images, labels, _ = _draw(module, keys, resolved[split], side, site, parts, cues)
            out[split] = ImageSplit(images=images, labels=labels, split=split, site=site)
        return out

    return ImageDataset(
        name=name,
        domain=module.DOMAIN,
        task=module.TASK,
        class_names=module.CLASS_NAMES,
        version=dataset_version(name, seed, resolved, side, parts, cues),
        loader=loader,
        sites=module.SITES,
        development_loader=development_loader,
        ablation_sites=(CUE_REMOVED_SITE,) if cues else (),
        development_sizes={split: resolved[split] for split in DEVELOPMENT_SPLITS},
    )


@dataclass(frozen=True)
class Pool:
    """A pretraining pool (see :func:`pretraining_pool`).

    Unpacks as ``images, attributes, site_ids``; the evaluation-task
    ``labels`` are reachable by name only, so that no recipe picks them up
    by accident.

    Attributes
    ----------
    images : numpy.ndarray
        ``uint8`` ``(N, H, W, 3)`` (derm, fundus) or ``(N, H, W)`` (cxr).
    attributes : dict of str to numpy.ndarray
        ``(N,)`` auxiliary attributes, described by :func:`pool_attributes`:
        scene parameters, acquisition nuisances and the site index. Never the
        evaluation label itself; but cxr's finding amounts are zero where a
        finding is absent, so a recipe that regresses them learns what a
        radiology report says (:mod:`crsbench_lib.cohort.design`).
    site_ids : numpy.ndarray
        ``(N,)`` site name of each image (``"A"``, ``"P1"``, ...).
    labels : numpy.ndarray
        The evaluation-task labels of the pool images, for the one encoder
        that is explicitly in-task supervised; every other recipe must use
        ``attributes`` only.
    """

    images: np.ndarray
    attributes: dict[str, np.ndarray]
    site_ids: np.ndarray
    labels: np.ndarray

    def __iter__(self) -> Iterator[Any]:
        return iter((self.images, self.attributes, self.site_ids))

    def __len__(self) -> int:
        return len(self.images)


def test_split_attributes(
    name: str, n_images: int, seed: int = 0, site: str = "A", image_side: int = 32
) -> dict[str, np.ndarray]:
    """The scene attributes of the first ``n_images`` of a phantom test split (as :func:`build_dataset` draws it).

    For world reports (how often the shortcut cue is drawn, the case mix at
    each site), without going through the images.

    Examples
    --------
    >>> attrs = test_split_attributes("cxr", 16)
    >>> attrs["portable_token"].shape
    (16,)
    """
    module = generator_module(name)
    if site not in module.SITES:
        raise DataError(f"phantom dataset {name}: unknown site {site!r} (has {', '.join(module.SITES)})")
    keys = (_EVALUATION, PHANTOM_DATASETS.index(name), _check_seed(seed), _SPLIT_KEYS["test"], _SITE_KEYS[site])
    return _draw(module, keys, _check_count(n_images, "n_images"), _check_side(image_side), site)[2]


def shortcut_cue(dataset: str) -> ShortcutCue:
    """The shortcut cue of a phantom dataset's domain (:mod:`crsbench_lib.cohort.shortcuts`).

    Examples
    --------
    >>> cue = shortcut_cue("derm")
    >>> cue.name, round(cue.odds_ratio("A"), 1), cue.odds_ratio("B")
    ('ink_marking', 11.5, 1.0)
    """
    return generator_module(dataset).CUE


def pool_sites(dataset: str) -> tuple[str, ...]:
    """Acquisition sites a pool of ``dataset`` may draw from (its training site first).

    Shift sites used for evaluation (cxr's ``B``) are never among them: a
    pretrained encoder has not seen the second hospital's scanner.
    """
    return generator_module(dataset).POOL_SITES


def pool_attributes(dataset: str) -> dict[str, Attribute]:
    """What each key of a pool's ``attributes`` is: the domain's ``ATTRIBUTES`` plus ``site``."""
    module = generator_module(dataset)
    site = Attribute("categorical", len(module.POOL_SITES), f"acquisition site, index into {module.POOL_SITES}")
    return {**module.ATTRIBUTES, SITE_ATTRIBUTE: site}


def pretraining_pool(
    dataset: str, n_images: int, seed: int = 0, image_side: int = 32, sites: Sequence[str] | None = None
) -> Pool:
    """Images for pretraining encoders, disjoint from every evaluation split.

    Drawn from the pool key space (see the module docstring). The images are
    shared out evenly over ``sites`` and interleaved (image ``i`` comes from
    ``sites[i % len(sites)]``), each site's share from its own streams, so a
    pool's images at one site do not depend on which other sites it has.

    Parameters
    ----------
    dataset : {"derm", "fundus", "cxr"}
        Phantom dataset whose generator draws the pool.
    n_images : int
        Pool size (positive).
    seed : int, default 0
        Pool seed (independent of the evaluation seeds).
    image_side : int, default 32
        Image side in pixels.
    sites : sequence of str, optional
        Acquisition sites (a subset of :func:`pool_sites`); default all of
        them (a broad pool). ``("A",)`` gives a narrow single-site pool.

    Returns
    -------
    Pool
        Images, auxiliary attributes, site ids and (in-task) labels.

    Raises
    ------
    DataError
        On an unknown dataset or site, a non-positive size, a bad seed or a
        too small side.

    Examples
    --------
    >>> broad = pretraining_pool("derm", 8)
    >>> broad.images.shape, sorted(set(broad.site_ids.tolist()))
    ((8, 32, 32, 3), ['A', 'P1', 'P2', 'P3'])
    >>> narrow = pretraining_pool("cxr", 4, sites=("A",))
    >>> narrow.images.shape, int(narrow.attributes["site"].max())
    ((4, 32, 32), 0)
    """
    module = generator_module(dataset)
    n = _check_count(n_images, "n_images")
    seed = _check_seed(seed)
    side = _check_side(image_side)
    allowed = module.POOL_SITES
    chosen = tuple(allowed if sites is None else sites)
    bad = [s for s in chosen if s not in allowed]
    if bad or not chosen or len(set(chosen)) != len(chosen):
        raise DataError(
            f"pretraining_pool: sites must be distinct sites of {dataset} "
            f"({', '.join(allowed)}), got {', '.join(map(str, chosen)) or 'none'}"
        )
    per_site = -(-n // len(chosen))
    parts = [
        _draw(module, (_POOL, PHANTOM_DATASETS.index(dataset), seed, _SITE_KEYS[site]), per_site, side, site)
        for site in chosen
    ]

    def interleave(arrays: list[np.ndarray]) -> np.ndarray:
        stacked = np.stack(arrays, axis=1)
        return stacked.reshape((-1,) + stacked.shape[2:])[:n]

    attributes = {k: interleave([p[2][k] for p in parts]) for k in module.ATTRIBUTES}
    site_index = np.array([allowed.index(s) for s in chosen], dtype=np.int64)
    attributes[SITE_ATTRIBUTE] = interleave([np.full(per_site, i) for i in site_index])
    site_ids = np.asarray(allowed)[attributes[SITE_ATTRIBUTE]]
    return Pool(interleave([p[0] for p in parts]), attributes, site_ids, interleave([p[1] for p in parts]))
