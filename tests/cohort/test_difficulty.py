"""Neither trivial nor hopeless: a plain pixel probe on a small cohort (issue 4, "Must show").

A probe on standardised pixels (L2 logistic regression) trained on clean site-A
images must reach a clean macro-AUROC between 0.6 and 0.95 on every dataset;
site B must lower it; severity 5 must lower it more than severity 1 for every
corruption family on average over the datasets it applies to.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from crsbench_lib.cohort import PHANTOM_DATASETS, build_dataset, corrupt, corruption_families
from crsbench_lib.cohort.difficulty import PixelProbe

SIZES = {"train": 1200, "val": 8, "test": 600}
N_CORRUPTED = 500


@pytest.fixture(scope="module")
def probe_results() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for name in PHANTOM_DATASETS:
        ds = build_dataset(name, seed=0, sizes=SIZES)
        train, test = ds.split("train"), ds.split("test")
        probe = PixelProbe(ds.task).fit(train.images, train.labels)
        res: dict = {"clean": probe.auroc(test.images, test.labels), "corrupted": {}}
        sub_x, sub_y = test.images[:N_CORRUPTED], test.labels[:N_CORRUPTED]
        res["clean_sub"] = probe.auroc(sub_x, sub_y)
        for family in corruption_families(ds.domain):
            res["corrupted"][family] = {s: probe.auroc(corrupt(sub_x, family, s), sub_y) for s in (1, 5)}
        if ds.shift_site:
            shift = ds.split("test", ds.shift_site)
            res["shift"] = probe.auroc(shift.images, shift.labels)
        out[name] = res
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", PHANTOM_DATASETS)
def test_clean_auroc_neither_trivial_nor_hopeless(name: str, probe_results: dict) -> None:
    assert 0.6 < probe_results[name]["clean"] < 0.95, probe_results[name]["clean"]


@pytest.mark.slow
def test_site_b_lowers_auroc(probe_results: dict) -> None:
    cxr = probe_results["cxr"]
    assert cxr["shift"] < cxr["clean"] - 0.03, (cxr["shift"], cxr["clean"])


@pytest.mark.slow
def test_severity_five_hurts_more_than_one_for_every_family(probe_results: dict) -> None:
    drops: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for res in probe_results.values():
        for family, by_sev in res["corrupted"].items():
            drops[family].append((res["clean_sub"] - by_sev[1], res["clean_sub"] - by_sev[5]))
    for family, pairs in drops.items():
        mild, severe = np.mean(pairs, axis=0)
        assert severe > mild, f"{family}: severity-5 drop {severe:.3f} <= severity-1 drop {mild:.3f}"
        assert severe > 0.0, f"{family}: severity 5 does not lower AUROC"


def test_pixel_probe_learns_a_planted_signal() -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    images = rng.integers(0, 60, (200, 16, 16), dtype=np.uint8)
    images[labels == 1, :4, :4] += 150
    probe = PixelProbe("multiclass").fit(images[:100], labels[:100])
    assert probe.auroc(images[100:], labels[100:]) > 0.95
    assert probe.scores(images[100:]).shape == (100, 2)
