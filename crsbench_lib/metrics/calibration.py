"""Calibration error of predictions (method section 2, step 3).

The binned ECE under draws of image multiplicities (the two-level bootstrap of
:mod:`crsbench_lib.scoring.two_level_bootstrap`).
"""

from __future__ import annotations

import numpy as np


def weighted_ece(proba: np.ndarray, labels: np.ndarray, task: str, weights: np.ndarray, n_bins: int) -> np.ndarray:
    """Binned ECE (items, B) under draw multiplicities, as :func:`~crsbench_lib.evaluation.metrics.expected_calibration_error`.

    ``ECE_b = sum_m |sum_{i in B_m} w_bi (o_i - c_i)| / sum_i w_bi``: one matrix
    product of the multiplicities with the per-bin gaps of every item.
    """
    items, n, width = proba.shape
    p = proba.astype(np.float64)
    if task == "multiclass":
        pairs = [(p.max(axis=2), (p.argmax(axis=2) == labels[None, :]).astype(np.float64))]
    elif task == "binary":
        pairs = [(p[:, :, 0], np.broadcast_to((labels == 1).astype(np.float64), (items, n)))]
    else:
        pairs = [(p[:, :, k], np.broadcast_to(labels[:, k].astype(np.float64), (items, n))) for k in range(width)]
    edges = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    weights = weights.astype(np.float64)
    total = weights.sum(axis=1)
    out = np.zeros((items, weights.shape[0]))
    for confidence, outcome in pairs:
        index = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, n_bins - 1)  # (items, n)
        gaps = np.zeros((n, items, n_bins))
        np.put_along_axis(gaps, index.T[:, :, None], (outcome - confidence).T[:, :, None], axis=2)
        binned = weights @ gaps.reshape(n, items * n_bins)  # (B, items * bins)
        out += np.abs(binned.reshape(-1, items, n_bins)).sum(axis=2).T / total[None, :]
    return out / len(pairs)
