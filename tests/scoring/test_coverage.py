"""Coverage counting (scoring.coverage): hand-made tables, a known-truth estimator, the package's intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.errors import ConfigError, SchemaError
from crsbench_lib.evaluation import CellEmbeddings, evaluate_cell_predictions
from crsbench_lib.evaluation.cell import ProbeConfig
from crsbench_lib.scoring.coverage import (
    INTERVAL_COLUMNS,
    TRUTH_COLUMNS,
    coverage_table,
    interval_hits,
    normal_mean_intervals,
    pair_item,
    replicate_intervals,
    truth_table,
)
from crsbench_lib.standard import as_standard


def _truth(rows):
    return pd.DataFrame(rows, columns=list(TRUTH_COLUMNS))


def _intervals(rows, nominal=0.95):
    frame = pd.DataFrame(rows, columns=["replicate", "quantity", "item", "method", "estimate", "low", "high"])
    frame["nominal"] = nominal
    return frame[list(INTERVAL_COLUMNS)]


def test_pair_item_is_alphabetical_and_signed():
    assert pair_item("a", "b") == ("a - b", 1.0)
    assert pair_item("b", "a") == ("a - b", -1.0)


def test_hits_on_a_hand_made_table():
    truth = _truth([("axis_D", "e1", 0.70, 0.001), ("axis_D", "e2", 0.60, 0.001), ("tier", "e1", 0.05, 0.01)])
    intervals = _intervals([
        (0, "axis_D", "e1", "percentile", 0.71, 0.69, 0.73),  # covers
        (0, "axis_D", "e2", "percentile", 0.65, 0.61, 0.69),  # misses (truth below)
        (1, "axis_D", "e1", "percentile", 0.70, 0.70, 0.71),  # covers at the closed end
        (1, "axis_D", "e2", "percentile", 0.55, 0.50, 0.59),  # misses (truth above)
        (0, "tier", "e1", "set", np.nan, np.nan, np.nan),
        (0, "tier", "e2", "set", np.nan, np.nan, np.nan),
        (1, "tier", "e2", "set", np.nan, np.nan, np.nan),
    ])
    hits = interval_hits(truth, intervals)
    axis = hits[hits["quantity"] == "axis_D"].set_index(["replicate", "item"])["covered"]
    assert axis.to_dict() == {(0, "e1"): True, (0, "e2"): False, (1, "e1"): True, (1, "e2"): False}
    tier = hits[hits["quantity"] == "tier"].set_index("replicate")
    assert tier["covered"].tolist() == [True, False]
    assert tier["set_size"].tolist() == [2.0, 1.0]
    table = coverage_table(truth, intervals).set_index("quantity")
    assert table.loc["axis_D", "observed"] == 0.5
    assert table.loc["axis_D", "n"] == 4 and table.loc["axis_D", "n_replicates"] == 2
    assert table.loc["axis_D", "mean_width"] == pytest.approx(np.mean([0.04, 0.08, 0.01, 0.09]))
    assert table.loc["tier", "observed"] == 0.5 and table.loc["tier", "mean_set_size"] == 1.5


def test_mc_se_takes_the_replicate_as_unit():
    truth = _truth([("q", "a", 0.0, 0.0), ("q", "b", 0.0, 0.0)])
    # Replicate 0 covers both items, replicate 1 neither: shares 1 and 0.
    intervals = _intervals([(0, "q", "a", "m", 0, -1, 1), (0, "q", "b", "m", 0, -1, 1),
                            (1, "q", "a", "m", 0, 1, 2), (1, "q", "b", "m", 0, 1, 2)])
    row = coverage_table(truth, intervals).iloc[0]
    assert row["observed"] == 0.5
    assert row["mc_se"] == pytest.approx(np.std([1.0, 0.0], ddof=1) / np.sqrt(2))


def test_errors_name_the_problem():
    truth = _truth([("q", "a", 0.0, 0.0)])
    with pytest.raises(SchemaError, match="no truth for q of 'b'"):
        interval_hits(truth, _intervals([(0, "q", "b", "m", 0, -1, 1)]))
    with pytest.raises(SchemaError, match="lacks column 'low'"):
        interval_hits(truth, _intervals([(0, "q", "a", "m", 0, -1, 1)]).drop(columns="low"))
    with pytest.raises(SchemaError, match="twice"):
        interval_hits(pd.concat([truth, truth]), _intervals([(0, "q", "a", "m", 0, -1, 1)]))
    with pytest.raises(SchemaError, match="exactly one member"):
        interval_hits(truth, _intervals([(0, "tier", "a", "set", np.nan, np.nan, np.nan)]))
    with pytest.raises(ConfigError, match="'n'"):
        normal_mean_intervals(0.0, 1.0, 1, 5)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(0, 3)), min_size=1, max_size=20), st.floats(-5, 5))
def test_covered_is_exactly_low_le_truth_le_high_and_order_free(rows, truth_value):
    truth = _truth([("q", "a", truth_value, 0.0)])
    intervals = _intervals([(r, "q", "a", "m", lo, lo, lo + w) for r, (lo, w) in enumerate(rows)])
    hits = interval_hits(truth, intervals)
    expected = [lo <= truth_value <= lo + w for lo, w in rows]
    assert hits.sort_values("replicate")["covered"].tolist() == expected
    shuffled = intervals.sample(frac=1.0, random_state=0)
    pd.testing.assert_frame_equal(coverage_table(truth, shuffled), coverage_table(truth, intervals))


@pytest.mark.parametrize("nominal", [0.8, 0.95])
def test_t_intervals_of_a_normal_mean_cover_at_the_nominal_rate(nominal):
    # Student's t interval is exact: the observed share must sit within Monte-Carlo error of nominal.
    n_rep = 4000
    intervals = normal_mean_intervals(1.5, 2.0, 8, n_rep, interval=nominal, random_state=3)
    row = coverage_table(_truth([("normal_mean", "mu", 1.5, 0.0)]), intervals).iloc[0]
    assert row["n"] == n_rep
    assert abs(row["observed"] - nominal) < 4 * np.sqrt(nominal * (1 - nominal) / n_rep)
    # ... and a wrong truth is caught: the same intervals rarely cover a mean shifted by 1.5 standard errors.
    wrong = coverage_table(_truth([("normal_mean", "mu", 1.5 + 1.5 * 2.0 / np.sqrt(8), 0.0)]), intervals).iloc[0]
    assert wrong["observed"] < nominal - 0.2


def _predictions(seeds, n_test, shift, rng_seed=0):
    """Predictions of three encoders of different strength on Gaussian embeddings (4 classes)."""
    rng = np.random.default_rng(rng_seed)
    centres = rng.normal(size=(4, 6))
    test_labels = rng.integers(0, 4, n_test)
    test_noise = rng.normal(size=(n_test, 6))
    blocks = {("blur", s): np.arange((s - 1) * 20, s * 20) % n_test for s in (1, 2)}
    out = []
    for name, strength in (("pixels", 0.6), ("hog", 0.9), ("simclr_broad_aug_s", 1.3)):
        test = strength * centres[test_labels] + test_noise
        for seed in seeds:
            r = np.random.default_rng([rng_seed, seed])
            ytr, yva = r.integers(0, 4, 300), r.integers(0, 4, 150)
            cell = CellEmbeddings(
                strength * centres[ytr] + r.normal(size=(300, 6)), ytr,
                strength * centres[yva] + r.normal(size=(150, 6)), yva, test, test_labels,
                corrupted={c: test[idx] * (1 - shift * c[1]) + shift * c[1] * test_noise[idx] for c, idx in blocks.items()},
                corrupted_images=blocks,
            )
            out += evaluate_cell_predictions(
                cell, "multiclass", 4, seed=seed, label_fractions=(0.25, 0.1, 0.05, 0.01), ece_bins=15,
                probe=ProbeConfig(c_grid=(0.1, 1.0), calibrators=()),
                meta={"encoder": name, "dataset": "derm", "domain": "dermatology", "arm": "frozen"})
    return out


@pytest.fixture(scope="module")
def standard():
    return as_standard(None)


def test_truth_and_replicate_tables_name_the_same_quantities(standard):
    truth = truth_table(_predictions(range(4), 600, 0.2), standard, n_draws=20)
    assert set(truth["quantity"]) == {"axis_D", "axis_C", "axis_L", "axis_R", "crs", "crs_difference",
                                      "tau_auroc_crs", "leading_tier"}
    assert (truth["truth_se"] >= 0).all() and truth["truth"].notna().all()
    assert len(truth[truth["quantity"] == "crs_difference"]) == 3
    intervals = replicate_intervals(_predictions((0, 1, 2), 300, 0.2, rng_seed=1), 7, standard, n_draws=50,
                                    n_permutations=9)
    assert (intervals["replicate"] == 7).all()
    bounded = intervals[intervals["method"] != "set"]
    assert (bounded["low"] <= bounded["high"]).all()
    percentile = bounded[bounded["method"] == "percentile"]
    assert set(percentile["quantity"]) == set(truth["quantity"]) - {"leading_tier"}
    table = coverage_table(truth, intervals)
    assert set(table["method"]) == {"percentile", "basic", "seed_t", "set"}
    # The axes' seed-level t interval (amendment 26) is given for every axis and encoder.
    seed_t = bounded[bounded["method"] == "seed_t"]
    assert set(seed_t["quantity"]) == {"axis_D", "axis_C", "axis_L", "axis_R"}
    assert len(seed_t) == len(percentile[percentile["quantity"].str.startswith("axis_")])
    # The same inputs give the same numbers, bit for bit.
    again = replicate_intervals(_predictions((0, 1, 2), 300, 0.2, rng_seed=1), 7, standard, n_draws=50,
                                n_permutations=9)
    pd.testing.assert_frame_equal(intervals, again)


def test_truth_table_rejects_empty_predictions(standard):
    with pytest.raises(SchemaError, match="no predictions"):
        truth_table([], standard)
    with pytest.raises(SchemaError, match="replicate 3 has no predictions"):
        replicate_intervals([], 3, standard)


def test_mean_error_is_estimate_less_truth_with_the_replicate_as_unit():
    truth = _truth([("axis_C", "a", 0.10, 0.001), ("axis_C", "b", 0.20, 0.001), ("tier", "a", 0.1, 0.01)])
    intervals = _intervals([(0, "axis_C", "a", "percentile", 0.13, 0.12, 0.16), (0, "axis_C", "b", "percentile", 0.21, 0.2, 0.3),
                            (1, "axis_C", "a", "percentile", 0.11, 0.1, 0.2), (1, "axis_C", "b", "percentile", 0.25, 0.2, 0.3),
                            (0, "tier", "a", "set", np.nan, np.nan, np.nan), (1, "tier", "a", "set", np.nan, np.nan, np.nan)])
    hits = interval_hits(truth, intervals)
    assert hits.loc[hits["quantity"] == "axis_C", "error"].to_numpy() == pytest.approx([0.03, 0.01, 0.01, 0.05])
    table = coverage_table(truth, intervals).set_index("quantity")
    assert table.loc["axis_C", "mean_error"] == pytest.approx(0.025)
    # Per-replicate means 0.02 and 0.03: their standard error.
    assert table.loc["axis_C", "error_se"] == pytest.approx(np.std([0.02, 0.03], ddof=1) / np.sqrt(2))
    assert np.isnan(table.loc["tier", "mean_error"]) and np.isnan(table.loc["tier", "error_se"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=12), st.floats(-1, 1, allow_nan=False))
def test_a_shift_of_every_estimate_shifts_the_mean_error_by_as_much(estimates, shift):
    truth = _truth([("q", "x", 0.0, 0.0)])
    rows = [(r, "q", "x", "m", e, e - 1, e + 1) for r, e in enumerate(estimates)]
    moved = [(r, q, i, m, e + shift, lo + shift, hi + shift) for r, q, i, m, e, lo, hi in rows]
    before, after = coverage_table(truth, _intervals(rows)).iloc[0], coverage_table(truth, _intervals(moved)).iloc[0]
    assert after["mean_error"] == pytest.approx(before["mean_error"] + shift, abs=1e-9)
    assert after["error_se"] == pytest.approx(before["error_se"], abs=1e-9)
