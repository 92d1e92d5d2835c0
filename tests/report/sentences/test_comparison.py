"""The published and differences chapters' lessons and solutions follow the page's tables (issue 29)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from crsbench_lib.report.sentences import comparison
from crsbench_lib.report.sentences.comparison import DRAW_QUANTITIES, FIXED_QUANTITY
from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, describe_lessons


def _compared(fixed=0.0, p_rank1=0.471, tau=0.906, lora=0.956, n=19):
    rows = [("encoders", 15, n), ("Kendall tau (AUROC vs CRS, full panel)", 0.6, tau), ("pairs", 105, n * (n - 1) // 2),
            ("top CRS", 0.703, 0.688), (DRAW_QUANTITIES[0], 0.664, p_rank1), (DRAW_QUANTITIES[1], 0.986, 0.996),
            (DRAW_QUANTITIES[2], 0, 3), (FIXED_QUANTITY, 0.0, fixed), ("LoRA: frozen vs adapted tau (full panel)", 0.562, lora)]
    return pd.DataFrame(rows, columns=["quantity", "study", "this_build"], dtype=object)


def test_direction_counts_use_the_sentences_rule():
    counts = comparison.direction_counts(_compared(lora=math.nan))
    assert counts["absent"] == ["LoRA: frozen vs adapted tau (full panel)"]
    assert "top CRS" in counts["close"] and FIXED_QUANTITY in counts["equal"]
    assert "Kendall tau (AUROC vs CRS, full panel)" in counts["higher"] and DRAW_QUANTITIES[0] in counts["lower"]
    assert sum(map(len, counts.values())) == 9
    # Equal as printed is "equal", never "close" (lecturer's item 23: "0 is close to 0").
    lines = comparison.describe_quantities(_compared())
    assert "This build's insertion: fixed displacement (0) equals the study's (0)." in lines
    assert not any("close to the study's (0)" in line for line in lines)
    assert "top CRS" in next(line for line in lines if "top CRS" in line) and any("is close to" in line for line in lines)
    moved = comparison.describe_quantities(_compared(fixed=0.002))
    assert "This build's insertion: fixed displacement (0.002) is close to the study's (0)." in moved
    assert FIXED_QUANTITY in comparison.direction_counts(_compared(fixed=0.002))["close"]
    assert comparison.describe_directions(_compared()) == (
        "Of the 9 quantities with a value here, 5 are higher than the study's, 1 lower, 2 close (within 0.05) and 1 equal.")


def test_published_lessons_scopes_and_the_fixed_quantity():
    lessons = comparison.published_lessons(_compared(), "consistent", "consistent")
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD]
    assert "9 of 9 are computed on this run" in lessons[0].text and "is 0 here and 0 in the study" in lessons[0].text
    moved = comparison.published_lessons(_compared(fixed=0.002), "consistent", "consistent")[0].text
    assert "is 0.002 here, not 0" in moved and "expected to match" not in moved
    absent = comparison.published_lessons(_compared(lora=math.nan), "consistent", None)[0].text
    assert "8 of 9" in absent and "LoRA: frozen vs adapted tau (full panel) is absent" in absent


@pytest.mark.parametrize("study, build, words", [
    ("consistent", "consistent", ("study's are consistent", "rounded the same way, are consistent")),
    ("inconsistent", None, ("study's are inconsistent", "ranks are tied")),
    ("undetermined", "inconsistent", ("study's are undetermined", "are inconsistent (no permutation")),
])
def test_published_audit_lesson_follows_both_statuses(study, build, words):
    text = comparison.published_lessons(_compared(), study, build)[1].text
    for word in words:
        assert word in text


def test_published_world_lesson_counts_directions_and_sizes():
    text = comparison.published_lessons(_compared(), "consistent", "consistent")[2].text
    counts = comparison.direction_counts(_compared())
    assert (f"Of the 9 quantities with a value here, {len(counts['higher'])} are higher than the study's, "
            f"{len(counts['lower'])} lower, {len(counts['close'])} close (within 0.05) and 1 equal") in text
    assert "19 candidates here, one swapped pair moving τ_b by 0.012; 15 in the study, by 0.019" in text
    assert "no row of the study is a target" in text
    fewer = comparison.published_lessons(_compared(n=10, tau=0.3), "consistent", "consistent")[2].text
    assert "10 candidates here, one swapped pair moving τ_b by 0.044" in fewer


def test_published_lessons_on_own_data_name_no_simulation():
    lessons = comparison.published_lessons(_compared(), "consistent", "consistent", simulated=False)
    assert all("phantom" not in x.text.lower() and "simulated" not in x.text.lower() for x in lessons if x.scope == WORLD)
    assert "This run's own data" in describe_lessons(lessons, simulated=False)


@pytest.mark.parametrize("p, leader_may_change", [(0.471, True), (0.95, False)])
def test_published_exercise_gives_the_monte_carlo_error(p, leader_may_change):
    text = comparison.published_exercise_draws(_compared(p_rank1=p), 1000, new_draws=200)
    assert text.startswith("In this build 3 of the 9 rows depend on random draws")
    assert "the other 6 are computed from the results table alone" in text
    se_new = math.sqrt(p * (1 - p) / 200)
    assert f"it grows to {se_new:.3f}" in text and f"about {2 * se_new:.3f}" in text
    assert ("the leader itself may change" in text) is leader_may_change
    assert len(text.split()) >= 25


def _anchors(taus=(0.989, 0.905, 0.958, 0.989, 0.905), overlaps=(3, 2, 3, 3, 2)):
    return pd.DataFrame({"anchors_from_cohort": ["D", "C", "L", "R", "all four"], "tau_to_standard": list(taus),
                         "top_k_overlap": list(overlaps), "tau_auroc_crs": [0.9] * 5})


def _facts():
    return pd.DataFrame({"fact": ["encoders", "seeds", "institutional shift", "LoRA runs (encoder x dataset x seed)"],
                         "study": ["15", "-", "CheXpert to MIMIC-CXR", "135"],
                         "this_build": ["20", "3", "simulated site B", "90"]})


def test_differences_lessons_read_the_anchor_table():
    lessons = comparison.differences_lessons(_facts(), _anchors(), _compared())
    assert [lesson.scope for lesson in lessons] == [DESIGN, WORLD, WORLD]
    assert "0.905 to 0.989 for one axis at a time and 0.905 for all four at once" in lessons[0].text
    assert lessons[1].text.startswith("Here the anchors of C matter most")
    assert "those of D and R matter least (τ_b 0.989)" in lessons[1].text
    still = comparison.differences_lessons(_facts(), _anchors(taus=(1, 1, 1, 1, 1), overlaps=(3,) * 5), _compared())
    assert "does not move at all" in still[0].text and "every axis's anchors matter alike" in still[1].text
    other = comparison.differences_lessons(_facts(), _anchors(taus=(0.8, 0.99, 0.95, 0.97, 0.8)), _compared())
    assert other[1].text.startswith("Here the anchors of D matter most")


def test_differences_world_lesson_lists_the_inputs_and_directions():
    text = comparison.differences_lessons(_facts(), _anchors(), _compared())[2].text
    assert "(20 encoders against 15, 90 LoRA runs against 135 and simulated site B against CheXpert to MIMIC-CXR)" in text
    assert "Of the 9 quantities with a value here" in text and "not prove which input causes it" in text
    # Only what the study reports is compared: its blank rows are said to be unreported, equal rows are named.
    assert "the study does not report the seeds" in text and "except for" not in text
    domains = pd.concat([_facts(), pd.DataFrame({"fact": ["domains"], "study": ["derm, cxr"],
                                                 "this_build": ["derm, cxr"]})], ignore_index=True)
    assert ", except for the domains" in comparison.differences_lessons(domains, _anchors(), _compared())[2].text
    own = comparison.differences_lessons(_facts().iloc[:2], _anchors(), _compared().iloc[:0], simulated=False)
    assert "(20 encoders against 15)" in own[2].text and "quantities with a value" not in own[2].text
    assert all("phantom" not in x.text.lower() for x in own if x.scope == WORLD)


def _scores(crs):
    return pd.DataFrame({"encoder": list("abcdef"), "D": [0.9, 0.85, 0.8, 0.75, 0.7, 0.65], "crs": crs})


@pytest.mark.parametrize("new, old, verb", [((0.3, 0.0), (0.2, 0.0), "widening"), ((0.1, 0.0), (0.2, 0.0), "narrowing"),
                                            ((0.25, 0.05), (0.2, 0.0), "moving")])
def test_differences_exercise_reads_the_what_if(new, old, verb):
    base = _scores([0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    whatif = _scores([0.7, 0.5, 0.6, 0.4, 0.3, 0.2])
    text = comparison.differences_exercise_anchor(base, whatif, {"tau_to_standard": 0.905, "top_k_overlap": 2}, "C",
                                                  new, old)
    assert text.startswith(f"In this build, {verb} the C anchors from [{old[0]!r}, {old[1]!r}] to [{new[0]!r}, {new[1]!r}]")
    assert "τ_b 0.867 to the standard's (1 of 15 pairs swapped) and keeps 3 of 3 members of the top 3" in text
    assert "gave τ_b 0.905; the what-if moves the ranking more than that" in text
    assert "the CRS moves further from AUROC" in text and len(text.split()) >= 25


def test_differences_exercise_when_the_what_if_moves_less_and_closer():
    base = _scores([0.7, 0.5, 0.6, 0.4, 0.3, 0.2])
    same = comparison.differences_exercise_anchor(base, _scores([0.7, 0.6, 0.5, 0.4, 0.3, 0.2]),
                                                  {"tau_to_standard": 0.8, "top_k_overlap": 2}, "C", (0.3, 0.0), (0.2, 0.0))
    assert "the what-if moves the ranking less than that" in same and "the CRS moves closer to AUROC" in same


def test_differences_exercise_when_the_what_if_moves_nothing():
    base = _scores([0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    text = comparison.differences_exercise_anchor(base, _scores([0.71, 0.6, 0.5, 0.4, 0.3, 0.2]),
                                                  {"tau_to_standard": 0.905, "top_k_overlap": 2}, "C", (0.3, 0.0), (0.2, 0.0))
    assert "τ_b 1.000 to the standard's (0 of 15 pairs swapped)" in text
    assert "the what-if does not move the ranking at all" in text and "stays as close to AUROC as it was" in text


def test_differences_exercise_counts_swapped_pairs_when_the_what_if_ties():
    # A tie formed by the what-if is not a swap: the count is exact, never inferred from tau_b (issue 47).
    base = _scores([0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    text = comparison.differences_exercise_anchor(base, _scores([0.6, 0.6, 0.6, 0.6, 0.7, 0.2]),
                                                  {"tau_to_standard": 0.905, "top_k_overlap": 2}, "C", (0.3, 0.0), (0.2, 0.0))
    assert "(4 of 15 pairs swapped)" in text


# --- the key takeaways and the two encoder counts -------------------------------------------------------

from crsbench_lib.report.takeaway import check_takeaway  # noqa: E402


@pytest.mark.parametrize("status, words", [("consistent", "consistent: one permutation of its 15 ranks"),
                                           ("inconsistent", "inconsistent: no permutation of its 15 ranks"),
                                           ("undetermined", "undetermined: no permutation of its 15 ranks found")])
def test_published_takeaway_counts_directions_and_reads_the_audit(status, words):
    text = comparison.published_takeaway(_compared(), status)
    assert check_takeaway(text) == text and words in text
    counts = comparison.direction_counts(_compared())
    assert text.startswith("This build computes 9 of the study's 9 headline quantities")
    assert f"{len(counts['higher'])} higher, {len(counts['lower'])} lower, {len(counts['close'])} close, 1 equal;" in text
    assert "should match, and does (0 here and in the study)" in text


def test_published_takeaway_when_the_fixed_quantity_moves_or_is_absent():
    moved = comparison.published_takeaway(_compared(fixed=0.002), "consistent")
    assert "is 0.002 here, not 0: the standard was not held fixed" in moved and "and does" not in moved
    absent = comparison.published_takeaway(_compared(fixed=math.nan, lora=math.nan), "consistent")
    assert "computes 7 of the study's 9" in absent and "displacement is absent here" in absent
    for text in (moved, absent):
        assert check_takeaway(text) == text


def test_split_encoder_count_says_which_count_is_which():
    split = comparison.split_encoder_count(_facts(), 20, ["intask_supervised_s"])
    rows = split.set_index("fact")
    assert list(split["fact"])[:2] == [comparison.ENCODERS_SCORED, comparison.CANDIDATES_RANKED]
    assert rows.loc[comparison.ENCODERS_SCORED, "this_build"] == "20"
    assert rows.loc[comparison.CANDIDATES_RANKED, "this_build"] == "19" and "encoders" not in rows.index
    assert len(split) == len(_facts()) + 1
    none = comparison.split_encoder_count(_facts(), 6, [])
    assert set(none.set_index("fact").loc[[comparison.ENCODERS_SCORED, comparison.CANDIDATES_RANKED], "this_build"]) == {"6"}
    # The lessons then count the candidates, as the comparison does.
    text = comparison.differences_lessons(split, _anchors(), _compared())[2].text
    assert "19 candidates against 15" in text and "20 encoders" not in text


def test_describe_encoder_counts_names_the_references():
    one = comparison.describe_encoder_counts(20, ["intask_supervised_s"])
    assert "scores 20 encoders and ranks 19 of them" in one
    assert "intask_supervised_s is scored but never ranked (a reference encoder)" in one
    two = comparison.describe_encoder_counts(20, ["b", "a"])
    assert "ranks 18 of them" in two and "a and b are scored but never ranked (reference encoders)" in two
    # Many references: their count and families, and where the book lists them, never every name.
    families = {f"c{k}": "classical" for k in range(8)} | {"r0": "random", "r1": "random", "t": "intask"}
    many = comparison.describe_encoder_counts(30, sorted(families), families)
    assert ("ranks 19 of them as candidates: 11 reference encoders (8 classical feature extractors, 2 "
            "random-initialisation networks and 1 in-task reference; the zoo table of the cohort chapter lists them) "
            "are scored but never ranked, so every rank statistic") in many
    assert not any(name in many.split("(", 1)[1] for name in ("c0", "r1", " t,"))
    assert comparison.describe_encoder_counts(6, []) == "This build scores and ranks the same 6 encoders: none is a reference."


def test_differences_takeaway_follows_the_anchor_table():
    split = comparison.split_encoder_count(_facts(), 20, ["intask_supervised_s"])
    moved = comparison.differences_takeaway(split, _anchors(), _compared())
    assert check_takeaway(moved) == moved and "(19 candidates against 15," in moved
    # C alone moves the ranking as far as all four (0.905): the first such row is named.
    assert "Taking C's anchors alone from this cohort gives τ_b 0.905 to the standard's ranking, keeping 2 of the top 3" in moved
    assert "decide part of it" in moved
    counts = comparison.direction_counts(_compared())
    assert f"so of 9 quantities {len(counts['higher'])} higher" in moved
    every = comparison.differences_takeaway(split, _anchors(taus=(0.99, 0.95, 0.98, 0.99, 0.9)), _compared())
    assert "Taking all four anchors from this cohort gives τ_b 0.900" in every and check_takeaway(every) == every
    single = comparison.differences_takeaway(split, _anchors(taus=(1, 0.867, 1, 1, 1), overlaps=(3,) * 5), _compared())
    assert "C's anchors alone" in single and "keeping 3 of the top 3" in single and "none" not in single
    still = comparison.differences_takeaway(split, _anchors(taus=(1, 1, 1, 1, 1), overlaps=(3,) * 5), _compared())
    assert "leave the CRS ranking unchanged (τ_b 1.000): the fixed anchors decide none" in still
    assert check_takeaway(still) == still
    bare = comparison.differences_takeaway(_facts().iloc[1:], _anchors().iloc[:0], _compared())
    assert "(images and encoders)" in bare and "anchors" not in bare and check_takeaway(bare) == bare
