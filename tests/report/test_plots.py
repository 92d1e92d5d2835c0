import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from crsbench_lib.report import plots, style, summaries
from crsbench_lib.scoring import agreement, bootstrap, calibration_ablation, corruption_cells, lodo, raw_axes
from crsbench_lib.scoring import selection_gate, transfer


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _check(fig: Figure) -> None:
    assert isinstance(fig, Figure)
    width, _ = fig.get_size_inches()
    assert width == pytest.approx(style.BOOK_WIDTH_IN)
    assert fig.axes


def test_bump_chart_marks_every_reversed_pair(scores):
    ranks = agreement.rank_table(scores.set_index("encoder")["D"], scores.set_index("encoder")["crs"])
    fig = plots.bump_chart(ranks, highlight=[ranks["encoder"].iloc[0]])
    _check(fig)
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


def test_profile_and_pareto_views(scores):
    _check(plots.axis_profiles(scores, highlight=list(scores["encoder"][:2])))
    _check(plots.axis_profiles(scores, kind="radar"))
    _check(plots.pareto_view(scores))
    with pytest.raises(ValueError, match="kind"):
        plots.axis_profiles(scores, kind="pie")
    with pytest.raises(ValueError, match="missing column"):
        plots.pareto_view(scores.drop(columns="crs"))


def test_analysis_figures(table, standard, scores):
    boot = bootstrap.paired_seed_bootstrap(table, standard, n_draws=50)
    _check(plots.rank_probability_heatmap(summaries.rank_probabilities(boot.crs_draws, boot.encoders)))
    _check(plots.sensitivity_distribution(np.linspace(0.8, 1, 50), pd.DataFrame({"scheme": ["a"], "top_k_changed": [0.1]}),
                                          reference=(0.985, 0.986)))
    _check(plots.insertion_displacement(pd.DataFrame({"encoder": ["a", "b"], "fixed": [0.0, 0.0], "cohort": [0.1, 0.02]})))
    _check(plots.calibration_before_after(calibration_ablation.calibration_ablation(table)))
    cells = corruption_cells.corruption_cells(table)
    r = corruption_cells.cell_correlation(cells)
    _check(plots.corruption_overview(cells, r.r, (r.ci_low, r.ci_high)))
    _check(plots.lodo_comparison(lodo.lodo_summary(lodo.leave_one_dataset_out(raw_axes(table), standard))))
    from crsbench_lib.scoring import score_results

    ranks = transfer.rank_comparison(scores, score_results(table, standard, arm="lora"))
    _check(plots.transfer_comparison(ranks, transfer.auroc_gain(table)))
    _check(plots.label_efficiency_curves(summaries.label_efficiency_curves(table)))
    _check(plots.ece_by_condition(summaries.ece_by_condition(table)))
    gate = selection_gate.selection_gate(scores, {"D": 0.7, "C": 0.1}, boot.summary)
    _check(plots.gate_matrix(gate))
    _check(plots.published_vs_build(pd.DataFrame({"quantity": ["tau", "rho"], "study": [0.6, 0.811],
                                                  "this_build": [0.5, np.nan]})))
    with pytest.raises(ValueError, match="no finite value"):
        plots.sensitivity_distribution(np.array([np.nan]))


def test_palette_is_okabe_ito_and_highlight_greys_the_rest():
    colours = style.encoder_colours(["a", "b", "c"], highlight=["b"])
    assert to_hex(colours["b"]).upper() == style.OKABE_ITO[0]
    assert to_hex(colours["a"]).upper() == style.MUTED.upper()
    assert len({to_hex(c) for c in style.encoder_colours(["a", "b", "c"]).values()}) == 3


def test_show_displays_png_once(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    fig, _ = plt.subplots()
    plots.show(fig)
    assert len(shown) == 1 and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)


def test_before_after_scatter_draws_one_point_per_entry():
    fixed = pd.DataFrame({"crs_before": [0.2, 0.5, 0.7], "crs_after": [0.2, 0.5, 0.7]})
    moved = pd.DataFrame({"crs_before": [0.2, 0.5, 0.7], "crs_after": [0.1, 0.55, 0.9]})
    fig = plots.before_after_scatter(fixed, moved)
    _check(fig)
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


def test_augmentation_effect_draws_present_pairs_only(table):
    pairs = pd.DataFrame({"augmented": ["enc00", "enc02"], "plain": ["enc01", "absent"]})
    effect = summaries.augmentation_effect(pairs, table)
    fig = plots.augmentation_effect(effect)
    _check(fig)
    left, right = fig.axes
    assert [t.get_text() for t in left.get_yticklabels()] == ["enc00\nvs enc01"]
    # One plain and one augmented point per present pair, in each panel.
    assert [len(c.get_offsets()) for c in right.collections] == [1, 1]
    none = plots.augmentation_effect(effect.assign(in_results=False))
    assert "no aug/noaug pair" in none.axes[0].texts[0].get_text()
    with pytest.raises(ValueError, match="missing column"):
        plots.augmentation_effect(effect.drop(columns="clean_aug"))


def test_stack_figures_keeps_every_pixel_row_and_the_widest_width():
    top, bottom = Figure(figsize=(3, 1)), Figure(figsize=(2, 2))
    top.patch.set_facecolor("black")
    stacked = plots.stack_figures([top, bottom], dpi=50)
    assert [float(v) for v in stacked.get_size_inches()] == [3.0, 3.0]
    image = stacked.axes[0].images[0].get_array()
    assert image.shape == (150, 150, 3)
    assert (image[:50] == 0).all()  # the first figure, black, on top
    assert (image[50:, 100:] == 255).all()  # the narrower one padded with white
    with pytest.raises(ValueError, match="no figure to stack"):
        plots.stack_figures([])
