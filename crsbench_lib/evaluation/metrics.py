"""Metrics on (labels, probabilities) for binary, multi-class and multi-label tasks.

Conventions (method section 2, step 3), fixed here once:

* **Shapes.** ``binary``: labels ``(n,)`` in {0, 1}; probabilities either
  ``(n,)`` (probability of the positive class) or ``(n, 2)`` (rows sum to 1).
  ``multiclass``: labels ``(n,)`` integers in ``0..K-1``; probabilities
  ``(n, K)``, rows sum to 1. ``multilabel``: labels ``(n, L)`` in {0, 1};
  probabilities ``(n, L)``, each entry the probability that the label is present.
* **Validation.** Every public function checks its input: lengths must match,
  probabilities lie in [0, 1] (no tolerance), multi-class rows sum to 1 within
  :data:`PROB_SUM_ATOL` (float32 softmax outputs are accepted), and nothing is
  NaN or infinite. Any violation raises :class:`~crsbench_lib.errors.EvaluationError`
  naming the problem.
* **ECE variant.** Multi-class: top-label (confidence = max probability,
  correctness = argmax equals label). Binary: *positive-class* probability
  binned against the positive outcome (``"binary-positive"``), which is the
  one-label case of the multi-label convention (mean of per-label binary ECE,
  ``"binary-mean"``); the variant name is stored with every value
  (:data:`ECE_VARIANTS`).
* **Bins.** Equal-width bins ``B_m = (m/M, (m+1)/M]`` for ``m = 0..M-1``, with a
  confidence of exactly 0 placed in the first bin (the edges are ``m / M``
  computed by exact division, so a value on an edge always falls in the lower bin).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from crsbench_lib.errors import EvaluationError
from crsbench_lib.results.schema import TASKS

#: Default number of equal-width ECE bins (the reference standard records the value in use).
DEFAULT_ECE_BINS: int = 15
#: Absolute tolerance on multi-class (and two-column binary) row sums.
PROB_SUM_ATOL: float = 1e-6
#: Probabilities are clipped to [NLL_EPS, 1 - NLL_EPS] before taking logs in the NLL.
NLL_EPS: float = 1e-15
#: The ECE variant name recorded with each task's ECE value.
ECE_VARIANTS: dict[str, str] = {
    "binary": "binary-positive",
    "multiclass": "top-label",
    "multilabel": "binary-mean",
}
#: Threshold on a positive-class (or per-label) probability for a positive prediction.
DECISION_THRESHOLD: float = 0.5


# --------------------------------------------------------------------------- validation


def check_task(task: str) -> str:
    """Return ``task`` if it is one of ``binary``, ``multiclass``, ``multilabel``.

    Raises
    ------
    EvaluationError
        On any other value.
    """
    if task not in TASKS:
        raise EvaluationError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
    return task


def _as_float_array(values: object, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"{name} must be numeric: {exc}") from None
    if array.size and not np.all(np.isfinite(array)):
        bad = int(np.count_nonzero(~np.isfinite(array)))
        raise EvaluationError(f"{name} contains {bad} NaN or infinite value{'s' if bad > 1 else ''}")
    return array


def _as_label_array(values: object, name: str) -> np.ndarray:
    array = _as_float_array(values, name)
    if array.size and not np.all(array == np.round(array)):
        raise EvaluationError(f"{name} must hold integer class indices, found a non-integer value")
    return array.astype(np.int64)


def validate_predictions(labels: object, probabilities: object, task: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate labels and probabilities and bring them to the canonical shapes.

    Parameters
    ----------
    labels : array-like
        ``(n,)`` class indices (binary, multiclass) or ``(n, L)`` 0/1 (multilabel).
    probabilities : array-like
        See the module docstring for the accepted shapes.
    task : {"binary", "multiclass", "multilabel"}

    Returns
    -------
    labels : numpy.ndarray
        ``int64``, ``(n,)`` or ``(n, L)``.
    probabilities : numpy.ndarray
        ``float64``: ``(n,)`` positive-class probabilities for binary, ``(n, K)``
        for multiclass, ``(n, L)`` for multilabel.

    Raises
    ------
    EvaluationError
        Unknown task, empty input, wrong dimensions, mismatched lengths, NaN or
        infinite values, probabilities outside [0, 1], rows not summing to 1
        (multiclass, two-column binary; tolerance :data:`PROB_SUM_ATOL`), or
        labels outside the classes.
    """
    check_task(task)
    y = _as_label_array(labels, "labels")
    p = _as_float_array(probabilities, "probabilities")
    if y.shape[0:1] != p.shape[0:1]:
        raise EvaluationError(
            f"labels and probabilities have mismatched lengths ({y.shape[0] if y.ndim else 0} vs {p.shape[0] if p.ndim else 0})"
        )
    if y.shape[0] == 0:
        raise EvaluationError("labels and probabilities are empty")
    if np.any(p < 0) or np.any(p > 1):
        raise EvaluationError(
            f"probabilities must lie in [0, 1], found values in [{p.min():.6g}, {p.max():.6g}]"
        )
    if task == "binary":
        if y.ndim != 1:
            raise EvaluationError(f"binary labels must be 1-D, got shape {y.shape}")
        if p.ndim == 2 and p.shape[1] == 2:
            _check_row_sums(p)
            p = p[:, 1]
        elif p.ndim != 1:
            raise EvaluationError(f"binary probabilities must have shape (n,) or (n, 2), got {p.shape}")
        if np.any((y != 0) & (y != 1)):
            raise EvaluationError("binary labels must be 0 or 1")
    elif task == "multiclass":
        if y.ndim != 1:
            raise EvaluationError(f"multiclass labels must be 1-D class indices, got shape {y.shape}")
        if p.ndim != 2 or p.shape[1] < 2:
            raise EvaluationError(f"multiclass probabilities must have shape (n, K) with K >= 2, got {p.shape}")
        _check_row_sums(p)
        if np.any((y < 0) | (y >= p.shape[1])):
            raise EvaluationError(f"multiclass labels must lie in 0..{p.shape[1] - 1}, found {y.min()}..{y.max()}")
    else:
        if y.ndim != 2 or p.ndim != 2:
            raise EvaluationError(
                f"multilabel labels and probabilities must be 2-D (n, L), got {y.shape} and {p.shape}"
            )
        if y.shape != p.shape:
            raise EvaluationError(f"multilabel labels and probabilities have mismatched shapes {y.shape} vs {p.shape}")
        if np.any((y != 0) & (y != 1)):
            raise EvaluationError("multilabel labels must be 0 or 1")
    return y, p


