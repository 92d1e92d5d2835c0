"""The interpretation sentences say what their numbers say, for numbers of both signs and every size."""

import re

import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from crsbench_lib.report import interpret

values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(before=positive, after=positive, better=st.sampled_from(["lower", "higher"]))
def test_describe_change_direction_and_verdict_follow_the_numbers(before, after, better):
    text = interpret.describe_change(before, after, "the mean ECE", better=better)
    relative = (after - before) / before
    if abs(relative) < interpret.NEGLIGIBLE_RELATIVE:
        assert "essentially unchanged" in text
        assert "rose" not in text and "fell" not in text
        return
    assert ("rose" in text) == (after > before)
    assert ("fell" in text) == (after < before)
    improved = (after < before) == (better == "lower")
    assert ("improvement" in text) == improved
    assert ("deterioration" in text) == (not improved)
    # The percentage shown is the size of the change, unsigned (no "cut by -8 %").
    shown = re.search(r"by (\d+) %", text)
    assert shown is not None and int(shown.group(1)) == round(abs(relative) * 100)
    assert "-" not in shown.group(0)


def test_a_rise_in_ece_is_never_called_a_cut():
    text = interpret.describe_change(0.10, 0.108, "the mean ECE", better="lower")
    assert text == "The mean ECE rose from 0.100 to 0.108 (by 8 %, a small deterioration)."
    assert "cut" not in text and "fell" not in text


def test_describe_change_from_zero_and_with_an_interval():
    text = interpret.describe_change(0.0, 0.05, "the AUROC loss")
    assert "rose" in text and "deterioration" in text
    assert "excludes zero" in interpret.describe_change(0.2, 0.1, "ECE", interval=(-0.12, -0.08))
    assert "includes zero" in interpret.describe_change(0.2, 0.1, "ECE", interval=(-0.12, 0.01))


@given(low=values, width=st.floats(min_value=0, max_value=100, allow_nan=False))
def test_describe_interval_says_excludes_zero_exactly_when_it_does(low, width):
    high = low + width
    text = interpret.describe_interval(low, high)
    excludes = low > 0 or high < 0
    assert ("excludes zero" in text) == excludes
    assert ("includes zero" in text) == (not excludes)
    assert interpret.interval_excludes_zero(low, high) == excludes


def test_describe_interval_rejects_reversed_ends():
    with pytest.raises(ValueError, match="out of order"):
        interpret.describe_interval(0.2, 0.1)


@given(changes=st.lists(st.floats(min_value=-0.99, max_value=3.0, allow_nan=False), min_size=1, max_size=12),
       better=st.sampled_from(["lower", "higher"]))
def test_describe_relative_changes_counts_each_direction(changes, better):
    text = interpret.describe_relative_changes(changes, "the mean ECE", better=better)
    moved = [c for c in changes if abs(c) >= interpret.NEGLIGIBLE_RELATIVE]
    good = [c for c in moved if (c < 0) == (better == "lower")]
    bad = [c for c in moved if (c < 0) != (better == "lower")]
    if good:
        assert f"improved in {len(good)} of {len(changes)}" in text
    else:
        assert "improved" not in text
    if bad:
        assert f"deteriorated in {len(bad)}" in text
    else:
        assert "deteriorated" not in text
    assert not re.search(r"by -\d", text)


def test_describe_relative_changes_the_calibration_bug():
    # The old template said "cut the mean ECE by -43 % to 10 %" for these numbers.
    text = interpret.describe_relative_changes([-0.43, -0.10, 0.08], "the mean ECE", unit="groups")
    assert text == "The mean ECE improved in 2 of 3 groups (fell by 10 % to 43 %) and deteriorated in 1 (rose by 8 %)."


@given(value=unit)
def test_correlation_words_follow_sign_and_size(value):
    text = interpret.describe_correlation(value)
    word = interpret.correlation_word(value)
    if word == "no":
        assert "no association" in text
    else:
        assert f"a {word} {'positive' if value > 0 else 'negative'} association" in text
    assert ("positive" in text) == (value > 0 and word != "no")


@pytest.mark.parametrize("value, word", [(0.05, "no"), (0.2, "weak"), (-0.4, "moderate"), (0.6, "strong"), (-0.95, "very strong")])
def test_correlation_word_bands(value, word):
    assert interpret.correlation_word(value) == word


