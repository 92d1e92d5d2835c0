"""Tests of build_dataset / pretraining_pool: interface, determinism, disjointness, validation."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.cohort import (
    MIN_IMAGE_SIDE,
    PHANTOM_DATASETS,
    build_dataset,
    pretraining_pool,
)
from crsbench_lib.cohort.datasets import CHUNK, Pool, dataset_version, pool_attributes, pool_sites
from crsbench_lib.data.base import ImageDataset, ImageSplit
from crsbench_lib.errors import DataError

SMALL = {"train": 40, "val": 20, "test": 30}


def _digest(images: np.ndarray) -> str:
    return hashlib.sha256(images.tobytes()).hexdigest()


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_interface_shapes_and_labels(name: str) -> None:
    ds = build_dataset(name, sizes=SMALL)
    assert isinstance(ds, ImageDataset)
    assert ds.name == name
    for split, n in SMALL.items():
        part = ds.split(split)
        assert isinstance(part, ImageSplit)
        assert part.images.dtype == np.uint8
        assert len(part) == n
        assert part.images.shape[1:3] == (32, 32)
        if ds.task == "multilabel":
            assert part.images.ndim == 3
            assert part.labels.dtype == np.uint8 and part.labels.shape == (n, ds.n_classes)
            assert set(np.unique(part.labels)) <= {0, 1}
        else:
            assert part.images.shape[-1] == 3
            assert part.labels.dtype == np.int64
            assert part.labels.min() >= 0 and part.labels.max() < ds.n_classes
    assert ds.domain in ("dermatology", "ophthalmology", "radiology")


def test_task_metadata() -> None:
    assert build_dataset("derm", sizes=SMALL).n_classes == 4
    fundus = build_dataset("fundus", sizes=SMALL)
    assert fundus.task == "multiclass" and fundus.n_classes == 5
    cxr = build_dataset("cxr", sizes=SMALL)
    assert cxr.task == "multilabel" and cxr.sites == ("A", "B") and cxr.shift_site == "B"
    # World v4: every domain has a second site.
    assert build_dataset("derm", sizes=SMALL).sites == ("A", "B")
    assert build_dataset("fundus", sizes=SMALL).shift_site == "B"


def test_shift_test_size_and_site_b_differs() -> None:
    ds = build_dataset("cxr", sizes={**SMALL, "shift_test": 25})
    b = ds.split("test", "B")
    a = ds.split("test", "A")
    assert len(b) == 25 and b.site == "B"
    assert not np.array_equal(a.images[:25], b.images)
    # Site B's films are noisier: mean absolute difference between neighbouring pixels is larger.
    def roughness(im: np.ndarray) -> float:
        return float(np.abs(np.diff(im.astype(np.float32), axis=2)).mean())

    big = build_dataset("cxr", sizes={"train": 8, "val": 8, "test": 200})
    assert roughness(big.split("test", "B").images) > roughness(big.split("test", "A").images)


def test_default_shift_test_size_follows_test() -> None:
    ds = build_dataset("cxr", sizes=SMALL)
    assert len(ds.split("test", "B")) == SMALL["test"]


def test_image_side_is_configurable() -> None:
    ds = build_dataset("derm", sizes={"train": 5, "val": 5, "test": 5}, image_side=64)
    assert ds.split("test").images.shape == (5, 64, 64, 3)
    ds = build_dataset("cxr", sizes={"train": 5, "val": 5, "test": 5}, image_side=MIN_IMAGE_SIDE)
    assert ds.split("test").images.shape == (5, MIN_IMAGE_SIDE, MIN_IMAGE_SIDE)


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_same_seed_same_images_within_process(name: str) -> None:
    a = build_dataset(name, seed=3, sizes=SMALL).split("train")
    b = build_dataset(name, seed=3, sizes=SMALL).split("train")
    assert np.array_equal(a.images, b.images)
    assert np.array_equal(a.labels, b.labels)


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_different_seeds_and_splits_differ(name: str) -> None:
    a = build_dataset(name, seed=0, sizes=SMALL)
    b = build_dataset(name, seed=1, sizes=SMALL)
    assert not np.array_equal(a.split("test").images, b.split("test").images)
    assert not np.array_equal(a.split("train").images[:20], a.split("val").images[:20])


def test_bit_identical_across_processes() -> None:
    code = (
        "import hashlib\n"
        "from crsbench_lib.cohort import build_dataset, pretraining_pool\n"
        "out = []\n"
        "for name in ('derm', 'fundus', 'cxr'):\n"
        "    ds = build_dataset(name, seed=7, sizes={'train': 30, 'val': 10, 'test': 20})\n"
        "    for site in ds.sites:\n"
        "        s = ds.split('test', site)\n"
        "        out.append(hashlib.sha256(s.images.tobytes() + s.labels.tobytes()).hexdigest())\n"
        "    out.append(hashlib.sha256(pretraining_pool(name, 20, seed=2).images.tobytes()).hexdigest())\n"
        "print(' '.join(out))\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert len(runs[0]) == 9
    assert len(set(runs[0])) == 9


def test_splits_are_prefix_stable() -> None:
    small = build_dataset("fundus", sizes={"train": 10, "val": 10, "test": 20}).split("test")
    large = build_dataset("fundus", sizes={"train": 10, "val": 10, "test": CHUNK + 30}).split("test")
    assert np.array_equal(small.images, large.images[:20])
    assert np.array_equal(small.labels, large.labels[:20])


def test_version_changes_with_every_input() -> None:
    base = build_dataset("derm", seed=0, sizes=SMALL).version
    assert build_dataset("derm", seed=1, sizes=SMALL).version != base
    assert build_dataset("derm", seed=0, sizes={**SMALL, "test": 31}).version != base
    assert build_dataset("derm", seed=0, sizes=SMALL, image_side=48).version != base
    assert build_dataset("fundus", seed=0, sizes=SMALL).version != base
    assert build_dataset("derm", seed=0, sizes=dict(SMALL)).version == base
    assert dataset_version("cxr", 0, {**SMALL, "shift_test": 5}, 32) != dataset_version("cxr", 0, SMALL, 32)


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_pool_images_attributes_and_sites(name: str) -> None:
    pool = pretraining_pool(name, 50, seed=0)
    assert isinstance(pool, Pool) and len(pool) == 50
    images, attributes, site_ids = pool  # the labels are reachable by name only
    assert images is pool.images and attributes is pool.attributes and site_ids is pool.site_ids
    assert len(pool.images) == 50 and pool.images.dtype == np.uint8
    assert len(pool.labels) == 50 and len(pool.site_ids) == 50
    assert list(pool.attributes) == list(pool_attributes(name))
    assert all(v.shape == (50,) for v in pool.attributes.values())
    # A broad pool shares its images out evenly over every pool site, interleaved.
    sites = pool_sites(name)
    assert sites[0] == "A" and len(sites) >= 3
    assert list(pool.site_ids[: len(sites)]) == list(sites)
    assert np.array_equal(np.asarray(sites)[pool.attributes["site"]], pool.site_ids)
    assert not np.array_equal(pool.images, pretraining_pool(name, 50, seed=1).images)


def test_shift_site_never_in_a_pool() -> None:
    assert "B" not in pool_sites("cxr")
    with pytest.raises(DataError, match="sites"):
        pretraining_pool("cxr", 10, sites=("B",))


def test_narrow_pool_is_the_broad_pools_share_of_its_site() -> None:
    """A site's images do not depend on which other sites a pool has."""
    narrow = pretraining_pool("derm", 20, seed=4, sites=("A",))
    broad = pretraining_pool("derm", 80, seed=4)
    assert set(narrow.site_ids) == {"A"}
    assert np.array_equal(narrow.images, broad.images[broad.site_ids == "A"])
    other = pretraining_pool("derm", 20, seed=4, sites=("P2",))
    assert np.array_equal(other.images, broad.images[broad.site_ids == "P2"])


