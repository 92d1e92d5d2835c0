"""Per-seed stratified development splits of real data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.data.base import ImageDataset, ImageSplit
from crsbench_lib.data.resample import development_split, indices_digest
from crsbench_lib.errors import DataError


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 10), st.integers(1, 10))
def test_parts_are_disjoint_cover_the_pool_and_have_their_sizes(seed, n_val, n_cal):
    labels = np.random.default_rng(seed % 1000).integers(0, 3, 60)
    parts = development_split(labels, seed, n_val, n_cal)
    assert len(parts["val"]) == n_val and len(parts["calibration"]) == n_cal
    together = np.concatenate([parts["train"], parts["val"], parts["calibration"]])
    assert np.array_equal(np.sort(together), np.arange(60))


def test_stratified_and_seeded():
    labels = np.repeat([0, 1, 2, 3], [400, 200, 200, 200])
    a = development_split(labels, 0, 100, 100)
    assert np.bincount(labels[a["val"]]).tolist() == [40, 20, 20, 20]
    assert np.bincount(labels[a["calibration"]]).tolist() == [40, 20, 20, 20]
    assert indices_digest(a) == indices_digest(development_split(labels, 0, 100, 100))
    assert not np.array_equal(a["val"], development_split(labels, 1, 100, 100)["val"])


def test_multilabel_strata_and_errors():
    labels = (np.random.default_rng(0).random((50, 3)) < 0.3).astype(np.uint8)
    parts = development_split(labels, 2, 10, 5)
    assert len(parts["train"]) == 35
    with pytest.raises(DataError, match="cannot give"):
        development_split(labels, 0, 30, 20)
    with pytest.raises(DataError, match="n_val"):
        development_split(labels, 0, 0, 5)


def test_real_dataset_resamples_development_splits_and_keeps_test():
    rng = np.random.default_rng(0)
    source = {
        split: ImageSplit(rng.integers(0, 255, (n, 8, 8), dtype=np.uint8), rng.integers(0, 2, n), split)
        for split, n in (("train", 40), ("val", 10), ("test", 12))
    }
    ds = ImageDataset("toy", "x", "binary", ("a", "b"), "v1", lambda split, site: source[split], calibration_size=6)
    first, second = ds.development(0), ds.development(1)
    assert [len(first[k]) for k in ("train", "val", "calibration")] == [34, 10, 6]
    assert not np.array_equal(first["train"].images, second["train"].images)
    assert ds.split("test", seed=0) is ds.split("test", seed=1)
    record = ds.development_record(1)
    assert record["n_calibration"] == 6 and len(record["indices_sha256"]) == 64
    with pytest.raises(DataError, match="training site"):
        ds.split("calibration", site="B")
