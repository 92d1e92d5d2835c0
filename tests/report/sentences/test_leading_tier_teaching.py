"""The leading-tier chapter's teaching sentences: the reference's standing, "Is this real?" and the exercises."""

import math

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.report.sentences import leading_tier_teaching as teaching
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD

STANDING = pd.DataFrame({"CRS": [0.602, 0.696, 0.50], "D": [0.846, 0.856, 0.70], "C": [0.042, 0.027, 0.05],
                         "L": [0.905, 0.85, 0.6], "R": [0.157, 0.17, 0.3]}, index=["ref", "a", "b"])


def test_the_reference_is_no_ceiling_where_a_candidate_beats_it():
    text = teaching.describe_reference_standing(STANDING, "ref", ["a", "b"])
    assert "Not here: on CRS 1 of the 2 candidates scores better than it (the best, a, 0.696 against 0.602)" in text
    assert "on D (AUROC) 1 (the best, a, 0.856 against 0.846)" in text
    assert "on C (ECE, lower is better) 1 (the best, a, 0.027 against 0.042)" in text
    assert "on L and R no candidate scores better" in text and "not what the task allows" in text


def test_the_reference_is_a_ceiling_where_no_candidate_beats_it():
    weak = STANDING.loc[["ref", "b"]]
    text = teaching.describe_reference_standing(weak, "ref", ["b"])
    assert "yes for every column shown: no candidate scores better than it on CRS, D, C, L and R" in text
    assert "Not here" not in text


def test_the_standing_says_which_gains_the_paired_interval_resolves():
    se = pd.DataFrame({"CRS": [0.06, 0.01], "D": [0.001, 0.01], "C": [0.002, 0.01], "L": [0.01] * 2, "R": [0.01] * 2},
                      index=["a", "b"])
    text = teaching.describe_reference_standing(STANDING, "ref", ["a", "b"], se)
    assert "0.696 against 0.602; the paired interval of the difference, simultaneous at 95 % over the 2 candidates, includes zero" in text
    assert "0.856 against 0.846; the paired interval of the difference, simultaneous at 95 % over the 2 candidates, excludes zero" in text
    both = STANDING.assign(D=[0.846, 0.856, 0.85])
    several = teaching.describe_reference_standing(both, "ref", ["a", "b"], se)
    assert "on D (AUROC) 2 (the best, a, 0.856 against 0.846; for 1 of them (a) the paired interval" in several
    none = teaching.describe_reference_standing(both, "ref", ["a", "b"], se.assign(D=1.0))
    assert "for none of them the paired interval" in none


def test_the_standing_holds_its_intervals_to_the_pages_simultaneous_standard():
    # Issue 46 item 8: a gain 2.08 standard errors above zero clears a one-pair 95 % interval (1.96) but not
    # one simultaneous over 2 candidates (2.24), so the paragraph does not call it resolved.
    se = pd.DataFrame({"CRS": [0.06, 0.01], "D": [0.0048, 0.01], "C": [0.01] * 2, "L": [0.01] * 2, "R": [0.01] * 2},
                      index=["a", "b"])
    text = teaching.describe_reference_standing(STANDING, "ref", ["a", "b"], se)
    assert "0.856 against 0.846; the paired interval of the difference, simultaneous at 95 % over the 2 candidates, " \
           "includes zero" in text


def _summary(point, roles=None, in_tier=None):
    names = [f"e{i}" for i in range(len(point))]
    table = pd.DataFrame({"encoder": names, "crs": point, "role": roles or ["candidate"] * len(point)})
    if in_tier is not None:
        table["in_tier"] = in_tier
    return names, table


def test_coverage_exercise_says_whether_the_tier_shrinks():
    rng = np.random.default_rng(1)
    point = np.array([0.70, 0.66, 0.50])
    draws = point + rng.normal(0.0, 0.02, (400, 3))
    names, summary = _summary(point)
    shrinks = teaching.leading_tier_exercise_coverage(draws, names, summary, 0.5)
    assert "the tier holds 1 candidate (e0), against 2 at 95 %: e1 leaves" in shrinks
    assert "can only shrink or stay" in shrinks
    same = teaching.leading_tier_exercise_coverage(draws, names, summary, 0.99)
    assert "the same as at 95 %" in same and "can only grow or stay" in same and "rises" in same


