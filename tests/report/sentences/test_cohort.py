"""The cohort, zoo and four-axes sentences say what the world's tables say."""

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import cohort

values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


def test_describe_leaders_and_saturation():
    import pandas as pd


    assert "3 different encoders lead the 4 axes" in cohort.describe_leaders({"D": "a", "C": "b", "L": "a", "R": "c"})
    table = pd.DataFrame({"at_worst": [0, 0], "at_best": [0, 0], "n": [3, 3]}, index=["D", "C"])
    assert cohort.describe_saturation(table).startswith("No normalised value")


@given(gain=values, change=values)
def test_describe_augmentation_follows_the_signs(gain, change):
    import pandas as pd


    row = {"augmented": "a_aug", "plain": "a_noaug", "in_results": True, "clean_gain": gain, "loss_change": change}
    text = cohort.describe_augmentation(pd.DataFrame([row]))
    clean, loss = text.split(", and ")
    if round(gain, 3) == 0:
        assert "leaves the clean AUROC essentially unchanged" in clean
    else:
        assert ("raises" in clean) == (gain > 0) and ("an improvement" in clean) == (gain > 0)
    if round(change, 3) == 0:
        assert "essentially unchanged" in loss
    else:
        # A lower corruption loss is the improvement.
        assert ("lowers" in loss) == (change < 0) and ("an improvement" in loss) == (change < 0)


def test_describe_augmentation_names_absent_pairs_and_missing_corruptions():
    import pandas as pd


    rows = [
        {"augmented": "x_aug", "plain": "x_noaug", "in_results": False, "clean_gain": float("nan"), "loss_change": float("nan")},
        {"augmented": "y_aug", "plain": "y_noaug", "in_results": True, "clean_gain": 0.02, "loss_change": float("nan")},
    ]
    text = cohort.describe_augmentation(pd.DataFrame(rows))
    assert "The pair x_aug against x_noaug is absent from this results table" in text
    assert "raises the clean AUROC by 0.020" in text and "no corruption rows" in text
    empty = pd.DataFrame(columns=["augmented", "plain", "in_results", "clean_gain", "loss_change"])
    assert "no pair" in cohort.describe_augmentation(empty)


def test_describe_world_checks_reports_margins_and_failures() -> None:
    import pandas as pd


    from crsbench_lib.report.sentences.cohort import describe_world_checks


    rows = [
        ("margin over pixels", "derm", 0.15, "best broad encoder - pixels >= 0.10", True),
        ("margin over pixels", "fundus", 0.2, "best broad encoder - pixels >= 0.10", True),
        ("highest clean AUROC", "derm", 0.99, "< 0.98", False),
        ("LoRA runs", "all", 108.0, ">= 90", True),
    ]
    text = describe_world_checks(pd.DataFrame(rows, columns=["check", "dataset", "value", "rule", "holds"]))
    assert "beats pixels by 0.150 clean AUROC on derm and 0.200 on fundus" in text
    assert "met on every dataset" in text
    assert "The check 'highest clean AUROC' on derm fails: 0.990 against the rule < 0.98." in text
    assert text.endswith("3 of 4 checks hold.")
    absent = pd.DataFrame([("margin over pca", "derm", float("nan"), "best broad encoder - pca >= 0.10", False)],
                          columns=["check", "dataset", "value", "rule", "holds"])
    assert "The margin over pca cannot be measured" in describe_world_checks(absent)


def test_a_check_with_nothing_to_test_is_not_reported_as_passed() -> None:
    import pandas as pd


    from crsbench_lib.report.sentences.cohort import describe_world_checks


    rule = "site B AUROC >= 0.60 where clean > 0.75"
    rows = [("site-B median drop", "cxr", float("nan"), rule, True), ("LoRA runs", "all", 90, ">= 90", True)]
    text = describe_world_checks(pd.DataFrame(rows, columns=["check", "dataset", "value", "rule", "holds"]))
    assert f"The check 'site-B median drop' on cxr had nothing to test: no encoder falls under its rule ({rule})." in text
    assert text.endswith("2 of 2 checks hold, 1 of them untested.")
    tested = pd.DataFrame([("site-B median drop", "cxr", 0.71, rule, True)], columns=["check", "dataset", "value", "rule", "holds"])
    assert describe_world_checks(tested) == "1 of 1 checks hold."


