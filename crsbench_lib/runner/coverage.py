"""The simulation side of the self-audit (issue 27, item 7: the benchmark audits itself).

No peer benchmark can check its intervals against the truth; in the phantom
world the truth is reachable. This module draws what the audit needs from the
generator and turns it into predictions in the package's own format
(:class:`~crsbench_lib.results.predictions.ConditionPredictions`); the scoring
side (:mod:`crsbench_lib.scoring.coverage`) computes the truth and every
replicate's intervals from them with the package's own interval machinery and
counts the coverage.

Images
------
One phantom dataset is drawn with the audit's own data seed
(:data:`AUDIT_DATA_SEED`). A data seed is part of every evaluation stream's
spawn key (:mod:`crsbench_lib.cohort.datasets`), so none of these images is an
image of a run with data seed 0 (the profiles'), nor of a pretraining pool
(another key space). From it:

* the **truth test set**: the first ``truth_test`` test images (20,000 by
  default); every corruption condition corrupts its first ``truth_corrupted``;
* the **replicate test pool**: the next ``n_blocks * block_pool`` test images,
  in ``n_blocks`` parts (one per block of the profile's corruption layout:
  16 blocks of 125 images in a 2,000-image test split), each corrupted under
  the conditions whose block it is;
* the **development pool**: ``pool_train`` training and ``pool_val``
  validation images (evaluation seed 0 of the audit data seed).

Every encoder embeds these once (:func:`embed_pools`, cached on disk keyed by a
hash of everything that determines the numbers).

Draws
-----
A *training draw* is a train and a validation set of the profile's sizes,
drawn without replacement from the development pool. A *replicate* is the
benchmark's own protocol: the profile's seeds, each with its own training draw
(disjoint within the replicate), and one test set of the profile's size whose
block ``j`` holds ``n`` images drawn without replacement from pool part ``j``;
each condition's corrupted rows are its block's images, corrupted. A subset
chosen independently of the images of a set of independent draws is itself a
set of independent draws, so every replicate is, on its own, a fresh draw of
the benchmark from the generator. Replicates share images (two replicates'
training sets overlap in ``train / pool_train`` of their images on average),
which correlates them a little and leaves the expected coverage unchanged.
The truth's training draws come from the same pool (their own stream) and are
evaluated on the truth test set, which no replicate sees.

Post-hoc calibrators are not fitted (``calibrators=()``): no axis reads them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from crsbench_lib import __version__
from crsbench_lib.atomic import atomic_path
from crsbench_lib.cohort.shortcuts import SHIFT_PARTS
from crsbench_lib.errors import ConfigError
from crsbench_lib.results.predictions import ConditionPredictions
from crsbench_lib.runner.profile import Profile

#: Data seed of the audit's phantom images: no profile uses it (theirs is 0), so no
#: audit image is an image of a run (method section 9, amendment 1; cohort.datasets).
AUDIT_DATA_SEED = 2_718_281
#: Spawn-key tags of the audit's own random streams (which images a draw takes).
_REPLICATE_STREAM, _TRUTH_STREAM = 0, 1
#: The default audit: two classical baselines and three pretrained encoders that
#: differ (a broad self-supervised, a broad multi-task and a narrow dermatology one).
DEFAULT_ENCODERS: tuple[str, ...] = (
    "pixels", "hog", "simclr_broad_aug_s", "multitask_broad_aug_s", "simclr_derm_aug_s",
)
#: The default corruption families: one acquisition family and one of the domain's own.
DEFAULT_FAMILIES: tuple[str, ...] = ("gaussian_blur", "black_corner")
#: A family list of this one name means every corruption family of the audited dataset's domain.
ALL_FAMILIES = "all"


@dataclass(frozen=True)
class AuditSize:
    """How large an audit is: what it audits and how many draws it makes (one preset of :data:`AUDIT_PRESETS`).

    Attributes
    ----------
    encoders, families : tuple of str
        Audited encoders and corruption families.
    replicates, truth_draws, truth_test, truth_corrupted, pool_factor : int
        See :func:`design_from_profile`.
    draws : int
        Bootstrap draws per replicate.
    truth_bootstrap_draws : int
        Bootstrap draws giving the truth's Monte-Carlo error.
    """

    encoders: tuple[str, ...]
    families: tuple[str, ...]
    replicates: int
    truth_draws: int
    truth_test: int
    truth_corrupted: int
    pool_factor: int
    draws: int
    truth_bootstrap_draws: int


#: Named audit sizes. ``benchmark``: the larger audit (``crsbench coverage``'s default,
#: about 15 minutes on 2 cores); ``chapter``: the book's chapter on the default profile
#: (a few minutes cold: a hand-crafted baseline, a broad and a narrow pretrained encoder);
#: ``smoke``: the chapter on the test suite's quick profile (seconds).
AUDIT_PRESETS: dict[str, AuditSize] = {
    "benchmark": AuditSize(DEFAULT_ENCODERS, DEFAULT_FAMILIES, replicates=16, truth_draws=16, truth_test=20_000,
                           truth_corrupted=2_000, pool_factor=8, draws=1000, truth_bootstrap_draws=200),
    "chapter": AuditSize(("hog", "multitask_broad_aug_s", "simclr_derm_aug_s"), ("gaussian_blur",), replicates=8,
                         truth_draws=6, truth_test=6_000, truth_corrupted=1_000, pool_factor=4, draws=500,
                         truth_bootstrap_draws=100),
    "smoke": AuditSize(("pixels", "hog"), ("gaussian_blur",), replicates=2, truth_draws=2, truth_test=600,
                       truth_corrupted=100, pool_factor=2, draws=60, truth_bootstrap_draws=30),
    # A close race (issue 46, item 6): three encoders whose CRS on the default run's derm rows lie within 0.03; the
    # truth at the benchmark's size (at the chapter's its own error of a CRS difference, 0.079, was the margin's).
    "close_race": AuditSize(("multitask_broad_aug_s", "multitask_broad_aug_l", "multitask_broad_noaug_s"),
                            ("gaussian_blur", "black_corner"), replicates=16, truth_draws=16, truth_test=20_000,
                            truth_corrupted=2_000, pool_factor=8, draws=1000, truth_bootstrap_draws=200),
    # Every corruption family of the dataset's domain (ALL_FAMILIES), with the site term: every term of R.
    "all_families": AuditSize(("hog", "multitask_broad_aug_s", "simclr_derm_aug_s"), (ALL_FAMILIES,), replicates=8,
                              truth_draws=6, truth_test=6_000, truth_corrupted=500, pool_factor=4, draws=500,
                              truth_bootstrap_draws=100),
}
#: The preset the book's chapter uses per profile (``book``); profiles not named take ``chapter``.
BOOK_PRESETS: dict[str, str] = {"quick": "smoke"}


def audit_preset(name: str, profile: str = "default") -> AuditSize:
    """The audit size called ``name``; ``book`` is the chapter's size for ``profile``.

    Raises
    ------
    ConfigError
        On an unknown preset (the message lists the valid ones).

    Examples
    --------
    >>> audit_preset("book", "quick") == AUDIT_PRESETS["smoke"], audit_preset("book", "default").replicates
    (True, 8)
    """
    if name == "book":
        name = BOOK_PRESETS.get(profile, "chapter")
    if name not in AUDIT_PRESETS:
        raise ConfigError(f"unknown audit preset {name!r}; valid presets: {', '.join([*AUDIT_PRESETS, 'book'])}")
    return AUDIT_PRESETS[name]


@dataclass(frozen=True)
class AuditDesign:
    """What the audit simulates: the profile's protocol on one phantom dataset.

    Attributes
    ----------
    encoders : tuple of str
        Zoo encoders audited (at least two).
    dataset : str
        The phantom dataset (``derm``, ``fundus`` or ``cxr``).
    families : tuple of str
        Corruption families entering ``R`` (every severity of the profile).
    n_replicates : int
        Replicates of the benchmark's protocol.
    n_truth_draws : int
        Training draws averaged into the truth.
    truth_test, truth_corrupted : int
        Truth test images, and how many of them each condition corrupts.
    block_pool : int
        Pool images per block of a replicate's test set.
    pool_train, pool_val : int
        Development pool.
    train, val, test : int
        A replicate's split sizes (the profile's).
    seeds : tuple of int
        The profile's seeds.
    severities : tuple of int
    n_per_condition : int
        Test images per corruption condition (the profile's ``corruptions.n_images``).
    layout : str
        The profile's corruption layout.
    corruption_seed : int
    image_side : int
    batch_size : int
    label_fractions : tuple of float
    ece_bins : int
    probe : dict
        The profile's probe settings, as written (calibrators removed).
    data_seed : int
    shift_parts : tuple of str
        The profile's parts of site B's difference (:data:`~crsbench_lib.cohort.shortcuts.SHIFT_PARTS`).
    cues : bool
        Whether the profile draws the domain's shortcut cue.
    site_term : bool
        Simulate the site-B test set, so that ``R`` carries its site term as the profile's does (issue 46, item
        6): a replicate draws ``test`` site-B images from a pool of ``n_blocks * block_pool``, the truth others.
    """

    encoders: tuple[str, ...]
    dataset: str
    families: tuple[str, ...]
    n_replicates: int
    n_truth_draws: int
    truth_test: int
    truth_corrupted: int
    block_pool: int
    pool_train: int
    pool_val: int
    train: int
    val: int
    test: int
    seeds: tuple[int, ...]
    severities: tuple[int, ...]
    n_per_condition: int
    layout: str
    corruption_seed: int
    image_side: int
    batch_size: int
    label_fractions: tuple[float, ...]
    ece_bins: int
    probe: dict[str, Any] = field(default_factory=dict)
    data_seed: int = AUDIT_DATA_SEED
    shift_parts: tuple[str, ...] = SHIFT_PARTS
    cues: bool = True
    site_term: bool = True

    def __post_init__(self) -> None:
        _check_design(self)

    @property
    def n_blocks(self) -> int:
        """Blocks of a replicate's test set (``test / n_per_condition``)."""
        return self.test // self.n_per_condition

    @property
    def conditions(self) -> list[tuple[str, int]]:
        """(family, severity) of every corruption condition, sorted."""
        return sorted((f, s) for f in self.families for s in self.severities)

    def simulation_hash(self) -> str:
        """SHA-256 over everything that decides the predictions, replicates' count aside."""
        facts = asdict(self)
        facts.pop("n_replicates")
        return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()


