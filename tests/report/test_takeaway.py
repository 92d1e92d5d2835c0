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


@pytest.fixture(autouse=True)
def _no_misfit():
    # The misfit state belongs to the page being executed; a test starts and ends without one.
    takeaway.withhold_findings("", ())
    yield
    takeaway.withhold_findings("", ())


def test_glue_stores_the_checked_text(monkeypatch):
    glued = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: glued.update({key: (value, display)}))
    assert takeaway.glue_takeaway("zoo", " 3 of 9 encoders. ") == "3 of 9 encoders."
    value, display = glued["takeaway-zoo"]
    assert value.data == "3 of 9 encoders." and display is False


def test_a_page_whose_standard_does_not_fit_states_no_finding(monkeypatch):
    glued = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: glued.update({key: value}))
    takeaway.withhold_findings("crs-default-v5", ("on axis C every encoder is worse than every panel member",))
    text = takeaway.glue_takeaway("agreement", "AUROC and CRS order the 9 candidates alike.1")
    assert text.startswith("No finding on this page") and "crs-default-v5 (1 problem," in text
    assert glued["takeaway-agreement"].data == text
    takeaway.withhold_findings("crs-default-v5", ())
    assert takeaway.glue_takeaway("agreement", "3 of 9 encoders.") == "3 of 9 encoders."


def test_findings_show_the_text_on_a_page_that_fits_and_one_line_on_a_misfit():
    """Under a misfit banner no paragraph states a finding: one line says it is withheld, and why (issue 30)."""
    text = "The tier holds 3 of 9 candidates; **P(rank 1)** of the leader is 0.62."
    shown = takeaway.findings(text)
    assert shown.data == text == takeaway.finding_text(text)
    takeaway.withhold_findings("crs-default-v5", ("on axis C every encoder is worse than every panel member",
                                                  "on axis L every encoder is beyond the best anchor"))
    withheld = takeaway.findings(text).data
    assert withheld == takeaway.withheld_finding("crs-default-v5", 2) == takeaway.finding_text(text)
    assert withheld.startswith("Finding withheld") and "crs-default-v5 (2 problems, listed at the top)" in withheld
    assert "0.62" not in withheld and "\n" not in withheld  # one line, none of the paragraph's numbers
    takeaway.withhold_findings("crs-default-v5", ())
    assert takeaway.findings(text).data == text  # the next page, which fits, shows its findings again


from hypothesis import given, settings
from hypothesis import strategies as st

from crsbench_lib.report.takeaway import LONGEST_PARAGRAPH, PARAGRAPH_AIM, short_paragraphs

_WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
_SENTENCE = st.lists(_WORD, min_size=1, max_size=25).map(lambda w: " ".join(["Word", *w]) + ".")


@settings(max_examples=200, deadline=None)
@given(st.lists(_SENTENCE, min_size=1, max_size=40))
def test_short_paragraphs_keep_every_word_and_break_only_long_ones(sentences):
    text = " ".join(sentences)
    out = short_paragraphs(text)
    assert out.split() == text.split()  # the same words in the same order
    parts = out.split("\n\n")
    if len(text.split()) <= LONGEST_PARAGRAPH:
        assert out == text
        return
    # Each paragraph stays near the aim: a sentence is never cut, so one may carry the paragraph past it.
    longest_sentence = max(len(s.split()) for s in sentences)
    assert len(parts) > 1 and all(len(p.split()) <= PARAGRAPH_AIM + longest_sentence for p in parts)


def test_short_paragraphs_keep_lists_tables_and_abbreviations():
    listed = "\n".join(f"- item {k} " + "word " * 20 for k in range(10))
    assert short_paragraphs(listed) == listed
    bold = "**In this build** " + " ".join(["A sentence of exactly seven words here."] * 30)
    assert len(short_paragraphs(bold).split("\n\n")) > 1  # bold opening words are prose, not a list item
    citing = " ".join(["Calibration after Kumar et al. Kumar showed it, e.g. Figure 2 vs. AUROC."] * 20)
    for part in short_paragraphs(citing).split("\n\n"):
        assert not part.startswith(("Kumar showed", "Figure 2", "AUROC."))