def _check_row_sums(p: np.ndarray) -> None:
    deviation = np.abs(p.sum(axis=1) - 1.0)
    if np.any(deviation > PROB_SUM_ATOL):
        row = int(np.argmax(deviation))
        raise EvaluationError(
            f"probability rows must sum to 1 (tolerance {PROB_SUM_ATOL:g}); row {row} sums to {p[row].sum():.9g}"
        )


# --------------------------------------------------------------------------- AUROC


@dataclass(frozen=True)
class AurocResult:
    """Macro-AUROC with its bookkeeping.

    Attributes
    ----------
    value : float
        Mean AUROC over the classes (labels) that have both outcomes in the test split.
    n_skipped : int
        Classes (labels) skipped for having a single outcome.
    per_class : numpy.ndarray
        AUROC per class (label); NaN where skipped. Binary: one entry.
    """

    value: float
    n_skipped: int
    per_class: np.ndarray


def binary_auroc(positive: np.ndarray, scores: np.ndarray) -> float:
    """AUROC of scores against boolean outcomes by the rank-sum identity.

    ``AUROC = (R_+ - n_+ (n_+ + 1) / 2) / (n_+ n_-)``, with ``R_+`` the sum of the
    (tie-averaged) ranks of the positives: the Mann-Whitney U statistic over
    ``n_+ n_-`` (Hanley & McNeil 1982), equal to the trapezoidal area under the
    ROC curve with ties counted one half.

    Returns NaN when one outcome is absent (the caller skips and counts it).
    """
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _auroc_checked(y: np.ndarray, p: np.ndarray, task: str) -> AurocResult:
    if task == "binary":
        per_class = np.array([binary_auroc(y == 1, p)])
    elif task == "multiclass":
        per_class = np.array([binary_auroc(y == k, p[:, k]) for k in range(p.shape[1])])
    else:
        per_class = np.array([binary_auroc(y[:, k] == 1, p[:, k]) for k in range(p.shape[1])])
    kept = ~np.isnan(per_class)
    if not kept.any():
        what = "label" if task == "multilabel" else "class"
        raise EvaluationError(
            f"AUROC undefined: every {what} has a single outcome in the test split ({per_class.size} skipped)"
        )
    return AurocResult(float(per_class[kept].mean()), int((~kept).sum()), per_class)


