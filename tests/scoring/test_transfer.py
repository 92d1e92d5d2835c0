import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.transfer import auroc_gain, rank_comparison, top_k, transfer_summary, transfer_uncertainty


def scores(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame({"encoder": list(values), "crs": list(values.values())})


def test_identical_rankings():
    s = scores({"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.3})
    summary = transfer_summary(s, s)
    assert summary.kendall_tau == pytest.approx(1.0)
    assert summary.top_k_overlap == 3 and summary.top_k_frozen == ("a", "b", "c")


def test_reversal_and_shared_encoders_only():
    frozen = scores({"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.3, "hog": 0.6})
    lora = scores({"a": 0.3, "b": 0.5, "c": 0.7, "d": 0.9})
    summary = transfer_summary(frozen, lora, k=2)
    assert summary.n_encoders == 4
    assert summary.kendall_tau == pytest.approx(-1.0)
    assert summary.top_k_overlap == 0
    table = rank_comparison(frozen, lora)
    assert list(table["encoder"]) == ["a", "b", "c", "d"]
    assert list(table["rank_change"]) == [-3, -1, 1, 3]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=3, max_size=15), st.integers(1, 5))
def test_tau_matches_scipy_and_overlap_bounded(pairs, k):
    names = [f"e{i}" for i in range(len(pairs))]
    frozen = pd.DataFrame({"encoder": names, "crs": [p[0] for p in pairs]})
    lora = pd.DataFrame({"encoder": names, "crs": [p[1] for p in pairs]})
    summary = transfer_summary(frozen, lora, k=k)
    expected = stats.kendalltau(frozen["crs"], lora["crs"]).statistic
    if np.isnan(expected):
        assert np.isnan(summary.kendall_tau)
    else:
        assert summary.kendall_tau == pytest.approx(expected)
    assert 0 <= summary.top_k_overlap <= min(k, len(pairs))


def test_top_k_ties_broken_by_name():
    assert top_k(pd.Series({"b": 1.0, "a": 1.0, "c": 0.5}), 2) == ("a", "b")


def test_auroc_gain_matches_hand_computation():
    table = synthetic_results(n_encoders=3, seeds=(0, 1), corruptions=(), arms=("frozen", "lora"))
    gain = auroc_gain(table, by_dataset=True)
    clean = table[(table["condition"] == "clean") & (table["calibration"] == "none")]
    sel = clean[(clean["encoder"] == "enc01") & (clean["dataset"] == "cxr")]
    expected = sel[sel["arm"] == "lora"]["auroc"].mean() - sel[sel["arm"] == "frozen"]["auroc"].mean()
    row = gain[(gain["encoder"] == "enc01") & (gain["dataset"] == "cxr")].iloc[0]
    assert row["auroc_gain"] == pytest.approx(expected)
    per_encoder = auroc_gain(table)
    assert per_encoder.set_index("encoder").loc["enc01", "auroc_gain"] == pytest.approx(
        gain[gain["encoder"] == "enc01"]["auroc_gain"].mean()
    )
    summary = transfer_summary(scores({"enc00": 1, "enc01": 0.5, "enc02": 0.2}), scores({"enc00": 1, "enc01": 0.5, "enc02": 0.2}), per_encoder)
    assert summary.mean_auroc_gain == pytest.approx(per_encoder["auroc_gain"].mean())


def test_errors():
    with pytest.raises(SchemaError, match="share 1 encoder"):
        rank_comparison(scores({"a": 1, "b": 0}), scores({"a": 1, "c": 0}))
    with pytest.raises(SchemaError, match="missing column 'crs'"):
        rank_comparison(pd.DataFrame({"encoder": ["a"]}), scores({"a": 1}))
    with pytest.raises(SchemaError, match="duplicate encoder"):
        rank_comparison(scores({"a": 1, "b": 0}).pipe(lambda d: pd.concat([d, d])), scores({"a": 1, "b": 0}))
    frozen_only = synthetic_results(n_encoders=2, seeds=(0,), corruptions=())
    with pytest.raises(SchemaError, match="both the frozen and the lora arm"):
        auroc_gain(frozen_only)
    with pytest.raises(ValueError, match="k must be"):
        transfer_summary(scores({"a": 1, "b": 0}), scores({"a": 1, "b": 0}), k=0)


def test_transfer_uncertainty_over_encoders():
    frozen = scores({f"e{i}": 0.3 + 0.05 * i for i in range(7)})
    lora = scores({f"e{i}": v for i, v in enumerate([0.40, 0.35, 0.50, 0.45, 0.60, 0.70, 0.55])} | {"hand": 0.2})
    u = transfer_uncertainty(frozen, lora, n_draws=500)
    summary = transfer_summary(frozen, lora)
    assert u.estimate == pytest.approx(summary.kendall_tau)
    assert u.n == 7 and u.p_method == "exact" and u.n_permutations == 5040
    # Without ties, the exact permutation test is scipy's exact Kendall test.
    frame = rank_comparison(frozen, lora)
    assert u.p_value == pytest.approx(stats.kendalltau(frame["crs_frozen"], frame["crs_lora"], method="exact").pvalue)
    assert u.interval_method == "item_bootstrap" and u.ci_low <= u.estimate <= u.ci_high
    assert u == transfer_uncertainty(frozen, lora, n_draws=500)


def test_transfer_uncertainty_over_draws():
    names = [f"e{i}" for i in range(5)]
    frozen = scores(dict(zip(names, [0.5, 0.4, 0.3, 0.2, 0.1], strict=True)))
    lora = scores(dict(zip(names, [0.5, 0.3, 0.4, 0.2, 0.1], strict=True)))
    rng = np.random.default_rng(0)
    frozen_draws = frozen["crs"].to_numpy() + rng.normal(0, 0.03, (400, 5))
    lora_draws = lora["crs"].to_numpy() + rng.normal(0, 0.03, (400, 5))
    # Draw columns in another order than the score tables: aligned by name.
    order = [3, 0, 4, 1, 2]
    u = transfer_uncertainty(
        frozen, lora, frozen_draws=frozen_draws[:, order], lora_draws=lora_draws[:, order],
        encoders=[names[i] for i in order],
    )
    per_draw = [stats.kendalltau(a, b).statistic for a, b in zip(frozen_draws, lora_draws, strict=True)]
    assert (u.ci_low, u.ci_high) == pytest.approx(tuple(np.percentile(per_draw, [2.5, 97.5])))
    assert u.interval_method == "draws" and u.n_draws == 400
    with pytest.raises(ValueError, match="encoders"):
        transfer_uncertainty(frozen, lora, frozen_draws=frozen_draws, lora_draws=lora_draws)
    with pytest.raises(ValueError, match="both draw matrices"):
        transfer_uncertainty(frozen, lora, frozen_draws=frozen_draws, encoders=names)
    with pytest.raises(SchemaError, match="no column for encoder"):
        transfer_uncertainty(frozen, lora, frozen_draws=frozen_draws, lora_draws=lora_draws, encoders=names[:4] + ["x"])
    with pytest.raises(SchemaError, match="expected shape"):
        transfer_uncertainty(frozen, lora, frozen_draws=frozen_draws[:, :4], lora_draws=lora_draws, encoders=names)


def test_a_reference_counts_neither_in_tau_nor_in_a_leading_set():
    frozen = scores({"ref": 0.95, "a": 0.9, "b": 0.7, "c": 0.5, "d": 0.3})
    lora = scores({"ref": 0.2, "a": 0.8, "b": 0.85, "c": 0.4, "d": 0.1})
    plain, kept = transfer_summary(frozen, lora, k=2), transfer_summary(frozen, lora, k=2, references=["ref"])
    # The same tau as scoring the candidates alone (the transfer page's way): one policy, one number.
    alone = transfer_summary(frozen[frozen["encoder"] != "ref"], lora[lora["encoder"] != "ref"], k=2)
    assert kept.kendall_tau == alone.kendall_tau != plain.kendall_tau and kept.n_encoders == 4
    assert kept.top_k_frozen == ("a", "b") and kept.top_k_lora == ("b", "a") and kept.top_k_overlap == 2
    assert plain.top_k_frozen == ("ref", "a")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-0.05, 0.05, allow_nan=False), min_size=2, max_size=12), st.integers(0, 5))
