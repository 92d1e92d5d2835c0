"""The frozen linear probe (method section 2, step 2).

Standardisation fitted on the train split only, then an L2-regularised logistic
regression: multinomial for multi-class, one binary probe per label for
multi-label. The regularisation strength ``C`` (scikit-learn's convention: the
inverse of the L2 penalty added to the *summed* log-loss) is chosen on the
validation split from a small fixed grid.

Choice of ``C`` (method section 9, amendment 10): by default the
discrimination-first rule of linear probing, the ``C`` with the highest
validation macro-AUROC (``c_rule="auroc"``); the option ``c_rule="log_loss"``
takes the lowest validation NLL instead. The rule decides what the calibration
axis measures: a probe tuned by log-loss on in-distribution data is calibrated
down to its finite-sample floor, so every encoder's clean ECE is noise, while a
probe tuned for discrimination keeps the calibration its features give it
(which is what the study's calibration ablation implies). Ties go to the
smaller ``C`` (stronger regularisation), under either rule. Where the
validation AUROC is undefined for every ``C`` (every class or label has one
outcome in a tiny validation subsample), every ``C`` ties and the smallest wins.

Speed: the grid is walked from the smallest ``C`` up with warm starts (each fit
starts from the previous solution along the regularisation path), the features
are standardised once to contiguous float64, and one solver object is reused.

Classes absent from the train split (possible only when a caller passes its own
subsample; :func:`~crsbench_lib.evaluation.fractions.label_fraction_subsets`
keeps every class) are handled without error: the probe is fitted on the
classes present and the absent classes get a logit of ``-inf``, i.e. a
probability of exactly 0, so that the probabilities still have ``n_classes``
columns summing to 1. A multi-label label with one outcome in the train split
gets a constant logit, the log-odds of the smoothed prevalence
``(n_pos + 0.5) / (n + 1)``.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from crsbench_lib.errors import EvaluationError
from crsbench_lib.metrics.auroc import _auroc_checked
from crsbench_lib.metrics.scores import _nll_checked
from crsbench_lib.metrics.validation import check_task
from crsbench_lib.results.schema import C_RULES, DEFAULT_C_RULE

#: Default grid of inverse regularisation strengths, walked in ascending order.
DEFAULT_C_GRID: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
#: Default L-BFGS iteration cap per fit (warm starts make later fits short).
DEFAULT_MAX_ITER: int = 200
#: Default L-BFGS tolerance.
DEFAULT_TOL: float = 1e-4


# --------------------------------------------------------------------------- input checks


def check_embeddings(values: object, name: str) -> np.ndarray:
    """Return embeddings as a 2-D float64 array.

    Raises
    ------
    EvaluationError
        Not 2-D, empty, or holding NaN or infinite values (the message names ``name``).
    """
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"{name} must be a numeric array: {exc}") from None
    if array.ndim != 2:
        raise EvaluationError(f"{name} must be a 2-D array (n, dim), got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise EvaluationError(f"{name} is empty (shape {array.shape})")
    finite = np.isfinite(array)
    if not finite.all():
        rows = np.flatnonzero(~finite.all(axis=1))
        raise EvaluationError(
            f"{name} contains NaN or infinite values in {rows.size} row{'s' if rows.size > 1 else ''} (first: row {rows[0]})"
        )
    return array


def check_labels(values: object, task: str, n_classes: int, name: str, n_rows: int | None = None) -> np.ndarray:
    """Return labels as int64, ``(n,)`` class indices or ``(n, L)`` 0/1 for multilabel.

    Raises
    ------
    EvaluationError
        Wrong shape, NaN, non-integer or out-of-range values, or a length other
        than ``n_rows``.
    """
    check_task(task)
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EvaluationError(f"{name} must be numeric: {exc}") from None
    if array.size and not np.all(np.isfinite(array)):
        raise EvaluationError(f"{name} contains NaN or infinite values")
    if array.size and not np.all(array == np.round(array)):
        raise EvaluationError(f"{name} must hold integers, found a non-integer value")
    labels = array.astype(np.int64)
    if task == "multilabel":
        if labels.ndim != 2 or labels.shape[1] != n_classes:
            raise EvaluationError(f"{name} must have shape (n, {n_classes}) for a multilabel task, got {labels.shape}")
        if np.any((labels != 0) & (labels != 1)):
            raise EvaluationError(f"{name} must be 0 or 1 for a multilabel task")
    else:
        if labels.ndim != 1:
            raise EvaluationError(f"{name} must be 1-D class indices, got shape {labels.shape}")
        if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
            raise EvaluationError(f"{name} must lie in 0..{n_classes - 1}, found {labels.min()}..{labels.max()}")
    if n_rows is not None and labels.shape[0] != n_rows:
        raise EvaluationError(f"{name} has {labels.shape[0]} rows but the embeddings have {n_rows}")
    return labels


def check_n_classes(task: str, n_classes: int) -> int:
    """Validate ``n_classes`` against the task (binary: 2; multiclass: >= 2; multilabel: >= 1)."""
    check_task(task)
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)):
        raise EvaluationError(f"n_classes must be an integer, got {n_classes!r}")
    n_classes = int(n_classes)
    if task == "binary" and n_classes != 2:
        raise EvaluationError(f"a binary task has n_classes = 2, got {n_classes}")
    if task == "multiclass" and n_classes < 2:
        raise EvaluationError(f"a multiclass task needs n_classes >= 2, got {n_classes}")
    if task == "multilabel" and n_classes < 1:
        raise EvaluationError(f"a multilabel task needs n_classes >= 1 labels, got {n_classes}")
    return n_classes


# --------------------------------------------------------------------------- standardisation


@dataclass(frozen=True)
class Standardiser:
    """Per-feature standardisation ``(x - mean) / scale`` fitted on one split.

    A constant feature gets ``scale = 1`` (it becomes 0 instead of NaN).
    """

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, train: np.ndarray) -> Standardiser:
        """Fit on the train embeddings (float64 moments)."""
        x = np.asarray(train, dtype=np.float64)
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        return cls(mean=mean, scale=scale)

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Standardised, C-contiguous float64 copy of ``x``."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.mean.shape[0]:
            raise EvaluationError(
                f"embeddings have dimension {x.shape[-1] if x.ndim else 0}, the probe was fitted on {self.mean.shape[0]}"
            )
        return np.ascontiguousarray((x - self.mean) / self.scale)


# --------------------------------------------------------------------------- logits -> probabilities


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax; ``-inf`` logits (absent classes) give exactly 0."""
    z = np.asarray(logits, dtype=np.float64)
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def logits_to_proba(logits: np.ndarray, task: str) -> np.ndarray:
    """Probabilities from probe logits.

    binary: logits ``(n,)`` -> ``(n, 2)`` columns ``(1 - p, p)``, ``p = sigmoid(z)``;
    multiclass: ``(n, K)`` -> softmax; multilabel: ``(n, L)`` -> element-wise sigmoid.
    """
    if task == "multiclass":
        return softmax(logits)
    p = expit(np.asarray(logits, dtype=np.float64))
    if task == "binary":
        return np.column_stack([1.0 - p, p])
    return p


