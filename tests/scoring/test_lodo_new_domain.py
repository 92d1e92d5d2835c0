"""Leave one dataset out, asked of the encoders to which the held-out domain is new."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring import crs, encoder_profiles, freeze_standard, lodo
from crsbench_lib.scoring.axes import standard_axes
from crsbench_lib.scoring import lodo_new_domain as nd
from crsbench_lib.scoring.retest import ACROSS_MEASURES_OTHER_SEED, ACROSS_MEASURES_SAME_SEED, WITHIN_MEASURE, seedwise_scores

DATASETS = ("derm", "fundus", "cxr")


# --- which encoders are new to a domain -------------------------------------------------------------------


def test_tau_resolution():
    assert nd.tau_resolution(2) == pytest.approx(2.0)
    assert nd.tau_resolution(4) == pytest.approx(1 / 3)
    assert nd.tau_resolution(9) == pytest.approx(2 / 36)
    assert np.isnan(nd.tau_resolution(1)) and np.isnan(nd.tau_resolution(0))


@given(st.integers(min_value=2, max_value=12))
def test_tau_resolution_is_the_step_of_one_swapped_pair(n):
    x = np.arange(n, dtype=float)
    swapped = x.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    assert 1.0 - stats.kendalltau(x, swapped).statistic == pytest.approx(nd.tau_resolution(n))


def test_seen_domains_from_pools_on_a_toy_zoo():
    seen = nd.seen_domains_from_pools(
        {"broad_net": "broad", "derm_net": "derm", "fixed": None, "fitted": "broad"},
        {"broad": None, "derm": ("derm",), "cxr": ("cxr",)},
        every_domain=DATASETS,
    )
    assert seen == {"broad_net": frozenset(DATASETS), "derm_net": frozenset({"derm"}), "fixed": frozenset(),
                    "fitted": frozenset(DATASETS)}


def test_seen_domains_from_an_unknown_pool_is_refused():
    with pytest.raises(SchemaError, match="'odd'.*'mystery'"):
        nd.seen_domains_from_pools({"odd": "mystery"}, {"broad": None}, DATASETS)


def test_new_domain_filter_on_a_toy_mapping():
    seen = {"broad": frozenset(DATASETS), "derm_net": frozenset({"derm"}), "cxr_net": frozenset({"cxr"}),
            "pixels": frozenset()}
    encoders = list(seen)
    assert nd.new_domain_encoders(seen, encoders, "derm") == ["cxr_net", "pixels"]
    assert nd.new_domain_encoders(seen, encoders, "cxr") == ["derm_net", "pixels"]
    assert nd.new_domain_encoders(seen, encoders, "fundus") == ["cxr_net", "derm_net", "pixels"]
    assert nd.new_domain_encoders(seen, ["broad"], "fundus") == []


def test_an_encoder_missing_from_the_mapping_is_named_in_one_line():
    with pytest.raises(SchemaError) as caught:
        nd.new_domain_encoders({"a": frozenset()}, ["a", "ghost"], "derm")
    message = str(caught.value)
    assert "'ghost'" in message and "missing" in message and "\n" not in message


def test_membership_table():
    seen = {"a": frozenset({"dermatology"}), "b": frozenset()}
    table = nd.new_domain_membership(["b", "a"], ["derm", "cxr"], seen,
                                     domain_of={"derm": "dermatology", "cxr": "radiology"})
    assert list(table.columns) == list(nd.MEMBERSHIP_COLUMNS)
    new = table.set_index(["held_out", "encoder"])["new"]
    assert not new[("derm", "a")] and new[("derm", "b")] and new[("cxr", "a")] and new[("cxr", "b")]
    assert table.set_index(["held_out", "encoder"]).loc[("cxr", "b"), "seen"] == "none"
    with pytest.raises(SchemaError, match="'fundus'"):
        nd.new_domain_membership(["a"], ["fundus"], seen, domain_of={"derm": "dermatology"})


# --- predictions on hand-made and synthetic tables --------------------------------------------------------


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=6, seeds=(0, 1, 2), corruptions=("noise",), severities=(1, 3))


@pytest.fixture(scope="module")
def standard(table):
    return freeze_standard(table, "t", created="2026-01-01T00:00:00Z")


@pytest.fixture(scope="module")
def raw(table, standard):
    return standard_axes(table, standard)


def everyone(raw: pd.DataFrame) -> dict[str, frozenset]:
    return {e: frozenset() for e in raw["encoder"].astype(str).unique()}


def test_with_every_encoder_asked_it_is_the_whole_zoo_lodo(raw, standard):
    """No encoder saw any domain: the predictors and the AUROC target are those of lodo.lodo_predictions."""
    ours = nd.new_domain_predictions(raw, standard, everyone(raw)).set_index(["held_out", "encoder"]).sort_index()
    theirs = lodo.lodo_predictions(raw, standard).set_index(["held_out", "encoder"]).sort_index()
    np.testing.assert_array_equal(ours["crs"], theirs["crs"])
    np.testing.assert_array_equal(ours["auroc"], theirs["auroc"])
    np.testing.assert_allclose(ours["target_auroc"], theirs["target"], rtol=0, atol=1e-12)


def test_the_held_out_crs_is_the_single_dataset_profile_against_the_lodo_standard(raw, standard):
    predictions = nd.new_domain_predictions(raw, standard, everyone(raw))
    for held_out in DATASETS:
        refrozen = lodo.lodo_standard(standard, encoder_profiles(raw[raw["dataset"] != held_out]), held_out)
        expected = crs.score_profiles(encoder_profiles(raw[raw["dataset"] == held_out]), refrozen)
        got = predictions[predictions["held_out"] == held_out].set_index("encoder")["target_crs"]
        np.testing.assert_array_equal(got.sort_index(), expected.set_index("encoder")["crs"].sort_index())


def test_the_held_out_crs_of_an_encoder_ignores_the_others_held_out_rows(raw, standard):
    """Amendment 7: the panel holds no measurement on the held-out dataset, so the target of one encoder
    cannot move when another encoder's held-out rows change."""
    seen = everyone(raw)
    before = nd.new_domain_predictions(raw, standard, seen)
    changed = raw.copy()
    rows = (changed["dataset"] == "fundus") & (changed["encoder"] == "enc01")
    changed.loc[rows, ["D", "L"]] = changed.loc[rows, ["D", "L"]] * 0.5
    changed.loc[rows, "C"] = 0.5
    after = nd.new_domain_predictions(changed, standard, seen)
    key = (before["held_out"] == "fundus") & (before["encoder"] != "enc01")
    np.testing.assert_array_equal(before.loc[key, "target_crs"], after.loc[key, "target_crs"])
    own = (before["held_out"] == "fundus") & (before["encoder"] == "enc01")
    assert after.loc[own, "target_crs"].item() != before.loc[own, "target_crs"].item()


