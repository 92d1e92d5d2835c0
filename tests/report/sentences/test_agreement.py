"""The agreement and anchor-sweep sentences follow tau, the reversed pairs and the top set."""

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import agreement

unit = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(tau=unit, reversed_pairs=st.integers(0, 45))
def test_describe_agreement_never_calls_disagreement_agreement(tau, reversed_pairs):
    text = agreement.describe_agreement(tau, reversed_pairs=reversed_pairs, n_pairs=45, study_tau=0.5)
    if reversed_pairs == 0:
        assert "agree on every choice" in text
    else:
        assert f"{reversed_pairs} of 45 pairwise decisions" in text
        assert "every choice" not in text
    assert "the study's (0.500)" in text


def test_describe_agreement_with_p_and_interval():
    text = agreement.describe_agreement(0.62, interval=(0.3, 0.85), p=0.0004)
    assert "strong positive" in text and "excludes zero" in text and "p < 0.001" in text


def test_describe_anchor_sweep_names_ranges_and_changes() -> None:
    import pandas as pd


    from crsbench_lib.report.sentences.agreement import describe_anchor_sweep


    rows = [
        ("D", 0.5, True, 0.4, "a, b, c", False),
        ("D", 0.7, False, 0.6, "a, b, c", False),
        ("R", 0.1, False, -0.1, "d, b, c", True),
        ("R", 0.2, True, 0.4, "a, b, c", False),
    ]
    sweep = pd.DataFrame(rows, columns=["axis", "worst", "is_default", "tau_auroc_crs", "top_k", "top_k_changed"])
    text = describe_anchor_sweep(sweep)
    assert ("Worst D anchor at 0.5 and 0.7 (the standard's: 0.5): AUROC-CRS Kendall τ_b 0.400 and 0.600 respectively; "
            "the top set stays the same") in text
    # tau falls as the anchor rises here: the sentence pairs each tau with its anchor, not min with max.
    falling = sweep.assign(tau_auroc_crs=[0.9, 0.3, 0.1, 0.2])
    assert "at 0.5 and 0.7 (the standard's: 0.5): AUROC-CRS Kendall τ_b 0.900 and 0.300" in describe_anchor_sweep(falling)
    assert "Worst R anchor at 0.1 and 0.2" in text and "τ_b -0.100 and 0.400" in text
    assert "changes at 0.1 (d, b, c)" in text
    assert describe_anchor_sweep(sweep.iloc[:0]) == "No anchor was varied."
    assert "crs-x-v1" in describe_anchor_sweep(None, standard_version="crs-x-v1")


def test_describe_floor_axis_counts_each_candidates_lowest_axis() -> None:
    import pandas as pd

    from crsbench_lib.report.sentences.agreement import describe_floor_axis

    rows = [(0.7, 0.8, 0.85, 0.82, 0.69), (0.69, 0.9, 0.8, 0.75, 0.70), (0.6, 0.5, 0.7, 0.8, 0.55),
            (0.4, 0.4, 0.9, 0.9, 0.45)]  # the last ties D and C
    scores = pd.DataFrame(rows, columns=["s_D", "s_C", "s_L", "s_R", "crs"])
    text = describe_floor_axis(scores, 0.3, simulated=True)
    assert "is discrimination (D) for 3 of 4 candidates and calibration (C) for 2." in text
    assert "(30 % of the CRS)" in text and "this build's simulated world" in text
    assert "explains" in text  # four candidates, both columns vary
    # Two candidates: no variance share is claimed.
    assert "explains" not in describe_floor_axis(scores.iloc[:2], 0.3)
    assert describe_floor_axis(scores.iloc[:0], 0.3).startswith("No candidate")
    with pytest.raises(ValueError, match="missing column 's_R'"):
        describe_floor_axis(scores.drop(columns="s_R"), 0.3)


@given(st.lists(st.tuples(*[st.floats(0, 1)] * 5), min_size=1, max_size=12))
def test_describe_floor_axis_names_every_candidates_floor(rows) -> None:
    import re

    import pandas as pd

    from crsbench_lib.report.sentences.agreement import describe_floor_axis

    scores = pd.DataFrame(rows, columns=["s_D", "s_C", "s_L", "s_R", "crs"])
    text = describe_floor_axis(scores, 0.3)
    counts = [int(c) for c in re.findall(r"\) for (\d+)", text)]
    # Every candidate has at least one lowest axis, and no axis is the floor of more candidates than there are.
    assert sum(counts) >= len(rows) and max(counts) <= len(rows)
