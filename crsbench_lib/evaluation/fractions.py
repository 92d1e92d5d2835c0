"""Stratified, nested label-fraction subsets (method section 2, step 4).

Construction (depends only on the labels and the seed, so every encoder at a
seed sees the same labelled examples):

* Each example is assigned a *stratum*: its class (binary, multiclass) or, for
  multilabel, its rarest positive label (``"no finding"`` examples form their
  own stratum), the usual approximation to multilabel stratification.
* One seeded random permutation is drawn per stratum (strata in sorted order).
  At fraction ``f`` a stratum of size ``n_s`` contributes the first
  ``max(1, floor(f * n_s + 1/2))`` examples of its permutation. Because that
  count is non-decreasing in ``f`` and the permutation is fixed, the subsets are
  nested (1% inside 5% inside 10% ...) and every stratum keeps an example.
* Multilabel: every label's positives are kept at least once by adding, to
  every fraction, the first positive of each label in a fixed seeded priority
  order; this set does not depend on ``f``, so nesting is preserved.

The fraction actually used, ``len(subset) / n``, is returned by
:func:`fractions_used` and recorded in the results.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from crsbench_lib.errors import EvaluationError
from crsbench_lib.metrics.validation import check_task
from crsbench_lib.stratify import label_strata

#: Validation subsample policies: a subsample at the label fraction, or the full split.
VAL_FRACTION_POLICIES: tuple[str, ...] = ("matched", "full")
# Distinct seed streams so that the train and validation subsamples are independent draws.
_TRAIN_STREAM = 0
_VAL_STREAM = 1


def _check_fractions(fractions: Iterable[float]) -> tuple[float, ...]:
    try:
        values = tuple(float(f) for f in fractions)
    except (TypeError, ValueError):
        raise EvaluationError(f"label fractions must be numbers, got {fractions!r}") from None
    if not values:
        raise EvaluationError("label fractions are empty")
    bad = [f for f in values if not (0.0 < f <= 1.0)]
    if bad:
        raise EvaluationError(f"label fractions must lie in (0, 1], got {bad[0]!r}")
    return values


def _check_labels(labels: object, task: str) -> np.ndarray:
    check_task(task)
    try:
        array = np.asarray(labels, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"labels must be numeric: {exc}") from None
    if array.size == 0:
        raise EvaluationError("labels are empty")
    if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
        raise EvaluationError("labels must be finite integers")
    y = array.astype(np.int64)
    expected_ndim = 2 if task == "multilabel" else 1
    if y.ndim != expected_ndim:
        raise EvaluationError(f"{task} labels must be {expected_ndim}-D, got shape {y.shape}")
    if task == "multilabel" and np.any((y != 0) & (y != 1)):
        raise EvaluationError("multilabel labels must be 0 or 1")
    if task != "multilabel" and y.min() < 0:
        raise EvaluationError("class labels must be non-negative")
    return y


def _subsets(y: np.ndarray, fractions: Sequence[float], seed: int, stream: int, task: str) -> dict[float, np.ndarray]:
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), stream]))
    strata = label_strata(y)
    permutations = [rng.permutation(np.flatnonzero(strata == s)) for s in np.unique(strata)]
    guaranteed = np.empty(0, dtype=np.int64)
    if task == "multilabel":
        priority = rng.permutation(y.shape[0])
        ranked = y[priority]
        firsts = [priority[np.argmax(ranked[:, k] == 1)] for k in range(y.shape[1]) if ranked[:, k].any()]
        guaranteed = np.asarray(firsts, dtype=np.int64)
    out: dict[float, np.ndarray] = {}
    for f in fractions:
        take = [perm[: max(1, int(np.floor(f * perm.size + 0.5)))] for perm in permutations]
        out[f] = np.unique(np.concatenate(take + [guaranteed]))
    return out


def label_fraction_subsets(
    labels: object, fractions: Iterable[float], seed: int, task: str
) -> dict[float, np.ndarray]:
    """Nested, stratified train subsets, one per label fraction.

    Parameters
    ----------
    labels : array-like
        Train labels: ``(n,)`` class indices, or ``(n, L)`` 0/1 for multilabel.
    fractions : iterable of float
        Requested fractions in (0, 1]; 1.0 gives every index.
    seed : int
        The evaluation seed; the subsets depend only on ``labels`` and ``seed``.
    task : {"binary", "multiclass", "multilabel"}

    Returns
    -------
    dict[float, numpy.ndarray]
        Sorted int64 indices per requested fraction. Nested: a smaller fraction's
        subset is inside a larger one's. Every class present in ``labels`` is
        kept at least once (multilabel: every label's positives at least once).

    Raises
    ------
    EvaluationError
        Bad task, empty, NaN or non-integer labels, or a fraction outside (0, 1].
    """
    y = _check_labels(labels, task)
    return _subsets(y, _check_fractions(fractions), seed, _TRAIN_STREAM, task)


def validation_subsets(
    labels: object, fractions: Iterable[float], seed: int, task: str, policy: str = "matched"
) -> dict[float, np.ndarray]:
    """Validation indices per label fraction under a validation-fraction policy.

    ``"matched"`` (default): a stratified nested subsample at the same fraction,
    at least one example per class (method section 2, step 4: a team with 1%
    of its labels does not have a full validation set either); drawn from a seed
    stream independent of the train subsample. ``"full"``: every index.

    Raises
    ------
    EvaluationError
        As :func:`label_fraction_subsets`, or an unknown policy.
    """
    if policy not in VAL_FRACTION_POLICIES:
        raise EvaluationError(f"val_fraction_policy must be one of {', '.join(VAL_FRACTION_POLICIES)}, got {policy!r}")
    y = _check_labels(labels, task)
    values = _check_fractions(fractions)
    if policy == "full":
        every = np.arange(y.shape[0], dtype=np.int64)
        return {f: every for f in values}
    return _subsets(y, values, seed, _VAL_STREAM, task)


def fractions_used(subsets: dict[float, np.ndarray], n_total: int) -> dict[float, float]:
    """The fraction actually used per requested fraction: ``len(subset) / n_total``."""
    if n_total <= 0:
        raise EvaluationError(f"n_total must be positive, got {n_total}")
    return {f: idx.size / n_total for f, idx in subsets.items()}