def _check_design(d: AuditDesign) -> None:
    def positive(name: str) -> None:
        value = getattr(d, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ConfigError(f"coverage audit: {name} must be a positive integer, found {value!r}")

    for name in ("n_replicates", "n_truth_draws", "truth_test", "truth_corrupted", "block_pool", "pool_train",
                 "pool_val", "train", "val", "test", "n_per_condition"):
        positive(name)
    if len(set(d.encoders)) < 2 or len(set(d.encoders)) != len(d.encoders):
        raise ConfigError(f"coverage audit: at least two distinct encoders are needed, found {list(d.encoders)}")
    if not d.families:
        raise ConfigError("coverage audit: at least one corruption family is needed (R enters the CRS)")
    if d.test % d.n_per_condition:
        raise ConfigError(f"coverage audit: the test size {d.test} is not a multiple of the "
                          f"{d.n_per_condition} images per condition")
    if d.layout != "per_condition":
        raise ConfigError(f"coverage audit: only the per_condition corruption layout is simulated, found {d.layout!r}")
    if d.block_pool < d.n_per_condition or d.truth_corrupted > d.truth_test:
        raise ConfigError("coverage audit: block_pool must hold a block and truth_corrupted fit the truth test set")
    if d.pool_train < len(d.seeds) * d.train or d.pool_val < len(d.seeds) * d.val:
        raise ConfigError(f"coverage audit: the development pool ({d.pool_train} / {d.pool_val}) must hold "
                          f"{len(d.seeds)} disjoint training draws of {d.train} / {d.val}")


def _check_names(dataset: str, encoders: Sequence[str], families: Sequence[str]) -> None:
    """Refuse an encoder the registry does not build or a family the dataset's domain lacks, before any work."""
    from crsbench_lib.cohort.corruptions import corruption_families
    from crsbench_lib.encoders.registry import available_encoders, hub_prefix

    known = available_encoders()
    for name in encoders:
        if name not in known and hub_prefix(name) is None:
            raise ConfigError(f"coverage audit: unknown encoder {name!r}; valid encoders: {', '.join(known)}")
    valid = corruption_families(dataset)
    for family in families:
        if family not in valid:
            raise ConfigError(f"coverage audit: unknown corruption family {family!r} for {dataset}; "
                              f"valid families: {', '.join(valid)}")


def design_from_profile(
    profile: Profile,
    dataset: str = "derm",
    encoders: Sequence[str] = DEFAULT_ENCODERS,
    families: Sequence[str] = DEFAULT_FAMILIES,
    n_replicates: int = 20,
    n_truth_draws: int = 16,
    truth_test: int = 20_000,
    truth_corrupted: int = 2_000,
    block_pool: int = 1_000,
    pool_factor: int = 8,
    site_term: bool = True,
) -> AuditDesign:
    """The audit of ``profile``'s protocol on one of its phantom datasets.

    Split sizes, seeds, image side, probe, corruption severities, images per
    condition, layout and seed, label fractions and ECE bins are the profile's
    (its label fractions and bins are its standard's).

    Parameters
    ----------
    profile : Profile
        E.g. ``load_profile("default")``.
    dataset : str
        A phantom dataset of the profile.
    encoders, families : sequence of str
        Audited encoders and corruption families (``("all",)``: every family
        of the dataset's domain).
    n_replicates, n_truth_draws, truth_test, truth_corrupted, block_pool : int
        See :class:`AuditDesign`.
    pool_factor : int
        The development pool holds ``pool_factor`` times a seed's train and validation sizes.
    site_term : bool
        Simulate the site-B test set (see :class:`AuditDesign`).

    Returns
    -------
    AuditDesign

    Raises
    ------
    ConfigError
        If the dataset is not a phantom dataset of the profile or a size is invalid.

    Examples
    --------
    >>> from crsbench_lib.runner.config import load_profile
    >>> design = design_from_profile(load_profile("default"), n_replicates=2)
    >>> design.train, design.test, design.seeds, design.n_blocks
    (2000, 2000, (0, 1, 2), 16)
    """
    specs = [s for s in profile.datasets if s.name == dataset and s.kind == "phantom"]
    if not specs:
        valid = [s.name for s in profile.datasets if s.kind == "phantom"]
        raise ConfigError(f"coverage audit: {dataset!r} is not a phantom dataset of profile {profile.name!r} "
                          f"(its phantom datasets: {', '.join(valid) or 'none'})")
    if tuple(families) == (ALL_FAMILIES,):
        from crsbench_lib.cohort.corruptions import corruption_families

        families = tuple(corruption_families(dataset))
    _check_names(dataset, encoders, families)
    options = specs[0].options
    sizes = options["sizes"]
    probe = dict(profile.probe.written())
    probe["calibrators"] = []
    corruptions = profile.corruptions
    return AuditDesign(
        encoders=tuple(encoders), dataset=dataset, families=tuple(families), n_replicates=int(n_replicates),
        n_truth_draws=int(n_truth_draws), truth_test=int(truth_test), truth_corrupted=int(truth_corrupted),
        block_pool=int(block_pool), pool_train=int(pool_factor) * int(sizes["train"]),
        pool_val=int(pool_factor) * int(sizes["val"]), train=int(sizes["train"]), val=int(sizes["val"]),
        test=int(sizes["test"]), seeds=tuple(int(s) for s in profile.seeds),
        severities=tuple(int(s) for s in corruptions.severities),
        n_per_condition=int(corruptions.n_images or sizes["test"]), layout=corruptions.layout,
        corruption_seed=int(corruptions.seed), image_side=int(options["image_side"]),
        batch_size=int(profile.embedding.batch_size), label_fractions=tuple(profile.label_fractions),
        ece_bins=int(profile.ece_bins), probe=probe,
        shift_parts=tuple(options.get("shift_parts", SHIFT_PARTS)), cues=bool(options.get("cues", True)),
        site_term=bool(site_term),
    )


# ---------------------------------------------------------------------------
# Images and embeddings
# ---------------------------------------------------------------------------


def audit_dataset(design: AuditDesign) -> Any:
    """The audit's phantom dataset (lazy): test = truth set + replicate test pool, development = the pool."""
    from crsbench_lib.cohort.datasets import build_dataset

    pool = design.truth_test + design.n_blocks * design.block_pool
    sizes = {"train": design.pool_train, "val": design.pool_val, "calibration": 1, "test": pool,
             "shift_test": pool if design.site_term else 1}
    return build_dataset(design.dataset, seed=design.data_seed, sizes=sizes, image_side=design.image_side,
                         shift_parts=design.shift_parts, cues=design.cues)


def condition_blocks(design: AuditDesign, domain: str) -> dict[tuple[str, int], int]:
    """The block of a replicate's test set that each condition corrupts (the profile's layout).

    Examples
    --------
    >>> from crsbench_lib.runner.config import load_profile
    >>> blocks = condition_blocks(design_from_profile(load_profile("default")), "dermatology")
    >>> blocks[("gaussian_blur", 1)], blocks[("black_corner", 5)]
    (5, 1)
    """
    from crsbench_lib.cohort.corruptions import first_image, image_block_index

    return {
        (f, s): first_image(design.layout, image_block_index(domain, f), s, design.n_per_condition, design.test)
        // design.n_per_condition
        for f, s in design.conditions
    }


@dataclass
class PoolEmbeddings:
    """One encoder's embeddings of every audit image set (see the module docstring).

    ``truth_corrupted[c]`` embeds the first ``truth_corrupted`` truth images under
    condition ``c``; ``block_corrupted[c]`` the pool part of the condition's block;
    ``shift`` the site-B test split (truth set first, then the replicates' pool),
    None without the site term.
    """

    encoder: str
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    truth_corrupted: dict[tuple[str, int], np.ndarray]
    block_corrupted: dict[tuple[str, int], np.ndarray]
    shift: np.ndarray | None = None


@dataclass
class PoolLabels:
    """Labels of the audit's image sets, with the dataset's task facts."""

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    task: str
    n_classes: int
    domain: str
    version: str
    shift: np.ndarray | None = None


def _pool_file(root: Path, design: AuditDesign, encoder: Any) -> Path:
    from crsbench_lib.cohort.corruptions import CORRUPTION_VERSION

    key = {"simulation": design.simulation_hash(), "encoder": encoder.name, "weights": encoder.weights_hash,
           "corruption_version": CORRUPTION_VERSION, "torch_threads": 1, "package": __version__}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    return root / "embeddings" / f"{encoder.name}-{design.dataset}-{digest}.npz"


def _labels_file(root: Path, design: AuditDesign) -> Path:
    return root / "embeddings" / f"labels-{design.dataset}-{design.simulation_hash()[:24]}.npz"


def embed_pools(design: AuditDesign, root: Path, encoders: Sequence[str] | None = None) -> list[Path]:
    """Embed every audit image set with each encoder (one torch thread), cached under ``root``.

    A cached file is reused when its key (the design's simulation hash, the
    encoder's weights hash, the corruption version, the package version)
    matches. Images are drawn once per call, whatever the number of encoders.

    Returns
    -------
    list of pathlib.Path
        The ``.npz`` file of each encoder.
    """
    from crsbench_lib.embeddings.batch import embed_images
    from crsbench_lib.embeddings.store import corrupted_images
    from crsbench_lib.encoders.registry import build_encoder
    from crsbench_lib.runner.executors import set_torch_threads

    set_torch_threads(1)
    names = design.encoders if encoders is None else tuple(encoders)
    dataset = audit_dataset(design)
    paths = []
    labels_path = _labels_file(root, design)
    for name in names:
        encoder = build_encoder(name, image_side=design.image_side)
        path = _pool_file(root, design, encoder)
        paths.append(path)
        if path.exists() and labels_path.exists():
            continue
        blocks = condition_blocks(design, dataset.domain)
        train, val = dataset.split("train", seed=0), dataset.split("val", seed=0)
        test = dataset.split("test")

        def embed(images: np.ndarray, enc: Any = encoder) -> np.ndarray:
            return embed_images(enc, images, design.batch_size)

        arrays = {"train": embed(train.images), "val": embed(val.images), "test": embed(test.images)}
        shift = dataset.split("test", dataset.shift_site) if design.site_term and dataset.shift_site else None
        if shift is not None:
            arrays["shift"] = embed(shift.images)
        for c, (f, s) in enumerate(design.conditions):
            arrays[f"truth_{c}"] = embed(corrupted_images(dataset, "test", None, f, s, design.corruption_seed,
                                                          design.truth_corrupted, 0))
            start = design.truth_test + blocks[(f, s)] * design.block_pool
            arrays[f"block_{c}"] = embed(corrupted_images(dataset, "test", None, f, s, design.corruption_seed,
                                                          design.block_pool, start))
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez(tmp, **arrays)
        if not labels_path.exists():
            with atomic_path(labels_path, suffix=".npz") as tmp:
                np.savez(tmp, train=train.labels, val=val.labels, test=test.labels,
                         **({} if shift is None else {"shift": shift.labels}),
                         facts=np.array(json.dumps({"task": dataset.task, "n_classes": dataset.n_classes,
                                                    "domain": dataset.domain, "version": dataset.version})))
    return paths


# The last audit's pools, per process: a worker scores many replicates of one design.
_POOL_MEMO: dict[tuple[str, str], tuple[dict[str, PoolEmbeddings], PoolLabels]] = {}


def load_pools(design: AuditDesign, root: Path) -> tuple[dict[str, PoolEmbeddings], PoolLabels]:
    """The cached embeddings of every encoder (:func:`embed_pools` must have run) and the labels.

    Kept in memory per process for the last design read.
    """
    from crsbench_lib.encoders.registry import build_encoder

    memo = (design.simulation_hash(), str(root))
    if memo in _POOL_MEMO:
        return _POOL_MEMO[memo]
    _POOL_MEMO.clear()
    out = {}
    for name in design.encoders:
        with np.load(_pool_file(root, design, build_encoder(name, image_side=design.image_side))) as z:
            out[name] = PoolEmbeddings(
                name, z["train"], z["val"], z["test"],
                {c: z[f"truth_{i}"] for i, c in enumerate(design.conditions)},
                {c: z[f"block_{i}"] for i, c in enumerate(design.conditions)},
                z["shift"] if "shift" in z.files else None,
            )
    with np.load(_labels_file(root, design)) as z:
        facts = json.loads(str(z["facts"]))
        labels = PoolLabels(z["train"], z["val"], z["test"], facts["task"], int(facts["n_classes"]),
                            facts["domain"], facts["version"], z["shift"] if "shift" in z.files else None)
    _POOL_MEMO[memo] = (out, labels)
    return out, labels


# ---------------------------------------------------------------------------
# Draws and their predictions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Draw:
    """Positions of one replicate (or one truth draw) in the audit's image sets.

    ``train[i]`` / ``val[i]``: development-pool positions of seed ``i``'s sets;
    ``test``: test-split positions of the test set (the truth set's for a truth
    draw); ``corrupted[c]``: (positions in this test set, rows of the
    condition's corrupted array); ``shift``: site-B test-split positions
    (None without the site term).
    """

    train: tuple[np.ndarray, ...]
    val: tuple[np.ndarray, ...]
    test: np.ndarray
    corrupted: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]
    shift: np.ndarray | None = None


