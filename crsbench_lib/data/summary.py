"""How many images a dataset holds, per class and source split, read from its data.

The cohort chapter shows it for every dataset a run read from files, so that a
reader sees the counts of *their* data, not of the phantom cohort.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from crsbench_lib.data.base import SPLITS, ImageDataset


def class_counts(dataset: ImageDataset) -> pd.DataFrame:
    """Images per class (or finding) in each source split of the first site.

    Parameters
    ----------
    dataset : ImageDataset
        Any dataset; its source splits (:data:`~crsbench_lib.data.base.SPLITS`) are read.

    Returns
    -------
    pandas.DataFrame
        One row per class: ``dataset, class, train, val, test`` (multi-label:
        images carrying each finding, and a ``no finding`` row), then a row
        ``all`` with the split sizes.

    Examples
    --------
    >>> from crsbench_lib.data.base import ImageSplit
    >>> def loader(split, site):
    ...     return ImageSplit(np.zeros((4, 8, 8), np.uint8), np.array([0, 1, 1, 1]), split, site)
    >>> ds = ImageDataset("toy", "radiology", "binary", ("no", "yes"), "v1", loader)
    >>> class_counts(ds)["train"].tolist()
    [1, 3, 4]
    """
    columns: dict[str, list[int]] = {}
    for split in SPLITS:
        labels = dataset.source_split(split).labels
        if dataset.task == "multilabel":
            counts = [int((labels.sum(axis=1) == 0).sum()), *(int(labels[:, k].sum()) for k in range(dataset.n_classes))]
        else:
            counts = np.bincount(labels.astype(np.int64), minlength=dataset.n_classes).tolist()
        columns[split] = [*counts, len(labels)]
    names = (["no finding"] if dataset.task == "multilabel" else []) + list(dataset.class_names) + ["all"]
    return pd.DataFrame({"dataset": dataset.name, "class": names, **columns})
