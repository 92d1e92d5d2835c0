"""Pretraining pools: the adapter to the cohort, content attributes, caching."""

from __future__ import annotations

import numpy as np

from crsbench_lib.encoders.recipes import BROAD_POOL, NARROW_DERM
from crsbench_lib.runner.pools import PoolCache, draw_from_folder, draw_pool


def test_content_attributes_leave_out_nuisances_site_and_labels() -> None:
    pool = draw_pool("derm", 8, all_sites=True, seed=1)
    names = set(pool.attributes)
    assert names and not names & {"exposure", "gamma", "noise", "blur", "vignette", "warmth", "site"}
    assert all(v.dtype in (np.float32, np.int64) and len(v) == 8 for v in pool.attributes.values())
    assert sorted(set(pool.site_ids.tolist())) == [0, 1, 2, 3]
    narrow = draw_pool("derm", 8, all_sites=False, seed=1)
    assert set(narrow.site_ids.tolist()) == {0}


def test_draw_pool_returns_images_attributes_sites_and_labels() -> None:
    pool = draw_pool("cxr", 20, all_sites=True, seed=3)
    assert pool.images.dtype == np.uint8 and len(pool) == 20
    assert len(pool.site_ids) == len(pool.labels) == 20
    assert all(len(v) == 20 for v in pool.attributes.values())
    again = draw_pool("cxr", 20, all_sites=True, seed=3)
    assert again.images.tobytes() == pool.images.tobytes()


def test_pool_cache_draws_each_pool_once() -> None:
    calls = []

    def fake(dataset: str, n: int, all_sites: bool, seed: int = 0, image_side: int = 32):  # type: ignore[no-untyped-def]
        calls.append((dataset, n, all_sites))
        return draw_pool(dataset, 4, all_sites, seed, image_side)

    cache = PoolCache(draw=fake, datasets=("derm", "cxr"))
    assert set(cache.get(BROAD_POOL)) == {"derm", "cxr"}
    cache.get(BROAD_POOL)
    assert set(cache.get(NARROW_DERM)) == {"derm"}
    assert calls == [("derm", 7000, True), ("cxr", 7000, True), ("derm", 4000, False)]


def test_stored_draws_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = PoolCache(datasets=("cxr",), draw=lambda d, n, a, seed=0, image_side=32: draw_pool(d, 6, a, seed, image_side))
    original = cache.get(BROAD_POOL)["cxr"]
    cache.store(tmp_path)
    again = draw_from_folder(str(tmp_path), "cxr", BROAD_POOL.n_per_dataset, True)
    assert again.images.tobytes() == original.images.tobytes() and again.labels.tobytes() == original.labels.tobytes()
    assert set(again.attributes) == set(original.attributes)
    assert all(np.array_equal(again.attributes[k], v) for k, v in original.attributes.items())