def _stream(design: AuditDesign, tag: int, index: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(design.data_seed, spawn_key=(tag, int(index))))


def replicate_draw(design: AuditDesign, replicate: int, blocks: dict[tuple[str, int], int]) -> Draw:
    """The images of replicate ``replicate`` (deterministic in the design and the index).

    Examples
    --------
    >>> from crsbench_lib.runner.config import load_profile
    >>> d = design_from_profile(load_profile("default"))
    >>> draw = replicate_draw(d, 0, condition_blocks(d, "dermatology"))
    >>> len(draw.train), draw.train[0].size, draw.test.size, len(set(np.concatenate(draw.train).tolist()))
    (3, 2000, 2000, 6000)
    """
    rng = _stream(design, _REPLICATE_STREAM, replicate)
    k = len(design.seeds)
    train = rng.permutation(design.pool_train)[: k * design.train].reshape(k, design.train)
    val = rng.permutation(design.pool_val)[: k * design.val].reshape(k, design.val)
    n = design.n_per_condition
    within = np.stack([rng.permutation(design.block_pool)[:n] for _ in range(design.n_blocks)])  # (blocks, n)
    test = (design.truth_test + np.arange(design.n_blocks)[:, None] * design.block_pool + within).ravel()
    corrupted = {c: (np.arange(b * n, (b + 1) * n), within[b]) for c, b in blocks.items()}
    # Drawn after everything else, so the site-A positions do not depend on the site term.
    shift = (design.truth_test + np.sort(rng.permutation(design.n_blocks * design.block_pool)[: design.test])
             if design.site_term else None)
    return Draw(tuple(np.sort(t) for t in train), tuple(np.sort(v) for v in val), test, corrupted, shift)


