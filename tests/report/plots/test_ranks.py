"""The rank figures mark every reversed pair, and draw rank probabilities and tau distributions."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.report import summaries
from crsbench_lib.report.plots import ranks as plots
from crsbench_lib.scoring import agreement, bootstrap, lodo, raw_axes, transfer


def test_bump_chart_marks_every_reversed_pair(scores, check_figure):
    ranks = agreement.rank_table(scores.set_index("encoder")["D"], scores.set_index("encoder")["crs"])
    fig = plots.bump_chart(ranks, highlight=[ranks["encoder"].iloc[0]])
    check_figure(fig)
    result = agreement.score_agreement(scores)
    # crossing markers are the single-point scatters strictly between the two rank columns
    crosses = [c for c in fig.axes[0].collections
               if c.get_offsets().shape[0] == 1 and 0 < c.get_offsets()[0][0] < 1]
    assert len(crosses) == result.reversed_pairs
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
