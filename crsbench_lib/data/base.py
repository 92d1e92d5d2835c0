"""The small dataset interface shared by the phantom cohort and real-data readers.

An :class:`ImageDataset` is a named collection of :class:`ImageSplit` objects,
one per (split, site). Images are ``uint8`` arrays, ``(N, H, W)`` for grey and
``(N, H, W, 3)`` for RGB. Labels are ``int64`` class indices ``(N,)`` for binary
and multi-class tasks, and a ``uint8`` 0/1 matrix ``(N, L)`` for multi-label
tasks. Encoders and the embedding store see only this interface; they know
nothing of how the images were made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from crsbench_lib.errors import DataError

TaskType = Literal["binary", "multiclass", "multilabel"]
SPLITS: tuple[str, ...] = ("train", "val", "test")


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
        ``train``, ``val`` or ``test``.
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
        ``loader(split, site) -> ImageSplit``. Called at most once per
        (split, site) and cached unless ``cache_splits`` is false.
    """

    name: str
    domain: str
    task: TaskType
    class_names: tuple[str, ...]
    version: str
    loader: Callable[[str, str], ImageSplit]
    sites: tuple[str, ...] = ("A",)
    cache_splits: bool = True
    _cache: dict[tuple[str, str], ImageSplit] = field(default_factory=dict, repr=False)

    @property
    def n_classes(self) -> int:
        """Number of classes (or labels, for multi-label)."""
        return len(self.class_names)

    @property
    def shift_site(self) -> str | None:
        """The second site, if the dataset has one (its test split is the shift test)."""
        return self.sites[1] if len(self.sites) > 1 else None

    def split(self, split: str, site: str | None = None) -> ImageSplit:
        """Return one split at one site (default: the training site)."""
        site = self.sites[0] if site is None else site
        if split not in SPLITS:
            raise DataError(f"dataset {self.name}: unknown split {split!r} (expected one of {', '.join(SPLITS)})")
        if site not in self.sites:
            raise DataError(f"dataset {self.name}: unknown site {site!r} (has {', '.join(self.sites)})")
        key = (split, site)
        if key in self._cache:
            return self._cache[key]
        result = self.loader(split, site)
        if self.cache_splits:
            self._cache[key] = result
        return result