def truth_draw(design: AuditDesign, k: int) -> Draw:
    """Training draw ``k`` of the truth (one seed), on the truth test set."""
    rng = _stream(design, _TRUTH_STREAM, k)
    train = np.sort(rng.permutation(design.pool_train)[: design.train])
    val = np.sort(rng.permutation(design.pool_val)[: design.val])
    rows = np.arange(design.truth_corrupted)
    shift = np.arange(design.truth_test) if design.site_term else None
    return Draw((train,), (val,), np.arange(design.truth_test), {c: (rows, rows) for c in design.conditions}, shift)


def draw_predictions(
    design: AuditDesign, pools: dict[str, PoolEmbeddings], labels: PoolLabels, draw: Draw, truth: bool,
    seeds: Sequence[int],
) -> list[ConditionPredictions]:
    """Every encoder's and seed's predictions on one draw, by the package's cell evaluation.

    Seed ``seeds[i]`` takes the draw's ``i``-th training sets; the probe,
    label fractions and ECE bins are the profile's
    (:func:`~crsbench_lib.evaluation.evaluate_cell_predictions`).
    """
    from crsbench_lib.evaluation import CellEmbeddings, evaluate_cell_predictions
    from crsbench_lib.evaluation.cell import ProbeConfig

    probe = ProbeConfig.from_written(design.probe)
    out: list[ConditionPredictions] = []
    for name in design.encoders:
        pool = pools[name]
        corrupted_source = pool.truth_corrupted if truth else pool.block_corrupted
        site = draw.shift if pool.shift is not None and labels.shift is not None else None
        for i, seed in enumerate(seeds):
            cell = CellEmbeddings(
                train=pool.train[draw.train[i]], train_labels=labels.train[draw.train[i]],
                val=pool.val[draw.val[i]], val_labels=labels.val[draw.val[i]],
                test=pool.test[draw.test], test_labels=labels.test[draw.test],
                corrupted={c: corrupted_source[c][rows] for c, (_, rows) in draw.corrupted.items()},
                corrupted_images={c: positions for c, (positions, _) in draw.corrupted.items()},
                shift_test=None if site is None else pool.shift[site],
                shift_labels=None if site is None else labels.shift[site],
            )
            meta = {"encoder": name, "dataset": design.dataset, "domain": labels.domain, "arm": "frozen",
                    "config_hash": design.simulation_hash(), "package_version": __version__}
            out += evaluate_cell_predictions(cell, labels.task, labels.n_classes, seed=int(seed),
                                             label_fractions=design.label_fractions, ece_bins=design.ece_bins,
                                             probe=probe, meta=meta)
    return out


