"""The grammar's words say what their numbers say, for numbers of both signs and every size."""

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report import grammar

values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(before=positive, after=positive, better=st.sampled_from(["lower", "higher"]))
def test_describe_change_direction_and_verdict_follow_the_numbers(before, after, better):
    text = grammar.describe_change(before, after, "the mean ECE", better=better)
    relative = (after - before) / before
    if abs(relative) < grammar.NEGLIGIBLE_RELATIVE:
        assert "essentially unchanged" in text
        assert "rose" not in text and "fell" not in text
        return
    assert ("rose" in text) == (after > before)
    assert ("fell" in text) == (after < before)
    improved = (after < before) == (better == "lower")
    assert ("improvement" in text) == improved
    assert ("deterioration" in text) == (not improved)
    # The percentage shown is the size of the change, unsigned (no "cut by -8 %").
    shown = re.search(r"by (\d+) %", text)
    assert shown is not None and int(shown.group(1)) == round(abs(relative) * 100)
    assert "-" not in shown.group(0)


def test_a_rise_in_ece_is_never_called_a_cut():
    text = grammar.describe_change(0.10, 0.108, "the mean ECE", better="lower")
    assert text == "The mean ECE rose from 0.100 to 0.108 (by 8 %, a small deterioration)."
    assert "cut" not in text and "fell" not in text


def test_describe_change_from_zero_and_with_an_interval():
    text = grammar.describe_change(0.0, 0.05, "the AUROC loss")
    assert "rose" in text and "deterioration" in text
    assert "excludes zero" in grammar.describe_change(0.2, 0.1, "ECE", interval=(-0.12, -0.08))
    assert "includes zero" in grammar.describe_change(0.2, 0.1, "ECE", interval=(-0.12, 0.01))


@given(low=values, width=st.floats(min_value=0, max_value=100, allow_nan=False))
def test_describe_interval_says_excludes_zero_exactly_when_it_does(low, width):
    high = low + width
    text = grammar.describe_interval(low, high)
    excludes = low > 0 or high < 0
    assert ("excludes zero" in text) == excludes
    assert ("includes zero" in text) == (not excludes)
    assert grammar.interval_excludes_zero(low, high) == excludes


def test_describe_interval_rejects_reversed_ends():
    with pytest.raises(ValueError, match="out of order"):
        grammar.describe_interval(0.2, 0.1)


@given(changes=st.lists(st.floats(min_value=-0.99, max_value=3.0, allow_nan=False), min_size=1, max_size=12),
       better=st.sampled_from(["lower", "higher"]))
def test_describe_relative_changes_counts_each_direction(changes, better):
    text = grammar.describe_relative_changes(changes, "the mean ECE", better=better)
    moved = [c for c in changes if abs(c) >= grammar.NEGLIGIBLE_RELATIVE]
    good = [c for c in moved if (c < 0) == (better == "lower")]
    bad = [c for c in moved if (c < 0) != (better == "lower")]
    if good:
        assert f"improved in {len(good)} of {len(changes)}" in text
    else:
        assert "improved" not in text
    if bad:
        assert f"deteriorated in {len(bad)}" in text
    else:
        assert "deteriorated" not in text
    assert not re.search(r"by -\d", text)


def test_describe_relative_changes_the_calibration_bug():
    # The old template said "cut the mean ECE by -43 % to 10 %" for these numbers.
    text = grammar.describe_relative_changes([-0.43, -0.10, 0.08], "the mean ECE", unit="groups")
    assert text == "The mean ECE improved in 2 of 3 groups (fell by 10 % to 43 %) and deteriorated in 1 (rose by 8 %)."


@given(value=unit)
def test_correlation_words_follow_sign_and_size(value):
    text = grammar.describe_correlation(value)
    word = grammar.correlation_word(value)
    if word == "no":
        assert "no association" in text
    else:
        assert f"a {word} {'positive' if value > 0 else 'negative'} association" in text
    assert ("positive" in text) == (value > 0 and word != "no")