def _proba_for_metrics(probabilities: np.ndarray, task: str) -> np.ndarray:
    return probabilities[:, 1] if task == "binary" else probabilities


# --------------------------------------------------------------------------- the probe


@dataclass
class _LinearModel:
    """Weights of one fitted probe in the full class (label) space."""

    task: str
    n_classes: int
    coef: np.ndarray  # binary (D,); multiclass (K, D); multilabel (L, D)
    intercept: np.ndarray  # binary (); multiclass (K,); multilabel (L,)
    # multiclass: classes seen in training; the others get -inf logits
    present: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def logits(self, x_std: np.ndarray) -> np.ndarray:
        z = x_std @ self.coef.T + self.intercept
        if self.task == "multiclass" and self.present.size < self.n_classes:
            full = np.full((x_std.shape[0], self.n_classes), -np.inf)
            full[:, self.present] = z[:, self.present]
            return full
        return z


def _fit_path_binary(
    x: np.ndarray, y: np.ndarray, c_grid: Sequence[float], max_iter: int, tol: float, seed: int
) -> list[tuple[np.ndarray, float]]:
    """Warm-started L2 logistic fits along ascending ``C``; (coef (D,), intercept) each."""
    solver = LogisticRegression(C=c_grid[0], tol=tol, max_iter=max_iter, warm_start=True, random_state=seed)
    path = []
    for c in c_grid:
        solver.set_params(C=float(c))
        solver.fit(x, y)
        path.append((solver.coef_[0].copy(), float(solver.intercept_[0])))
    return path


