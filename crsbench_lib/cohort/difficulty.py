"""How hard is a phantom dataset? A pixel probe below, an attribute probe above.

The cohort must need representation learning: a linear probe on raw
standardised pixels (:class:`PixelProbe`) should beat chance but stay far below
what the images contain. What they contain is measured without any encoder by
:class:`AttributeProbe`, the same linear probe on the generator's own scene
parameters (lesion structures, counts, heart size, ...; never the acquisition
nuisances): an upper proxy for a learned encoder that recovered them. The gap
between the two is the room a good encoder has; the attribute probe's own
distance from 1 is the class signal's built-in imperfection (overlapping
distributions and label noise). This module is the one place that measures
both (used by the tests and the benchmark).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from crsbench_lib.cohort.acquisition import NUISANCE_ATTRIBUTES, Attribute
from crsbench_lib.cohort.datasets import SITE_ATTRIBUTE
from crsbench_lib.metrics.auroc import macro_auroc

#: Inverse regularisation strength of the pixel probe (standardised pixels are many and collinear).
PROBE_C = 0.001
PROBE_MAX_ITER = 300


def _flat(images: np.ndarray) -> np.ndarray:
    return images.reshape(len(images), -1).astype(np.float32) / 255.0


def attribute_features(attributes: dict[str, np.ndarray], spec: dict[str, Attribute]) -> np.ndarray:
    """Design matrix of the scene attributes (acquisition nuisances and the site left out).

    Continuous and binary attributes enter as they are, counts as ``log1p``,
    categorical ones one-hot.
    """
    columns = []
    for name, attr in spec.items():
        if name in NUISANCE_ATTRIBUTES or name == SITE_ATTRIBUTE or name not in attributes:
            continue
        values = np.asarray(attributes[name])
        if attr.kind == "categorical":
            columns.extend((values == k).astype(np.float32) for k in range(attr.n_classes))
        elif attr.kind == "count":
            columns.append(np.log1p(values).astype(np.float32))
        else:
            columns.append(values.astype(np.float32))
    return np.column_stack(columns)


class _LinearProbe:
    """Standardised features + L2 logistic regression (one per label for multi-label)."""

    def __init__(self, task: str, C: float = PROBE_C) -> None:
        self.task = task
        self.C = C

    def _features(self, data: np.ndarray) -> np.ndarray:
        return np.asarray(data, dtype=np.float32)

    def fit(self, data: np.ndarray, labels: np.ndarray) -> _LinearProbe:
        """Fit the scaler and the logistic regression(s) on training data."""
        x = self._features(data)
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

    def scores(self, data: np.ndarray) -> np.ndarray:
        """Class probabilities ``(N, K)`` (multi-label: per-label positive probability)."""
        z = self.scaler_.transform(self._features(data))
        if self.task == "multilabel":
            return np.column_stack([m.predict_proba(z)[:, 1] for m in self.models_])
        proba = self.models_[0].predict_proba(z)
        n_classes = int(self.models_[0].classes_.max()) + 1
        full = np.zeros((len(z), n_classes))
        full[:, self.models_[0].classes_] = proba
        return full

    def auroc(self, data: np.ndarray, labels: np.ndarray) -> float:
        """Macro-AUROC on labelled data (:func:`crsbench_lib.metrics.auroc.macro_auroc`)."""
        return macro_auroc(labels, self.scores(data), self.task).value


class AttributeProbe(_LinearProbe):
    """Linear probe on :func:`attribute_features` (the scene parameters), the upper proxy.

    Parameters
    ----------
    task : {"multiclass", "binary", "multilabel"}
        Task type of the labels.
    C : float
        Inverse regularisation strength (default 1: few, informative features).
    """

    def __init__(self, task: str, C: float = 1.0) -> None:
        super().__init__(task, C)


class PixelProbe(_LinearProbe):
    """Standardised pixels + L2 logistic regression (one per label for multi-label).

    Parameters
    ----------
    task : {"multiclass", "binary", "multilabel"}
        Task type of the labels.
    C : float
        Inverse regularisation strength.
    """

    def _features(self, data: np.ndarray) -> np.ndarray:
        return _flat(data)
