import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
from crsbench_lib.scoring.insertion import insertion_test
from crsbench_lib.standard import AXES

# Raw profiles in a realistic range (D, L in [0.4, 1]; C, R in [0, 0.3]), beyond the anchors too.
raw_rows = arrays(
    np.float64, st.tuples(st.integers(1, 20), st.just(4)),
    elements=st.floats(0.0, 1.0, allow_nan=False),
).map(lambda a: a * np.array([0.6, 0.3, 0.6, 0.3]) + np.array([0.4, 0.0, 0.4, 0.0]))


def _frame(values: np.ndarray, prefix: str) -> pd.DataFrame:
    return pd.DataFrame(values, columns=list(AXES), index=[f"{prefix}{i}" for i in range(len(values))])


@pytest.fixture(scope="module")
def existing(synthetic_table):
    return encoder_profiles(raw_axes(synthetic_table))


@settings(max_examples=40, deadline=None)
@given(candidates=raw_rows)
def test_fixed_reference_scores_never_move(existing, frozen_standard, candidates):
    result = insertion_test(existing, _frame(candidates, "new"), frozen_standard)
    # Exactly zero: the same bits before and after, not merely close.
    assert (result.existing["fixed_displacement"] == 0.0).all()
    np.testing.assert_array_equal(result.existing["crs_fixed_before"], result.existing["crs_fixed_after"])
    assert result.max_abs_fixed_displacement == 0.0
    assert len(result.candidates) == len(candidates)


def test_cohort_renormalised_scores_move(existing, frozen_standard):
    # A candidate beyond the cohort's range on every axis stretches every anchor.
    candidate = _frame(np.array([[0.99, 0.001, 1.0, 0.0]]), "new")
    result = insertion_test(existing, candidate, frozen_standard)
    assert result.max_abs_fixed_displacement == 0.0
    assert result.max_abs_cohort_displacement > 0.0
    assert (result.existing["cohort_displacement"] != 0).any()


@settings(max_examples=30, deadline=None)
@given(candidates=raw_rows)
def test_some_insertion_moves_cohort_scores(existing, frozen_standard, candidates):
    # Adding the candidates plus an extreme one always moves some cohort-renormalised score.
    extreme = np.vstack([candidates, [[0.999, 0.0, 1.0, 0.0], [0.41, 0.3, 0.41, 0.3]]])
    result = insertion_test(existing, _frame(extreme, "new"), frozen_standard)
    assert result.max_abs_cohort_displacement > 0.0


def test_name_clash_rejected(existing, frozen_standard):
    with pytest.raises(SchemaError, match="already an existing encoder"):
        insertion_test(existing, existing.iloc[:1], frozen_standard)


