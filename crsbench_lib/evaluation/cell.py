"""One (encoder, dataset, seed, arm): embeddings of every split and condition -> result rows.

The single entry point of the evaluation layer (method section 2). Arrays
in, the test predictions of every condition and the validated rows of the
results table (section 7) out; no images, no torch.

The rows are computed *from the stored predictions* (float32 probabilities,
:mod:`crsbench_lib.results.predictions`) by :func:`rows_from_predictions`, so
recomputing the table from a run's predictions gives the same numbers to the
last bit (method section 9, amendment 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from crsbench_lib.errors import EvaluationError, ProbeSettingError
from crsbench_lib.evaluation.calibration import CALIBRATOR_NAMES, fit_calibrator
from crsbench_lib.evaluation.fractions import VAL_FRACTION_POLICIES, label_fraction_subsets, validation_subsets
from crsbench_lib.evaluation.probe import (
    DEFAULT_C_GRID,
    DEFAULT_C_RULE,
    DEFAULT_MAX_ITER,
    DEFAULT_TOL,
    FittedProbe,
    check_embeddings,
    check_labels,
    check_n_classes,
    fit_probe,
    logits_to_proba,
)
from crsbench_lib.metrics.metric_set import MetricSet, evaluate_predictions
from crsbench_lib.results.predictions import ConditionPredictions
from crsbench_lib.results.schema import (
    CALIBRATOR_SPLIT,
    C_RULES,
    CLEAN_CONDITION,
    FEATURE_KINDS,
    SEVERITIES,
    validate_results,
)

#: Keys ``meta`` must provide, and those that default to "".
REQUIRED_META: tuple[str, ...] = ("encoder", "dataset", "domain", "arm")
OPTIONAL_META: tuple[str, ...] = ("config_hash", "package_version")
#: BLAS/OpenMP threads inside one cell. The matrices of a probe are small, so threads buy
#: little and oversubscribe the cores when the runner evaluates cells in parallel; one
#: thread also makes the floating-point reduction order, hence the rows, independent of
#: the machine's core count.
CELL_THREADS: int = 1


@dataclass
class CellEmbeddings:
    """Embeddings and labels of every split and condition of one cell.

    Attributes
    ----------
    train, val, test : numpy.ndarray, shape (n, dim)
        Clean embeddings of the site-A splits (train and val of the cell's seed).
    train_labels, val_labels, test_labels : numpy.ndarray
        ``(n,)`` class indices, or ``(n, L)`` 0/1 for multilabel.
    corrupted : dict[tuple[str, int], numpy.ndarray]
        Embeddings of corrupted test images per (corruption, severity).
    shift_test, shift_labels : numpy.ndarray or None
        Site-B test embeddings and labels, where the dataset has a second site.
    cue_removed_test : numpy.ndarray or None
        Embeddings of the test images with the shortcut cue removed (the same
        images but for the cue, in test order; labels ``test_labels``), where
        the dataset has a cue.
    calibration, calibration_labels : numpy.ndarray or None
        The calibration split of the cell's seed, on which the post-hoc
        calibrators are fitted (required when calibrators are requested).
    fraction_features : dict[float, tuple of numpy.ndarray]
        Label fraction -> ``(train subset, validation subset, test)`` embeddings
        of an encoder adapted on that fraction's subset only (the LoRA arm); the
        subsets are the fraction's rows of :func:`label_fraction_subsets` and
        :func:`validation_subsets` in index order. The fraction's probe is then
        fitted and scored on these instead of the shared embeddings.
    corrupted_images : dict[tuple[str, int], numpy.ndarray]
        Per (corruption, severity), the test-split positions of the images its
        corrupted rows were made from, in row order (their labels are
        ``test_labels[index]``). A condition without an entry corrupts the first
        ``len(array)`` test images.
    features : {"frozen", "adapted"}
        What the shared embeddings are (the rows' ``features`` column).
    fraction_feature_kinds : dict[float, str]
        Per label fraction of ``fraction_features``, what its embeddings are
        (default ``"adapted"``: an encoder adapted on the fraction's subset;
        ``"frozen"``: the arm kept the frozen encoder for that fraction).
    """

    train: np.ndarray
    train_labels: np.ndarray
    val: np.ndarray
    val_labels: np.ndarray
    test: np.ndarray
    test_labels: np.ndarray
    corrupted: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    shift_test: np.ndarray | None = None
    shift_labels: np.ndarray | None = None
    calibration: np.ndarray | None = None
    calibration_labels: np.ndarray | None = None
    fraction_features: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    corrupted_images: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    features: str = "frozen"
    fraction_feature_kinds: dict[float, str] = field(default_factory=dict)
    cue_removed_test: np.ndarray | None = None


def _items(value: Any, field: str) -> list[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ProbeSettingError(field, f"must be a list, got {value!r}")
    return list(value)


def _positive_number(value: Any, field: str, index: int | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or not value > 0:
        raise ProbeSettingError(field, f"must be a positive number, got {value!r}", index)
    return float(value)


def _choice(value: Any, field: str, choices: Sequence[str], index: int | None = None) -> None:
    if not isinstance(value, str) or value not in choices:
        raise ProbeSettingError(field, f"must be one of {', '.join(choices)}, got {value!r}", index)


def _unique(values: Sequence[Any], field: str) -> None:
    for i, value in enumerate(values):
        if value in values[:i]:
            raise ProbeSettingError(field, f"repeats {value!r}", i)


@dataclass(frozen=True)
class ProbeConfig:
    """Settings of the probe and the calibration ablation, validated here and only here.

    A bad value raises :class:`~crsbench_lib.errors.ProbeSettingError` (an
    :class:`~crsbench_lib.errors.EvaluationError`) naming the field, the list
    position and what was expected; the profile parser reports it under the
    profile's key (:data:`WRITTEN_KEYS`). :meth:`from_written` builds one from a
    profile's ``probe`` section.

    Attributes
    ----------
    c_grid : tuple of float
        Candidate inverse regularisation strengths, chosen on validation by ``c_rule``.
    max_iter : int
        L-BFGS iteration budget per fit.
    tol : float
        L-BFGS tolerance.
    val_fraction_policy : {"matched", "full"}
        Validation split used to choose ``C`` at a label fraction below 1: a
        stratified subsample at the same fraction (default) or the full split.
    calibrators : tuple of str
        Post-hoc calibrators of the ablation rows (subset of
        ``("temperature", "vector", "isotonic")``; empty for none), fitted on
        the calibration split.
    c_rule : {"auroc", "log_loss"}
        How ``C`` is chosen on validation (method section 9, amendment 10).
    """

    c_grid: tuple[float, ...] = DEFAULT_C_GRID
    max_iter: int = DEFAULT_MAX_ITER
    tol: float = DEFAULT_TOL
    val_fraction_policy: str = "matched"
    calibrators: tuple[str, ...] = CALIBRATOR_NAMES
    c_rule: str = DEFAULT_C_RULE

    #: The profile's key of each field (a profile's ``probe`` section writes the grid as ``C``).
    WRITTEN_KEYS: ClassVar[dict[str, str]] = {
        "c_grid": "C", "max_iter": "max_iter", "tol": "tol", "val_fraction_policy": "val_fraction_policy",
        "calibrators": "calibrators", "c_rule": "c_rule",
    }

    def __post_init__(self) -> None:
        grid = tuple(_positive_number(c, "c_grid", i) for i, c in enumerate(_items(self.c_grid, "c_grid")))
        if not grid:
            raise ProbeSettingError("c_grid", "must not be empty")
        _unique(grid, "c_grid")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1:
            raise ProbeSettingError("max_iter", f"must be a positive integer, got {self.max_iter!r}")
        tol = _positive_number(self.tol, "tol")
        _choice(self.val_fraction_policy, "val_fraction_policy", VAL_FRACTION_POLICIES)
        calibrators = tuple(self.calibrators if not isinstance(self.calibrators, str) else [self.calibrators])
        for i, name in enumerate(calibrators):
            _choice(name, "calibrators", CALIBRATOR_NAMES, i)
        _unique(calibrators, "calibrators")
        _choice(self.c_rule, "c_rule", C_RULES)
        # tuples keep the config hashable and its repr stable for config hashes;
        # numbers as the profile parser always gave them (float grid and tol, int max_iter)
        object.__setattr__(self, "c_grid", grid)
        object.__setattr__(self, "max_iter", int(self.max_iter))
        object.__setattr__(self, "tol", tol)
        object.__setattr__(self, "calibrators", calibrators)

    @classmethod
    def from_written(cls, section: Mapping[str, Any]) -> ProbeConfig:
        """The config of a profile's default-filled ``probe`` section (the inverse of :meth:`written`).

        Raises
        ------
        ProbeSettingError
            On a bad value (see the class docstring).

        Examples
        --------
        >>> ProbeConfig.from_written({**ProbeConfig().written(), "C": [1, 10]}).c_grid
        (1.0, 10.0)
        """
        fields = {written: field for field, written in cls.WRITTEN_KEYS.items()}
        unknown = sorted(set(section) - set(fields))
        if unknown:
            raise ProbeSettingError(unknown[0], f"is not a probe setting (expected one of {', '.join(fields)})")
        return cls(**{fields[key]: value for key, value in section.items()})

    def written(self) -> dict[str, Any]:
        """The settings as a profile's ``probe`` section writes them (``C`` for the grid, lists for
        tuples): the form that enters a run's config hash and its cell keys."""
        return {
            "C": list(self.c_grid),
            "max_iter": self.max_iter,
            "tol": self.tol,
            "val_fraction_policy": self.val_fraction_policy,
            "calibrators": list(self.calibrators),
            "c_rule": self.c_rule,
        }


def _metrics(labels: np.ndarray, probabilities: np.ndarray, task: str, ece_bins: int, what: str) -> MetricSet:
    try:
        return evaluate_predictions(labels, probabilities, task, ece_bins)
    except EvaluationError as exc:
        raise EvaluationError(f"{what}: {exc}") from None


def _describe(meta: Mapping[str, object]) -> str:
    condition = meta["condition"]
    if condition == "corruption":
        return f"corrupted test ({meta['corruption']}, severity {meta['severity']})"
    if condition == "label_fraction":
        return f"label fraction {float(meta['label_fraction']):g} test"  # type: ignore[arg-type]
    if condition == "shift":
        return "site-B test"
    return "clean test" if meta["calibration"] == "none" else f"{meta['calibration']}-calibrated test"


def rows_from_predictions(predictions: Sequence[ConditionPredictions], source: str = "predictions") -> pd.DataFrame:
    """The results rows of stored predictions: every metric recomputed from the probabilities.

    Each condition's row holds its :data:`~crsbench_lib.results.predictions.META_COLUMNS`
    and the metrics of :func:`~crsbench_lib.metrics.metric_set.evaluate_predictions`
    at its ``ece_bins``. A corruption row also gets its paired references: the
    clean AUROC and ECE of the same probe (the condition with ``condition ==
    "clean"``, ``calibration == "none"`` and the same encoder, dataset, seed and
    arm) on the same test images (``auroc_reference``, ``ece_reference``).

    Parameters
    ----------
    predictions : sequence of ConditionPredictions
        One cell's conditions, or any number of cells.
    source : str
        Name used in the validation error messages.

    Returns
    -------
    pandas.DataFrame
        Validated results rows, in the order of ``predictions``.

    Raises
    ------
    EvaluationError
        If a corruption condition has no clean condition to pair with, or uses
        images the clean condition lacks; or a metric is undefined.
    """
    clean: dict[tuple[object, ...], ConditionPredictions] = {}
    for p in predictions:
        if p.meta["condition"] == "clean" and p.meta["calibration"] == "none":
            clean[(p.meta["encoder"], p.meta["dataset"], p.meta["seed"], p.meta["arm"])] = p
    references: dict[tuple[object, ...], MetricSet] = {}
    rows: list[dict[str, object]] = []
    for p in predictions:
        meta = p.meta
        task, bins = str(meta["task"]), int(meta["ece_bins"])  # type: ignore[call-overload]
        labels, probabilities = p.metric_input()
        row = dict(meta)
        row.update(_metrics(labels, probabilities, task, bins, _describe(meta)).as_dict())
        if meta["condition"] == "corruption":
            cell = (meta["encoder"], meta["dataset"], meta["seed"], meta["arm"])
            if cell not in clean:
                raise EvaluationError(f"{_describe(meta)}: no clean condition of the same probe to pair with")
            base = clean[cell]
            memo = (*cell, p.image.tobytes())
            if memo not in references:
                position = {int(i): k for k, i in enumerate(base.image)}
                try:
                    take = np.array([position[int(i)] for i in p.image], dtype=np.int64)
                except KeyError:
                    raise EvaluationError(f"{_describe(meta)}: corrupts images the clean test split lacks") from None
                y, q = base.metric_input()
                # The robustness loss and the ECE increase pair each corrupted metric with the
                # clean metric of the very same images.
                references[memo] = _metrics(y[take], q[take], task, bins, f"clean test ({take.size} paired images)")
            row["auroc_reference"] = references[memo].auroc
            row["ece_reference"] = references[memo].ece
        rows.append(row)
    return validate_results(pd.DataFrame(rows), source=source)


def _corrupted_positions(positions: object, n_rows: int, n_test: int, name: str) -> np.ndarray:
    """Test-split positions of a corrupted condition's rows (default: the first ``n_rows``)."""
    if positions is None:
        return np.arange(n_rows)
    index = np.asarray(positions)
    if index.shape != (n_rows,) or not np.issubdtype(index.dtype, np.integer):
        raise EvaluationError(f"{name}: its image positions must be {n_rows} integers, got {index.dtype} {index.shape}")
    if n_rows and (index.min() < 0 or index.max() >= n_test):
        raise EvaluationError(f"{name}: image positions must lie in 0..{n_test - 1}")
    if np.unique(index).size != n_rows:
        raise EvaluationError(f"{name}: an image position is repeated")
    return index.astype(np.int64)


def _fit(
    train: np.ndarray,
    train_labels: np.ndarray,
    val: np.ndarray,
    val_labels: np.ndarray,
    task: str,
    n_classes: int,
    seed: int,
    probe: ProbeConfig,
    what: str,
) -> FittedProbe:
    try:
        return fit_probe(
            train,
            train_labels,
            val,
            val_labels,
            task,
            n_classes,
            c_grid=probe.c_grid,
            max_iter=probe.max_iter,
            tol=probe.tol,
            seed=seed,
            c_rule=probe.c_rule,
        )
    except EvaluationError as exc:
        raise EvaluationError(f"{what}: {exc}") from None


def _check_meta(meta: Mapping[str, object]) -> dict[str, str]:
    missing = [k for k in REQUIRED_META if k not in meta]
    if missing:
        raise EvaluationError(f"evaluate_cell: meta lacks {', '.join(repr(m) for m in missing)}")
    out = {}
    for key in REQUIRED_META + OPTIONAL_META:
        value = meta.get(key, "")
        if not isinstance(value, str):
            raise EvaluationError(f"evaluate_cell: meta[{key!r}] must be text, got {value!r}")
        out[key] = value
    return out


def _check_fraction_list(label_fractions: Sequence[float]) -> tuple[float, ...]:
    try:
        values = sorted({float(f) for f in label_fractions}, reverse=True)
    except (TypeError, ValueError):
        raise EvaluationError(f"label_fractions must be numbers, got {label_fractions!r}") from None
    bad = [f for f in values if not 0.0 < f <= 1.0]
    if bad:
        raise EvaluationError(f"label_fractions must lie in (0, 1], got {bad[0]!r}")
    return tuple(f for f in values if f < 1.0)


def evaluate_cell(
    embeddings: CellEmbeddings,
    task: str,
    n_classes: int,
    *,
    seed: int,
    label_fractions: Sequence[float],
    ece_bins: int,
    probe: ProbeConfig,
    meta: Mapping[str, object],
) -> pd.DataFrame:
    """Evaluate one (encoder, dataset, seed, arm) and return its result rows.

    The rows of :func:`evaluate_cell_predictions`'s conditions, computed from
    their stored-precision predictions by :func:`rows_from_predictions`.
    Parameters and errors as :func:`evaluate_cell_predictions`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 90)
    >>> x = rng.normal(size=(90, 4)) + y[:, None]
    >>> cell = CellEmbeddings(x[:40], y[:40], x[40:60], y[40:60], x[60:], y[60:],
    ...                       corrupted={("noise", 3): x[60:] + rng.normal(size=(30, 4))})
    >>> meta = {"encoder": "demo", "dataset": "toy", "domain": "derm", "arm": "frozen"}
    >>> rows = evaluate_cell(cell, "binary", 2, seed=0, label_fractions=(0.5,), ece_bins=10,
    ...                      probe=ProbeConfig(calibrators=()), meta=meta)
    >>> rows[["condition", "label_fraction", "corruption", "severity"]].values.tolist()
    [['clean', 1.0, 'none', 0], ['label_fraction', 0.5, 'none', 0], ['corruption', 1.0, 'noise', 3]]
    """
    predictions = evaluate_cell_predictions(
        embeddings, task, n_classes, seed=seed, label_fractions=label_fractions, ece_bins=ece_bins, probe=probe,
        meta=meta,
    )
    info = _check_meta(meta)
    return rows_from_predictions(
        predictions, source=f"evaluate_cell({info['encoder']}, {info['dataset']}, seed {int(seed)}, {info['arm']})"
    )


def evaluate_cell_predictions(
    embeddings: CellEmbeddings,
    task: str,
    n_classes: int,
    *,
    seed: int,
    label_fractions: Sequence[float],
    ece_bins: int,
    probe: ProbeConfig,
    meta: Mapping[str, object],
) -> list[ConditionPredictions]:
    """Evaluate one (encoder, dataset, seed, arm): the test predictions of every condition.

    Conditions, in this order:

    1. ``clean``: probe fitted on the full train split, ``C`` chosen on the full
       validation split by ``probe.c_rule``, predicted on the clean test split;
    2. ``clean`` with ``calibration`` set, one per ``probe.calibrators``: each
       calibrator fitted on the clean probe's logits of the *calibration*
       split (not the validation split that chose ``C``), applied to test;
    3. ``label_fraction`` per requested fraction below 1 (descending): probe
       refitted on the nested stratified train subset
       (:func:`label_fraction_subsets`), ``C`` chosen on the validation subset of
       ``probe.val_fraction_policy``; ``label_fraction_used`` records the share
       of train labels actually used. Where ``embeddings.fraction_features``
       holds the fraction (an encoder adapted on that subset only), the
       fraction's probe uses those features;
    4. ``corruption`` per (corruption, severity) in sorted order: the clean probe
       on the corrupted test embeddings, labelled by the test images they were
       made from (``embeddings.corrupted_images``, else the first ``len(array)``);
    5. ``shift``: the clean probe on the site-B test split, when given, then
       once per calibrator fitted in step 2 (calibrated at site A, applied at
       site B: what post-hoc calibration keeps under the shift);
    6. ``cue_removed``: the clean probe on the test images without the
       shortcut cue, when given (the cue ablation).

    Every condition carries ``meta`` (encoder, dataset, domain, arm, config_hash,
    package_version), ``task``, ``seed``, ``ece_bins``, the protocol fields
    ``c_rule``, ``probe_c`` (the chosen ``C``) and ``calibrator_split``, and the
    stable test-image indices (positions in the test split of its site). The
    output is bit-identical for identical inputs: the cell runs with
    :data:`CELL_THREADS` BLAS thread(s), so it does not depend on the core count.

    Parameters
    ----------
    embeddings : CellEmbeddings
    task : {"binary", "multiclass", "multilabel"}
    n_classes : int
        Classes (binary: 2) or labels (multilabel).
    seed : int
        Seed of the label-fraction subsamples and the solver.
    label_fractions : sequence of float
        Requested fractions; 1.0 (the clean row) is always evaluated, so it may
        be listed or not.
    ece_bins : int
        Equal-width ECE bins (from the reference standard).
    probe : ProbeConfig
    meta : mapping
        ``encoder``, ``dataset``, ``domain``, ``arm`` (required),
        ``config_hash``, ``package_version`` (default "").

    Returns
    -------
    list of ConditionPredictions

    Raises
    ------
    EvaluationError
        Any invalid input (NaN embeddings, mismatched lengths, fewer examples
        than classes, a single-class test split, labels out of range, a
        corrupted array longer than the test split, a severity outside 1..5,
        site-B embeddings without labels, calibrators without a calibration
        split, bad meta); the message names the split or condition at fault.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 90)
    >>> x = rng.normal(size=(90, 4)) + y[:, None]
    >>> cell = CellEmbeddings(x[:40], y[:40], x[40:60], y[40:60], x[60:], y[60:])
    >>> meta = {"encoder": "demo", "dataset": "toy", "domain": "derm", "arm": "frozen"}
    >>> predictions = evaluate_cell_predictions(cell, "binary", 2, seed=0, label_fractions=(0.5,), ece_bins=10,
    ...                                         probe=ProbeConfig(calibrators=()), meta=meta)
    >>> [(p.meta["condition"], p.probabilities.shape) for p in predictions]
    [('clean', (30, 1)), ('label_fraction', (30, 1))]
    """
    with threadpool_limits(limits=CELL_THREADS):
        if not isinstance(embeddings, CellEmbeddings):
            raise EvaluationError(f"evaluate_cell: embeddings must be CellEmbeddings, got {type(embeddings).__name__}")
        if not isinstance(probe, ProbeConfig):
            raise EvaluationError(f"evaluate_cell: probe must be a ProbeConfig, got {type(probe).__name__}")
        n_classes = check_n_classes(task, n_classes)
        info = _check_meta(meta)
        fractions = _check_fraction_list(label_fractions)
        seed = int(seed)
        if isinstance(ece_bins, bool) or not isinstance(ece_bins, (int, np.integer)) or ece_bins < 1:
            raise EvaluationError(f"ece_bins (n_bins) must be a positive integer, got {ece_bins!r}")

        train = check_embeddings(embeddings.train, "train embeddings")
        val = check_embeddings(embeddings.val, "validation embeddings")
        test = check_embeddings(embeddings.test, "test embeddings")
        y_train = check_labels(embeddings.train_labels, task, n_classes, "train labels", train.shape[0])
        y_val = check_labels(embeddings.val_labels, task, n_classes, "validation labels", val.shape[0])
        y_test = check_labels(embeddings.test_labels, task, n_classes, "test labels", test.shape[0])
        if task != "multilabel" and train.shape[0] < n_classes:
            raise EvaluationError(f"the train split has {train.shape[0]} examples, fewer than the {n_classes} classes")
        unknown = [f for f in embeddings.fraction_features if float(f) not in fractions]
        if unknown:
            raise EvaluationError(f"fraction_features holds label fraction {unknown[0]!r}, which is not requested")
        kinds = {embeddings.features, *embeddings.fraction_feature_kinds.values()} - set(FEATURE_KINDS)
        if kinds:
            raise EvaluationError(f"embeddings: features must be one of {', '.join(FEATURE_KINDS)}, got {kinds.pop()!r}")

        base = {
            **info,
            "task": task,
            "seed": seed,
            "ece_bins": int(ece_bins),
            "c_rule": probe.c_rule,
            "calibrator_split": CALIBRATOR_SPLIT,
            "features": embeddings.features,
        }
        out: list[ConditionPredictions] = []
        test_index = np.arange(test.shape[0])

        def add(fitted: FittedProbe, labels: np.ndarray, probabilities: np.ndarray, image: np.ndarray,
                **key: object) -> None:
            condition = {**base, **CLEAN_CONDITION, "probe_c": float(fitted.C)}
            condition.update(key)
            out.append(ConditionPredictions.build(condition, image, labels, probabilities, task))

        clean = _fit(train, y_train, val, y_val, task, n_classes, seed, probe, "clean probe")
        calibrators: dict[str, Any] = {}
        test_logits = clean.logits(test, "test embeddings")
        add(clean, y_test, logits_to_proba(test_logits, task), test_index)

        if probe.calibrators:
            if embeddings.calibration is None or embeddings.calibration_labels is None:
                raise EvaluationError("calibrators are requested but the cell has no calibration split")
            calibration = check_embeddings(embeddings.calibration, "calibration embeddings")
            y_cal = check_labels(
                embeddings.calibration_labels, task, n_classes, "calibration labels", calibration.shape[0]
            )
            cal_logits = clean.logits(calibration, "calibration embeddings")
            for method in probe.calibrators:
                try:
                    calibrator = fit_calibrator(method, cal_logits, y_cal, task)
                except EvaluationError as exc:
                    raise EvaluationError(f"{method} calibration: {exc}") from None
                calibrators[method] = calibrator
                add(clean, y_test, calibrator.predict_proba(test_logits), test_index, calibration=method)

        if fractions:
            train_subsets = label_fraction_subsets(y_train, fractions, seed, task)
            val_subsets = validation_subsets(y_val, fractions, seed, task, probe.val_fraction_policy)
            for f in fractions:
                idx, vidx = train_subsets[f], val_subsets[f]
                what = f"label fraction {f:g}"
                f_train, f_val, f_test = train[idx], val[vidx], test
                features = embeddings.features
                if f in embeddings.fraction_features:
                    features = embeddings.fraction_feature_kinds.get(f, "adapted")
                    f_train, f_val, f_test = (
                        check_embeddings(a, f"{what} {name} embeddings")
                        for a, name in zip(embeddings.fraction_features[f], ("train", "validation", "test"))
                    )
                    if (f_train.shape[0], f_val.shape[0], f_test.shape[0]) != (idx.size, vidx.size, test.shape[0]):
                        raise EvaluationError(
                            f"{what}: adapted embeddings must cover the fraction's {idx.size} train and {vidx.size} "
                            f"validation examples and the {test.shape[0]} test images, got {f_train.shape[0]}, "
                            f"{f_val.shape[0]} and {f_test.shape[0]}"
                        )
                fitted = _fit(f_train, y_train[idx], f_val, y_val[vidx], task, n_classes, seed, probe, what)
                add(
                    fitted,
                    y_test,
                    fitted.predict_proba(f_test, "test embeddings"),
                    test_index,
                    condition="label_fraction",
                    label_fraction=f,
                    label_fraction_used=idx.size / train.shape[0],
                    features=features,
                )

        for key in embeddings.corrupted:
            if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str)):
                raise EvaluationError(f"corrupted embeddings must be keyed by (corruption, severity), got {key!r}")
            if key[0] in ("", "none") or isinstance(key[1], bool) or key[1] not in SEVERITIES:
                raise EvaluationError(
                    f"corrupted embeddings {key!r}: corruption must be named (not 'none') and severity must be "
                    f"one of {SEVERITIES}"
                )
        for key in embeddings.corrupted_images:
            if key not in embeddings.corrupted:
                raise EvaluationError(f"corrupted image positions {key!r}: no corrupted embeddings of that condition")
        for key in sorted(embeddings.corrupted, key=lambda k: (k[0], int(k[1]))):
            corruption, severity = key
            name = f"corrupted test embeddings ({corruption}, severity {severity})"
            array = check_embeddings(embeddings.corrupted[key], name)
            if array.shape[0] > y_test.shape[0]:
                raise EvaluationError(f"{name}: {array.shape[0]} rows, more than the {y_test.shape[0]} test labels")
            images = _corrupted_positions(embeddings.corrupted_images.get(key), array.shape[0], y_test.shape[0], name)
            add(
                clean,
                y_test[images],
                clean.predict_proba(array, name),
                test_index[images],
                condition="corruption",
                corruption=corruption,
                severity=int(severity),
            )

        if embeddings.shift_test is not None:
            if embeddings.shift_labels is None:
                raise EvaluationError("shift_test is given without shift_labels")
            shift = check_embeddings(embeddings.shift_test, "site-B test embeddings")
            y_shift = check_labels(embeddings.shift_labels, task, n_classes, "site-B test labels", shift.shape[0])
            shift_logits = clean.logits(shift, "site-B test embeddings")
            add(clean, y_shift, logits_to_proba(shift_logits, task), np.arange(shift.shape[0]), condition="shift")
            for method, calibrator in calibrators.items():
                add(clean, y_shift, calibrator.predict_proba(shift_logits), np.arange(shift.shape[0]),
                    condition="shift", calibration=method)
        elif embeddings.shift_labels is not None:
            raise EvaluationError("shift_labels is given without shift_test")
        if embeddings.cue_removed_test is not None:
            removed = check_embeddings(embeddings.cue_removed_test, "cue-removed test embeddings")
            if removed.shape != test.shape:
                raise EvaluationError(
                    f"cue-removed test embeddings must match the test embeddings' shape {test.shape}, got {removed.shape}")
            add(clean, y_test, clean.predict_proba(removed, "cue-removed test embeddings"), test_index,
                condition="cue_removed")
        return out