def test_pool_sites_differ_in_acquisition() -> None:
    pool = pretraining_pool("fundus", 400, seed=0)
    gamma = {s: pool.attributes["gamma"][pool.site_ids == s].mean() for s in pool_sites("fundus")}
    assert max(gamma.values()) - min(gamma.values()) > 0.1


def test_pools_disjoint_from_every_evaluation_split() -> None:
    """Hash every image of pools (seeds 0-2, every site) and of evaluation splits (data seeds 0-2, evaluation seeds 0-1)."""
    sizes = {"train": 100, "val": 40, "calibration": 30, "test": 60}
    for name in PHANTOM_DATASETS:
        eval_hashes: set[str] = set()
        n_eval = 0
        for seed in range(3):
            ds = build_dataset(name, seed=seed, sizes=sizes)
            sets = [ds.split("test", site).images for site in ds.sites]
            sets += [part.images for evaluation_seed in range(2) for part in ds.development(evaluation_seed).values()]
            for images in sets:
                eval_hashes.update(_digest(im) for im in images)
                n_eval += len(images)
        assert len(eval_hashes) == n_eval, f"{name}: duplicate images across evaluation splits"
        pool_hashes = {_digest(im) for seed in range(3) for im in pretraining_pool(name, 160, seed=seed).images}
        assert len(pool_hashes) == 480
        assert not pool_hashes & eval_hashes, f"{name}: a pool image appears in an evaluation split"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "mnist"}, "unknown phantom dataset"),
        ({"name": "derm", "sizes": {"train": 0}}, "positive"),
        ({"name": "derm", "sizes": {"test": -5}}, "positive"),
        ({"name": "derm", "sizes": {"train": 2.5}}, "positive integer"),
        ({"name": "derm", "sizes": {"tests": 10}}, "unknown key"),
        ({"name": "cxr", "sizes": {"shift_test": 0}}, "shift_test"),
        ({"name": "derm", "image_side": MIN_IMAGE_SIDE - 1}, "at least"),
        ({"name": "derm", "image_side": 32.0}, "integer"),
        ({"name": "derm", "seed": -1}, "seed"),
    ],
)
def test_bad_input_raises_data_error(kwargs: dict, message: str) -> None:
    with pytest.raises(DataError, match=message):
        build_dataset(**kwargs)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("fundus", 0), "n_images"),
        (("fundus", -3), "n_images"),
        (("retina", 10), "unknown phantom dataset"),
    ],
)
def test_pool_bad_input(args: tuple, message: str) -> None:
    with pytest.raises(DataError, match=message):
        pretraining_pool(*args)
    with pytest.raises(DataError, match="at least"):
        pretraining_pool("cxr", 10, image_side=8)
    for sites in ((), ("A", "A"), ("Z",)):
        with pytest.raises(DataError, match="sites"):
            pretraining_pool("derm", 10, sites=sites)


