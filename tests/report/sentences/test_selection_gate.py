"""The selection-gate sentences follow the gate's outcome and its thresholds."""

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import selection_gate


@given(failing=st.lists(st.integers(0, 5), min_size=1, max_size=4))
def test_describe_threshold_binding_says_which_thresholds_filter_nothing(failing):
    axes = ["D", "C", "L", "R"][: len(failing)]
    table = pd.DataFrame({"axis": axes, "rule": [f"{a} rule" for a in axes], "failing": failing,
                          "failing_alone": failing, "candidates": 5})
    text = selection_gate.describe_threshold_binding(table)
    for axis, count in zip(axes, failing, strict=True):
        if count:
            assert f"{axis} rule stops {count} of 5 candidates" in text
    idle = [a for a, c in zip(axes, failing, strict=True) if c == 0]
    if not any(failing):
        assert text.startswith("No threshold binds") and "filters nothing" in text
    elif idle:
        assert "bind" in text and "filter" in text and all(f"{a} rule" in text for a in idle)
    else:
        assert "nothing" not in text


def test_describe_selection_outcomes():
    none_clear = selection_gate.describe_selection([], ["a"], [], 5)
    assert "No encoder clears the gate" in none_clear
    assert selection_gate.describe_selection([], [], [], 0).startswith("0 of 0 candidates clear every threshold")
    # The point leader is always in the tier: an empty tier among candidates is a caller's error, not a finding.
    with pytest.raises(ValueError, match="the point leader is always a member"):
        selection_gate.describe_selection([], [], ["a"], 5)
    with pytest.raises(ValueError, match="'a' advances without being in the leading tier"):
        selection_gate.describe_selection(["a"], ["b"], ["a"], 5)
    mismatch = selection_gate.describe_selection([], ["b"], ["a"], 5)
    assert "both in the leading tier" in mismatch
    assert "the leading tier (at least 95 % coverage of the best) is b." in mismatch
    assert "(at least 90 % coverage of the best) is b and c." in selection_gate.describe_selection([], ["b", "c"], ["a"], 5,
                                                                                          level=0.9)
    good = selection_gate.describe_selection(["mae"], ["mae"], ["mae"], 5, untrained=["cnn_random"])
    assert good.endswith("mae advances for deployment evaluation.")
    assert "Caution" not in good
    # An untrained baseline advancing is never reported without comment.
    baseline = selection_gate.describe_selection(["cnn_random"], ["cnn_random"], ["cnn_random"], 5, untrained=["cnn_random"])
    assert "Caution: cnn_random has no pretraining" in baseline
    with_reference = selection_gate.describe_selection(["mae"], ["mae"], ["mae"], 5, references=["intask"])
    assert with_reference.endswith("intask is a reference, not a candidate: shown, never advanced.")
    assert "5 candidates" in with_reference
    with pytest.raises(ValueError, match="reference 'intask' cannot"):
        selection_gate.describe_selection(["intask"], ["intask"], ["intask"], 5, references=["intask"])


# --- "Is this real?" and the exercise: both branches of every decision ---------------------------------------

def _failures(failing, n=19, axes=("D", "C", "L", "R")):
    rules = {"D": "D >= 0.7", "C": "C <= 0.1", "L": "L >= 0.8", "R": "R <= 0.15"}
    axes = list(axes)[: len(failing)]
    return pd.DataFrame({"axis": axes, "rule": [rules[a] for a in axes], "failing": failing,
                         "failing_alone": [0] * len(axes), "candidates": n})


PROFILES = pd.DataFrame({"D": [0.856, 0.78, 0.62], "C": [0.03, 0.04, 0.06], "L": [0.85, 0.7, 0.3],
                         "R": [0.171, 0.2, 0.45]}, index=pd.Index(["best", "mid", "random"], name="encoder"))


def test_threshold_binding_names_a_threshold_that_closes_the_gate():
    text = selection_gate.describe_threshold_binding(_failures([9, 0, 16, 19]))
    assert "R <= 0.15 stops 19 of 19 candidates (0 by itself): every candidate misses it, so on its own it closes" in text
    assert "C <= 0.1 binds no candidate" in text
    assert "closes the gate" not in selection_gate.describe_threshold_binding(_failures([9, 0, 16, 18]))


