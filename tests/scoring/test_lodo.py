import numpy as np
import pandas as pd
import pytest
from scipy import stats

from crsbench_lib.errors import SchemaError
from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring import crs, encoder_profiles, freeze_standard, lodo, raw_axes


def raw_table(rng: np.random.Generator, n_enc: int = 6, datasets=("derm", "fundus", "cxr"), seeds=(0, 1)) -> pd.DataFrame:
    rows = []
    for e in range(n_enc):
        for d in datasets:
            for s in seeds:
                rows.append({"encoder": f"e{e}", "dataset": d, "seed": s, "D": 0.6 + 0.05 * e + rng.normal(0, 0.01),
                             "C": rng.uniform(0, 0.2), "L": rng.uniform(0.7, 1), "R": rng.uniform(0, 0.1)})
    return pd.DataFrame(rows)


def test_predictors_and_taus():
    raw = raw_table(np.random.default_rng(0))
    scorer = lambda p: p["D"] - p["C"]  # noqa: E731
    result = lodo.leave_one_dataset_out(raw, scorer=scorer)
    assert set(result["held_out"]) == {"derm", "fundus", "cxr"}
    assert set(result["predictor"]) == {"crs", "auroc", "C", "L", "R"}
    held = result[(result["held_out"] == "cxr") & (result["predictor"] == "auroc")].iloc[0]
    target = raw[raw["dataset"] == "cxr"].groupby("encoder")["D"].mean()
    baseline = raw[raw["dataset"] != "cxr"].groupby(["encoder", "dataset"])["D"].mean().groupby("encoder").mean()
    assert held["kendall_tau"] == pytest.approx(stats.kendalltau(baseline, target.reindex(baseline.index)).statistic)
    # AUROC is driven by the encoder index, so the baseline ranks the held-out set perfectly
    assert held["kendall_tau"] == pytest.approx(1.0)
    # orientation: C is negated (lower ECE is better)
    c_row = result[(result["held_out"] == "cxr") & (result["predictor"] == "C")].iloc[0]
    reduced_c = raw[raw["dataset"] != "cxr"].groupby(["encoder", "dataset"])["C"].mean().groupby("encoder").mean()
    assert c_row["kendall_tau"] == pytest.approx(stats.kendalltau(-reduced_c, target.reindex(reduced_c.index)).statistic)
    summary = lodo.lodo_summary(result)
    assert list(summary.columns) == ["crs", "auroc", "C", "L", "R"]
    assert summary.loc["mean", "auroc"] == pytest.approx(1.0)


def test_constant_predictor_gives_nan():
    raw = raw_table(np.random.default_rng(1))
    result = lodo.leave_one_dataset_out(raw, scorer=lambda p: pd.Series(0.5, index=p.index))
    assert result.loc[result["predictor"] == "crs", "kendall_tau"].isna().all()


def test_shift_prediction():
    table = synthetic_results(n_encoders=5, seeds=(0, 1), corruptions=())
    clean = table[(table["condition"] == "clean") & (table["calibration"] == "none")]
    auroc = clean[clean["dataset"] == "cxr"].groupby("encoder")["auroc"].mean()
    scores = pd.DataFrame({"encoder": auroc.index.astype(str), "crs": auroc.to_numpy()})
    result = lodo.shift_prediction(table, scores)
    assert list(result["dataset"]) == ["cxr", "cxr"]
    row = result.set_index("predictor")
    assert row.loc["crs", "kendall_tau"] == pytest.approx(row.loc["clean_auroc", "kendall_tau"])
    with pytest.raises(SchemaError, match="no shift rows"):
        lodo.shift_prediction(table[table["condition"] != "shift"], scores)


def test_errors():
    raw = raw_table(np.random.default_rng(2))
    with pytest.raises(ValueError, match="standard or a scorer"):
        lodo.leave_one_dataset_out(raw)
    with pytest.raises(SchemaError, match="at least 2 datasets"):
        lodo.leave_one_dataset_out(raw[raw["dataset"] == "derm"], scorer=lambda p: p["D"])
    with pytest.raises(SchemaError, match="missing column"):
        lodo.leave_one_dataset_out(raw.drop(columns="L"), scorer=lambda p: p["D"])


def test_with_the_real_standard_matches_scoring_the_reduced_table():
    table = synthetic_results(n_encoders=6, seeds=(0, 1), corruptions=("noise",), severities=(1, 3))
    standard = freeze_standard(table, "t", created="2026-01-01T00:00:00Z")
    raw = raw_axes(table)
    result = lodo.leave_one_dataset_out(raw, standard)
    reduced = crs.score_profiles(encoder_profiles(raw[raw["dataset"] != "fundus"]), standard).set_index("encoder")
    target = raw[raw["dataset"] == "fundus"].groupby("encoder")["D"].mean()
    expected = stats.kendalltau(reduced["crs"].sort_index(), target.sort_index()).statistic
    got = result[(result["held_out"] == "fundus") & (result["predictor"] == "crs")]["kendall_tau"].item()
    assert got == pytest.approx(expected)