def truth_predictions(design: AuditDesign, root: Path, draws: Sequence[int] | None = None) -> list[ConditionPredictions]:
    """Predictions of the truth: training draws ``draws`` (default all ``n_truth_draws``; draw k as seed k)
    on the truth test set."""
    pools, labels = load_pools(design, root)
    out: list[ConditionPredictions] = []
    for k in range(design.n_truth_draws) if draws is None else draws:
        out += draw_predictions(design, pools, labels, truth_draw(design, k), True, (k,))
    return out


def replicate_predictions(design: AuditDesign, root: Path, replicate: int) -> list[ConditionPredictions]:
    """Predictions of one replicate of the benchmark's protocol (the profile's seeds)."""
    pools, labels = load_pools(design, root)
    draw = replicate_draw(design, replicate, condition_blocks(design, labels.domain))
    return draw_predictions(design, pools, labels, draw, False, design.seeds)


# ---------------------------------------------------------------------------
# The audit, cached and resumable
# ---------------------------------------------------------------------------


def audit_root(design: AuditDesign, cache: Path | None = None) -> Path:
    """Folder of one design's audit: ``<cache>/coverage/<dataset>-<simulation hash>``."""
    from crsbench_lib.paths import cache_dir

    base = Path(cache) if cache is not None else cache_dir() / "coverage"
    key = hashlib.sha256(f"{design.simulation_hash()}|{simulation_fingerprint()}".encode()).hexdigest()
    return base / f"{design.dataset}-{key[:16]}"


