"""Post-hoc calibrators fitted on the calibration split (method section 2, step 7; section 9, amendment 2).

The calibration split is drawn per seed beside the validation split that chose
the probe's ``C``, so the calibrators are not fitted on the data the probe was
tuned on. The functions below take any held-out logits; "validation" in their
argument names means that held-out split.

They work on the probe's *logits* (:meth:`FittedProbe.logits`) and return
probabilities in the probe's format (binary ``(n, 2)``, multiclass ``(n, K)``,
multilabel ``(n, L)``). The calibration ablation only: never inside the CRS.

=============  ==========================================  ==========================================
name           multiclass                                  binary / multilabel (per label)
=============  ==========================================  ==========================================
temperature    ``softmax(z / T)``, one ``T`` (Guo 2017)    ``sigmoid(z_k / T_k)`` per label
vector         ``softmax(w * z + b)``, per class           Platt ``sigmoid(w_k z_k + b_k)`` (Platt 1999)
               (Guo 2017)
isotonic       one-vs-rest isotonic per class, rows        isotonic per label (Zadrozny & Elkan 2002)
               renormalised (Zadrozny & Elkan 2002)
=============  ==========================================  ==========================================

Design choices, documented here once:

* **Monotone.** Scales are parametrised as ``w = exp(a) > 0`` (and ``T > 0``), so
  binary and per-label temperature and Platt scaling keep each label's ranking:
  AUROC is unchanged for binary and multilabel tasks. (For multiclass with
  ``K > 2`` a single temperature keeps the argmax, hence accuracy, but the
  one-vs-rest rankings of ``softmax(z / T)_k`` may move slightly.)
* **Fitting.** Temperature: bounded Brent search of ``log T`` in
  ``[log 1e-2, log 1e2]`` on the mean validation NLL. Vector/Platt: L-BFGS on the
  mean NLL plus a small ridge :data:`SCALING_RIDGE` on ``(a, b)`` that keeps the
  parameters finite on separable validation sets.
* **Classes absent from validation never break a calibrator** (documented
  fallback): a class (label) without both outcomes in the validation split keeps
  the identity map for its own parameters (``w = 1, b = 0``; ``T = 1`` for a
  multilabel label; identity isotonic map), while the other classes are fitted.
  Validation examples of a class the probe never saw in training (``-inf``
  logit) are left out of the fit, and such classes stay at probability 0.
* **Isotonic renormalisation.** Multiclass one-vs-rest isotonic maps do not sum
  to 1; each row is divided by its sum. A row whose isotonic values are all 0
  keeps its uncalibrated probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit, log_expit, log_softmax
from sklearn.isotonic import IsotonicRegression

from crsbench_lib.errors import EvaluationError
from crsbench_lib.evaluation.probe import logits_to_proba, softmax
from crsbench_lib.metrics.validation import check_task

#: Calibrator names, as in the results table's ``calibration`` column.
CALIBRATOR_NAMES: tuple[str, ...] = ("temperature", "vector", "isotonic")
#: Ridge on the log-scale and bias of vector / Platt scaling.
SCALING_RIDGE: float = 1e-4
#: Search interval of the temperature, as ``log T``.
LOG_TEMPERATURE_BOUNDS: tuple[float, float] = (np.log(1e-2), np.log(1e2))


def _check_inputs(logits: object, labels: object, task: str) -> tuple[np.ndarray, np.ndarray]:
    check_task(task)
    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels)
    expected = 1 if task == "binary" else 2
    if z.ndim != expected:
        raise EvaluationError(f"{task} logits must be {expected}-D, got shape {z.shape}")
    if z.shape[0] == 0:
        raise EvaluationError("validation logits are empty")
    if y.shape[0] != z.shape[0]:
        raise EvaluationError(f"validation logits and labels have mismatched lengths ({z.shape[0]} vs {y.shape[0]})")
    if np.isnan(z).any() or np.isposinf(z).any():
        raise EvaluationError("validation logits contain NaN or +inf")
    if task != "multiclass" and np.isinf(z).any():
        raise EvaluationError(f"{task} logits must be finite")
    if task == "multilabel" and y.shape != z.shape:
        raise EvaluationError(f"multilabel logits and labels have mismatched shapes {z.shape} vs {y.shape}")
    if task != "multilabel" and y.ndim != 1:
        raise EvaluationError(f"{task} validation labels must be 1-D, got shape {y.shape}")
    try:
        labels_f = y.astype(np.float64)
    except (TypeError, ValueError):
        raise EvaluationError("validation labels must be numeric") from None
    if not np.all(np.isfinite(labels_f)) or not np.all(labels_f == np.round(labels_f)):
        raise EvaluationError("validation labels must be finite integers")
    n_values = z.shape[1] if task == "multiclass" else 2
    if labels_f.min() < 0 or labels_f.max() >= n_values:
        raise EvaluationError(f"validation labels must lie in 0..{n_values - 1}, found {labels_f.min():g}..{labels_f.max():g}")
    return z, labels_f.astype(np.int64)


def _active_columns(z: np.ndarray) -> np.ndarray:
    """Classes the probe knows: columns with finite logits (absent classes are -inf)."""
    return np.flatnonzero(np.isfinite(z).all(axis=0))


# --------------------------------------------------------------------------- per-label scalings


def _fit_binary_scaling(z: np.ndarray, y: np.ndarray, with_bias: bool) -> tuple[float, float]:
    """(log scale, bias) minimising the mean BCE of ``sigmoid(exp(a) z + b)``."""
    if with_bias:
        t = y.astype(np.float64)

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w = np.exp(theta[0])
            s = w * z + theta[1]
            value = -np.mean(t * log_expit(s) + (1 - t) * log_expit(-s)) + 0.5 * SCALING_RIDGE * theta @ theta
            g = (expit(s) - t) / z.size
            grad = np.array([np.sum(g * w * z), np.sum(g)]) + SCALING_RIDGE * theta
            return float(value), grad

        result = minimize(loss, np.zeros(2), jac=True, method="L-BFGS-B")
        return float(result.x[0]), float(result.x[1])

    def nll(log_t: float) -> float:
        s = z / np.exp(log_t)
        return float(-np.mean(y * log_expit(s) + (1 - y) * log_expit(-s)))

    result = minimize_scalar(nll, bounds=LOG_TEMPERATURE_BOUNDS, method="bounded", options={"xatol": 1e-8})
    return -float(result.x), 0.0  # scale exp(-log T) = 1 / T


@dataclass
class _PerLabelScaling:
    task: str
    with_bias: bool
    log_scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bias: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def fit(self, z: np.ndarray, y: np.ndarray) -> _PerLabelScaling:
        zz = z[:, None] if self.task == "binary" else z
        yy = y[:, None] if self.task == "binary" else y
        self.log_scale = np.zeros(zz.shape[1])
        self.bias = np.zeros(zz.shape[1])
        for k in range(zz.shape[1]):
            if np.unique(yy[:, k]).size < 2:
                continue  # one outcome in validation: identity (documented fallback)
            self.log_scale[k], self.bias[k] = _fit_binary_scaling(zz[:, k], yy[:, k], self.with_bias)
        return self

    def predict_proba(self, z: np.ndarray) -> np.ndarray:
        scale = np.exp(self.log_scale)
        if self.task == "binary":
            return logits_to_proba(scale[0] * z + self.bias[0], "binary")
        return logits_to_proba(scale * z + self.bias, "multilabel")


# --------------------------------------------------------------------------- multiclass scalings


@dataclass
class _MulticlassTemperature:
    log_temperature: float = 0.0

    def fit(self, z: np.ndarray, y: np.ndarray) -> _MulticlassTemperature:
        active = _active_columns(z)
        keep = np.isin(y, active)
        if not keep.any():
            raise EvaluationError("temperature scaling: no validation example of a class the probe was trained on")
        za = z[keep][:, active]
        ya = np.searchsorted(active, y[keep])
        rows = np.arange(ya.size)

        def nll(log_t: float) -> float:
            return float(-np.mean(log_softmax(za / np.exp(log_t), axis=1)[rows, ya]))

        result = minimize_scalar(nll, bounds=LOG_TEMPERATURE_BOUNDS, method="bounded", options={"xatol": 1e-8})
        self.log_temperature = float(result.x)
        return self

    @property
    def temperature(self) -> float:
        return float(np.exp(self.log_temperature))

    def predict_proba(self, z: np.ndarray) -> np.ndarray:
        return softmax(z / self.temperature)


@dataclass
class _MulticlassVector:
    log_scale: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bias: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def fit(self, z: np.ndarray, y: np.ndarray) -> _MulticlassVector:
        k_all = z.shape[1]
        active = _active_columns(z)
        keep = np.isin(y, active)
        if not keep.any():
            raise EvaluationError("vector scaling: no validation example of a class the probe was trained on")
        za = z[keep][:, active]
        ya = np.searchsorted(active, y[keep])
        n, k = za.shape
        onehot = np.zeros((n, k))
        onehot[np.arange(n), ya] = 1.0
        # classes absent from validation keep the identity: their (a, b) are not free parameters
        free = np.bincount(ya, minlength=k) > 0
        m = int(free.sum())

        def unpack(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            a = np.zeros(k)
            b = np.zeros(k)
            a[free] = theta[:m]
            b[free] = theta[m:]
            return a, b

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            a, b = unpack(theta)
            w = np.exp(a)
            s = za * w + b
            logp = log_softmax(s, axis=1)
            value = -np.mean(logp[np.arange(n), ya]) + 0.5 * SCALING_RIDGE * theta @ theta
            g = (np.exp(logp) - onehot) / n
            grad = np.concatenate([(g * za * w).sum(axis=0)[free], g.sum(axis=0)[free]]) + SCALING_RIDGE * theta
            return float(value), grad

        result = minimize(loss, np.zeros(2 * m), jac=True, method="L-BFGS-B")
        a, b = unpack(result.x)
        self.log_scale = np.zeros(k_all)
        self.bias = np.zeros(k_all)
        self.log_scale[active] = a
        self.bias[active] = b
        return self

    def predict_proba(self, z: np.ndarray) -> np.ndarray:
        # -inf logits of classes absent from training stay -inf (w > 0, finite b)
        return softmax(z * np.exp(self.log_scale) + self.bias)


# --------------------------------------------------------------------------- isotonic


@dataclass
class _Isotonic:
    task: str
    maps: list[IsotonicRegression | None] = field(default_factory=list)

    def _columns(self, z: np.ndarray) -> np.ndarray:
        p = logits_to_proba(z, self.task)
        return p[:, 1:] if self.task == "binary" else p

    def fit(self, z: np.ndarray, y: np.ndarray) -> _Isotonic:
        p = self._columns(z)
        if self.task == "binary":
            outcomes = (y == 1)[:, None]
        elif self.task == "multiclass":
            outcomes = y[:, None] == np.arange(p.shape[1])
        else:
            outcomes = y
        known = np.isin(np.arange(p.shape[1]), _active_columns(z)) if self.task == "multiclass" else None
        self.maps = []
        for k in range(p.shape[1]):
            o = outcomes[:, k].astype(np.float64)
            if np.unique(o).size < 2 or (known is not None and not known[k]):
                # one outcome in validation, or a class unseen in training: identity (documented fallback)
                self.maps.append(None)
                continue
            self.maps.append(IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p[:, k], o))
        return self

    def predict_proba(self, z: np.ndarray) -> np.ndarray:
        p = self._columns(z)
        q = np.column_stack(
            [p[:, k] if iso is None else iso.predict(p[:, k]) for k, iso in enumerate(self.maps)]
        ).astype(np.float64)
        if self.task == "binary":
            return np.column_stack([1.0 - q[:, 0], q[:, 0]])
        if self.task == "multilabel":
            return q
        total = q.sum(axis=1, keepdims=True)
        empty = total[:, 0] <= 0
        q[empty] = p[empty]
        total[empty] = 1.0
        return q / total


# --------------------------------------------------------------------------- public API


class Calibrator:
    """A post-hoc calibrator fitted on validation logits.

    Parameters
    ----------
    method : {"temperature", "vector", "isotonic"}
        See the module docstring (``"vector"`` is Platt scaling for binary and
        multilabel tasks).
    task : {"binary", "multiclass", "multilabel"}
    """

    def __init__(self, method: str, task: str) -> None:
        if method not in CALIBRATOR_NAMES:
            raise EvaluationError(f"calibrator must be one of {', '.join(CALIBRATOR_NAMES)}, got {method!r}")
        self.method = method
        self.task = check_task(task)
        if method == "isotonic":
            self._impl: object = _Isotonic(task)
        elif task == "multiclass":
            self._impl = _MulticlassTemperature() if method == "temperature" else _MulticlassVector()
        else:
            self._impl = _PerLabelScaling(task, with_bias=method == "vector")
        self._fitted = False

    def fit(self, logits: object, labels: object) -> Calibrator:
        """Fit on validation logits and labels; returns ``self``.

        Raises
        ------
        EvaluationError
            Mismatched lengths or shapes, NaN logits, or (multiclass) no
            validation example of any class the probe knows.
        """
        z, y = _check_inputs(logits, labels, self.task)
        self._impl.fit(z, y)  # type: ignore[attr-defined]
        self._fitted = True
        return self

    def predict_proba(self, logits: object) -> np.ndarray:
        """Calibrated probabilities in the probe's format."""
        if not self._fitted:
            raise EvaluationError(f"{self.method} calibrator used before fit")
        z = np.asarray(logits, dtype=np.float64)
        return self._impl.predict_proba(z)  # type: ignore[attr-defined]


def fit_calibrator(method: str, val_logits: object, val_labels: object, task: str) -> Calibrator:
    """Construct and fit a :class:`Calibrator` on validation logits."""
    return Calibrator(method, task).fit(val_logits, val_labels)
