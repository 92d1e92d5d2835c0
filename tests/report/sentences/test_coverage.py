"""Sentences of the self-audit (report.sentences.coverage)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences.coverage import coverage_verdict, describe_coverage, describe_truth, judged_se


def _table(observed, mc_se=0.02, n_rep=20, tier=None):
    rows = [{"quantity": q, "method": "percentile", "nominal": 0.95, "observed": o, "n": 5 * n_rep,
             "n_replicates": n_rep, "mc_se": mc_se, "mean_width": 0.05, "mean_truth_se": 0.001,
             "mean_set_size": math.nan} for q, o in observed.items()]
    if tier is not None:
        rows.append({"quantity": "leading_tier", "method": "set", "nominal": 0.95, "observed": tier, "n": n_rep,
                     "n_replicates": n_rep, "mc_se": 0.05, "mean_width": math.nan, "mean_truth_se": 0.01,
                     "mean_set_size": 2.0})
    return pd.DataFrame(rows)


def test_the_judged_error_never_falls_below_the_binomial_at_nominal():
    assert judged_se(0.95, 0.0, 20) == pytest.approx(math.sqrt(0.95 * 0.05 / 20))
    # The observed share's own error does not widen the yardstick: it grows as coverage falls.
    assert judged_se(0.95, 0.2, 20) == pytest.approx(math.sqrt(0.95 * 0.05 / 20))
    assert judged_se(0.95, float("nan"), 20) == pytest.approx(math.sqrt(0.95 * 0.05 / 20))


@pytest.mark.parametrize(("observed", "verdict"), [(0.95, "holds"), (0.92, "holds"), (0.90, "under-covers"),
                                                   (0.995, "over-covers")])
def test_verdict_is_judged_against_monte_carlo_error(observed, verdict):
    assert coverage_verdict(observed, 0.95, 0.02) == verdict


def test_all_holding_says_so_and_names_the_world():
    text = describe_coverage(_table({"axis_D": 0.95, "axis_C": 0.94}, n_rep=200), world="the derm simulation")
    assert "stay within two Monte-Carlo errors of it for discrimination (D)" in text and "calibration (C)" in text
    assert "fall short" not in text and "the derm simulation" in text
    assert "goes unseen" not in text  # 200 replicates resolve a shortfall of 0.04


def test_few_replicates_say_what_they_cannot_see():
    text = describe_coverage(_table({"axis_D": 0.9}, mc_se=0.1, n_rep=6))
    # 2 x sqrt(0.95 x 0.05 / 6) = 0.18: the yardstick is the error at the nominal level, not the observed one.
    assert "With 6 replicates a shortfall below 0.18 goes unseen" in text


def test_a_short_interval_is_named_with_its_numbers():
    text = describe_coverage(_table({"axis_D": 0.95, "crs_difference": 0.70}, tier=0.85))
    assert "fall short for the pairwise CRS differences (70 of 100, 0.700, error 0.049)" in text
    assert "held the truly best encoder in 17 of the 20 replicates (a share of 0.850" in text
    assert "property of the interval method under this design" in text


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="no 'basic' intervals"):
        describe_coverage(_table({"axis_D": 0.95}), method="basic")


def test_truth_precision_is_judged_against_the_widths():
    truth = pd.DataFrame({"quantity": ["leading_tier"], "item": ["e"], "truth": [0.03], "truth_se": [0.01]})
    precise = describe_truth(truth, _table({"axis_D": 0.95}))
    assert "a miss is the interval's, not the truth's" in precise
    table = _table({"axis_D": 0.95})
    table["mean_truth_se"] = 0.02
    assert "part of a miss may be the truth's" in describe_truth(truth, table)
    with pytest.raises(ValueError, match="one truly best"):
        describe_truth(truth.iloc[:0], table)


def _methods(rows, n_rep=16):
    """A coverage table of (quantity, method, observed, mc_se, mean_error, error_se) rows."""
    return pd.DataFrame([{"quantity": q, "method": m, "nominal": 0.95, "observed": o, "n": 5 * n_rep,
                          "n_replicates": n_rep, "mc_se": se, "mean_width": 0.03, "mean_error": e, "error_se": ese,
                          "mean_truth_se": 0.001, "mean_set_size": math.nan} for q, m, o, se, e, ese in rows])


def test_a_biased_percentile_interval_short_and_a_basic_one_holding_is_said_with_the_bias():
    from crsbench_lib.report.sentences.coverage import describe_methods

    table = _methods([("axis_C", "percentile", 0.30, 0.10, 0.012, 0.001), ("axis_C", "basic", 0.96, 0.04, 0.012, 0.001),
                      ("axis_D", "percentile", 0.95, 0.04, 0.0, 0.002), ("axis_D", "basic", 0.94, 0.04, 0.0, 0.002)])
    text = describe_methods(table, world="the phantom world")
    assert text.startswith("For calibration (C) the percentile interval falls short (24 of 80 cover the truth, a share of 0.300")
    assert "while the basic interval holds (0.960" in text
    assert "its estimate lies +0.012 from the truth on average (error 0.001, 80 % of the interval's half-width)" in text
    assert "binned ECE is biased upward" in text and "takes it out" in text
    assert "Both intervals hold for discrimination (D)." in text
    assert "belongs to the interval methods (any benchmark of this design)" in text and "the phantom world" in text


def test_a_shortfall_the_bias_does_not_explain_is_this_worlds_only():
    from crsbench_lib.report.sentences.coverage import describe_methods

    table = _methods([("crs", "percentile", 0.95, 0.04, 0.001, 0.01), ("crs", "basic", 0.60, 0.08, 0.001, 0.01)])
    text = describe_methods(table, world="W")
    assert "For each encoder's CRS the percentile interval holds (76 of 80 cover the truth, a share of 0.950" in text
    assert "while the basic interval falls short (0.600, error 0.054)" in text
    assert "does not explain it" in text and "any benchmark" not in text
    assert text.endswith("the finding is measured in W only.")


def test_a_percentile_interval_wider_than_promised_is_not_read_as_a_shortfall():
    from crsbench_lib.report.sentences.coverage import describe_methods

    table = _methods([("axis_L", "percentile", 1.0, 0.0, 0.0, 0.001), ("axis_L", "basic", 0.95, 0.01, 0.0, 0.001)],
                     n_rep=400)
    text = describe_methods(table, world="W")
    assert "the percentile interval is wider than promised (2000 of 2000 cover the truth, a share of 1.000" in text and "basic interval holds (0.950" in text
    assert "falls short" not in text and "any benchmark" not in text
    assert text.endswith("Where the two methods part in any other way, the finding is measured in W only.")


def test_methods_that_agree_say_so_and_a_table_without_both_is_refused():
    from crsbench_lib.report.sentences.coverage import describe_methods

    agree = _methods([("axis_D", "percentile", 0.95, 0.04, 0.0, 0.002), ("axis_D", "basic", 0.94, 0.04, 0.0, 0.002)])
    assert describe_methods(agree, world="W").endswith("The two methods give the same verdict for every quantity, in W.")
    with pytest.raises(ValueError, match="both a percentile and a basic"):
        describe_methods(agree[agree["method"] == "basic"])


@given(st.floats(0.0, 1.0), st.floats(0.0, 0.3))
def test_the_book_intervals_sentence_carries_each_shown_intervals_verdict(observed, se):
    from crsbench_lib.report.sentences.coverage import BOOK_INTERVALS, describe_book_intervals

    table = _methods([("crs", "percentile", observed, se, 0.0, 0.01), ("crs", "basic", 0.95, 0.04, 0.0, 0.01)])
    text = describe_book_intervals(table)
    verdict = coverage_verdict(observed, 0.95, judged_se(0.95, se, 16))
    word = {"holds": "it holds", "under-covers": "it falls short", "over-covers": "it is wider than promised"}[verdict]
    assert f"the percentile interval for each encoder's CRS ({BOOK_INTERVALS['crs'][1]}; here {word}: " in text
    assert "Kendall's τ_b of AUROC and CRS (the agreement chapter; not audited here)" in text
    assert "For discrimination (D), calibration (C), label efficiency (L) and robustness (R): no page shows" in text


def test_an_unaudited_run_says_why():
    from crsbench_lib.report.sentences.coverage import describe_unaudited

    text = describe_unaudited("mine")
    assert "truth is unknown" in text and "mine" in text and "crsbench coverage" in text


# --- "Is this real?" and the exercises ------------------------------------------------------------------------

from crsbench_lib.report.sentences import coverage as coverage_sentences  # noqa: E402


def _audit_table(percentile_c, basic_c, n_rep=8, tier=1.0):
    rows = []
    for q, (p, b), error in (("axis_C", (percentile_c, basic_c), 0.009), ("axis_D", (0.958, 0.958), -0.001)):
        for method, observed in (("percentile", p), ("basic", b)):
            rows.append({"quantity": q, "method": method, "nominal": 0.95, "observed": observed, "n": 3 * n_rep,
                         "n_replicates": n_rep, "mc_se": 0.07, "mean_width": 0.038, "mean_error": error,
                         "error_se": 0.002, "mean_truth_se": 0.005, "mean_set_size": math.nan})
    rows.append({"quantity": "leading_tier", "method": "set", "nominal": 0.95, "observed": tier, "n": n_rep,
                 "n_replicates": n_rep, "mc_se": 0.0, "mean_width": math.nan, "mean_error": math.nan,
                 "error_se": math.nan, "mean_truth_se": 0.04, "mean_set_size": 1.75})
    return pd.DataFrame(rows)


def test_lessons_show_the_biased_estimator_split_or_say_there_is_none():
    lessons = coverage_sentences.coverage_lessons(_audit_table(0.417, 0.958), simulated=True)
    assert [lesson.scope for lesson in lessons] == ["design", "design", "world", "world"]
    assert "An audit of 8 replicates judges a 95 % interval with a Monte-Carlo error of 0.077" in lessons[0].text
    assert "a shortfall below 0.15 goes unseen; seeing one of 0.05 takes 76 replicates" in lessons[0].text
    assert "On this page calibration (C) shows it: its estimate lies +0.009 from the truth on average" in lessons[1].text
    assert "fall short for calibration (C) and hold" in lessons[2].text
    assert "held the truly best encoder in 8 of 8 replicates" in lessons[3].text and "here it holds" in lessons[3].text
    none = coverage_sentences.coverage_lessons(_audit_table(0.958, 0.958, tier=0.5), simulated=True)
    assert "no quantity's percentile interval falls short while its basic interval holds" in none[1].text
    assert "fall short for no quantity" in none[2].text
    assert "held the truly best encoder in 4 of 8 replicates" in none[3].text and "falls short" in none[3].text


def test_unaudited_lessons_speak_of_the_own_data():
    lessons = coverage_sentences.coverage_lessons(None, simulated=False)
    assert [lesson.scope for lesson in lessons] == ["design", "world"]
    assert lessons[1].text.startswith("This run's own data has no known truth")
    assert "simulated" not in lessons[1].text and "phantom" not in lessons[1].text


def test_replicates_needed_for_a_shortfall():
    assert coverage_sentences.replicates_for(0.05) == 76
    assert coverage_sentences.replicates_for(0.10) == 19
    text = coverage_sentences.coverage_exercise_replicates(_audit_table(0.417, 0.958).assign(
        observed=[0.417, 0.958, 0.875, 0.958, 1.0]))
    assert "R = 76 replicates, against this audit's 8, whose error of 0.077 hides any shortfall below 0.15" in text
    assert "the percentile interval of discrimination (D) (0.875) lies more than 0.05 below nominal" in text
    assert "Rerun: `crsbench notebook coverage -p n_replicates 76`" in text
    calm = coverage_sentences.coverage_exercise_replicates(_audit_table(0.417, 0.958))
    assert "No \"holds\" verdict of this page lies more than 0.05 below nominal" in calm
    enough = coverage_sentences.coverage_exercise_replicates(_audit_table(0.417, 0.958, n_rep=100))
    assert "This audit already has that many." in enough
    assert "no count to extend" in coverage_sentences.coverage_exercise_replicates(None)


def _audit(hog_hits, multitask_hits, n_rep=8):
    truth = pd.DataFrame({"quantity": "axis_C", "item": ["hog", "multitask"], "truth": [0.021, 0.071],
                          "truth_se": 0.005})
    rows = []
    for r in range(n_rep):
        for item, t, hits, half in (("hog", 0.021, hog_hits, 0.016), ("multitask", 0.071, multitask_hits, 0.025)):
            centre = t + 0.01 if item == "hog" else t + 0.005
            covered = r < hits
            low, high = (t - half / 2, t + half) if covered else (t + 0.001, t + 2 * half)
            rows.append(dict(replicate=r, quantity="axis_C", item=item, method="percentile", estimate=centre,
                             low=low, high=high, nominal=0.95))
            rows.append(dict(replicate=r, quantity="axis_C", item=item, method="basic", estimate=centre,
                             low=t - half, high=t + half, nominal=0.95))
    return truth, pd.DataFrame(rows)


def test_exercise_by_encoder_follows_who_falls_short():
    truth, intervals = _audit(2, 6)
    text = coverage_sentences.coverage_exercise_by_encoder(truth, intervals)
    assert "covers the truth in 2 of 8 replicates for hog (true value 0.021" in text and "6 of 8 for multitask" in text
    assert "The basic interval covers 8 of 8 and 8 of 8 in the same order." in text
    assert "the best calibrated encoder, hog, is also the one whose interval falls shortest" in text
    flipped = coverage_sentences.coverage_exercise_by_encoder(*_audit(7, 1))
    assert "falls shortest for multitask" in flipped
    assert "the best calibrated encoder, hog, is not the one whose interval falls shortest (multitask is)" in flipped
    assert "no known truth" in coverage_sentences.coverage_exercise_by_encoder(None, None)


@pytest.mark.parametrize(("observed", "n_rep", "expected"), [
    ({"axis_D": 1.0, "axis_C": 0.75, "crs": 1.0}, 2,
     "fall short for none of the 3 audited quantities (shares 0.75 to 1.00); with so few replicates a shortfall "
     "below 0.31 goes unseen."),
    ({"axis_D": 0.95, "axis_C": 0.94}, 400, "fall short for none of the 2 audited quantities (shares 0.94 to 0.95)."),
    ({"axis_D": 0.95, "axis_C": 0.70, "crs": 0.95}, 20,
     "fall short for calibration (C) (a share of 0.700) and hold, within two Monte-Carlo errors, for the other 2 "
     "audited quantities."),
    ({"axis_D": 0.60, "axis_C": 0.70, "crs": 0.50, "axis_L": 0.95}, 20,
     "fall short for 3 of the 4 audited quantities, most for each encoder's CRS (a share of 0.500)."),
])
def test_coverage_takeaway_follows_the_verdicts(observed, n_rep, expected):
    from crsbench_lib.report.sentences.coverage import coverage_takeaway
    from crsbench_lib.report.takeaway import check_takeaway

    text = coverage_takeaway(_table(observed, n_rep=n_rep, tier=0.85), "quick")
    assert check_takeaway(text) == text
    assert text.startswith(f"Over {n_rep} replicates of the protocol, the 95 % percentile intervals ")
    assert expected in text
    assert text.endswith(f"The leading tier held the truly best encoder in {round(0.85 * n_rep)} of {n_rep} replicates.")


def test_coverage_takeaway_without_an_audit_says_why():
    from crsbench_lib.report.sentences.coverage import coverage_takeaway
    from crsbench_lib.report.takeaway import check_takeaway

    text = coverage_takeaway(None, "mine")
    assert check_takeaway(text) == text and "(profile mine) lacks" in text and "none of its intervals" in text
    with pytest.raises(ValueError, match="no 'basic' intervals"):
        coverage_takeaway(_table({"axis_D": 0.9}), "quick", method="basic")


def test_the_page_table_prints_the_error_the_sentences_quote():
    """One Monte-Carlo error per share (lecturer's item 6): the table's mc_se is the judged error the text quotes."""
    table = _audit_table(0.458, 0.958)
    table.loc[table["method"] == "percentile", "mc_se"] = [0.176, 0.071]  # the scoring table's observed-share errors
    shown = coverage_sentences.coverage_verdict_table(table)
    assert list(shown.columns) == ["quantity", "method", "nominal", "observed", "n", "mc_se", "verdict"]
    assert shown["mc_se"].round(3).tolist() == [0.077] * len(table)
    text = describe_coverage(table)
    for _, row in shown.iterrows():
        if row["method"] in ("percentile", "set"):
            assert f"{row['observed']:.3f}, error {row['mc_se']:.3f}" in text or \
                f"a share of {row['observed']:.3f}, Monte-Carlo error {row['mc_se']:.3f}" in text or \
                f"a share of {row['observed']:.3f}, error {row['mc_se']:.3f}" in text
    # The verdict column says what the sentences say, on both branches.
    verdict = dict(zip(zip(shown["quantity"], shown["method"]), shown["verdict"]))
    assert verdict[("axis_C", "percentile")] == "falls short" and "fall short for calibration (C)" in text
    assert verdict[("axis_D", "percentile")] == "holds" and verdict[("leading_tier", "set")] == "holds"
    # A share of 1.000 is not given an error of 0 (the observed-share error of 8 of 8).
    assert float(shown.loc[shown["quantity"] == "leading_tier", "mc_se"].iloc[0]) > 0


def test_exercise_by_encoder_calls_no_bias_largest_when_two_print_the_same():
    """Lecturer's item 23 (coverage Ex. 12): hog and simclr_derm_aug_s both printed 64 %, yet one was "largest"."""
    truth = pd.DataFrame({"quantity": "axis_C", "item": ["hog", "simclr", "multitask"], "truth": [0.021, 0.029, 0.071],
                          "truth_se": 0.005})
    rows = []
    # hog and simclr: the same bias (0.010) and the same half-width (0.0156): equal shares, printed alike.
    for r in range(8):
        for item, t, hits, bias, half in (("hog", 0.021, 2, 0.010, 0.0156), ("simclr", 0.029, 3, 0.010, 0.0156),
                                          ("multitask", 0.071, 6, 0.005, 0.026)):
            covered = r < hits
            low, high = (t - 0.001, t - 0.001 + 2 * half) if covered else (t + 0.001, t + 0.001 + 2 * half)
            rows.append(dict(replicate=r, quantity="axis_C", item=item, method="percentile", estimate=t + bias,
                             low=low, high=high, nominal=0.95))
    text = coverage_sentences.coverage_exercise_by_encoder(truth, pd.DataFrame(rows))
    assert "2 of 8 replicates for hog" in text and "3 of 8 for simclr" in text
    assert "falls shortest for hog, whose bias beside its interval (64 %) is the largest, level with simclr's" in text
    assert "though" not in text
    # A strictly larger bias elsewhere: named as the largest, the shares too coarse to rank.
    rows_b = [dict(row, estimate=row["estimate"] + (0.004 if row["item"] == "simclr" else 0.0)) for row in rows]
    other = coverage_sentences.coverage_exercise_by_encoder(truth, pd.DataFrame(rows_b))
    assert "falls shortest for hog, though the largest bias beside its interval" in other and "is simclr's" in other