def test_mean_gain_interval_lies_within_the_gains_and_is_deterministic(values, seed):
    from crsbench_lib.scoring.transfer import mean_gain_interval

    gains = pd.DataFrame({"encoder": [f"e{i}" for i in range(len(values))], "auroc_gain": values})
    low, high = mean_gain_interval(gains, n_draws=200, random_state=seed)
    assert min(values) - 1e-12 <= low <= high <= max(values) + 1e-12
    assert (low, high) == mean_gain_interval(gains, n_draws=200, random_state=seed)
    assert all(np.isnan(mean_gain_interval(gains.iloc[:1])))


# The transfer chapter's computations: runs, adapter reports of the runs, paired draws, axis changes, ECE by calibrator.

def test_adapted_runs_and_their_training_rows():
    from crsbench_lib.scoring.transfer import adapted_runs, training_of_runs

    table = synthetic_results(n_encoders=3, seeds=(0, 1), corruptions=("noise",), arms=("frozen", "lora"))
    runs = adapted_runs(table)
    assert len(runs) == 3 * 3 * 2 and list(runs.columns) == ["encoder", "dataset", "seed"]
    training = pd.DataFrame({"encoder": ["enc00", "enc00", "other"], "dataset": ["derm", "derm", "derm"],
                             "seed": [0, 7, 0], "steps_run": [10, 20, 30]})
    kept = training_of_runs(training, table)
    assert list(kept["steps_run"]) == [10]