@given(ours=unit, study=unit)
def test_compare_with_study_direction(ours, study):
    text = interpret.compare_with_study(ours, study, "τ_b")
    if abs(ours - study) < interpret.CLOSE_CORRELATION:
        assert "close to" in text
    elif ours > study:
        assert "higher than" in text
    else:
        assert "lower than" in text


@given(tau=unit, reversed_pairs=st.integers(0, 45))
def test_describe_agreement_never_calls_disagreement_agreement(tau, reversed_pairs):
    text = interpret.describe_agreement(tau, reversed_pairs=reversed_pairs, n_pairs=45, study_tau=0.5)
    if reversed_pairs == 0:
        assert "agree on every choice" in text
    else:
        assert f"{reversed_pairs} of 45 pairwise decisions" in text
        assert "every choice" not in text
    assert "the study's (0.500)" in text


def test_describe_agreement_with_p_and_interval():
    text = interpret.describe_agreement(0.62, interval=(0.3, 0.85), p=0.0004)
    assert "strong positive" in text and "excludes zero" in text and "p < 0.001" in text


@pytest.mark.parametrize("p, text", [(0.0, "p < 0.001"), (0.0009, "p < 0.001"), (0.001, "p = 0.001"), (0.04567, "p = 0.046"), (0.0496, "p = 0.050"), (1.0, "p = 1.000")])
def test_format_p(p, text):
    assert interpret.format_p(p) == text


@pytest.mark.parametrize("bad", [-0.1, 1.2, float("nan")])
def test_format_p_rejects_non_probabilities(bad):
    with pytest.raises(ValueError):
        interpret.format_p(bad)


names = st.lists(st.sampled_from([f"enc{i}" for i in range(8)]), min_size=1, max_size=8, unique=True)


@given(members=names, references=st.lists(st.sampled_from(["ref_a", "ref_b"]), unique=True))
def test_describe_leading_tier_names_every_tied_member(members, references):
    p_rank1 = {name: 1.0 / len(members) for name in members}
    intervals = {name: (-0.05, 0.05) for name in members[1:]}
    if len(members) == 1:
        intervals = {"runner": (0.01, 0.04)}
        p_rank1["runner"] = 0.0
    text = interpret.describe_leading_tier(members, p_rank1, intervals, references=references)
    for name in members:
        assert re.search(rf"\b{name}\b", text)
    if len(members) > 1:
        assert f"cannot separate {len(members)} candidates" in text and "winner" in text
    else:
        assert text.startswith(f"{members[0]} leads") and "excludes zero" in text
    for name in references:
        assert name in text.split("Not ranked:")[1]
    assert ("Not ranked" in text) == bool(references)


def test_describe_leading_tier_refuses_a_lone_leader_whose_runner_up_is_tied():
    with pytest.raises(ValueError, match="belongs in the tier"):
        interpret.describe_leading_tier(["a"], {"a": 0.6, "b": 0.4}, {"b": (-0.01, 0.03)})


def test_describe_leading_tier_says_a_reference_is_tied_with_the_leader():
    text = interpret.describe_leading_tier(["a", "b"], {"a": 0.6, "b": 0.4}, {"b": (-0.01, 0.03)},
                                           references=["r", "s"], tied_references=["r"])
    assert text.endswith("Not ranked: r and s, shown as references; the draws cannot separate r from a either.")


_point = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def bootstrap_rows(draw):
    crs, low, width = draw(_point), draw(_point), draw(st.floats(0.0, 0.5, allow_nan=False))
    high = low + width
    median = draw(_point)
    bias = median - crs
    return {
        "crs": crs, "crs_median": median, "bias": bias, "bias_se": bias / 0.03, "crs_low": low, "crs_high": high,
        "crs_basic_low": 2 * crs - high, "crs_basic_high": 2 * crs - low, "point_inside": low <= crs <= high,
    }


@given(rows=st.lists(bootstrap_rows(), min_size=1, max_size=6))
def test_a_point_outside_its_own_interval_is_always_said(rows):
    """Fails if an interval that excludes its own point is reported without the prose naming it."""
    summary = pd.DataFrame([{"encoder": f"enc{i}", **row} for i, row in enumerate(rows)])
    text = interpret.describe_bootstrap_bias(summary)
    outside = [r["encoder"] for _, r in summary.iterrows() if not r["crs_low"] <= r["crs"] <= r["crs_high"]]
    if outside:
        assert f"For {len(outside)} of {len(summary)} encoders the point CRS lies outside its own" in text
        for name in outside:
            assert re.search(rf"\b{name} \(", text), name
        assert "not a confidence interval around the point" in text
        assert "Every point" not in text
    else:
        assert text.startswith("Every point CRS lies inside its own 95 % percentile interval")