def test_only_encoders_new_to_the_domain_are_asked(raw, standard):
    seen = {e: frozenset(DATASETS) for e in raw["encoder"].astype(str).unique()}
    seen.update({"enc00": frozenset(), "enc01": frozenset({"derm"}), "enc02": frozenset({"cxr"})})
    predictions = nd.new_domain_predictions(raw, standard, seen)
    asked = predictions.groupby("held_out")["encoder"].apply(sorted).to_dict()
    assert asked == {"derm": ["enc00", "enc02"], "cxr": ["enc00", "enc01"], "fundus": ["enc00", "enc01", "enc02"]}
    # The refrozen panel keeps every member (an encoder that saw the domain is a reference, not a candidate).
    assert set(predictions["panel_size"]) == {6}


def test_a_domain_new_to_nobody_gives_no_rows(raw, standard):
    seen = {e: frozenset(DATASETS) for e in raw["encoder"].astype(str).unique()}
    predictions = nd.new_domain_predictions(raw, standard, seen)
    assert predictions.empty and "target_crs" in predictions.columns
    assert nd.new_domain_taus(predictions).empty


def test_predictions_refuse_an_encoder_missing_from_the_mapping(raw, standard):
    seen = everyone(raw)
    del seen["enc03"]
    with pytest.raises(SchemaError, match="'enc03'"):
        nd.new_domain_predictions(raw, standard, seen)


def test_predictions_are_deterministic(raw, standard):
    first = nd.new_domain_predictions(raw, standard, everyone(raw))
    pd.testing.assert_frame_equal(first, nd.new_domain_predictions(raw, standard, everyone(raw)))


