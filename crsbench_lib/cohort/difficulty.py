"""How hard is a phantom dataset? A plain pixel probe as the yardstick.

The cohort must be neither trivial nor hopeless: a linear probe on raw
standardised pixels should beat chance clearly but stay well below perfect,
leaving room for better encoders to differ. This module is the one place that
measures it (used by the tests and the benchmark).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from crsbench_lib.evaluation.metrics import macro_auroc

#: Inverse regularisation strength of the pixel probe (standardised pixels are many and collinear).
PROBE_C = 0.001
PROBE_MAX_ITER = 300


def _flat(images: np.ndarray) -> np.ndarray:
    return images.reshape(len(images), -1).astype(np.float32) / 255.0


class PixelProbe:
    """Standardised pixels + L2 logistic regression (one per label for multi-label).

    Parameters
    ----------
    task : {"multiclass", "binary", "multilabel"}
        Task type of the labels.
    C : float
        Inverse regularisation strength.
    """

    def __init__(self, task: str, C: float = PROBE_C) -> None:
        self.task = task
        self.C = C

    def fit(self, images: np.ndarray, labels: np.ndarray) -> PixelProbe:
        """Fit the scaler and the logistic regression(s) on training images."""
        x = _flat(images)
        self.scaler_ = StandardScaler().fit(x)
        z = self.scaler_.transform(x)
        # One BLAS thread: these problems are small, and on a shared two-core
        # machine a threaded BLAS oversubscribes and runs tens of times slower.
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore", ConvergenceWarning)
            if self.task == "multilabel":
                self.models_ = [
                    LogisticRegression(C=self.C, max_iter=PROBE_MAX_ITER).fit(z, labels[:, k])
                    for k in range(labels.shape[1])
                ]
            else:
                self.models_ = [LogisticRegression(C=self.C, max_iter=PROBE_MAX_ITER).fit(z, labels)]
        return self

    def scores(self, images: np.ndarray) -> np.ndarray:
        """Class probabilities ``(N, K)`` (multi-label: per-label positive probability)."""
        z = self.scaler_.transform(_flat(images))
        if self.task == "multilabel":
            return np.column_stack([m.predict_proba(z)[:, 1] for m in self.models_])
        proba = self.models_[0].predict_proba(z)
        n_classes = int(self.models_[0].classes_.max()) + 1
        full = np.zeros((len(z), n_classes))
        full[:, self.models_[0].classes_] = proba
        return full

    def auroc(self, images: np.ndarray, labels: np.ndarray) -> float:
        """Macro-AUROC on a labelled image set (:func:`crsbench_lib.evaluation.metrics.macro_auroc`)."""
        return macro_auroc(labels, self.scores(images), self.task).value
