"""The simulation side of the self-audit (runner.coverage): design, draws, and a tiny end-to-end audit."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import ConfigError
from crsbench_lib.results.io import read_results
from crsbench_lib.results.predictions import read_predictions
from crsbench_lib.runner.config import load_profile
from crsbench_lib.runner.coverage import (
    AUDIT_DATA_SEED,
    audit_root,
    condition_blocks,
    design_from_profile,
    replicate_draw,
    run_audit,
    truth_draw,
)


@pytest.fixture(scope="module")
def profile():
    return load_profile("default")


@pytest.fixture(scope="module")
def design(profile):
    return design_from_profile(profile, n_replicates=3)


def test_design_takes_the_profiles_protocol(profile, design):
    spec = next(s for s in profile.datasets if s.name == "derm")
    assert (design.train, design.val, design.test) == tuple(spec.options["sizes"][k] for k in ("train", "val", "test"))
    assert design.seeds == profile.seeds and design.severities == profile.corruptions.severities
    assert design.n_per_condition == profile.corruptions.n_images and design.layout == profile.corruptions.layout
    assert design.label_fractions == profile.label_fractions and design.ece_bins == profile.ece_bins
    assert design.probe["calibrators"] == [] and design.probe["C"] == list(profile.probe.c_grid)
    # The audit's images come from a data seed no profile uses.
    assert design.data_seed == AUDIT_DATA_SEED != spec.options["data_seed"]


@pytest.mark.parametrize(("change", "message"), [
    ({"encoders": ("pixels",)}, "two distinct encoders"),
    ({"families": ()}, "corruption family"),
    ({"n_replicates": 0}, "n_replicates"),
    ({"pool_train": 3000}, "development pool"),
    ({"n_per_condition": 300}, "not a multiple"),
    ({"layout": "shared"}, "per_condition"),
])
def test_invalid_designs_are_refused(design, change, message):
    with pytest.raises(ConfigError, match=message):
        dataclasses.replace(design, **change)
    with pytest.raises(ConfigError, match="not a phantom dataset"):
        design_from_profile(load_profile("default"), dataset="nope")


def test_each_condition_has_its_own_block(design):
    blocks = condition_blocks(design, "dermatology")
    assert len(blocks) == 10 and len(set(blocks.values())) == 10
    assert all(0 <= b < design.n_blocks for b in blocks.values())


def test_a_replicate_is_disjoint_within_and_deterministic(design):
    blocks = condition_blocks(design, "dermatology")
    a, b = replicate_draw(design, 4, blocks), replicate_draw(design, 4, blocks)
    for x, y in zip(a.train + a.val + (a.test,), b.train + b.val + (b.test,), strict=True):
        np.testing.assert_array_equal(x, y)
    train = np.concatenate(a.train)
    assert train.size == len(np.unique(train)) == 3 * design.train and train.max() < design.pool_train
    assert len(np.unique(np.concatenate(a.val))) == 3 * design.val
    # The test set never touches the truth's images, and block j comes from pool part j.
    assert len(np.unique(a.test)) == design.test and a.test.min() >= design.truth_test
    part = (a.test - design.truth_test) // design.block_pool
    np.testing.assert_array_equal(part, np.repeat(np.arange(design.n_blocks), design.n_per_condition))
    # A condition's corrupted rows are the corrupted versions of exactly its block's test images.
    for condition, (positions, rows) in a.corrupted.items():
        np.testing.assert_array_equal(a.test[positions], design.truth_test + blocks[condition] * design.block_pool + rows)
    other = replicate_draw(design, 5, blocks)
    assert not np.array_equal(other.test, a.test)


def test_truth_draws_stay_in_the_pool_and_use_the_truth_set(design):
    draw = truth_draw(design, 2)
    assert draw.train[0].size == design.train and draw.train[0].max() < design.pool_train
    assert draw.test.size == design.truth_test and draw.test.max() < design.truth_test
    assert all(rows.size == design.truth_corrupted for _, rows in draw.corrupted.values())
    assert not np.array_equal(truth_draw(design, 3).train[0], draw.train[0])


def test_the_site_term_draws_site_b_images_and_leaves_site_a_alone(design):
    blocks = condition_blocks(design, "dermatology")
    with_site, without = replicate_draw(design, 4, blocks), replicate_draw(
        dataclasses.replace(design, site_term=False), 4, blocks)
    assert without.shift is None and design.site_term
    # Site B: the design's test size, distinct, outside the truth's site-B images and inside the pool.
    assert with_site.shift.size == len(np.unique(with_site.shift)) == design.test
    assert with_site.shift.min() >= design.truth_test
    assert with_site.shift.max() < design.truth_test + design.n_blocks * design.block_pool
    # Drawn last: every site-A position is the same with and without the site term.
    for x, y in zip(with_site.train + with_site.val + (with_site.test,), without.train + without.val + (without.test,),
                    strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(truth_draw(design, 1).shift, np.arange(design.truth_test))
    assert design.shift_parts and design.cues


def test_all_families_means_every_family_of_the_datasets_domain(profile):
    from crsbench_lib.cohort.corruptions import corruption_families
    from crsbench_lib.runner.coverage import ALL_FAMILIES

    design = design_from_profile(profile, dataset="fundus", families=(ALL_FAMILIES,), n_replicates=2)
    assert design.families == tuple(corruption_families("fundus"))


def _tiny(profile):
    d = design_from_profile(profile, encoders=("pixels", "colour_hist"), families=("gaussian_blur",),
                            n_replicates=2, n_truth_draws=2, truth_test=1200, truth_corrupted=200, block_pool=200)
    return dataclasses.replace(d, train=300, val=160, test=320, n_per_condition=20, block_pool=30,
                               pool_train=900, pool_val=480, severities=(1, 3))


@pytest.mark.slow
def test_a_tiny_audit_runs_resumes_and_repeats(profile, tmp_path):
    from crsbench_lib.scoring.coverage import coverage_table, replicate_intervals, truth_table

    design = _tiny(profile)
    calls = []

    def score_replicate(predictions, r):
        calls.append(r)
        return replicate_intervals(predictions, r, n_draws=40, n_permutations=9)

    truth, intervals = run_audit(design, functools.partial(truth_table, n_draws=20), score_replicate,
                                 cache=tmp_path / "a", n_jobs=1)
    assert calls == [0, 1]
    assert set(intervals["replicate"]) == {0, 1}
    # Each replicate leaves a results table and predictions in the run's formats.
    root = audit_root(design, tmp_path / "a")
    results = read_results(root / "results" / "replicate-0001.parquet")
    assert set(results["seed"]) == set(design.seeds) and set(results["encoder"]) == {"pixels", "colour_hist"}
    # The site term is simulated as the profile measures it (issue 46, item 6).
    assert "shift" in set(results["condition"])
    assert len(read_predictions(root / "predictions" / "replicate-0001.parquet")) > 0
    assert set(truth.loc[truth["quantity"] == "crs", "item"]) == {"pixels", "colour_hist"}
    table = coverage_table(truth, intervals)
    assert {"axis_D", "axis_R", "crs_difference", "tau_auroc_crs", "leading_tier"} <= set(table["quantity"])
    assert table["observed"].between(0, 1).all()
    # Resumed: nothing is recomputed, the tables are read back.
    again_truth, again = run_audit(design, functools.partial(truth_table, n_draws=20), score_replicate,
                                   cache=tmp_path / "a", n_jobs=1)
    assert calls == [0, 1]
    pd.testing.assert_frame_equal(again, intervals)
    # A fresh cache gives the same numbers, bit for bit; a third replicate adds one row set.
    more = dataclasses.replace(design, n_replicates=3)
    assert audit_root(more, tmp_path) == audit_root(design, tmp_path)
    fresh_truth, fresh = run_audit(more, functools.partial(truth_table, n_draws=20), score_replicate,
                                   cache=tmp_path / "b", n_jobs=1)
    pd.testing.assert_frame_equal(fresh_truth, truth)
    pd.testing.assert_frame_equal(fresh[fresh["replicate"] < 2].reset_index(drop=True), intervals)


def test_presets_name_the_audit_sizes_and_the_book_follows_the_profile():
    from crsbench_lib.runner.coverage import AUDIT_PRESETS, BOOK_PRESETS, audit_preset

    assert audit_preset("book", "quick") is AUDIT_PRESETS[BOOK_PRESETS["quick"]]
    assert audit_preset("book", "default") is AUDIT_PRESETS["chapter"] is audit_preset("chapter", "quick")
    with pytest.raises(ConfigError, match="unknown audit preset 'big'; valid presets: benchmark, chapter, smoke, close_race, all_families, book"):
        audit_preset("big")
    # The chapter is smaller than the benchmark in every count, and every preset is a valid design.
    small, large = AUDIT_PRESETS["chapter"], AUDIT_PRESETS["benchmark"]
    for field in ("replicates", "truth_draws", "truth_test", "truth_corrupted", "pool_factor", "draws"):
        assert getattr(small, field) <= getattr(large, field), field
    for name, size in AUDIT_PRESETS.items():
        profile = load_profile("quick" if name == "smoke" else "default")
        design_from_profile(profile, encoders=size.encoders, families=size.families, n_replicates=size.replicates,
                            n_truth_draws=size.truth_draws, truth_test=size.truth_test,
                            truth_corrupted=size.truth_corrupted, pool_factor=size.pool_factor)


@pytest.mark.parametrize(("change", "message"), [
    ({"encoders": ("pixels", "hogg")}, "unknown encoder 'hogg'; valid encoders: pixels"),
    ({"families": ("gaussian_blur", "fog")}, "unknown corruption family 'fog' for derm; valid families: "),
])
def test_unknown_names_are_refused_before_any_work(profile, change, message):
    with pytest.raises(ConfigError, match=message):
        design_from_profile(profile, **change)
