"""The agreement and anchor-sweep sentences follow tau, the reversed pairs and the top set."""

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import agreement

unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(tau=unit, reversed_pairs=st.integers(0, 45))
def test_describe_agreement_never_calls_disagreement_agreement(tau, reversed_pairs):
    text = agreement.describe_agreement(tau, reversed_pairs=reversed_pairs, n_pairs=45, study_tau=0.5)
    if reversed_pairs == 0:
        assert "agree on every choice" in text
    else:
        assert f"{reversed_pairs} of 45 pairwise decisions" in text
        assert "every choice" not in text
    assert "the study's (0.500)" in text


def test_describe_agreement_with_p_and_interval():
    text = agreement.describe_agreement(0.62, interval=(0.3, 0.85), p=0.0004)
    assert "strong positive" in text and "excludes zero" in text and "p < 0.001" in text


def test_describe_anchor_sweep_names_ranges_and_changes() -> None:
    import pandas as pd


    from crsbench_lib.report.sentences.agreement import describe_anchor_sweep


    rows = [
        ("D", 0.5, True, 0.4, "a, b, c", False),
        ("D", 0.7, False, 0.6, "a, b, c", False),
        ("R", 0.1, False, -0.1, "d, b, c", True),
        ("R", 0.2, True, 0.4, "a, b, c", False),
    ]
    sweep = pd.DataFrame(rows, columns=["axis", "worst", "is_default", "tau_auroc_crs", "top_k", "top_k_changed"])
    text = describe_anchor_sweep(sweep)
    assert ("Worst D anchor at 0.5 and 0.7 (the standard's: 0.5): AUROC-CRS Kendall τ_b 0.400 and 0.600 respectively; "
            "the top set stays the same") in text
    # tau falls as the anchor rises here: the sentence pairs each tau with its anchor, not min with max.
    falling = sweep.assign(tau_auroc_crs=[0.9, 0.3, 0.1, 0.2])
    assert "at 0.5 and 0.7 (the standard's: 0.5): AUROC-CRS Kendall τ_b 0.900 and 0.300" in describe_anchor_sweep(falling)
    assert "Worst R anchor at 0.1 and 0.2" in text and "τ_b -0.100 and 0.400" in text
    assert "changes at 0.1 (d, b, c)" in text
    assert describe_anchor_sweep(sweep.iloc[:0]) == "No anchor was varied."
    assert "crs-x-v1" in describe_anchor_sweep(None, standard_version="crs-x-v1")


def test_describe_floor_axis_counts_each_candidates_lowest_axis() -> None:
    import pandas as pd

    from crsbench_lib.report.sentences.agreement import describe_floor_axis

    rows = [(0.7, 0.8, 0.85, 0.82, 0.69), (0.69, 0.9, 0.8, 0.75, 0.70), (0.6, 0.5, 0.7, 0.8, 0.55),
            (0.4, 0.4, 0.9, 0.9, 0.45)]  # the last ties D and C
    scores = pd.DataFrame(rows, columns=["s_D", "s_C", "s_L", "s_R", "crs"])
    text = describe_floor_axis(scores, 0.3, simulated=True)
    assert "is discrimination (D) for 3 of 4 candidates and calibration (C) for 2." in text
    assert "(30 % of the CRS)" in text and "this build's simulated world" in text
    assert "explains" in text  # four candidates, both columns vary
    # Two candidates: no variance share is claimed.
    assert "explains" not in describe_floor_axis(scores.iloc[:2], 0.3)
    assert describe_floor_axis(scores.iloc[:0], 0.3).startswith("No candidate")
    with pytest.raises(ValueError, match="missing column 's_R'"):
        describe_floor_axis(scores.drop(columns="s_R"), 0.3)


@given(st.lists(st.tuples(*[st.floats(0, 1)] * 5), min_size=1, max_size=12))
def test_describe_floor_axis_names_every_candidates_floor(rows) -> None:
    import re

    import pandas as pd

    from crsbench_lib.report.sentences.agreement import describe_floor_axis

    scores = pd.DataFrame(rows, columns=["s_D", "s_C", "s_L", "s_R", "crs"])
    text = describe_floor_axis(scores, 0.3)
    counts = [int(c) for c in re.findall(r"\) for (\d+)", text)]
    # Every candidate has at least one lowest axis, and no axis is the floor of more candidates than there are.
    assert sum(counts) >= len(rows) and max(counts) <= len(rows)


# ---------------------------------------------------------------- "Is this real?" and the exercises' solutions

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD  # noqa: E402


def _candidates(floor_axis: str = "D", n: int = 5) -> pd.DataFrame:
    """n candidates whose lowest normalised axis is ``floor_axis``, ordered the same on D and on CRS."""
    rows = []
    for k in range(n):
        low = 0.2 + 0.1 * k
        values = {"s_D": 0.9, "s_C": 0.9, "s_L": 0.9, "s_R": 0.9}
        values[f"s_{floor_axis}"] = low
        if floor_axis != "D":
            values["s_D"] = 0.7 + 0.04 * k
        rows.append({"encoder": f"e{k}", "D": 0.5 + values["s_D"] / 2, **values, "floor": low,
                     "crs": 0.3 + 0.1 * k, "dominance": 0.1 * k, "balance": 0.5})
    return pd.DataFrame(rows)


