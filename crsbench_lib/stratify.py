"""Strata for stratified sampling of labelled examples.

One rule, shared by the two places that sample stratified subsets: the
development-pool resampler of real data (:mod:`crsbench_lib.data.resample`)
and the label-fraction subsets of the probe (:mod:`crsbench_lib.evaluation.fractions`).
It is a foundation module (numpy only), so both layers may import it without an
arrow between them.
"""

from __future__ import annotations

import numpy as np


def label_strata(labels: np.ndarray) -> np.ndarray:
    """Stratum of each example: its class, or its rarest positive label.

    Multi-label examples are assigned to the rarest label they carry, so that a
    stratified sample keeps every label's positives in proportion even when one
    label is rare; an example with no positive label gets stratum -1.

    Parameters
    ----------
    labels : ndarray
        ``(n,)`` class indices, or ``(n, L)`` 0/1 indicators (multi-label).

    Returns
    -------
    ndarray of int64, shape (n,)
        The stratum of each example.

    Examples
    --------
    >>> label_strata(np.array([2, 0, 1])).tolist()
    [2, 0, 1]
    >>> label_strata(np.array([[1, 1], [1, 0], [0, 0]])).tolist()  # label 1 is rarer
    [1, 0, -1]
    """
    y = np.asarray(labels)
    if y.ndim == 1:
        return y.astype(np.int64)
    prevalence = y.sum(axis=0)
    order = np.argsort(prevalence, kind="stable")  # rarest first
    stratum = np.full(y.shape[0], -1, dtype=np.int64)
    # Rarest label written last, so it wins where an example carries several.
    for k in order[::-1]:
        stratum[y[:, k] == 1] = k
    return stratum
