import pandas as pd
import pytest

from crsbench_lib.report import differences
from crsbench_lib.scoring import axes
from crsbench_lib.standard import AXES, HIGHER_IS_BETTER


def test_cohort_facts_count_the_table(table):
    facts = differences.cohort_facts(table).set_index("fact")
    assert facts.loc["encoders", "this_build"] == str(table["encoder"].nunique())
    assert facts.loc["encoders", "study"] == "15"
    lora = table[table["arm"] == "lora"]
    runs = facts.loc["LoRA runs (encoder x dataset x seed)"]
    assert runs["study"] == "135"
    assert runs["this_build"] == str(len(lora[["encoder", "dataset", "seed"]].drop_duplicates()))
    same = table.assign(n_test=500)
    assert differences.cohort_facts(same).set_index("fact").loc["test images per dataset", "this_build"] == "500"


def test_observed_anchors_are_oriented_by_direction(table):
    profiles = axes.encoder_profiles(axes.raw_axes(table))
    spans = differences.observed_anchors(profiles)
    for axis, (worst, best) in spans.items():
        assert (best > worst) == HIGHER_IS_BETTER[axis]
    flat = profiles.assign(D=0.7)
    with pytest.raises(ValueError, match="axis D"):
        differences.observed_anchors(flat)


def test_anchor_sensitivity_one_row_per_choice(table, standard):
    out = differences.anchor_sensitivity(table, standard)
    assert list(out["anchors_from_cohort"]) == [*AXES, differences.ALL_AXES]
    assert out["tau_to_standard"].between(-1, 1).all()
    assert out["top_k_overlap"].between(0, differences.TOP).all()


def test_explain_differences_follows_each_row():
    comparison = pd.DataFrame({"quantity": ["tau", "r", "lora"], "study": [0.6, 0.63, 0.56],
                               "this_build": [0.3, 0.64, float("nan")]})
    lines = differences.explain_differences(comparison)
    assert "lower than the study's" in lines[0]
    assert "close to" in lines[1]
    assert "no such quantity" in lines[2]


def test_simulation_limits_table():
    limits = differences.simulation_limits()
    assert len(limits) == len(differences.SIMULATION_LIMITS) and limits.shape[1] == 2


def test_cohort_facts_name_the_second_site_by_what_it_is(table):
    shifted = table.loc[table["condition"] == "shift", "dataset"].nunique()
    assert shifted, "the fixture should hold a second site"
    n = table["dataset"].nunique()
    shift = "institutional shift"
    assert differences.cohort_facts(table).set_index("fact").loc[shift, "this_build"] == (
        f"simulated site B ({shifted} of {n} datasets)")
    own = differences.cohort_facts(table, simulated=False).set_index("fact").loc[shift, "this_build"]
    assert own == f"a second site ({shifted} of {n} datasets)" and "simulated" not in own
    one_site = table[table["condition"] != "shift"]
    assert differences.cohort_facts(one_site, simulated=False).set_index("fact").loc[shift, "this_build"] == "none"


def _compared():
    return pd.DataFrame({"quantity": ["Kendall tau (AUROC vs CRS, full panel)", "calibration: min ECE reduction",
                                      "calibration: max ECE reduction"],
                         "study": [0.6, 0.54, 0.77], "this_build": [0.9, 0.09, 0.33]})


def test_gap_bearings_reads_the_floor_axis_and_the_ece_floor():
    d_floor = pd.DataFrame({"s_D": [0.3, 0.5, 0.6], "s_C": [0.8, 0.9, 0.7], "s_L": [0.7, 0.8, 0.9],
                            "s_R": [0.6, 0.7, 0.8], "crs": [0.4, 0.55, 0.62]})
    floor = pd.DataFrame({"ece": [0.04, 0.06], "ece_floor": [0.03, 0.03]})
    rows = differences.gap_bearings(d_floor, floor, _compared()).set_index("quantity")
    tau = rows.loc["Kendall tau (AUROC vs CRS, full panel)"]
    assert tau["where"] == "agreement" and tau["this_build"] == 0.9
    assert tau["measured here that bears on the gap"].startswith("discrimination (D) is the lowest normalised axis "
                                                                 "of 3 of 3 candidates, and the normalised AUROC")
    ece = rows.loc["calibration: ECE reduction"]
    assert ece["study"] == "0.54 to 0.77" and ece["this_build"] == "0.09 to 0.33" and ece["where"] == "calibration"
    assert "60 % of the mean clean ECE (0.030 of 0.050)" in ece["measured here that bears on the gap"]
    # Another floor axis: named, with no claim that AUROC is copied into the CRS.
    c_floor = d_floor.assign(s_C=[0.1, 0.2, 0.3])
    other = differences.gap_bearings(c_floor, floor, _compared()).iloc[0]["measured here that bears on the gap"]
    assert other.startswith("calibration (C) is the lowest") and "copies AUROC" not in other
    # Nothing to measure: no rows.
    assert differences.gap_bearings(d_floor.iloc[:0], floor.assign(ece_floor=float("nan")), _compared()).empty


def test_the_calibration_bearing_reads_the_debiased_ece_and_calls_the_floor_a_bound():
    # Amendment 27: the floor bounds the finite-sample bias from above; the cap on a relative reduction is
    # the debiased share, not one minus the floor's share.
    import pandas as pd

    from crsbench_lib.report.differences import gap_bearings

    scores = pd.DataFrame({"s_D": [0.3, 0.5, 0.6], "s_C": [0.8, 0.9, 0.7], "s_L": [0.7, 0.8, 0.9],
                           "s_R": [0.6, 0.7, 0.8], "crs": [0.4, 0.55, 0.62]})
    floor = pd.DataFrame({"ece": [0.04, 0.06], "ece_floor": [0.02, 0.03], "ece_debiased": [0.03, 0.05]})
    compared = pd.DataFrame({"quantity": ["calibration: min ECE reduction", "calibration: max ECE reduction"],
                             "study": [0.54, 0.77], "this_build": [0.1, 0.3]})
    text = gap_bearings(scores, floor, compared)["measured here that bears on the gap"].iloc[0]
    assert "the debiased ECE is 80 % of the mean clean plug-in ECE (0.040 of 0.050)" in text
    assert "capped near 80 %" in text and "only bounds that bias from above" in text
