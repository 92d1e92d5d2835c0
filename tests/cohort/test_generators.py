"""Tests of the phantom generators themselves: class signal, prevalence, co-occurrence, noise."""

from __future__ import annotations

import numpy as np
import pytest

from crsbench_lib.cohort import cxr, derm, fundus
from crsbench_lib.cohort.datasets import pretraining_pool


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.fixture(scope="module")
def derm_pool():
    return pretraining_pool("derm", 768, seed=11)


@pytest.fixture(scope="module")
def fundus_pool():
    return pretraining_pool("fundus", 768, seed=11)


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
    _, labels = fundus.generate(_rng(3), 1500, 16)
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
    images, labels = cxr.generate(_rng(5), 512, 32, "A")
    # The heart is bright in the lower middle of the lungs; cardiomegaly brightens the lower band.
    band = images[:, 18:26, 6:26].astype(np.float32).mean(axis=(1, 2))
    assert band[labels[:, 0] == 1].mean() > band[labels[:, 0] == 0].mean()


def test_label_noise_present_but_small() -> None:
    # The generator draws the true classes first; the same stream reproduces them.
    rng_a, rng_b = _rng(9), _rng(9)
    _, labels = derm.generate(rng_a, 2000, 16)
    truth = rng_b.choice(4, size=2000, p=derm.CLASS_PRIOR)
    mismatch = (labels != truth).mean()
    assert 0.01 < mismatch < 0.08


def test_generators_handle_other_sides() -> None:
    for module in (derm, fundus, cxr):
        images, _ = module.generate(_rng(0), 4, 64)
        assert images.shape[1:3] == (64, 64)
        images, _ = module.generate(_rng(0), 4, 16)
        assert images.shape[1:3] == (16, 16)
