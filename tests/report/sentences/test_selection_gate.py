"""The selection-gate sentences follow the gate's outcome and its thresholds."""

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.sentences import selection_gate


@given(failing=st.lists(st.integers(0, 5), min_size=1, max_size=4))
def test_describe_threshold_binding_says_which_thresholds_filter_nothing(failing):
    axes = ["D", "C", "L", "R"][: len(failing)]
    table = pd.DataFrame({"axis": axes, "rule": [f"{a} rule" for a in axes], "failing": failing,
                          "failing_alone": failing, "candidates": 5})
    text = selection_gate.describe_threshold_binding(table)
    for axis, count in zip(axes, failing, strict=True):
        if count:
            assert f"{axis} rule stops {count} of 5 candidates" in text
    idle = [a for a, c in zip(axes, failing, strict=True) if c == 0]
    if not any(failing):
        assert text.startswith("No threshold binds") and "filters nothing" in text
    elif idle:
        assert "bind" in text and "filter" in text and all(f"{a} rule" in text for a in idle)
    else:
        assert "nothing" not in text


def test_describe_selection_outcomes():
    none_clear = selection_gate.describe_selection([], ["a"], [], 5)
    assert "No encoder clears the gate" in none_clear
    assert selection_gate.describe_selection([], [], [], 0).startswith("0 of 0 candidates clear every threshold")
    # The point leader is always in the tier: an empty tier among candidates is a caller's error, not a finding.
    with pytest.raises(ValueError, match="the point leader is always a member"):
        selection_gate.describe_selection([], [], ["a"], 5)
    with pytest.raises(ValueError, match="'a' advances without being in the leading tier"):
        selection_gate.describe_selection(["a"], ["b"], ["a"], 5)
    mismatch = selection_gate.describe_selection([], ["b"], ["a"], 5)
    assert "both in the leading tier" in mismatch
    assert "the leading tier (95 % simultaneous coverage) is b." in mismatch
    assert "(90 % simultaneous coverage) is b and c." in selection_gate.describe_selection([], ["b", "c"], ["a"], 5,
                                                                                          level=0.9)
    good = selection_gate.describe_selection(["mae"], ["mae"], ["mae"], 5, untrained=["cnn_random"])
    assert good.endswith("mae advances for deployment evaluation.")
    assert "Caution" not in good
    # An untrained baseline advancing is never reported without comment.
    baseline = selection_gate.describe_selection(["cnn_random"], ["cnn_random"], ["cnn_random"], 5, untrained=["cnn_random"])
    assert "Caution: cnn_random has no pretraining" in baseline
    with_reference = selection_gate.describe_selection(["mae"], ["mae"], ["mae"], 5, references=["intask"])
    assert with_reference.endswith("intask is a reference, not a candidate: shown, never advanced.")
    assert "5 candidates" in with_reference
    with pytest.raises(ValueError, match="reference 'intask' cannot"):
        selection_gate.describe_selection(["intask"], ["intask"], ["intask"], 5, references=["intask"])
