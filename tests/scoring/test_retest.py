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


# --- bootstrap-draw baseline and the shared noise table (issue 27, item 4) ---------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

from crsbench_lib.scoring.retest import (  # noqa: E402
    AVERAGED,
    BOOTSTRAP_DRAW,
    NOISE_BASELINE_COLUMNS,
    OBSERVED,
    ONE_SEED_OTHER,
    SEED_REDRAW,
    bootstrap_retest_taus,
    noise_baseline_table,
    pair_taus,
)

_draw_rows = arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(2, 7)),
                    elements=st.floats(-5, 5, allow_nan=False, width=32))


@settings(max_examples=60, deadline=None)
@given(half=_draw_rows)
def test_identical_draws_agree_at_tau_one(half):
    # Draw b and draw b + B/2 identical: every pair has tau 1 (or NaN where a draw has no order at all).
    taus = bootstrap_retest_taus(np.vstack([half, half]))["kendall_tau"].to_numpy()
    constant = np.ptp(half, axis=1) == 0
    assert np.all(np.isnan(taus[constant])) and np.allclose(taus[~constant], 1.0)


@settings(max_examples=60, deadline=None)
@given(draws=_draw_rows, data=st.data())
def test_relabelling_the_encoders_leaves_the_baseline_unchanged(draws, data):
    draws = np.vstack([draws, draws[::-1] + 0.5 * np.arange(draws.shape[1])])
    order = data.draw(st.permutations(range(draws.shape[1])))
    before = bootstrap_retest_taus(draws)["kendall_tau"].to_numpy()
    after = bootstrap_retest_taus(draws[:, order])["kendall_tau"].to_numpy()
    assert np.allclose(before, after, equal_nan=True)


def test_pairs_split_the_draws_in_halves_and_match_scipy():
    rng = np.random.default_rng(3)
    draws = rng.normal(size=(11, 6))
    out = bootstrap_retest_taus(draws)
    assert list(out.columns) == ["draw_a", "draw_b", "kendall_tau", "n_encoders"]
    assert out["draw_a"].tolist() == list(range(5)) and out["draw_b"].tolist() == list(range(5, 10))
    expected = [stats.kendalltau(draws[b], draws[b + 5], variant="b")[0] for b in range(5)]
    assert np.allclose(out["kendall_tau"], expected)
    reversed_pair = bootstrap_retest_taus(np.array([[1.0, 2, 3], [3.0, 2, 1]]))
    assert reversed_pair["kendall_tau"].tolist() == [-1.0]


def test_keep_ranks_only_the_named_encoders():
    draws = np.array([[1.0, 2, 3, 9], [1.0, 2, 3, -9]])
    assert bootstrap_retest_taus(draws)["kendall_tau"].iloc[0] < 1
    kept = bootstrap_retest_taus(draws, ["a", "b", "c", "d"], keep=["c", "a", "b"])
    assert kept["kendall_tau"].tolist() == [1.0] and kept["n_encoders"].tolist() == [3]


@pytest.mark.parametrize("draws, kwargs, message", [
    (np.ones((1, 3)), {}, "expected shape"),
    (np.ones((4,)), {}, "expected shape"),
    (np.ones((4, 1)), {}, "expected shape"),
    (np.array([[1.0, np.nan], [1.0, 2.0]]), {}, "finite"),
    (np.ones((2, 3)), {"keep": ["a", "b"]}, "keep needs encoders"),
    (np.ones((2, 3)), {"encoders": ["a", "b", "c"], "keep": ["a", "z"]}, "'z' is not among"),
    (np.ones((2, 3)), {"encoders": ["a", "b", "c"], "keep": ["a"]}, "need at least 2"),
])
def test_bootstrap_retest_input_errors(draws, kwargs, message):
    with pytest.raises(SchemaError, match=message):
        bootstrap_retest_taus(draws, **kwargs)