def _fit_path_multiclass(
    x: np.ndarray, y: np.ndarray, n_classes: int, c_grid: Sequence[float], max_iter: int, tol: float, seed: int
) -> list[_LinearModel]:
    present = np.unique(y)
    if present.size < 2:
        raise EvaluationError(
            f"the train split holds a single class ({int(present[0])}); a probe needs at least two"
        )
    solver = LogisticRegression(C=c_grid[0], tol=tol, max_iter=max_iter, warm_start=True, random_state=seed)
    models = []
    for c in c_grid:
        solver.set_params(C=float(c))
        solver.fit(x, y)
        coef = np.zeros((n_classes, x.shape[1]))
        intercept = np.zeros(n_classes)
        if present.size == 2:
            # scikit-learn keeps one weight vector for two classes: logit(present[1]) - logit(present[0])
            coef[present[1]] = solver.coef_[0]
            intercept[present[1]] = solver.intercept_[0]
        else:
            coef[present] = solver.coef_
            intercept[present] = solver.intercept_
        models.append(_LinearModel("multiclass", n_classes, coef, intercept, present))
    return models


def _fit_path(
    x: np.ndarray, y: np.ndarray, task: str, n_classes: int, c_grid: Sequence[float], max_iter: int, tol: float, seed: int
) -> list[_LinearModel]:
    with warnings.catch_warnings():
        # max_iter is a deliberate budget; a probe stopped by it is still a valid probe
        warnings.simplefilter("ignore", ConvergenceWarning)
        if task == "multiclass":
            return _fit_path_multiclass(x, y, n_classes, c_grid, max_iter, tol, seed)
        if task == "binary":
            if np.unique(y).size < 2:
                raise EvaluationError(f"the train split holds a single class ({int(y[0])}); a probe needs both")
            path = _fit_path_binary(x, y, c_grid, max_iter, tol, seed)
            return [_LinearModel("binary", 2, coef, np.asarray(b)) for coef, b in path]
        coefs = np.zeros((len(c_grid), n_classes, x.shape[1]))
        intercepts = np.zeros((len(c_grid), n_classes))
        for k in range(n_classes):
            column = y[:, k]
            n_pos = int(column.sum())
            if n_pos in (0, column.size):
                intercepts[:, k] = np.log((n_pos + 0.5) / (column.size - n_pos + 0.5))
                continue
            for i, (coef, b) in enumerate(_fit_path_binary(x, column, c_grid, max_iter, tol, seed)):
                coefs[i, k] = coef
                intercepts[i, k] = b
        return [_LinearModel("multilabel", n_classes, coefs[i], intercepts[i]) for i in range(len(c_grid))]


@dataclass
class FittedProbe:
    """A standardiser and the logistic probe chosen on validation.

    Attributes
    ----------
    task : str
    n_classes : int
        Classes (multilabel: labels) of the probability output.
    standardiser : Standardiser
        Fitted on the train split only.
    C : float
        The chosen inverse regularisation strength.
    val_nll : dict[float, float]
        Validation NLL per grid value.
    val_auroc : dict[float, float]
        Validation macro-AUROC per grid value (NaN where undefined).
    c_rule : {"auroc", "log_loss"}
        The rule that chose ``C``.
    model : _LinearModel
        Weights and intercepts of the chosen probe in the full class space.
    """

    task: str
    n_classes: int
    standardiser: Standardiser
    C: float
    val_nll: dict[float, float]
    val_auroc: dict[float, float]
    c_rule: str
    model: _LinearModel

    def logits(self, embeddings: object, name: str = "embeddings") -> np.ndarray:
        """Logits of any split: binary ``(n,)``, multiclass ``(n, K)`` (``-inf`` for
        classes absent from training), multilabel ``(n, L)``."""
        x = self.standardiser.transform(check_embeddings(embeddings, name))
        return self.model.logits(x)

    def predict_proba(self, embeddings: object, name: str = "embeddings") -> np.ndarray:
        """Probabilities over all ``n_classes``: ``(n, 2)`` binary, ``(n, K)``, ``(n, L)``."""
        return logits_to_proba(self.logits(embeddings, name), self.task)