class _Boot:
    def __init__(self, encoders, point, draws):
        self.encoders = tuple(encoders)
        self.point_profiles = pd.DataFrame(point, index=list(encoders), columns=["D", "C", "L", "R"])
        self.profile_draws = np.asarray(draws, dtype=float)


def test_axis_changes_are_paired_means_with_their_draws_interval():
    from crsbench_lib.scoring.transfer import axis_changes

    rng = np.random.default_rng(0)
    frozen_point = rng.uniform(0, 1, (3, 4))
    frozen_draws = frozen_point[None] + rng.normal(0, 0.01, (200, 3, 4))
    shift = np.array([0.02, -0.01, 0.0, 0.005])
    frozen = _Boot(["a", "b", "c"], frozen_point, frozen_draws)
    lora = _Boot(["a", "b", "c"], frozen_point + shift, frozen_draws + shift)  # the same shift in every draw
    table = axis_changes(frozen, lora, {"a": "x", "b": "x", "c": "y"})
    assert list(dict.fromkeys(table["group"])) == ["all", "x", "y"]
    d = table[(table["group"] == "x") & (table["axis"] == "D")].iloc[0]
    assert d["n_encoders"] == 2 and d["change"] == pytest.approx(0.02)
    assert d["ci_low"] == pytest.approx(0.02) and d["ci_high"] == pytest.approx(0.02)
    assert table.set_index(["group", "axis"]).loc[("all", "C"), "change"] == pytest.approx(-0.01)
    noisy = _Boot(["a", "b", "c"], frozen_point + shift, frozen_draws + shift + rng.normal(0, 0.01, (200, 3, 4)))
    spread = axis_changes(frozen, noisy).set_index("axis")
    assert ((spread["ci_low"] < spread["change"]) & (spread["change"] < spread["ci_high"])).all()
    assert abs(table["bias"]).max() < 1e-12  # the same shift in every draw: the draws centre on the point
    with pytest.raises(SchemaError, match="share encoders, seeds, random_state and draws"):
        axis_changes(frozen, _Boot(["a", "b"], frozen_point[:2], frozen_draws[:, :2]))
    other_seeds = _Boot(["a", "b", "c"], frozen_point, frozen_draws)
    other_seeds.seeds = (0, 1)
    with pytest.raises(SchemaError, match="share encoders, seeds"):
        axis_changes(frozen, other_seeds)


