"""Tests of the ultrasound, pathology, microscopy, CT and OCT catalogues: each new family's contract and physics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.cohort import CORRUPTION_DOMAINS, corrupt, corruption_families
from crsbench_lib.cohort.corruption_modalities import MODALITY_IMPLEMENTATIONS, MODALITY_TABLES
from crsbench_lib.cohort.corruptions import _IMPLEMENTATIONS, IMAGE_BLOCKS, SEVERITY_TABLE, severity_parameters
from crsbench_lib.results.schema import SEVERITIES
from tests.cohort.modality_images import MODALITY_IMAGES

NEW_DOMAINS = ("ultrasound", "pathology", "microscopy", "ct", "oct")
NEW_FAMILIES = tuple(MODALITY_IMPLEMENTATIONS)
# Images of each modality the catalogue's families are checked on.
CASES = [(name, domain, family) for name, (domain, _) in MODALITY_IMAGES.items() for family in corruption_families(domain)]


def images(name: str, side: int = 28, n: int = 6) -> np.ndarray:
    return MODALITY_IMAGES[name][1](n=n, side=side)


def native(family: str) -> tuple[str, np.ndarray]:
    """A new family's first domain and an image batch of it."""
    domain = next(d for d in NEW_DOMAINS if family in SEVERITY_TABLE[d])
    name = next(n for n, (d, _) in MODALITY_IMAGES.items() if d == domain)
    return domain, images(name)


def test_the_five_catalogues_are_wired_into_the_one_table() -> None:
    assert CORRUPTION_DOMAINS[:3] == ("dermatology", "ophthalmology", "radiology")
    assert set(NEW_DOMAINS) <= set(CORRUPTION_DOMAINS)
    for domain in NEW_DOMAINS:
        assert SEVERITY_TABLE[domain] is MODALITY_TABLES[domain]
        assert corruption_families(domain) == tuple(MODALITY_TABLES[domain])
        assert len(corruption_families(domain)) >= 6
        assert set(IMAGE_BLOCKS[domain]) == set(SEVERITY_TABLE[domain])
    for family in NEW_FAMILIES:
        assert _IMPLEMENTATIONS[family] is MODALITY_IMPLEMENTATIONS[family]


def test_modality_artefacts() -> None:
    assert {"speckle", "depth_attenuation", "acoustic_shadow", "dynamic_range"} <= set(corruption_families("ultrasound"))
    assert {"stain_variation", "saturation", "bubbles", "tissue_fold", "stain_deposit"} <= set(
        corruption_families("pathology"))
    assert {"uneven_illumination", "stain_variation", "gaussian_noise"} <= set(corruption_families("microscopy"))
    assert {"low_dose_noise", "window_level", "window_width", "streaks"} <= set(corruption_families("ct"))
    assert {"speckle", "axial_motion", "depth_attenuation"} <= set(corruption_families("oct"))
    # Chest-film artefacts are not ultrasound's, nor camera artefacts CT's.
    assert not {"grid_lines", "burned_markers"} & set(corruption_families("ultrasound"))
    assert not {"gamma", "black_corner"} & set(corruption_families("ct"))


@pytest.mark.parametrize(("name", "domain", "family"), CASES)
@pytest.mark.parametrize("side", [28, 64])
def test_shape_determinism_and_severity_order(name: str, domain: str, family: str, side: int) -> None:
    batch = images(name, side)
    clean = batch.astype(np.float64)
    distances = []
    for severity in SEVERITIES:
        out = corrupt(batch, family, severity, seed=1, domain=domain)
        assert out.dtype == np.uint8 and out.shape == batch.shape
        assert np.array_equal(out, corrupt(batch, family, severity, seed=1, domain=domain))
        distances.append(np.abs(out.astype(np.float64) - clean).mean())
    assert distances[0] > 0, f"{family} severity 1 leaves the {name} images unchanged"
    # Monotone: each severity moves the fixed batch further from the clean images.
    assert all(b > a for a, b in zip(distances, distances[1:])), (family, distances)


@pytest.mark.parametrize("family", NEW_FAMILIES)
@pytest.mark.parametrize("rgb", [False, True])
def test_implementation_returns_a_float_image_of_the_input_shape(family: str, rgb: bool) -> None:
    domain, batch = native(family)
    x = batch.astype(np.float32) / 255.0
    if rgb and x.ndim == 3:
        x = np.repeat(x[..., None], 3, axis=-1)
    elif not rgb and x.ndim == 4:
        x = x.mean(axis=-1)
    out = MODALITY_IMPLEMENTATIONS[family](x, severity_parameters(domain, family, 3), np.random.default_rng(0))
    assert out.shape == x.shape and np.issubdtype(out.dtype, np.floating) and np.isfinite(out).all()
    # In [0, 1] once clipped (corrupt clips and rounds), and not far outside before it.
    assert out.min() > -1.0 and out.max() < 2.0


@pytest.mark.parametrize("family", [f for f in NEW_FAMILIES if f not in ("depth_attenuation", "dynamic_range")])
def test_random_families_depend_on_the_seed(family: str) -> None:
    domain, batch = native(family)
    assert not np.array_equal(corrupt(batch, family, 4, seed=0, domain=domain),
                              corrupt(batch, family, 4, seed=1, domain=domain))