@pytest.mark.parametrize("value, word", [(0.05, "no"), (0.2, "weak"), (-0.4, "moderate"), (0.6, "strong"), (-0.95, "very strong")])
def test_correlation_word_bands(value, word):
    assert grammar.correlation_word(value) == word


@given(ours=unit, study=unit)
def test_compare_with_study_direction(ours, study):
    text = grammar.compare_with_study(ours, study, "τ_b")
    if abs(ours - study) < grammar.CLOSE_CORRELATION:
        assert "close to" in text
    elif ours > study:
        assert "higher than" in text
    else:
        assert "lower than" in text


@pytest.mark.parametrize("p, text", [(0.0, "p < 0.001"), (0.0009, "p < 0.001"), (0.001, "p = 0.001"), (0.04567, "p = 0.046"), (0.0496, "p = 0.050"), (1.0, "p = 1.000")])
def test_format_p(p, text):
    assert grammar.format_p(p) == text


@pytest.mark.parametrize("bad", [-0.1, 1.2, float("nan")])
def test_format_p_rejects_non_probabilities(bad):
    with pytest.raises(ValueError):
        grammar.format_p(bad)


@given(share=st.floats(0, 1, allow_nan=False))
def test_describe_share(share):
    text = grammar.describe_share(share, "X happens")
    if share == 0:
        assert "none of the draws" in text
    elif share == 1:
        assert "every draw" in text
    else:
        assert "of draws" in text and "none" not in text and "every" not in text


@given(relative=values)
def test_size_word_is_monotone(relative):
    order = ["negligible", "small", "moderate", "large"]
    word = grammar.size_word(relative)
    assert word in order
    assert order.index(grammar.size_word(relative * 2)) >= order.index(word)


def test_counts_are_compared_without_decimals():
    assert grammar.compare_with_study(6, 15, "encoders") == "This build's encoders (6) is lower than the study's (15)."


def test_describe_difference_and_counts():
    assert "raises" in grammar.describe_difference(0.03, "Adaptation", "AUROC")
    assert "deterioration" in grammar.describe_difference(0.03, "Adaptation", "ECE", better="lower")
    assert "essentially unchanged" in grammar.describe_difference(0.0001, "Adaptation", "AUROC")
    assert grammar.describe_counts({"a": 1}, "encoders") == "1 a encoders."


def test_describe_interval_never_prints_a_nonzero_end_as_zero() -> None:
    from crsbench_lib.report.grammar import describe_interval


    assert describe_interval(-0.013, -0.0004) == "its 95 % interval [-0.0130, -0.0004] excludes zero"
    assert describe_interval(-0.02, 0.0) == "its 95 % interval [-0.020, 0.000] includes zero, so the data cannot tell the direction"
    assert "[-0.000000, 0.000000]" not in describe_interval(-1e-9, 1e-9)


@pytest.mark.parametrize("p, text", [(1 / 10000, "< 0.001"), (2 / 40320, "< 0.001"), (0.001, "0.001"), (0.3333, "0.333")])
def test_p_value_text_is_a_bound_below_the_floor(p, text):
    assert grammar.p_value_text(p) == text
    # Prose and tables write the same number.
    assert grammar.format_p(p).endswith(text)


def test_a_study_comparison_with_an_interval_states_both_and_judges_neither():
    # Issue 46, item 3: this build's interval measures this build's noise; the study's value is not judged by it.
    from crsbench_lib.report.grammar import compare_with_study, study_in_interval

    outside = compare_with_study(0.8, 0.5, "r", interval=(0.7, 0.9), level=0.9)
    assert outside == ("This build's r (0.800; 90 % interval [0.700, 0.900]) is higher than the study's (0.500); "
                       + grammar.OWN_NOISE_ONLY + ".")
    inside = compare_with_study(0.52, 0.5, "r", interval=(0.3, 0.7))
    assert inside.endswith("is close to the study's (0.500); " + grammar.OWN_NOISE_ONLY + ".")
    for text in (outside, inside, compare_with_study(0.6, 0.4, "r", interval=(0.39, 0.8)),
                 study_in_interval(0.2, (0.3, 0.5)), study_in_interval(0.4, (0.3, 0.5))):
        assert "lies inside" not in text and "lies outside" not in text
        assert "more than" not in text and "within this build's own sampling noise" not in text
    assert study_in_interval(0.2, (0.3, 0.5)) == (
        "The study's value is 0.200, beside this 95 % interval [0.300, 0.500]; " + grammar.OWN_NOISE_ONLY + ".")
    assert compare_with_study(0.778, 0.562, "τ_b (full panel)", interval=(0.7, 0.8)).startswith(
        "This build's τ_b (full panel), 0.778; 95 % interval [0.700, 0.800], is higher than")