def test_a_bootstrap_whose_points_fall_outside_is_described_as_such(synthetic_table, frozen_standard):
    from crsbench_lib.scoring.bootstrap import paired_seed_bootstrap

    summary = paired_seed_bootstrap(synthetic_table, frozen_standard, n_draws=200, random_state=1).summary
    # Force the situation the v2 default build shows: a point above its own percentile interval.
    summary.loc[0, "crs_high"] = summary.loc[0, "crs"] - 0.01
    summary.loc[0, "point_inside"] = False
    text = interpret.describe_bootstrap_bias(summary)
    assert f"{summary.loc[0, 'encoder']} (" in text and "lies outside its own" in text


def test_describe_score_orders_names_every_swapped_pair():
    table = pd.DataFrame({"encoder": ["a", "b", "c", "d"], "crs": [0.9, 0.8, 0.7, 0.6],
                          "crs_full_panel": [0.88, 0.79, 0.795, 0.5]})
    text = interpret.describe_score_orders(table)
    assert text.startswith("Rows are in order of the point CRS the draws use")
    assert text.endswith("there c ranks above b.")
    same = interpret.describe_score_orders(table.assign(crs_full_panel=table["crs"]))
    assert "orders these rows the same way" in same
    assert "there" not in interpret.describe_score_orders(table, rows=2)


@given(failing=st.lists(st.integers(0, 5), min_size=1, max_size=4))
def test_describe_threshold_binding_says_which_thresholds_filter_nothing(failing):
    axes = ["D", "C", "L", "R"][: len(failing)]
    table = pd.DataFrame({"axis": axes, "rule": [f"{a} rule" for a in axes], "failing": failing,
                          "failing_alone": failing, "candidates": 5})
    text = interpret.describe_threshold_binding(table)
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


@given(crs=unit, auroc=unit)
def test_describe_predictors_names_the_better_one(crs, auroc):
    text = interpret.describe_predictors(crs, auroc)
    if abs(crs - auroc) < interpret.CLOSE_CORRELATION:
        assert "about equally well" in text
    elif crs > auroc:
        assert text.startswith("The CRS predicts")
    else:
        assert text.startswith("AUROC predicts")


@given(a=st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3), b=st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3))
def test_describe_overlap(a, b):
    first, second = sorted(a), sorted(b)
    text = interpret.describe_overlap(first, second)
    if set(a) == set(b):
        assert "are the same" in text
    else:
        assert f"share {len(a & b)} of" in text
        for name in set(a) - set(b):
            assert name in text.split(";")[1]


def test_describe_selection_outcomes():
    none_clear = interpret.describe_selection([], ["a"], [], 5)
    assert "No encoder clears the gate" in none_clear
    no_tier = interpret.describe_selection([], [], ["a"], 5)
    assert "cannot separate" in no_tier
    mismatch = interpret.describe_selection([], ["b"], ["a"], 5)
    assert "both in the leading tier" in mismatch
    good = interpret.describe_selection(["mae"], ["mae"], ["mae"], 5, untrained=["cnn_random"])
    assert good.endswith("mae advances for deployment evaluation.")
    assert "Caution" not in good
    # An untrained baseline advancing is never reported without comment.
    baseline = interpret.describe_selection(["cnn_random"], ["cnn_random"], ["cnn_random"], 5, untrained=["cnn_random"])
    assert "Caution: cnn_random has no pretraining" in baseline
    with_reference = interpret.describe_selection(["mae"], ["mae"], ["mae"], 5, references=["intask"])
    assert with_reference.endswith("intask is a reference, not a candidate: shown, never advanced.")
    assert "5 candidates" in with_reference
    with pytest.raises(ValueError, match="reference 'intask' cannot"):
        interpret.describe_selection(["intask"], ["intask"], ["intask"], 5, references=["intask"])


@given(fixed=st.floats(0, 1, allow_nan=False), cohort=st.floats(0, 1, allow_nan=False))
def test_describe_displacement(fixed, cohort):
    text = interpret.describe_displacement(fixed, cohort)
    assert ("No published score moved" in text) == (fixed == 0)
    assert ("not being held fixed" in text) == (fixed != 0)


