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


def test_gate_matrix_headers_apart_and_the_tier_a_column(table, standard, scores, layout, check_figure):
    """Lecturer: headers ran together ("DiscriminationCalibrationLabel efficiency") and the caption's tier column
    was only a note (then Fig. 22)."""
    boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=50)
    gate = selection_gate.selection_gate(scores, {"D": 0.7, "C": 0.1, "L": 0.5, "R": 0.25}, boot.summary)
    fig = plots.gate_matrix(gate)
    check_figure(fig)
    ax = fig.axes[0]
    headers = ax.get_xticklabels()
    assert [t.get_text() for t in headers] == ["Discrimination", "Calibration", "Label efficiency", "Robustness",
                                               "Leading tier"]
    # Two pixels of air between any two headers, not merely "not overlapping".
    boxes = [b.padded(1.0) for b in layout.slanted_boxes(fig, headers)]
    assert not layout.overlaps(boxes, slack=0.0)
    # The tier column: one cell per encoder, its words matching the gate's leading_tier.
    tier_cells = [t.get_text() for t in ax.texts if t.get_position()[0] == 4]
    expected = [plots.TIER_WORDS["in" if t else "out"] for t in gate["leading_tier"]]
    assert tier_cells == expected
    assert all(layout.inside(b, fig.bbox) for b in layout.boxes(fig, [*headers, *ax.texts]))


def test_gate_matrix_greys_a_references_tier_cell(table, standard, scores):
    """A reference never competes: its tier cell says so, in grey, instead of "outside"."""
    boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=50)
    reference = str(scores["encoder"].iloc[-1])
    summary = boot.summary[boot.summary["encoder"] != reference]
    gate = selection_gate.selection_gate(scores, {"D": 0.7}, summary, references=[reference])
    fig = plots.gate_matrix(gate)
    row = list(gate["encoder"]).index(reference)
    cell = [t for t in fig.axes[0].texts if tuple(t.get_position()) == (1, row)]
    assert [t.get_text() for t in cell] == [plots.TIER_WORDS["reference"]]
    assert np.ma.is_masked(fig.axes[0].images[0].get_array()[row, 1])


def test_axis_profile_end_labels_apart_and_inside_the_figure(scores, layout, check_figure):
    """Lecturer: multitask_broad_aug_l/_s's end labels overprinted and were cut at the right edge (then Fig. 8)."""
    close = scores.copy()
    close["encoder"] = [f"multitask_broad_aug_{i}_long_name" for i in range(len(close))]
    close["s_R"] = np.r_[0.830, 0.826, np.linspace(0.2, 0.6, len(close) - 2)]
    for highlight in (list(close["encoder"][:2]), []):
        fig = plots.axis_profiles(close, highlight=highlight)
        check_figure(fig)
        ax = fig.axes[0]
        labels = [t for t in ax.texts if t.get_text()]
        assert len(labels) == (len(highlight) or len(close))
        boxes = layout.boxes(fig, labels)
        assert not layout.overlaps(boxes)
        assert all(layout.inside(box, ax.bbox) for box in boxes)  # inside the panel, so never cut off


def test_spread_labels_keeps_order_gap_and_bounds():
    out = plots.spread_labels([0.5, 0.51, 0.49, 0.9], gap=0.05, low=0.0, high=1.0)
    assert np.argsort(out).tolist() == [2, 0, 1, 3]
    assert min(np.diff(sorted(out))) >= 0.05 - 1e-9
    crowded = plots.spread_labels(list(np.full(30, 0.99)), gap=0.05, low=0.0, high=1.0)
    assert min(crowded) >= 0.0 and max(crowded) <= 1.0 + 1e-9
    assert plots.spread_labels([0.2, 0.8], gap=0.05) == [0.2, 0.8]  # labels already apart stay where they are


def test_pareto_view_names_encoders_in_a_legend_not_over_the_panels(scores, layout, check_figure):
    """Lecturer: three squeezed panels, names colliding and running into the next panel, x ticks crammed
    (then Fig. 9)."""
    named = scores.copy()
    named["encoder"] = [f"multitask_broad_aug_{i}" for i in range(len(named))]
    highlight = list(named.nlargest(2, "crs")["encoder"])
    fig = plots.pareto_view(named, highlight=highlight)
    check_figure(fig)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 3
    renderer = (layout.draw(fig), fig.canvas.get_renderer())[1]
    for ax in panels:
        assert all(layout.inside(box, ax.bbox) for box in layout.boxes(fig, ax.texts))  # nothing spills over
        assert not layout.overlaps(layout.boxes(fig, ax.get_xticklabels()), slack=0.0)
        shapes = [c for c in ax.collections if len(c.get_offsets()) == 1]
        assert len(shapes) == len(highlight)  # one marker of its own per named encoder, on every panel
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()][:2] == [f"{k} {name}" for k, name in enumerate(highlight, 1)]
    box = layout.boxes(fig, [legend])[0]
    assert layout.inside(box, fig.bbox)
    assert not [ax for ax in panels if layout.overlaps([box, ax.get_tightbbox(renderer)])]