def test_a_difference_with_an_interval_earns_a_verdict_only_when_it_excludes_zero():
    from crsbench_lib.report.grammar import describe_difference


    assert describe_difference(-0.0025, "isotonic", "the mean AUROC", digits=4, interval=(-0.0043, -0.0008)) == (
        "isotonic lowers the mean AUROC by 0.0025 on average (95 % interval [-0.0043, -0.0008]), a deterioration.")
    assert describe_difference(0.02, "x", "the ECE", better="lower", interval=(0.01, 0.03), level=0.9).endswith(
        "(90 % interval [0.010, 0.030]), a deterioration.")
    assert "neither a rise nor a fall" in describe_difference(0.0, "x", "y", interval=(-0.1, 0.1))


# --- issue 27, item 8: intervals keep their sign; no direction claimed inside an interval that holds zero;
# --- an interval of this build is its own noise only; size words judged against the measurement's noise.

ends = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False)


def _ends(text: str) -> tuple[float, float]:
    low, high = text.strip("[]").split(", ")
    return float(low), float(high)


@given(a=ends, b=ends, digits=st.integers(1, 4))
def test_format_interval_ends_keep_their_sign(a, b, digits):
    low, high = min(a, b), max(a, b)
    shown_low, shown_high = _ends(grammar.format_interval(low, high, digits))
    for value, shown in ((low, shown_low), (high, shown_high)):
        # A non-zero end never prints as zero, and never with the other sign.
        assert (shown > 0) == (value > 0) and (shown < 0) == (value < 0)
    # Whether the printed interval excludes zero is whether the interval does.
    assert grammar.interval_excludes_zero(shown_low, shown_high) == grammar.interval_excludes_zero(low, high)


def test_format_interval_is_the_one_way_intervals_are_written():
    assert grammar.format_interval(-0.0002, 0.0057) == "[-0.0002, 0.0057]"
    assert grammar.format_interval(-0.0002, 0.0057, digits=3) != "[0.000, 0.006]"
    assert grammar.format_interval(0.716, 0.909) == "[0.716, 0.909]"
    assert grammar.format_interval(-0.00003, 0.00036, digits=4) == "[-0.00003, 0.00036]"
    assert grammar.format_interval(0.0, 0.5) == "[0.000, 0.500]"
    assert grammar.format_interval(-1e-9, 1e-9) == "[-1.0e-09, 1.0e-09]"
    with pytest.raises(ValueError, match="out of order"):
        grammar.format_interval(0.2, 0.1)
    with pytest.raises(ValueError, match="finite"):
        grammar.format_interval(float("nan"), 0.1)
    # Every sentence that prints an interval prints it this way.
    assert "[-0.0002, 0.0057]" in grammar.describe_interval(-0.0002, 0.0057)
    assert "[-0.0002, 0.0057]" in grammar.describe_difference(0.003, "x", "y", interval=(-0.0002, 0.0057))
    assert "[-0.0002, 0.0057]" in grammar.compare_with_study(0.003, 0.5, "r", interval=(-0.0002, 0.0057))
    assert "[-0.0002, 0.0057]" in grammar.describe_correlation(0.003, interval=(-0.0002, 0.0057))


