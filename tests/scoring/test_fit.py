"""Fit of a table to its standard: misfit warnings name the axis; absent terms are listed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.results.synthetic import synthetic_results
from crsbench_lib.scoring.axes import raw_axes
from crsbench_lib.scoring.crs import score_results
from crsbench_lib.scoring.fit import ANCHOR_HINT, FREEZE_HINT, absent_terms, anchor_excess, axes_below_panel, fit_warnings
from crsbench_lib.scoring.freeze import freeze_standard
from crsbench_lib.standard import AXES, load_template


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_results(n_encoders=6, corruptions=("noise",), random_state=3)


def test_a_table_is_inside_its_own_panel(table: pd.DataFrame) -> None:
    own = freeze_standard(table, "own-v1")
    scores = score_results(table, own)
    assert axes_below_panel(scores, own) == []
    # Only anchor clipping can remain (a retention above 1 passes L's best anchor).
    assert not any("dominance" in line for line in fit_warnings(scores, own))
    assert {e.side for e in anchor_excess(scores, own)} <= {"best"}


def test_a_worse_calibrated_table_is_outside_the_panel(table: pd.DataFrame) -> None:
    own = freeze_standard(table, "own-v1")
    worse = table.assign(ece=np.clip(table["ece"] + 0.25, 0.0, 1.0), ece_debiased=table["ece_debiased"] + 0.25)
    scores = score_results(worse, own)
    assert (scores["dominance"] < 1e-12).all()  # noise-aware: a vanishing probability, not exactly 0
    assert axes_below_panel(scores, own) == ["C"]
    lines = fit_warnings(scores, own)
    assert lines[0].startswith("every encoder has dominance near 0 against the panel of standard own-v1: on axis C")
    assert any(line.startswith("axis C: 6 of 6 encoders lie beyond the worst anchor (0.2") for line in lines)
    # Values beyond an anchor outlive a freeze: the remedy names --base as well.
    assert lines[-1].endswith(f"{FREEZE_HINT}; {ANCHOR_HINT}") and "crsbench freeze" in lines[-1]
    assert all("\n" not in line for line in lines)


def test_anchor_excess_sides_and_extremes() -> None:
    std = load_template()
    worst_d, best_d = std.anchors["D"]
    worst_c, _ = std.anchors["C"]
    scores = pd.DataFrame({"D": [worst_d - 0.1, worst_d - 0.05, best_d], "C": [worst_c + 0.3, 0.0, 0.0],
                           "L": [0.9] * 3, "R": [0.0] * 3})
    found = {(e.axis, e.side): e for e in anchor_excess(scores, std)}
    assert set(found) == {("D", "worst"), ("C", "worst")}
    assert found["D", "worst"].n == 2 and found["D", "worst"].extreme == pytest.approx(worst_d - 0.1)
    assert found["C", "worst"].extreme == pytest.approx(worst_c + 0.3)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(*[st.floats(0.0, 1.0)] * 4), min_size=1, max_size=8))
def test_values_between_the_anchors_are_never_beyond(points: list[tuple[float, ...]]) -> None:
    std = load_template()
    columns = {}
    for j, axis in enumerate(AXES):
        worst, best = std.anchors[axis]
        columns[axis] = [worst + p[j] * (best - worst) for p in points]
    assert anchor_excess(pd.DataFrame(columns), std) == []


def test_absent_terms(table: pd.DataFrame) -> None:
    assert absent_terms(raw_axes(table)) == []
    no_site = synthetic_results(n_encoders=3, corruptions=("noise",), shift_dataset=None)
    assert absent_terms(raw_axes(no_site)) == ["R: no shift term (no dataset has a second site)"]


def test_the_anchor_remedy_only_when_an_anchor_is_passed(table: pd.DataFrame) -> None:
    own = freeze_standard(table, "own-v1")
    worse = table.assign(ece=np.clip(table["ece"] + 0.25, 0.0, 1.0), ece_debiased=table["ece_debiased"] + 0.25)
    # Anchors no value passes (ECE and AUROC loss in [0, 1]; retention can exceed 1).
    wide = replace(own, anchors={**own.anchors, "C": (1.0, 0.0), "L": (0.0, 2.0), "R": (1.0, -1.0)})
    lines = fit_warnings(score_results(worse, wide), wide)
    assert lines and lines[-1].endswith(FREEZE_HINT) and ANCHOR_HINT not in lines[-1]


def test_partial_terms_give_the_weight_a_term_has_in_the_profile_r():
    from crsbench_lib.results.synthetic import synthetic_results
    from crsbench_lib.scoring.axes import encoder_profiles, raw_axes
    from crsbench_lib.scoring.fit import partial_terms

    table = synthetic_results(n_encoders=3, corruptions=("noise",), random_state=1)  # a second site on cxr only
    only_cxr = raw_axes(table)
    others = sorted(set(only_cxr["dataset"]) - {"cxr"})
    lines = partial_terms(only_cxr)
    assert len(lines) == 1 and f"shift term is measured on cxr only (not on {', '.join(others)})" in lines[0]
    # The stated weight is the derivative of the profile R in the shift loss.
    bumped = only_cxr.assign(shift_loss=only_cxr["shift_loss"] + 0.01)
    bumped["R"] = bumped[["avg_corruption_loss", "worst_corruption_loss", "shift_loss"]].mean(axis=1)
    slope = (encoder_profiles(bumped)["R"] - encoder_profiles(only_cxr)["R"]) / 0.01
    stated = float(lines[0].split("carries ")[1].split(" %")[0]) / 100
    assert slope.to_numpy() == pytest.approx(stated, abs=0.005)
    assert partial_terms(only_cxr.assign(shift_loss=float("nan"))) == []  # absent everywhere: absent_terms says so
    assert partial_terms(only_cxr.assign(shift_loss=0.1)) == []  # measured everywhere


def test_a_debiased_calibration_error_below_zero_is_no_anchor_excess() -> None:
    # The debiased ECE of a well-calibrated encoder scatters below 0 by sampling noise alone.
    std = load_template()
    scores = pd.DataFrame({"D": [0.8, 0.9], "C": [-0.004, 0.01], "L": [0.9] * 2, "R": [0.1] * 2})
    assert [(e.axis, e.side) for e in anchor_excess(scores, replace(std, ece_estimator="plugin"))] == [("C", "best")]
    assert anchor_excess(scores, replace(std, ece_estimator="debiased")) == []
