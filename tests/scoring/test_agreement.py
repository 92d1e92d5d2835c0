import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.scoring.agreement import (
    kendall_tau_to_reference,
    rank_agreement,
    rank_table,
    score_agreement,
)

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
    assert table.loc["c", "displacement"] == -2


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
