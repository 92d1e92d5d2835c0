"""The calibration and corruption sentences follow their intervals."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report import grammar
from crsbench_lib.report.sentences import stress

values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


@given(before=positive, after=positive, low=values, width=st.floats(min_value=0, max_value=100, allow_nan=False))
def test_excess_verdict_helps_only_when_the_interval_lies_below_zero(before, after, low, width):
    high = low + width
    text = stress.describe_calibrator_verdict("temperature", before, after, (low, high))
    helps = high < 0
    assert text.startswith("temperature helps:") == helps
    assert ("does not help" in text) == (not helps)
    assert ("makes calibration worse" in text) == (low > 0)
    # The change itself is still described by its own numbers.
    assert ("rose" in text) == (after > before and abs(after - before) / before >= grammar.NEGLIGIBLE_RELATIVE)


def test_excess_verdict_says_plainly_when_calibration_does_not_help():
    text = stress.describe_calibrator_verdict("isotonic", 0.010, 0.014, (0.001, 0.007))
    assert text.startswith("isotonic does not help, it makes calibration worse: the mean debiased ECE rose")
    assert "cut" not in text and "fell" not in text


def test_robustness_faces_follow_the_interval_of_r():
    from crsbench_lib.report.sentences.stress import describe_robustness_faces


    assert "largely move together" in describe_robustness_faces(0.84, (0.72, 0.91))
    partly = describe_robustness_faces(0.4, (0.1, 0.65), level=0.9)
    assert partly.startswith("r² = 0.16: across cells, the AUROC loss accounts for 16 % of the variance")
    assert "the whole 90 % interval of r [0.10, 0.65] lies below 0.7, so on this cohort they are at most partly aligned" in partly
    assert "straddles 0.7, so these cells do not pin down" in describe_robustness_faces(0.7, (0.4, 0.9))


@given(before=positive, after=positive, floor=st.floats(min_value=1e-3, max_value=1.0))
def test_excess_verdict_size_is_judged_against_the_floor(before, after, floor):
    text = stress.describe_calibrator_verdict("temperature", before, after, (-1.0, 1.0), floor=floor)
    if abs(after - before) / before < grammar.NEGLIGIBLE_RELATIVE:
        return
    # "large" only when the change reaches the floor itself, whatever share of the excess it is.
    assert ("a large" in text) == (abs(after - before) >= floor)
    assert "beside it" in text


def test_a_fall_of_a_quarter_of_the_floor_is_small():
    # Regression (issue 27): "a large improvement" for a 0.006 change beside a 0.023 floor.
    text = stress.describe_calibrator_verdict("temperature", 0.0162, 0.0102, (-0.012, -0.001), floor=0.023)
    assert text.startswith("temperature helps:") and "large" not in text
    assert "the fall of 0.006 is 0.26 times the mean ECE floor of 0.023, a small improvement beside it" in text


def test_robustness_faces_interval_keeps_its_sign():
    from crsbench_lib.report.sentences.stress import describe_robustness_faces

    assert "[-0.004, 0.650]" in describe_robustness_faces(0.3, (-0.004, 0.65))


@given(n_probes=st.integers(1, 500), data=st.data())
def test_grid_edge_sentence_follows_the_share(n_probes, data):
    from crsbench_lib.scoring.probe_grid import EdgeShare

    n_low = data.draw(st.integers(0, n_probes))
    n_high = data.draw(st.integers(0, n_probes - n_low))
    share = EdgeShare(n_probes, n_low, n_high, (0.01, 1.0, 100.0))
    text = stress.describe_grid_edges(share)
    if n_low + n_high == 0:
        assert text.startswith(f"None of the {n_probes}")
    else:
        assert f"{n_low + n_high} ({grammar.percent(share.share)})" in text
        assert ("at most one probe in ten" in text) == (share.share <= stress.EDGE_SHARE_READABLE)
        assert ("partly measures where the grid ends" in text) == (share.share > stress.EDGE_SHARE_READABLE)
    assert "this build's world" in text
    # C is the calibration axis only: the probe's regularisation parameter is the inverse penalty 1/λ in prose.
    assert " C " not in text and "C grid" not in text and "a C " not in text


def test_grid_edge_sentence_without_probes():
    from crsbench_lib.scoring.probe_grid import EdgeShare

    assert "No clean full-label probe" in stress.describe_grid_edges(EdgeShare(0, 0, 0, (0.1, 1.0)))


def test_grid_edge_sentence_for_a_fixed_c():
    from crsbench_lib.scoring.probe_grid import EdgeShare

    text = stress.describe_grid_edges(EdgeShare(30, 0, 0, (1.0,)))
    assert text.startswith("The profile fixes every probe's inverse penalty 1/λ at 1,") and "edge" not in text.split(",")[0]


# --- The calibration chapter's "Is this real?" lessons and exercises ------------------------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD  # noqa: E402


def _excess(rows):
    """rows: calibrator -> (excess change interval, AUROC change interval)."""
    return pd.DataFrame([{"calibration": name, "before": 0.015, "after": 0.008,
                          "change_low": e[0], "change_high": e[1],
                          "auroc_change_low": a[0], "auroc_change_high": a[1]} for name, (e, a) in rows.items()])


ECE = pd.DataFrame({"calibration": ["isotonic", "temperature"], "ece_before": [0.038, 0.038], "ece_after": [0.030, 0.032]})


def test_calibration_lessons_follow_the_verdicts_and_the_auroc_intervals():
    lessons = stress.calibration_lessons(
        _excess({"isotonic": ((-0.015, -0.001), (-0.004, -0.001)), "temperature": ((-0.014, -0.002), (-0.0002, 0.0001))}),
        ECE, floor=0.023, simulated=True, study_range=(0.54, 0.77), study_tests=6)
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD]
    assert "mean plug-in ECE is 0.038 and its floor 0.023, and the debiased ECE (the axis C) puts their miscalibration at 0.015" in lessons[0].text
    assert "[-0.0002, 0.0001], which includes zero, as the design says" in lessons[1].text
    assert "[-0.0040, -0.0010] lies below zero: its ties cost a little AUROC" in lessons[1].text
    world = lessons[2].text
    assert world.startswith("In this build's simulated world isotonic and temperature help: the mean debiased ECE falls "
                            "by 47 % and the plug-in ECE falls by 16 % to 21 %")
    assert "is 0.30 times the plug-in ECE's floor, small beside it" in world
    assert lessons[2].study == "ECE fell by 54 % to 77 % across 6 primary tests, AUROC essentially unchanged."


def test_calibration_lessons_other_branches():
    lessons = stress.calibration_lessons(
        _excess({"isotonic": ((-0.002, 0.004), (-0.001, 0.002)), "temperature": ((0.001, 0.004), (0.0003, 0.001)),
                 "vector": ((math.nan, math.nan), (0.0, 0.0))}),
        pd.concat([ECE, pd.DataFrame({"calibration": ["vector"], "ece_before": [0.038], "ece_after": [0.045]})]),
        floor=None, simulated=False)
    assert [lesson.scope for lesson in lessons] == [DESIGN, WORLD]  # no floor: no floor lesson
    assert "which excludes zero: with a softmax over several classes" in lessons[0].text
    assert "includes zero: its ties cost no AUROC the data can see" in lessons[0].text
    world = lessons[1].text
    assert "isotonic does not help measurably; temperature makes calibration worse; vector has no verdict" in world
    assert "changes by -21 % to +18 %" in world
    assert "this run's own data" in world and "simulated" not in world and "phantom" not in world


def _paired(worst_gains=True, rises=False):
    rows = []
    for enc, before, after, auroc in (("weak", 0.07, 0.04 if worst_gains else 0.069, 0.65),
                                      ("mid", 0.05, 0.03 if not worst_gains else 0.045, 0.75),
                                      ("strong", 0.03, 0.032 if rises else 0.028, 0.85)):
        for seed in (0, 1):
            rows.append(dict(encoder=enc, seed=seed, calibration="temperature", ece_before=before, ece_after=after,
                             auroc_before=auroc, ece_floor_before=0.02))
    return pd.DataFrame(rows)


def test_exercise_by_encoder_both_branches():
    follows = stress.calibration_exercise_by_encoder(_paired(worst_gains=True, rises=True))
    assert follows.startswith("Summarised by encoder, temperature gains most for weak: its mean ECE falls from 0.070 to 0.040")
    assert "also the worst calibrated of the 3 encoders" in follows and "among the weakest discriminators" in follows
    assert "1 of 3 encoders' mean ECE rises with temperature (strong)" in follows
    other = stress.calibration_exercise_by_encoder(_paired(worst_gains=False))
    assert "gains most for mid" in other and "It ranks 2 of 3 by ECE before calibration" in other
    assert "a middling discriminator" in other and "No encoder's mean ECE rises" in other


def _ablation_rows(gain_strong, n_weak=12, seed=0, noise=0.02):
    rng = np.random.default_rng(seed)
    rows = []
    names = [(f"s{i}", 0.9 - 0.01 * i, gain_strong) for i in range(3)] + [(f"w{i}", 0.6, 0.02) for i in range(n_weak)]
    for enc, auroc, gain in names:
        for dataset in ("d1", "d2", "d3"):
            for seed_ in (0, 1, 2):
                before = 0.03 + rng.normal(0, 0.002)
                rows.append(dict(encoder=enc, dataset=dataset, seed=seed_, calibration="temperature", auroc_before=auroc,
                                 auroc_after=auroc, ece_before=before + 0.02, ece_after=before + 0.02 - gain,
                                 ece_debiased_before=before,
                                 ece_debiased_after=before - gain + rng.normal(0, noise)))
    return pd.DataFrame(rows)


def test_exercise_subset_says_whether_fewer_encoders_or_a_smaller_gain_change_the_verdict():
    same_gain = stress.calibration_exercise_subset(_ablation_rows(0.02, noise=0.04), top=3, n_draws=300)
    assert same_gain.startswith("Kept: the 3 encoders with the highest AUROC before calibration (s0, s1 and s2)")
    assert "Rerun: `crsbench notebook calibration -p encoders '[s0, s1, s2]'`" in same_gain
    assert "The verdict changes though the change is about as large" in same_gain
    assert "Fewer encoders, not a smaller gain" in same_gain
    holds = stress.calibration_exercise_subset(_ablation_rows(0.02, noise=0.002), top=3, n_draws=300)
    assert "Among them temperature helps" in holds and "The verdict holds among them" in holds
    neither = stress.calibration_exercise_subset(_ablation_rows(0.0, noise=0.02).assign(ece_debiased_after=lambda t: t[
        "ece_debiased_before"] + np.random.default_rng(1).normal(0, 0.02, len(t))), top=3, n_draws=300)
    assert "Neither set shows a measurable gain" in neither
    no_gain = stress.calibration_exercise_subset(_ablation_rows(0.0), top=3, n_draws=300)
    assert "The verdict changes and the change is smaller" in no_gain
    one = stress.calibration_exercise_subset(_ablation_rows(0.02, n_weak=0).query("encoder == 's0'"), top=3)
    assert one.startswith("This table holds 1 encoder")


def _excess_and_ece(auroc=((-0.0002, -0.0012, 0.0008), (-0.0145, -0.0219, -0.0067)),
                    excess=((-0.022, -0.083, 0.010), (-0.023, -0.081, 0.009)), after=(0.099, 0.094)):
    import pandas as pd

    names = ["temperature", "isotonic"]
    table = pd.DataFrame({"calibration": names,
                          "change": [e[0] for e in excess], "change_low": [e[1] for e in excess],
                          "change_high": [e[2] for e in excess], "auroc_change": [a[0] for a in auroc],
                          "auroc_change_low": [a[1] for a in auroc], "auroc_change_high": [a[2] for a in auroc]})
    ece = pd.DataFrame({"calibration": names, "ece_before": [0.125, 0.125], "ece_after": list(after)})
    return table, ece


def test_calibration_takeaway_no_auroc_cost_and_gain_within_noise():
    from crsbench_lib.report.takeaway import check_takeaway

    text = stress.calibration_takeaway(*_excess_and_ece())
    assert check_takeaway(text) == text
    assert text.startswith("Temperature scaling cuts the mean ECE by 21 % (0.125 to 0.099) without a measurable AUROC "
                           "cost (change -0.0002, 95 % interval [-0.0012, 0.0008])")
    assert "its debiased ECE (the axis C's measure) falls by 0.022, within the bootstrap noise (interval [-0.083, 0.010])" in text
    assert text.endswith("Of the 2 calibrators, only isotonic lowers AUROC measurably.")


def test_calibration_takeaway_auroc_cost_gain_beyond_noise_and_a_rise():
    from crsbench_lib.report.takeaway import check_takeaway

    costly = ((-0.003, -0.005, -0.001), (-0.0145, -0.0219, -0.0067))
    beyond = ((-0.022, -0.040, -0.005), (0.012, 0.002, 0.030))
    text = stress.calibration_takeaway(*_excess_and_ece(auroc=costly, excess=beyond))
    assert check_takeaway(text) == text
    assert "at a measurable AUROC cost (change -0.0030, 95 % interval [-0.0050, -0.0010])" in text
    assert "falls by 0.022, beyond the bootstrap noise (interval [-0.040, -0.005])" in text
    assert text.endswith("All 2 calibrators lower AUROC measurably.")
    # Led by isotonic: its ECE rises and its excess rises beyond the noise; no calibrator costs AUROC.
    free = ((0.0, -0.001, 0.001), (0.002, 0.001, 0.003))
    rise = stress.calibration_takeaway(*_excess_and_ece(auroc=free, excess=beyond, after=(0.099, 0.140)),
                                       calibrator="isotonic")
    assert rise.startswith("Isotonic regression raises the mean ECE by 12 % (0.125 to 0.140) and raises the AUROC "
                           "measurably (change +0.0020, 95 % interval [0.0010, 0.0030])")
    assert "its debiased ECE (the axis C's measure) rises by 0.012, beyond the bootstrap noise" in rise
    assert rise.endswith("None of the 2 calibrators lowers AUROC measurably.")


def test_calibration_takeaway_without_defined_intervals():
    nan = float("nan")
    text = stress.calibration_takeaway(*_excess_and_ece(auroc=((nan, nan, nan),) * 2, excess=((nan, nan, nan),) * 2))
    assert "with no bootstrap interval of its AUROC change; no bootstrap draw defines the change" in text
    assert text.endswith("None of the 2 calibrators lowers AUROC measurably.")


@pytest.mark.parametrize("simulated, world", [(True, "this build's simulated world"), (False, "this run's own data")])
def test_grid_edge_sentence_names_the_world_of_the_run(simulated, world):
    """On a user's own data the edge count belongs to the run's data, not to a build's world (issue 30)."""
    from crsbench_lib.scoring.probe_grid import EdgeShare

    text = stress.describe_grid_edges(EdgeShare(30, 10, 0, (0.1, 1.0, 10.0)), simulated=simulated)
    assert f"Which probes reach an edge belongs to {world};" in text
    assert ("build's" in text) == simulated
