"""Data checks: split summary, class shares, the prevalence shift and its one-line warning."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.data.base import ImageDataset, ImageSplit
from crsbench_lib.data.checks import (
    PREVALENCE_SHIFT_LIMIT,
    check_dataset,
    class_shares,
    prevalence_shift,
    split_summary,
)


def _dataset(labels: dict[str, np.ndarray], task: str = "binary", names=("normal", "pneumonia"), rgb=False):
    def loader(split: str, site: str) -> ImageSplit:
        n = len(labels[split])
        shape = (n, 6, 5, 3) if rgb else (n, 6, 5)
        return ImageSplit(np.zeros(shape, np.uint8), labels[split], split, site)

    return ImageDataset("toy", "radiology", task, tuple(names), "v1", loader)


def test_binary_shift_is_the_difference_in_positive_prevalence_and_warns_above_the_limit():
    labels = {"train": np.array([1] * 9 + [0]), "val": np.array([1] * 9 + [0]), "test": np.array([1] * 5 + [0] * 3)}
    check = check_dataset(_dataset(labels))
    assert check.shift == pytest.approx(0.9 - 0.625)
    assert check.warning is not None
    assert check.warning.startswith("dataset toy: the positive prevalence differs")
    assert "pneumonia 0.900" in check.warning and "pneumonia 0.625" in check.warning and "0.275 > 0.05" in check.warning
    assert "\n" not in check.warning


def test_no_warning_when_the_test_mix_matches_the_development_pool():
    labels = {"train": np.array([0, 1] * 5), "val": np.array([0, 1] * 2), "test": np.array([0, 1] * 4)}
    check = check_dataset(_dataset(labels))
    assert check.shift == 0.0
    assert check.warning is None
    record = check.to_json()
    assert record["warning"] is None and record["prevalence_shift"] == 0.0
    assert [row["split"] for row in record["splits"]] == ["train", "val", "test"]


def test_the_limit_is_a_strict_bound():
    labels = {"train": np.array([0] * 10 + [1] * 10), "val": np.array([0, 1]), "test": np.array([0] * 9 + [1] * 11)}
    check = check_dataset(_dataset(labels), limit=0.05)
    assert check.shift == pytest.approx(0.05)
    assert check.warning is None
    assert check_dataset(_dataset(labels), limit=0.04).warning is not None


def test_multiclass_uses_total_variation_and_names_every_class():
    names = ("a", "b", "c")
    labels = {"train": np.array([0, 0, 1, 2] * 3), "val": np.array([0, 1, 2, 0]), "test": np.array([2, 2, 2, 1])}
    check = check_dataset(_dataset(labels, "multiclass", names))
    dev = np.array([8, 4, 4]) / 16
    test = np.array([0, 1, 3]) / 4
    assert check.shift == pytest.approx(0.5 * np.abs(dev - test).sum())
    assert "class mix" in check.warning and "total variation distance" in check.warning
    assert "a 0.500, b 0.250, c 0.250" in check.warning


def test_multilabel_uses_the_largest_finding_difference():
    labels = {"train": np.array([[1, 0], [0, 0]]), "val": np.array([[1, 0], [0, 1]]), "test": np.array([[0, 0], [0, 1]])}
    check = check_dataset(_dataset(labels, "multilabel", ("mass", "nodule")))
    assert check.shift == pytest.approx(0.5)  # mass 0.5 -> 0.0, nodule 0.25 -> 0.5
    assert "largest difference of a finding" in check.warning


def test_split_summary_reads_size_format_and_prevalence():
    labels = {"train": np.array([0, 1, 1, 1]), "val": np.array([0, 1]), "test": np.array([0, 0, 1])}
    table = split_summary(_dataset(labels, rgb=True))
    assert table["split"].tolist() == ["train", "val", "test"]
    assert table["images"].tolist() == [4, 2, 3]
    assert set(table["image size"]) == {"6x5"} and set(table["channels"]) == {3}
    assert table["prevalence"].tolist() == ["pneumonia 0.750", "pneumonia 0.500", "pneumonia 0.333"]


def test_limit_is_stated_in_the_module():
    assert 0 < PREVALENCE_SHIFT_LIMIT < 0.2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=40), st.lists(st.integers(0, 3), min_size=1, max_size=40))
def test_shift_is_a_symmetric_distance_in_the_unit_interval(a, b):
    sa, sb = class_shares(np.array(a), "multiclass", 4), class_shares(np.array(b), "multiclass", 4)
    d = prevalence_shift(sa, sb, "multiclass")
    assert 0.0 <= d <= 1.0 + 1e-12
    assert d == pytest.approx(prevalence_shift(sb, sa, "multiclass"))
    assert prevalence_shift(sa, sa, "multiclass") == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=40), st.lists(st.integers(0, 1), min_size=1, max_size=40))
def test_binary_shift_equals_the_positive_prevalence_difference(a, b):
    sa, sb = class_shares(np.array(a), "binary", 2), class_shares(np.array(b), "binary", 2)
    assert prevalence_shift(sa, sb, "binary") == pytest.approx(abs(np.mean(a) - np.mean(b)))
