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


def test_anchor_sensitivity_figure_marks_the_choice_that_moves_the_ranking(layout, check_figure):
    """The differences page's own figure (its duplicate of the published figure removed, lecturer's item 13)."""
    from matplotlib.colors import to_hex

    from crsbench_lib.report.style import EMPHASIS, MUTED

    anchors = pd.DataFrame({"anchors_from_cohort": ["D", "C", "L", "R", "all four"],
                            "tau_to_standard": [1.0, 0.905, 0.977, 0.989, 0.905], "top_k_overlap": [3, 2, 3, 3, 2]})
    fig = plots.anchor_sensitivity_figure(anchors)
    check_figure(fig)
    ax, bx = fig.axes[:2]
    points = ax.collections[-1]
    assert len(points.get_offsets()) == 5 and points.get_offsets()[1][0] == pytest.approx(0.905)
    # Unchanged ranking (τ_b 1) muted, every moved one in the emphasis colour; labels carry τ_b, the right panel
    # the members of the top set each choice keeps.
    colours = [to_hex(c) for c in points.get_facecolors()]
    assert colours[0] == to_hex(MUTED) and colours[1] == to_hex(EMPHASIS)
    assert [t.get_text().strip() for t in ax.texts] == [f"τ_b {v:.3f}" for v in anchors["tau_to_standard"]]
    assert [t.get_text() for t in bx.texts] == ["3 of 3", "2 of 3", "3 of 3", "3 of 3", "2 of 3"]
    assert bx.collections[-1].get_offsets()[:, 0].tolist() == [3, 2, 3, 3, 2]
    top = max(ax.get_yticklabels(), key=lambda t: t.get_position()[1])
    assert top.get_text() == "D anchors from this cohort"  # the table's order, top to bottom
    assert all(layout.inside(box, ax.bbox) for box in layout.boxes(fig, ax.texts))
    check_figure(plots.anchor_sensitivity_figure(anchors.iloc[:0]))


def test_anchor_sensitivity_axis_is_honest():
    """Lecturer: the axis started at 0.90, so τ_b 0.905 looked like a collapse (then Fig. 19)."""
    anchors = pd.DataFrame({"anchors_from_cohort": ["D", "C", "all four"], "tau_to_standard": [0.989, 0.905, 0.905],
                            "top_k_overlap": [3, 2, 2]})
    ax, bx = plots.anchor_sensitivity_figure(anchors).axes[:2]
    left, right = ax.get_xlim()
    assert left <= 0.0 and 1.0 <= right < 1.05  # from 0 to 1, not from the data; no empty third right of 1
    assert bx.get_xlim()[0] < 0 and bx.get_xlim()[1] > 3  # 0 to top_k kept
    turned = plots.anchor_sensitivity_figure(anchors.assign(tau_to_standard=[0.9, -0.3, 0.2]))
    assert turned.axes[0].get_xlim()[0] <= -0.3  # a ranking turned over keeps its room below 0


def _comparison() -> pd.DataFrame:
    """The shape of ``comparison.published_comparison`` (the default build's values)."""
    rows = [("encoders", 15, 19), ("Kendall tau (AUROC vs CRS, full panel)", 0.6, 0.906),
            ("Spearman rho (AUROC vs CRS, full panel)", 0.811, 0.979), ("reversed pairs", 21, 8), ("pairs", 105, 171),
            ("mean |rank displacement|", 1.87, 0.632), ("top CRS", 0.703, 0.688),
            ("P(rank 1) of the leader", 0.664, 0.474),
            ("weight draws: mean tau", 0.9855, 0.9965), ("weight draws: top-3 changes", 0, 4),
            ("insertion: fixed displacement", 0.0, 0.0), ("calibration: min ECE reduction", 0.54, 0.093),
            ("calibration: max ECE reduction", 0.77, 0.327), ("corruption cells", 43, 34),
            ("corruption r (AUROC loss, ECE increase)", 0.63, 0.889),
            ("LoRA: frozen vs adapted tau (full panel)", 0.562, np.nan)]
    return pd.DataFrame(rows, columns=["quantity", "study", "this_build"], dtype=object)


