"""The embedding store: embed an image set once, keep it on disk, verify it on every read.

An embedding file is keyed by everything that determines its numbers: the
encoder (name and :attr:`~crsbench_lib.encoders.base.Encoder.weights_hash`),
the dataset (name and version), split, site, corruption family, severity,
corruption seed, the number of images and the batch size. Each key maps to ``<hash>.npy``
(float32 ``(N, D)``) and a JSON sidecar ``<hash>.json`` holding the key, the
array's shape and the sha256 of the ``.npy`` bytes. A read recomputes the sha256;
a missing, truncated or altered file (or a sidecar that does not match) is
recomputed, never returned.

Writes are atomic (temporary file in the same folder, then rename) and
streamed: the ``.npy`` file's full size is allocated on disk first
(:func:`crsbench_lib.atomic.reserve`, so a full disk is one line naming the
folder and the space needed, before any embedding is computed), then embeddings
are appended batch by batch with ordinary writes, so only one batch of network
activations is in memory at a time. Nothing is written through a memory map: a
memory-mapped write that meets a full disk kills its process with SIGBUS.

Corrupted test sets are produced with :func:`crsbench_lib.cohort.corrupt` on the whole selected
image set at once (so the corruption does not depend on the batch size), then
embedded batch by batch.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from crsbench_lib.atomic import atomic_path, atomic_write_text, reserve
from crsbench_lib.cohort.corruptions import CORRUPTION_VERSION
from crsbench_lib.data.base import DEVELOPMENT_SPLITS, ImageDataset
from crsbench_lib.encoders.base import Encoder
from crsbench_lib.errors import DataError, EncoderError
from crsbench_lib.hashing import file_sha256
from crsbench_lib.paths import cache_dir
from crsbench_lib.results.schema import SEVERITIES

# Bump when the layout or the meaning of a cached file changes.
STORE_FORMAT_VERSION = 1
_DTYPE = np.float32
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe(text: str) -> str:
    """A file-name-safe version of ``text`` (hub ids contain ``/`` and ``:``)."""
    return _SAFE.sub("_", text)[:80] or "_"


def cache_key(
    encoder: Encoder,
    dataset: ImageDataset,
    split: str,
    site: str,
    corruption: str,
    severity: int,
    corruption_seed: int,
    n_images: int,
    batch_size: int,
    seed: int = 0,
    first_image: int = 0,
) -> dict[str, Any]:
    """The mapping that identifies one embedding array (JSON-serialisable).

    ``batch_size`` is part of it because float32 matrix products of neural
    encoders may round differently for different batch sizes, and torch's
    intra-op thread count for the same reason (measured: 1 vs 2 threads change
    default-size k-means and ViT embeddings in their last bits); an array
    computed on other threads is never served as this one. ``seed`` (the
    evaluation seed) is part of it for the development splits, which are
    redrawn per seed; the test split is the same for every seed, so its key
    holds ``None`` there and every seed shares its embeddings.
    """
    return {
        "format": STORE_FORMAT_VERSION,
        "encoder": encoder.name,
        "weights_hash": encoder.weights_hash,
        "embedding_dim": int(encoder.embedding_dim),
        "dataset": dataset.name,
        "dataset_version": dataset.version,
        "split": split,
        "site": site,
        "corruption": corruption,
        "severity": int(severity),
        "corruption_seed": int(corruption_seed),
        # A changed corruption algorithm must invalidate corrupted embeddings.
        "corruption_version": CORRUPTION_VERSION if corruption != "none" else "",
        "n_images": int(n_images),
        # Where a corrupted block starts (image_block); clean keys do not carry it.
        **({"first_image": int(first_image)} if corruption != "none" else {}),
        "batch_size": int(batch_size),
        "torch_threads": _torch_threads(),
        "seed": int(seed) if split in DEVELOPMENT_SPLITS else None,
    }


def _torch_threads() -> int:
    """Torch's intra-op thread count in this process (part of every embedding's identity)."""
    import torch

    return int(torch.get_num_threads())


def _key_digest(key: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()


#: Bytes of corrupted image sets kept in memory per process (least recently used out first).
#: One 32-px dataset's sets take about 85 MB (55 conditions of 500 RGB images).
CORRUPTED_MEMO_BYTES = 256 * 2**20
# Process-wide, not per store: every encoder of a run (and both arms) sees the same
# corrupted sets, and a run's worker process goes through many tasks, each with
# its own store object; making a dataset's sets once per process instead of once
# per task saves minutes of a default run (measured: about 3.5 s per dataset).
# Only the most recent dataset's sets are kept: runs go dataset by dataset, and a
# joblib (loky) worker whose memory grows by 300 MB is restarted as "leaking".
_CORRUPTED_MEMO: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()


def image_block(total: int, n: int, first_image: int = 0) -> np.ndarray:
    """Indices of ``n`` consecutive images of a split of ``total``, from ``first_image``, wrapping around.

    The corrupted sets of a profile are such blocks
    (:func:`crsbench_lib.cohort.corruptions.first_image`).

    Parameters
    ----------
    total : int
        Images in the split.
    n : int
        Block length, 1..total.
    first_image : int
        Index of the block's first image, 0..total-1.

    Returns
    -------
    numpy.ndarray
        int64 ``(n,)`` indices; sorted unless the block wraps.

    Raises
    ------
    DataError
        If ``n`` or ``first_image`` is out of range.

    Examples
    --------
    >>> image_block(10, 4, 8).tolist()
    [8, 9, 0, 1]
    """
    if not 0 < n <= total:
        raise DataError(f"a block of test images must hold 1..{total} images, got {n}")
    if not 0 <= first_image < total:
        raise DataError(f"a block of test images must start at an image in 0..{total - 1}, got {first_image}")
    return (int(first_image) + np.arange(int(n), dtype=np.int64)) % int(total)


def corrupted_images(
    dataset: ImageDataset,
    split: str,
    site: str | None,
    corruption: str,
    severity: int,
    corruption_seed: int,
    n: int,
    first_image: int = 0,
) -> np.ndarray:
    """A block of ``n`` images of a split through :func:`crsbench_lib.cohort.corrupt` (memoised per process).

    The result is shared by every caller of this process: do not modify it
    (it stays writable because ``torch.from_numpy`` warns on read-only arrays).

    Parameters
    ----------
    dataset : ImageDataset
        The dataset; its name and version identify its images.
    split, site : str
        The image set (``site`` None: the dataset's own site).
    corruption : str
        A corruption family of the dataset's domain.
    severity : int
        Severity 1..5.
    corruption_seed : int
        Seed of the corruption's random draws.
    n : int
        How many images.
    first_image : int
        Where the block starts (:func:`image_block`; 0: the first ``n`` images).

    Returns
    -------
    numpy.ndarray
        The corrupted images (``uint8``, like the split's), in block order.
    """
    site = dataset.sites[0] if site is None else site
    key = (dataset.name, dataset.version, split, site, corruption, int(severity), int(corruption_seed), int(n),
           int(first_image))
    if key in _CORRUPTED_MEMO:
        _CORRUPTED_MEMO.move_to_end(key)
        return _CORRUPTED_MEMO[key]
    if _CORRUPTED_MEMO and next(iter(_CORRUPTED_MEMO))[:2] != key[:2]:
        _CORRUPTED_MEMO.clear()  # another dataset: the previous one's sets are done with
    from crsbench_lib.cohort import corrupt  # the cohort is needed only for corrupted sets

    clean = dataset.split(split, site).images
    images = corrupt(clean[image_block(len(clean), n, first_image)], corruption, severity, seed=corruption_seed)
    if images.nbytes <= CORRUPTED_MEMO_BYTES:
        _CORRUPTED_MEMO[key] = images
        while sum(a.nbytes for a in _CORRUPTED_MEMO.values()) > CORRUPTED_MEMO_BYTES:
            _CORRUPTED_MEMO.popitem(last=False)
    return images


class EmbeddingStore:
    """On-disk cache of embeddings under ``root`` (default ``cache_dir() / "embeddings"``).

    Parameters
    ----------
    root : pathlib.Path, optional
        Cache folder; created on first write.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else cache_dir() / "embeddings"
        #: How many arrays this store object computed (rather than read): for tests and logs.
        self.n_computed = 0

    def corrupted_images(
        self, dataset: ImageDataset, split: str, site: str, corruption: str, severity: int, corruption_seed: int, n: int,
        first_image: int = 0,
    ) -> np.ndarray:
        """A block of ``n`` images of a split, corrupted (see the module's :func:`corrupted_images`)."""
        return corrupted_images(dataset, split, site, corruption, severity, corruption_seed, n, first_image)

    def paths_for(self, key: dict[str, Any]) -> tuple[Path, Path]:
        """``(array path, sidecar path)`` of a cache key."""
        digest = _key_digest(key)
        folder = self.root / _safe(key["encoder"]) / _safe(key["dataset"])
        stem = f"{key['split']}-{_safe(key['site'])}-{_safe(key['corruption'])}-s{key['severity']}-{digest[:24]}"
        return folder / f"{stem}.npy", folder / f"{stem}.json"

    def _read_verified(self, key: dict[str, Any], mmap: bool) -> np.ndarray | None:
        array_path, meta_path = self.paths_for(key)
        if not (array_path.exists() and meta_path.exists()):
            return None
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("key") != key or meta.get("sha256") != file_sha256(array_path):
                return None
            arr = np.load(array_path, mmap_mode="r" if mmap else None, allow_pickle=False)
        except (OSError, ValueError, json.JSONDecodeError):
            return None
        if arr.dtype != np.float32 or arr.shape != (key["n_images"], key["embedding_dim"]):
            return None
        return arr

    def embed(
        self,
        encoder: Encoder,
        dataset: ImageDataset,
        split: str,
        site: str | None = None,
        corruption: str = "none",
        severity: int = 0,
        corruption_seed: int = 0,
        n_images: int | None = None,
        batch_size: int = 256,
        progress: bool = False,
        mmap: bool = False,
        seed: int = 0,
        first_image: int = 0,
    ) -> np.ndarray:
        """Embeddings of one image set, from the cache or computed and cached.

        Parameters
        ----------
        encoder : Encoder
            The encoder.
        dataset : ImageDataset
            The dataset.
        split : str
            ``train``, ``val``, ``calibration`` (drawn for evaluation seed
            ``seed``) or ``test``.
        site : str, optional
            Acquisition site (default: the dataset's first site).
        corruption : str
            ``"none"`` or a corruption family of :func:`crsbench_lib.cohort.corruption_families`.
        severity : int
            0 with ``"none"``, else 1-5.
        corruption_seed : int
            Seed of the corruption's randomness.
        n_images : int, optional
            Use ``n_images`` images of the split (default: all): the first
            ones, or for a corruption the block from ``first_image``.
        batch_size : int
            Images per encoder call (memory bound).
        progress : bool
            Show a tqdm progress bar while computing.
        mmap : bool
            Return a read-only memory map instead of an in-memory array.
        seed : int
            Evaluation seed of a development split (ignored for ``test``).
        first_image : int
            First image of a corrupted block (:func:`image_block`); 0 without a corruption.

        Returns
        -------
        numpy.ndarray
            float32 ``(n_images, encoder.embedding_dim)``.

        Raises
        ------
        DataError
            For a bad split/site, ``n_images`` or corruption parameters.
        EncoderError
            If the encoder returns the wrong shape or dtype.
        """
        site = dataset.sites[0] if site is None else site
        if corruption == "none":
            if severity != 0:
                raise DataError(f"severity must be 0 without a corruption, got {severity}")
            corruption_seed = 0
            if first_image != 0:
                raise DataError(f"first_image must be 0 without a corruption, got {first_image}")
        elif severity not in SEVERITIES:
            raise DataError(f"severity must be one of {SEVERITIES} for corruption {corruption!r}, got {severity}")
        if batch_size < 1:
            raise DataError(f"batch_size must be >= 1, got {batch_size}")
        image_split = dataset.split(split, site, seed=seed)
        total = len(image_split)
        n = total if n_images is None else int(n_images)
        if not 0 < n <= total:
            raise DataError(f"dataset {dataset.name} {split}/{site}: n_images must be in 1..{total}, got {n_images}")
        if not 0 <= first_image < total:
            raise DataError(f"dataset {dataset.name} {split}/{site}: first_image must be in 0..{total - 1}, "
                            f"got {first_image}")
        key = cache_key(encoder, dataset, split, site, corruption, severity, corruption_seed, n, batch_size, seed,
                        first_image)
        cached = self._read_verified(key, mmap)
        if cached is not None:
            return cached

        images = image_split.images[:n]
        if corruption != "none":
            images = self.corrupted_images(dataset, split, site, corruption, severity, corruption_seed, n,
                                           first_image)
        self._compute(encoder, images, key, batch_size, progress)
        self.n_computed += 1
        result = self._read_verified(key, mmap)
        if result is None:  # pragma: no cover - only if the disk changes under us
            raise DataError(f"embedding cache {self.paths_for(key)[0]} could not be read back after writing")
        return result

    def _compute(self, encoder: Encoder, images: np.ndarray, key: dict[str, Any], batch_size: int, progress: bool) -> None:
        array_path, meta_path = self.paths_for(key)
        n, dim = key["n_images"], key["embedding_dim"]
        header = _npy_header(n, dim)
        with atomic_path(array_path, suffix=".npy") as tmp, open(tmp, "r+b") as out:
            # The whole file's blocks first: a full disk is one line now, not a failed write later.
            reserve(out.fileno(), len(header) + n * dim * np.dtype(_DTYPE).itemsize, array_path)
            out.write(header)
            digest = hashlib.sha256(header)
            starts = range(0, n, batch_size)
            if progress:
                from tqdm.auto import tqdm

                starts = tqdm(starts, desc=f"{encoder.name} {key['dataset']} {key['split']}", unit="batch", leave=False)
            for start in starts:
                z = np.asarray(encoder.embed(images[start : start + batch_size]))
                if z.dtype != np.float32 or z.shape != (min(batch_size, n - start), dim):
                    raise EncoderError(
                        f"encoder {encoder.name} returned {z.dtype} {z.shape}, expected float32 "
                        f"({min(batch_size, n - start)}, {dim})"
                    )
                block = np.ascontiguousarray(z, dtype=_DTYPE).tobytes()
                out.write(block)
                digest.update(block)
        meta = {"key": key, "sha256": digest.hexdigest(), "shape": [n, dim]}
        atomic_write_text(meta_path, json.dumps(meta, indent=1, sort_keys=True))


def _npy_header(n: int, dim: int) -> bytes:
    """The ``.npy`` header of a C-ordered float32 ``(n, dim)`` array (as ``numpy.save`` writes it)."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": np.lib.format.dtype_to_descr(np.dtype(_DTYPE)), "fortran_order": False, "shape": (n, dim)}
    )
    return buffer.getvalue()
