"""World v4's mechanisms: the shortcut cue and the parts of site B, each with a switch.

Each switch must change what it says and nothing else: a cue off gives the
same images but for the cue; a site part off takes site A's value for that
part and leaves the others.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.cohort import SHIFT_PARTS, build_dataset, pretraining_pool, shortcut_cue
from crsbench_lib.cohort.acquisition import NUISANCE_ATTRIBUTES, grain, resample_detector
from crsbench_lib.cohort.datasets import CUE_REMOVED_SITE, PHANTOM_DATASETS, generator_module
from crsbench_lib.cohort.shortcuts import ShortcutCue, check_shift_parts
from crsbench_lib.errors import DataError

N = 128


def _draw(name: str, site: str = "A", seed: int = 3, **switches: object):
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    return generator_module(name).generate(rng, N, 32, site, **switches)


def _content(name: str, attributes: dict) -> dict:
    cue = shortcut_cue(name).name
    return {k: v for k, v in attributes.items() if k not in NUISANCE_ATTRIBUTES and k != cue}


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_a_cue_off_gives_the_same_images_but_for_the_cue(name: str) -> None:
    on, off = _draw(name), _draw(name, cue=False)
    cue = shortcut_cue(name).name
    carried = on.attributes[cue].astype(bool)
    assert carried.any() and not off.attributes[cue].any()
    np.testing.assert_array_equal(on.labels, off.labels)
    for key, value in on.attributes.items():
        if key != cue:
            np.testing.assert_array_equal(value, off.attributes[key], err_msg=key)
    changed = (on.images != off.images).reshape(N, -1).any(axis=1)
    # Only images that carry the cue differ, and each of them does.
    assert not changed[~carried].any()
    assert changed[carried].all()


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_the_cue_travels_with_the_label_at_site_a_and_not_at_site_b(name: str) -> None:
    cue = shortcut_cue(name)
    assert cue.odds_ratio("A") > 3.0
    assert cue.odds_ratio("B") == 1.0 or np.isnan(cue.odds_ratio("B"))
    assert set(cue.rates) >= {"A", "B", *generator_module(name).POOL_SITES}


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_the_cue_removed_site_is_the_test_split_without_the_cue(name: str) -> None:
    ds = build_dataset(name, sizes={"train": 8, "val": 8, "test": 256, "shift_test": 8})
    test, removed = ds.split("test"), ds.split("test", CUE_REMOVED_SITE)
    np.testing.assert_array_equal(test.labels, removed.labels)
    assert (test.images != removed.images).any()
    assert ds.ablation_sites == (CUE_REMOVED_SITE,)
    without = build_dataset(name, sizes={"train": 8, "val": 8, "test": 256, "shift_test": 8}, cues=False)
    assert without.ablation_sites == ()
    np.testing.assert_array_equal(without.split("test").images, removed.images)
    assert without.version != ds.version


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_acquisition_alone_changes_the_pixels_and_not_the_patients_or_labels(name: str) -> None:
    a = _draw(name, "A", cue=False)
    b = _draw(name, "B", cue=False, shift_parts=("acquisition",))
    np.testing.assert_array_equal(a.labels, b.labels)
    for key, value in _content(name, a.attributes).items():
        np.testing.assert_array_equal(value, b.attributes[key], err_msg=key)
    assert (a.images != b.images).mean() > 0.3


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_labelling_alone_changes_only_labels(name: str) -> None:
    a = _draw(name, "A", cue=False, seed=11)
    b = _draw(name, "B", cue=False, seed=11, shift_parts=("labelling",))
    np.testing.assert_array_equal(a.images, b.images)
    assert (np.asarray(a.labels) != np.asarray(b.labels)).any()


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_no_part_makes_site_b_site_a_on_the_same_stream(name: str) -> None:
    a = _draw(name, "A", cue=False)
    b = _draw(name, "B", cue=False, shift_parts=())
    np.testing.assert_array_equal(a.images, b.images)
    np.testing.assert_array_equal(a.labels, b.labels)


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_population_alone_keeps_site_a_scanner(name: str) -> None:
    # The same scanner draws its nuisances from the same distribution: the exposure's
    # spread is site A's, while the class mix is site B's.
    module = generator_module(name)
    many = 2048
    rng_a = np.random.Generator(np.random.PCG64(1))
    rng_b = np.random.Generator(np.random.PCG64(2))
    a = module.generate(rng_a, many, 16, "A", cue=False)
    b = module.generate(rng_b, many, 16, "B", cue=False, shift_parts=("population",))
    assert abs(a.attributes["exposure"].std() - b.attributes["exposure"].std()) < 0.03
    assert abs(a.attributes["exposure"].mean() - b.attributes["exposure"].mean()) < 0.03


def test_shift_parts_are_checked() -> None:
    assert check_shift_parts(None) == SHIFT_PARTS == ("acquisition", "population", "labelling", "cue")
    assert check_shift_parts([]) == ()
    with pytest.raises(DataError, match="unknown part 'scanner'"):
        check_shift_parts(["scanner"])
    with pytest.raises(DataError, match="unknown part"):
        build_dataset("cxr", shift_parts=["population", "lighting"])


@given(st.lists(st.sampled_from(SHIFT_PARTS), unique=True), st.booleans())
@settings(max_examples=30, deadline=None)
def test_every_switch_setting_has_its_own_version(parts: list[str], cues: bool) -> None:
    from crsbench_lib.cohort.datasets import dataset_version

    version = dataset_version("derm", 0, {}, 32, parts, cues)
    same = dataset_version("derm", 0, {}, 32, list(reversed(parts)), cues)
    assert version == same
    assert (version == dataset_version("derm", 0, {}, 32)) == (set(parts) == set(SHIFT_PARTS) and cues)


def test_odds_ratio_of_a_stated_cue() -> None:
    cue = ShortcutCue("c", "", "", {"A": (0.5, 0.2), "B": (0.3, 0.3), "P": (0.0, 0.0)}, "")
    assert cue.odds_ratio("A") == pytest.approx(4.0)
    assert cue.odds_ratio("B") == 1.0
    assert np.isnan(cue.odds_ratio("P"))
    np.testing.assert_array_equal(cue.probability("A", np.array([True, False])), [0.5, 0.2])


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_pools_hold_the_cue_and_its_targets_leave_it_out(name: str) -> None:
    from crsbench_lib.runner.pools import content_attributes

    pool = pretraining_pool(name, 512)
    cue = shortcut_cue(name).name
    assert pool.attributes[cue].any()
    assert cue not in content_attributes(name, pool.attributes)
    narrow = pretraining_pool(name, 512, sites=("A",))
    # A specialist's single-site pool carries the cue at site A's rates.
    assert narrow.attributes[cue].mean() > 0.1


def test_detector_resampling_keeps_the_mean_and_loses_detail() -> None:
    rng = np.random.default_rng(0)
    fine = rng.uniform(size=(4, 32, 32)).astype(np.float32)
    coarse = resample_detector(fine, 0.6)
    assert coarse.shape == fine.shape
    assert abs(coarse.mean() - fine.mean()) < 0.01
    assert coarse.std() < 0.7 * fine.std()
    rgb = rng.uniform(size=(2, 32, 32, 3)).astype(np.float32)
    assert resample_detector(rgb, 0.7).shape == rgb.shape


def test_grain_correlates_neighbouring_pixels_at_the_same_sd() -> None:
    white = np.random.default_rng(0).standard_normal((8, 32, 32)).astype(np.float32)
    grainy = grain(white, 0.8)
    assert grainy.std() == pytest.approx(1.0, abs=1e-3)
    lag = lambda z: float(np.corrcoef(z[:, :, :-1].ravel(), z[:, :, 1:].ravel())[0, 1])  # noqa: E731
    assert abs(lag(white)) < 0.05 and lag(grainy) > 0.4


@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_the_cue_part_alone_changes_only_the_cue_at_site_b(name: str) -> None:
    # With every other part off, site B is site A's process on the same stream: the cue part
    # moves only which images carry the cue (site B's rates instead of site A's).
    a = _draw(name, "B", seed=5, shift_parts=())
    b = _draw(name, "B", seed=5, shift_parts=("cue",))
    cue = shortcut_cue(name).name
    np.testing.assert_array_equal(a.labels, b.labels)
    for key, value in a.attributes.items():
        if key != cue:
            np.testing.assert_array_equal(value, b.attributes[key], err_msg=key)
    carried = a.attributes[cue].astype(bool) | b.attributes[cue].astype(bool)
    changed = (a.images != b.images).reshape(N, -1).any(axis=1)
    assert not changed[~carried].any()
    # Without the part, site B carries the cue at site A's rates: it still travels with the label.
    site_a = _draw(name, "A", seed=5)
    np.testing.assert_array_equal(a.attributes[cue], site_a.attributes[cue])


def test_the_report_labeller_misses_more_findings_than_it_invents() -> None:
    from crsbench_lib.cohort import cxr

    false_pos, false_neg = cxr.SITE_LABEL_ERRORS["B"]
    assert false_neg > false_pos
    rng_a, rng_b = (np.random.Generator(np.random.PCG64(9)) for _ in range(2))
    a = cxr.generate(rng_a, 4096, 16, "B", shift_parts=("population",), cue=False)
    b = cxr.generate(rng_b, 4096, 16, "B", shift_parts=("population", "labelling"), cue=False)
    true_like = a.labels  # 2 % either way
    lost = ((true_like == 1) & (b.labels == 0)).sum() / max((true_like == 1).sum(), 1)
    added = ((true_like == 0) & (b.labels == 1)).sum() / max((true_like == 0).sum(), 1)
    assert lost > 2 * added