def test_order_changes_counts_swapped_and_tied_pairs():
    from crsbench_lib.scoring.rank_statistics import order_changes

    assert order_changes([3.0, 2.0, 1.0], [3.0, 2.0, 1.0]) == 0
    assert order_changes([3.0, 2.0, 1.0], [1.0, 2.0, 3.0]) == 3  # every pair reversed
    assert order_changes([3.0, 2.0, 1.0], [2.0, 2.0, 1.0]) == 1  # a tie forms
    with pytest.raises(ValueError, match="same items"):
        order_changes([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        order_changes([1.0, np.nan], [1.0, 2.0])


@settings(max_examples=40, deadline=None)
@given(before=arrays(np.float64, st.integers(2, 12), elements=st.integers(-50, 50).map(float)),
       data=st.data())
def test_order_changes_is_zero_under_any_increasing_map_and_equals_discordant_pairs(before, data):
    from scipy import stats

    from crsbench_lib.scoring.rank_statistics import order_changes

    # A strictly increasing map moves every score but keeps every pairwise order
    # (integer-valued scores, so that the map is exact in floating point).
    assert order_changes(before, 2.0 * before + 0.5) == 0
    after = data.draw(arrays(np.float64, before.shape, elements=st.integers(-50, 50).map(float)))
    changes = order_changes(before, after)
    n = before.size
    assert 0 <= changes <= n * (n - 1) // 2
    if len(set(before)) == n and len(set(after)) == n:
        # Without ties, the changed pairs are Kendall's discordant pairs: tau = 1 - 4 D / (n (n - 1)).
        tau = stats.kendalltau(before, after).statistic
        assert tau == pytest.approx(1 - 4 * changes / (n * (n - 1)))


@settings(max_examples=40, deadline=None)
@given(candidates=raw_rows)
def test_fixed_reference_keeps_relative_order_while_positions_may_shift(existing, frozen_standard, candidates):
    result = insertion_test(existing, _frame(candidates, "new"), frozen_standard)
    assert result.fixed_order_changes == 0
    table = result.existing
    shifted = int((table["rank_fixed_after"] != table["rank_fixed_before"]).sum())
    assert result.fixed_positions_shifted == shifted
    # A position can only drop, by the number of newcomers placed above.
    assert (table["rank_fixed_after"] >= table["rank_fixed_before"]).all()
    assert result.n_pairs == len(table) * (len(table) - 1) // 2


def test_a_newcomer_on_top_shifts_every_position_and_no_pair(existing, frozen_standard):
    best = _frame(np.array([[1.0, 0.0, 1.0, 0.0]]), "new")
    result = insertion_test(existing, best, frozen_standard)
    assert result.fixed_positions_shifted == len(existing)  # everyone moves down one place
    assert result.fixed_order_changes == 0  # and no incumbent pair changes order


def test_rank_change_table_reports_both_schemes(existing, frozen_standard):
    from crsbench_lib.scoring.insertion import RANK_CHANGE_COLUMNS, rank_change_table

    result = insertion_test(existing.iloc[2:], existing.iloc[:2], frozen_standard)
    table = rank_change_table(result).set_index("scheme")
    assert tuple(["scheme", *table.columns]) == RANK_CHANGE_COLUMNS
    assert table.at["fixed reference", "pairwise_order_changes"] == 0
    assert table.at["fixed reference", "max_abs_crs_displacement"] == 0.0
    assert table.at["cohort-renormalised", "pairwise_order_changes"] == result.cohort_order_changes
    assert table.at["fixed reference", "positions_shifted"] == result.fixed_positions_shifted


# --- the noise baseline beside the insertion's rank comparison (issue 27, item 4) ---


@settings(max_examples=40, deadline=None)
@given(candidates=raw_rows)
def test_insertion_tau_is_one_under_the_fixed_reference_and_agrees_with_the_order_changes(
        existing, frozen_standard, candidates):
    from crsbench_lib.scoring.rank_statistics import kendall_tau_b

    result = insertion_test(existing, _frame(candidates, "new"), frozen_standard)
    assert result.fixed_tau == 1.0
    table = result.existing
    assert result.cohort_tau == pytest.approx(kendall_tau_b(table["crs_cohort_before"].to_numpy(), table["crs_cohort_after"].to_numpy()))
    if table["crs_cohort_before"].is_unique and table["crs_cohort_after"].is_unique:
        assert result.cohort_tau == pytest.approx(1 - 2 * result.cohort_order_changes / result.n_pairs)


@pytest.fixture(scope="module")
def raw(synthetic_table, frozen_standard):
    # The standard's label fractions and axis scales, as every score against a standard uses them.
    from crsbench_lib.scoring.axes import standard_axes

    return standard_axes(synthetic_table, frozen_standard)


def test_seedwise_scores_are_each_seed_scored_alone_under_each_scheme(synthetic_table, raw, frozen_standard):
    from crsbench_lib.scoring.crs import cohort_renormalised_scores, score_profiles
    from crsbench_lib.scoring.insertion import COHORT, FIXED, seedwise_existing_scores
    from crsbench_lib.scoring.retest import seedwise_scores

    names = sorted(raw["encoder"].unique())[:6]
    scores = seedwise_existing_scores(raw, names, frozen_standard)
    assert sorted(scores[FIXED]) == sorted(scores[COHORT]) == [0, 1, 2]
    # The fixed scheme is the retest module's seedwise CRS of the same encoders.
    reference = seedwise_scores(synthetic_table, frozen_standard, "frozen", encoders=names)
    for seed in reference:
        np.testing.assert_allclose(scores[FIXED][seed].to_numpy(), reference[seed].to_numpy())
    # The cohort scheme renormalises on the existing encoders of that seed alone.
    profiles = encoder_profiles(raw[(raw["seed"] == 1) & raw["encoder"].isin(names)])
    expected = cohort_renormalised_scores(profiles, frozen_standard).set_index("encoder")["crs"].sort_index()
    np.testing.assert_array_equal(scores[COHORT][1].to_numpy(), expected.to_numpy())
    assert list(scores[COHORT][1].index) == names
    np.testing.assert_array_equal(
        score_profiles(profiles, frozen_standard).set_index("encoder")["crs"].sort_index().to_numpy(),
        scores[FIXED][1].to_numpy())


def test_insertion_retest_compares_every_seed_pair_with_the_retest_modules_tau(synthetic_table, raw, frozen_standard):
    from crsbench_lib.scoring.insertion import FIXED, INSERTION_RETEST_COLUMNS, insertion_retest
    from crsbench_lib.scoring.retest import retest_taus

    names = sorted(raw["encoder"].unique())[:6]
    pairs = insertion_retest(raw, names, frozen_standard)
    assert tuple(pairs.columns) == INSERTION_RETEST_COLUMNS
    assert len(pairs) == 6 and set(pairs["n_encoders"]) == {6} and set(pairs["n_pairs"]) == {15}
    assert pairs["order_changes"].between(0, 15).all()
    reference = retest_taus(synthetic_table, frozen_standard, arms=("frozen",), encoders=names)
    fixed = pairs[pairs["scheme"] == FIXED]
    np.testing.assert_allclose(fixed["kendall_tau"].to_numpy(), reference["kendall_tau"].to_numpy())
    # Deterministic: the same inputs give the same numbers, bit for bit.
    pd.testing.assert_frame_equal(pairs, insertion_retest(raw, names, frozen_standard))


def test_insertion_retest_refuses_an_unknown_encoder_and_a_table_without_axes(raw, frozen_standard):
    from crsbench_lib.scoring.insertion import insertion_retest

    with pytest.raises(SchemaError, match="'nobody' has no rows"):
        insertion_retest(raw, ["nobody"], frozen_standard)
    with pytest.raises(SchemaError, match="lacks column"):
        insertion_retest(raw.drop(columns="R"), list(raw["encoder"].unique()), frozen_standard)


def test_rank_noise_table_puts_the_baseline_beside_the_insertion(raw, frozen_standard):
    from crsbench_lib.scoring.insertion import RANK_NOISE_COLUMNS, SCHEMES, insertion_retest, rank_noise_table

    profiles = encoder_profiles(raw)
    existing_names = list(profiles.index[2:])
    result = insertion_test(profiles.iloc[2:], profiles.iloc[:2], frozen_standard)
    pairs = insertion_retest(raw, existing_names, frozen_standard)
    table = rank_noise_table(result, pairs)
    assert tuple(table.columns) == RANK_NOISE_COLUMNS and tuple(table["scheme"]) == SCHEMES
    rows = table.set_index("scheme")
    for scheme, tau, moved in (("fixed reference", result.fixed_tau, result.fixed_order_changes),
                               ("cohort-renormalised", result.cohort_tau, result.cohort_order_changes)):
        own = pairs[pairs["scheme"] == scheme]
        assert rows.at[scheme, "insertion_tau"] == tau and rows.at[scheme, "insertion_order_changes"] == moved
        assert rows.at[scheme, "retest_seed_pairs"] == len(own) == 3
        assert rows.at[scheme, "retest_mean_tau"] == pytest.approx(own["kendall_tau"].mean())
        assert rows.at[scheme, "retest_min_tau"] == own["kendall_tau"].min()
        assert rows.at[scheme, "retest_max_order_changes"] == own["order_changes"].max()
    # One seed: no seed pair, so no baseline (NaN), never a made-up one.
    one = rank_noise_table(result, insertion_retest(raw[raw["seed"] == 0], existing_names, frozen_standard))
    assert (one["retest_seed_pairs"] == 0).all() and one["retest_mean_tau"].isna().all()


def test_scheme_draws_of_unresampled_profiles_are_the_insertions_scores():
    # Every draw equal to the point profiles: each draw scores the existing encoders exactly as the insertion's
    # "before" does, under both schemes.
    from crsbench_lib.results.synthetic import synthetic_results
    from crsbench_lib.scoring import freeze_standard
    from crsbench_lib.scoring.insertion import COHORT, FIXED, scheme_draws

    table = synthetic_results(n_encoders=6, corruptions=("noise",), random_state=2)
    std = freeze_standard(table, "t-v1", created="2026-01-01T00:00:00Z")
    profiles = encoder_profiles(raw_axes(table))
    names = list(profiles.index)
    existing = names[:4]
    result = insertion_test(profiles.loc[existing], profiles.loc[names[4:]], std)
    before = result.existing.set_index("encoder").loc[sorted(existing)]
    draws = scheme_draws(np.stack([profiles[list(AXES)].to_numpy()] * 3), names, existing, std)
    assert np.array_equal(draws[FIXED], np.tile(before["crs_fixed_before"].to_numpy(), (3, 1)))
    assert np.allclose(draws[COHORT], np.tile(before["crs_cohort_before"].to_numpy(), (3, 1)), rtol=0, atol=1e-12)
    with pytest.raises(SchemaError, match="expected shape"):
        scheme_draws(np.zeros((2, 3, 4)), names, existing, std)
    with pytest.raises(SchemaError, match="'zz'"):
        scheme_draws(np.stack([profiles[list(AXES)].to_numpy()]), names, ["zz"], std)


def test_insertion_noise_table_pairs_each_scheme_with_its_own_baselines(synthetic_table, raw, frozen_standard):
    from crsbench_lib.scoring.insertion import (
        COHORT, FIXED, NOISE_LABELS, insertion_noise_table, insertion_retest, scheme_draws,
    )
    from crsbench_lib.scoring.retest import BOOTSTRAP_DRAW, OBSERVED, SEED_REDRAW, bootstrap_retest_taus

    profiles = encoder_profiles(raw)
    names = list(profiles.index)
    existing = names[:-2]
    result = insertion_test(profiles.loc[existing], profiles.loc[names[-2:]], frozen_standard)
    rng = np.random.default_rng(0)
    point = profiles[list(AXES)].to_numpy()
    draws = scheme_draws(point + rng.normal(0, 0.01, (8, *point.shape)), names, existing, frozen_standard)
    retest = insertion_retest(raw, existing, frozen_standard)
    table = insertion_noise_table(result, retest, draws).set_index(["source", "comparison"])["tau"]
    assert table[(OBSERVED, NOISE_LABELS[FIXED][0])] == result.fixed_tau == 1.0
    assert table[(OBSERVED, NOISE_LABELS[COHORT][0])] == result.cohort_tau
    seed_mean = retest.loc[retest["scheme"] == COHORT, "kendall_tau"].mean()
    assert table[(SEED_REDRAW, NOISE_LABELS[COHORT][1])] == pytest.approx(seed_mean)
    expected = np.median(bootstrap_retest_taus(draws[FIXED])["kendall_tau"])
    assert table[(BOOTSTRAP_DRAW, NOISE_LABELS[FIXED][1])] == pytest.approx(expected)
