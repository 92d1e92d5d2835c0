"""Test-retest of a ranking: seedwise scores and tau between seeds, within and across arms."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.crs import score_results
from crsbench_lib.scoring.retest import (
    ACROSS_MEASURES_OTHER_SEED,
    ACROSS_MEASURES_SAME_SEED,
    ACROSS_OTHER_SEED,
    ACROSS_SAME_SEED,
    WITHIN_ARM,
    WITHIN_MEASURE,
    measure_retest_taus,
    retest_summary,
    retest_taus,
    seedwise_scores,
)


@pytest.fixture(scope="module")
def two_arms() -> pd.DataFrame:
    return synthetic_results(n_encoders=6, corruptions=("noise",), arms=("frozen", "lora"), random_state=5)


def test_one_seed_scores_as_the_table_of_that_seed_alone(two_arms, frozen_standard):
    by_seed = seedwise_scores(two_arms, frozen_standard, "frozen")
    assert sorted(by_seed) == [0, 1, 2]
    alone = score_results(two_arms[two_arms["seed"] == 1], frozen_standard, arm="frozen").set_index("encoder")["crs"]
    assert np.allclose(by_seed[1].to_numpy(), alone.sort_index().to_numpy())


def test_pairs_within_and_across_arms(two_arms, frozen_standard):
    taus = retest_taus(two_arms, frozen_standard)
    counts = taus["comparison"].value_counts()
    assert counts[WITHIN_ARM] == 6 and counts[ACROSS_SAME_SEED] == 3 and counts[ACROSS_OTHER_SEED] == 6
    scores = {arm: seedwise_scores(two_arms, frozen_standard, arm) for arm in ("frozen", "lora")}
    row = taus[(taus["comparison"] == ACROSS_SAME_SEED) & (taus["seed_a"] == 2)].iloc[0]
    expected, _ = stats.kendalltau(scores["frozen"][2], scores["lora"][2].loc[scores["frozen"][2].index])
    assert row["kendall_tau"] == pytest.approx(expected) and row["n_encoders"] == 6
    summary = retest_summary(taus)
    assert list(summary["arms"]) == ["frozen", "lora", "frozen vs lora", "frozen vs lora"]
    assert (summary["min_tau"] <= summary["mean_tau"]).all() and (summary["mean_tau"] <= summary["max_tau"]).all()


def test_identical_seeds_retest_at_one(frozen_standard):
    table = synthetic_results(n_encoders=5, seeds=(0,), corruptions=("noise",), random_state=2)
    copy = table.assign(seed=1)
    taus = retest_taus(pd.concat([table, copy], ignore_index=True), frozen_standard, arms=("frozen",))
    assert list(taus["kendall_tau"]) == [pytest.approx(1.0)]


def test_too_few_encoders_and_bad_arms(two_arms, frozen_standard):
    with pytest.raises(SchemaError, match="share 1 encoder"):
        retest_taus(two_arms, frozen_standard, encoders=["enc00"])
    with pytest.raises(ValueError, match="one or two distinct arms"):
        retest_taus(two_arms, frozen_standard, arms=())
    with pytest.raises(SchemaError, match="'nobody' has no lora rows"):
        seedwise_scores(two_arms, frozen_standard, "lora", encoders=["enc00", "nobody"])


def test_the_summary_carries_the_number_of_ranked_encoders(two_arms, frozen_standard):
    summary = retest_summary(retest_taus(two_arms, frozen_standard))
    assert (summary["n_encoders"] == 6).all()


def test_two_measures_of_one_arm_pair_like_two_arms(two_arms, frozen_standard):
    taus = measure_retest_taus(two_arms, frozen_standard, measures=("D", "crs"))
    counts = taus["comparison"].value_counts()
    assert counts[WITHIN_MEASURE] == 6 and counts[ACROSS_MEASURES_SAME_SEED] == 3
    assert counts[ACROSS_MEASURES_OTHER_SEED] == 6
    d = seedwise_scores(two_arms, frozen_standard, "frozen", score="D")
    crs = seedwise_scores(two_arms, frozen_standard, "frozen")
    row = taus[(taus["comparison"] == ACROSS_MEASURES_OTHER_SEED) & (taus["seed_a"] == 0) & (taus["seed_b"] == 2)]
    expected, _ = stats.kendalltau(d[0], crs[2].loc[d[0].index])
    assert row["kendall_tau"].item() == pytest.approx(expected)
    # D on a seed is that seed's scoring's normalised AUROC.
    alone = score_results(two_arms[two_arms["seed"] == 1], frozen_standard, arm="frozen").set_index("encoder")["D"]
    assert np.allclose(d[1].to_numpy(), alone.sort_index().to_numpy())
    summary = retest_summary(taus)
    assert list(summary["arms"]) == ["D", "crs", "D vs crs", "D vs crs"]
    with pytest.raises(ValueError, match="two distinct columns"):
        measure_retest_taus(two_arms, frozen_standard, measures=("crs", "crs"))
    with pytest.raises(SchemaError, match="no column 'auroc'"):
        seedwise_scores(two_arms, frozen_standard, "frozen", score="auroc")