@given(share=st.floats(0, 1, allow_nan=False))
def test_describe_share(share):
    text = interpret.describe_share(share, "X happens")
    if share == 0:
        assert "none of the draws" in text
    elif share == 1:
        assert "every draw" in text
    else:
        assert "of draws" in text and "none" not in text and "every" not in text


@given(relative=values)
def test_size_word_is_monotone(relative):
    order = ["negligible", "small", "moderate", "large"]
    word = interpret.size_word(relative)
    assert word in order
    assert order.index(interpret.size_word(relative * 2)) >= order.index(word)


def test_describe_predictors_with_a_place():
    assert interpret.describe_predictors(0.2, 0.067, where="On the second site").startswith("On the second site, the CRS predicts")


def test_counts_are_compared_without_decimals():
    assert interpret.compare_with_study(6, 15, "encoders") == "This build's encoders (6) is lower than the study's (15)."


def test_describe_leaders_and_saturation_and_difference():
    import pandas as pd

    assert "3 different encoders lead the 4 axes" in interpret.describe_leaders({"D": "a", "C": "b", "L": "a", "R": "c"})
    table = pd.DataFrame({"at_worst": [0, 0], "at_best": [0, 0], "n": [3, 3]}, index=["D", "C"])
    assert interpret.describe_saturation(table).startswith("No normalised value")
    assert "raises" in interpret.describe_difference(0.03, "Adaptation", "AUROC")
    assert "deterioration" in interpret.describe_difference(0.03, "Adaptation", "ECE", better="lower")
    assert "essentially unchanged" in interpret.describe_difference(0.0001, "Adaptation", "AUROC")
    assert interpret.describe_counts({"a": 1}, "encoders") == "1 a encoders."


@given(before=positive, after=positive, low=values, width=st.floats(min_value=0, max_value=100, allow_nan=False))
def test_excess_verdict_helps_only_when_the_interval_lies_below_zero(before, after, low, width):
    high = low + width
    text = interpret.describe_excess_verdict("temperature", before, after, (low, high))
    helps = high < 0
    assert text.startswith("temperature helps:") == helps
    assert ("does not help" in text) == (not helps)
    assert ("makes calibration worse" in text) == (low > 0)
    # The change itself is still described by its own numbers.
    assert ("rose" in text) == (after > before and abs(after - before) / before >= interpret.NEGLIGIBLE_RELATIVE)


def test_excess_verdict_says_plainly_when_calibration_does_not_help():
    text = interpret.describe_excess_verdict("isotonic", 0.010, 0.014, (0.001, 0.007))
    assert text.startswith("isotonic does not help, it makes calibration worse: the mean ECE excess over its floor rose")
    assert "cut" not in text and "fell" not in text


@given(gain=values, change=values)
def test_describe_augmentation_follows_the_signs(gain, change):
    import pandas as pd

    row = {"augmented": "a_aug", "plain": "a_noaug", "in_results": True, "clean_gain": gain, "loss_change": change}
    text = interpret.describe_augmentation(pd.DataFrame([row]))
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
    text = interpret.describe_augmentation(pd.DataFrame(rows))
    assert "The pair x_aug against x_noaug is absent from this results table" in text
    assert "raises the clean AUROC by 0.020" in text and "no corruption rows" in text
    empty = pd.DataFrame(columns=["augmented", "plain", "in_results", "clean_gain", "loss_change"])
    assert "no pair" in interpret.describe_augmentation(empty)


def test_describe_anchor_sweep_names_ranges_and_changes() -> None:
    import pandas as pd

    from crsbench_lib.report.interpret import describe_anchor_sweep

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


def test_describe_world_checks_reports_margins_and_failures() -> None:
    import pandas as pd

    from crsbench_lib.report.interpret import describe_world_checks

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

    from crsbench_lib.report.interpret import describe_world_checks

    rule = "site B AUROC >= 0.60 where clean > 0.75"
    rows = [("site-B floor", "cxr", float("nan"), rule, True), ("LoRA runs", "all", 90, ">= 90", True)]
    text = describe_world_checks(pd.DataFrame(rows, columns=["check", "dataset", "value", "rule", "holds"]))
    assert f"The check 'site-B floor' on cxr had nothing to test: no encoder falls under its rule ({rule})." in text
    assert text.endswith("2 of 2 checks hold, 1 of them untested.")
    tested = pd.DataFrame([("site-B floor", "cxr", 0.71, rule, True)], columns=["check", "dataset", "value", "rule", "holds"])
    assert describe_world_checks(tested) == "1 of 1 checks hold."


