"""Tests of the phantom generators themselves: class signal, prevalence, co-occurrence, attributes."""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.cohort import cxr, derm, fundus
from crsbench_lib.cohort.acquisition import nuisance_attributes
from crsbench_lib.cohort.datasets import pretraining_pool

MODULES = (derm, fundus, cxr)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.fixture(scope="module")
def derm_pool():
    return pretraining_pool("derm", 768, seed=11, sites=("A",))


@pytest.fixture(scope="module")
def fundus_pool():
    return pretraining_pool("fundus", 768, seed=11, sites=("A",))


def test_derm_class_prior_and_lesion_size(derm_pool) -> None:
    labels = derm_pool.labels
    freq = np.bincount(labels, minlength=4) / len(labels)
    assert np.allclose(freq, derm.CLASS_PRIOR, atol=0.06)
    # Lesions are darker than skin: count pixels well below the image's border brightness.
    grey = derm_pool.images.astype(np.float32).mean(axis=-1)
    border = np.concatenate([grey[:, :3, :].reshape(len(grey), -1), grey[:, -3:, :].reshape(len(grey), -1)], 1)
    dark = (grey < np.median(border, axis=1)[:, None, None] * 0.8).mean(axis=(1, 2))
    # Melanoma (1) is larger than naevus (0) on average: the size signal is real...
    assert dark[labels == 1].mean() > dark[labels == 0].mean() * 1.3
    # ...but imperfect: the distributions overlap.
    assert np.quantile(dark[labels == 1], 0.2) < np.quantile(dark[labels == 0], 0.8)


def test_derm_colour_variety_by_class(derm_pool) -> None:
    images, labels = derm_pool.images.astype(np.float32), derm_pool.labels
    centre = images[:, 10:22, 10:22].reshape(len(images), -1, 3)
    spread = centre.std(axis=1).mean(axis=1)
    assert spread[labels == 1].mean() > spread[labels == 0].mean()


def test_fundus_grade_prior_and_lesion_burden(fundus_pool) -> None:
    labels = fundus_pool.labels
    freq = np.bincount(labels, minlength=5) / len(labels)
    assert np.allclose(freq, fundus.CLASS_PRIOR, atol=0.05)
    img = fundus_pool.images.astype(np.float32)
    # Exudates: bright yellow pixels (red and green high, blue low relative to green).
    yellow = ((img[..., 0] > 200) & (img[..., 1] > 160) & (img[..., 2] < 0.75 * img[..., 1])).sum(axis=(1, 2))
    means = [yellow[labels == g].mean() for g in range(5)]
    assert means[0] < means[2] < means[3]


def test_fundus_label_noise_is_ordinal() -> None:
    # The generator draws the true grades first; the same stream reproduces them.
    labels = fundus.generate(_rng(3), 1500, 16).labels
    truth = _rng(3).choice(5, size=1500, p=fundus.CLASS_PRIOR)
    assert np.abs(labels - truth).max() == 1  # grader noise moves one grade, never more
    assert 0.02 < (labels != truth).mean() < 0.1


def test_cxr_prevalence_and_cooccurrence() -> None:
    for site in ("A", "B"):
        labels = cxr.draw_labels(_rng(1), 20000, site)
        assert np.allclose(labels.mean(axis=0), cxr.PREVALENCE[site], atol=0.015)
    labels = cxr.draw_labels(_rng(2), 20000, "A")
    corr = np.corrcoef(labels.T)
    assert corr[0, 1] > 0.2  # cardiomegaly with effusion
    assert corr[1, 3] > 0.1  # effusion with consolidation
    assert abs(corr[0, 2]) < 0.05  # nodule independent of cardiomegaly
    # Co-occurrence without determinism: every finding also occurs alone.
    for k in range(4):
        alone = (labels[:, k] == 1) & (labels.sum(axis=1) == 1)
        assert alone.any()