# --------------------------------------------------------------------------- memo
class ProbeMemo(Protocol):
    """Where fitted probes are kept between calls with identical inputs (e.g. a runner's disk store)."""

    def get(self, key: str) -> FittedProbe | None:  # pragma: no cover - protocol
        ...

    def put(self, key: str, probe: FittedProbe) -> None:  # pragma: no cover - protocol
        ...


_MEMO: ContextVar[ProbeMemo | None] = ContextVar("crsbench_probe_memo", default=None)
#: This module's source, hashed into every memo key: a change of the fitting code is a new key.
_CODE_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


@contextmanager
def memoised_probes(memo: ProbeMemo | None) -> Iterator[None]:
    """Within the block, :func:`fit_probe` reads and writes ``memo`` by a key of all its inputs.

    The frozen arm and the LoRA arm fit the same probes on the same frozen
    embeddings (the adapter's starting head; the label fractions the arm
    keeps frozen), in different cells; the memo lets one fit serve both. A
    probe read back is the very object a fit returns (no result can differ);
    ``None`` switches memoising off.

    Examples
    --------
    >>> class Counter(dict):
    ...     def put(self, key, probe):
    ...         self[key] = probe
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    >>> memo = Counter()
    >>> with memoised_probes(memo):
    ...     first = fit_probe(x[:40], y[:40], x[40:], y[40:], "binary", 2)
    ...     again = fit_probe(x[:40], y[:40], x[40:], y[40:], "binary", 2)
    >>> len(memo), again is first
    (1, True)
    """
    token = _MEMO.set(memo)
    try:
        yield
    finally:
        _MEMO.reset(token)


def probe_key(x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray, task: str,
              n_classes: int, grid: Sequence[float], max_iter: int, tol: float, seed: int, c_rule: str) -> str:
    """The sha256 of every input of a probe fit: arrays (dtype, shape, bytes), settings and this module's code."""
    digest = hashlib.sha256(_CODE_DIGEST.encode())
    for array in (x_train, y_train, x_val, y_val):
        a = np.ascontiguousarray(array)
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(a.tobytes())
    digest.update(repr((task, int(n_classes), tuple(map(float, grid)), int(max_iter), float(tol), int(seed),
                        c_rule)).encode())
    return digest.hexdigest()