def test_describe_measurement_budget_handles_missing_floor_and_cost() -> None:
    import pandas as pd

    from crsbench_lib.report.interpret import describe_measurement_budget

    floor = pd.DataFrame([("cxr", 500, 0.04, float("nan"), float("nan")), ("derm", 2000, 0.03, 0.03, 0.0)],
                         columns=["dataset", "test_images", "ece", "ece_floor", "ece_excess"])
    empty = pd.DataFrame(columns=["arm", "cells", "cpu_minutes"])
    text = describe_measurement_budget(floor, empty)
    assert "On cxr (500 test images) the mean clean ECE is 0.040; this table records no ECE floor." in text
    assert "so 0 % of it is miscalibration" in text
    assert "CPU-minutes" not in text


def test_describe_interval_never_prints_a_nonzero_end_as_zero() -> None:
    from crsbench_lib.report.interpret import describe_interval

    assert describe_interval(-0.013, -0.0004) == "its 95 % interval [-0.0130, -0.0004] excludes zero"
    assert describe_interval(-0.02, 0.0) == "its 95 % interval [-0.020, 0.000] includes zero, so the data cannot tell the direction"
    assert "[-0.000000, 0.000000]" not in describe_interval(-1e-9, 1e-9)


@given(
    se=st.lists(st.floats(-4, 4, allow_nan=False), min_size=4, max_size=4),
    shift=st.lists(st.floats(-0.05, 0.05, allow_nan=False), min_size=4, max_size=4),
    parts=st.lists(st.floats(-0.1, 0.1, allow_nan=False), min_size=3, max_size=3),
)
def test_describe_bias_sources_follows_the_numbers(se, shift, parts):
    row = {"bias": sum(parts), "from_axes": parts[0], "from_nonsmooth": sum(parts) - parts[0],
           "dominance": parts[0], "balance": parts[1], "floor": parts[2],
           **dict(zip("DCLR", shift, strict=True)), **{f"{a}_se": v for a, v in zip("DCLR", se, strict=True)}}
    text = interpret.describe_bias_sources(pd.DataFrame([row], index=["enc"]), "enc")
    largest = ["dominance", "balance", "floor"][max(range(3), key=lambda i: abs(parts[i]))]
    assert f"by component, {largest} carries" in text
    worst = "DCLR"[min(range(4), key=lambda i: se[i])]
    if min(se) < -interpret.NEGLIGIBLE_BIAS_SE:
        assert f"furthest behind the point is {worst}:" in text
        assert ("rises" in text) == (row[worst] > 0)
    else:
        assert "No axis's draws are worse" in text


@pytest.mark.parametrize("p, text", [(1 / 10000, "< 0.001"), (2 / 40320, "< 0.001"), (0.001, "0.001"), (0.3333, "0.333")])
def test_p_value_text_is_a_bound_below_the_floor(p, text):
    assert interpret.p_value_text(p) == text
    # Prose and tables write the same number.
    assert interpret.format_p(p).endswith(text)


@given(n=st.integers(2, 30), data=st.data())
def test_describe_rank_changes_never_calls_a_reordering_a_mere_shift(n, data):
    pairs = n * (n - 1) // 2
    changes = data.draw(st.integers(0, pairs))
    shifted = data.draw(st.integers(0, n))
    text = interpret.describe_rank_changes("the fixed reference", changes, pairs, shifted, n)
    if changes == 0:
        assert "no pair" in text and "relative order is as before" in text
        assert ("only because newcomers" in text) == (shifted > 0)
    else:
        assert f"{changes} of {pairs} pairs" in text and "changed order" in text
        assert "relative order is as before" not in text and "only because" not in text


@pytest.mark.parametrize("args", [(-1, 10, 0, 5), (11, 10, 0, 5), (0, 10, 6, 5), (0.5, 10, 0, 5), (True, 10, 0, 5)])
def test_describe_rank_changes_rejects_impossible_counts(args):
    with pytest.raises(ValueError):
        interpret.describe_rank_changes("x", *args)


@given(crs=st.floats(-1, 1, allow_nan=False), auroc=st.floats(-1, 1, allow_nan=False),
       low=st.floats(-2, 2, allow_nan=False), width=st.floats(0, 2, allow_nan=False))