def test_describe_measurement_budget_handles_missing_floor_and_cost() -> None:
    import pandas as pd


    from crsbench_lib.report.sentences.cohort import describe_measurement_budget


    floor = pd.DataFrame([("cxr", 500, 0.04, float("nan"), float("nan")), ("derm", 2000, 0.03, 0.03, 0.0)],
                         columns=["dataset", "test_images", "ece", "ece_floor", "ece_excess"])
    empty = pd.DataFrame(columns=["arm", "cells", "cpu_minutes"])
    text = describe_measurement_budget(floor, empty)
    assert "On cxr (500 test images) the mean clean ECE is 0.040; this table records no ECE floor." in text
    assert "it does not exceed the floor (0.000)" in text and "of it is miscalibration" not in text
    assert "CPU-minutes" not in text


def _class_rows(rows):
    import pandas as pd

    columns = ["dataset", "class", "best_broad", "broad", "pixels", "pca", "margin", "reference", "reference_auroc"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["margin"] = frame["broad"] - frame[["pixels", "pca"]].max(axis=1)
    return frame


def test_class_margins_say_which_classes_fall_short_and_what_the_reference_shows():
    from crsbench_lib.report.sentences.cohort import describe_class_margins


    short = _class_rows([("cxr", "heart", "b", 0.85, 0.70, 0.71, 0, "ref", 0.90),
                         ("cxr", "nodule", "b", 0.60, 0.57, 0.55, 0, "ref", 0.62),
                         ("cxr", "effusion", "b", 0.66, 0.60, 0.61, 0, "ref", 0.64)])
    text = describe_class_margins(short, 0.10)
    assert "at least 0.10 on heart (+0.140) but not on nodule (+0.030) or effusion (+0.050)." in text
    # the reference's mean margin over the classes that fall short: (0.05 + 0.03) / 2
    assert "beats the better probe by +0.040 on these classes on average: short of 0.10 as well" in text
    taught = short.assign(reference_auroc=[0.9, 0.75, 0.74])
    assert "+0.155 on these classes on average: the backbones of this zoo learn them" in describe_class_margins(taught, 0.10)
    # No reference: nothing said about one.
    assert "reference" not in describe_class_margins(short.assign(reference="", reference_auroc=float("nan")), 0.10)


def test_class_margins_say_nothing_of_the_reference_where_the_rule_holds():
    from crsbench_lib.report.sentences.cohort import describe_class_margins


    rows = _class_rows([("derm", "a", "b", 0.90, 0.70, 0.70, 0, "ref", 0.9),
                        ("derm", "b", "b", 0.75, 0.70, 0.68, 0, "ref", 0.8),
                        ("fundus", "g0", "b", 0.9, 0.7, 0.6, 0, "ref", 0.9)])
    text = describe_class_margins(rows, 0.10)
    assert text == ("On derm the best broad encoder (b) beats the better of the pixel and PCA probes by at least 0.10 "
                    "on a (+0.200) but not on b (+0.050). On fundus the best broad encoder (b) beats the better of "
                    "the pixel and PCA probes by at least 0.10 on every class: g0 (+0.200).")
    lost = rows.assign(broad=[0.6, 0.6, 0.6])
    lost["margin"] = lost["broad"] - lost[["pixels", "pca"]].max(axis=1)
    assert "on no class: a (-0.100) and b (-0.100)." in describe_class_margins(lost, 0.10)
    assert describe_class_margins(rows.iloc[:0], 0.10) == ""


def test_augmentation_verdicts_label_every_pair_and_say_when_the_direction_varies():
    """Lecturer's item 23: one pair was labelled "a deterioration", the other, moving the same way, was not."""
    import pandas as pd


    rows = [{"augmented": "a", "plain": "b", "in_results": True, "clean_gain": -0.011, "loss_change": -0.0065,
             "n_datasets": 3, "clean_higher_in": 1, "loss_lower_in": 3}]
    text = cohort.describe_augmentation(pd.DataFrame(rows))
    assert ("lowers the clean AUROC by 0.011 on average, a deterioration, but in this direction on only 2 of 3 "
            "datasets, not consistently") in text
    assert "lowers the mean corruption AUROC loss by 0.006 (on all 3 datasets), an improvement" in text


def _floor(ece: float, floor: float) -> pd.DataFrame:
    return pd.DataFrame([("derm", 2000, ece, floor, ece - floor)],
                        columns=["dataset", "test_images", "ece", "ece_floor", "ece_excess"])


@given(ece=st.floats(0.001, 0.5), floor=st.floats(0.001, 0.5))
def test_measurement_budget_gives_the_excess_never_a_share(ece, floor):
    text = cohort.describe_measurement_budget(_floor(ece, floor), pd.DataFrame())
    # Floor and miscalibration do not add: no "% of it is miscalibration".
    assert "%" not in text and "of it is miscalibration" not in text
    if round(ece - floor, 3) > 0:
        assert f"it exceeds the floor by {ece - floor:.3f}, {(ece - floor) / floor:.2g} times the floor" in text
    else:
        assert "does not exceed the floor" in text


def test_measurement_budget_on_the_default_runs_cxr_figures():
    # Regression (issue 27): "0.036 against a floor of 0.019 ..., so 47 % of it is miscalibration".
    text = cohort.describe_measurement_budget(_floor(0.036, 0.019), pd.DataFrame())
    assert text.endswith("would still measure: it exceeds the floor by 0.017, 0.89 times the floor.")


def test_no_value_on_an_anchor_is_not_called_separation():
    # Regression (issue 27): "every axis still separates the encoders" (non-saturation is not separation).
    table = pd.DataFrame({"at_worst": [0, 0], "at_best": [0, 0], "n": [3, 3]}, index=["D", "C"])
    text = cohort.describe_saturation(table)
    assert "no axis is saturated" in text and "still separates" not in text
    assert "seed-to-seed noise" in text


# ---------------------------------------------------------------- the leaders among the candidates; "Is this real?"

from crsbench_lib.report.sentences.lessons import DESIGN, WORLD  # noqa: E402


def test_describe_leaders_says_among_the_candidates_and_who_is_excluded():
    text = cohort.describe_leaders({"D": "a", "C": "b"}, candidates=19, excluded=["intask"])
    assert text.startswith("Leaders per axis among the 19 candidates (the reference intask is excluded from "
                           "leadership): D: a; C: b.")
    plural = cohort.describe_leaders({"D": "a", "C": "a"}, candidates=5, excluded=["r1", "r2"])
    assert plural == "a leads every axis (D, C) among the 5 candidates (the references r1 and r2 are excluded from leadership)."
    assert "among" not in cohort.describe_leaders({"D": "a", "C": "b"})


def _floor_table(ece=(0.034, 0.037), floor=(0.020, 0.024)):
    return pd.DataFrame({"dataset": ["cxr", "derm"], "test_images": [2000, 2000], "ece": list(ece),
                         "ece_floor": list(floor), "ece_excess": [e - f for e, f in zip(ece, floor)]})


def test_cohort_lessons_both_ways():
    lessons = cohort.cohort_lessons(_floor_table(), ["cxr"], ["cxr", "derm"], ("CheXpert", "MIMIC-CXR"), simulated=True)
    assert [lesson.scope for lesson in lessons] == [DESIGN, WORLD, WORLD]
    assert "would still measure 0.020 to 0.024 on 2000 test images" in lessons[0].text
    assert "by 0.54 to 0.70 times the floor on every dataset" in lessons[1].text
    assert "less than the floor itself" in lessons[1].text
    assert "most of each ECE is the floor's sampling bias rather than miscalibration" in lessons[1].text
    assert "Only cxr of the 2 datasets has a second site" in lessons[2].text
    assert lessons[2].study == "one shift, CheXpert to MIMIC-CXR."
    above = cohort.cohort_lessons(_floor_table(ece=(0.08, 0.09)), [], ["cxr", "derm"])
    assert "measurable beyond what the test size alone produces" in above[1].text
    assert "most of each ECE is miscalibration rather than the floor's sampling bias" in above[1].text
    assert "None of the 2 datasets has a second site" in above[2].text
    mixed = cohort.cohort_lessons(_floor_table(ece=(0.08, 0.03)), ["cxr", "derm"], ["cxr", "derm"])
    assert "by more than one floor on cxr, by less on derm" in mixed[1].text
    assert "mostly miscalibration on the first and mostly the floor's sampling bias on the second" in mixed[1].text
    assert "Every one of the 2 datasets has a second site" in mixed[2].text
    for lesson in cohort.cohort_lessons(_floor_table(), ["cxr"], ["cxr", "derm"], simulated=False):
        if lesson.scope == WORLD:
            assert "phantom" not in lesson.text.lower() and "simulated" not in lesson.text.lower()


def test_corruption_losses_and_exercise():
    from crsbench_lib.results.synthetic import synthetic_results

    table = synthetic_results(n_encoders=2, corruptions=("noise", "blur"), random_state=0)
    losses = cohort.corruption_losses(table)
    assert set(losses["corruption"]) == {"noise", "blur"} and (losses["severity"] == table["severity"].max()).all()
    assert cohort.corruption_losses(table[table["condition"] != "corruption"]).empty
    spread = pd.DataFrame({"dataset": ["a", "a"], "corruption": ["blur", "jpeg"], "loss": [0.12, 0.01],
                           "severity": [5, 5]})
    text = cohort.cohort_exercise_corruptions(spread)
    assert "on a blur costs most (0.120) and jpeg least (0.010; the costliest 12 times as much)" in text
    assert "weigh the encoders' robustness differently" in text
    even = spread.assign(loss=[0.05, 0.045])
    assert "cost about the same here" in cohort.cohort_exercise_corruptions(even)
    free = spread.assign(loss=[0.05, -0.01])
    assert "At severity 5, jpeg on a costs no AUROC on average" in cohort.cohort_exercise_corruptions(free)
    assert "no corruption rows" in cohort.cohort_exercise_corruptions(spread.iloc[:0])


# ---------------------------------------------------------------- the key takeaway

def _overview(sites=(True, False, False), sizes=(200, 200, 200)):
    return pd.DataFrame({"dataset": ["cxr", "derm", "fundus"], "test images": list(sizes), "site B": list(sites)})


def _zoo(n=20, in_run=6):
    return pd.DataFrame({"name": [f"e{k}" for k in range(n)], "in this run": [k < in_run for k in range(n)]})


FLOOR = pd.DataFrame({"dataset": ["cxr", "derm", "fundus"], "ece_floor": [0.0618, 0.0721, 0.0772]})


def test_cohort_takeaway_states_the_run_and_its_floor():
    from crsbench_lib.report.takeaway import check_takeaway

    text = cohort.cohort_takeaway(_overview(), FLOOR, _zoo())
    assert check_takeaway(text) == text
    assert text.startswith("Every number of this book comes from 6 of the zoo's 20 encoders on 3 datasets "
                           "(cxr, derm and fundus), 200 test images each; only cxr has a second site.")
    assert "an ECE of 0.062 to 0.077: a plug-in ECE near that is mostly sampling bias." in text
    # The floor is a bias the encoders share, not the noise of their difference (lecturer's item 2).
    assert "cannot be told from noise" not in text and "smaller calibration difference" not in text


def test_cohort_takeaway_second_sites_sizes_and_a_missing_floor():
    none = cohort.cohort_takeaway(_overview(sites=(False,) * 3, sizes=(100, 200, 2000)), FLOOR, _zoo())
    assert "100 to 2000 test images; none has a second site." in none
    every = cohort.cohort_takeaway(_overview(sites=(True,) * 3), FLOOR, _zoo())
    assert "; each has a second site." in every
    two = cohort.cohort_takeaway(_overview(sites=(True, True, False)), FLOOR, _zoo())
    assert "only cxr and derm have a second site" in two
    one = cohort.cohort_takeaway(_overview().iloc[:1], FLOOR.iloc[:1], _zoo())
    assert "on 1 dataset (cxr), 200 test images each; it has a second site." in one
    assert "an ECE of 0.062:" in one
    missing = cohort.cohort_takeaway(_overview(), FLOOR.assign(ece_floor=float("nan")), _zoo())
    assert "records no ECE floor" in missing and "sampling bias is not stated" in missing
    assert "mostly sampling bias." not in missing


def test_the_ece_floor_lesson_is_a_shared_bias_not_the_noise_of_a_difference():
    """The floor lesson (any benchmark) says an ECE near its floor is mostly sampling bias, and that a difference
    between encoders is judged by the paired bootstrap of that difference, never by the floor (lecturer's item 2)."""
    for table in (_floor_table(), _floor_table(ece=(0.08, 0.09)), _floor_table(ece=(0.08, 0.03))):
        lessons = cohort.cohort_lessons(table, ["cxr"], ["cxr", "derm"])
        design = lessons[0]
        assert design.scope == DESIGN
        assert "An ECE near that floor is mostly sampling bias, not miscalibration." in design.text
        assert "judged by the paired bootstrap of that difference" in design.text
        assert "not evidence" not in design.text and "smaller than that floor" not in design.text
        for lesson in lessons:
            assert "sampling noise" not in lesson.text


def test_the_glossary_ece_floor_entry_says_what_the_lesson_says():
    """book/glossary.md's "ECE floor" carries the same rule as the cohort lesson (no "smaller than the floor" rule)."""
    from pathlib import Path

    glossary = (Path(__file__).resolve().parents[3] / "book" / "glossary.md").read_text(encoding="utf-8")
    entry = glossary.split("\nECE floor\n", 1)[1].split("\n\n", 1)[0]
    words = " ".join(entry.split())
    assert "An ECE near its floor is mostly sampling bias, not miscalibration." in words
    assert "judged by the paired bootstrap of the difference" in words
    assert "smaller than the floor are sampling noise" not in words
