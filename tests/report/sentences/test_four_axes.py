"""The four-axes chapter's lessons and exercise solutions follow the profiles, leaders and correlations."""

import pandas as pd

from crsbench_lib.report.sentences.four_axes import (
    four_axes_exercise_lora,
    four_axes_exercise_subset,
    four_axes_lessons,
)
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD

PROFILES = pd.DataFrame({"D": [0.9, 0.8, 0.6, 0.55], "C": [0.05, 0.02, 0.04, 0.03], "L": [0.9, 0.8, 0.5, 0.95],
                         "R": [0.1, 0.2, 0.4, 0.3]}, index=["a", "b", "c", "d"])
ANCHORS = {"D": (0.5, 1.0), "C": (0.2, 0.0), "L": (0.0, 1.0), "R": (1.0, 0.0)}


def _saturation(at_worst=0):
    return pd.DataFrame({"at_worst": [0, 0, 0, at_worst], "at_best": [0] * 4, "n": [4] * 4}, index=list("DCLR"))


def _correlations(rho_l=0.95, rho_r=-0.76, column="rho_chance"):
    other = "rho_study" if column == "rho_chance" else "rho_chance"
    return pd.DataFrame({column: [rho_l, rho_r], other: [0.0, 0.0], "n_encoders": [20, 20]}, index=["L", "R"])


def _lessons(leaders=None, saturation=None, correlations=None, scales=("chance", "chance"), simulated=True):
    leaders = leaders or {"D": "a", "C": "b", "L": "d", "R": "a"}
    return four_axes_lessons(PROFILES, leaders, saturation if saturation is not None else _saturation(),
                             correlations if correlations is not None else _correlations(), *scales,
                             simulated=simulated)


def test_lessons_design_and_world():
    lessons = _lessons()
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD, WORLD]
    assert "none of the 16 normalised values sits on an anchor" in lessons[0].text
    assert "against chance" in lessons[1].text
    leaders = lessons[2].text
    assert leaders.startswith("Among the 4 candidates, 3 different encoders lead the 4 axes")
    assert "b leads calibration from 2nd of 4 on discrimination" in leaders
    assert "d leads label efficiency from 4th of 4" in leaders
    follows = lessons[3].text
    assert "ρ = 0.95" in follows and "ρ = -0.76 (it falls as AUROC rises" in follows
    assert "Both largely repeat discrimination" in follows


def test_lessons_say_the_other_thing_when_the_numbers_turn():
    assert "1 of 16 normalised values sits on an anchor (R)" in _lessons(saturation=_saturation(1))[0].text
    study = _lessons(scales=("ratio", "points"), correlations=_correlations(column="rho_study"))
    assert "L as a retention ratio and R as a loss in AUROC points" in study[1].text
    one = _lessons(leaders={"D": "a", "C": "a", "L": "a", "R": "a"})[2].text
    assert "a leads all 4 axes" in one and "Expect them to split" in one
    assert "Neither is told apart" in _lessons(correlations=_correlations(0.1, 0.2))[3].text
    mixed = _lessons(correlations=_correlations(0.9, 0.2))[3].text
    assert "Label efficiency repeats discrimination here; robustness is not told apart" in mixed


def test_world_lessons_on_own_data_name_no_phantom():
    for lesson in _lessons(simulated=False):
        if lesson.scope == WORLD:
            assert "phantom" not in lesson.text.lower() and "simulated" not in lesson.text.lower()


def test_lora_exercise_barely_or_visibly():
    small = PROFILES.copy()
    small["L"] = small["L"] - 0.01
    text = four_axes_exercise_lora(PROFILES, small, ANCHORS)
    assert "4 encoders have a LoRA arm" in text and "L -1.0" in text and "D 0.0" in text
    assert "The largest is L" in text and "barely move the profiles" in text
    big = PROFILES.copy()
    big["R"] = big["R"] - 0.2  # a lower loss: better, positive points
    text = four_axes_exercise_lora(PROFILES, big, ANCHORS)
    assert "R +20.0" in text and "a visible part" in text
    assert "no encoder has both" in four_axes_exercise_lora(PROFILES, PROFILES.rename(index=str.upper), ANCHORS)