def _lessons(scores, **kwargs):
    options = dict(study_tau=0.6, study_n=15, study_reversed=21, study_pairs=105, simulated=True)
    options.update(kwargs)
    return agreement.agreement_lessons(scores, kwargs.pop("tau", 0.9), 1, 10, 0.3, **{
        k: v for k, v in options.items() if k != "tau"})


def test_agreement_lessons_design_and_world_from_the_floor_axis():
    lessons = _lessons(_candidates("D"), interval=(0.85, 0.95), interval_scoring="leave-self-out")
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD, WORLD]
    steps, floor, world, study = (lesson.text for lesson in lessons)
    assert "10 pairs, so one reversal costs 0.200" in steps and "1 − 2 × 1/10 = 0.800" in steps
    assert "lowest normalised axis of all 5 candidates" in world and "built in" in world
    assert "expect more disagreement" in world
    assert "This run's 95 % interval [0.850, 0.950] (leave-self-out scores) measures this run's own" in study
    assert "outside" not in study and "more than this run's sampling noise" not in study
    assert lessons[3].study == "τ_b 0.600 over 15 encoders, 21 of 105 pairs reversed."
    # Another axis is everyone's floor: the lesson says the other thing, and predicts the other way.
    other = _lessons(_candidates("R"))[2].text
    assert "only 0 of 5 candidates" in other and "robustness (R) is the lowest of 5" in other
    assert "expect it to rise on a cohort whose encoders are weakest in discrimination" in other
    assert "built in" not in other


def test_agreement_lessons_never_judge_the_study_by_this_runs_interval():
    # Issue 46, item 3: another study's estimate is not judged by this run's sampling distribution.
    inside = _lessons(_candidates("D"), interval=(0.5, 0.95))[3].text
    assert "is not judged by it" in inside and "inside this run" not in inside
    close = _lessons(_candidates("D"), tau=0.62)[3].text
    assert "close to the study's 0.600" in close
    lower = _lessons(_candidates("D"), tau=0.3)[3].text
    assert "lower than the study's 0.600" in lower


def test_agreement_lessons_ties_and_no_floor_weight():
    tied = agreement.agreement_lessons(_candidates("D"), 0.75, 1, 10, 0.3)[0].text
    assert "ties take τ_b to 0.750 rather than the untied 1 − 2 × 1/10 = 0.800" in tied
    unweighted = agreement.agreement_lessons(_candidates("D"), 0.8, 1, 10, 0.0)
    assert "no weight" in unweighted[1].text and "does not enter the CRS" in unweighted[2].text


def test_agreement_world_lessons_on_own_data_name_no_phantom():
    for lesson in _lessons(_candidates("D"), simulated=False, interval=(0.85, 0.95)):
        if lesson.scope == WORLD:
            assert "phantom" not in lesson.text.lower() and "simulated" not in lesson.text.lower()


def test_floor_only_exercise_follows_the_floor_axis():
    scores = _candidates("D").assign(crs=[0.3, 0.5, 0.4, 0.6, 0.7])  # one reversal under the default weights
    text = agreement.agreement_exercise_floor_only(scores)
    assert "goes from 0.800 to 1.000" in text and "from 1 to 0 of 10" in text
    assert "agree on every pair" in text and "The reversal under the standard's weights" in text
    # Robustness is everyone's floor and falls as D rises: the floor-only CRS disagrees with AUROC.
    against = _candidates("R").assign(floor=lambda f: f["floor"][::-1].to_numpy(),
                                      s_R=lambda f: f["s_R"][::-1].to_numpy())
    text = agreement.agreement_exercise_floor_only(against)
    assert "to -1.000" in text and "agrees no better with AUROC" in text and "robustness (R) for 5" in text


def test_anchor_exercise_names_the_candidates_that_move():
    before = _candidates("D").assign(C=[0.02, 0.03, 0.04, 0.05, 0.06], s_C=[0.9, 0.85, 0.8, 0.75, 0.7])
    after = before.assign(s_C=[0.93, 0.9, 0.87, 0.83, 0.8])
    text = agreement.agreement_exercise_anchors(before, after, "C", (0.3, 0.0), (0.2, 0.0), "ECE")
    assert "0.003 ECE instead of 0.002" in text and "(0.020 to 0.060 ECE)" in text
    assert "covers 13 normalised points instead of 20" in text
    assert "stays at 1.000" in text and "No candidate changes its CRS rank" in text
    swapped = after.assign(crs=[0.3, 0.5, 0.4, 0.6, 0.7])
    text = agreement.agreement_exercise_anchors(before, swapped, "C", (0.3, 0.0), (0.2, 0.0), "ECE")
    assert "goes from 1.000 to 0.800" in text
    assert "2 candidates change their CRS rank: e1 (4th → 3rd) and e2 (3rd → 4th)" in text


# --- the key takeaway -------------------------------------------------------------------------------------------