def test_published_figure_is_one_dot_plot_of_results_on_one_axis(layout, check_figure):
    """Lecturer: 16 panels each on its own scale with no y axis, inputs drawn as results, 4 of 1000 draws filling
    a panel, an empty panel for 0 vs 0 (then Fig. 18)."""
    fig = plots.published_vs_build(_comparison(), n_draws=1000)
    check_figure(fig)
    assert len(fig.axes) == 1  # one panel, one scale
    ax = fig.axes[0]
    rows = [t.get_text().replace("\n", " ") for t in ax.get_yticklabels()]
    for absent in ("encoders", "pairs", "corruption cells", "mean |rank displacement|", "LoRA"):
        assert not [r for r in rows if r == absent or r.startswith(absent + " ") or r.startswith("LoRA")], absent
    assert "reversed pairs (share of pairs)" in rows and "top CRS" in rows
    study, build = (c.get_offsets() for c in ax.collections[-2:])
    assert len(study) == len(build) == len(rows)
    shares = dict(zip(rows, zip(study[:, 0], build[:, 0], strict=True), strict=True))
    assert shares["reversed pairs (share of pairs)"] == pytest.approx((21 / 105, 8 / 171))
    assert shares["weight draws: top-3 changes (share of draws)"] == pytest.approx((0.0, 0.004))  # not a full panel
    assert shares["insertion: fixed displacement"] == (0.0, 0.0)  # two marks at 0, never an empty panel
    left, right = ax.get_xlim()
    assert left <= 0.0 and 1.0 <= right < 1.05
    # What is not drawn is named under the axis, each with its reason.
    label = ax.get_xlabel().replace("\n", " ")
    assert "encoders, pairs, corruption cells (inputs)" in label and "mean |rank displacement| (in ranks)" in label
    assert "no value in this build" in label
    box = layout.boxes(fig, [fig.legends[0]])[0]
    assert not layout.overlaps([box, ax.bbox])
    # Without this build's draw count the top-3 count is left to the table, said so under the axis.
    plain = plots.published_vs_build(_comparison())
    assert not [t for t in plain.axes[0].get_yticklabels() if "top-3" in t.get_text()]
    assert "top-3 changes (a count of draws)" in plain.axes[0].get_xlabel().replace("\n", " ")


def test_published_figure_draws_an_interval_where_the_table_carries_one():
    table = _comparison().assign(build_low=np.nan, build_high=np.nan)
    table.loc[1, ["build_low", "build_high"]] = [0.85, 0.95]
    ax = plots.published_vs_build(table).axes[0]
    bars = [c for c in ax.collections if c.__class__.__name__ == "LineCollection" and len(c.get_segments()) == 1]
    (start, end), = [seg[:, 0] for seg in bars[-1].get_segments()]
    assert (start, end) == pytest.approx((0.85, 0.95))
    assert any("interval" in t.get_text() for t in ax.figure.legends[0].get_texts())


def test_published_figure_reads_the_real_comparison_table(table):
    """The names it keeps and drops are the comparison's own (a renamed row would otherwise be drawn as a result)."""
    from crsbench_lib.report import comparison
    from crsbench_lib.scoring import freeze_standard

    standard = freeze_standard(table, "plots-v1", created="2026-01-01T00:00:00Z")
    compared = comparison.published_comparison(table, standard, n_draws=20)
    drawn, left_out = plots.comparable_rows(compared, n_draws=20)
    counts = set(comparison.COUNT_QUANTITIES) - set(plots.SHARE_OF) - {plots.TOP3_CHANGES}
    assert counts == set(plots.INPUT_QUANTITIES)
    assert set(plots.OTHER_UNITS) <= set(compared["quantity"])
    assert not set(drawn["quantity"]) & (counts | set(plots.OTHER_UNITS))
    assert drawn[["study", "this_build"]].abs().le(1).all().all()


def _many_corruption_cells() -> pd.DataFrame:
    """Sixteen corruptions on three datasets, some not applied to every dataset (the default build's shape)."""
    rng = np.random.default_rng(0)
    corruptions = ["black_corner", "brightness_down", "brightness_up", "burned_markers", "contrast", "gamma",
                   "gaussian_blur", "gaussian_noise", "grid_lines", "haze", "jpeg", "local_contrast", "motion_blur",
                   "pixelate", "ruler_marks", "uneven_illumination"]
    rows = [{"dataset": d, "corruption": c, "mean_auroc_loss": rng.uniform(-0.002, 0.08),
             "mean_ece_increase": rng.uniform(0, 0.15)}
            for k, c in enumerate(corruptions) for j, d in enumerate(["cxr", "derm", "fundus"]) if (k + j) % 5]
    return pd.DataFrame(rows)


def test_corruption_heat_map_prints_legible_numbers_and_labels(layout, check_figure):
    """Lecturer: cell numbers overprinted ("0.018000") and x labels on top of each other (then Fig. 15)."""
    import re

    cells = _many_corruption_cells()
    fig = plots.corruption_overview(cells, 0.89, (0.69, 0.95))
    check_figure(fig)
    heat = fig.axes[0]
    numbers = [t for t in heat.texts if t.get_text()]
    assert len(numbers) == len(cells)  # one number per applied cell, none for a blank one
    assert all(re.fullmatch(r"-?\d\.\d{3}", t.get_text()) for t in numbers)
    boxes = layout.boxes(fig, numbers)
    assert not layout.overlaps(boxes)
    # Every number fits inside its own cell (one data unit wide).
    (x0, _), (x1, _) = heat.transData.transform([(0, 0), (1, 0)])
    assert max(b.width for b in boxes) < abs(x1 - x0)
    for ticks in (heat.get_xticklabels(), heat.get_yticklabels()):
        assert not layout.overlaps(layout.boxes(fig, ticks))
    assert {t.get_text() for t in heat.get_yticklabels()} == set(cells["corruption"])