def test_describe_predictors_with_an_interval_claims_only_what_it_excludes(crs, auroc, low, width):
    text = interpret.describe_predictors(crs, auroc, interval=(low, low + width), target="the site-B ranking")
    if low > 0 and crs > auroc:
        assert text.startswith("The CRS predicts the site-B ranking better than AUROC") and "excludes zero" in text
    elif low + width < 0 and crs < auroc:
        assert text.startswith("AUROC predicts the site-B ranking better than the CRS") and "excludes zero" in text
    elif low > 0 or low + width < 0:
        # The interval excludes zero on the other side from the point: no claim either way.
        assert text.startswith("The data cannot tell") and "better than" not in text and "other side" in text
    else:
        # No claim when the interval contains zero, whatever the point values say.
        assert text.startswith("The data cannot tell whether") and "better than" not in text
        assert "includes zero" in text


def test_describe_predictors_with_an_interval_and_a_place():
    text = interpret.describe_predictors(0.84, 0.905, interval=(-0.1, -0.02), where="On the second site", statistic="τ_b")
    assert text.startswith("On the second site, AUROC predicts")
    assert "τ_b 0.840 for the CRS and 0.905 for AUROC" in text and "mean" not in text


@pytest.mark.parametrize("crs, auroc, interval", [(float("nan"), 0.5, None), (0.3, float("nan"), (0.1, 0.2)),
                                                  (float("nan"), float("nan"), (float("nan"), float("nan")))])
def test_describe_predictors_says_when_a_tau_is_undefined(crs, auroc, interval):
    text = interpret.describe_predictors(crs, auroc, interval=interval)
    assert "cannot be said" in text and "undefined" in text and "better than" not in text


def test_describe_predictors_without_a_defined_interval_makes_no_claim():
    text = interpret.describe_predictors(0.6, 0.2, interval=(float("nan"), float("nan")))
    assert text.startswith("The data cannot tell") and "no interval" in text


def test_describe_leading_tier_flags_a_tier_decision_against_its_own_point():
    base = dict(members=["a", "b"], p_rank1={"a": 0.15, "b": 0.85}, intervals={"b": (-0.088, 0.023)})
    text = interpret.describe_leading_tier(**base, point_outside={"b": (0.05, 0.077, 0.188)})
    assert "For b, the point CRS difference with a (0.050) lies outside its own percentile interval" in text
    assert "basic interval [0.077, 0.188] puts b outside the tier" in text and "depends on which interval" in text
    agree = interpret.describe_leading_tier(**base, point_outside={"b": (0.05, -0.01, 0.1)})
    assert "puts b inside the tier, so both intervals agree" in agree
    assert "point CRS difference" not in interpret.describe_leading_tier(**base)


def test_describe_bootstrap_bias_without_spread_prints_no_infinity():
    row = dict(encoder="a", crs=0.6, crs_median=0.5, bias=-0.1, bias_se=float("-inf"), crs_low=0.5, crs_high=0.5,
               crs_basic_low=0.7, crs_basic_high=0.7, point_inside=False)
    text = interpret.describe_bootstrap_bias(pd.DataFrame([row]))
    assert "inf" not in text and "every draw equal" in text
    inside = interpret.describe_bootstrap_bias(pd.DataFrame([{**row, "crs": 0.5, "bias": 0.0, "bias_se": 0.0,
                                                              "crs_basic_low": 0.5, "crs_basic_high": 0.5,
                                                              "point_inside": True}]))
    assert "largest against its standard error" in inside


def _class_rows(rows):
    import pandas as pd

    columns = ["dataset", "class", "best_broad", "broad", "pixels", "pca", "margin", "reference", "reference_auroc"]
    frame = pd.DataFrame(rows, columns=columns)
    frame["margin"] = frame["broad"] - frame[["pixels", "pca"]].max(axis=1)
    return frame


def test_class_margins_say_which_classes_fall_short_and_what_the_reference_shows():
    from crsbench_lib.report.interpret import describe_class_margins

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
    from crsbench_lib.report.interpret import describe_class_margins

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


def _adapters(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["encoder", "dataset", "seed", "label_fraction", "epochs_run", "best_epoch",
                                       "max_epochs", "best_val_loss"])