def test_input_is_not_modified() -> None:
    for name, (domain, make) in MODALITY_IMAGES.items():
        batch = make()
        for family in corruption_families(domain):
            corrupt(batch, family, 5, domain=domain)
        assert np.array_equal(batch, make()), name


def test_new_family_without_domain_uses_its_first_catalogue() -> None:
    batch = images("ultrasound")
    assert np.array_equal(corrupt(batch, "speckle", 3, seed=2), corrupt(batch, "speckle", 3, seed=2, domain="ultrasound"))


# --- physics ---------------------------------------------------------------------------------


def test_depth_attenuation_grows_with_depth() -> None:
    batch = np.full((2, 32, 32), 200, np.uint8)
    for domain in ("ultrasound", "oct"):
        loss = batch.astype(float) - corrupt(batch, "depth_attenuation", 4, domain=domain)
        rows = loss.mean(axis=(0, 2))
        assert rows[0] < 3 and np.all(np.diff(rows) >= 0) and rows[-1] > 30
    # 24 dB at the bottom on a 60 dB display: 40 % of the grey scale (the last row's centre: 31.5 / 32 of it).
    deepest = 200 - int(corrupt(batch, "depth_attenuation", 5, domain="ultrasound")[0, -1, 0])
    assert deepest == pytest.approx(255 * 24 / 60 * 31.5 / 32, abs=1)


def test_speckle_keeps_the_mean_and_grows_the_spread() -> None:
    batch = np.full((8, 32, 32), 100, np.uint8)
    for severity in (1, 5):
        out = corrupt(batch, "speckle", severity, seed=3, domain="ultrasound").astype(float)
        assert abs(out.mean() - 100) < 2
    cv = [corrupt(batch, "speckle", s, seed=3, domain="ultrasound").std() / 100 for s in (1, 5)]
    assert cv[0] == pytest.approx(0.1, abs=0.02) and cv[1] == pytest.approx(0.5, abs=0.06)


def test_acoustic_shadow_is_a_dark_band_below_a_point() -> None:
    batch = np.full((6, 32, 32), 150, np.uint8)
    out = corrupt(batch, "acoustic_shadow", 5, seed=4, domain="ultrasound").astype(float)
    assert (out <= 150).all()
    dark = out < 100
    for image in dark:
        cols = np.flatnonzero(image.any(axis=0))
        assert 0 < len(cols) <= 10  # a band, not the image
        assert image[-1, cols].all()  # reaching the bottom
        first = image[:, cols].argmax(axis=0)
        assert first.min() > 0 or image[0, cols].any()


def test_dynamic_range_lifts_the_greys_and_keeps_white() -> None:
    batch = np.array([[[0, 64, 128, 255]]], np.uint8).repeat(4, axis=1)
    out = corrupt(batch, "dynamic_range", 5, domain="ultrasound")
    assert out[0, 0, 3] == 255 and (out[0, 0, :3] > batch[0, 0, :3]).all()
    # A 60 dB image shown over 105 dB: black becomes 1 - 60/105 of the scale.
    assert out[0, 0, 0] == round(255 * (1 - 60 / 105))


def test_axial_motion_moves_along_depth_only() -> None:
    columns = np.tile(np.linspace(0, 255, 32).astype(np.uint8), (3, 32, 1))  # constant down every column
    assert np.array_equal(corrupt(columns, "axial_motion", 5, seed=1, domain="oct"), columns)
    rows = np.transpose(columns, (0, 2, 1)).copy()  # layers: constant along every row
    out = corrupt(rows, "axial_motion", 5, seed=1, domain="oct")
    assert not np.array_equal(out, rows)
    # Each column is its own depth shift of the layers: still increasing with depth.
    assert (np.diff(out.astype(int), axis=1) >= 0).all()


def test_low_dose_noise_sd_follows_the_dose() -> None:
    batch = np.full((16, 64, 64), 128, np.uint8)
    sds = [(corrupt(batch, "low_dose_noise", s, seed=5, domain="ct").astype(float) - 128).std() for s in (1, 5)]
    params = [severity_parameters("ct", "low_dose_noise", s) for s in (1, 5)]
    expected = [255 * p["sd_full_hu"] * np.sqrt(1 / p["dose_fraction"] - 1) / p["window_hu"] for p in params]
    assert sds[0] == pytest.approx(expected[0], rel=0.1) and sds[1] == pytest.approx(expected[1], rel=0.1)


@pytest.mark.parametrize("family", ["low_dose_noise", "window_level", "window_width", "streaks"])
def test_ct_families_leave_air_and_bone_saturated(family: str) -> None:
    batch = images("ct_slice")
    out = corrupt(batch, family, 5, seed=2, domain="ct")
    assert (out[batch == 0] == 0).all() and (out[batch == 255] == 255).all()