def test_unknown_split_or_site() -> None:
    ds = build_dataset("derm", sizes=SMALL)
    with pytest.raises(DataError):
        ds.split("test", "C")
    with pytest.raises(DataError):  # the cue-removed site holds a test split only
        ds.split("train", "A:cue_removed")
    with pytest.raises(DataError):
        ds.split("holdout")


@settings(max_examples=6, deadline=None)
@given(
    train=st.integers(1, 40),
    val=st.integers(1, 40),
    test=st.integers(1, 40),
    shift=st.integers(1, 40),
    seed=st.integers(0, 10_000),
)
def test_property_sizes_and_prefix(train: int, val: int, test: int, shift: int, seed: int) -> None:
    sizes = {"train": train, "val": val, "test": test, "shift_test": shift}
    ds = build_dataset("cxr", seed=seed, sizes=sizes, image_side=16)
    for split in ("train", "val", "test"):
        assert len(ds.split(split)) == sizes[split]
    b = ds.split("test", "B")
    assert len(b) == shift
    longer = build_dataset("cxr", seed=seed, sizes={**sizes, "shift_test": 40}, image_side=16).split("test", "B")
    assert np.array_equal(b.images, longer.images[:shift])


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_evaluation_seeds_redraw_development_splits_and_keep_the_test(name: str) -> None:
    ds = build_dataset(name, sizes={**SMALL, "calibration": 12})
    zero, one = ds.development(0), ds.development(1)
    assert [len(zero[k]) for k in ("train", "val", "calibration")] == [SMALL["train"], SMALL["val"], 12]
    for split in ("train", "val", "calibration"):
        assert not np.array_equal(zero[split].images, one[split].images)
    assert ds.split("test", seed=0) is ds.split("test", seed=1)
    for site in ds.sites:  # the site-B test too
        assert np.array_equal(ds.split("test", site).images, build_dataset(name, sizes=SMALL).split("test", site).images)
    train_hashes = {_digest(im) for im in zero["train"].images}
    assert not train_hashes & {_digest(im) for im in ds.split("test").images}
    assert not train_hashes & {_digest(im) for im in zero["calibration"].images}
    assert ds.development_record(0)["source"] == "generator"


def test_the_development_record_of_a_phantom_is_the_drawn_one_without_drawing():
    # A run's parent records every seed's splits before any cell: for a generator it need not draw them.
    from crsbench_lib.cohort.datasets import build_dataset

    sizes = {"train": 120, "val": 60, "calibration": 40, "test": 60}
    lazy = build_dataset("fundus", sizes=sizes)
    record = lazy.development_record(2)
    assert lazy._development == {}  # nothing was drawn
    drawn = build_dataset("fundus", sizes=sizes)
    drawn.development(2)
    assert drawn.development_record(2) == record and list(drawn.development_record(2)) == list(record)
    assert record == {"source": "generator", "n_train": 120, "n_val": 60, "n_calibration": 40}
