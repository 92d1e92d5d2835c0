"""The sensitivity chapter's lessons and exercise solutions follow the perturbations' numbers."""

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD
from crsbench_lib.report.sentences.sensitivity import (
    dirichlet_sd,
    sensitivity_exercise_concentration,
    sensitivity_exercise_subset,
    sensitivity_lessons,
)

WEIGHTS = {"dominance": 0.3, "balance": 0.4, "floor": 0.3}
TOP = ["a", "b", "c"]


def _sweep(changed_at=()):
    rows = []
    for axis, taus in (("D", (0.90, 0.95)), ("R", (0.70, 0.90))):
        for k, (worst, tau) in enumerate(zip((0.1, 0.2), taus)):
            rows.append({"axis": axis, "worst": worst, "is_default": k == 1, "tau_auroc_crs": tau,
                         "top_k": "a, b, c", "top_k_changed": (axis, worst) in changed_at})
    return pd.DataFrame(rows)


def _lessons(share=0.0, p_top=None, sweep=None, weights=WEIGHTS, simulated=True):
    p_top = p_top or {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0}
    return sensitivity_lessons(weights, 100, 1000, 0.996, share, 3, TOP, p_top, 0.0, 0.0, sweep,
                               study_mean_tau_range=(0.985, 0.986), study_top_changes=0, study_draws=1000,
                               simulated=simulated)


@given(st.floats(0, 1), st.floats(0.1, 1e4))
def test_dirichlet_sd_is_the_beta_marginal(w, c):
    assert dirichlet_sd(w, c) == pytest.approx(math.sqrt(w * (1 - w) / (c + 1)))
    assert dirichlet_sd(w, c * 2) <= dirichlet_sd(w, c)


def test_dirichlet_sd_refuses_a_non_positive_concentration():
    with pytest.raises(ValueError):
        dirichlet_sd(0.3, 0)


def test_lessons_design_and_world():
    lessons = _lessons()
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD]
    assert "one standard deviation of 0.046–0.049" in lessons[0].text
    assert "dominance share (30 % of the CRS)" in lessons[1].text
    assert "changes in none of the draws: near the default weights, the weights do not decide" in lessons[2].text
    assert lessons[2].study == "mean τ_b 0.985 to 0.986 over 1000 draws; the top 3 never changed."


def test_lessons_name_who_moves_when_the_top_changes():
    text = _lessons(share=0.003, p_top={"a": 1.0, "b": 1.0, "c": 0.997, "d": 0.003})[2].text
    assert "changes in < 1 % of draws" in text
    assert "c (in the top 3 in > 99 % of draws) and d (< 1 %)" in text and "a and b stay in every draw" in text
    assert "do not decide" not in text


def test_lessons_with_no_dominance_weight():
    text = _lessons(weights={"dominance": 0.0, "balance": 0.5, "floor": 0.5})[1].text
    assert "panel does not enter the CRS at all" in text


def test_anchor_lesson_compares_the_anchors_with_the_weights():
    lessons = _lessons(sweep=_sweep())
    assert len(lessons) == 4
    text = lessons[3].text
    assert "most on R (0.700 to 0.900) and least on D (0.900 to 0.950)" in text
    assert "No worst anchor tried changes the top 3" in text
    moved = _lessons(sweep=_sweep(changed_at={("R", 0.1)}))[3].text
    assert "changes with 1 of the 2 worst anchors tried away from the standard's (R at 0.1)" in moved
    assert "more often than under the weight draws" in moved and "carry more of the top 3" in moved
    rarer = _lessons(share=0.9, sweep=_sweep(changed_at={("R", 0.1)}))[3].text
    assert "no more often than under the weight draws" in rarer


def test_world_lessons_on_own_data_name_no_phantom():
    for lesson in _lessons(share=0.2, sweep=_sweep(), simulated=False):
        if lesson.scope == WORLD:
            assert "phantom" not in lesson.text.lower() and "simulated" not in lesson.text.lower()


def test_concentration_exercise_both_ways():
    looser = sensitivity_exercise_concentration(WEIGHTS, 100, 5, 0.996, 0.003, 0.97, 0.244, 3, TOP,
                                                {"a": 1.0, "b": 1.0, "c": 0.756, "d": 0.244})
    assert "grows from 0.046–0.049 to 0.187–0.200" in looser
    assert "changes in 24 % of draws instead of < 1 % of draws" in looser
    assert "stable only near the default weights" in looser and "a and b stay in every draw" in looser
    never = sensitivity_exercise_concentration(WEIGHTS, 100, 5, 0.996, 0.0, 0.98, 0.0, 3, TOP,
                                               {"a": 1.0, "b": 1.0, "c": 1.0})
    assert "never changes" in never and "stable only" not in never
    tighter = sensitivity_exercise_concentration(WEIGHTS, 100, 1000, 0.996, 0.01, 0.999, 0.0, 3, TOP,
                                                 {"a": 1.0, "b": 1.0, "c": 1.0})
    assert "shrinks from" in tighter and "no more often" in tighter


