"""Tests of the corruption families: interface, determinism, severity ordering, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.cohort import build_dataset, corrupt, corruption_families
from crsbench_lib.cohort.corruptions import (
    CORRUPTION_LAYOUTS,
    IMAGE_BLOCKS,
    SEVERITY_TABLE,
    all_families,
    first_image,
    image_block_index,
    severity_parameters,
)
from crsbench_lib.errors import DataError
from crsbench_lib.results.schema import SEVERITIES

DOMAINS = {"derm": "dermatology", "fundus": "ophthalmology", "cxr": "radiology"}
GENERIC = {
    "gaussian_noise", "gaussian_blur", "motion_blur", "jpeg", "pixelate",
    "brightness_up", "brightness_down", "contrast", "gamma",
}


@pytest.fixture(scope="module")
def test_images() -> dict[str, np.ndarray]:
    return {name: build_dataset(name, sizes={"train": 8, "val": 8, "test": 24}).split("test").images for name in DOMAINS}


@pytest.mark.parametrize("domain", DOMAINS.values())
def test_at_least_six_families_with_generic_and_modality_ones(domain: str) -> None:
    families = corruption_families(domain)
    assert len(families) >= 6
    assert GENERIC <= set(families)
    assert set(families) - GENERIC, f"{domain} has no modality-specific artefact"


def test_dataset_names_alias_domains() -> None:
    for name, domain in DOMAINS.items():
        assert corruption_families(name) == corruption_families(domain)


def test_modality_artefacts() -> None:
    assert {"black_corner", "ruler_marks"} <= set(corruption_families("dermatology"))
    assert {"uneven_illumination", "haze"} <= set(corruption_families("ophthalmology"))
    assert {"local_contrast", "grid_lines", "burned_markers"} <= set(corruption_families("radiology"))


def test_every_severity_defined_once_as_a_monotone_table_row() -> None:
    for domain, families in SEVERITY_TABLE.items():
        for family, row in families.items():
            for name, values in row.items():
                assert len(values) == len(SEVERITIES), (domain, family, name)
                steps = np.diff(np.abs(np.asarray(values, dtype=float)))
                assert (steps >= 0).all() or (steps <= 0).all(), (domain, family, name, values)
    assert severity_parameters("cxr", "jpeg", 5) == {"quality": 12.0}


def test_physical_scales_differ_by_modality() -> None:
    black = np.zeros((4, 32, 32), dtype=np.uint8)
    # Radiographs: quantum noise vanishes without signal; cameras: read noise does not.
    assert corrupt(black, "gaussian_noise", 5).max() == 0
    assert corrupt(black, "gaussian_noise", 5, domain="derm").max() > 0
    with pytest.raises(DataError, match="not a family"):
        corrupt(black, "black_corner", 1, domain="radiology")


def test_gamma_is_not_affine(test_images: dict[str, np.ndarray]) -> None:
    images = test_images["cxr"][:1]
    ramp = np.tile(np.arange(0, 256, 8, dtype=np.uint8), (1, 32, 1))
    levels = ramp[0, 0].astype(float)
    out = corrupt(np.concatenate([images, ramp]), "gamma", 4)[1, 0].astype(float)
    # The best affine map of input to output levels still misses by many grey levels.
    fit = np.polyval(np.polyfit(levels, out, 1), levels)
    assert out[0] == 0 and np.abs(out - fit).max() > 10


@pytest.mark.parametrize("name", DOMAINS)
def test_shape_dtype_determinism_and_severity_order(name: str, test_images: dict[str, np.ndarray]) -> None:
    images = test_images[name]
    clean = images.astype(np.float64)
    for family in corruption_families(name):
        distances = []
        for severity in SEVERITIES:
            out = corrupt(images, family, severity, seed=1)
            assert out.dtype == np.uint8 and out.shape == images.shape, family
            assert np.array_equal(out, corrupt(images, family, severity, seed=1)), family
            distances.append(np.abs(out.astype(np.float64) - clean).mean())
        assert distances[0] > 0, f"{family} severity 1 leaves the images unchanged"
        # Severity is monotone: each level moves the images further from the clean ones.
        assert all(b > a for a, b in zip(distances, distances[1:])), (family, distances)


def test_input_is_not_modified(test_images: dict[str, np.ndarray]) -> None:
    images = test_images["derm"].copy()
    for family in corruption_families("derm"):
        corrupt(images, family, 5)
    assert np.array_equal(images, test_images["derm"])


@pytest.mark.parametrize("family", ["gaussian_noise", "motion_blur", "gamma", "ruler_marks", "burned_markers", "haze"])
def test_random_families_depend_on_seed(family: str, test_images: dict[str, np.ndarray]) -> None:
    images = test_images["cxr"] if family == "burned_markers" else test_images["fundus"]
    assert not np.array_equal(corrupt(images, family, 3, seed=0), corrupt(images, family, 3, seed=1))


def test_grey_and_rgb_supported_by_every_family(test_images: dict[str, np.ndarray]) -> None:
    for family in all_families():
        for images in (test_images["cxr"][:3], test_images["derm"][:3]):
            assert corrupt(images, family, 2).shape == images.shape


def test_brightness_moves_both_ways(test_images: dict[str, np.ndarray]) -> None:
    images = test_images["derm"]
    assert corrupt(images, "brightness_up", 3).mean() > images.mean() > corrupt(images, "brightness_down", 3).mean()


def test_black_corner_blackens_corners_only(test_images: dict[str, np.ndarray]) -> None:
    out = corrupt(test_images["derm"], "black_corner", 5)
    assert out[:, 0, 0].max() == 0 and out[:, -1, -1].max() == 0
    assert out[:, 16, 16].min() > 0


def test_contrast_shrinks_spread(test_images: dict[str, np.ndarray]) -> None:
    images = test_images["fundus"]
    assert corrupt(images, "contrast", 5).std() < corrupt(images, "contrast", 1).std() < images.std()


def test_empty_batch() -> None:
    empty = np.zeros((0, 32, 32, 3), dtype=np.uint8)
    assert corrupt(empty, "jpeg", 3).shape == (0, 32, 32, 3)


@settings(max_examples=25, deadline=None)
@given(
    family=st.sampled_from(all_families()),
    severity=st.sampled_from(SEVERITIES),
    n=st.integers(1, 3),
    side=st.sampled_from([16, 24, 33]),
    rgb=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_property_shape_and_dtype(family: str, severity: int, n: int, side: int, rgb: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (n, side, side, 3) if rgb else (n, side, side)
    images = rng.integers(0, 256, shape, dtype=np.uint8)
    out = corrupt(images, family, severity, seed=seed)
    assert out.shape == shape and out.dtype == np.uint8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("snow", 3), "unknown corruption"),
        (("jpeg", 0), "1..5"),
        (("jpeg", 6), "1..5"),
        (("jpeg", 2.0), "1..5"),
        (("jpeg", True), "1..5"),
    ],
)
def test_bad_family_or_severity(args: tuple, message: str) -> None:
    images = np.zeros((2, 32, 32), dtype=np.uint8)
    with pytest.raises(DataError, match=message):
        corrupt(images, *args)


def test_bad_images_and_domain() -> None:
    with pytest.raises(DataError, match="uint8"):
        corrupt(np.zeros((2, 32, 32), dtype=np.float32), "jpeg", 1)
    with pytest.raises(DataError, match=r"\(N, H, W\)"):
        corrupt(np.zeros((32, 32), dtype=np.uint8), "jpeg", 1)
    with pytest.raises(DataError, match="seed"):
        corrupt(np.zeros((1, 32, 32), dtype=np.uint8), "jpeg", 1, seed=-1)
    with pytest.raises(DataError, match="unknown domain"):
        corruption_families("cardiology")


@pytest.mark.parametrize("domain", list(SEVERITY_TABLE))
def test_every_family_declares_a_unique_image_block(domain):
    blocks = IMAGE_BLOCKS[domain]
    assert set(blocks) == set(SEVERITY_TABLE[domain])  # one declared index per family of the catalogue
    assert len(set(blocks.values())) == len(blocks), "two families of one catalogue share an image block"
    assert all(isinstance(k, int) and k >= 0 for k in blocks.values())


@pytest.mark.parametrize("domain", list(SEVERITY_TABLE))
@pytest.mark.parametrize("layout", CORRUPTION_LAYOUTS)
def test_inserting_a_family_moves_no_existing_familys_images(domain, layout):
    # A new family enters the catalogue in the middle, with a fresh block index.
    blocks = dict(IMAGE_BLOCKS[domain])
    families = list(blocks)
    inserted = {**{f: blocks[f] for f in families[:3]}, "new_family": max(blocks.values()) + 1,
                **{f: blocks[f] for f in families[3:]}}
    for family in families:
        for severity in SEVERITIES:
            before = first_image(layout, blocks[family], severity, 125, 2000)
            assert first_image(layout, inserted[family], severity, 125, 2000) == before
            assert image_block_index(domain, family) == blocks[family]


def test_first_image_refuses_an_unknown_layout_and_family():
    with pytest.raises(DataError, match="unknown corruption layout"):
        first_image("diagonal", 0, 1, 10, 100)
    with pytest.raises(DataError, match="not in the dermatology catalogue"):
        image_block_index("dermatology", "grid_lines")
