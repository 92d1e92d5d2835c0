"""Per-image predictions: the test images' probabilities behind every results row.

Every evaluated condition (encoder, dataset, seed, arm, condition, severity,
label fraction, calibrator) keeps its test images' predicted probabilities
(float32) and labels (method section 9, amendment 3). The results table is
computed from them (:func:`crsbench_lib.evaluation.cell.rows_from_predictions`),
so metrics, axes and every resampling can be recomputed without re-embedding.

Stable image index: ``image`` is the position of the image in the test split of
its site (site B for ``shift`` rows, site A otherwise). The test split is the
same for every seed and encoder, and a corrupted image keeps the index of the
clean image it was made from, so equal indices name the same test image across
encoders, seeds and conditions; paired resampling draws these indices.

Parquet layout (one file per cell, ``predictions/<cell key>.parquet`` in a run
folder): one row per (condition, image); the condition's fields
(:data:`META_COLUMNS`, the results-table columns that are not computed from the
probabilities), ``group`` (the condition's position in the cell), ``image``
(int32), ``label`` (int64 class index, or a fixed-size list of uint8 for
multi-label) and ``proba`` (fixed-size list of float32: the positive-class
probability for binary tasks, one per class or label otherwise).

Size (zstd-compressed Parquet): about 25 bytes per (condition, image), measured
on the quick profile (4.2 MB for its 48 cells, 166,400 image-predictions). The
default profile holds about 6.5 million (per cell about 24,000: eight clean,
calibrated and label-fraction conditions on 2,000 test images, 55-60 corruption
conditions on 125 each, site B on 2,000 for cxr; 180 frozen and 90 LoRA
cells); its run measured 161 MB (the run manifest records ``predictions_bytes``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from crsbench_lib.atomic import atomic_path
from crsbench_lib.errors import SchemaError

#: Results-table columns that describe a condition rather than measure it.
META_COLUMNS: tuple[str, ...] = (
    "encoder",
    "dataset",
    "domain",
    "task",
    "seed",
    "arm",
    "condition",
    "label_fraction",
    "label_fraction_used",
    "corruption",
    "severity",
    "calibration",
    "ece_bins",
    "c_rule",
    "probe_c",
    "calibrator_split",
    "config_hash",
    "package_version",
)
#: Meta columns added after tables were first written, with the value of a condition that lacks one: written
#: when any condition of a cell has them, read back where a file has them (older files do not).
OPTIONAL_META: dict[str, Any] = {"features": ""}
_META_TYPES: dict[str, pa.DataType] = {
    "seed": pa.int64(),
    "severity": pa.int64(),
    "ece_bins": pa.int64(),
    "label_fraction": pa.float64(),
    "label_fraction_used": pa.float64(),
    "probe_c": pa.float64(),
}
#: Precision of stored probabilities (the table is computed from the stored values).
PROBA_DTYPE = np.float32


@dataclass(frozen=True, eq=False)
class ConditionPredictions:
    """The test predictions of one evaluated condition.

    Attributes
    ----------
    meta : dict
        The condition's :data:`META_COLUMNS`.
    image : numpy.ndarray
        int32 ``(n,)`` stable image indices (see the module docstring).
    labels : numpy.ndarray
        int64 ``(n,)`` class indices, or uint8 ``(n, L)`` 0/1 for multi-label.
    probabilities : numpy.ndarray
        float32 ``(n, W)``: ``W = 1`` (positive class) for binary tasks, the
        classes or labels otherwise.
    """

    meta: Mapping[str, Any]
    image: np.ndarray
    labels: np.ndarray
    probabilities: np.ndarray

    def __post_init__(self) -> None:
        missing = [c for c in META_COLUMNS if c not in self.meta]
        if missing:
            raise SchemaError(f"predictions: meta lacks {', '.join(missing)}")
        n = self.image.shape[0]
        if self.probabilities.ndim != 2 or self.probabilities.shape[0] != n or self.labels.shape[0] != n:
            raise SchemaError(
                f"predictions: image {self.image.shape}, labels {self.labels.shape} and probabilities "
                f"{self.probabilities.shape} disagree on the number of images"
            )

    @classmethod
    def build(
        cls, meta: Mapping[str, Any], image: object, labels: object, probabilities: object, task: str
    ) -> ConditionPredictions:
        """Predictions at the stored precision: probabilities rounded to float32 and clipped to [0, 1].

        ``probabilities`` in the probe's format (binary ``(n, 2)``); binary keeps its second column.
        """
        p = np.asarray(probabilities, dtype=np.float64)
        if task == "binary":
            p = p[:, 1:] if p.ndim == 2 else p[:, None]
        stored = np.clip(p, 0.0, 1.0).astype(PROBA_DTYPE)
        y = np.asarray(labels)
        y = y.astype(np.uint8) if task == "multilabel" else y.astype(np.int64)
        return cls(dict(meta), np.asarray(image, dtype=np.int32), y, stored)

    def metric_input(self) -> tuple[np.ndarray, np.ndarray]:
        """``(labels, probabilities)`` as the metric functions take them (float64; binary ``(n,)``)."""
        p = self.probabilities.astype(np.float64)
        return self.labels, (p[:, 0] if self.meta["task"] == "binary" else p)


def predictions_table(predictions: Sequence[ConditionPredictions]) -> pa.Table:
    """The Parquet table of one cell's predictions (see the module docstring).

    Raises
    ------
    SchemaError
        If the list is empty or mixes tasks or probability widths.
    """
    if not predictions:
        raise SchemaError("predictions: nothing to write")
    widths = {p.probabilities.shape[1] for p in predictions}
    tasks = {p.meta["task"] for p in predictions}
    if len(widths) != 1 or len(tasks) != 1:
        raise SchemaError(f"predictions of one cell must share task and width, found {sorted(tasks)} {sorted(widths)}")
    width = widths.pop()
    task = tasks.pop()
    sizes = np.array([p.image.shape[0] for p in predictions])
    columns: dict[str, pa.Array] = {}
    optional = [name for name in OPTIONAL_META if any(name in p.meta for p in predictions)]
    for name in (*META_COLUMNS, *optional):
        values = np.repeat(np.array([p.meta.get(name, OPTIONAL_META.get(name)) for p in predictions], dtype=object),
                           sizes)
        kind = _META_TYPES.get(name, pa.string())
        array = pa.array(values.tolist(), type=kind)
        columns[name] = array.dictionary_encode() if kind == pa.string() else array
    columns["group"] = pa.array(np.repeat(np.arange(len(predictions), dtype=np.int32), sizes))
    columns["image"] = pa.array(np.concatenate([p.image for p in predictions]).astype(np.int32))
    labels = np.concatenate([p.labels for p in predictions])
    if task == "multilabel":
        columns["label"] = pa.FixedSizeListArray.from_arrays(pa.array(labels.reshape(-1).astype(np.uint8)),
                                                             labels.shape[1])
    else:
        columns["label"] = pa.array(labels.astype(np.int64))
    proba = np.concatenate([p.probabilities for p in predictions]).astype(PROBA_DTYPE)
    columns["proba"] = pa.FixedSizeListArray.from_arrays(pa.array(proba.reshape(-1)), width)
    return pa.table(columns)


def _meta_value(name: str, value: Any) -> Any:
    if name in ("seed", "severity", "ece_bins"):
        return int(value)
    if name in _META_TYPES:
        return float(value)
    return str(value)


def predictions_from_table(table: pa.Table, source: str = "predictions") -> list[ConditionPredictions]:
    """Split a predictions table back into its conditions (inverse of :func:`predictions_table`).

    Raises
    ------
    SchemaError
        If a column is missing.
    """
    needed = (*META_COLUMNS, "group", "image", "label", "proba")
    missing = [c for c in needed if c not in table.column_names]
    if missing:
        raise SchemaError(f"{source}: predictions lack column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    group = table.column("group").to_numpy()
    image = table.column("image").to_numpy().astype(np.int32)
    proba_col = table.column("proba").combine_chunks()
    width = proba_col.type.list_size
    proba = proba_col.flatten().to_numpy().reshape(-1, width)
    label_col = table.column("label").combine_chunks()
    if pa.types.is_fixed_size_list(label_col.type):
        labels = label_col.flatten().to_numpy().reshape(-1, label_col.type.list_size).astype(np.uint8)
    else:
        labels = label_col.to_numpy().astype(np.int64)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    ends = np.r_[starts[1:], group.size]
    meta_columns = {name: table.column(name) for name in (*META_COLUMNS, *OPTIONAL_META) if name in table.column_names}
    out = []
    for start, end in zip(starts, ends):
        meta = {name: _meta_value(name, column[int(start)].as_py()) for name, column in meta_columns.items()}
        out.append(ConditionPredictions(meta, image[start:end], labels[start:end], proba[start:end]))
    return out


def write_predictions(predictions: Sequence[ConditionPredictions], path: str | os.PathLike[str]) -> Path:
    """Write one cell's predictions to Parquet atomically; returns the path."""
    table = predictions_table(predictions)
    destination = Path(path)
    with atomic_path(destination, suffix=".parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return destination


def read_predictions(path: str | os.PathLike[str]) -> list[ConditionPredictions]:
    """Read one cell's predictions.

    Raises
    ------
    SchemaError
        If the file is missing, unreadable or lacks a column.
    """
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise SchemaError(f"{path}: unreadable predictions file ({type(exc).__name__})") from exc
    return predictions_from_table(table, str(path))


# --------------------------------------------------------------------------- arrays for resampling


@dataclass(frozen=True, eq=False)
class DatasetPredictions:
    """Every encoder's and seed's test predictions on one dataset, as dense arrays.

    Shapes use ``E`` encoders, ``S`` seeds, ``N`` site-A test images, ``W``
    probability columns; conditions are stacked along an axis of their own.

    Attributes
    ----------
    dataset, task : str
    encoders : tuple of str
        Sorted.
    seeds : tuple of int
        Sorted.
    labels : numpy.ndarray
        ``(N,)`` or ``(N, L)`` site-A test labels (the same for every encoder and seed).
    clean : numpy.ndarray
        float32 ``(E, S, N, W)``: clean probabilities at 100 % labels, uncalibrated.
    fractions : tuple of float
        Label fractions below 1, descending.
    fraction_proba : numpy.ndarray
        float32 ``(E, S, F, N, W)``.
    corruptions : tuple of (str, int)
        (family, severity), sorted.
    corrupted_images : numpy.ndarray
        int32 ``(C, M)``: per corruption condition, the test images it corrupted
        (sorted; the same for every encoder and seed). Every condition has ``M``
        images: its own block under the per-condition layout, its family's under
        the per-family one, the first ``M`` under the shared one.
    corrupted_proba : numpy.ndarray
        float32 ``(E, S, C, M, W)``.
    shift_labels : numpy.ndarray or None
        Site-B test labels ``(N_B,)`` or ``(N_B, L)``.
    shift_proba : numpy.ndarray or None
        float32 ``(E, S, N_B, W)``.
    ece_bins : int
    """

    dataset: str
    task: str
    encoders: tuple[str, ...]
    seeds: tuple[int, ...]
    labels: np.ndarray
    clean: np.ndarray
    fractions: tuple[float, ...]
    fraction_proba: np.ndarray
    corruptions: tuple[tuple[str, int], ...]
    corrupted_images: np.ndarray
    corrupted_proba: np.ndarray
    shift_labels: np.ndarray | None
    shift_proba: np.ndarray | None
    ece_bins: int


def _fraction_key(value: float) -> float:
    return round(float(value), 9)


def dataset_arrays(predictions: Iterable[ConditionPredictions], arm: str = "frozen") -> dict[str, DatasetPredictions]:
    """Dense per-dataset arrays of uncalibrated predictions of one arm, for fast resampling.

    Parameters
    ----------
    predictions : iterable of ConditionPredictions
        Typically every cell of a run (:func:`load_run_predictions`).
    arm : {"frozen", "lora"}

    Returns
    -------
    dict
        Dataset name -> :class:`DatasetPredictions`.

    Raises
    ------
    SchemaError
        If the predictions are not paired: an encoder or seed missing a
        condition, test images or labels that differ between encoders or seeds,
        or corruption conditions of different sizes.
    """
    by_dataset: dict[str, list[ConditionPredictions]] = {}
    for p in predictions:
        if p.meta["arm"] == arm and p.meta["calibration"] == "none":
            by_dataset.setdefault(str(p.meta["dataset"]), []).append(p)
    if not by_dataset:
        raise SchemaError(f"predictions: nothing for arm {arm!r}")
    return {name: _dense(name, items) for name, items in sorted(by_dataset.items())}


def _dense(dataset: str, items: list[ConditionPredictions]) -> DatasetPredictions:
    encoders = tuple(sorted({str(p.meta["encoder"]) for p in items}))
    seeds = tuple(sorted({int(p.meta["seed"]) for p in items}))
    task = str(items[0].meta["task"])
    table: dict[tuple[str, int, str, Any], ConditionPredictions] = {}
    for p in items:
        condition = str(p.meta["condition"])
        if condition == "label_fraction":
            what: Any = _fraction_key(p.meta["label_fraction"])
        elif condition == "corruption":
            what = (str(p.meta["corruption"]), int(p.meta["severity"]))
        else:
            what = None
        table[(str(p.meta["encoder"]), int(p.meta["seed"]), condition, what)] = p
    fractions = tuple(sorted({k[3] for k in table if k[2] == "label_fraction"}, reverse=True))
    corruptions = tuple(sorted({k[3] for k in table if k[2] == "corruption"}))
    has_shift = any(k[2] == "shift" for k in table)

    def get(encoder: str, seed: int, condition: str, what: Any) -> ConditionPredictions:
        try:
            return table[(encoder, seed, condition, what)]
        except KeyError:
            label = condition if what is None else f"{condition} {what}"
            raise SchemaError(
                f"predictions of dataset '{dataset}' are not paired: encoder '{encoder}', seed {seed} lacks {label}"
            ) from None

    first = get(encoders[0], seeds[0], "clean", None)
    order = np.argsort(first.image, kind="stable")
    labels = first.labels[order]
    reference_images = first.image[order]

    def stack(condition: str, what: Any, images: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = None
        ref_images = ref_labels = None
        for e, encoder in enumerate(encoders):
            for s, seed in enumerate(seeds):
                p = get(encoder, seed, condition, what)
                idx = np.argsort(p.image, kind="stable")
                if ref_images is None:
                    ref_images, ref_labels = p.image[idx], p.labels[idx]
                    out = np.empty((len(encoders), len(seeds), *p.probabilities.shape), dtype=PROBA_DTYPE)
                elif not np.array_equal(p.image[idx], ref_images) or not np.array_equal(p.labels[idx], ref_labels):
                    raise SchemaError(
                        f"predictions of dataset '{dataset}' are not paired: {condition} {what or ''} of encoder "
                        f"'{encoder}', seed {seed} has other test images or labels"
                    )
                out[e, s] = p.probabilities[idx]
        assert out is not None and ref_images is not None and ref_labels is not None
        return out, ref_images, ref_labels

    clean, _, _ = stack("clean", None)
    n, width = clean.shape[2], clean.shape[3]
    fraction_proba = np.empty((len(encoders), len(seeds), len(fractions), n, width), dtype=PROBA_DTYPE)
    for f, fraction in enumerate(fractions):
        fraction_proba[:, :, f], images, _ = stack("label_fraction", fraction)
        if not np.array_equal(images, reference_images):
            raise SchemaError(f"predictions of dataset '{dataset}': label fraction {fraction} on other test images")
    corrupted_images = np.empty((0, 0), dtype=np.int32)
    corrupted_proba = np.empty((len(encoders), len(seeds), 0, 0, width), dtype=PROBA_DTYPE)
    if corruptions:
        parts, image_sets = [], []
        for what in corruptions:
            array, images, _ = stack("corruption", what)
            if image_sets and images.size != image_sets[0].size:
                raise SchemaError(
                    f"predictions of dataset '{dataset}': corruption {what} has {images.size} test images, "
                    f"{corruptions[0]} {image_sets[0].size} (every condition needs as many)"
                )
            if not np.isin(images, reference_images).all():
                raise SchemaError(f"predictions of dataset '{dataset}': corruption {what} on images the test split lacks")
            parts.append(array)
            image_sets.append(images)
        corrupted_images = np.stack(image_sets)
        corrupted_proba = np.stack(parts, axis=2)
    shift_labels = shift_proba = None
    if has_shift:
        shift_proba, _, shift_labels = stack("shift", None)
    return DatasetPredictions(
        dataset=dataset,
        task=task,
        encoders=encoders,
        seeds=seeds,
        labels=labels,
        clean=clean,
        fractions=fractions,
        fraction_proba=fraction_proba,
        corruptions=corruptions,
        corrupted_images=corrupted_images.astype(np.int32),
        corrupted_proba=corrupted_proba,
        shift_labels=shift_labels,
        shift_proba=shift_proba,
        ece_bins=int(first.meta["ece_bins"]),
    )


PREDICTIONS_DIR = "predictions"


def load_run_predictions(run_dir: str | os.PathLike[str]) -> list[ConditionPredictions]:
    """Every condition's predictions stored under a run folder (``predictions/*.parquet``).

    Raises
    ------
    SchemaError
        If the folder holds no predictions or a file is unreadable.
    """
    folder = Path(run_dir) / PREDICTIONS_DIR
    files = sorted(folder.glob("*.parquet"))
    if not files:
        raise SchemaError(f"{folder}: no stored predictions (run the profile with this version first)")
    out: list[ConditionPredictions] = []
    for path in files:
        out.extend(read_predictions(path))
    return out


def load_prediction_arrays(run_dir: str | os.PathLike[str], arm: str = "frozen") -> dict[str, DatasetPredictions]:
    """Dense, paired per-dataset arrays of a run's stored predictions (for the bootstrap).

    Examples
    --------
    >>> arrays = load_prediction_arrays(".crsbench-cache/runs/quick")  # doctest: +SKIP
    >>> arrays["derm"].clean.shape  # (encoders, seeds, test images, classes)  # doctest: +SKIP
    (6, 2, 200, 4)
    """
    return dataset_arrays(load_run_predictions(run_dir), arm)


def restrict_arrays(
    arrays: Mapping[str, DatasetPredictions],
    datasets: Sequence[str] | None = None,
    encoders: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
) -> dict[str, DatasetPredictions]:
    """Keep only some datasets, encoders and seeds of :func:`load_prediction_arrays`' output.

    A chapter filtered to a subset of the results table resamples the same subset
    of the predictions, so its bootstrap describes what its tables show.

    Parameters
    ----------
    arrays : mapping
        Dataset -> DatasetPredictions.
    datasets, encoders, seeds : sequence, optional
        What to keep (``None``: everything).

    Returns
    -------
    dict
        Dataset -> DatasetPredictions, encoders and seeds in their original (sorted) order.

    Raises
    ------
    SchemaError
        If a requested dataset, encoder or seed has no stored predictions.

    Examples
    --------
    >>> arrays = load_prediction_arrays(".crsbench-cache/runs/quick")  # doctest: +SKIP
    >>> restrict_arrays(arrays, encoders=["random_init", "resnet50_imagenet"])["derm"].encoders  # doctest: +SKIP
    ('random_init', 'resnet50_imagenet')
    """
    names = sorted(arrays) if datasets is None else list(dict.fromkeys(datasets))
    out: dict[str, DatasetPredictions] = {}
    for name in names:
        if name not in arrays:
            raise SchemaError(f"predictions: no stored predictions for dataset {name!r}; stored: {', '.join(sorted(arrays))}")
        data = arrays[name]
        keep_e = _positions(data.encoders, encoders, "encoder", name)
        keep_s = _positions(data.seeds, seeds, "seed", name)
        out[name] = replace(
            data,
            encoders=tuple(data.encoders[i] for i in keep_e),
            seeds=tuple(data.seeds[i] for i in keep_s),
            clean=data.clean[np.ix_(keep_e, keep_s)],
            fraction_proba=data.fraction_proba[np.ix_(keep_e, keep_s)],
            corrupted_proba=data.corrupted_proba[np.ix_(keep_e, keep_s)],
            shift_proba=None if data.shift_proba is None else data.shift_proba[np.ix_(keep_e, keep_s)],
        )
    return out


def _positions(present: Sequence[Any], wanted: Sequence[Any] | None, what: str, dataset: str) -> list[int]:
    if wanted is None:
        return list(range(len(present)))
    index = {value: i for i, value in enumerate(present)}
    missing = [value for value in wanted if value not in index]
    if missing:
        raise SchemaError(f"predictions of {dataset!r}: no {what} {missing[0]!r}; stored: {', '.join(map(str, present))}")
    return sorted({index[value] for value in wanted})
