import numpy as np
import pandas as pd
import pytest

from crsbench_lib.errors import SchemaError
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.scoring.axes import encoder_profiles, per_seed_axes, raw_axes, robustness_composite
from crsbench_lib.standard import AXES, RobustnessComposite


def _row(encoder, dataset, seed, condition="clean", auroc=0.8, ece=0.1, label_fraction=1.0, corruption="none",
         severity=0, arm="frozen", calibration="none"):
    return {
        "encoder": encoder, "dataset": dataset, "domain": "d", "task": "multiclass", "seed": seed, "arm": arm,
        "condition": condition, "label_fraction": label_fraction, "corruption": corruption, "severity": severity,
        "calibration": calibration, "auroc": auroc, "ece": ece, "brier": 0.2, "nll": 0.5, "accuracy": 0.7,
        "n_test": 100,
    }


def _cell(encoder, dataset, seed, clean, ece, lf, corr, shift=None):
    """Rows of one cell: clean, one label fraction (0.5), corruptions {(name, sev): auroc}, optional shift."""
    rows = [_row(encoder, dataset, seed, auroc=clean, ece=ece),
            _row(encoder, dataset, seed, "label_fraction", auroc=lf, label_fraction=0.5)]
    rows += [_row(encoder, dataset, seed, "corruption", auroc=a, corruption=c, severity=s) for (c, s), a in corr.items()]
    if shift is not None:
        rows.append(_row(encoder, dataset, seed, "shift", auroc=shift))
    return rows


def tiny_table() -> pd.DataFrame:
    rows = []
    # x seed 0: avg loss (.02+.10+0+.04)/4 = .04, worst max(.06, .02) = .06, shift .05 -> R .05; L .72/.8 = .9
    rows += _cell("a", "x", 0, 0.8, 0.1, 0.72, {("n", 1): 0.78, ("n", 2): 0.70, ("b", 1): 0.82, ("b", 2): 0.76}, 0.75)
    # x seed 1: no loss anywhere (shift above clean is clipped at 0) -> R 0; L .9
    rows += _cell("a", "x", 1, 0.9, 0.05, 0.81, {("n", 1): 0.9, ("n", 2): 0.9, ("b", 1): 0.9, ("b", 2): 0.9}, 0.95)
    # y seed 0: avg .05, worst .1, no shift -> R .075; L .5
    rows += _cell("a", "y", 0, 0.6, 0.2, 0.3, {("n", 1): 0.5, ("n", 2): 0.5, ("b", 1): 0.6, ("b", 2): 0.6})
    # y seed 1: R 0, L 1
    rows += _cell("a", "y", 1, 0.7, 0.1, 0.7, {("n", 1): 0.7, ("n", 2): 0.7, ("b", 1): 0.7, ("b", 2): 0.7})
    # Rows that must be ignored: another arm and a post-hoc calibrated clean row.
    rows.append(_row("a", "x", 0, arm="lora", auroc=0.99, ece=0.0))
    rows.append(_row("a", "x", 0, calibration="temperature", auroc=0.1, ece=0.0))
    return pd.DataFrame(rows)


def test_raw_axes_match_hand_computation():
    raw = raw_axes(tiny_table(), label_fractions=[1.0, 0.5]).set_index(["dataset", "seed"])
    expected = {
        ("x", 0): (0.8, 0.1, 0.9, 0.05, 0.04, 0.06, 0.05),
        ("x", 1): (0.9, 0.05, 0.9, 0.0, 0.0, 0.0, 0.0),
        ("y", 0): (0.6, 0.2, 0.5, 0.075, 0.05, 0.1, np.nan),
        ("y", 1): (0.7, 0.1, 1.0, 0.0, 0.0, 0.0, np.nan),
    }
    columns = ["D", "C", "L", "R", "avg_corruption_loss", "worst_corruption_loss", "shift_loss"]
    for key, values in expected.items():
        np.testing.assert_allclose(raw.loc[key, columns].to_numpy(dtype=float), values, atol=1e-12)
    assert raw["n_corruption_rows"].tolist() == [4, 4, 4, 4]
    assert raw["n_label_fractions"].tolist() == [1, 1, 1, 1]


def test_profile_is_mean_over_seeds_then_datasets():
    profiles = encoder_profiles(raw_axes(tiny_table(), label_fractions=[1.0, 0.5]))
    assert list(profiles.columns) == list(AXES)
    np.testing.assert_allclose(profiles.loc["a"].to_numpy(), [0.75, 0.1125, 0.825, 0.03125], atol=1e-12)


def test_datasets_weigh_the_same_whatever_their_seed_count():
    table = tiny_table()
    # A third seed on x only: x's mean changes, but x still weighs one half.
    extra = pd.DataFrame(_cell("a", "x", 2, 1.0, 0.0, 1.0, {("n", 1): 1.0}, 1.0))
    profiles = encoder_profiles(raw_axes(pd.concat([table, extra], ignore_index=True), label_fractions=[1.0, 0.5]))
    assert profiles.loc["a", "D"] == pytest.approx(((0.8 + 0.9 + 1.0) / 3 + 0.65) / 2)


