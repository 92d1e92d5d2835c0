"""Calibration error of predictions (method section 2, step 3), plain and under bootstrap draws.

Conventions, fixed here once:

* **ECE variant.** Multi-class: top-label (confidence = max probability,
  correctness = argmax equals label). Binary: *positive-class* probability
  binned against the positive outcome (``"binary-positive"``), which is the
  one-label case of the multi-label convention (mean of per-label binary ECE,
  ``"binary-mean"``); the variant name is stored with every value
  (:data:`ECE_VARIANTS`).
* **Bins.** Equal-width bins ``B_m = (m/M, (m+1)/M]`` for ``m = 0..M-1``, with a
  confidence of exactly 0 placed in the first bin (the edges are ``m / M``
  computed by exact division, so a value on an edge always falls in the lower bin).
  One bin rule serves the plain ECE, its floor, the reliability diagram and the
  weighted ECE of the two-level bootstrap (:func:`weighted_ece`, under draws of
  image multiplicities, :mod:`crsbench_lib.scoring.two_level_bootstrap`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from crsbench_lib.errors import EvaluationError
from crsbench_lib.metrics.validation import _as_float_array, validate_predictions

#: Default number of equal-width ECE bins (the reference standard records the value in use).
DEFAULT_ECE_BINS: int = 15
#: The ECE variant name recorded with each task's ECE value.
ECE_VARIANTS: dict[str, str] = {
    "binary": "binary-positive",
    "multiclass": "top-label",
    "multilabel": "binary-mean",
}


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


def _folded_normal_mean(mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """``E|X|`` for ``X ~ N(mu, sigma^2)``, elementwise; ``|mu|`` where ``sigma`` is 0."""
    from scipy.special import ndtr

    mu, sigma = np.asarray(mu, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
    out = np.abs(mu)
    spread = sigma > 0
    m, s = mu[spread], sigma[spread]
    out[spread] = s * np.sqrt(2.0 / np.pi) * np.exp(-0.5 * (m / s) ** 2) + m * (1.0 - 2.0 * ndtr(-m / s))
    return out


def _debiased_bin_sum(count: np.ndarray, sum_outcome: np.ndarray, sum_gap: np.ndarray) -> np.ndarray:
    """``sum_b (2 |S_b| - n_b E|N(g_b, v_b)|)`` over the last axis (bins): the debiased gap, times n.

    ``n_b`` is a bin's (weighted) count, ``S_b = sum (o_i - c_i)`` its summed gap,
    ``g_b = S_b / n_b`` and ``v_b = y_b (1 - y_b) / n_b`` the sampling variance
    of its observed frequency ``y_b``. Empty bins add 0.
    """
    filled = count > 0
    safe = np.where(filled, count, 1.0)
    frequency = np.clip(sum_outcome / safe, 0.0, 1.0)
    gap = sum_gap / safe
    sigma = np.sqrt(frequency * (1.0 - frequency) / safe)
    term = 2.0 * np.abs(sum_gap) - count * _folded_normal_mean(gap, sigma)
    return np.where(filled, term, 0.0).sum(axis=-1)


def _debiased_binned_gap(confidence: np.ndarray, correct: np.ndarray, index: np.ndarray, n_bins: int) -> float:
    count = np.bincount(index, minlength=n_bins).astype(np.float64)
    sum_outcome = np.bincount(index, weights=correct, minlength=n_bins)
    sum_gap = sum_outcome - np.bincount(index, weights=confidence, minlength=n_bins)
    return float(_debiased_bin_sum(count, sum_outcome, sum_gap) / confidence.size)


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


def _ece_checked(y: np.ndarray, p: np.ndarray, task: str, n_bins: int, debias: bool = False) -> float:
    gap = _debiased_binned_gap if debias else _binned_gap
    if task == "multiclass":
        confidence, correct = _top_label(y, p)
        return gap(confidence, correct, _uniform_bin_index(confidence, n_bins), n_bins)
    gaps = [gap(q, o, _uniform_bin_index(q, n_bins), n_bins) for q, o in _binary_columns(y, p, task)]
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
        See :func:`~crsbench_lib.metrics.validation.validate_predictions`.
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


def debiased_ece(labels: object, probabilities: object, task: str, n_bins: int = DEFAULT_ECE_BINS) -> float:
    """Binned ECE with its finite-sample bias estimated and removed (Kumar et al. 2019).

    The plug-in :func:`expected_calibration_error` is biased upward: each bin's
    ``|acc - conf|`` turns the sampling noise of ``acc`` into excess, so even a
    perfectly calibrated model scores above zero (:func:`ece_floor`). Kumar,
    Liang & Ma (2019, "Verified uncertainty calibration", NeurIPS, section 5)
    estimate that bias by redrawing each bin's observed frequency from a normal
    law around itself and subtract it; here the expectation is taken in closed
    form (the mean of a folded normal), so no random draw is involved:

    ``dECE = sum_m (|B_m| / n) (2 |g_m| - E|N(g_m, v_m)|)``, with
    ``g_m = acc(B_m) - conf(B_m)``, ``v_m = acc(B_m) (1 - acc(B_m)) / |B_m|``
    and ``E|N(g, v)| = sqrt(2 v / pi) exp(-g^2 / 2v) + g (1 - 2 Phi(-g / sqrt(v)))``.

    Bins, variants and the multilabel mean are those of
    :func:`expected_calibration_error`. The estimate is never above the plug-in
    ECE (``E|N(g, v)| >= |g|``) and can fall below zero when the model is close
    to calibrated. It is nearly unbiased where a bin's gap is large and removes
    about two fifths of the bias where a bin is calibrated (no estimator of
    ``|g|`` is unbiased at ``g = 0``; the correction is a normal approximation
    taken at the estimated gap). Roelofs et al. (2022) compare such estimators
    on simulated truths.

    Parameters
    ----------
    labels, probabilities, task
        See :func:`~crsbench_lib.metrics.validation.validate_predictions`.
    n_bins : int
        Number of equal-width bins ``M`` (default 15).

    Returns
    -------
    float
        The debiased ECE, at most the plug-in ECE (it may be negative).

    Raises
    ------
    EvaluationError
        Invalid input or ``n_bins``.

    Examples
    --------
    >>> y = np.array([0, 1, 0, 1])
    >>> p = np.array([0.5, 0.5, 0.5, 0.5])
    >>> expected_calibration_error(y, p, "binary", n_bins=2)  # calibrated: one bin, frequency 0.5
    0.0
    >>> round(debiased_ece(y, p, "binary", n_bins=2), 4)  # -E|N(0, 1/16)| = -0.25 sqrt(2 / pi)
    -0.1995
    """
    n_bins = _check_bins(n_bins)
    y, p = validate_predictions(labels, probabilities, task)
    return _ece_checked(y, p, task, n_bins, debias=True)


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
        As :func:`~crsbench_lib.metrics.validation.validate_predictions` (labels are not needed).
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


def weighted_ece(proba: np.ndarray, labels: np.ndarray, task: str, weights: np.ndarray, n_bins: int,
                 debias: bool = False) -> np.ndarray:
    """Binned ECE (items, B) under draw multiplicities, as :func:`expected_calibration_error`.

    ``ECE_b = sum_m |sum_{i in B_m} w_bi (o_i - c_i)| / sum_i w_bi``: one matrix
    product of the multiplicities with the per-bin gaps of every item. With
    ``debias``, :func:`debiased_ece` under the same multiplicities (a bin's
    count and frequency weighted by them).
    """
    items, n, width = proba.shape
    p = proba.astype(np.float64)
    if task == "multiclass":
        pairs = [(p.max(axis=2), (p.argmax(axis=2) == labels[None, :]).astype(np.float64))]
    elif task == "binary":
        pairs = [(p[:, :, 0], np.broadcast_to((labels == 1).astype(np.float64), (items, n)))]
    else:
        pairs = [(p[:, :, k], np.broadcast_to(labels[:, k].astype(np.float64), (items, n))) for k in range(width)]
    weights = weights.astype(np.float64)
    total = weights.sum(axis=1)
    out = np.zeros((items, weights.shape[0]))
    for confidence, outcome in pairs:
        index = _uniform_bin_index(confidence, n_bins)  # (items, n)
        gaps = np.zeros((n, items, n_bins))
        np.put_along_axis(gaps, index.T[:, :, None], (outcome - confidence).T[:, :, None], axis=2)
        binned = (weights @ gaps.reshape(n, items * n_bins)).reshape(-1, items, n_bins)  # (B, items, bins)
        if not debias:
            out += np.abs(binned).sum(axis=2).T / total[None, :]
            continue
        members = np.zeros((n, items, n_bins))
        np.put_along_axis(members, index.T[:, :, None], 1.0, axis=2)
        count = (weights @ members.reshape(n, items * n_bins)).reshape(-1, items, n_bins)
        np.put_along_axis(members, index.T[:, :, None], outcome.T[:, :, None], axis=2)
        sum_outcome = (weights @ members.reshape(n, items * n_bins)).reshape(-1, items, n_bins)
        out += _debiased_bin_sum(count, sum_outcome, binned).T / total[None, :]
    return out / len(pairs)