def test_adapter_training_counts_adapters_still_improving_and_unmoved():
    from crsbench_lib.report.interpret import describe_adapter_training

    rows = [("a", "derm", s, f, 3, best, 3, 0.5) for s in (0, 1) for f, best in ((1.0, 3), (0.5, 3), (0.1, 0))]
    rows += [("b", "derm", 0, 1.0, 3, 2, 3, 0.4), ("b", "derm", 0, 0.5, 3, 3, 3, 0.4), ("b", "derm", 0, 0.1, 1, 0, 3, 0.4)]
    text = describe_adapter_training(_adapters(rows))
    assert text == ("Of the 9 adapters of 3 LoRA runs, 5 (56 %) reached their lowest validation loss at the last of "
                    "their 3 epochs, so training stopped while they were still improving; 3 (33 %) never beat the "
                    "frozen encoder they started from. Of the 3 trained on all labels, 2 (67 %) were still improving.")


def test_adapter_training_without_adapters_at_the_limit_or_without_reports():
    from crsbench_lib.report.interpret import describe_adapter_training

    early = _adapters([("a", "cxr", 0, 1.0, 4, 2, 5, 0.3), ("a", "cxr", 1, 1.0, 5, 4, 6, 0.3)])
    assert describe_adapter_training(early) == ("Of the 2 adapters of 2 LoRA runs, every one stopped on its "
                                                "validation loss before the epoch limit, so longer training would "
                                                "not have changed them.")
    mixed = _adapters([("a", "cxr", 0, 1.0, 5, 5, 5, 0.3), ("a", "cxr", 1, 1.0, 6, 6, 6, 0.3)])
    assert "at their last allowed epoch" in describe_adapter_training(mixed)
    assert "no adapter reports" in describe_adapter_training(_adapters([]))


def test_a_study_comparison_with_an_interval_says_whether_the_study_lies_inside():
    from crsbench_lib.report.interpret import compare_with_study, study_in_interval

    assert compare_with_study(0.8, 0.5, "r", interval=(0.7, 0.9), level=0.9) == (
        "This build's r (0.800) is higher than the study's (0.500), and the study's value lies outside this build's "
        "90 % interval [0.700, 0.900].")
    assert compare_with_study(0.52, 0.5, "r", interval=(0.3, 0.7)).endswith(
        ", and the study's value lies inside this build's 95 % interval [0.300, 0.700]: the data cannot tell the two apart.")
    assert "but the study's value lies inside" in compare_with_study(0.6, 0.4, "r", interval=(0.39, 0.8))
    assert study_in_interval(0.2, (0.3, 0.5)) == "The study's value (0.200) lies outside this 95 % interval."


def test_robustness_faces_follow_the_interval_of_r():
    from crsbench_lib.report.interpret import describe_robustness_faces

    assert "largely move together" in describe_robustness_faces(0.84, (0.72, 0.91))
    partly = describe_robustness_faces(0.4, (0.1, 0.65), level=0.9)
    assert partly.startswith("r² = 0.16: across cells, the AUROC loss accounts for 16 % of the variance")
    assert "the whole 90 % interval of r [0.10, 0.65] lies below 0.7, so on this cohort they are at most partly aligned" in partly
    assert "straddles 0.7, so these cells do not pin down" in describe_robustness_faces(0.7, (0.4, 0.9))


def test_a_difference_with_an_interval_earns_a_verdict_only_when_it_excludes_zero():
    from crsbench_lib.report.interpret import describe_difference

    assert describe_difference(-0.0025, "isotonic", "the mean AUROC", digits=4, interval=(-0.0043, -0.0008)) == (
        "isotonic lowers the mean AUROC by 0.0025 on average (95 % interval [-0.0043, -0.0008]), a deterioration.")
    assert describe_difference(0.02, "x", "the ECE", better="lower", interval=(0.01, 0.03), level=0.9).endswith(
        "(90 % interval [0.010, 0.030]), a deterioration.")
    assert "no change is detectable" in describe_difference(0.0, "x", "y", interval=(-0.1, 0.1))


def test_augmentation_verdicts_need_the_same_direction_on_every_dataset():
    import pandas as pd

    rows = [{"augmented": "a", "plain": "b", "in_results": True, "clean_gain": -0.011, "loss_change": -0.0065,
             "n_datasets": 3, "clean_higher_in": 1, "loss_lower_in": 3}]
    text = interpret.describe_augmentation(pd.DataFrame(rows))
    assert "lowers the clean AUROC by 0.011 on average but in this direction on only 2 of 3 datasets, not consistently" in text
    assert "lowers the mean corruption AUROC loss by 0.006 (on all 3 datasets), an improvement" in text