def test_pareto_view_numbers_named_markers_that_sit_on_each_other(scores, layout, check_figure):
    """Lecturer: the star, triangle and circle of the named leaders overlapped at top right (then Fig. 9)."""
    named = scores.copy()
    top = list(named.nlargest(3, "crs").index)
    for axis in ("s_D", "s_C", "s_L", "s_R"):
        named.loc[top, axis] = [0.90, 0.901, 0.899]  # three leaders on one spot in every panel
    highlight = list(named.loc[top, "encoder"])
    fig = plots.pareto_view(named, highlight=highlight)
    check_figure(fig)
    other = {"Calibration": "s_C", "Label efficiency": "s_L", "Robustness": "s_R"}
    for ax in [ax for ax in fig.axes if ax.get_title()]:
        tags = [t for t in ax.texts if t.get_text() in {"1", "2", "3"}]
        assert sorted(t.get_text() for t in tags) == ["1", "2", "3"]
        boxes = layout.boxes(fig, tags)
        assert not layout.overlaps(boxes)  # spread apart although their points coincide
        assert all(layout.inside(box, ax.bbox) for box in boxes)
        # Each number is joined by a leader to its own marker.
        for tag in tags:
            k = int(tag.get_text())
            leader = [line for line in ax.get_lines() if tuple(np.asarray(line.get_xydata())[-1]) == tag.get_position()]
            assert len(leader) == 1
            point = named.loc[top[k - 1], ["s_D", other[ax.get_title()]]].to_numpy(dtype=float)
            assert np.asarray(leader[0].get_xydata())[0] == pytest.approx(point)
        assert min(t.get_fontsize() for t in tags) >= 9


def test_ece_by_condition_joins_only_conditions_of_one_family(table, check_figure):
    """Lecturer: lines joined unrelated conditions (clean to a label fraction, a severity to the site shift;
    then Fig. 6)."""
    # The lines alone: without the floor column (the next test draws the floor).
    ece = summaries.ece_by_condition(table).drop(columns=["ece_floor"], errors="ignore")
    conditions = list(dict.fromkeys(ece["condition"]))
    assert {plots.condition_family(c) for c in conditions} >= {"clean", "labels", "corruption"}
    shown = list(ece["encoder"].unique()[:2])
    fig = plots.ece_by_condition(ece, highlight=shown)
    check_figure(fig)
    ax = fig.axes[0]
    drawn = [line for line in ax.get_lines() if len(line.get_xdata()) > 1 and line.get_linewidth() > 0
             and line.get_linestyle() != "None" and line.get_xdata()[0] != line.get_xdata()[-1]]
    assert drawn
    for line in drawn:
        families = {plots.condition_family(conditions[int(round(v))]) for v in line.get_xdata()}
        assert len(families) == 1 and families <= {"labels", "corruption"}
    # Every encoder still has a marker at every condition it has.
    points = sum(len(line.get_xdata()) for line in ax.get_lines() if line.get_marker() == "o")
    assert points == len(ece)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == sorted(shown)
    assert not ax.patches  # no floor in the table, no floor drawn


def test_ece_by_condition_draws_the_floor_of_each_conditions_test_size(table, layout, check_figure):
    """Lecturer: clean ECE is read on the whole test set, each corruption on its own small block whose ECE floor
    is about 4x larger; the jump at severity 1 was mostly that floor (then Fig. 6)."""
    ece = summaries.ece_by_condition(table)
    conditions = list(dict.fromkeys(ece["condition"]))
    floor = {c: (0.09 if c.startswith("corruption") else 0.022) for c in conditions}
    ece = ece.assign(ece_floor=ece["condition"].map(floor))
    fig = plots.ece_by_condition(ece, highlight=list(ece["encoder"].unique()[:2]))
    check_figure(fig)
    ax = fig.axes[0]
    bars = sorted(ax.patches, key=lambda p: p.get_x())
    assert [b.get_height() for b in bars] == pytest.approx([floor[c] for c in conditions])  # one bar per condition
    assert all(b.get_y() == 0 for b in bars)
    legend = fig.legends[0]
    assert "floor" in legend.get_texts()[0].get_text()
    assert not layout.overlaps([layout.boxes(fig, [legend])[0], ax.bbox])  # above the panel, over no line
