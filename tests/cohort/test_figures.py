"""Tests of the cohort figures: they build, have the expected grid, and reject bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib.figure import Figure

from crsbench_lib.cohort import build_dataset, corruption_families
from crsbench_lib.cohort.figures import contact_sheet, corruption_sheet, site_comparison
from crsbench_lib.errors import DataError

SMALL = {"train": 200, "val": 8, "test": 16}


def _image_axes(fig: Figure) -> int:
    return sum(1 for ax in fig.axes if ax.images)


def test_contact_sheet_multiclass_rows_per_class() -> None:
    ds = build_dataset("derm", sizes=SMALL)
    fig = contact_sheet(ds, n_per_class=4)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 4 * 4
    assert _image_axes(fig) == 16
    assert [fig.axes[4 * i].get_ylabel() for i in range(4)][1] == "1 melanoma"


def test_contact_sheet_names_a_site_only_where_there_are_two() -> None:
    import numpy as np

    from crsbench_lib.data.base import ImageDataset, ImageSplit

    def loader(split, site):
        return ImageSplit(np.zeros((6, 8, 8), np.uint8), np.array([0, 1] * 3), split, site)

    single = ImageDataset("mine", "ultrasound", "binary", ("benign", "malignant"), "v1", loader)
    assert contact_sheet(single, n_per_class=2, split="test").get_suptitle() == (
        "mine (ultrasound), test split: examples per class")
    two = build_dataset("cxr", sizes=SMALL)
    assert ", site A:" in contact_sheet(two, n_per_class=2).get_suptitle()


def test_contact_sheet_multilabel_rows_per_finding() -> None:
    fig = contact_sheet(build_dataset("cxr", sizes=SMALL), n_per_class=3)
    assert len(fig.axes) == 5 * 3  # "no finding" + 4 findings
    assert fig.axes[0].get_ylabel() == "no finding"


def test_site_comparison_two_rows() -> None:
    fig = site_comparison(build_dataset("cxr", sizes=SMALL), n_per_site=5)
    assert len(fig.axes) == 10
    assert fig.axes[0].get_ylabel() == "site A" and fig.axes[5].get_ylabel() == "site B"


def test_corruption_sheet_grid() -> None:
    ds = build_dataset("fundus", sizes=SMALL)
    fig = corruption_sheet(ds, index=2)
    n_fam = len(corruption_families("ophthalmology"))
    assert len(fig.axes) == n_fam * 6
    assert fig.axes[0].get_title() == "clean" and fig.axes[5].get_title() == "sev 5"


def test_figures_accept_names() -> None:
    assert isinstance(contact_sheet("fundus", n_per_class=2), Figure)


def test_bad_figure_input() -> None:
    ds = build_dataset("derm", sizes=SMALL)
    import dataclasses

    with pytest.raises(DataError, match="single site"):
        site_comparison(dataclasses.replace(ds, sites=("A",)))
    with pytest.raises(DataError, match="index"):
        corruption_sheet(ds, index=99)
    with pytest.raises(DataError, match="positive"):
        contact_sheet(ds, n_per_class=0)
