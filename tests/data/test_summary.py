"""Images per class and split, counted from a dataset's own labels."""

import numpy as np

from crsbench_lib.data.base import ImageDataset, ImageSplit
from crsbench_lib.data.summary import class_counts


def dataset(task, labels_by_split, names):
    def loader(split, site):
        labels = labels_by_split[split]
        return ImageSplit(np.zeros((len(labels), 4, 4), np.uint8), labels, split, site)

    return ImageDataset("toy", "radiology", task, names, "v1", loader)


def test_multiclass_counts_every_class_even_an_absent_one():
    ds = dataset("multiclass", {"train": np.array([0, 0, 2]), "val": np.array([1]), "test": np.array([2, 2])},
                 ("a", "b", "c"))
    counts = class_counts(ds)
    assert counts["class"].tolist() == ["a", "b", "c", "all"]
    assert counts[["train", "val", "test"]].to_numpy().tolist() == [[2, 0, 0], [0, 1, 0], [1, 0, 2], [3, 1, 2]]
    assert set(counts["dataset"]) == {"toy"}


def test_multilabel_counts_findings_and_images_without_one():
    labels = np.array([[0, 0], [1, 1], [1, 0]], np.uint8)
    ds = dataset("multilabel", {"train": labels, "val": labels[:1], "test": labels[1:]}, ("x", "y"))
    counts = class_counts(ds).set_index("class")
    assert counts.loc["no finding", "train"] == 1 and counts.loc["x", "train"] == 2 and counts.loc["y", "train"] == 1
    assert counts.loc["all"].tolist()[1:] == [3, 1, 2]
