import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.agreement import (
    agreement_uncertainty,
    correlation_draws,
    item_bootstrap_draws,
    rank_agreement,
    rank_correlation_uncertainty,
    rank_table,
    score_agreement,
    uncertainty_table,
)
from crsbench_lib.scoring.rank_statistics import kendall_tau_b_rows, kendall_tau_to_reference, spearman_rho_rows
from crsbench_lib.scoring.resampling import Direction

permutations = st.integers(2, 30).flatmap(lambda n: st.permutations(list(range(n))))
tied_scores = st.integers(2, 25).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 5), min_size=n, max_size=n), st.lists(st.integers(0, 5), min_size=n, max_size=n))
)


@settings(max_examples=200, deadline=None)
@given(perm=permutations)
def test_reversals_equal_formula_without_ties(perm):
    n = len(perm)
    result = rank_agreement(np.arange(n, dtype=float), np.array(perm, dtype=float))
    assert result.ties == {"auroc": 0, "crs": 0, "both": 0}
    assert result.reversed_pairs == pytest.approx((1 - result.tau_b) / 2 * n * (n - 1) / 2, abs=1e-9)
    assert result.reversed_pairs + result.concordant_pairs == result.n_pairs == n * (n - 1) // 2


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
@settings(max_examples=200, deadline=None)
@given(pair=tied_scores)
def test_kendall_and_spearman_agree_with_scipy(pair):
    a, b = (np.array(v, dtype=float) for v in pair)
    result = rank_agreement(a, b)
    tau = stats.kendalltau(a, b).statistic
    rho = stats.spearmanr(a, b).statistic
    if np.isnan(tau):
        assert np.isnan(result.tau_b)
    else:
        assert result.tau_b == pytest.approx(tau, abs=1e-12)
    if np.isnan(rho):
        assert np.isnan(result.rho)
    else:
        assert result.rho == pytest.approx(rho, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(pair=tied_scores)
def test_ties_counted_separately(pair):
    a, b = (np.array(v, dtype=float) for v in pair)
    result = rank_agreement(a, b)
    i, j = np.triu_indices(a.size, 1)
    assert result.ties["auroc"] == int((a[i] == a[j]).sum())
    assert result.ties["crs"] == int((b[i] == b[j]).sum())
    assert result.ties["both"] == int(((a[i] == a[j]) & (b[i] == b[j])).sum())
    untied = (a[i] != a[j]) & (b[i] != b[j])
    assert result.reversed_pairs + result.concordant_pairs == int(untied.sum())


def test_direction_and_displacement_by_hand():
    auroc = pd.Series({"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6})
    crs = pd.Series({"c": 0.7, "a": 0.6, "b": 0.5, "d": 0.4})  # CRS order c, a, b, d
    result = rank_agreement(auroc, crs)
    assert result.reversed_pairs == 2  # (a, c) and (b, c)
    assert result.mean_abs_displacement == pytest.approx((1 + 1 + 2 + 0) / 4)
    table = rank_table(auroc, crs).set_index("encoder")
    assert table.loc["c", "rank_crs"] == 1 and table.loc["c", "rank_auroc"] == 3
    assert table.loc["c", "rank_change"] == 2  # up two places under the CRS (positive = higher, as on every page)


def test_identical_rankings():
    result = rank_agreement(np.arange(5.0), np.arange(5.0) * 2)
    assert result.tau_b == 1.0 and result.rho == pytest.approx(1.0)
    assert result.reversed_pairs == 0 and result.mean_abs_displacement == 0.0


def test_bad_inputs():
    with pytest.raises(SchemaError, match="same encoders"):
        rank_agreement(pd.Series({"a": 1.0, "b": 2.0}), pd.Series({"a": 1.0, "c": 2.0}))
    with pytest.raises(SchemaError, match="same length"):
        rank_agreement(np.ones(3), np.ones(4))
    with pytest.raises(SchemaError, match="at least 2"):
        rank_agreement(np.ones(1), np.ones(1))
    with pytest.raises(SchemaError, match="NaN"):
        rank_agreement(np.array([1.0, np.nan]), np.ones(2))


@settings(max_examples=50, deadline=None)
@given(st.integers(3, 12).flatmap(lambda n: st.lists(st.lists(st.integers(0, 4), min_size=n, max_size=n), min_size=2, max_size=5)))
def test_vectorised_tau_matches_scipy(rows):
    reference, draws = np.array(rows[0], float), np.array(rows[1:], float)
    taus = kendall_tau_to_reference(reference, draws)
    for tau, row in zip(taus, draws, strict=True):
        expected = stats.kendalltau(reference, row).statistic
        assert (np.isnan(tau) and np.isnan(expected)) or tau == pytest.approx(expected, abs=1e-12)


def test_score_agreement(synthetic_table, frozen_standard):
    from crsbench_lib.scoring.crs import score_results

    scores = score_results(synthetic_table, frozen_standard)
    result = score_agreement(scores)
    assert result.n == 8 and -1 <= result.tau_b <= 1
    with pytest.raises(SchemaError, match="lacks column"):
        score_agreement(scores.drop(columns=["D"]))


paired_rows = st.integers(3, 10).flatmap(
    lambda n: st.lists(
        st.tuples(st.lists(st.integers(0, 4), min_size=n, max_size=n), st.lists(st.integers(0, 4), min_size=n, max_size=n)),
        min_size=1,
        max_size=4,
    )
)


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")  # scipy's NaN on constant rows
@settings(max_examples=50, deadline=None)
@given(paired_rows)
def test_row_statistics_match_scipy(rows):
    a = np.array([r[0] for r in rows], float)
    b = np.array([r[1] for r in rows], float)
    for got, expected in (
        (kendall_tau_b_rows(a, b), [stats.kendalltau(x, y).statistic for x, y in zip(a, b, strict=True)]),
        (spearman_rho_rows(a, b), [stats.spearmanr(x, y).statistic for x, y in zip(a, b, strict=True)]),
    ):
        for value, reference in zip(got, expected, strict=True):
            assert (np.isnan(value) and np.isnan(reference)) or value == pytest.approx(reference, abs=1e-12)


def test_interval_from_draws_is_the_percentile_of_the_per_draw_statistic():
    rng = np.random.default_rng(0)
    auroc = rng.normal(size=(300, 6))
    crs = auroc + rng.normal(scale=0.5, size=(300, 6))
    per_draw = [stats.kendalltau(x, y).statistic for x, y in zip(auroc, crs, strict=True)]
    np.testing.assert_allclose(correlation_draws(auroc, crs), per_draw, atol=1e-12)
    u = rank_correlation_uncertainty(auroc[0], crs[0], x_draws=auroc, y_draws=crs, interval=0.9)
    assert (u.ci_low, u.ci_high) == pytest.approx(tuple(np.percentile(per_draw, [5, 95])))
    assert u.interval_method == "draws" and u.n_draws == 300 and u.p_method == "exact"
    assert u.estimate == pytest.approx(per_draw[0])
    with pytest.raises(ValueError, match="both draw matrices"):
        rank_correlation_uncertainty(auroc[0], crs[0], x_draws=auroc)
    with pytest.raises(ValueError, match="same shape"):
        correlation_draws(auroc, crs[:, :5])


def test_item_bootstrap_is_deterministic_and_discounts_duplicates():
    x = np.arange(8.0)
    draws = item_bootstrap_draws(x, x, n_draws=100, random_state=3)
    np.testing.assert_array_equal(draws, item_bootstrap_draws(x, x, n_draws=100, random_state=3))
    # Copies of one encoder are tied in both rankings: a perfect agreement stays perfect.
    assert np.nanmin(draws) == pytest.approx(1.0)
    u = rank_correlation_uncertainty(x, -x, "spearman_rho", n_draws=100, n_permutations=500)
    assert u.estimate == pytest.approx(-1.0) and u.direction is Direction.BELOW_ZERO
    assert u.p_method == "exact" and u.p_value == pytest.approx(2 / 40320)


def test_agreement_uncertainty_aligns_draw_columns_by_name():
    names = ["a", "b", "c", "d", "e"]
    auroc = pd.Series([0.9, 0.8, 0.7, 0.6, 0.5], index=names)
    crs = pd.Series([0.5, 0.7, 0.6, 0.4, 0.3], index=names)
    rng = np.random.default_rng(1)
    auroc_draws = auroc.to_numpy() + rng.normal(scale=0.05, size=(200, 5))
    crs_draws = crs.to_numpy() + rng.normal(scale=0.05, size=(200, 5))
    straight = agreement_uncertainty(auroc, crs, auroc_draws, crs_draws, names)
    order = [4, 2, 0, 3, 1]
    shuffled = agreement_uncertainty(
        auroc, crs, auroc_draws[:, order], crs_draws[:, order], [names[i] for i in order]
    )
    assert straight == shuffled
    assert straight["kendall_tau_b"].estimate == pytest.approx(stats.kendalltau(auroc, crs).statistic)
    assert straight["spearman_rho"].estimate == pytest.approx(stats.spearmanr(auroc, crs).statistic)
    table = uncertainty_table(straight)
    assert list(table["name"]) == ["kendall_tau_b", "spearman_rho"]
    assert {"estimate", "ci_low", "ci_high", "p_value", "direction"} <= set(table.columns)
    with pytest.raises(SchemaError, match="no draws for encoder"):
        agreement_uncertainty(auroc, crs, auroc_draws, crs_draws, ["a", "b", "c", "d", "x"])
    with pytest.raises(SchemaError, match="expected shape"):
        agreement_uncertainty(auroc, crs, auroc_draws[:, :4], crs_draws, names)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_interval_brackets_nothing_outside_the_draws(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(50, 7)), rng.normal(size=(50, 7))
    u = rank_correlation_uncertainty(a[0], b[0], x_draws=a, y_draws=b)
    per_draw = correlation_draws(a, b)
    assert per_draw.min() <= u.ci_low <= u.ci_high <= per_draw.max()
    assert 0.0 < u.p_value <= 1.0


def test_decisive_reversal_picks_the_largest_crs_gap_among_reversed_candidates():
    import pandas as pd

    from crsbench_lib.scoring.agreement import decisive_reversal

    table = pd.DataFrame({"encoder": ["a", "b", "c", "hog"], "D": [0.86, 0.84, 0.80, 0.90],
                          "crs": [0.60, 0.62, 0.75, 0.10]})
    # Reversed: (a, b) gap 0.02, (a, c) gap 0.15, (b, c) gap 0.13; hog is a reference and left out.
    assert decisive_reversal(table, references=["hog"]) == ("a", "c", 3)
    assert decisive_reversal(table.assign(crs=table["D"]), references=["hog"]) is None
    # A tie in AUROC is no reversal.
    tied = pd.DataFrame({"encoder": ["a", "b"], "D": [0.85, 0.85], "crs": [0.6, 0.7]})
    assert decisive_reversal(tied) is None
