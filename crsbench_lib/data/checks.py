"""Checks of a dataset's files before any result is read from them: split sizes, image format, class prevalence.

A results table cannot show that the data behind it are unusual. The one
property of a real dataset that moves every encoder's numbers alike is a
difference in class prevalence between the images the probes and calibrators
are fitted on and the test images: a model that is calibrated on the training
prevalence is off on test by about the prevalence difference, whatever its
encoder (calibration in the large: the mean predicted probability follows the
training prevalence, the observed frequency the test one). That error enters
the expected calibration error of every encoder, hence the calibration axis
and any calibration gate, and it is a property of the data, not of the
encoders. So it is measured here, from the files, and reported before any
conclusion is drawn.

The development pool of a file-based dataset is its source ``train`` and
``val`` splits together (every seed's train, validation and calibration splits
are stratified draws from it, :meth:`ImageDataset.development`); the test split
is the source ``test`` split. The shift is measured between those two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from crsbench_lib.data.base import SPLITS, ImageDataset, ImageSplit

#: Prevalence difference between the development pool and the test split above which a run warns.
#: A shift of 0.05 alone gives a train-calibrated model an ECE of about 0.05 on test: as large as the
#: differences in ECE that separate encoders (a few hundredths), a quarter of the C axis's range (0.2 to 0).
PREVALENCE_SHIFT_LIMIT = 0.05


def class_shares(labels: np.ndarray, task: str, n_classes: int) -> np.ndarray:
    """Share of images in each class (multi-label: share carrying each finding).

    Parameters
    ----------
    labels : numpy.ndarray
        ``(N,)`` class indices, or ``(N, L)`` 0/1 findings for ``task="multilabel"``.
    task : {"binary", "multiclass", "multilabel"}
    n_classes : int

    Returns
    -------
    numpy.ndarray
        ``(n_classes,)`` shares; zeros for an empty split.

    Examples
    --------
    >>> class_shares(np.array([0, 1, 1, 1]), "binary", 2).tolist()
    [0.25, 0.75]
    """
    labels = np.asarray(labels)
    if len(labels) == 0:
        return np.zeros(n_classes)
    if task == "multilabel":
        return labels.astype(np.float64).mean(axis=0)
    return np.bincount(labels.astype(np.int64), minlength=n_classes)[:n_classes] / len(labels)


def prevalence_shift(development: np.ndarray, test: np.ndarray, task: str) -> float:
    """How far the test split's class mix lies from the development pool's.

    Binary and multi-class: the total variation distance ``0.5 * sum_k |p_k - q_k|``
    (binary: the difference in positive prevalence). Multi-label: the largest
    difference in any finding's prevalence.

    Parameters
    ----------
    development, test : numpy.ndarray
        Class shares (:func:`class_shares`) of the development pool and of the test split.
    task : {"binary", "multiclass", "multilabel"}

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> round(prevalence_shift(np.array([0.1, 0.9]), np.array([0.375, 0.625]), "binary"), 3)
    0.275
    """
    gap = np.abs(np.asarray(development, dtype=np.float64) - np.asarray(test, dtype=np.float64))
    return float(gap.max() if task == "multilabel" else 0.5 * gap.sum())


def _image_format(split: ImageSplit) -> tuple[str, int]:
    shape = split.images.shape
    channels = int(shape[3]) if len(shape) == 4 else 1
    return f"{shape[1]}x{shape[2]}", channels


def _prevalence_label(shares: np.ndarray, task: str, class_names: tuple[str, ...]) -> str:
    """The shares a reader compares: the positive class, or each class, or each finding."""
    if task == "binary":
        return f"{class_names[1]} {shares[1]:.3f}"
    return ", ".join(f"{name} {share:.3f}" for name, share in zip(class_names, shares, strict=True))


@dataclass(frozen=True)
class DataCheck:
    """What the data checks found for one dataset.

    Attributes
    ----------
    dataset : str
    summary : pandas.DataFrame
        One row per source split (:func:`split_summary`).
    shift : float
        :func:`prevalence_shift` between the development pool and the test split.
    development_shares, test_shares : tuple of float
        Class shares of the pool and of the test split.
    class_names : tuple of str
    task : str
    limit : float
        The shift above which :attr:`warning` is set.
    """

    dataset: str
    summary: pd.DataFrame
    shift: float
    development_shares: tuple[float, ...]
    test_shares: tuple[float, ...]
    class_names: tuple[str, ...]
    task: str
    limit: float = PREVALENCE_SHIFT_LIMIT

    @property
    def warning(self) -> str | None:
        """One line when the class mix differs between development and test by more than :attr:`limit`."""
        # Rounded so that a shift equal to the limit, up to floating point, does not warn.
        if round(self.shift, 9) <= self.limit:
            return None
        what = "positive prevalence" if self.task == "binary" else "class mix"
        dev = _prevalence_label(np.asarray(self.development_shares), self.task, self.class_names)
        test = _prevalence_label(np.asarray(self.test_shares), self.task, self.class_names)
        measure = "difference" if self.task == "binary" else (
            "largest difference of a finding" if self.task == "multilabel" else "total variation distance")
        return (
            f"dataset {self.dataset}: the {what} differs between the development pool (train + val: {dev}) and "
            f"the test split ({test}); {measure} {self.shift:.3f} > {self.limit:g}. A model calibrated on the "
            f"development prevalence is off on test by about that much whatever its encoder: read calibration "
            f"(C) and any calibration gate as a property of these data"
        )

    def to_json(self) -> dict[str, object]:
        """A JSON-ready record (the run manifest keeps it)."""
        return {
            "dataset": self.dataset,
            "task": self.task,
            "class_names": list(self.class_names),
            "splits": self.summary.drop(columns="dataset").to_dict(orient="records"),
            "development_shares": [round(x, 6) for x in self.development_shares],
            "test_shares": [round(x, 6) for x in self.test_shares],
            "prevalence_shift": round(self.shift, 6),
            "limit": self.limit,
            "warning": self.warning,
        }


def split_summary(dataset: ImageDataset) -> pd.DataFrame:
    """Size, image format and class prevalence of each source split of a dataset.

    Parameters
    ----------
    dataset : ImageDataset
        A dataset with source splits (:data:`~crsbench_lib.data.base.SPLITS`).

    Returns
    -------
    pandas.DataFrame
        ``dataset, split, images, image size, channels, prevalence``: one row per
        source split; ``prevalence`` is the positive class's share (binary), or
        every class's (multi-class) or finding's (multi-label) share.

    Examples
    --------
    >>> def loader(split, site):
    ...     return ImageSplit(np.zeros((4, 8, 8), np.uint8), np.array([0, 1, 1, 1]), split, site)
    >>> ds = ImageDataset("toy", "radiology", "binary", ("no", "yes"), "v1", loader)
    >>> split_summary(ds).loc[0, ["split", "image size", "prevalence"]].tolist()
    ['train', '8x8', 'yes 0.750']
    """
    rows = []
    for name in SPLITS:
        split = dataset.source_split(name)
        size, channels = _image_format(split)
        shares = class_shares(split.labels, dataset.task, dataset.n_classes)
        rows.append({"dataset": dataset.name, "split": name, "images": len(split), "image size": size,
                     "channels": channels, "prevalence": _prevalence_label(shares, dataset.task, dataset.class_names)})
    return pd.DataFrame(rows)


def check_dataset(dataset: ImageDataset, limit: float = PREVALENCE_SHIFT_LIMIT) -> DataCheck:
    """The data checks of one file-based dataset: its split summary and its prevalence shift.

    Parameters
    ----------
    dataset : ImageDataset
    limit : float
        Shift above which the check warns (default :data:`PREVALENCE_SHIFT_LIMIT`).

    Returns
    -------
    DataCheck

    Examples
    --------
    >>> def loader(split, site):
    ...     labels = np.array([1] * 9 + [0]) if split != "test" else np.array([1] * 6 + [0] * 4)
    ...     return ImageSplit(np.zeros((10, 8, 8), np.uint8), labels, split, site)
    >>> ds = ImageDataset("toy", "radiology", "binary", ("normal", "pneumonia"), "v1", loader)
    >>> check = check_dataset(ds)
    >>> round(check.shift, 2), check.warning is not None
    (0.3, True)
    """
    train, val, test = (dataset.source_split(name) for name in SPLITS)
    pool = np.concatenate([train.labels, val.labels])
    dev = class_shares(pool, dataset.task, dataset.n_classes)
    tst = class_shares(test.labels, dataset.task, dataset.n_classes)
    return DataCheck(
        dataset=dataset.name,
        summary=split_summary(dataset),
        shift=prevalence_shift(dev, tst, dataset.task),
        development_shares=tuple(float(x) for x in dev),
        test_shares=tuple(float(x) for x in tst),
        class_names=tuple(dataset.class_names),
        task=dataset.task,
        limit=float(limit),
    )


__all__ = ["PREVALENCE_SHIFT_LIMIT", "DataCheck", "check_dataset", "class_shares", "prevalence_shift", "split_summary"]
