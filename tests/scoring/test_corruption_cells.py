import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.corruption_cells import (
    cell_correlation,
    cell_correlation_bootstrap,
    corrupted_pairs,
    corruption_cells,
)
from crsbench_lib.scoring.resampling import multiplicities


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


def test_ece_increase_is_paired_on_the_same_images_where_recorded():
    table = synthetic_results(n_encoders=2, seeds=(0,), corruptions=("noise",), severities=(1, 2))
    corrupted = table["condition"] == "corruption"
    pairs = corrupted_pairs(table)
    expected = table.loc[corrupted].sort_values(["encoder", "dataset", "severity"])
    np.testing.assert_allclose(
        pairs["ece_increase"].to_numpy(), (expected["ece"] - expected["ece_reference"]).to_numpy(), atol=1e-12
    )
    # Where the reference is missing, the clean row of the whole split stands in.
    partial = table.copy()
    partial.loc[corrupted & (partial["dataset"] == "derm"), "ece_reference"] = np.nan
    fallback = corrupted_pairs(partial)
    derm = fallback[fallback["dataset"] == "derm"]
    clean = partial[(partial["condition"] == "clean") & (partial["calibration"] == "none")]
    clean_ece = clean.set_index(["encoder", "dataset"])["ece"]
    np.testing.assert_allclose(
        derm["ece_clean"].to_numpy(), clean_ece.reindex(list(zip(derm["encoder"], derm["dataset"], strict=True))).to_numpy()
    )
    # A table written before the column existed still pairs with the clean row.
    assert np.isfinite(corrupted_pairs(table.drop(columns="ece_reference"))["ece_increase"]).all()


def test_one_cluster_draw_equals_the_statistic_on_the_duplicated_data(table):
    """With one draw, the interval is that draw's r: recompute it by copying encoders and datasets."""
    seed = 11
    u = cell_correlation_bootstrap(table, n_draws=1, random_state=seed)
    rng = np.random.default_rng(seed)
    pairs = corrupted_pairs(table)
    encoders, datasets = sorted(pairs["encoder"].unique()), sorted(pairs["dataset"].unique())
    enc_counts = multiplicities(len(encoders), 1, rng)[0]
    ds_counts = multiplicities(len(datasets), 1, rng)[0]
    copies = pd.concat(
        [pairs[pairs["encoder"] == e] for e, k in zip(encoders, enc_counts, strict=True) for _ in range(int(k))]
    )
    cells = copies.groupby(["dataset", "corruption"])[["auroc_loss", "ece_increase"]].mean().reset_index()
    cells = pd.concat(
        [cells[cells["dataset"] == d] for d, k in zip(datasets, ds_counts, strict=True) for _ in range(int(k))]
    )
    expected = stats.pearsonr(cells["auroc_loss"], cells["ece_increase"]).statistic
    assert u.ci_low == pytest.approx(expected, abs=1e-12) and u.ci_high == pytest.approx(expected, abs=1e-12)


def test_cluster_bootstrap_point_and_interval(table):
    u = cell_correlation_bootstrap(table, n_draws=300)
    fisher = cell_correlation(corruption_cells(table))
    assert u.estimate == pytest.approx(fisher.r)
    assert u.n == fisher.n == 9 and u.statistic == "pearson_r" and u.interval_method == "cluster_bootstrap"
    assert -1 <= u.ci_low <= u.ci_high <= 1 and u.n_draws <= 300
    again = cell_correlation_bootstrap(table, n_draws=300)
    assert (again.ci_low, again.ci_high, again.n_draws) == (u.ci_low, u.ci_high, u.n_draws)
    wider = cell_correlation_bootstrap(table, clusters=("encoder", "dataset", "corruption", "seed"), n_draws=300)
    assert -1 <= wider.ci_low <= wider.ci_high <= 1


def test_perfectly_coupled_cells_give_a_degenerate_interval(table):
    coupled = table.copy()
    corrupted = coupled["condition"] == "corruption"
    loss = coupled.loc[corrupted, "auroc"].rsub(0.999)
    coupled.loc[corrupted, "ece_reference"] = 0.1
    coupled.loc[corrupted, "ece"] = 0.1 + loss / 4
    clean = (coupled["condition"] == "clean") & (coupled["calibration"] == "none")
    coupled.loc[clean, "auroc"] = 0.999
    u = cell_correlation_bootstrap(coupled, n_draws=100)
    assert u.estimate == pytest.approx(1.0)
    assert u.ci_low == pytest.approx(1.0) and u.ci_high == pytest.approx(1.0)


def test_cluster_bootstrap_errors(table):
    with pytest.raises(ValueError, match="clusters must name"):
        cell_correlation_bootstrap(table, clusters=("site",))
    few = table[(table["condition"] != "corruption") | (table["dataset"] == "derm")]
    few = few[(few["condition"] != "corruption") | (few["corruption"] != "jpeg")]
    with pytest.raises(ValueError, match="at least 4 cells"):
        cell_correlation_bootstrap(few)
    with pytest.raises(SchemaError, match="no corruption rows"):
        cell_correlation_bootstrap(table[table["condition"] != "corruption"])