def test_subset_exercise_both_ways():
    small = sensitivity_exercise_subset(3, 19, 13, 0.983, 0.0, 0.936, 0.219, 0.3, 3)
    assert "0.3 × 1/3 = 0.100 CRS instead of 0.023" in small
    assert "changes in 22 % of panels instead of none of the panels" in small and "decides part of the top 3" in small
    stable = sensitivity_exercise_subset(3, 19, 13, 0.983, 0.0, 0.95, 0.0, 0.3, 3)
    assert "holds as often" in stable and "decides part" not in stable


# --- the key takeaway -------------------------------------------------------------------------------------------


def test_sensitivity_takeaway_stable_top():
    from crsbench_lib.report.sentences.sensitivity import sensitivity_takeaway
    from crsbench_lib.report.takeaway import check_takeaway

    text = sensitivity_takeaway(3, TOP, 1000, 0.9912, 0.0, 0.0, 0.0)
    assert check_takeaway(text) == text
    assert text.startswith("The top 3 (a, b and c) survives every perturbation tried")
    assert "1000" in text and "mean τ_b 0.991" in text and "depends" not in text


@given(weights=st.sampled_from([0.0, 0.004, 0.24, 1.0]), loo=st.sampled_from([0.0, 0.3, 1.0]),
       subsets=st.sampled_from([0.0, 0.05, 0.996]))
def test_sensitivity_takeaway_names_every_share_when_the_top_moves(weights, loo, subsets):
    from crsbench_lib.report.sentences.sensitivity import sensitivity_takeaway
    from crsbench_lib.report.takeaway import check_takeaway

    text = sensitivity_takeaway(3, TOP, 1000, 0.95, weights, loo, subsets)
    assert check_takeaway(text) == text
    if not (weights or loo or subsets):
        assert "survives every perturbation" in text
        return
    assert "depends on these design choices" in text and "mean τ_b 0.950" in text
    expected_weights = {0.0: "in none of the 1000 weight draws", 0.004: "in < 1 % of 1000 weight draws",
                        0.24: "in 24 % of 1000 weight draws", 1.0: "in every one of 1000 weight draws"}[weights]
    assert expected_weights in text
    assert {0.0: "in none of the leave-one-out panels", 0.3: "in 30 % of leave-one-out panels",
            1.0: "in every leave-one-out panel"}[loo] in text
    assert {0.0: "in none of the random sub-panels", 0.05: "in 5 % of random sub-panels",
            0.996: "in > 99 % of random sub-panels"}[subsets] in text


def test_takeaway_says_barely_when_the_top_k_moves_in_few_perturbations():
    from crsbench_lib.report.sentences.sensitivity import RARE_CHANGE, sensitivity_takeaway

    common = dict(top_k=3, default_top=["a", "b", "c"], n_draws=1000, mean_tau=0.997)
    rare = sensitivity_takeaway(share_weights=0.004, share_leave_one_out=0.0, share_subsets=0.0, **common)
    often = sensitivity_takeaway(share_weights=RARE_CHANGE, share_leave_one_out=0.0, share_subsets=0.0, **common)
    assert "barely depends on" in rare and "< 1 %" in rare
    assert " depends on" in often and "barely" not in often


def test_anchor_lesson_names_every_axis_that_moves_tau_equally():
    rows = []
    for axis, taus in (("C", (0.727, 0.818)), ("D", (0.727, 0.818)), ("R", (0.636, 0.727))):
        for k, (worst, tau) in enumerate(zip((0.1, 0.2), taus)):
            rows.append({"axis": axis, "worst": worst, "is_default": k == 1, "tau_auroc_crs": tau,
                         "top_k": "a, b, c", "top_k_changed": False})
    texts = " ".join(lesson.text for lesson in _lessons(sweep=pd.DataFrame(rows)))
    # Three spans of one width: no axis is singled out as moving tau most or least.
    assert "equally on C, D and R" in texts and "least on" not in texts
    rows = [r for r in rows if r["axis"] != "R"] + [{"axis": "R", "worst": w, "is_default": k == 1, "tau_auroc_crs": t,
                                                    "top_k": "a, b, c", "top_k_changed": False}
                                                   for k, (w, t) in enumerate(zip((0.1, 0.2), (0.5, 0.9)))]
    texts = " ".join(lesson.text for lesson in _lessons(sweep=pd.DataFrame(rows)))
    assert "most on R (0.500 to 0.900) and least on C and D (0.727 to 0.818 for C)" in texts