def test_taus_on_a_hand_made_table():
    frame = pd.DataFrame({
        "held_out": ["d"] * 4 + ["e"] * 1, "domain": ["d"] * 4 + ["e"],
        "encoder": ["a", "b", "c", "x", "a"],
        "crs": [1.0, 2, 3, 4, 1], "auroc": [4.0, 3, 2, 1, 1],
        "target_crs": [1.0, 2, 3, 4, 1], "target_auroc": [1.0, 2, 4, 3, 1],
    })
    taus = nd.new_domain_taus(frame).set_index(["held_out", "target", "predictor"])
    assert taus.loc[("d", "crs", "crs"), "kendall_tau"] == pytest.approx(1.0)
    assert taus.loc[("d", "crs", "auroc"), "kendall_tau"] == pytest.approx(-1.0)
    assert taus.loc[("d", "auroc", "crs"), "kendall_tau"] == pytest.approx(4 / 6)
    assert taus.loc[("d", "auroc", "crs"), "n_encoders"] == 4
    assert taus.loc[("d", "auroc", "crs"), "tau_resolution"] == pytest.approx(1 / 3)
    # One encoder new to the domain: no pair, no tau.
    assert taus.loc[("e", "crs", "crs"), "n_encoders"] == 1
    assert np.isnan(taus.loc[("e", "crs", "crs"), "kendall_tau"])
    with pytest.raises(SchemaError, match="target_crs"):
        nd.new_domain_taus(frame.drop(columns="target_crs"))


# --- the noise baseline -----------------------------------------------------------------------------------


def test_retest_pairs_are_the_seedwise_rankings(table, standard):
    seen = {e: frozenset() for e in table["encoder"].unique()}
    seen["enc00"] = frozenset({"derm"})
    pairs = nd.new_domain_retest(table, standard, seen)
    assert list(pairs.columns) == list(nd.RETEST_PAIR_COLUMNS)
    derm = pairs[pairs["held_out"] == "derm"]
    within = derm[derm["comparison"] == WITHIN_MEASURE]
    # 3 seeds: 3 pairs per target; 2 predictors x 3 x 3 seed pairs per target across.
    assert len(within) == 2 * 3
    assert (derm["comparison"] == ACROSS_MEASURES_OTHER_SEED).sum() == 2 * 2 * 6
    assert (derm["comparison"] == ACROSS_MEASURES_SAME_SEED).sum() == 2 * 2 * 3
    assert set(derm["n_encoders"]) == {5}
    # Recompute one test-retest pair from the seedwise scores against the LoDO standard.
    raw = standard_axes(table, standard)
    refrozen = lodo.lodo_standard(standard, encoder_profiles(raw[raw["dataset"] != "derm"]), "derm")
    new = [f"enc0{i}" for i in range(1, 6)]
    by_seed = seedwise_scores(table[table["dataset"] == "derm"], refrozen, "frozen", new)
    row = within[(within["target"] == "crs") & (within["seed_a"] == 0) & (within["seed_b"] == 2)].iloc[0]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(by_seed[0], by_seed[2]).statistic)
    outside = seedwise_scores(table[table["dataset"] != "derm"], refrozen, "frozen", new, score="D")
    row = derm[(derm["comparison"] == ACROSS_MEASURES_OTHER_SEED) & (derm["predictor"] == "auroc")
               & (derm["target"] == "crs") & (derm["seed_a"] == 1) & (derm["seed_b"] == 0)].iloc[0]
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(outside[1], by_seed[0]).statistic)


def test_one_seed_has_no_retest_pair(standard):
    single = synthetic_results(n_encoders=5, seeds=(0,), corruptions=("noise",), severities=(1, 3))
    pairs = nd.new_domain_retest(single, standard, {e: frozenset() for e in single["encoder"].unique()})
    assert not (pairs["comparison"] == WITHIN_MEASURE).any()
    assert not (pairs["comparison"] == ACROSS_MEASURES_OTHER_SEED).any()
    raw = standard_axes(single, standard)
    taus = nd.new_domain_taus(nd.new_domain_predictions(raw, standard, {e: frozenset() for e in raw["encoder"].unique()}))
    summary = nd.new_domain_summary(taus, pairs)
    assert (summary["retest_pairs"] == 0).all() and summary["retest_tau"].isna().all()


def test_retest_refuses_an_encoder_missing_from_the_mapping(table, standard):
    with pytest.raises(SchemaError, match="'enc05'"):
        nd.new_domain_retest(table, standard, {f"enc0{i}": frozenset() for i in range(5)})