def test_lora_arm_is_scored_separately():
    raw = raw_axes(tiny_table(), arm="lora", label_fractions=[1.0])
    assert raw["D"].tolist() == [0.99]
    assert np.isnan(raw["L"]).all() and np.isnan(raw["R"]).all()


def test_default_fractions_come_from_the_table():
    raw = raw_axes(tiny_table())
    assert raw["n_label_fractions"].tolist() == [1, 1, 1, 1]


def test_missing_clean_row_names_the_cell():
    table = tiny_table()
    drop = (table["dataset"] == "y") & (table["seed"] == 1) & (table["condition"] == "clean")
    with pytest.raises(SchemaError, match=r"no clean row.*encoder 'a', dataset 'y', seed 1"):
        raw_axes(table[~drop])


def test_encoder_without_any_clean_rows_is_named(synthetic_table):
    table = synthetic_table[~((synthetic_table["encoder"] == "enc02") & (synthetic_table["condition"] == "clean"))]
    with pytest.raises(SchemaError, match="encoder 'enc02'"):
        raw_axes(table)


def test_partial_label_fractions_rejected():
    table = tiny_table()
    with pytest.raises(SchemaError, match=r"lacks label fraction 0\.25 for encoder 'a', dataset 'x', seed 0"):
        raw_axes(table, label_fractions=[1.0, 0.5, 0.25])


def test_no_label_fraction_rows_leaves_L_unavailable():
    table = tiny_table()
    table = table[~((table["dataset"] == "y") & (table["condition"] == "label_fraction"))]
    raw = raw_axes(table, label_fractions=[1.0, 0.5])
    assert raw.loc[raw["dataset"] == "y", "L"].isna().all()
    # The profile's L then comes from dataset x alone.
    assert encoder_profiles(raw).loc["a", "L"] == pytest.approx(0.9)
    without_any = table[table["condition"] != "label_fraction"]
    with pytest.raises(SchemaError, match="encoder 'a' has axis L unavailable on every dataset"):
        encoder_profiles(raw_axes(without_any, label_fractions=[1.0, 0.5]))


def test_robustness_from_shift_alone_and_none_at_all():
    table = tiny_table()
    no_corruption = table[table["condition"] != "corruption"]
    raw = raw_axes(no_corruption, label_fractions=[1.0, 0.5]).set_index(["dataset", "seed"])
    assert raw.loc[("x", 0), "R"] == pytest.approx(0.05)
    assert np.isnan(raw.loc[("y", 0), "R"])
    nothing = no_corruption[no_corruption["condition"] != "shift"]
    with pytest.raises(SchemaError, match="axis R unavailable"):
        encoder_profiles(raw_axes(nothing, label_fractions=[1.0, 0.5]))


def test_unknown_arm_and_empty_arm():
    with pytest.raises(SchemaError, match="unknown arm"):
        raw_axes(tiny_table(), arm="adapter")
    table = tiny_table()
    with pytest.raises(SchemaError, match="no rows for arm 'lora'"):
        raw_axes(table[table["arm"] == "frozen"], arm="lora")


def test_schema_errors_pass_through():
    with pytest.raises(SchemaError, match="missing required column 'auroc'"):
        raw_axes(tiny_table().drop(columns=["auroc"]))


def test_per_seed_array_matches_raw(synthetic_table):
    raw = raw_axes(synthetic_table)
    encoders, datasets, seeds, values = per_seed_axes(raw)
    assert values.shape == (8, 3, 3, 4)
    row = raw[(raw["encoder"] == encoders[2]) & (raw["dataset"] == datasets[1]) & (raw["seed"] == seeds[0])]
    np.testing.assert_array_equal(values[2, 1, 0], row[list(AXES)].to_numpy()[0])


def test_per_seed_array_rejects_unpaired_seeds(synthetic_table):
    raw = raw_axes(synthetic_table)
    unpaired = raw[~((raw["encoder"] == "enc01") & (raw["seed"] == 2))]
    with pytest.raises(SchemaError, match="missing encoder 'enc01'"):
        per_seed_axes(unpaired)


def test_repeated_shift_rows_rejected():
    table = tiny_table()
    extra = pd.DataFrame([_row("a", "x", 0, "shift", auroc=0.7, corruption="blur", severity=0)])
    with pytest.raises(SchemaError, match="several shift rows"):
        raw_axes(pd.concat([table, extra], ignore_index=True), label_fractions=[1.0, 0.5])


