"""The worked decision's words follow the pair's axis differences and their intervals."""

import pandas as pd
import pytest

from crsbench_lib.report.sentences.decision import describe_worked_decision, no_reversal_text

SCORES = pd.DataFrame({"encoder": ["a", "b"], "D": [0.86, 0.85], "crs": [0.60, 0.70]})


def _projection(differences, resolved):
    return pd.DataFrame({"axis": list("DCLR"), "difference": differences, "half_width": [0.01] * 4,
                         "resolved": resolved})


@pytest.mark.parametrize(("differences", "resolved", "expected"), [
    # b better on C (lower ECE) and resolved; a's AUROC lead not resolved.
    ([-0.005, -0.03, 0.0, 0.0], [False, True, False, False], "a team choosing by AUROC would give up a measured"),
    # b better on R, within the noise: the preference is a reading of point estimates.
    ([-0.005, 0.0, 0.0, -0.004], [False, False, False, False], "none of b's advantages is resolved"),
    # Nothing favours b: the composite's terms carry it.
    ([-0.005, 0.01, -0.01, 0.01], [False, False, False, False], "No axis favours b"),
])
def test_the_verdict_follows_the_intervals(differences, resolved, expected):
    text = describe_worked_decision("a", "b", 1, 1, SCORES, _projection(differences, resolved), simulated=False)
    assert expected in text
    assert text.startswith("Of the 1 candidate pairs, 1 is ordered one way")
    assert "this run's own data" in text


def test_each_axis_is_oriented_so_that_positive_favours_the_crs_choice():
    # C and R are lower-is-better: a negative raw difference (b lower) is b's advantage.
    text = describe_worked_decision("a", "b", 2, 3, SCORES, _projection([0.01, -0.02, 0.03, -0.04],
                                                                         [True, True, True, True]))
    for axis in ("discrimination (D, clean AUROC): +0.0100", "calibration (C, ECE): +0.0200",
                 "label efficiency (L): +0.0300", "robustness (R): +0.0400"):
        assert axis in text
    assert "favouring a" not in text


def test_no_reversal_says_so_and_points_to_the_exercise():
    assert "creates one" in no_reversal_text(10, simulated=True)