def test_cxr_site_b_prevalence_differs() -> None:
    a = cxr.draw_labels(_rng(0), 5000, "A").mean(axis=0)
    b = cxr.draw_labels(_rng(0), 5000, "B").mean(axis=0)
    assert not np.allclose(a, b, atol=0.03)


def test_cxr_cardiomegaly_widens_the_heart() -> None:
    out = cxr.generate(_rng(5), 512, 32, "A")
    truth = out.attributes["heart_size"]
    # The drawn cardiothoracic ratio separates the classes, with overlap (the 0.5 threshold is crossed both ways).
    assert truth[out.labels[:, 0] == 1].mean() > truth[out.labels[:, 0] == 0].mean() + 0.05
    assert (truth[out.labels[:, 0] == 0] > 0.5).any() and (truth[out.labels[:, 0] == 1] < 0.5).any()


def test_label_noise_present_but_small() -> None:
    # The generator draws the true classes first; the same stream reproduces them.
    rng_a, rng_b = _rng(9), _rng(9)
    labels = derm.generate(rng_a, 2000, 16).labels
    truth = rng_b.choice(4, size=2000, p=derm.CLASS_PRIOR)
    mismatch = (labels != truth).mean()
    assert 0.01 < mismatch < 0.08


def test_generators_handle_other_sides() -> None:
    for module in MODULES:
        assert module.generate(_rng(0), 4, 64).images.shape[1:3] == (64, 64)
        assert module.generate(_rng(0), 4, 16).images.shape[1:3] == (16, 16)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.NAME)
def test_attributes_match_their_specification(module) -> None:
    out = module.generate(_rng(4), 200, 32, module.POOL_SITES[0])
    assert list(out.attributes) == list(module.ATTRIBUTES)
    assert set(nuisance_attributes(rgb=module is not cxr)) <= set(module.ATTRIBUTES)
    for name, spec in module.ATTRIBUTES.items():
        values = out.attributes[name]
        assert values.shape == (200,), name
        assert np.isfinite(values).all(), name
        if spec.kind == "continuous":
            assert values.dtype == np.float32 and values.std() > 0, name
        else:
            assert values.dtype == np.int64 and values.min() >= 0, name
        if spec.kind == "binary":
            assert set(np.unique(values)) <= {0, 1}, name
        if spec.kind == "categorical":
            assert values.max() < spec.n_classes, name


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.NAME)
def test_every_site_renders_and_acquisition_varies_image_to_image(module) -> None:
    for site in module.SCANNERS:
        out = module.generate(_rng(6), 64, 32, site)
        for name in ("exposure", "gamma", "noise", "blur"):
            assert out.attributes[name].std() > 0, (site, name)
    assert set(module.SITES) <= set(module.SCANNERS) and set(module.POOL_SITES) <= set(module.SCANNERS)


def test_derm_structures_follow_the_class() -> None:
    out = derm.generate(_rng(8), 3000, 16)
    truth = _rng(8).choice(4, size=3000, p=derm.CLASS_PRIOR)
    for k, name in enumerate(derm.STRUCTURES):
        observed = [out.attributes[name][truth == c].mean() for c in range(4)]
        assert np.allclose(observed, derm.STRUCTURE_PROB[:, k], atol=0.06), name
    # Melanomas are more irregular than naevi, with overlap.
    irr = out.attributes["border_irregularity"]
    assert irr[truth == 1].mean() > 2 * irr[truth == 0].mean()
    assert np.quantile(irr[truth == 1], 0.2) < np.quantile(irr[truth == 0], 0.8)


def test_fundus_lesion_counts_rise_with_grade() -> None:
    out = fundus.generate(_rng(2), 3000, 16)
    truth = _rng(2).choice(5, size=3000, p=fundus.CLASS_PRIOR)
    haem = [out.attributes["haemorrhages_count"][truth == g].mean() for g in range(5)]
    assert haem[0] < haem[1] < haem[2] < haem[3]
    # Look-alikes do not depend on the grade.
    drusen = [out.attributes["drusen_count"][truth == g].mean() for g in (0, 3)]
    assert abs(drusen[0] - drusen[1]) < 0.5