def macro_auroc(labels: object, probabilities: object, task: str) -> AurocResult:
    """Macro-AUROC: one-vs-rest over classes (multiclass), mean over labels (multilabel).

    ``AUROC_macro = (1 / |K'|) * sum_{k in K'} AUROC(1[y = k], p_k)`` where ``K'``
    holds the classes (labels) with both outcomes in the split; the others are
    skipped and counted (``n_skipped``). Binary: AUROC of the positive-class
    probability. Agrees with scikit-learn's ``roc_auc_score`` (``multi_class="ovr",
    average="macro"``; ``average="macro"`` for multilabel) where every class is
    present (Hand & Till 2001; Fawcett 2006).

    Raises
    ------
    EvaluationError
        Invalid input, or no class (label) with both outcomes.
    """
    y, p = validate_predictions(labels, probabilities, task)
    return _auroc_checked(y, p, task)


# --------------------------------------------------------------------------- ECE


def bin_edges(n_bins: int) -> np.ndarray:
    """Edges ``m / M``, ``m = 0..M``, of the equal-width bins, by exact division."""
    return np.arange(n_bins + 1, dtype=np.float64) / n_bins


def _check_bins(n_bins: int) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise EvaluationError(f"n_bins must be a positive integer, got {n_bins!r}")
    return int(n_bins)