def test_subset_exercise_kept_or_changed():
    same = four_axes_exercise_subset({"D": "a", "R": "a"}, {"D": "a", "R": "a"}, "derm")
    assert "Every axis keeps its leader" in same and "second site" not in same
    changed = four_axes_exercise_subset({"D": "a", "R": "a"}, {"D": "a", "R": "b"}, "derm", PROFILES,
                                        shift_overall=True, shift_in_subset=False)
    assert "1 of 2 axes keep their leader (D); robustness passes from a to b (0.200 against 0.100 on derm)" in changed
    assert "There is no second site on derm" in changed
    none = four_axes_exercise_subset({"D": "a"}, {"D": "b"}, "cxr", shift_overall=True, shift_in_subset=True)
    assert "No axis keeps its leader" in none and "second site" not in none


def test_four_axes_takeaway_one_leader_or_several():
    from crsbench_lib.report.sentences.four_axes import four_axes_takeaway
    from crsbench_lib.report.takeaway import check_takeaway

    one = four_axes_takeaway(PROFILES, {"D": "a", "C": "a", "L": "a", "R": "a"})
    assert check_takeaway(one) == one
    assert one.startswith("a leads all 4 axes among the 4 candidates")
    several = four_axes_takeaway(PROFILES, {"D": "a", "C": "b", "L": "d", "R": "a"})
    assert check_takeaway(several) == several
    # C and R: lower is better; a is 4th of 4 on C (0.05 the highest) and 2nd on L (0.9 below d's 0.95).
    assert several.startswith("3 different encoders lead the 4 axes among the 4 candidates: the best discriminator, a, "
                              "ranks 4th of 4 on calibration and 2nd on label efficiency,")
    assert "robustness" not in several
    # The best discriminator without a value on the one axis it does not lead: no rank, still the verdict.
    gap = four_axes_takeaway(PROFILES.assign(R=[float("nan"), 0.2, 0.4, 0.3]), {"D": "a", "C": "a", "L": "a", "R": "b"})
    assert gap == ("2 different encoders lead the 4 axes among the 4 candidates, so clean AUROC alone does not name "
                   "the best encoder on every axis.")


def test_the_retention_sentence_names_the_scale_the_figure_draws():
    """The text under the label-efficiency figure names the scale of the standard's L, on both scales (item 4)."""
    import pytest

    from crsbench_lib.report.sentences.four_axes import describe_retention_scale

    chance = describe_retention_scale("chance", "crs-default-v5")
    assert "(AUROC_f − 0.5) / (AUROC_100% − 0.5)" in chance and "chance scale" in chance and "crs-default-v5" in chance
    ratio = describe_retention_scale("ratio", "crs-v1")
    assert "AUROC_f / AUROC_100%" in ratio and "study's ratio scale" in ratio and "0.5" not in ratio
    with pytest.raises(ValueError, match="scale"):
        describe_retention_scale("points", "crs-v1")


def _knockout(reversed_pairs, changes, leader_without=None):
    import pandas as pd

    axes = ["D", "C", "L", "R"]
    without = leader_without or ["b" if c else "a" for c in changes]
    return pd.DataFrame({"axis": axes, "tau_b": [1 - 2 * k / 66 for k in reversed_pairs],
                         "reversed_pairs": reversed_pairs, "pairs": [66] * 4, "leader": ["a"] * 4,
                         "leader_without": without, "leader_changes": changes})


def test_knockout_words_follow_the_counts():
    from crsbench_lib.report.sentences.four_axes import describe_knockout

    idle = describe_knockout(_knockout([0, 0, 0, 0], [False] * 4), simulated=True)
    assert "So no single axis decides the leader on its own, and discrimination (D), calibration (C), label " \
           "efficiency (L) and robustness (R) decide nothing among these candidates." in idle
    one = describe_knockout(_knockout([9, 1, 0, 3], [True, False, False, False]), simulated=False)
    assert "discrimination (D) reverses 9 of the 66 candidate pairs" in one
    assert "moves the lead from a to b" in one and one.count("moves the lead") == 1
    assert "So discrimination (D) decides the leader, and label efficiency (L) decides nothing" in one
    assert "this run's own data" in one
    # A sentence never says an axis decides nothing when it reverses a pair.
    for k in range(1, 5):
        text = describe_knockout(_knockout([k, k, k, k], [False] * 4))
        assert "decide nothing" not in text and "decides nothing" not in text
