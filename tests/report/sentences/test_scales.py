"""The scale comparison in words."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences.scales import describe_scale_change, null_rho_bound


@given(st.integers(4, 500))
def test_the_null_bound_shrinks_with_more_encoders(n):
    assert 0 < null_rho_bound(n + 1) < null_rho_bound(n) < 1


def test_too_few_encoders_have_no_bound():
    assert null_rho_bound(3) != null_rho_bound(3)  # NaN


def _inputs(near=(0.0, 0.0, 0.0)):
    comparison = pd.DataFrame({
        "encoder": ["a", "b", "c"], "D": [0.9, 0.7, 0.55],
        "rank_L_study": [3, 2, 1], "rank_L_chance": [1, 2, 3], "rank_R_study": [1, 2, 3], "rank_R_chance": [1, 2, 3],
        "near_chance": list(near),
    })
    correlations = pd.DataFrame({"rho_study": [-1.0, float("nan")], "rho_chance": [1.0, 0.5], "n_encoders": [3, 3],
                                 "rank_moves": [2, 0]}, index=pd.Index(["L", "R"], name="axis"))
    return comparison, correlations


def test_the_sentence_names_the_mover_and_skips_an_axis_without_moves():
    text = describe_scale_change(*_inputs())
    assert "a on label efficiency (3rd on the study's scale, 1st on the chance scale)" in text
    assert "on robustness loss (" not in text
    assert "undefined" in text  # a constant axis has no rho
    assert "within two sampling errors" not in text  # 3 encoders: no bound
    assert "this build's world" in text and "any benchmark" in text


def test_near_chance_cells_are_named():
    text = describe_scale_change(*_inputs(near=(0.0, 0.0, 0.25)))
    assert "1 encoder has cells within 0.05 of chance: c (25 % of its cells)" in text
    assert "within 0.05 of chance" not in describe_scale_change(*_inputs())


def test_the_standard_s_scales_are_named():
    from crsbench_lib.report.sentences.scales import describe_standard_scales

    study = describe_standard_scales("v4", "ratio", "points")
    assert "the study's scales" in study and "near chance looks efficient and robust" in study
    chance = describe_standard_scales("v5", "chance", "chance")
    assert "amendment 14" in chance and "artefact" not in chance
    assert "one study scale, one chance scale" in describe_standard_scales("x", "chance", "points")


@pytest.mark.parametrize("simulated, world", [(True, "this build's simulated world"), (False, "this run's own data")])
def test_the_rank_moves_belong_to_the_world_of_the_run(simulated, world):
    """On a user's own data the rank moves belong to the run's data, not to a build's world (issue 30)."""
    text = describe_scale_change(*_inputs(), simulated=simulated)
    assert text.endswith(f"belong to {world}.") and ("build's" in text) == simulated