def test_ece_by_calibrator_compares_the_arms_per_calibrator():
    from crsbench_lib.scoring.transfer import ece_by_calibrator

    table = synthetic_results(n_encoders=3, seeds=(0,), corruptions=("noise",), arms=("frozen", "lora"))
    out = ece_by_calibrator(table)
    assert out["calibration"].iloc[0] == "none"
    # A cell the adapted arm lacks leaves both means: they cover the same cells.
    missing = (table["arm"] == "lora") & (table["encoder"] == "enc00") & (table["dataset"] == "derm")
    fewer = ece_by_calibrator(table[~missing])
    kept = table[(table["condition"] == "clean") & (table["calibration"] == "none") & (table["arm"] == "frozen")
                 & ~((table["encoder"] == "enc00") & (table["dataset"] == "derm"))]
    assert fewer.iloc[0]["ece_frozen"] == pytest.approx(kept["ece"].mean())
    clean = table[(table["condition"] == "clean") & (table["calibration"] == "none")]
    assert out.iloc[0]["ece_frozen"] == pytest.approx(clean.loc[clean["arm"] == "frozen", "ece"].mean())
    assert np.allclose(out["change"], out["ece_lora"] - out["ece_frozen"])
    with pytest.raises(SchemaError, match="both the frozen and the lora arm"):
        ece_by_calibrator(table[table["arm"] == "frozen"], encoders=["enc00"])


def test_same_resamples_needs_the_same_datasets_encoders_seeds_and_test_sets():
    from types import SimpleNamespace

    from crsbench_lib.scoring.transfer import same_resamples

    def arrays(encoders=("a", "b"), seeds=(0, 1), n_test=20, shift=None):
        clean = np.zeros((len(encoders), len(seeds), n_test, 2))
        shift_proba = None if shift is None else np.zeros((len(encoders), len(seeds), shift, 2))
        return {"derm": SimpleNamespace(encoders=encoders, seeds=seeds, clean=clean, shift_proba=shift_proba)}

    assert same_resamples(arrays(), arrays())
    assert same_resamples(arrays(shift=10), arrays(shift=10))
    assert not same_resamples(arrays(), arrays(seeds=(0,)))
    assert not same_resamples(arrays(), arrays(encoders=("a",)))
    assert not same_resamples(arrays(), arrays(n_test=30))
    assert not same_resamples(arrays(shift=10), arrays())
    assert not same_resamples(arrays(shift=10), arrays(shift=12))
    assert not same_resamples(arrays(), {"cxr": arrays()["derm"]})


def test_adapted_fractions_count_the_protocol_column_per_fraction() -> None:
    from crsbench_lib.scoring.transfer import adapted_fractions

    table = synthetic_results(n_encoders=3, seeds=(0, 1), arms=("frozen", "lora"))
    fractions = table["condition"] == "label_fraction"
    lora = table["arm"] == "lora"
    table["features"] = np.where(lora, "adapted", "frozen")
    scarce = fractions & lora & (table["label_fraction"] < 0.1)
    table.loc[scarce, "features"] = "frozen"
    counts = adapted_fractions(table)
    assert counts["label_fraction"].tolist() == sorted(set(table.loc[fractions, "label_fraction"]), reverse=True)
    per_fraction = table[fractions & lora].groupby("label_fraction").size()
    for row in counts.itertuples():
        assert row.n_rows == per_fraction[row.label_fraction] == row.n_adapted + row.n_frozen + row.n_unknown
        assert (row.n_frozen == row.n_rows) == (row.label_fraction < 0.1) and row.n_unknown == 0
    # A table written before the column: every row unknown, none counted as adapted or frozen.
    old = adapted_fractions(table.drop(columns="features"))
    assert (old["n_unknown"] == old["n_rows"]).all() and old["n_adapted"].sum() == 0
