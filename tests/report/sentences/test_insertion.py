"""The insertion sentences keep a reordering apart from a shift, and follow the displacement."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import insertion


@given(fixed=st.floats(0, 1, allow_nan=False), cohort=st.floats(0, 1, allow_nan=False))
def test_describe_displacement(fixed, cohort):
    text = insertion.describe_displacement(fixed, cohort)
    assert ("No published score moved" in text) == (fixed == 0)
    assert ("not being held fixed" in text) == (fixed != 0)


@given(n=st.integers(2, 30), data=st.data())
def test_describe_rank_changes_never_calls_a_reordering_a_mere_shift(n, data):
    pairs = n * (n - 1) // 2
    changes = data.draw(st.integers(0, pairs))
    shifted = data.draw(st.integers(0, n))
    text = insertion.describe_rank_changes("the fixed reference", changes, pairs, shifted, n)
    if changes == 0:
        assert "no pair" in text and "relative order is as before" in text
        assert ("only because newcomers" in text) == (shifted > 0)
    else:
        assert f"{changes} of {pairs} pairs" in text and "changed order" in text
        assert "relative order is as before" not in text and "only because" not in text


@pytest.mark.parametrize("args", [(-1, 10, 0, 5), (11, 10, 0, 5), (0, 10, 6, 5), (0.5, 10, 0, 5), (True, 10, 0, 5)])
def test_describe_rank_changes_rejects_impossible_counts(args):
    with pytest.raises(ValueError):
        insertion.describe_rank_changes("x", *args)


def _noise(cohort_changes: int, low: float, high: float, seed_pairs: int = 3, renorm_tau: float = 0.54):
    import pandas as pd

    from crsbench_lib.scoring.insertion import RANK_NOISE_COLUMNS

    nan = float("nan")
    base = (seed_pairs, 0.81, 0.76, 0.85, 10, 16) if seed_pairs else (0, nan, nan, nan, nan, nan)
    cohort = (seed_pairs, renorm_tau, renorm_tau - 0.05, renorm_tau + 0.05, low, high) if seed_pairs else base
    rows = [("fixed reference", 1.0, 0, 136, *base),
            ("cohort-renormalised", 1 - 2 * cohort_changes / 136, cohort_changes, 136, *cohort)]
    return pd.DataFrame(rows, columns=list(RANK_NOISE_COLUMNS))


def _baselines(cohort_tau: float, seed_pairs: int = 3):
    import numpy as np

    from crsbench_lib.scoring.retest import noise_baseline_table

    seeds = {"the fixed-reference ranking": [0.76, 0.81, 0.85][:seed_pairs]}
    return noise_baseline_table({"the insertion under the fixed reference": 1.0,
                                 "the insertion under cohort renormalisation": cohort_tau},
                                seeds, {"the fixed-reference ranking": np.linspace(0.80, 0.95, 41)})


@given(changes=st.integers(0, 136), low=st.integers(0, 136), width=st.integers(0, 30))
def test_describe_rank_noise_compares_the_insertion_with_the_seed_redraws(changes, low, width):
    high = min(136, low + width)
    table = _noise(changes, low, high)
    text = insertion.describe_rank_noise(table, _baselines(float(table["insertion_tau"].iloc[1])))
    assert f"reorders 0 of 136 pairs under the fixed reference and {changes} under cohort renormalisation" in text
    # No reordered pair earns no comparison and no talk of reordered history; any other count gets both.
    assert ("reorders no pair of the existing entries" in text) == (changes == 0)
    assert ("history rewritten" in text) == (changes > 0)
    assert ("reorders fewer pairs than redrawing the seeds" in text) == (0 < changes < low)
    assert ("reorders more pairs than any redraw" in text) == (changes > high and changes > 0)
    assert ("within their range" in text) == (low <= changes <= high and changes > 0)
    # Whatever the counts, a renormalisation's reordering is never passed off as noise, and the τ_b part is the
    # book's shared sentence (the same words as on the agreement, transfer and LoDO pages).
    assert "no new measurement" in text and "belongs to this build's world" in text
    assert "Two independent bootstrap draws of the same ranking" in text


def test_describe_rank_noise_on_the_default_runs_figures():
    text = insertion.describe_rank_noise(_noise(2, 28, 37), _baselines(0.97), simulated=True)
    assert "The insertion under the fixed reference keeps the order exactly (τ_b = 1)" in text
    assert "while two seeds of the same ranking reorder 10 to 16 pairs (fixed reference) and 28 to 37" in text
    assert "Renormalisation reorders fewer pairs than redrawing the seeds does" in text
    assert "the renormalised ranking is also the less reproducible one (mean τ_b 0.54 against 0.81)" in text
    assert "this build's simulated world and these newcomers" in text
    # A renormalised ranking as reproducible as the fixed one earns no such clause.
    assert "less reproducible" not in insertion.describe_rank_noise(_noise(2, 10, 16, renorm_tau=0.81),
                                                                    _baselines(0.97))


def test_describe_rank_noise_without_a_second_seed_and_without_both_schemes():
    text = insertion.describe_rank_noise(_noise(2, 0, 0, seed_pairs=0), _baselines(0.97, seed_pairs=0))
    assert "single seed, so the count cannot be read" in text and "fewer" not in text
    assert "single seed, so no seed-redraw baseline" in text
    with pytest.raises(ValueError, match="expected the rows"):
        insertion.describe_rank_noise(_noise(2, 28, 37).iloc[:1], _baselines(0.97))


# --- "Is this real?" and the exercises (issue 29) ---------------------------------------------------------

import pandas as pd  # noqa: E402
from types import SimpleNamespace  # noqa: E402

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD, describe_lessons  # noqa: E402


def _insertion_lessons(fixed=0.0, cohort=0.146, fixed_changes=0, cohort_changes=2, shifted=16, extended=None,
                       seed_pairs=3, low=7, high=16, simulated=True):
    return insertion.insertion_lessons(fixed, cohort, fixed_changes, cohort_changes, 136, shifted, 17,
                                       _noise(cohort_changes, low, high, seed_pairs=seed_pairs),
                                       {"D": "best", "L": "best", "R": "worst"} if extended is None else extended,
                                       simulated=simulated)


def test_insertion_lessons_scopes_and_the_fixed_anchor_lesson():
    lessons = _insertion_lessons()
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, WORLD]
    assert lessons[0].text.endswith("the largest change of the 17 existing scores is exactly 0.")
    assert lessons[0].study == "fixed-reference displacement 0.0."
    moved = _insertion_lessons(fixed=1e-9)[0].text
    assert "is 1e-09, so the standard was not held fixed" in moved and "exactly 0" not in moved


def test_insertion_order_lesson_keeps_order_apart_from_position():
    text = _insertion_lessons()[1].text
    assert "0 of 136 pairs of existing encoders changed order, while 16 of the 17 changed position only" in text
    assert "none changed position either" in _insertion_lessons(shifted=0)[1].text
    assert "which a fixed standard cannot do" in _insertion_lessons(fixed_changes=3)[1].text


@pytest.mark.parametrize("changes, word", [(2, "fewer than the 7 to 16 pairs"), (9, "within the 7 to 16 pairs"),
                                           (20, "more than the 7 to 16 pairs")])
def test_insertion_world_lesson_reads_renormalisation_against_the_seeds(changes, word):
    text = _insertion_lessons(cohort_changes=changes)[2].text
    assert f"reordered {changes} of 136 pairs, {word}" in text
    assert ("a new best on discrimination (D) and label efficiency (L) and a new worst on robustness (R), moving those"
            in text)


def test_insertion_world_lesson_without_extremes_without_a_move_and_with_one_seed():
    assert "inside the cohort's range on every axis" in _insertion_lessons(extended={})[2].text
    assert "would not have moved the existing scores either" in _insertion_lessons(cohort=0.0, cohort_changes=0)[2].text
    assert "a single seed" in _insertion_lessons(seed_pairs=0)[2].text


def test_insertion_lessons_on_own_data_name_no_simulation():
    lessons = _insertion_lessons(simulated=False)
    assert all("phantom" not in x.text.lower() and "simulated" not in x.text.lower() for x in lessons if x.scope == WORLD)
    assert "This run's own data" in describe_lessons(lessons, simulated=False)


def test_new_extremes_reads_both_ends_of_every_axis():
    old = pd.DataFrame({"D": [0.6, 0.8], "C": [0.02, 0.05], "L": [0.5, 0.7], "R": [0.2, 0.4]})
    assert insertion.new_extremes(old, pd.DataFrame({"D": [0.7], "C": [0.03], "L": [0.6], "R": [0.3]})) == {}
    assert insertion.new_extremes(old, pd.DataFrame({"D": [0.5], "C": [0.06], "L": [0.8], "R": [0.1]})) == {
        "D": "worst", "C": "worst", "L": "best", "R": "best"}
    both = pd.DataFrame({"D": [0.5, 0.9], "C": [0.03, 0.03], "L": [0.6, 0.6], "R": [0.3, 0.3]})
    assert insertion.new_extremes(old, both) == {"D": "best and worst"}
    assert insertion.new_extremes(old, old.iloc[:0]) == {}


def _result(cohort, changes, fixed=0.0):
    return SimpleNamespace(max_abs_fixed_displacement=fixed, max_abs_cohort_displacement=cohort,
                           cohort_order_changes=changes, n_pairs=120)


def test_insertion_exercise_answers_from_the_weak_insertion():
    text = insertion.insertion_exercise_weakest(_result(0.08, 1), _result(0.146, 2), ["pixels", "lbp"],
                                                {"C": "worst", "R": "worst"})
    assert text.startswith("In this build the two weakest candidates by clean AUROC are pixels and lbp.")
    assert "move no existing score under the fixed reference (largest change 0)" in text
    assert ("by up to 0.080, and reorder 1 of 120 pairs: less than the strongest newcomers, which moved them by up to "
            "0.146 and reordered 2 of 120") in text
    assert "a new worst on calibration (C) and robustness (R)" in text and "So yes" in text and len(text.split()) >= 25
    assert "more than the strongest" in insertion.insertion_exercise_weakest(_result(0.2, 5), _result(0.146, 2), ["a"], {})
    still = insertion.insertion_exercise_weakest(_result(0.0, 0), _result(0.146, 2), ["a", "b"], {})
    assert "move no existing score either" in still and "leaves history alone" in still and "So yes" not in still


def _summary(moved=0, largest=0.0, cohort_moved=17, cohort_largest=0.0596, cohort_changes=0):
    return pd.DataFrame({"n_published": [17, 17], "max_abs_crs_displacement": [largest, cohort_largest],
                         "n_scores_moved": [moved, cohort_moved], "n_pairs": [136, 136],
                         "pairwise_order_changes": [0, cohort_changes], "n_positions_shifted": [17, 17]},
                        index=pd.Index(["fixed reference", "cohort-renormalised"], name="scheme"))


def _saturation(best=0, worst=0):
    return pd.DataFrame({"standard_version": "v", "axis": list("DCLR"), "at_worst": [0, 0, 0, worst],
                         "at_best": [best, 0, 0, 0], "saturated": 0, "n": 30})


def _registry(identical=17, largest=0.0, summary=None, verified=True, saturation=None, simulated=True):
    return insertion.registry_lessons(17, identical, 13, largest, _summary() if summary is None else summary, verified,
                                      30, _saturation() if saturation is None else saturation, simulated=simulated)


def test_registry_lessons_follow_the_published_entries():
    lessons = _registry()
    assert [lesson.scope for lesson in lessons] == [DESIGN, DESIGN, DESIGN, WORLD, WORLD]
    # That a fixed anchor cannot stretch holds for any benchmark of this design, not for this world only.
    assert "A fixed anchor cannot stretch" in lessons[2].text
    assert "here 17 of 17 published CRS values are the same double" in lessons[0].text
    assert lessons[0].study == "fixed-reference displacement 0.0."
    broken = _registry(identical=15, largest=2e-9)[0].text
    assert "only 15 of 17" in broken and "not held fixed" in broken
    assert "found nothing to report on 30 entries" in lessons[1].text
    assert "found problems in 30 entries" in _registry(verified=False)[1].text


def test_registry_world_lessons_follow_renormalisation_and_saturation():
    kept = _registry()[3].text
    assert "would have moved 17 of 17 published scores, by up to 0.060, and reordered 0 of 136 pairs" in kept
    assert "while keeping their order" in kept
    assert "rewritten both the values and the order" in _registry(summary=_summary(cohort_changes=4))[3].text
    assert "not have moved any published score" in _registry(summary=_summary(cohort_moved=0, cohort_largest=0))[3].text
    assert "No entry sits on an anchor" in _registry()[4].text
    saturated = _registry(saturation=_saturation(best=3, worst=1))[4].text
    assert "3 on the best anchor of D and 1 on the worst anchor of R" in saturated and "No entry" not in saturated


def test_registry_lessons_on_own_data_name_no_simulation():
    lessons = _registry(simulated=False)
    assert all("phantom" not in x.text.lower() and "simulated" not in x.text.lower() for x in lessons if x.scope == WORLD)


def test_registry_exercise_answers_from_the_exercise_run():
    text = insertion.registry_exercise(_summary(cohort_changes=1), ["a", "b"], lora_candidates=False)
    assert "holding back a and b and inserting them without the LoRA candidates leaves 0 of 17" in text
    assert "the answer for any encoders held back" in text and "reordered 1 of 136 pairs" in text
    assert len(text.split()) >= 25
    broken = insertion.registry_exercise(_summary(moved=2, largest=1e-6), ["a"], lora_candidates=True)
    assert "with the LoRA candidates leaves 2 of 17" in broken and "not held fixed" in broken


@pytest.mark.parametrize("fixed, cohort, changes, seeds, expected", [
    (0.0, 0.128, 0, (0, 1), "within the 0 to 1 that two seeds"),
    (0.0, 0.128, 5, (0, 1), "more than the 0 to 1 that two seeds"),
    (0.0, 0.128, 0, (2, 4), "fewer than the 2 to 4 that two seeds"),
    (0.002, 0.05, 1, None, "the standard was not held fixed"),
    (0.0, 0.0, 0, None, "would not have moved them either"),
])
def test_insertion_takeaway_follows_both_schemes_and_the_seed_noise(fixed, cohort, changes, seeds, expected):
    from crsbench_lib.report.takeaway import check_takeaway

    noise = _noise(changes, *seeds) if seeds else _noise(changes, 0, 0, seed_pairs=0)
    text = insertion.insertion_takeaway(3, 17, fixed, cohort, changes, 136, noise)
    assert check_takeaway(text) == text and expected in text
    assert "Inserting 3 newcomers into a registry of 17 encoders" in text
    assert ("moved no published score" in text) == (fixed == 0)
    if cohort:
        assert f"by up to {cohort:.3f} and reordered {changes} of 136 pairs" in text
    assert ("two seeds" in text) == (seeds is not None and cohort > 0)


def test_registry_takeaway_follows_the_registry_and_renormalisation():
    import pandas as pd

    from crsbench_lib.report.takeaway import check_takeaway

    def summary(moved, largest):
        return pd.DataFrame({"n_published": [17, 17], "max_abs_crs_displacement": [0.0, largest],
                             "n_scores_moved": [0, moved]},
                            index=pd.Index(["fixed reference", "cohort-renormalised"], name="scheme"))

    held = insertion.registry_takeaway(17, 17, 13, summary(17, 0.0612), True, 30)
    assert check_takeaway(held) == held and held.startswith("No newcomer rewrote a published score: after 13 candidates arrived, 17 of 17")
    assert "all 30 entries without a difference" in held and "moved 17 of them, by up to 0.061" in held
    broken = insertion.registry_takeaway(17, 15, 13, summary(0, 0.0), False, 30)
    assert check_takeaway(broken) == broken and broken.startswith("Newcomers rewrote published scores here, which the design forbids")
    assert "only 15 of 17" in broken and "found problems among the 30 entries" in broken
    assert "would not have moved any of them either" in broken
    alone = insertion.registry_takeaway(2, 2, 1, summary(0, 0.0).drop(index="cohort-renormalised"), True, 3)
    assert "renormalisation" not in alone


def test_describe_rank_noise_gives_the_pairs_their_own_paragraph():
    for table, baselines in ((_noise(2, 28, 37), _baselines(0.97)),
                             (_noise(2, 0, 0, seed_pairs=0), _baselines(0.97, seed_pairs=0))):
        taus, pairs = insertion.describe_rank_noise(table, baselines).split("\n\n")
        assert "τ_b" in taus and "In pairs" not in taus and pairs.startswith("In pairs: the insertion reorders")


def test_the_registry_says_why_its_cohort_is_not_the_insertion_chapter_s():
    from crsbench_lib.report.sentences.insertion import describe_registry_cohort

    text = describe_registry_cohort(["a", "b", "ref"], ["c", "a [lora]", "b [lora]"], ["ref", "absent_ref"], 2)
    assert text.startswith("The registry ranks 6 entries: 3 published (the reference ref among them, as an entry")
    assert "3 newcomers (2 LoRA-adapted)" in text and "absent_ref" not in text
    plain = describe_registry_cohort(["a", "b"], ["c"], ["ref"], 0)
    assert plain.startswith("The registry ranks 3 entries: 2 published and 1 newcomer, candidates only (no reference "
                            "encoder is an entry, as no page ranks one). The insertion chapter")
    assert describe_registry_cohort(["a", "b"], ["c"], [], 0).startswith(
        "The registry ranks 3 entries: 2 published and 1 newcomer. The insertion chapter")


@pytest.mark.parametrize("simulated, world", [(True, "this build's simulated world"), (False, "this run's own data")])
def test_describe_rank_noise_names_the_world_of_the_run(simulated, world):
    """Both closing lessons (the τ_b one and the pairs one) name one world, read from world_name (issue 30)."""
    text = insertion.describe_rank_noise(_noise(2, 28, 37), _baselines(0.97), simulated=simulated)
    assert f"a finding of {world}." in text and f"belongs to {world} and these newcomers" in text
    assert ("build's" in text) == simulated
