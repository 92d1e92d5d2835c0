"""Per-seed stratified resampling of a real dataset's development pool.

Real data (MedMNIST files, CSV manifests) come with fixed train and validation
splits. For seeds to vary what a seed should vary (method section 9,
amendment 1), seed ``s`` redraws the training, validation and calibration sets
from the *development pool*, the source train and validation splits together
(both are samples of the training site; keeping the source validation split out
would only waste labelled images). The test split is never touched, so every
seed and every encoder is scored on the same test images.

Construction (deterministic in the labels and the seed):

* Each example gets a stratum: its class (binary, multiclass) or, for
  multilabel, its rarest positive label (examples without a positive label form
  their own stratum), as in :mod:`crsbench_lib.evaluation.fractions`.
* The validation and calibration sizes are shared out over the strata in
  proportion to the strata's sizes (largest remainders, ties to the lower
  stratum id), so both sets keep the pool's class balance.
* Within each stratum one seeded permutation is drawn (strata in sorted order);
  its first members go to validation, the next to calibration, the rest to
  training.
"""

from __future__ import annotations

import hashlib

import numpy as np

from crsbench_lib.errors import DataError
from crsbench_lib.stratify import label_strata

#: Entropy of the resampling streams (an arbitrary fixed number), so that a resample
#: seed never shares a stream with another use of the same integer.
RESAMPLE_ENTROPY = 0x7265_7361_6D70_6C65


def _allocate(sizes: np.ndarray, total: int) -> np.ndarray:
    """Share ``total`` over groups in proportion to ``sizes`` (largest remainders), at most each size."""
    quota = sizes * (total / sizes.sum())
    base = np.minimum(np.floor(quota).astype(np.int64), sizes)
    remainder = quota - base
    for i in np.argsort(-remainder, kind="stable"):
        if base.sum() >= total:
            break
        if base[i] < sizes[i]:
            base[i] += 1
    return base


def development_split(labels: object, seed: int, n_val: int, n_calibration: int) -> dict[str, np.ndarray]:
    """Stratified train / validation / calibration indices of a development pool for one seed.

    Parameters
    ----------
    labels : array-like
        Pool labels: ``(n,)`` class indices or ``(n, L)`` 0/1 (multilabel).
    seed : int
        The evaluation seed (non-negative).
    n_val, n_calibration : int
        Sizes of the validation and calibration sets (positive); the training
        set gets the rest of the pool.

    Returns
    -------
    dict
        ``train``, ``val``, ``calibration``: sorted, disjoint int64 indices into
        the pool whose union is the pool.

    Raises
    ------
    DataError
        If a size is not positive, the seed is negative, or the pool leaves no
        training example.

    Examples
    --------
    >>> parts = development_split(np.array([0, 1] * 10), seed=0, n_val=4, n_calibration=4)
    >>> [len(parts[k]) for k in ("train", "val", "calibration")]
    [12, 4, 4]
    """
    y = np.asarray(labels)
    for value, what in ((n_val, "n_val"), (n_calibration, "n_calibration")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise DataError(f"development_split: {what} must be a positive integer, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError(f"development_split: seed must be a non-negative integer, got {seed!r}")
    n = y.shape[0]
    if n_val + n_calibration >= n:
        raise DataError(
            f"development_split: a pool of {n} examples cannot give {n_val} validation and "
            f"{n_calibration} calibration examples and still train"
        )
    stratum = label_strata(y)
    ids = np.unique(stratum)
    rng = np.random.default_rng(np.random.SeedSequence([RESAMPLE_ENTROPY, int(seed)]))
    members = [rng.permutation(np.flatnonzero(stratum == s)) for s in ids]
    sizes = np.array([m.size for m in members], dtype=np.int64)
    val_take = _allocate(sizes, int(n_val))
    cal_take = _allocate(sizes - val_take, int(n_calibration))
    val = np.concatenate([m[:v] for m, v in zip(members, val_take)])
    cal = np.concatenate([m[v : v + c] for m, v, c in zip(members, val_take, cal_take)])
    train = np.concatenate([m[v + c :] for m, v, c in zip(members, val_take, cal_take)])
    return {"train": np.sort(train), "val": np.sort(val), "calibration": np.sort(cal)}


def indices_digest(parts: dict[str, np.ndarray]) -> str:
    """SHA-256 of a development split's indices (recorded in the run manifest)."""
    digest = hashlib.sha256()
    for name in sorted(parts):
        digest.update(name.encode())
        digest.update(np.asarray(parts[name], dtype=np.int64).tobytes())
    return digest.hexdigest()