def test_lessons_name_the_closing_and_the_idle_threshold_or_neither():
    lessons = selection_gate.selection_gate_lessons(_failures([2, 0, 2, 3], n=3), PROFILES, 0)
    design = lessons[0].text
    assert lessons[0].scope == selection_gate.DESIGN
    assert "R <= 0.15 is of the first kind; C <= 0.1 is of the second" in design
    neither = selection_gate.selection_gate_lessons(_failures([1, 2, 1, 2], n=3), PROFILES, 1)[0].text
    assert "every threshold stops some candidates and none stops all of them" in neither


def test_lessons_read_the_robustness_threshold_on_the_standards_scale():
    chance = selection_gate.selection_gate_lessons(_failures([1, 0, 1, 3], n=3), PROFILES, 0, robustness_scale="chance")
    assert "share of the above-chance AUROC lost" in chance[1].text
    assert "lose at most 0.053 AUROC points" in chance[1].text  # 0.15 x (0.856 - 0.5)
    points = selection_gate.selection_gate_lessons(_failures([1, 0, 1, 3], n=3), PROFILES, 0, robustness_scale="points")
    assert "AUROC points lost" in points[1].text and "42 % of its above-chance AUROC" in points[1].text
    unknown = selection_gate.selection_gate_lessons(_failures([1, 0, 1, 3], n=3), PROFILES, 0)
    assert [lesson.scope for lesson in unknown] == ["design", "world"]


def test_the_world_lesson_follows_the_outcome():
    shut = selection_gate.selection_gate_lessons(_failures([1, 0, 1, 3], n=3), PROFILES, 0, simulated=True)
    world = [lesson.text for lesson in shut if lesson.scope == selection_gate.WORLD][0]
    assert "no candidate advances: R <= 0.15 stops every one of the 3, the best (best, R 0.171) missing it" in world
    assert "simulated world" in world
    some = selection_gate.selection_gate_lessons(_failures([1, 0, 2, 0], n=3), PROFILES, 1)
    world = [lesson.text for lesson in some if lesson.scope == selection_gate.WORLD][0]
    assert "1 of 3 candidates advance: L >= 0.8 stops 2 of the 3, the best (best, L 0.850) meeting it" in world
    idle = selection_gate.selection_gate_lessons(_failures([0, 0, 0, 0], n=3), PROFILES, 2)
    assert "the gate filters nothing" in [lesson.text for lesson in idle if lesson.scope == "world"][0]


def test_the_untrained_lesson_says_whether_the_thresholds_are_too_lax():
    stopped = selection_gate.selection_gate_lessons(_failures([1, 0, 1, 3], n=3), PROFILES, 0,
                                                    untrained_failed={"random": ["D", "L", "R"]})[-1].text
    assert stopped.startswith("The one untrained encoder does not get through here (random fails D, L and R)")
    assert "D and L, which some trained candidates meet, separate learned features" in stopped  # R stops everyone
    through = selection_gate.selection_gate_lessons(_failures([1, 0, 1, 2], n=3), PROFILES, 0,
                                                    untrained_failed={"random": [], "other": ["D"]})[-1].text
    assert through.startswith("random has no pretraining and clears every threshold here") and "too lax" in through
    only_closer = selection_gate.selection_gate_lessons(_failures([0, 0, 0, 3], n=3), PROFILES, 0,
                                                        untrained_failed={"a": ["R"], "b": ["R"]})[-1].text
    assert "do not separate learned features from random ones" in only_closer


def test_own_data_lessons_do_not_speak_of_a_simulation():
    lessons = selection_gate.selection_gate_lessons(_failures([1, 0, 1, 3], n=3), PROFILES, 0,
                                                    untrained_failed={"random": ["D"]}, simulated=False)
    for lesson in lessons:
        if lesson.scope == selection_gate.WORLD:
            assert "simulated" not in lesson.text and "phantom" not in lesson.text
    assert "this run's own data" in lessons[-2].text


SUMMARY = pd.DataFrame({"encoder": ["best", "mid", "random"], "in_tier": [True, True, False]})
LIMITS = {"D": 0.70, "C": 0.10, "L": 0.80, "R": 0.15}


def test_exercise_a_threshold_beyond_every_candidate():
    text = selection_gate.selection_gate_exercise(PROFILES, SUMMARY, LIMITS, {"D": 0.9})
    assert "The best candidate on D is best at 0.856, so D >= 0.9 stops 3 of 3" in text
    assert "out of this zoo's reach" in text and "none advances" in text
    assert "What decides is D >= 0.9 and R <= 0.15" in text


