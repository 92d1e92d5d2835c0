"""A takeaway is short, states a number and is glued under its chapter's key."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report import takeaway


def test_key_names_the_chapter_and_refuses_a_path():
    assert takeaway.takeaway_key("leading_tier") == "takeaway-leading_tier"
    with pytest.raises(ValueError, match="notebook name"):
        takeaway.takeaway_key("../agreement")


@pytest.mark.parametrize("text, problem", [("", "empty"), ("   ", "empty"), ("No number here.", "number"),
                                           ("word " * 61 + "1", "at most 60 words")])
def test_refuses_what_is_not_a_takeaway(text, problem):
    with pytest.raises(ValueError, match=problem):
        takeaway.check_takeaway(text)


@given(st.integers(min_value=1, max_value=takeaway.MAX_WORDS - 1))
def test_accepts_any_short_text_with_a_number(n):
    text = " ".join(["word"] * n) + " 0.5"
    assert takeaway.check_takeaway(f"  {text}\n") == text


def test_glue_stores_the_checked_text(monkeypatch):
    glued = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: glued.update({key: (value, display)}))
    assert takeaway.glue_takeaway("zoo", " 3 of 9 encoders. ") == "3 of 9 encoders."
    value, display = glued["takeaway-zoo"]
    assert value.data == "3 of 9 encoders." and display is False
