"""The calibration and corruption sentences follow their intervals."""

from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report import grammar
from crsbench_lib.report.sentences import stress

values = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


@given(before=positive, after=positive, low=values, width=st.floats(min_value=0, max_value=100, allow_nan=False))
def test_excess_verdict_helps_only_when_the_interval_lies_below_zero(before, after, low, width):
    high = low + width
    text = stress.describe_excess_verdict("temperature", before, after, (low, high))
    helps = high < 0
    assert text.startswith("temperature helps:") == helps
    assert ("does not help" in text) == (not helps)
    assert ("makes calibration worse" in text) == (low > 0)
    # The change itself is still described by its own numbers.
    assert ("rose" in text) == (after > before and abs(after - before) / before >= grammar.NEGLIGIBLE_RELATIVE)


def test_excess_verdict_says_plainly_when_calibration_does_not_help():
    text = stress.describe_excess_verdict("isotonic", 0.010, 0.014, (0.001, 0.007))
    assert text.startswith("isotonic does not help, it makes calibration worse: the mean ECE excess over its floor rose")
    assert "cut" not in text and "fell" not in text


def test_robustness_faces_follow_the_interval_of_r():
    from crsbench_lib.report.sentences.stress import describe_robustness_faces


    assert "largely move together" in describe_robustness_faces(0.84, (0.72, 0.91))
    partly = describe_robustness_faces(0.4, (0.1, 0.65), level=0.9)
    assert partly.startswith("r² = 0.16: across cells, the AUROC loss accounts for 16 % of the variance")
    assert "the whole 90 % interval of r [0.10, 0.65] lies below 0.7, so on this cohort they are at most partly aligned" in partly
    assert "straddles 0.7, so these cells do not pin down" in describe_robustness_faces(0.7, (0.4, 0.9))


@given(before=positive, after=positive, floor=st.floats(min_value=1e-3, max_value=1.0))
def test_excess_verdict_size_is_judged_against_the_floor(before, after, floor):
    text = stress.describe_excess_verdict("temperature", before, after, (-1.0, 1.0), floor=floor)
    if abs(after - before) / before < grammar.NEGLIGIBLE_RELATIVE:
        return
    # "large" only when the change reaches the floor itself, whatever share of the excess it is.
    assert ("a large" in text) == (abs(after - before) >= floor)
    assert "beside it" in text


def test_a_fall_of_a_quarter_of_the_floor_is_small():
    # Regression (issue 27): "a large improvement" for a 0.006 change beside a 0.023 floor.
    text = stress.describe_excess_verdict("temperature", 0.0162, 0.0102, (-0.012, -0.001), floor=0.023)
    assert text.startswith("temperature helps:") and "large" not in text
    assert "the fall of 0.006 is 0.26 times the mean ECE floor of 0.023, a small improvement beside it" in text


def test_robustness_faces_interval_keeps_its_sign():
    from crsbench_lib.report.sentences.stress import describe_robustness_faces

    assert "[-0.004, 0.650]" in describe_robustness_faces(0.3, (-0.004, 0.65))


@given(n_probes=st.integers(1, 500), data=st.data())
def test_grid_edge_sentence_follows_the_share(n_probes, data):
    from crsbench_lib.scoring.probe_grid import EdgeShare

    n_low = data.draw(st.integers(0, n_probes))
    n_high = data.draw(st.integers(0, n_probes - n_low))
    share = EdgeShare(n_probes, n_low, n_high, (0.01, 1.0, 100.0))
    text = stress.describe_grid_edges(share)
    if n_low + n_high == 0:
        assert text.startswith(f"None of the {n_probes}")
    else:
        assert f"{n_low + n_high} ({grammar.percent(share.share)})" in text
        assert ("at most one probe in ten" in text) == (share.share <= stress.EDGE_SHARE_READABLE)
        assert ("partly measures where the grid ends" in text) == (share.share > stress.EDGE_SHARE_READABLE)
    assert "this build's world" in text


def test_grid_edge_sentence_without_probes():
    from crsbench_lib.scoring.probe_grid import EdgeShare

    assert "No clean full-label probe" in stress.describe_grid_edges(EdgeShare(0, 0, 0, (0.1, 1.0)))


def test_grid_edge_sentence_for_a_fixed_c():
    from crsbench_lib.scoring.probe_grid import EdgeShare

    text = stress.describe_grid_edges(EdgeShare(30, 0, 0, (1.0,)))
    assert text.startswith("The profile fixes every probe's C at 1,") and "edge" not in text.split(",")[0]