def simulation_fingerprint() -> str:
    """SHA-256 over the source of this module and every package module it runs (generator, encoders, probe).

    Part of :func:`audit_root`: editing any code that makes the embeddings or
    predictions starts a new cache folder instead of reusing stale numbers.
    """
    from crsbench_lib.imports import import_closure, import_graph, package_modules, source_fingerprint

    return source_fingerprint(import_closure([__name__], import_graph()), package_modules())


def _write_frame(frame: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path, suffix=".parquet") as tmp:
        frame.to_parquet(tmp, index=False)


def run_audit(
    design: AuditDesign,
    score_truth: Callable[[list[ConditionPredictions]], Any],
    score_replicate: Callable[[list[ConditionPredictions], int], Any],
    cache: Path | None = None,
    scoring_key: str = "",
    n_jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> tuple[Any, Any]:
    """Embed, draw the truth and the replicates, score each, resuming from the cache.

    The runner does not score (scoring is another layer): ``score_truth`` turns
    the truth's predictions into a truth table and ``score_replicate`` a
    replicate's predictions (and its index) into an interval table
    (:func:`crsbench_lib.scoring.coverage.truth_table` and
    :func:`~crsbench_lib.scoring.coverage.replicate_intervals`). Their tables
    are cached under a sub-folder named by ``scoring_key`` (a fingerprint of
    the scoring code, so a change there rescores from the cached predictions).

    Parameters
    ----------
    design : AuditDesign
    score_truth, score_replicate : callable
    cache : pathlib.Path, optional
        Cache folder (default ``cache_dir() / "coverage"``).
    scoring_key : str
        Names the scored tables' folder.
    n_jobs : int
        Processes (joblib); the numbers do not depend on it.
    progress : callable, optional
        Receives one line per finished step.

    Returns
    -------
    truth : pandas.DataFrame
    intervals : pandas.DataFrame
        Every replicate's interval table, concatenated.

    Notes
    -----
    Under ``audit_root(design, cache)``: ``embeddings/`` (one ``.npz`` per
    encoder), ``predictions/`` and ``results/`` (each truth draw's and
    replicate's predictions and results table, in the run's formats) and
    ``scored-<scoring_key>/`` (the truth and interval tables).
    """
    import pandas as pd
    from joblib import Parallel, delayed

    from crsbench_lib.evaluation import rows_from_predictions
    from crsbench_lib.results.io import write_results
    from crsbench_lib.results.predictions import read_predictions, write_predictions

    root = audit_root(design, cache)
    say = progress or (lambda line: None)
    chunks = [list(design.encoders[i::max(1, n_jobs)]) for i in range(min(max(1, n_jobs), len(design.encoders)))]
    Parallel(n_jobs=len(chunks))(delayed(embed_pools)(design, root, chunk) for chunk in chunks)
    say(f"embeddings ready: {len(design.encoders)} encoders ({root / 'embeddings'})")
    scored = root / f"scored-{scoring_key[:16] or 'default'}"

    def predictions(kind: str, index: int) -> list[ConditionPredictions]:
        path = root / "predictions" / f"{kind}-{index:04d}.parquet"
        if path.exists():
            return read_predictions(path)
        made = (truth_predictions(design, root, (index,)) if kind == "truth"
                else replicate_predictions(design, root, index))
        path.parent.mkdir(parents=True, exist_ok=True)
        (root / "results").mkdir(parents=True, exist_ok=True)
        # The replicate's results table beside its predictions, as a run writes them.
        write_results(rows_from_predictions(made, source=f"coverage {kind} {index}"),
                      root / "results" / f"{kind}-{index:04d}.parquet")
        write_predictions(made, path)
        return made

    truth_path = scored / "truth.parquet"
    if not truth_path.exists():
        # One task per training draw (in processes), then the truth is scored here.
        parts = Parallel(n_jobs=max(1, n_jobs))(delayed(predictions)("truth", k) for k in range(design.n_truth_draws))
        say(f"truth predictions ready: {design.n_truth_draws} training draws")
        _write_frame(score_truth([p for part in parts for p in part]), truth_path)
    truth = pd.read_parquet(truth_path)
    say(f"truth ready: {design.n_truth_draws} training draws on {design.truth_test} test images")

    def one(r: int) -> Path:
        path = scored / f"replicate-{r:04d}.parquet"
        if not path.exists():
            _write_frame(score_replicate(predictions("replicate", r), r), path)
        return path

    todo = [r for r in range(design.n_replicates) if not (scored / f"replicate-{r:04d}.parquet").exists()]
    done = design.n_replicates - len(todo)
    if done:
        say(f"replicates cached: {done}")
    parallel = Parallel(n_jobs=max(1, n_jobs), return_as="generator")
    for k, _ in enumerate(parallel(delayed(one)(r) for r in todo), start=1):
        say(f"replicate {done + k}/{design.n_replicates} done")
    intervals = pd.concat([pd.read_parquet(scored / f"replicate-{r:04d}.parquet") for r in range(design.n_replicates)],
                          ignore_index=True)
    return truth, intervals


__all__ = [
    "ALL_FAMILIES", "AUDIT_DATA_SEED", "AUDIT_PRESETS", "BOOK_PRESETS", "DEFAULT_ENCODERS", "DEFAULT_FAMILIES", "AuditDesign",
    "AuditSize", "audit_preset", "Draw", "PoolEmbeddings", "PoolLabels",
    "audit_dataset", "audit_root", "condition_blocks", "design_from_profile", "draw_predictions", "embed_pools",
    "load_pools", "replicate_draw", "replicate_predictions", "run_audit", "simulation_fingerprint", "truth_draw",
    "truth_predictions",
]