@given(delta=ends, a=ends, b=ends, better=st.sampled_from(["lower", "higher"]))
def test_describe_difference_claims_a_direction_only_when_its_interval_excludes_zero(delta, a, b, better):
    low, high = min(a, b), max(a, b)
    text = grammar.describe_difference(delta, "Adaptation", "the AUROC", better=better, interval=(low, high))
    claims = "raises" in text or "lowers" in text or "improvement" in text or "deterioration" in text
    if not grammar.interval_excludes_zero(low, high):
        assert not claims and "neither a rise nor a fall" in text
    elif (delta > 0 and low > 0) or (delta < 0 and high < 0):
        assert ("raises" in text) == (delta > 0) and ("lowers" in text) == (delta < 0)
    else:
        assert not claims and "not on its interval's side of zero" in text


def test_the_transfer_gain_sentence_no_longer_contradicts_itself():
    # Regression (issue 27): "raises ... by 0.003 ... no change is detectable" in one sentence.
    text = grammar.describe_difference(0.003, "Adaptation", "the mean clean AUROC", interval=(-0.0002, 0.0057))
    assert "raises" not in text and "no change is detectable" not in text
    assert "+0.003" in text and "[-0.0002, 0.0057]" in text and "from -0.0002 to +0.0057" in text


def test_a_study_beside_this_builds_interval_is_told_the_interval_measures_this_build_only():
    # Regression (issue 27): "the data cannot tell the two apart" for an interval that resamples this build alone.
    inside = grammar.compare_with_study(0.867, 0.562, "τ_b", interval=(0.556, 0.911))
    assert "cannot tell the two apart" not in inside and "own sampling noise" in inside
    assert "different encoders and data" in inside
    alone = grammar.study_in_interval(0.562, (0.556, 0.911))
    assert "cannot tell the two apart" not in alone and alone.endswith(grammar.OWN_NOISE_ONLY + ".")


@given(change=ends, noise=st.floats(min_value=1e-4, max_value=10.0))
def test_noise_size_word_is_large_only_from_the_noise_upwards(change, noise):
    word = grammar.noise_size_word(change, noise)
    order = ["negligible", "small", "moderate", "large"]
    assert (word == "large") == (abs(change) >= noise)
    assert order.index(grammar.noise_size_word(change * 2, noise)) >= order.index(word)


def test_noise_size_word_rejects_a_noise_that_is_not_positive():
    for noise in (0.0, -0.1, float("nan")):
        with pytest.raises(ValueError):
            grammar.noise_size_word(0.01, noise)


def test_a_change_a_quarter_of_the_floor_is_not_large():
    # Regression (issue 27): "a large improvement" for a 0.006 change beside a 0.023 floor.
    text = grammar.describe_change(0.016, 0.010, "the mean ECE excess", noise=0.023, noise_name="the ECE floor")
    assert "large" not in text and "a small improvement beside it" in text
    assert "0.26 times the ECE floor of 0.023" in text
    # Without the noise, the relative band still applies (and calls it large).
    assert "large" in grammar.describe_change(0.016, 0.010, "the mean ECE excess")
    assert "a large deterioration beside it" in grammar.describe_change(0.01, 0.04, "ECE", noise=0.023)


@given(st.integers(min_value=0, max_value=60))
def test_pair_count_counts_the_pairs(n):
    assert grammar.pair_count(n) == len(list(itertools.combinations(range(n), 2)))


@given(st.integers(min_value=1, max_value=10_000))
def test_ordinal_keeps_the_number_and_takes_one_english_suffix(k):
    word = grammar.ordinal(k)
    assert word[:-2] == str(k) and word[-2:] in {"st", "nd", "rd", "th"}
    # 11th, 12th, 13th (and 111th...) are the exceptions to 1st, 2nd, 3rd.
    assert (word[-2:] == "th") == (k % 10 not in (1, 2, 3) or k % 100 in (11, 12, 13))


@given(st.lists(st.floats(min_value=-1, max_value=1, allow_nan=False), min_size=1, max_size=8))
def test_value_range_never_writes_a_minus_after_to(values):
    text = grammar.value_range(values, 3)
    assert "to -" not in text
    assert grammar.fmt(min(values), 3) in text and grammar.fmt(max(values), 3) in text
