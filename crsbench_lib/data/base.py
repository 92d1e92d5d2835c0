"""The small dataset interface shared by the phantom cohort and real-data readers.

An :class:`ImageDataset` is a named collection of :class:`ImageSplit` objects,
one per (split, site). Images are ``uint8`` arrays, ``(N, H, W)`` for grey and
``(N, H, W, 3)`` for RGB. Labels are ``int64`` class indices ``(N,)`` for binary
and multi-class tasks, and a ``uint8`` 0/1 matrix ``(N, L)`` for multi-label
tasks. Encoders and the embedding store see only this interface; they know
nothing of how the images were made.

Seeds and splits (method section 9, amendment 1): the *development* splits
(``train``, ``val``, ``calibration``) are redrawn for every evaluation seed,
while the test split of every site is the same for every seed, so that every
comparison between seeds and encoders is paired on the same test images. A
dataset either draws its development splits per seed itself (the phantom
cohort, from its generator streams: ``development_loader``) or, for real data,
they are a stratified resample of the source train and validation splits
(:func:`crsbench_lib.data.resample.development_split`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from crsbench_lib.data.resample import development_split, indices_digest
from crsbench_lib.errors import DataError

TaskType = Literal["binary", "multiclass", "multilabel"]
#: The splits a source (file, generator) provides.
SPLITS: tuple[str, ...] = ("train", "val", "test")
#: The splits redrawn for every evaluation seed.
DEVELOPMENT_SPLITS: tuple[str, ...] = ("train", "val", "calibration")
#: Every split an evaluation uses.
EVALUATION_SPLITS: tuple[str, ...] = DEVELOPMENT_SPLITS + ("test",)


@dataclass(frozen=True)
class ImageSplit:
    """Images and labels of one split at one site.

    Attributes
    ----------
    images : numpy.ndarray
        ``uint8``, ``(N, H, W)`` (grey) or ``(N, H, W, 3)`` (RGB).
    labels : numpy.ndarray
        ``int64`` ``(N,)`` class indices, or ``uint8`` ``(N, L)`` 0/1 for multi-label.
    split : str
        ``train``, ``val``, ``calibration`` or ``test``.
    site : str
        Acquisition site, ``"A"`` unless the dataset has a second site.
    """

    images: np.ndarray
    labels: np.ndarray
    split: str
    site: str = "A"

    def __post_init__(self) -> None:
        if self.images.dtype != np.uint8:
            raise DataError(f"split {self.split}/{self.site}: images must be uint8, got {self.images.dtype}")
        if self.images.ndim not in (3, 4) or (self.images.ndim == 4 and self.images.shape[-1] != 3):
            raise DataError(
                f"split {self.split}/{self.site}: images must be (N, H, W) or (N, H, W, 3), got {self.images.shape}"
            )
        if len(self.labels) != len(self.images):
            raise DataError(
                f"split {self.split}/{self.site}: {len(self.images)} images but {len(self.labels)} labels"
            )

    def __len__(self) -> int:
        return len(self.images)


@dataclass
class ImageDataset:
    """A named dataset: task metadata plus its splits, built lazily.

    Attributes
    ----------
    name : str
        Unique dataset name (``derm``, ``dermamnist``, ...).
    domain : str
        ``dermatology``, ``ophthalmology``, ``radiology`` or another domain.
    task : {"binary", "multiclass", "multilabel"}
        Task type.
    class_names : tuple of str
        Class names (multi-class/binary) or label names (multi-label).
    version : str
        Changes whenever the images or labels this dataset yields would change
        (generator code version, seed, sizes, image side; or a file's content
        hash). Part of every embedding cache key.
    sites : tuple of str
        Acquisition sites; the first is the training site.
    loader : callable
        ``loader(split, site) -> ImageSplit`` for the source splits
        (:data:`SPLITS`). Called at most once per (split, site) and cached
        unless ``cache_splits`` is false.
    development_loader : callable, optional
        ``development_loader(seed) -> {"train", "val", "calibration": ImageSplit}``
        at the training site. Without it the development splits of seed ``s``
        are a stratified resample of the source train and validation splits.
    calibration_size : int, optional
        Size of the calibration split of a resampled dataset (default: the
        source validation split's size).
    ablation_sites : tuple of str
        Test-only variants of the training site's test split that change one
        thing (the phantom cohort's shortcut cue removed), loaded through
        ``loader("test", name)``; empty for real data.
    development_sizes : mapping of str to int, optional
        The sizes ``development_loader`` draws (``train``, ``val``,
        ``calibration``), when known without drawing: then
        :meth:`development_record` describes a seed's splits without drawing
        their images (a run's parent process records every seed's splits
        before any cell, and its workers draw them again).
    """

    name: str
    domain: str
    task: TaskType
    class_names: tuple[str, ...]
    version: str
    loader: Callable[[str, str], ImageSplit]
    sites: tuple[str, ...] = ("A",)
    cache_splits: bool = True
    development_loader: Callable[[int], Mapping[str, ImageSplit]] | None = None
    calibration_size: int | None = None
    ablation_sites: tuple[str, ...] = ()
    development_sizes: Mapping[str, int] | None = None
    _cache: dict[tuple[str, str], ImageSplit] = field(default_factory=dict, repr=False)
    _development: dict[int, dict[str, ImageSplit]] = field(default_factory=dict, repr=False)
    _records: dict[int, dict[str, object]] = field(default_factory=dict, repr=False)

    @property
    def n_classes(self) -> int:
        """Number of classes (or labels, for multi-label)."""
        return len(self.class_names)

    @property
    def shift_site(self) -> str | None:
        """The second site, if the dataset has one (its test split is the shift test)."""
        return self.sites[1] if len(self.sites) > 1 else None

    def source_split(self, split: str, site: str | None = None) -> ImageSplit:
        """One split as its source provides it (the file's train/val/test; cached)."""
        site = self.sites[0] if site is None else site
        if split not in SPLITS:
            raise DataError(f"dataset {self.name}: unknown source split {split!r} (expected one of {', '.join(SPLITS)})")
        if site not in self.sites and not (split == "test" and site in self.ablation_sites):
            raise DataError(f"dataset {self.name}: unknown site {site!r} (has {', '.join(self.sites)})")
        key = (split, site)
        if key in self._cache:
            return self._cache[key]
        result = self.loader(split, site)
        if self.cache_splits:
            self._cache[key] = result
        return result

    def development(self, seed: int) -> dict[str, ImageSplit]:
        """The train, validation and calibration splits of one evaluation seed (cached).

        Raises
        ------
        DataError
            On a negative seed, or a pool too small for the requested sizes.
        """
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise DataError(f"dataset {self.name}: seed must be a non-negative integer, got {seed!r}")
        seed = int(seed)
        if seed in self._development:
            return self._development[seed]
        if self.development_loader is not None:
            parts = dict(self.development_loader(seed))
            record: dict[str, object] = {"source": "generator"}
        else:
            parts, record = self._resample(seed)
        record.update({f"n_{name}": len(parts[name]) for name in DEVELOPMENT_SPLITS})
        if self.cache_splits:
            self._development[seed] = parts
        self._records[seed] = record
        return parts

    def development_record(self, seed: int) -> dict[str, object]:
        """How seed ``seed``'s development splits were drawn (sizes; for a resample the indices' SHA-256).

        A generator with declared :attr:`development_sizes` is described without
        drawing (the same record drawing would give).
        """
        if (self.development_loader is not None and self.development_sizes is not None
                and int(seed) not in self._records):
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise DataError(f"dataset {self.name}: seed must be a non-negative integer, got {seed!r}")
            return {"source": "generator", **{f"n_{name}": int(self.development_sizes[name])
                                              for name in DEVELOPMENT_SPLITS}}
        self.development(seed)
        return dict(self._records[int(seed)])

    def _resample(self, seed: int) -> tuple[dict[str, ImageSplit], dict[str, object]]:
        train = self.source_split("train")
        val = self.source_split("val")
        images = np.concatenate([train.images, val.images])
        labels = np.concatenate([train.labels, val.labels])
        n_cal = len(val) if self.calibration_size is None else int(self.calibration_size)
        try:
            index = development_split(labels, seed, len(val), n_cal)
        except DataError as exc:
            raise DataError(f"dataset {self.name}: {exc}") from None
        parts = {
            name: ImageSplit(images=images[idx], labels=labels[idx], split=name, site=self.sites[0])
            for name, idx in index.items()
        }
        return parts, {"source": "stratified resample of the source train and val splits",
                       "indices_sha256": indices_digest(index)}

    def split(self, split: str, site: str | None = None, seed: int = 0) -> ImageSplit:
        """One split at one site: a development split of evaluation seed ``seed``, or the test split.

        ``train``, ``val`` and ``calibration`` are redrawn per seed (training
        site only); ``test`` is the same for every seed (``seed`` is ignored).
        """
        if split in DEVELOPMENT_SPLITS:
            if site is not None and site != self.sites[0]:
                raise DataError(
                    f"dataset {self.name}: split {split!r} exists at the training site {self.sites[0]!r} only, "
                    f"not {site!r}"
                )
            return self.development(seed)[split]
        if split != "test":
            raise DataError(
                f"dataset {self.name}: unknown split {split!r} (expected one of {', '.join(EVALUATION_SPLITS)})"
            )
        return self.source_split("test", site)