def test_exercise_a_closing_threshold_decides_whatever_the_change():
    text = selection_gate.selection_gate_exercise(PROFILES, SUMMARY, LIMITS, {"D": 0.85})
    assert "only best meets it" in text and "What decides is R <= 0.15" in text


def test_exercise_dropping_the_closing_threshold_lets_the_tier_decide():
    text = selection_gate.selection_gate_exercise(PROFILES, SUMMARY, LIMITS, {"R": None})
    assert text.startswith("With no R threshold (D >= 0.7, C <= 0.1 and L >= 0.8 unchanged), 1 of 3 candidates clears")
    assert "best advances" in text and "The rest of the tier stays behind: mid fails L." in text
    outside = selection_gate.selection_gate_exercise(PROFILES, SUMMARY.assign(in_tier=[True, False, False]),
                                                     {"D": 0.7}, {"D": 0.75})
    assert "mid clears it too but stays outside the tier" in outside


def test_exercise_when_no_single_threshold_stops_everyone_or_the_tier_does():
    crossed = pd.DataFrame({"D": [0.9, 0.6], "C": [0.05, 0.02]}, index=pd.Index(["x", "y"], name="encoder"))
    scattered = selection_gate.selection_gate_exercise(crossed, pd.DataFrame({"encoder": ["x", "y"], "in_tier": True}),
                                                       {"D": 0.7, "C": 0.1}, {"C": 0.03})
    assert "0 of 2 candidates clear" in scattered and "each candidate misses a different requirement" in scattered
    tiered = selection_gate.selection_gate_exercise(PROFILES, SUMMARY.assign(in_tier=[False, True, False]),
                                                    {"D": 0.8}, {"D": 0.85})
    assert "outside the leading tier" in tiered and "the tier, not a threshold, stops them" in tiered


def test_exercise_refuses_to_drop_a_threshold_the_page_lacks_and_handles_none_left():
    with pytest.raises(ValueError, match="no R threshold to drop"):
        selection_gate.selection_gate_exercise(PROFILES, SUMMARY, {"D": 0.7}, {"R": None})
    text = selection_gate.selection_gate_exercise(PROFILES, SUMMARY, {"R": 0.15}, {"R": None})
    assert "the leading tier alone decides: its 2 members (best and mid) would advance" in text


# --- the key takeaway -------------------------------------------------------------------------------------------

_FAILURES = pd.DataFrame({"rule": ["D >= 0.7", "C <= 0.1", "L >= 0.8", "R <= 0.15"], "failing": [2, 0, 1, 4]})


def test_selection_gate_takeaway_advancing():
    from crsbench_lib.report.takeaway import check_takeaway

    one = selection_gate.selection_gate_takeaway(["a"], ["a", "b"], ["a", "c"], 6, _FAILURES)
    assert check_takeaway(one) == one and one.startswith("1 of 6 candidates advances") and "all 4 thresholds" in one
    two = selection_gate.selection_gate_takeaway(["a", "b"], ["a", "b"], ["a", "b"], 6, _FAILURES, untrained=["b"])
    assert check_takeaway(two) == two and "2 of 6 candidates advance to deployment evaluation (a and b)" in two
    assert "Yet b has no pretraining" in two
    assert "pretraining" not in selection_gate.selection_gate_takeaway(["a", "b"], ["a", "b"], ["a", "b"], 6, _FAILURES)
    with pytest.raises(ValueError):
        selection_gate.selection_gate_takeaway(["c"], ["a"], ["c"], 6, _FAILURES)


def test_selection_gate_takeaway_nobody_advances():
    from crsbench_lib.report.takeaway import check_takeaway

    outside = selection_gate.selection_gate_takeaway([], ["a"], ["c", "d"], 6, _FAILURES)
    assert check_takeaway(outside) == outside
    assert "No candidate advances: 2 of 6 clear every threshold (c and d), but none of them is in the leading tier (a)." == outside
    blocked = selection_gate.selection_gate_takeaway([], ["a"], [], 6, _FAILURES)
    assert check_takeaway(blocked) == blocked and "R <= 0.15 stops the most (4 of them)" in blocked
    closed = selection_gate.selection_gate_takeaway([], ["a"], [], 4, _FAILURES)
    assert "R <= 0.15 stops every one of them" in closed
