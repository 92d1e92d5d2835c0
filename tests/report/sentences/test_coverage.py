"""Sentences of the self-audit (report.sentences.coverage)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

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
    assert judged_se(0.95, 0.2, 20) == 0.2
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
    assert "With 6 replicates a shortfall below 0.20 goes unseen" in text


def test_a_short_interval_is_named_with_its_numbers():
    text = describe_coverage(_table({"axis_D": 0.95, "crs_difference": 0.70}, tier=0.85))
    assert "fall short for the pairwise CRS differences (0.700 of 100, error 0.049)" in text
    assert "held the truly best encoder in 0.850 of the 20 replicates" in text
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
