"""The rank figures mark every reversed pair, and draw rank probabilities and tau distributions."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.collections import PathCollection

from crsbench_lib.report import summaries
from crsbench_lib.report.plots import ranks as plots
from crsbench_lib.scoring import agreement, bootstrap, lodo, raw_axes, transfer


def _crosses_counted(ax) -> int:
    """The reversed pairs a slope chart shows: each cross (a one-point scatter strictly between the two rank
    columns) counts 1, or the "<k> pairs" written on it where several pairs cross at one point."""
    crosses = [tuple(c.get_offsets()[0]) for c in ax.collections
               if c.get_offsets().shape[0] == 1 and 0 < c.get_offsets()[0][0] < 1]
    counts = {tuple(t.xy): int(t.get_text().split()[0]) for t in ax.texts if t.get_text().endswith(" pairs")}
    assert set(counts) <= set(crosses)
    return sum(counts.get(point, 1) for point in crosses)


def test_bump_chart_marks_every_reversed_pair(scores, check_figure):
    ranks = agreement.rank_table(scores.set_index("encoder")["D"], scores.set_index("encoder")["crs"])
    fig = plots.bump_chart(ranks, highlight=[ranks["encoder"].iloc[0]])
    check_figure(fig)
    result = agreement.score_agreement(scores)
    assert _crosses_counted(fig.axes[0]) == result.reversed_pairs
    assert f"{result.reversed_pairs} of {result.n_pairs} pairs reversed" in fig.axes[0].get_title()


@settings(max_examples=40, deadline=None)
@given(st.permutations(list(range(1, 9))))
def test_crossings_equal_discordant_pairs(permutation):
    left = np.arange(1, 9)
    expected = agreement.rank_agreement(pd.Series(-left.astype(float)), pd.Series(-np.array(permutation, float)))
    assert len(plots.crossing_pairs(left, permutation)) == expected.reversed_pairs


def test_rank_figures(table, standard, scores, check_figure):
    boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=50)
    check_figure(plots.rank_probability_heatmap(summaries.rank_probabilities(boot.crs_draws, boot.encoders)))
    check_figure(plots.sensitivity_distribution(np.linspace(0.8, 1, 50), pd.DataFrame({"scheme": ["a"], "top_k_changed": [0.1]}),
                                                reference=(0.985, 0.986)))
    check_figure(plots.lodo_comparison(lodo.lodo_summary(lodo.leave_one_dataset_out(raw_axes(table), standard))))
    from crsbench_lib.scoring import score_results

    ranks = transfer.rank_comparison(scores, score_results(table, standard, arm="lora"))
    check_figure(plots.transfer_comparison(ranks, transfer.auroc_gain(table)))
    with pytest.raises(ValueError, match="no finite value"):
        plots.sensitivity_distribution(np.array([np.nan]))


def test_transfer_gain_axis_writes_tiny_gains_without_an_offset():
    import matplotlib

    ranks = pd.DataFrame({"encoder": ["a", "b"], "rank_frozen": [1, 2], "rank_lora": [1, 2]})
    gains = pd.DataFrame({"encoder": ["a", "b"], "auroc_gain": [-8e-5, -4e-5]})
    fig = plots.transfer_comparison(ranks, gains)
    fig.canvas.draw()
    axis = fig.axes[1].xaxis
    assert axis.get_offset_text().get_text() == ""
    labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
    assert labels and all(text == "0" or text[0] in "+-\u2212" for text in labels)
    matplotlib.pyplot.close(fig)


def test_rank_probability_rows_follow_the_point_crs_when_given():
    """Fig. 10 of leading_tier: the text says "by point CRS", so the rows must be in that order (lecturer's item 7)."""
    # Mean-rank order (the default of rank_probabilities) puts b above a although a's point CRS is higher.
    probabilities = pd.DataFrame([[0.6, 0.4, 0.0], [0.4, 0.5, 0.1], [0.0, 0.1, 0.9]],
                                 index=pd.Index(["b", "a", "c"], name="encoder"), columns=[1, 2, 3])
    point = pd.Series({"a": 0.696, "b": 0.694, "c": 0.362})
    fig = plots.rank_probability_heatmap(probabilities, top_k=2, point_crs=point)
    rows = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert rows == ["a", "b", "c"]
    assert "point CRS" in fig.axes[0].get_ylabel()
    # Without the key the rows stay as given, and the axis claims no order.
    fig = plots.rank_probability_heatmap(probabilities, top_k=2)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["b", "a", "c"]
    assert fig.axes[0].get_ylabel() == ""
    with pytest.raises(ValueError, match="no point CRS"):
        plots.rank_probability_heatmap(probabilities, point_crs=point.drop("c"))


def test_sensitivity_panel_is_never_an_empty_axis(layout, check_figure):
    """Lecturer: the right panel was empty when no panel changes the top set (all shares 0; then Fig. 12)."""
    panel = pd.DataFrame({"scheme": ["leave-one-out", "random 13 of 19"], "panels": [19, 200],
                          "mean_tau": [0.99, 0.96], "top_k_changed": [0.0, 0.0]})
    fig = plots.sensitivity_distribution(np.r_[np.ones(70), np.full(30, 0.99)], panel)
    check_figure(fig)
    right = fig.axes[1]
    points = [c.get_offsets() for c in right.collections if c.get_offsets().shape[1:] == (2,)
              and len(c.get_offsets()) == len(panel) and isinstance(c, PathCollection)]
    assert points and np.allclose(points[0][:, 0], 0.0)  # one visible dot per scheme, at a share of 0
    texts = [t.get_text() for t in right.texts]
    assert texts == ["0 of 19 panels", "0 of 200 panels"]
    assert "no panel changes" in right.get_title()
    assert all(layout.inside(b, right.bbox) for b in layout.boxes(fig, right.texts))
    # A share that is not 0 is counted the same way and the axis stays wide enough to show it.
    moved = plots.sensitivity_distribution(np.ones(10), panel.assign(top_k_changed=[0.0, 0.035]))
    assert [t.get_text() for t in moved.axes[1].texts] == ["0 of 19 panels", "7 of 200 panels"]
    assert moved.axes[1].get_xlim()[1] >= 0.25 and not moved.axes[1].get_title()


def test_lodo_draws_the_noise_band_and_limits_from_the_data(check_figure):
    """Lecturer: y from -1 wasted half the panel and the bootstrap band that carries the finding was missing
    (then Fig. 16)."""
    from matplotlib.collections import PolyCollection

    summary = pd.DataFrame({"crs": [0.74, 0.58, 0.66], "auroc": [0.76, 0.65, 0.70], "C": [0.18, 0.19, 0.16]},
                           index=pd.Index(["cxr", "derm", "mean"], name="held_out"))
    noise = pd.DataFrame({"held_out": ["cxr", "cxr", "derm", "derm"], "predictor": ["CRS", "AUROC"] * 2,
                          "draw_low": [0.90, 0.90, 0.86, 0.86], "draw_high": [0.99, 0.99, 0.98, 0.98]})
    fig = plots.lodo_comparison(summary, noise, level=0.95)
    check_figure(fig)
    ax = fig.axes[0]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2  # one per held-out dataset with a noise range; none behind "mean"
    for band, (centre, low, high) in zip(bands, [(0, 0.90, 0.99), (1, 0.86, 0.98)], strict=True):
        (x0, y0), (x1, y1) = band.get_paths()[0].get_extents().get_points()
        assert (x0 + x1) / 2 == pytest.approx(centre) and (y0, y1) == pytest.approx((low, high))
    assert any("bootstrap" in t.get_text() and "95%" in t.get_text() for t in ax.get_legend().get_texts())
    bottom, top = ax.get_ylim()
    assert -0.1 < bottom <= 0.0 and 0.99 <= top <= 1.02  # the bars and bands, and 0; not the whole [-1, 1]
    # Negative τ_b keeps its room below 0; without a band the figure still draws from the data alone.
    plain = plots.lodo_comparison(summary.assign(C=[-0.3, 0.1, -0.1]))
    assert -0.4 < plain.axes[0].get_ylim()[0] < -0.3 and plain.axes[0].get_ylim()[1] < 0.85


def test_bump_chart_counts_pairs_that_cross_at_one_point(layout, check_figure):
    """Lecturer: 6 crosses for 8 reversed pairs, three stacked at rank 2 (a swap across an unmoved encoder), and
    the legend over "(1 = best)" (then Fig. 7)."""
    ranks = pd.DataFrame({"encoder": [f"e{i}" for i in range(6)], "rank_auroc": [1, 2, 3, 4, 5, 6],
                          "rank_crs": [3, 2, 1, 5, 4, 6]})
    fig = plots.bump_chart(ranks)
    check_figure(fig)
    ax = fig.axes[0]
    assert _crosses_counted(ax) == 4 == len(plots.crossing_pairs(ranks["rank_auroc"], ranks["rank_crs"]))
    assert [t.get_text() for t in ax.texts if t.get_text().endswith(" pairs")] == ["3 pairs"]
    assert plots.crossing_points([1, 2, 3], [3, 2, 1], [(0, 1), (0, 2), (1, 2)]) == {(0.5, 2.0): 3}
    legend = fig.legends[0] if fig.legends else ax.get_legend()
    ticks = layout.boxes(fig, ax.get_xticklabels())
    assert len(ticks) == 2
    assert not [pair for pair in layout.overlaps([*layout.boxes(fig, [legend]), *ticks], slack=0.0) if 0 in pair]
    assert layout.inside(layout.boxes(fig, [legend])[0], fig.bbox)


def _saved_width_in(fig) -> float:
    """The width (inches) of the saved PNG: ``savefig.bbox`` is tight, so anything outside the panels widens it."""
    fig.canvas.draw()
    return fig.get_tightbbox(fig.canvas.get_renderer()).width


def _long_names(n: int) -> list[str]:
    return [f"multitask_broad_noaug_{i:02d}" for i in range(n)]


def test_transfer_figure_fits_the_column_at_a_legible_size(layout, check_figure):
    """Lecturer: Fig. 17's panel text printed at 6-7 px: the names beside the slope lines spilled outside the figure,
    the PNG came out wider than the page's column and the page shrank every letter (then Fig. 17)."""
    from crsbench_lib.report.style import BOOK_WIDTH_IN

    names = _long_names(9)
    ranks = pd.DataFrame({"encoder": names, "rank_frozen": range(1, 10), "rank_lora": [1, 3, 2, 4, 6, 7, 5, 8, 9]})
    gains = pd.DataFrame({"encoder": names + ["intask_supervised_s"], "auroc_gain": np.linspace(0.0, 0.017, 10)})
    fig = plots.transfer_comparison(ranks, gains)
    check_figure(fig)
    assert _saved_width_in(fig) <= BOOK_WIDTH_IN + 0.1
    slope, bars = fig.axes[:2]
    names_drawn = [t for t in slope.texts if t.get_text().strip() and not t.get_text().endswith("pairs")]
    assert len(names_drawn) == 2 * len(names)
    assert all(layout.inside(box, slope.bbox) for box in layout.boxes(fig, names_drawn))
    assert min(t.get_fontsize() for t in names_drawn) >= 9
    assert min(t.get_fontsize() for t in bars.get_yticklabels()) >= 9
    assert _crosses_counted(slope) == len(plots.crossing_pairs(ranks["rank_frozen"], ranks["rank_lora"]))


def test_bump_chart_names_stay_inside_the_column():
    from crsbench_lib.report.style import BOOK_WIDTH_IN

    names = _long_names(19)
    ranks = pd.DataFrame({"encoder": names, "rank_auroc": range(1, 20), "rank_crs": [2, 1, *range(3, 20)]})
    assert _saved_width_in(plots.bump_chart(ranks)) <= BOOK_WIDTH_IN + 0.1


def test_rank_probability_numbers_are_legible_and_fit_their_cells(layout):
    """Lecturer: Fig. 10's cell values printed at 6-7 px (then Fig. 10)."""
    n = 19
    probabilities = pd.DataFrame(np.full((n, n), 0.47), index=pd.Index(_long_names(n), name="encoder"),
                                 columns=range(1, n + 1))
    fig = plots.rank_probability_heatmap(probabilities, top_k=3)
    ax = fig.axes[0]
    numbers = [t for t in ax.texts if t.get_text()]
    assert len(numbers) == n * n and min(t.get_fontsize() for t in numbers) >= 9
    boxes = layout.boxes(fig, numbers)
    (x0, _), (x1, _) = ax.transData.transform([(0, 0), (1, 0)])
    assert max(b.width for b in boxes) < abs(x1 - x0)  # ".47" inside its own cell
    assert not layout.overlaps(boxes)
    colour_bar = fig.axes[1]
    assert colour_bar.get_position().height < colour_bar.get_position().width  # under the map, not beside it
    assert plots.cell_font_size(40) < 9  # a wider grid gets smaller numbers, not overprinted ones