def test_corruption_loss_uses_the_paired_clean_reference_where_present():
    table = tiny_table()
    x0 = (table["encoder"] == "a") & (table["dataset"] == "x") & (table["seed"] == 0) & (table["arm"] == "frozen")
    corrupted = x0 & (table["condition"] == "corruption")
    # The corrupted subset's clean AUROC is 0.79, not the cell's 0.8: losses
    # become (.01+.09+0+.03)/4 = .0325 on average, worst max(.05, .01) = .05.
    table["auroc_reference"] = np.where(corrupted, 0.79, np.nan)
    raw = raw_axes(table, label_fractions=[1.0, 0.5]).set_index(["dataset", "seed"])
    np.testing.assert_allclose(raw.loc[("x", 0), ["avg_corruption_loss", "worst_corruption_loss"]].to_numpy(dtype=float),
                               [0.0325, 0.05], atol=1e-12)
    np.testing.assert_allclose(raw.loc[("x", 1), ["avg_corruption_loss"]].to_numpy(dtype=float), [0.0], atol=1e-12)


def test_a_validated_table_is_not_checked_again_and_keeps_its_axes(synthetic_table, monkeypatch):
    import crsbench_lib.results.validated as validated
    import crsbench_lib.scoring.axes as axes_module
    from crsbench_lib.results.validated import as_validated

    table = as_validated(synthetic_table)
    fractions = sorted({float(f) for f in synthetic_table["label_fraction"]}, reverse=True)
    expected = raw_axes(synthetic_table, label_fractions=fractions)
    monkeypatch.setattr(validated, "validate_results", lambda *a, **k: pytest.fail("validated twice"))
    first = raw_axes(table, label_fractions=tuple(fractions))
    pd.testing.assert_frame_equal(first, expected)
    monkeypatch.setattr(axes_module, "_raw_axes", lambda *a, **k: pytest.fail("computed twice"))
    again = raw_axes(table, label_fractions=list(fractions))  # the same fractions, another sequence
    pd.testing.assert_frame_equal(again, expected)
    again["D"] = 0.0  # each call has its own copy: the kept axes stay as computed
    pd.testing.assert_frame_equal(raw_axes(table, label_fractions=fractions), expected)


def test_debiased_calibration_axis_reads_its_own_column():
    table = tiny_table().assign(ece_debiased=lambda t: t["ece"] - 0.03)
    plugin = raw_axes(table, label_fractions=[1.0, 0.5]).set_index(["dataset", "seed"])
    debiased = raw_axes(table, label_fractions=[1.0, 0.5], ece_estimator="debiased").set_index(["dataset", "seed"])
    np.testing.assert_allclose(debiased["C"], plugin["C"] - 0.03, atol=1e-12)
    pd.testing.assert_frame_equal(debiased.drop(columns="C"), plugin.drop(columns="C"))


def test_debiased_calibration_axis_without_its_column_is_named():
    with pytest.raises(SchemaError, match=r"column 'ece_debiased' is missing or NaN for encoder 'a', dataset 'x', "
                                          r"seed 0 .*crsbench recompute"):
        raw_axes(tiny_table(), ece_estimator="debiased")
    with pytest.raises(SchemaError, match="unknown ECE estimator 'binned'"):
        raw_axes(tiny_table(), ece_estimator="binned")


def test_declared_robustness_counts_no_term_twice():
    # The study's mean gives the worst family (inside the average) a share of its own; the template's
    # composite averages the corruption average and the site term only (method amendment 23).
    composite = RobustnessComposite((0.5, 0.0, 0.5))
    raw = raw_axes(tiny_table(), label_fractions=[1.0, 0.5], robustness=composite).set_index(["dataset", "seed"])
    assert raw.loc[("x", 0), "R"] == pytest.approx((0.04 + 0.05) / 2)  # study: (0.04 + 0.06 + 0.05) / 3
    assert raw.loc[("y", 0), "R"] == pytest.approx(0.05)  # no second site: the average alone (study: 0.075)
    study = raw_axes(tiny_table(), label_fractions=[1.0, 0.5]).set_index(["dataset", "seed"])
    assert study.loc[("x", 0), "R"] == pytest.approx(0.05)
    # A family that only the worst term sees moves the study's R twice as much as its own share of the average.
    pieces = np.array([[0.04, 0.06, 0.05]])
    bumped = pieces + np.array([[0.01, 0.01, 0.0]])  # the worst family's loss rises 0.02 of 2 families
    assert (robustness_composite(bumped) - robustness_composite(pieces))[0] == pytest.approx(0.02 / 3)
    assert (robustness_composite(bumped, composite) - robustness_composite(pieces, composite))[0] == pytest.approx(0.005)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=3, max_size=3))
def test_study_composite_is_the_plain_mean_of_available_pieces(values):
    # Absent from a standard, the composite is the study's, to the last bit: v1-v7 score exactly as before.
    pieces = np.array([np.nan if v is None else v for v in values], dtype=float)
    available = pieces[~np.isnan(pieces)]
    expected = available.sum() / len(available) if len(available) else np.nan
    np.testing.assert_array_equal(robustness_composite(pieces[None])[0], expected)
    equal = RobustnessComposite((1 / 3, 1 / 3, 1 / 3))
    np.testing.assert_allclose(robustness_composite(pieces[None], equal)[0], expected, atol=1e-12)
