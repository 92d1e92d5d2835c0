import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.corruption_cells import cell_correlation, corrupted_pairs, corruption_cells


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=4, seeds=(0, 1), corruptions=("noise", "blur", "jpeg"), severities=(1, 3, 5))


def test_pairs_and_differences(table):
    pairs = corrupted_pairs(table)
    assert len(pairs) == 4 * 3 * 2 * 3 * 3
    assert np.allclose(pairs["auroc_loss"], pairs["auroc_clean"] - pairs["auroc_corrupted"])
    assert np.allclose(pairs["ece_increase"], pairs["ece_corrupted"] - pairs["ece_clean"])
    clipped = corrupted_pairs(table, clip=True)
    assert (clipped["auroc_loss"] >= 0).all() and (clipped["ece_increase"] >= 0).all()
    assert np.allclose(clipped["auroc_loss"], pairs["auroc_loss"].clip(lower=0))


def test_cells_are_means_over_encoders_seeds_severities(table):
    cells = corruption_cells(table)
    assert len(cells) == 3 * 3
    assert list(cells.columns) == ["dataset", "corruption", "n", "mean_auroc_loss", "mean_ece_increase"]
    pairs = corrupted_pairs(table)
    sel = pairs[(pairs["dataset"] == "fundus") & (pairs["corruption"] == "blur")]
    row = cells[(cells["dataset"] == "fundus") & (cells["corruption"] == "blur")].iloc[0]
    assert row["n"] == 4 * 2 * 3
    assert row["mean_auroc_loss"] == pytest.approx(sel["auroc_loss"].mean())


def test_correlation_matches_scipy_and_fisher(table):
    cells = corruption_cells(table)
    result = cell_correlation(cells)
    r, p = stats.pearsonr(cells["mean_auroc_loss"], cells["mean_ece_increase"])
    assert result.r == pytest.approx(r) and result.p_value == pytest.approx(p)
    z, se = np.arctanh(r), 1 / np.sqrt(len(cells) - 3)
    assert result.ci_low == pytest.approx(np.tanh(z - 1.959963984540054 * se))
    assert result.ci_high == pytest.approx(np.tanh(z + 1.959963984540054 * se))
    # scipy >= 1.9 gives the same Fisher interval
    ci = stats.pearsonr(cells["mean_auroc_loss"], cells["mean_ece_increase"]).confidence_interval(0.95)
    assert (result.ci_low, result.ci_high) == pytest.approx((ci.low, ci.high))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-100, 100), st.integers(-100, 100)), min_size=4, max_size=40),
    st.floats(0.5, 0.99),
)
def test_interval_contains_r_and_lies_in_unit_ball(points, confidence):
    cells = pd.DataFrame(points, columns=["mean_auroc_loss", "mean_ece_increase"]) / 100.0
    if np.ptp(cells["mean_auroc_loss"]) == 0 or np.ptp(cells["mean_ece_increase"]) == 0:
        with pytest.raises(ValueError):
            cell_correlation(cells, confidence=confidence)
        return
    result = cell_correlation(cells, confidence=confidence)
    assert -1 <= result.ci_low <= result.r + 1e-12
    assert result.r - 1e-12 <= result.ci_high <= 1


def test_errors(table):
    with pytest.raises(SchemaError, match="no corruption rows"):
        corrupted_pairs(table[table["condition"] != "corruption"])
    with pytest.raises(SchemaError, match="unknown arm"):
        corrupted_pairs(table, arm="x")
    orphan = table.drop(index=table[table["condition"] == "clean"].index[:1])
    with pytest.raises(SchemaError, match="without a clean twin"):
        corrupted_pairs(orphan)
    cells = corruption_cells(table)
    with pytest.raises(ValueError, match="at least 4"):
        cell_correlation(cells.head(3))
    with pytest.raises(ValueError, match="confidence"):
        cell_correlation(cells, confidence=1.0)


def test_loss_uses_the_paired_clean_reference_where_present():
    import numpy as np

    from crsbench_lib.results.synthetic import synthetic_results
    from crsbench_lib.scoring.corruption_cells import corrupted_pairs

    table = synthetic_results(n_encoders=2, seeds=(0,), corruptions=("noise",))
    corrupted = table["condition"] == "corruption"
    table.loc[corrupted, "auroc_reference"] = np.clip(table.loc[corrupted, "auroc"] + 0.05, 0, 1)
    pairs = corrupted_pairs(table)
    expected = table.loc[corrupted, "auroc_reference"] - table.loc[corrupted, "auroc"]
    np.testing.assert_allclose(np.sort(pairs["auroc_loss"].to_numpy()), np.sort(expected.to_numpy()), atol=1e-12)
