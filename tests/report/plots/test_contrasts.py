"""The before-and-after figures draw what changed, with its sign, and only the pairs that are there."""

import numpy as np
import pandas as pd
import pytest

from crsbench_lib.report import summaries
from crsbench_lib.report.plots import contrasts as plots
from crsbench_lib.scoring import calibration_ablation, corruption_cells


def test_contrast_figures(table, check_figure):
    check_figure(plots.insertion_displacement(pd.DataFrame({"encoder": ["a", "b"], "fixed": [0.0, 0.0], "cohort": [0.1, 0.02]})))
    check_figure(plots.calibration_before_after(calibration_ablation.calibration_ablation(table)))
    cells = corruption_cells.corruption_cells(table)
    r = corruption_cells.cell_correlation(cells)
    check_figure(plots.corruption_overview(cells, r.r, (r.ci_low, r.ci_high)))
    check_figure(plots.published_vs_build(pd.DataFrame({"quantity": ["tau", "rho"], "study": [0.6, 0.811],
                                                        "this_build": [0.5, np.nan]})))


def test_before_after_scatter_draws_one_point_per_entry(check_figure):
    fixed = pd.DataFrame({"crs_before": [0.2, 0.5, 0.7], "crs_after": [0.2, 0.5, 0.7]})
    moved = pd.DataFrame({"crs_before": [0.2, 0.5, 0.7], "crs_after": [0.1, 0.55, 0.9]})
    fig = plots.before_after_scatter(fixed, moved)
    check_figure(fig)
    for ax in fig.axes:
        points = ax.collections[0].get_offsets()
        assert len(points) == 3
    with pytest.raises(ValueError, match="crs_after"):
        plots.before_after_scatter(fixed[["crs_before"]], moved)


def test_calibration_labels_give_the_signed_change_of_ece():
    summary = pd.DataFrame({"dataset": ["a", "a"], "calibration": ["isotonic", "vector"], "ece_before": [0.10, 0.10],
                            "ece_after": [0.11, 0.07], "auroc_change": [0.0, -0.01]})
    fig = plots.calibration_before_after(summary)
    texts = [t.get_text().strip() for t in fig.axes[0].texts]
    assert texts == ["+10%", "-30%"]  # a rise is never shown as a reduction


def test_augmentation_effect_draws_present_pairs_only(table, check_figure):
    pairs = pd.DataFrame({"augmented": ["enc00", "enc02"], "plain": ["enc01", "absent"]})
    effect = summaries.augmentation_effect(pairs, table)
    fig = plots.augmentation_effect(effect)
    check_figure(fig)
    left, right = fig.axes
    assert [t.get_text() for t in left.get_yticklabels()] == ["enc00\nvs enc01"]
    # One plain and one augmented point per present pair, in each panel.
    assert [len(c.get_offsets()) for c in right.collections] == [1, 1]
    none = plots.augmentation_effect(effect.assign(in_results=False))
    assert "no aug/noaug pair" in none.axes[0].texts[0].get_text()
    with pytest.raises(ValueError, match="missing column"):
        plots.augmentation_effect(effect.drop(columns="clean_aug"))


def test_anchor_sensitivity_figure_marks_the_choice_that_moves_the_ranking(check_figure):
    """The differences page's own figure (its duplicate of the published figure removed, lecturer's item 13)."""
    from matplotlib.colors import to_hex

    from crsbench_lib.report.style import EMPHASIS, MUTED

    anchors = pd.DataFrame({"anchors_from_cohort": ["D", "C", "L", "R", "all four"],
                            "tau_to_standard": [1.0, 0.905, 0.977, 0.989, 0.905], "top_k_overlap": [3, 2, 3, 3, 2]})
    fig = plots.anchor_sensitivity_figure(anchors)
    check_figure(fig)
    ax = fig.axes[0]
    points = ax.collections[-1]
    assert len(points.get_offsets()) == 5 and points.get_offsets()[1][0] == pytest.approx(0.905)
    # Unchanged ranking (τ_b 1) muted, every moved one in the emphasis colour; labels carry τ_b and the overlap.
    colours = [to_hex(c) for c in points.get_facecolors()]
    assert colours[0] == to_hex(MUTED) and colours[1] == to_hex(EMPHASIS)
    texts = [t.get_text().strip() for t in ax.texts]
    assert "τ_b 0.905, top 3: 2 of 3 kept" in texts and "τ_b 1.000, top 3: 3 of 3 kept" in texts
    top = max(ax.get_yticklabels(), key=lambda t: t.get_position()[1])
    assert top.get_text() == "D anchors from this cohort"  # the table's order, top to bottom
    assert ax.get_xlim()[1] > 1.0 and max(ax.get_xticks()) <= 1.0
    check_figure(plots.anchor_sensitivity_figure(anchors.iloc[:0]))