def test_noise_table_rows_summaries_and_order():
    boot = np.linspace(0.5, 1.0, 201)
    table = noise_baseline_table({"x vs y": 0.4}, {"x": [0.6, np.nan, 0.8], "y": []}, {"x": boot},
                                 one_seed={"x vs y": [0.3, 0.5]}, interval=0.9)
    assert list(table.columns) == list(NOISE_BASELINE_COLUMNS)
    assert list(zip(table["source"], table["rankings"])) == [
        (OBSERVED, AVERAGED), (OBSERVED, ONE_SEED_OTHER), (SEED_REDRAW, "one seed each"), (BOOTSTRAP_DRAW,
                                                                                           table["rankings"].iloc[3])]
    seed = table[table["source"] == SEED_REDRAW].iloc[0]
    assert (seed["tau"], seed["low"], seed["high"], seed["n_pairs"]) == (0.7, 0.6, 0.8, 2)  # NaN left out
    draw = table[table["source"] == BOOTSTRAP_DRAW].iloc[0]
    assert np.isclose(draw["tau"], 0.75) and np.isclose(draw["low"], np.percentile(boot, 5))
    assert np.isclose(draw["high"], np.percentile(boot, 95)) and draw["n_pairs"] == 201
    assert "y" not in set(table["comparison"])  # a ranking without a finite tau gets no row


def test_noise_table_is_deterministic_and_checks_its_interval():
    args = ({"a": 0.5}, {"r": [0.1, 0.2]}, {"r": np.random.default_rng(0).random(99)})
    pd.testing.assert_frame_equal(noise_baseline_table(*args), noise_baseline_table(*args))
    with pytest.raises(ValueError, match="interval"):
        noise_baseline_table(*args, interval=1.0)


def test_pair_taus_reads_one_comparison(two_arms, frozen_standard):
    taus = retest_taus(two_arms, frozen_standard)
    within = pair_taus(taus, WITHIN_ARM, "frozen")
    assert within.size == 3
    assert np.allclose(within, taus[(taus["comparison"] == WITHIN_ARM) & (taus["arm_a"] == "frozen")]["kendall_tau"])
    assert pair_taus(taus, ACROSS_OTHER_SEED, "frozen", "lora").size == 6


def test_the_one_dose_reference_is_narrower_than_the_two_dose_one():
    # Issue 46, item 3: a measured ranking against its draws carries one dose of noise; two independent
    # draws carry two, so their taus spread wider and sit lower.
    from crsbench_lib.scoring.retest import bootstrap_retest_taus, point_draw_taus

    rng = np.random.default_rng(5)
    point = np.linspace(0.50, 0.70, 12)
    draws = point + rng.normal(0.0, 0.02, (2000, 12))
    one = point_draw_taus(point, draws)
    two = bootstrap_retest_taus(draws)["kendall_tau"].to_numpy()
    assert np.median(one) > np.median(two)
    assert np.subtract(*np.percentile(one, [97.5, 2.5])) < np.subtract(*np.percentile(two, [97.5, 2.5]))
    # The noise table carries the row, and the verdict reads it where present.
    from crsbench_lib.scoring.retest import ESTIMATE_DRAW, noise_baseline_table, tau_against_draws

    observed = float(np.percentile(one, 1.0))  # in the two-dose range, below the one-dose one
    table = noise_baseline_table({"x": observed}, {}, {"r": two})
    assert tau_against_draws(observed, table) == "inside"
    table = noise_baseline_table({"x": observed}, {}, {"r": two}, estimate_draw={"r": one})
    assert ESTIMATE_DRAW in set(table["source"]) and tau_against_draws(observed, table) == "below"


def test_point_draw_taus_keep_and_refuse():
    from crsbench_lib.scoring.retest import point_draw_taus

    point = np.array([0.3, 0.2, 0.1])
    draws = np.array([[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]])
    assert point_draw_taus(point, draws, ["a", "b", "c"], keep=["a", "c"]).tolist() == [1.0, -1.0]
    with pytest.raises(SchemaError):
        point_draw_taus(point[:2], draws)