def _uniform_bin_index(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    # searchsorted(side="left") gives i with edges[i-1] < c <= edges[i]: bins are (lo, hi].
    index = np.searchsorted(bin_edges(n_bins), confidence, side="left") - 1
    return np.clip(index, 0, n_bins - 1)


def _binned_gap(confidence: np.ndarray, correct: np.ndarray, index: np.ndarray, n_bins: int) -> float:
    # sum_b (n_b / n) |acc_b - conf_b| = sum_b |sum_acc_b - sum_conf_b| / n
    sum_conf = np.bincount(index, weights=confidence, minlength=n_bins)
    sum_acc = np.bincount(index, weights=correct, minlength=n_bins)
    return float(np.abs(sum_acc - sum_conf).sum() / confidence.size)


def _equal_mass_index(confidence: np.ndarray, n_bins: int) -> tuple[np.ndarray, int]:
    order = np.argsort(confidence, kind="stable")
    index = np.empty(confidence.size, dtype=np.int64)
    for b, members in enumerate(np.array_split(order, n_bins)):
        index[members] = b
    return index, n_bins


def _top_label(y: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    prediction = np.argmax(p, axis=1)
    return p[np.arange(p.shape[0]), prediction], (prediction == y).astype(np.float64)


def _binary_columns(y: np.ndarray, p: np.ndarray, task: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(probability, outcome) pairs binned by the binary and per-label variants."""
    if task == "binary":
        return [(p, (y == 1).astype(np.float64))]
    if task == "multiclass":
        return [(p[:, k], (y == k).astype(np.float64)) for k in range(p.shape[1])]
    return [(p[:, k], y[:, k].astype(np.float64)) for k in range(p.shape[1])]


def _ece_checked(y: np.ndarray, p: np.ndarray, task: str, n_bins: int) -> float:
    if task == "multiclass":
        confidence, correct = _top_label(y, p)
        return _binned_gap(confidence, correct, _uniform_bin_index(confidence, n_bins), n_bins)
    gaps = [_binned_gap(q, o, _uniform_bin_index(q, n_bins), n_bins) for q, o in _binary_columns(y, p, task)]
    return float(np.mean(gaps))


def expected_calibration_error(
    labels: object, probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS
) -> float:
    """Expected calibration error with equal-width bins.

    ``ECE = sum_{m=1..M} (|B_m| / n) * |acc(B_m) - conf(B_m)|`` (Naeini et al. 2015;
    Guo et al. 2017, "On calibration of modern neural networks", eq. 3), with
    ``conf(B_m)`` the mean confidence and ``acc(B_m)`` the observed frequency in bin
    ``B_m = ((m-1)/M, m/M]``.

    * multiclass: top-label confidence ``max_k p_k`` against ``argmax_k p_k == y``
      (variant ``"top-label"``);
    * binary: the positive-class probability against ``y == 1``
      (``"binary-positive"``);
    * multilabel: the mean over labels of that binary ECE (``"binary-mean"``).

    Parameters
    ----------
    labels, probabilities, task
        See :func:`validate_predictions`.
    n_bins : int
        Number of equal-width bins ``M`` (default 15).

    Returns
    -------
    float
        ECE in [0, 1].

    Raises
    ------
    EvaluationError
        Invalid input or ``n_bins``.
    """
    n_bins = _check_bins(n_bins)
    y, p = validate_predictions(labels, probabilities, task)
    return _ece_checked(y, p, task, n_bins)


# Polynomials up to this length are multiplied directly, longer ones by FFT.
_DIRECT_CONVOLUTION = 16


def _poisson_binomial_pmf(probabilities: np.ndarray) -> np.ndarray:
    """Probability mass functions of the sums of independent Bernoulli variables, one per row.

    ``probabilities`` is ``(m, w)`` with ``w`` a power of two (pad with 0, which
    adds nothing to a sum); returns ``(m, w + 1)``, entry ``k`` the probability
    that row's sum equals ``k``. The pmf is the product of the polynomials
    ``(1 - c_i) + c_i z``, multiplied pairwise in a balanced tree of FFT
    convolutions (``log2 w`` levels, every row and pair at once), which keeps the
    cost at ``O(m w log w)``; rounding error stays below 1e-13.
    """
    polys = np.stack([1.0 - probabilities, probabilities], axis=-1)  # (m, w, 2)
    while polys.shape[1] > 1:
        left, right = polys[:, 0::2], polys[:, 1::2]
        size = polys.shape[2]
        length = 2 * size - 1
        if size <= _DIRECT_CONVOLUTION:
            # short polynomials: direct convolution beats many tiny FFTs
            polys = np.zeros((*left.shape[:2], length))
            for j in range(size):
                polys[..., j : j + size] += left[..., j : j + 1] * right
        else:
            spectrum = np.fft.rfft(left, length, axis=-1) * np.fft.rfft(right, length, axis=-1)
            polys = np.fft.irfft(spectrum, length, axis=-1)
    return polys[:, 0, :]


def _calibrated_abs_deviation(confidence: np.ndarray, index: np.ndarray, n_bins: int) -> float:
    """``sum_b E|S_b - mu_b|`` for independent ``o_i ~ Bernoulli(c_i)``.

    ``S_b = sum_{i in B_b} o_i`` is Poisson-binomial with mean
    ``mu_b = sum_{i in B_b} c_i``; its law comes from :func:`_poisson_binomial_pmf`
    (every non-empty bin at once, shorter bins padded with ``c = 0``).
    """
    counts = np.bincount(index, minlength=n_bins)
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        return 0.0
    width = 1 << int(np.ceil(np.log2(max(int(counts.max()), 1))))
    padded = np.zeros((filled.size, width))
    order = np.argsort(index, kind="stable")
    slot = np.arange(confidence.size) - np.repeat(np.cumsum(counts) - counts, counts)
    padded[np.searchsorted(filled, index[order]), slot] = confidence[order]
    pmf = _poisson_binomial_pmf(padded)
    mean = padded.sum(axis=1, keepdims=True)
    # FFT rounding leaves pmf entries of order -1e-17 where the exact value is 0
    # (a bin of certain outcomes); the deviation itself is never negative.
    return max(0.0, float((pmf * np.abs(np.arange(width + 1)[None, :] - mean)).sum()))


def _ece_floor_checked(p: np.ndarray, task: str, n_bins: int) -> float:
    if task == "multiclass":
        confidence = p.max(axis=1)
        floor = _calibrated_abs_deviation(confidence, _uniform_bin_index(confidence, n_bins), n_bins) / p.shape[0]
    else:
        columns = [p] if task == "binary" else [p[:, k] for k in range(p.shape[1])]
        floor = float(np.mean([_calibrated_abs_deviation(q, _uniform_bin_index(q, n_bins), n_bins) / q.size
                               for q in columns]))
    return min(1.0, floor)


def ece_floor(probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS) -> float:
    """Expected ECE of a perfectly calibrated predictor with the same confidences and n.

    The finite-sample floor of :func:`expected_calibration_error`: even a model
    whose probabilities are exactly right has a positive binned ECE on ``n``
    examples, because each bin's observed frequency scatters around its mean
    confidence. The floor is that ECE's expectation when the outcomes are drawn
    from the model's own probabilities, with the confidences, bins and variant
    of ``ece`` held fixed:

    ``floor = E[ sum_m (1/n) |sum_{i in B_m} (o_i - c_i)| ] = (1/n) sum_m E|S_m - mu_m|``

    with ``o_i ~ Bernoulli(c_i)`` independent, ``S_m = sum_{i in B_m} o_i``
    (Poisson-binomial) and ``mu_m = sum_{i in B_m} c_i``. Per variant:

    * multiclass (top-label): ``c_i = max_k p_ik``; a label drawn from ``p_i``
      equals the argmax with probability ``c_i``, so correctness is
      ``Bernoulli(c_i)`` and the argmax does not move;
    * binary: ``c_i = p_i`` against the positive outcome;
    * multilabel: the mean over labels of the binary floor.

    Computed **exactly**, not by Monte Carlo: the Poisson-binomial law of every
    bin is the product of its members' generating polynomials ``(1 - c_i) +
    c_i z`` (Chen & Liu 1997), multiplied by FFT convolution; the only error is
    floating-point rounding, below 1e-12. The excess ``ece - ece_floor`` is the miscalibration that
    the sample size cannot explain (Roelofs et al. 2022, "Mitigating bias in
    calibration error estimation", AISTATS; Bröcker & Smith 2007 for
    consistency resampling, of which this is the exact expectation).

    Parameters
    ----------
    probabilities : array-like
        As :func:`validate_predictions` (labels are not needed).
    task : {"binary", "multiclass", "multilabel"}
    n_bins : int
        Equal-width bins, as for the ECE.

    Returns
    -------
    float
        The floor in [0, 1].

    Raises
    ------
    EvaluationError
        Invalid probabilities or ``n_bins``.

    Examples
    --------
    >>> round(ece_floor(np.array([0.5, 0.5]), "binary", n_bins=2), 12)  # S in {0,1,2}, E|S-1| = 1/2
    0.25
    """
    n_bins = _check_bins(n_bins)
    p = _as_float_array(probabilities, "probabilities")
    dummy = np.zeros(p.shape if task == "multilabel" else p.shape[:1], dtype=np.int64)
    _, p = validate_predictions(dummy, p, task)
    return _ece_floor_checked(p, task, n_bins)


def classwise_ece(labels: object, probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS) -> float:
    """Classwise ECE: the mean over classes of the binary ECE of each class's probability.

    ``cwECE = (1/K) sum_k sum_m (|B_{k,m}| / n) |freq_{k,m} - conf_{k,m}|`` with
    equal-width bins of ``p_k`` against ``1[y = k]`` (Kull et al. 2019;
    Kumar et al. 2019; the "static calibration error" of Nixon et al. 2019).
    Binary: both columns ``(1 - p, p)``; multilabel: identical to the ECE.
    """
    n_bins = _check_bins(n_bins)
    y, p = validate_predictions(labels, probabilities, task)
    if task == "binary":
        p = np.column_stack([1.0 - p, p])
        task = "multiclass"
    gaps = [_binned_gap(q, o, _uniform_bin_index(q, n_bins), n_bins) for q, o in _binary_columns(y, p, task)]
    return float(np.mean(gaps))


def adaptive_ece(labels: object, probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS) -> float:
    """Adaptive (equal-mass) ECE.

    As :func:`expected_calibration_error` (same variants), but the bins hold equal
    numbers of examples: the examples sorted by confidence (stable sort) are split
    into ``M`` consecutive groups whose sizes differ by at most one
    (``numpy.array_split``); tied confidences may fall in neighbouring bins
    ("adaptive calibration error", Nixon et al. 2019; Kumar et al. 2019).
    """
    n_bins = _check_bins(n_bins)
    y, p = validate_predictions(labels, probabilities, task)
    if task == "multiclass":
        confidence, correct = _top_label(y, p)
        index, m = _equal_mass_index(confidence, n_bins)
        return _binned_gap(confidence, correct, index, m)
    gaps = []
    for q, o in _binary_columns(y, p, task):
        index, m = _equal_mass_index(q, n_bins)
        gaps.append(_binned_gap(q, o, index, m))
    return float(np.mean(gaps))


def reliability_diagram(
    labels: object, probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS
) -> pd.DataFrame:
    """Per-bin data of the reliability diagram behind :func:`expected_calibration_error`.

    Returns
    -------
    pandas.DataFrame
        One row per (target, bin), every bin present: ``target`` (``"top-label"``
        for multiclass, ``"positive"`` for binary, ``"label <k>"`` per label for
        multilabel), ``bin`` (0..M-1), ``lower``, ``upper`` (the bin ``(lower,
        upper]``), ``confidence`` (mean confidence), ``accuracy`` (observed
        frequency of the outcome) and ``count``; ``confidence`` and ``accuracy``
        are NaN in empty bins. The ECE equals ``sum(count * |accuracy -
        confidence|) / n`` over the non-empty bins (averaged over targets for
        multilabel).
    """
    n_bins = _check_bins(n_bins)
    y, p = validate_predictions(labels, probabilities, task)
    if task == "multiclass":
        pairs = [("top-label", *_top_label(y, p))]
    elif task == "binary":
        pairs = [("positive", p, (y == 1).astype(np.float64))]
    else:
        pairs = [(f"label {k}", p[:, k], y[:, k].astype(np.float64)) for k in range(p.shape[1])]
    edges = bin_edges(n_bins)
    frames = []
    for target, confidence, outcome in pairs:
        index = _uniform_bin_index(confidence, n_bins)
        count = np.bincount(index, minlength=n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_conf = np.bincount(index, weights=confidence, minlength=n_bins) / count
            mean_acc = np.bincount(index, weights=outcome, minlength=n_bins) / count
        frames.append(
            pd.DataFrame(
                {
                    "target": target,
                    "bin": np.arange(n_bins),
                    "lower": edges[:-1],
                    "upper": edges[1:],
                    "confidence": np.where(count > 0, mean_conf, np.nan),
                    "accuracy": np.where(count > 0, mean_acc, np.nan),
                    "count": count.astype(np.int64),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- Brier, NLL, accuracy


def _one_hot(y: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.zeros((y.size, n_classes), dtype=np.float64)
    out[np.arange(y.size), y] = 1.0
    return out


def _brier_checked(y: np.ndarray, p: np.ndarray, task: str) -> float:
    if task == "binary":
        return float(np.mean((p - y) ** 2))
    target = _one_hot(y, p.shape[1]) if task == "multiclass" else y.astype(np.float64)
    return float(np.mean((p - target) ** 2))


def brier_score(labels: object, probabilities: object, task: str) -> float:
    """Brier score, averaged over classes (labels) so that it lies in [0, 1].

    ``Brier = (1 / (n K)) sum_i sum_k (p_ik - 1[y_i = k])^2`` (Brier 1950), which is
    the usual multi-class Brier score divided by ``K``; binary:
    ``(1/n) sum_i (p_i - y_i)^2`` (identical to the two-column form);
    multilabel: the mean over examples and labels.
    """
    y, p = validate_predictions(labels, probabilities, task)
    return _brier_checked(y, p, task)


def _nll_checked(y: np.ndarray, p: np.ndarray, task: str) -> float:
    if task == "multiclass":
        chosen = np.clip(p[np.arange(y.size), y], NLL_EPS, 1.0)
        return float(-np.mean(np.log(chosen)))
    q = np.clip(p, NLL_EPS, 1.0 - NLL_EPS)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log1p(-q)))


def negative_log_likelihood(labels: object, probabilities: object, task: str) -> float:
    """Mean negative log-likelihood with clipped probabilities.

    Multiclass: ``NLL = -(1/n) sum_i log max(p_{i, y_i}, eps)``; binary and
    multilabel: the binary cross-entropy
    ``-(1/(nL)) sum_ik [y_ik log q_ik + (1 - y_ik) log(1 - q_ik)]`` with
    ``q = clip(p, eps, 1 - eps)``, averaged over labels like the Brier score.
    ``eps`` is :data:`NLL_EPS` (1e-15), so one confidently wrong example costs at
    most ``-log(1e-15) = 34.5`` nats (Good 1952; Quinonero-Candela et al. 2006).
    """
    y, p = validate_predictions(labels, probabilities, task)
    return _nll_checked(y, p, task)


def _accuracy_checked(y: np.ndarray, p: np.ndarray, task: str) -> float:
    if task == "multiclass":
        return float(np.mean(np.argmax(p, axis=1) == y))
    return float(np.mean((p >= DECISION_THRESHOLD) == (y == 1)))


def accuracy(labels: object, probabilities: object, task: str) -> float:
    """Accuracy: top-1 (argmax, first class on ties) for multiclass; for binary and
    multilabel, the prediction is ``p >= 0.5`` (:data:`DECISION_THRESHOLD`) and the
    value is the mean over examples (and labels)."""
    y, p = validate_predictions(labels, probabilities, task)
    return _accuracy_checked(y, p, task)


# --------------------------------------------------------------------------- all at once


@dataclass(frozen=True)
class MetricSet:
    """The metrics of one evaluation, as stored in a results row."""

    auroc: float
    ece: float
    ece_floor: float
    brier: float
    nll: float
    accuracy: float
    n_test: int
    n_skipped: int
    ece_bins: int
    ece_variant: str

    def as_dict(self) -> dict[str, object]:
        """The fields as a plain dict keyed by results-table column names."""
        return {
            "auroc": self.auroc,
            "ece": self.ece,
            "ece_floor": self.ece_floor,
            "ece_excess": self.ece - self.ece_floor,
            "brier": self.brier,
            "nll": self.nll,
            "accuracy": self.accuracy,
            "n_test": self.n_test,
            "n_skipped": self.n_skipped,
            "ece_bins": self.ece_bins,
            "ece_variant": self.ece_variant,
        }


def evaluate_predictions(
    labels: object, probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS
) -> MetricSet:
    """Every results-table metric of one prediction, validating the input once.

    Returns
    -------
    MetricSet
        AUROC (:func:`macro_auroc`), ECE (:func:`expected_calibration_error`)
        and its floor (:func:`ece_floor`), Brier, NLL, accuracy, ``n_test``, ``n_skipped``, ``ece_bins`` and
        ``ece_variant``.

    Raises
    ------
    EvaluationError
        Invalid input, or AUROC undefined (single-outcome test split).
    """
    n_bins = _check_bins(n_bins)
    y, p = validate_predictions(labels, probabilities, task)
    auroc = _auroc_checked(y, p, task)
    return MetricSet(
        auroc=auroc.value,
        ece=_ece_checked(y, p, task, n_bins),
        ece_floor=_ece_floor_checked(p, task, n_bins),
        brier=_brier_checked(y, p, task),
        nll=_nll_checked(y, p, task),
        accuracy=_accuracy_checked(y, p, task),
        n_test=int(y.shape[0]),
        n_skipped=auroc.n_skipped,
        ece_bins=n_bins,
        ece_variant=ECE_VARIANTS[task],
    )