def test_window_width_and_level_move_each_image_one_way() -> None:
    batch = np.tile(np.linspace(30, 225, 32).astype(np.uint8), (8, 32, 1))
    level = corrupt(batch, "window_level", 3, seed=1, domain="ct").astype(int) - batch
    assert {int(np.sign(v)) for v in level.mean(axis=(1, 2))} == {-1, 1}
    assert np.abs(level).max() == round(255 * 60 / 400)
    narrow = np.tile(np.linspace(100, 155, 32).astype(np.uint8), (8, 32, 1))  # inside even a 2.1-fold narrower window
    width = corrupt(narrow, "window_width", 5, seed=1, domain="ct").astype(float)
    spread = width.std(axis=(1, 2)) / narrow.std(axis=(1, 2))
    assert set(np.round(spread, 1)) == {round(1 / 2.1, 1), 2.1}


def test_stain_variation_keeps_the_slide_white_and_the_grey_dark() -> None:
    batch = images("he_patch")
    white = (batch == 255).all(axis=-1)
    assert white.any()
    out = corrupt(batch, "stain_variation", 5, seed=2, domain="pathology")
    assert (out[white] == 255).all() and not np.array_equal(out, batch)
    grey = images("fluorescence")
    out = corrupt(grey, "stain_variation", 5, seed=2, domain="microscopy")
    assert (out[grey == 0] == 0).all()  # fluorescence: no dye, no light, whatever the amount


def test_saturation_changes_chroma_not_luminance_and_leaves_grey() -> None:
    batch = images("he_patch")
    out = corrupt(batch, "saturation", 3, seed=0, domain="pathology").astype(float)
    luma = np.array([0.299, 0.587, 0.114])
    assert np.abs(out @ luma - batch.astype(float) @ luma).mean() < 2.5
    grey = images("ultrasound")
    assert np.array_equal(corrupt(grey, "saturation", 5, domain="pathology"), grey)


def test_tissue_fold_darkens_tissue_only() -> None:
    batch = images("he_patch")
    out = corrupt(batch, "tissue_fold", 5, seed=1, domain="pathology")
    assert (out.astype(int) <= batch.astype(int) + 1).all()
    white = (batch == 255).all(axis=-1)
    assert (out[white] == 255).all()


def test_bubbles_and_deposits_add_to_weaker_severities() -> None:
    batch = images("he_patch")
    for family, domain in (("bubbles", "pathology"), ("stain_deposit", "pathology"), ("streaks", "ct")):
        batch_ = images("ct_slice") if domain == "ct" else batch
        changed = [corrupt(batch_, family, s, seed=6, domain=domain) != batch_ for s in SEVERITIES]
        touched = [c.any(axis=-1) if c.ndim == 4 else c for c in changed]
        # Every pixel a weaker severity touches, a stronger one touches too (same draws, used in part).
        assert all((a <= b).mean() > 0.98 for a, b in zip(touched, touched[1:])), family


# --- invariants, on arbitrary images ---------------------------------------------------------

DARKENING = [("ultrasound", "depth_attenuation"), ("ultrasound", "acoustic_shadow"), ("oct", "depth_attenuation"),
             ("pathology", "tissue_fold")]
SATURATION_KEEPING = ["low_dose_noise", "window_level", "window_width", "streaks"]


@settings(max_examples=30, deadline=None)
@given(
    case=st.sampled_from([(d, f) for d in NEW_DOMAINS for f in SEVERITY_TABLE[d]]),
    severity=st.sampled_from(SEVERITIES),
    n=st.integers(1, 3),
    side=st.sampled_from([16, 28, 33, 64]),
    rgb=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_property_contract(case: tuple[str, str], severity: int, n: int, side: int, rgb: bool, seed: int) -> None:
    domain, family = case
    rng = np.random.default_rng(seed)
    shape = (n, side, side, 3) if rgb else (n, side, side)
    batch = rng.integers(0, 256, shape, dtype=np.uint8)
    out = corrupt(batch, family, severity, seed=seed % 1000, domain=domain)
    assert out.shape == shape and out.dtype == np.uint8
    assert np.array_equal(out, corrupt(batch, family, severity, seed=seed % 1000, domain=domain))
    if (domain, family) in DARKENING:
        assert (out.astype(int) <= batch.astype(int) + 1).all()
    if family == "dynamic_range":
        assert (out.astype(int) >= batch.astype(int) - 1).all()
    if family in SATURATION_KEEPING:
        assert (out[batch == 0] == 0).all() and (out[batch == 255] == 255).all()
    if family == "axial_motion":
        flat = np.broadcast_to(batch[:, :1], shape).copy()  # constant along depth
        assert np.array_equal(corrupt(flat, family, severity, seed=seed % 1000, domain=domain), flat)


def test_counts_stay_within_the_draws() -> None:
    from crsbench_lib.cohort import corruption_modalities as m

    drawn = {"streaks": m._MAX_STREAKS, "bubbles": m._MAX_BUBBLES, "stain_deposit": m._MAX_DEPOSITS}
    for domain in NEW_DOMAINS:
        for family, most in drawn.items():
            if family in SEVERITY_TABLE[domain]:
                assert max(SEVERITY_TABLE[domain][family]["count"]) <= most, (domain, family)