def fit_probe(
    train: object,
    train_labels: object,
    val: object,
    val_labels: object,
    task: str,
    n_classes: int,
    *,
    c_grid: Sequence[float] = DEFAULT_C_GRID,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    seed: int = 0,
    c_rule: str = DEFAULT_C_RULE,
) -> FittedProbe:
    """Fit the standardiser on ``train`` and choose ``C`` on ``val`` by ``c_rule``.

    Parameters
    ----------
    train, val : array-like, shape (n, dim)
        Embeddings (any float dtype; used as float64 after standardisation).
    train_labels, val_labels : array-like
        ``(n,)`` class indices, or ``(n, L)`` 0/1 for multilabel.
    task : {"binary", "multiclass", "multilabel"}
    n_classes : int
        Number of classes (binary: 2) or labels (multilabel).
    c_grid : sequence of float
        Candidate ``C`` values (sorted ascending internally for the warm-started path).
    max_iter, tol : int, float
        L-BFGS budget and tolerance per fit.
    seed : int
        Solver seed (L-BFGS itself is deterministic; kept for solvers that are not).
    c_rule : {"auroc", "log_loss"}
        Highest validation macro-AUROC (default) or lowest validation NLL;
        ties to the smaller ``C`` (see the module docstring).

    Returns
    -------
    FittedProbe

    Raises
    ------
    EvaluationError
        NaN embeddings, mismatched lengths or dimensions, labels out of range,
        fewer than two train examples, a single-class train split, an
        invalid grid or an unknown rule.
    """
    if c_rule not in C_RULES:
        raise EvaluationError(f"c_rule must be one of {', '.join(C_RULES)}, got {c_rule!r}")
    n_classes = check_n_classes(task, n_classes)
    x_train = check_embeddings(train, "train embeddings")
    x_val = check_embeddings(val, "validation embeddings")
    y_train = check_labels(train_labels, task, n_classes, "train labels", x_train.shape[0])
    y_val = check_labels(val_labels, task, n_classes, "validation labels", x_val.shape[0])
    if x_val.shape[1] != x_train.shape[1]:
        raise EvaluationError(
            f"validation embeddings have dimension {x_val.shape[1]}, train embeddings {x_train.shape[1]}"
        )
    # A subsample may miss a class the full split has (probability 0, see the module
    # docstring), so the examples-per-class check belongs to the caller's full split
    # (evaluate_cell); a fit itself needs two examples.
    if x_train.shape[0] < 2:
        raise EvaluationError(f"the train split has {x_train.shape[0]} example; a probe needs at least 2")
    grid = _check_grid(c_grid)
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise EvaluationError(f"max_iter must be a positive integer, got {max_iter!r}")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise EvaluationError(f"tol must be a positive number, got {tol!r}")

    memo = _MEMO.get()
    key = None
    if memo is not None:
        key = probe_key(x_train, y_train, x_val, y_val, task, n_classes, grid, int(max_iter), float(tol), int(seed),
                        c_rule)
        kept = memo.get(key)
        if kept is not None:
            return kept
    probe = _fit_checked(x_train, y_train, x_val, y_val, task, n_classes, grid, int(max_iter), float(tol), int(seed),
                         c_rule)
    if memo is not None and key is not None:
        memo.put(key, probe)
    return probe


def _fit_checked(x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray, task: str,
                 n_classes: int, grid: tuple[float, ...], max_iter: int, tol: float, seed: int,
                 c_rule: str) -> FittedProbe:
    """:func:`fit_probe` on inputs it has validated."""
    standardiser = Standardiser.fit(x_train)
    xs_train = standardiser.transform(x_train)
    xs_val = standardiser.transform(x_val)
    models = _fit_path(xs_train, y_train, task, n_classes, grid, max_iter, tol, seed)
    val_nll: dict[float, float] = {}
    val_auroc: dict[float, float] = {}
    for c, model in zip(grid, models):
        p = _proba_for_metrics(logits_to_proba(model.logits(xs_val), task), task)
        val_nll[c] = _nll_checked(y_val, p, task)
        try:
            val_auroc[c] = _auroc_checked(y_val, p, task).value
        except EvaluationError:  # one outcome per class: AUROC undefined, every C ties
            val_auroc[c] = float("nan")
    if c_rule == "auroc":
        scores = np.nan_to_num(np.array([val_auroc[c] for c in grid]), nan=-np.inf)
    else:
        scores = -np.array([val_nll[c] for c in grid])
    best = int(np.argmax(scores))  # first maximum: ties go to the smaller C
    return FittedProbe(task, n_classes, standardiser, grid[best], val_nll, val_auroc, c_rule, models[best])


def _check_grid(c_grid: Sequence[float]) -> tuple[float, ...]:
    try:
        grid = tuple(sorted({float(c) for c in c_grid}))
    except (TypeError, ValueError):
        raise EvaluationError(f"c_grid must be a sequence of numbers, got {c_grid!r}") from None
    if not grid or any(not np.isfinite(c) or c <= 0 for c in grid):
        raise EvaluationError(f"c_grid must hold positive finite numbers, got {c_grid!r}")
    return grid