def test_summary_puts_the_retest_beside_each_tau():
    taus = pd.DataFrame({"held_out": "d", "domain": "d", "target": ["crs", "crs"], "predictor": ["crs", "auroc"],
                         "kendall_tau": [0.5, 0.2], "n_encoders": 4, "tau_resolution": 1 / 3})
    pairs = pd.DataFrame([
        ("d", WITHIN_MEASURE, "", "crs", 0, 1, 0.8, 4), ("d", WITHIN_MEASURE, "", "crs", 0, 2, 0.6, 4),
        ("d", WITHIN_MEASURE, "", "auroc", 0, 1, 0.1, 4),
        ("d", ACROSS_MEASURES_OTHER_SEED, "crs", "crs", 0, 1, 0.4, 4),
        ("d", ACROSS_MEASURES_OTHER_SEED, "crs", "crs", 1, 0, 0.2, 4),
        ("d", ACROSS_MEASURES_SAME_SEED, "crs", "crs", 0, 0, 0.9, 4),
        ("d", ACROSS_MEASURES_OTHER_SEED, "auroc", "crs", 0, 1, -0.2, 4),
    ], columns=list(nd.RETEST_PAIR_COLUMNS))
    summary = nd.new_domain_summary(taus, pairs).set_index("predictor")
    assert summary.loc["crs", "retest_tau"] == pytest.approx(0.7)
    assert (summary.loc["crs", "retest_min"], summary.loc["crs", "retest_max"]) == (0.6, 0.8)
    assert summary.loc["auroc", "retest_tau"] == pytest.approx(0.7)  # the target's, whichever predictor
    assert summary.loc["crs", "one_seed_tau"] == pytest.approx(0.3) and summary.loc["crs", "one_seed_pairs"] == 2
    assert summary.loc["auroc", "one_seed_tau"] == pytest.approx(-0.2)


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(6)))
def test_relabelling_the_encoders_changes_no_tau(order):
    """The taus depend on the scores, not on the encoders' names or row order."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"held_out": "d", "domain": "d", "encoder": [f"e{i}" for i in range(6)],
                          "crs": rng.normal(size=6), "auroc": rng.normal(size=6),
                          "target_crs": rng.normal(size=6), "target_auroc": rng.normal(size=6)})
    shuffled = frame.iloc[list(order)].assign(encoder=[f"z{i}" for i in itertools.islice(order, 6)])
    pd.testing.assert_series_equal(nd.new_domain_taus(frame)["kendall_tau"],
                                   nd.new_domain_taus(shuffled)["kendall_tau"])


def test_the_standards_axis_scales_reach_the_new_domain_retest(monkeypatch):
    table = synthetic_results(n_encoders=4, seeds=(0, 1), corruptions=("noise",), severities=(1,))
    std = freeze_standard(table, "t", created="2026-01-01T00:00:00Z")
    seen = []
    real = nd.standard_axes

    def spy(results, standard, arm="frozen"):
        seen.append(standard)
        return real(results, standard, arm=arm)

    monkeypatch.setattr(nd, "standard_axes", spy)
    everyone = {e: frozenset() for e in sorted(table["encoder"].unique())}
    nd.new_domain_retest(table, std, everyone)
    assert seen and all(s is std for s in seen)


def test_held_out_noise_table_puts_each_held_out_tau_beside_its_targets_baselines():
    from crsbench_lib.scoring.retest import BOOTSTRAP_DRAW, NOISE_BASELINE_COLUMNS, OBSERVED, SEED_REDRAW

    taus = pd.DataFrame({"held_out": ["a", "a", "b", "b", "a"], "target": ["auroc", "auroc", "auroc", "auroc", "crs"],
                         "predictor": ["crs", "auroc", "crs", "auroc", "crs"], "kendall_tau": [0.5, 0.7, 0.2, np.nan, 0.9]})
    retest = pd.DataFrame({"held_out": ["a", "a", "a", "b"],
                           "comparison": [WITHIN_MEASURE, WITHIN_MEASURE, ACROSS_MEASURES_OTHER_SEED, WITHIN_MEASURE],
                           "predictor": ["", "", "crs", ""], "target": "auroc", "kendall_tau": [0.8, 0.6, 0.3, 0.9]})
    boot = pd.DataFrame({"held_out": ["a"] * 3 + ["b"] * 3, "kendall_tau": [0.7, 0.8, 0.9, 0.1, 0.2, 0.3]})
    table = nd.held_out_noise_table(taus, retest, boot)
    assert list(table.columns) == ["held_out", *NOISE_BASELINE_COLUMNS]
    a = table[table["held_out"] == "a"].set_index(["source", "comparison"])["tau"]
    assert a[(OBSERVED, "CRS without a against AUROC on a")].tolist() == [0.5, 0.3]  # averaged, then one seed
    assert a[(SEED_REDRAW, "the AUROC ranking on a")] == pytest.approx(0.7)
    assert a[(BOOTSTRAP_DRAW, "the AUROC ranking on a")] == pytest.approx(0.8)
    b = table[table["held_out"] == "b"]
    assert "AUROC without b against AUROC on b" not in set(b["comparison"])  # a NaN tau gets no row
    with pytest.raises(SchemaError, match="target 'x'"):
        nd.held_out_noise_table(taus, retest, boot, target="x")
