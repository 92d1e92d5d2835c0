"""The corruption chapter's sentences follow their intervals and keep within- and between-cell figures apart."""

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.grammar import correlation_word
from crsbench_lib.report.sentences import corruption

ends = st.floats(min_value=-1, max_value=1, allow_nan=False)


@given(a=ends, b=ends)
def test_within_verdict_follows_the_interval(a, b):
    low, high = min(a, b), max(a, b)
    r = (low + high) / 2
    text = corruption.describe_within_cells(r, (low, high), r, 1, 4, 10)
    if low <= 0 <= high:
        assert "the data cannot tell whether" in text and "association" not in text.split("(")[1].split(")")[0]
    elif low > 0 and high < corruption.CLOSE_GUIDE:
        assert "but only partly" in text and "at most a partial guide" in text
    elif low >= corruption.CLOSE_GUIDE:
        assert "closely" in text and "a close guide" in text
    elif high < 0:
        assert "tends to lose less calibration" in text
    else:
        assert "do not pin down" in text
    # The size words come from both ends, never from the point alone.
    if not low <= 0 <= high:
        for end in (low, high):
            word = correlation_word(end)
            assert (word in text) if word != "no" else ("to speak of" in text)


def test_within_sentence_on_the_reviewers_numbers():
    text = corruption.describe_within_cells(0.495, (0.303, 0.592), 0.517, 6, 34, 20, bias=-0.047, mc_se=0.002)
    assert text.startswith("Within a cell, across its 20 encoders, an encoder that loses more AUROC")
    assert "the mean within-cell r is 0.495 (its 95 % interval [0.303, 0.592] excludes zero and runs from a " \
           "moderate to a strong positive association) and the median 0.517" in text
    assert "in 6 of 34 cells (18 %) r is below 0.3" in text
    assert "25 % of the spread" in text and "35 % at the upper end" in text
    assert "towards zero" in text and "understates" in text


def test_interval_ends_keep_their_sign_and_digits():
    text = corruption.describe_within_cells(0.003, (-0.0002, 0.0057), 0.003, 3, 4, 10)
    assert "[-0.0002, 0.0057] includes zero" in text
    between = corruption.describe_between_cells(0.5, (0.0004, 0.9), (-0.0003, 0.8), 10, 0.63, 43)
    assert "[0.0004, 0.9000]" in between and "[-0.0003, 0.8000]" in between


@pytest.mark.parametrize(("study", "where"), [(0.3, "below"), (0.63, "inside"), (0.95, "above")])
def test_between_compares_with_the_study_as_a_between_cell_figure(study, where):
    text = corruption.describe_between_cells(0.836, (0.5, 0.9), (0.6, 0.92), 34, study, 43)
    assert f"it lies {where} this build's interval" in text
    assert "also a correlation of cell means and compares with this figure only" in text
    assert "corruptions' strength, not about which model is robust" in text
    assert "cannot tell the two apart" not in text
    assert ("does not make the two settings alike" in text) == (where == "inside")


def test_between_says_what_the_images_add():
    wider = corruption.describe_between_cells(0.8, (0.6, 0.9), (0.7, 0.9), 30, 0.63, 43)
    assert "the images widen it from 0.200 to 0.300" in wider
    narrower = corruption.describe_between_cells(0.8, (0.7, 0.9), (0.6, 0.9), 30, 0.63, 43)
    assert "the images narrow it from 0.300 to 0.200" in narrower
    same = corruption.describe_between_cells(0.8, (0.7, 0.9), (0.7, 0.9), 30, 0.63, 43)
    assert "the images leave its width at 0.200" in same


@given(r=ends, bias=st.floats(-0.2, 0.2), se=st.floats(0, 0.05))
def test_image_noise_is_judged_against_monte_carlo_error(r, bias, se):
    text = corruption.describe_image_noise(r, bias, se)
    if abs(bias) <= 2 * se or r == 0:
        assert "no measurable dilution" in text
    elif math.copysign(1, bias) != math.copysign(1, r):
        assert "towards zero" in text
    else:
        assert "away from zero" in text


def _lessons(within=(0.520, 0.331, 0.604), within_fixed=(0.378, 0.622), between=(0.883, 0.687, 0.950),
             between_fixed=(0.741, 0.950), simulated=True):
    return corruption.corruption_lessons(between, between_fixed, within, within_fixed, 34, study_r=0.63,
                                         study_cells=43, simulated=simulated)


def test_lessons_separate_the_design_from_the_world():
    lessons = _lessons()
    assert [lesson.scope for lesson in lessons] == ["design", "design", "world", "world"]
    assert "the between-cell r (0.883) is higher than the mean within-cell r (0.520), by 0.363" in lessons[0].text
    assert "widens the interval of the mean within-cell r from 0.244 to 0.273 and that of the between-cell r from " \
           "0.209 to 0.263" in lessons[1].text
    assert "at most a partial guide" in lessons[2].text and "simulated world" in lessons[2].text
    assert "strong to very strong positive" in lessons[3].text
    assert lessons[3].study == "r = 0.63 over 43 cells, a correlation of cell means too."