def _noise(low, high):
    import numpy as np

    from crsbench_lib.scoring.retest import noise_baseline_table

    return noise_baseline_table({"AUROC against CRS": 0.8}, {}, {"the AUROC ranking": np.linspace(low, high, 1001),
                                                                 "the CRS ranking": np.linspace(low, high, 1001)})


def _shown_range(noise):
    """The bootstrap rows' central range as the takeaway prints it (two decimals)."""
    from crsbench_lib.report.grammar import format_interval

    row = noise[noise["source"] == "bootstrap draw"].iloc[0]
    return format_interval(float(row["low"]), float(row["high"]), 2)


def agreement_takeaway(tau, reversed_pairs, n_pairs, n_candidates, leaders, noise=None, level=0.95):
    """The chapter's takeaway as the page renders it: book/text/agreement.md on the page's facts."""
    from crsbench_lib.report.text import render
    from crsbench_lib.scoring.agreement import AgreementFacts
    from crsbench_lib.scoring.retest import noise_verdict

    facts = AgreementFacts(n_candidates, tau, reversed_pairs, n_pairs, leaders[0], leaders[1],
                           noise_verdict(tau, noise, level))
    return render("agreement", "takeaway", facts)


def test_agreement_takeaway_inside_noise_and_same_leader():
    from crsbench_lib.report.takeaway import check_takeaway

    noise = _noise(0.8, 1.0)
    text = agreement_takeaway(0.906, 8, 171, 19, ("a", "a"), noise=noise)
    assert check_takeaway(text) == text
    assert "8 of 171 pairwise decisions (τ_b 0.906)" in text and "19 candidates" in text
    assert "within the central 95 %" in text and _shown_range(noise) in text and "cannot tell" in text
    assert text.endswith("Both put a first.")


def test_agreement_takeaway_beyond_noise_and_leader_changes():
    from crsbench_lib.report.takeaway import check_takeaway

    noise = _noise(0.7, 1.0)
    text = agreement_takeaway(0.6, 21, 105, 15, ("p", "m"), noise=noise)
    assert check_takeaway(text) == text
    assert "below the central 95 %" in text and "a reordering beyond noise" in text and _shown_range(noise) in text
    assert "The leader changes: AUROC puts p first, the CRS m." in text
    assert "above the central" in agreement_takeaway(0.99, 1, 105, 15, ("p", "p"), noise=_noise(0.5, 0.9))


def test_agreement_takeaway_no_reversal_low_tau_and_no_noise():

    assert "identically: none of the 15 pairwise decisions reverses (τ_b 1.000)" in agreement_takeaway(
        1.0, 0, 15, 6, ("a", "a"))
    low = agreement_takeaway(0.1, 45, 105, 15, ("a", "b"))
    assert "differently: 45 of 105 pairwise decisions reverse (τ_b 0.100)." in low and "bootstrap" not in low


def _noise_apart(auroc, crs):
    """A noise table whose two rankings' bootstrap draws cover different ranges (``(low, high)`` each)."""
    import numpy as np

    from crsbench_lib.scoring.retest import noise_baseline_table

    return noise_baseline_table({"AUROC against CRS": 0.9}, {}, {"the AUROC ranking": np.linspace(*auroc, 1001),
                                                                 "the CRS ranking": np.linspace(*crs, 1001)})


def test_agreement_takeaway_compares_tau_with_each_range_separately():
    """A τ_b inside one ranking's range and below the other's is not said to lie 'within' both (the lecturer's item 3)."""
    from crsbench_lib.report.takeaway import check_takeaway

    text = agreement_takeaway(0.906, 8, 171, 19, ("multitask_broad_aug_l", "multitask_broad_aug_s"),
                              noise=_noise_apart((0.94, 1.0), (0.86, 0.98)))
    assert check_takeaway(text) == text
    assert "within the central 95 % of τ_b between two bootstrap draws of the CRS ranking ([0.86, 0.98])" in text
    assert "below the AUROC ranking's ([0.94, 1.00])" in text
    assert "the CRS ranking's noise could explain it" in text
    # Not both ranges behind one "within".
    assert "[0.86, 0.98]) and" not in text and "([0.86, 0.98] and [0.94, 1.00])" not in text
    # Inside both: one verdict for both, each range named with its ranking.
    both = agreement_takeaway(0.95, 4, 171, 19, ("a", "a"), noise=_noise_apart((0.9, 1.0), (0.86, 0.98)))
    assert "within the central 95 % of τ_b between two bootstrap draws of the AUROC ranking ([0.90, 1.00]) and " \
           "the CRS ranking ([0.86, 0.98]): this build cannot tell the reordering from noise." in both
    # Below one, above the other: beyond the noise of the first only.
    split = agreement_takeaway(0.85, 12, 171, 19, ("a", "a"), noise=_noise_apart((0.9, 1.0), (0.6, 0.8)))
    assert "below the central 95 % of τ_b between two bootstrap draws of the AUROC ranking ([0.90, 1.00]), above " \
           "the CRS ranking's ([0.60, 0.80]): beyond the noise of the AUROC ranking only." in split