def test_draws_exercise_stable_and_moving_tiers():
    rng = np.random.default_rng(2)
    point = np.array([0.70, 0.60, 0.40])
    names, summary = _summary(point)
    stable = teaching.leading_tier_exercise_draws(point + rng.normal(0.0, 0.01, (1000, 3)), names, summary)
    assert "The tier does not move" in stable
    # The first draws cannot separate e1 from e0, the last ones can: a rerun's Monte-Carlo error decides.
    draws = np.vstack([point + rng.normal(0.0, 0.08, (500, 3)), point + rng.normal(0.0, 0.005, (500, 3))])
    moving = teaching.leading_tier_exercise_draws(draws, names, summary)
    assert "moves with the draws" in moving and "e1" in moving.split("moves with the draws")[0]
    with pytest.raises(ValueError, match="disjoint"):
        teaching.leading_tier_exercise_draws(draws, names, summary, n_draws=600)


def test_top_k_exercise_reads_the_draws_and_leaves_the_tier_alone():
    rng = np.random.default_rng(3)
    point = np.array([0.70, 0.69, 0.60, 0.40, 0.39])
    names, summary = _summary(point, in_tier=[True, True, False, False, False])
    draws = point + rng.normal(0.0, 0.02, (500, 5))
    more = teaching.leading_tier_exercise_top_k(draws, names, summary, 3, page_k=2)
    assert more.startswith("In the top 3 in every draw: e0, e1 and e2 (in the top 2 in every draw: e0 and e1)")
    assert "more candidates always inside it (3 against 2)" in more and "the same 2 candidates whatever k" in more
    same = teaching.leading_tier_exercise_top_k(draws, names, summary, 4, page_k=3)
    assert "adds no candidate" in same and "the nearest, e3" in same


def test_lessons_follow_the_tier():
    tier = teaching.leading_tier_lessons(["a", "b"], 19, {"a": 0.47, "b": 0.39}, 3.5, 3, 10, simulated=True,
                                         study_p_rank1={"PanDerm": 0.664, "MedSigLIP": 0.336}, study_encoders=15)
    assert [lesson.scope for lesson in tier] == [DESIGN, DESIGN, WORLD]
    assert ("compared with its 18 rivals at once, so its bounds reach up to 3.50 standard errors where one comparison "
            "alone would reach 1.64") in tier[0].text and "at least that probability" in tier[0].text
    assert "at most 10 distinct resamples (C(5, 3)), and this page's draws hit 10" in tier[1].text
    assert "the tier holds 2 of the 19 candidates (a and b)" in tier[2].text and "ranks first in 47 %" in tier[2].text
    assert tier[2].study.startswith("PanDerm and MedSigLIP shared the lead of 15 encoders (P(rank 1) 0.664 and 0.336)")
    alone = teaching.leading_tier_lessons(["a"], 2, {"a": 0.99}, math.nan, 5, 120)
    assert "a alone forms the tier among 2 candidates" in alone[2].text
    assert "171 pairs" not in alone[0].text and "at most 126 distinct resamples (C(9, 5))" in alone[1].text


def test_own_data_tier_lesson_names_no_simulation():
    lesson = teaching.leading_tier_lessons(["a", "b"], 5, {"a": 0.5}, 2.5, 3, 10, simulated=False)[2]
    assert "this run's own data" in lesson.text and "simulated" not in lesson.text and "phantom" not in lesson.text


def test_the_verdict_follows_the_intervals_when_there_are_any():
    # Referee (issue 49 review): "Not here" rested on point gains even when every interval included zero.
    se = pd.DataFrame({"CRS": [1.0, 1.0], "D": [1.0, 1.0], "C": [1.0] * 2, "L": [1.0] * 2, "R": [1.0] * 2},
                      index=["a", "b"])
    text = teaching.describe_reference_standing(STANDING, "ref", ["a", "b"], se)
    assert "Not shown here: at the point, on CRS 1 of the 2 candidates" in text
    assert "the data do not show the reference passed; nor do they show it to be a ceiling" in text
    assert "Not here:" not in text