def test_lessons_follow_the_within_cell_interval():
    assert "the data cannot tell" in _lessons(within=(0.1, -0.1, 0.3))[2].text
    assert "a close guide" in _lessons(within=(0.8, 0.72, 0.9))[2].text
    assert "tends to lose less calibration" in _lessons(within=(-0.4, -0.6, -0.2))[2].text
    assert "do not pin down" in _lessons(within=(0.6, 0.4, 0.8))[2].text
    lower = _lessons(within=(0.9, 0.8, 0.95), between=(0.5, 0.3, 0.7), between_fixed=(0.2, 0.8),
                     within_fixed=(0.7, 0.99))
    assert "is lower than the mean within-cell r" in lower[0].text
    assert "does not widen either interval" in lower[1].text


def test_own_data_lessons_name_no_simulation():
    for lesson in _lessons(simulated=False):
        if lesson.scope == "world":
            assert "this run's own data" in lesson.text
            assert "simulated" not in lesson.text and "phantom" not in lesson.text


PAGE = {"between_r": 0.883, "between_low": 0.687, "between_high": 0.950, "within_r": 0.520,
        "within_low": 0.331, "within_high": 0.604, "n_below": 6}


def test_clip_exercise_judges_each_change_against_the_page_interval():
    within_moves = corruption.describe_clip_change(PAGE, 0.877, 0.596, 3, 34)
    assert "a change of -0.006, negligible beside the half-width" in within_moves
    assert "+0.076, moderate beside the half-width 0.136" in within_moves
    assert "moves the within-cell r more than the between-cell r" in within_moves
    assert "pull a within-cell r down" in within_moves
    between_moves = corruption.describe_clip_change(PAGE, 0.70, 0.52, 6, 34)
    assert "-0.183, large beside the half-width" in between_moves
    assert "moves the between-cell r at least as much" in between_moves


def test_draws_exercise_scales_the_page_monte_carlo_error():
    summary = pd.DataFrame({"statistic": ["between-cell r"] * 2, "images": ["resampled", "fixed"],
                            "estimate": 0.88, "ci_low": [0.687, 0.741], "ci_high": [0.95, 0.95],
                            "mc_se": [0.0021, 0.0017], "n_draws": 1000})
    text = corruption.corruption_exercise_draws(summary)
    # sd = 0.0021 x sqrt(1000) = 0.0664; at 200 draws the mean moves 0.0047, an end 2.7 times as much.
    assert "(images resampled) moves by about 0.005 and each end of its 95 % interval by about 0.013" in text
    assert "the interval with the images resampled moves more (0.013 against 0.010)" in text
    fixed_wider = corruption.corruption_exercise_draws(summary.assign(mc_se=[0.0017, 0.0021]))
    assert "the interval with the images fixed moves more" in fixed_wider
    assert "At the page's 1000 draws the same end moves by about 0.006" in text


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="out of order"):
        corruption.describe_within_cells(0.4, (0.5, 0.3), 0.4, 1, 4, 10)
    with pytest.raises(ValueError, match="n_below"):
        corruption.describe_within_cells(0.4, (0.3, 0.5), 0.4, 5, 4, 10)
    with pytest.raises(ValueError, match="finite"):
        corruption.describe_within_cells(float("nan"), (0.3, 0.5), 0.4, 1, 4, 10)
    with pytest.raises(ValueError, match="mc_se"):
        corruption.describe_image_noise(0.4, 0.1, -1.0)
    with pytest.raises(ValueError, match="finite"):
        corruption.describe_between_cells(0.8, (0.6, float("inf")), (0.7, 0.9), 30, 0.63, 43)


@pytest.mark.parametrize(("interval", "answer"), [
    ((-0.296, 0.715), "Whether AUROC loss predicts calibration loss, the data cannot tell"),
    ((0.303, 0.592), "AUROC loss only partly predicts calibration loss"),
    ((0.75, 0.9), "AUROC loss closely predicts calibration loss"),
    ((-0.6, -0.2), "Encoders that lose more AUROC lose less calibration"),
    ((0.4, 0.8), "AUROC loss predicts calibration loss by an unpinned amount"),
])
def test_takeaway_answers_from_the_within_cell_interval(interval, answer):
    from crsbench_lib.report.takeaway import check_takeaway

    mean = sum(interval) / 2
    text = corruption.corruption_takeaway(mean, interval, 20, 0.836, 34)
    assert check_takeaway(text) == text and text.startswith(answer + ": within a cell, across its 20 encoders")
    assert f"mean r of {mean:.3f} (95 % interval [{interval[0]:.3f}, {interval[1]:.3f}]" in text
    assert "between-cell r of 0.836 over 34 cells says how strong the corruptions are" in text
    # The takeaway and the within-cell sentence give the same verdict.
    long = corruption.describe_within_cells(mean, interval, mean, 0, 34, 20)
    assert long.startswith(corruption._WITHIN_HEADS[corruption.within_case(*interval)].format(n=20))


def test_takeaway_refuses_an_interval_out_of_order():
    with pytest.raises(ValueError):
        corruption.corruption_takeaway(0.3, (0.5, 0.1), 6, 0.6, 9)
