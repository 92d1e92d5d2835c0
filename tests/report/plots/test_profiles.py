"""The profile figures: Pareto fronts hold only undominated points, and every profile view draws."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.report import summaries
from crsbench_lib.report.plots import profiles as plots
from crsbench_lib.scoring import bootstrap, selection_gate


def test_pareto_front_mask():
    x = np.array([1.0, 0.5, 0.2, 0.9, 0.5])
    y = np.array([0.1, 0.5, 0.9, 0.05, 0.4])
    assert plots.pareto_front_mask(x, y).tolist() == [True, True, True, False, False]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=20))
def test_front_points_are_not_dominated(points):
    x, y = np.array(points).T
    front = plots.pareto_front_mask(x, y)
    assert front.any()
    for i in np.flatnonzero(front):
        assert not (((x >= x[i]) & (y >= y[i]) & ((x > x[i]) | (y > y[i]))).any())


def test_profile_and_pareto_views(scores, check_figure):
    check_figure(plots.axis_profiles(scores, highlight=list(scores["encoder"][:2])))
    check_figure(plots.axis_profiles(scores, kind="radar"))
    check_figure(plots.pareto_view(scores))
    with pytest.raises(ValueError, match="kind"):
        plots.axis_profiles(scores, kind="pie")
    with pytest.raises(ValueError, match="missing column"):
        plots.pareto_view(scores.drop(columns="crs"))


def test_condition_and_gate_figures(table, standard, scores, check_figure):
    check_figure(plots.label_efficiency_curves(summaries.label_efficiency_curves(table)))
    check_figure(plots.ece_by_condition(summaries.ece_by_condition(table)))
    boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=50)
    gate = selection_gate.selection_gate(scores, {"D": 0.7, "C": 0.1}, boot.summary)
    check_figure(plots.gate_matrix(gate))


def test_pareto_view_spans_the_data_not_the_unit_square(scores):
    narrow = scores.copy()
    narrow["crs"] = np.linspace(0.30, 0.40, len(narrow))
    narrow["s_D"] = np.linspace(0.10, 0.45, len(narrow))
    fig = plots.pareto_view(narrow)
    colours = fig.axes[0].collections[0]
    assert colours.norm.vmin == pytest.approx(0.30) and colours.norm.vmax == pytest.approx(0.40)
    left, right = fig.axes[0].get_xlim()
    assert 0.0 < left < 0.10 and 0.45 < right < 0.5


def test_retention_curves_are_drawn_on_the_scale_of_the_standards_L(table, standard, check_figure):
    """Fig. 5 of four_axes: "L is the mean of the points left of 100 %" must hold on the standard's scale
    (lecturer's item 4): the chance scale for a chance standard, the study's ratio for a study-scale one."""
    import dataclasses

    import pandas as pd

    from crsbench_lib.scoring import axes
    from crsbench_lib.standard import AxisScales

    assert standard.axis_scales.label_efficiency == "chance"
    ratio_standard = dataclasses.replace(standard, axis_scales=AxisScales())
    study_curves = summaries.label_efficiency_curves(table)
    for std, scale in ((standard, "chance"), (ratio_standard, "ratio")):
        curves = plots.retention_on_scale(table, std)
        below = curves[curves["label_fraction"] < 1.0]
        mean = below.groupby("encoder")["retention"].mean()
        profile_l = axes.encoder_profiles(axes.standard_axes(table, std))["L"]
        pd.testing.assert_series_equal(mean, profile_l.rename("retention").rename_axis("encoder"), check_exact=False,
                                       rtol=1e-12)
        assert (curves.loc[curves["label_fraction"] == 1.0, "retention"] == 1.0).all()
        fig = plots.label_efficiency_curves(curves, scale=scale)
        check_figure(fig)
        assert fig.axes[0].get_ylabel() == plots.RETENTION_LABELS[scale]
    # The study's ratio curves (what the figure drew before) are not the chance-scale axis.
    chance = plots.retention_on_scale(table, standard).set_index(["encoder", "label_fraction"])["retention"]
    ratio = study_curves.set_index(["encoder", "label_fraction"])["retention"]
    assert not np.allclose(chance.loc[ratio.index], ratio)
    assert np.allclose(plots.retention_on_scale(table, ratio_standard).set_index(
        ["encoder", "label_fraction"])["retention"].loc[ratio.index], ratio)
    assert "0.5" in plots.RETENTION_LABELS["chance"] and "0.5" not in plots.RETENTION_LABELS["ratio"]
    with pytest.raises(ValueError, match="scale"):
        plots.label_efficiency_curves(study_curves, scale="points")