def test_corruption_caption_speaks_of_the_heat_map():
    """The caption explained the scatter only; the reader is also shown a heat map."""
    import json
    from pathlib import Path

    notebook = Path(__file__).resolve().parents[3] / "notebooks" / "corruption.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    caption = next("".join(c["source"]) for c in cells if "{glue:figure} fig-corruption" in "".join(c["source"]))
    body = caption.split("```")[1].split("\n", 3)[-1]  # the caption itself, after the name and alt lines
    assert "heat map" in body.lower()


def test_insertion_legend_hides_no_bar(layout, check_figure):
    """Lecturer: the legend covered simclr_derm_aug_s's bar (a long bar low in the panel; then Fig. 13)."""
    names = [f"encoder_{i:02d}" for i in range(16)]
    cohort = np.r_[np.linspace(0.005, 0.1, 14), 0.121, 0.146]  # the longest bars at the bottom, under a corner
    fig = plots.insertion_displacement(pd.DataFrame({"encoder": names, "fixed": 0.0, "cohort": cohort}))
    check_figure(fig)
    ax = fig.axes[0]
    legend = ax.get_legend()
    bars = [p for p in ax.patches if p.get_width() > 0]
    assert len(bars) == len(names)
    legend_box = layout.boxes(fig, [legend])[0]
    assert not [i for i, box in enumerate(layout.boxes(fig, bars)) if layout.overlaps([legend_box, box])]
    assert layout.inside(legend_box, fig.bbox)
    assert [t.get_text() for t in legend.get_texts()] == ["fixed reference", "cohort-renormalised"]


def test_calibration_figure_draws_the_ece_floor_it_asks_the_reader_to_compare_with(layout, check_figure):
    """Lecturer: the caption says "compare each drop with the ECE floor", which was not drawn; the AUROC panel reused
    the before/after colours for a sign (then Fig. 14)."""
    from matplotlib.colors import to_hex

    from crsbench_lib.report.style import EMPHASIS, HIGHLIGHT

    summary = pd.DataFrame({"dataset": ["a", "a", "b"], "calibration": ["isotonic", "temperature", "isotonic"],
                            "ece_before": [0.034, 0.034, 0.043], "ece_after": [0.026, 0.031, 0.032],
                            "auroc_change": [-0.004, 0.0, 0.003], "ece_floor": [0.020, 0.020, 0.025]})
    fig = plots.calibration_before_after(summary)
    check_figure(fig)
    left, right = fig.axes[:2]
    floors = [p.get_width() for p in left.patches]
    assert floors == pytest.approx([0.020, 0.020, 0.025])  # one floor bar under each row
    legend = fig.legends[0] if fig.legends else left.get_legend()
    assert any("floor" in t.get_text() for t in legend.get_texts())
    box = layout.boxes(fig, [legend])[0]
    assert not layout.overlaps([box, left.bbox]) and not layout.overlaps([box, right.bbox])
    # The AUROC bars do not borrow "uncalibrated" / "after calibrator" colours.
    assert not {to_hex(p.get_facecolor()) for p in right.patches} & {to_hex(EMPHASIS), to_hex(HIGHLIGHT)}
    assert not plots.calibration_before_after(summary.drop(columns="ece_floor")).axes[0].patches  # floor optional


def test_corruption_heat_map_scale_fits_the_data():
    """Lecturer: a diverging -0.08..+0.08 scale while every cell mean is >= 0.003 (then Fig. 15)."""
    from crsbench_lib.report.style import DIVERGING_CMAP, SEQUENTIAL_CMAP

    cells = _many_corruption_cells()
    positive = cells.assign(mean_auroc_loss=cells["mean_auroc_loss"].abs() + 0.003)
    mesh = plots.corruption_overview(positive).axes[0].collections[0]
    assert mesh.norm.vmin == 0.0 and mesh.norm.vmax == pytest.approx(positive["mean_auroc_loss"].max())
    assert mesh.cmap.name.startswith(SEQUENTIAL_CMAP)
    # Both signs: diverging, centred on 0, each side only as far as its values go.
    mixed = cells.assign(mean_auroc_loss=np.where(np.arange(len(cells)) == 0, -0.01, cells["mean_auroc_loss"].abs()))
    scale = plots.loss_colour_scale(mixed["mean_auroc_loss"].to_numpy())
    assert scale["cmap"] == DIVERGING_CMAP and scale["center"] == 0.0
    assert scale["vmin"] == pytest.approx(-0.01) and scale["vmax"] == pytest.approx(mixed["mean_auroc_loss"].max())
    mesh = plots.corruption_overview(mixed).axes[0].collections[0]
    assert mesh.norm.vmin < 0 < mesh.norm.vmax
