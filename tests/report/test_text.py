"""A chapter's words as text (report.text): every branch renders from edge facts, and the guards refuse contradictions."""

import dataclasses
import json
import itertools
import shutil

import nbformat
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report import text
from crsbench_lib.report.takeaway import MAX_WORDS
from crsbench_lib.scoring.retest import noise_baseline_table
from crsbench_lib.scoring.transfer import TransferFacts, TransferSummary, transfer_facts

VERDICTS = ("unchanged", "inside", "above", "below", "between", "none")
#: Top sets that cover: the same, one swapped, all different, a shorter adapted set, none.
TOPS = [(("a", "b", "c"), ("a", "b", "c")), (("a", "b", "c"), ("a", "b", "d")), (("a", "b", "c"), ("d", "e", "f")),
        (("a", "b", "c"), ("a", "b")), ((), ())]


def _facts(verdict="inside", tau=0.944, reversed_pairs=1, n=9, tops=TOPS[0]) -> TransferFacts:
    frozen, adapted = tops
    return TransferFacts(
        n_encoders=n, tau_b=tau, reversed_pairs=reversed_pairs, n_pairs=n * (n - 1) // 2, verdict=verdict,
        top_k=max(len(frozen), len(adapted)), top_frozen=frozen, top_adapted=adapted,
        shared=tuple(x for x in frozen if x in adapted), leaving=tuple(x for x in frozen if x not in adapted),
        entering=tuple(x for x in adapted if x not in frozen))


@pytest.mark.parametrize("verdict, tops", list(itertools.product(VERDICTS, TOPS)))
def test_every_branch_of_the_transfer_takeaway_renders_and_says_what_its_facts_say(verdict, tops):
    facts = _facts(verdict, tau=1.0 if verdict == "unchanged" else 0.7, reversed_pairs=0 if verdict == "unchanged" else 5,
                   tops=tops)
    out = text.render("transfer", "takeaway", facts)
    assert len(out.split()) <= MAX_WORDS and "  " not in out and "\n" not in out
    expected = {"unchanged": "survives adaptation unchanged", "inside": "lies within the agreement",
                "above": "lies above the agreement", "below": "does not survive adaptation intact",
                "between": "partly survives adaptation", "none": "no bootstrap draws"}[verdict]
    assert expected in out
    assert ("0 swapped pairs of 36" if verdict == "unchanged" else "5 swapped pairs of 36") in out
    frozen, adapted = tops
    if not frozen:
        assert "top-" not in out
    elif frozen == adapted:
        assert out.endswith(f"The top-3 sets are the same 3 encoders ({', '.join(frozen)}).")
    else:
        assert "sets are the same" not in out and "sets share" in out
        assert all(name in out.split("sets share", 1)[1] for name in set(frozen) ^ set(adapted))


def test_one_pair_is_singular_and_the_facts_record_reads_the_noise_table():
    noise = noise_baseline_table({"f vs a": 0.944}, {}, {"frozen": np.linspace(0.8, 1, 101)})
    summary = TransferSummary(0.944, 1, 0.01, 2, ("a", "b"), ("b", "a"), 2, 9, 0.005)
    facts = transfer_facts(summary, noise)
    assert facts.verdict == "inside" and facts.n_pairs == 36 and facts.shared == ("a", "b")
    assert text.render("transfer", "takeaway", facts) == (
        "The frozen CRS ranking of the 9 candidates survives adaptation: frozen against adapted τ_b 0.944 "
        "(1 swapped pair of 36) lies within the agreement of two bootstrap draws of one ranking. "
        "The top-2 sets are the same 2 encoders (a, b).")
    assert transfer_facts(summary, pd.DataFrame()).verdict == "none"
    assert transfer_facts(dataclasses.replace(summary, kendall_tau=1.0, reversed_pairs=0), noise).verdict == "unchanged"


@pytest.fixture()
def text_copy(tmp_path):
    shutil.copy(text.text_path("transfer"), tmp_path / "transfer.md")
    return tmp_path


def _edit(folder, old, new):
    path = folder / "transfer.md"
    source = path.read_text(encoding="utf-8")
    assert old in source
    path.write_text(source.replace(old, new, 1), encoding="utf-8")


def test_a_lecturers_new_wording_renders_without_python(text_copy, monkeypatch):
    _edit(text_copy, "lies within the agreement of two bootstrap draws of one ranking.",
          "is as close as two re-measurements of one ranking get.")
    monkeypatch.setenv(text.TEXT_DIR_VARIABLE, str(text_copy))
    out = text.render("transfer", "takeaway", _facts("inside"))
    assert "is as close as two re-measurements of one ranking get." in out


def test_words_moved_into_the_wrong_branch_stop_the_render(text_copy):
    # "survives adaptation unchanged" said for a ranking whose tau_b lies below its noise: a contradiction.
    _edit(text_copy, "does not survive adaptation intact:", "survives adaptation unchanged:")
    with pytest.raises(text.TextError, match=r"transfer\.md: piece 'takeaway' says 'survives adaptation unchanged', "
                                             r"but verdict == \"unchanged\" is false"):
        text.render("transfer", "takeaway", _facts("below"), folder=text_copy)
    # The other branches still render: the guard judges the words against the facts of this render.
    assert "unchanged" in text.render("transfer", "takeaway", _facts("unchanged", tau=1.0, reversed_pairs=0),
                                      folder=text_copy)


def test_a_takeaway_edited_past_sixty_words_or_without_a_number_is_refused(text_copy):
    _edit(text_copy, "whatever the noise.", "whatever the noise" + " and so on" * 30 + ".")
    with pytest.raises(text.TextError, match="at most 60 words"):
        text.render("transfer", "takeaway", _facts("unchanged", tau=1.0, reversed_pairs=0), folder=text_copy)


def test_an_unknown_fact_is_named_in_one_line(text_copy):
    _edit(text_copy, "{{ n_encoders }} candidates", "{{ n_candidates }} candidates")
    with pytest.raises(text.TextError) as caught:
        text.render("transfer", "takeaway", _facts(), folder=text_copy)
    message = str(caught.value)
    assert "'n_candidates' is undefined" in message and "n_encoders" in message and "\n" not in message


@pytest.mark.parametrize("source, problem", [
    ("no front matter\n{% block takeaway %}x 1{% endblock %}\n", "starts with front matter"),
    ("---\npieces: [\n---\n{% block takeaway %}x 1{% endblock %}\n", "not YAML"),
    ("---\npieces:\n  takeaway: {kind: takeaway}\n---\n{% block other %}x 1{% endblock %}\n", "not declared"),
    ("---\npieces:\n  takeaway: {kind: takeaway}\n  extra: {}\n---\n{% block takeaway %}x 1{% endblock %}\n",
     "piece 'extra' has no block"),
    ("---\npieces:\n  takeaway: {kind: poem}\n---\n{% block takeaway %}x 1{% endblock %}\n", "kind must be one of"),
    ("---\npieces:\n  takeaway: {claims: [{words: x}]}\n---\n{% block takeaway %}x 1{% endblock %}\n",
     "needs 'words' and 'only_if'"),
    ("---\npieces:\n  takeaway: {}\n---\n\n{% block takeaway %}{% if %}{% endblock %}\n", "demo.md:6:"),
])
def test_a_malformed_text_file_says_what_is_wrong_in_one_line(tmp_path, source, problem):
    (tmp_path / "demo.md").write_text(source, encoding="utf-8")
    with pytest.raises(text.TextError, match=problem) as caught:
        text.render("demo", "takeaway", {}, folder=tmp_path)
    assert "\n" not in str(caught.value)


def test_unknown_chapter_piece_and_facts_type(tmp_path):
    with pytest.raises(text.TextError, match="no text file"):
        text.render("nothing_here", "takeaway", {}, folder=tmp_path)
    with pytest.raises(text.TextError, match="no piece 'summary'"):
        text.render("transfer", "summary", _facts())
    with pytest.raises(text.TextError, match="dataclass record or a mapping"):
        text.render("transfer", "takeaway", 3)
    with pytest.raises(text.TextError, match="notebook name"):
        text.text_path("../etc")


@given(st.lists(st.sampled_from(["a", "b.", " ", "\n", "\n\n", "(", ")", ",", text.PARAGRAPH]), max_size=40))
def test_folded_text_has_single_spaces_and_breaks_paragraphs_only_where_the_author_did(parts):
    out = text.fold_whitespace("".join(parts))
    assert "  " not in out and out == out.strip()
    assert " ." not in out and " ," not in out and " )" not in out and "( " not in out
    assert out.count("\n\n") <= parts.count(text.PARAGRAPH) and "\n\n\n" not in out and text.PARAGRAPH not in out


def test_the_chapter_cache_key_follows_its_text_file(text_copy, monkeypatch):
    from crsbench_lib.report.notebooks import available_notebooks, cache_key

    notebook = available_notebooks()["transfer"]
    before = cache_key(notebook, {"profile": "quick"}, code="x")
    monkeypatch.setenv(text.TEXT_DIR_VARIABLE, str(text_copy))
    assert cache_key(notebook, {"profile": "quick"}, code="x") == before  # the same words, the same key
    _edit(text_copy, "whatever the noise.", "whatever the noise, on these data.")
    assert cache_key(notebook, {"profile": "quick"}, code="x") != before


@pytest.mark.slow
def test_a_chapter_rebuilt_from_an_edited_text_file_shows_the_new_words(book_inputs, text_copy, monkeypatch, tmp_path):
    from crsbench_lib.report.notebooks import available_notebooks, execute_notebook, notebook_parameters

    new_words = "on this page's own numbers, which a lecturer reworded"
    source = (text_copy / "transfer.md").read_text(encoding="utf-8")
    (text_copy / "transfer.md").write_text(
        source.replace("{% block takeaway %}\n", "{% block takeaway %}\n" + new_words.capitalize() + ": ", 1),
        encoding="utf-8")
    monkeypatch.setenv(text.TEXT_DIR_VARIABLE, str(text_copy))
    declared = notebook_parameters(available_notebooks()["transfer"])
    params = {k: v for k, v in book_inputs.items() if k in declared}
    result = execute_notebook("transfer", params, tmp_path / "transfer.ipynb", cache=book_inputs["cache"])
    glued = [o for c in nbformat.read(result.output, as_version=4).cells if c.cell_type == "code"
             for o in c.get("outputs", []) if "takeaway-transfer" in str(o.get("metadata", {}))]
    assert glued and new_words.capitalize() in str(glued[0]["data"])


# --- the agreement chapter and the shared noise clause ---------------------------------------------------

def _noise_table(ranges, one_dose=False):
    draws = {name: np.linspace(low, high, 101) for name, (low, high) in ranges.items()}
    if one_dose:
        return noise_baseline_table({"x": 0.9}, {}, draws, estimate_draw=draws)
    return noise_baseline_table({"x": 0.9}, {}, draws)


NOISE_CASES = {  # name -> (tau_b, table): one case per verdict, one and two rankings, one and two doses
    "none": (0.9, None),
    "inside one": (0.9, _noise_table({"the CRS ranking": (0.85, 0.95)})),
    "inside one of two": (0.9, _noise_table({"the CRS ranking": (0.85, 0.95), "the AUROC ranking": (0.93, 1.0)})),
    "inside both": (0.9, _noise_table({"the CRS ranking": (0.85, 0.95), "the AUROC ranking": (0.88, 1.0)})),
    "below": (0.6, _noise_table({"the CRS ranking": (0.85, 0.95)}, one_dose=True)),
    "above": (0.99, _noise_table({"the CRS ranking": (0.85, 0.95)})),
    "between": (0.8, _noise_table({"the CRS ranking": (0.85, 0.95), "the AUROC ranking": (0.5, 0.7)})),
}


@pytest.mark.parametrize("case, reversed_pairs, leaders", list(itertools.product(
    NOISE_CASES, (0, 3, 60), (("a", "a"), ("a", "b")))))
def test_every_branch_of_the_agreement_takeaway_renders_within_its_guards(case, reversed_pairs, leaders):
    from crsbench_lib.scoring.agreement import AgreementFacts
    from crsbench_lib.scoring.retest import noise_verdict

    tau, table = NOISE_CASES[case]
    if reversed_pairs == 0:
        tau = 1.0
    elif reversed_pairs == 60:
        tau = 0.1
    noise = noise_verdict(tau, table, 0.95)
    out = text.render("agreement", "takeaway", AgreementFacts(15, tau, reversed_pairs, 105, *leaders, noise))
    assert "\n" not in out and "  " not in out and "{" not in out
    assert ("identically" in out) == (reversed_pairs == 0)
    assert ("alike but for" in out) == (reversed_pairs == 3) and ("differently" in out) == (reversed_pairs == 60)
    assert ("Both put a first." in out) == (leaders[0] == leaders[1])
    verdict_words = {"inside": "could explain it|cannot tell", "below": "a reordering beyond noise",
                     "above": "no reordering beyond noise", "between": "only."}
    if noise.verdict in verdict_words and reversed_pairs:
        assert any(w in out for w in verdict_words[noise.verdict].split("|")), out
    if noise.verdict != "none" and reversed_pairs:
        assert "the central 95 % of τ_b" in out
        assert ("against the estimate" in out) == noise.one_dose


def test_a_shared_clause_edited_to_contradict_the_facts_is_caught_by_the_chapters_claims(tmp_path):
    for name in ("agreement.md", "_noise.md"):
        shutil.copy(text.text_path("agreement").parent / name, tmp_path / name)
    source = (tmp_path / "_noise.md").read_text(encoding="utf-8")
    # A lecturer swaps two conclusions in the shared file: "below" would now read "no reordering beyond noise".
    (tmp_path / "_noise.md").write_text(source.replace(": a reordering beyond noise.", ": no reordering beyond noise."),
                                        encoding="utf-8")
    from crsbench_lib.scoring.agreement import AgreementFacts
    from crsbench_lib.scoring.retest import noise_verdict

    tau, table = NOISE_CASES["below"]
    facts = AgreementFacts(15, tau, 20, 105, "a", "a", noise_verdict(tau, table, 0.95))
    with pytest.raises(text.TextError, match="says 'no reordering beyond noise', but noise.verdict == \"above\""):
        text.render("agreement", "takeaway", facts, folder=tmp_path)


def test_an_import_of_a_missing_shared_text_is_named(tmp_path):
    (tmp_path / "demo.md").write_text("---\npieces:\n  takeaway: {}\n---\n{% block takeaway %}"
                                      "{% from \"_gone.md\" import x %}{{ x() }} 1{% endblock %}\n", encoding="utf-8")
    with pytest.raises(text.TextError, match="imports '_gone.md'"):
        text.render("demo", "takeaway", {}, folder=tmp_path)


# --- what a team does with the finding: the action pieces ------------------------------------------------

def _leaders(leaders):
    from crsbench_lib.scoring.axes import AxisLeaderFacts

    return AxisLeaderFacts(12, leaders)


def _sensitivity(weights, loo, subsets):
    from crsbench_lib.scoring.sensitivity import SensitivityFacts

    return SensitivityFacts(("a", "b", "c"), 1000, weights, loo, subsets)


def _insertion(fixed, cohort):
    from crsbench_lib.scoring.insertion import InsertionFacts

    return InsertionFacts(3, 9, fixed, cohort, 1, 36)


def _actions():
    from crsbench_lib.scoring.agreement import AgreementFacts
    from crsbench_lib.scoring.retest import noise_verdict
    from crsbench_lib.scoring.selection_gate import GateFacts
    from crsbench_lib.scoring.tier import TierFacts

    none = noise_verdict(0.7, None, 0.95)
    many = tuple(f"candidate_{i}" for i in range(12))
    return [
        ("agreement", AgreementFacts(12, 0.7, 9, 66, "a", "b", none), "Before funding a for its AUROC"),
        ("agreement", AgreementFacts(12, 0.7, 9, 66, "a", "a", none), "9 of 66 pairs reverse"),
        ("agreement", AgreementFacts(12, 1.0, 0, 66, "a", "a", none), "would have chosen as the CRS does"),
        ("leading_tier", TierFacts(12, ("a",)), "a is the candidate to fund"),
        ("leading_tier", TierFacts(12, many), "take all of them (candidate_0,"),
        ("selection_gate", GateFacts(12, ("a", "b"), ("a", "b"), ("a", "b"), ("C <= 0.05",), ("D >= 0.8",), ()),
         "Take the 2 advancing candidates"),
        ("selection_gate", GateFacts(12, ("a",), ("a",), ("a",), (), ("D",), ("cnn_random", "cnn_random_l")),
         "cnn_random and cnn_random_l, with no pretraining, clear every threshold"),
        ("selection_gate", GateFacts(12, (), ("a",), (), ("C <= 0.05", "L >= 0.5"), ("D",), ()),
         "No candidate advances"),
        ("four_axes", _leaders({"D": "a", "C": "b", "L": "a", "R": "c"}), "here a leads discrimination, b calibration"),
        ("four_axes", _leaders({"D": "a", "C": "a", "L": "a", "R": "a"}), "a leads every axis here"),
        ("sensitivity", _sensitivity(0.17, 0.0, 0.13), "changes in 17 % of weight draws, 0 % of leave-one-out panels"),
        ("sensitivity", _sensitivity(0.0, 0.0, 0.0), "the default weights serve this choice"),
        ("insertion", _insertion(0.0, 0.208), "would have rewritten published scores by up to 0.208"),
        ("insertion", _insertion(0.0, 0.0), "without touching what was published."),
        ("insertion", _insertion(0.01, 0.2), "Stop and find out why"),
        *[("transfer", _facts(v), words) for v, words in
          (("inside", "can shortlist on the frozen ranking"), ("unchanged", "can shortlist on the frozen ranking"),
           ("below", "ranks after adapting"), ("between", "reads both arms"), ("none", "Rerun with bootstrap draws"))],
    ]


@pytest.mark.parametrize("chapter, facts, words", _actions())
def test_every_branch_of_every_action_renders_within_its_guards(chapter, facts, words):
    out = text.render(chapter, "action", facts)
    assert words in out, out
    assert len(out.split()) <= text_limits()["action"] and "{" not in out


def text_limits():
    from crsbench_lib.report.takeaway import MAX_ACTION_WORDS

    return {"action": MAX_ACTION_WORDS}


def test_an_action_that_names_idle_thresholds_only_when_some_are_idle(tmp_path):
    from crsbench_lib.scoring.selection_gate import GateFacts

    source = text.text_path("selection_gate").read_text(encoding="utf-8")
    edited = source.replace("fixed before looking.\n{% else %}", "fixed before looking; the rest stopped no candidate.\n"
                                                                  "{% else %}", 1)
    assert edited != source
    (tmp_path / "selection_gate.md").write_text(edited, encoding="utf-8")
    facts = GateFacts(12, ("a",), ("a",), ("a",), (), ("D >= 0.8",), ())
    with pytest.raises(text.TextError, match="says 'stopped no candidate'"):
        text.render("selection_gate", "action", facts, folder=tmp_path)


def test_glue_action_withholds_the_action_on_a_misfit_page(monkeypatch):
    from crsbench_lib.report import takeaway

    glued = {}
    monkeypatch.setattr("myst_nb.glue", lambda key, value, display=False: glued.update({key: value.data}))
    assert takeaway.glue_action("transfer", "Shortlist on the frozen ranking.") == "Shortlist on the frozen ranking."
    assert glued["action-transfer"] == f"**{takeaway.ACTION_LEAD}** Shortlist on the frozen ranking."
    takeaway.withhold_findings("crs-x", ("a problem",))
    try:
        assert takeaway.glue_action("transfer", "Shortlist.").startswith("None: this page states no finding")
    finally:
        takeaway.withhold_findings("", ())
    with pytest.raises(ValueError, match="at most 50 words"):
        takeaway.glue_action("transfer", "word " * 51)


def test_every_chapter_with_an_action_piece_glues_it_into_its_takeaway_box():
    from crsbench_lib.paths import project_root

    for path in sorted(text.text_dir().glob("[a-z]*.md")):
        if "action" not in text.load_text(path.stem).pieces:
            continue
        cells = json.loads((project_root() / "notebooks" / f"{path.stem}.ipynb").read_text(encoding="utf-8"))["cells"]
        sources = ["".join(c["source"]) for c in cells]
        assert any(f"{{glue:md}} action-{path.stem}" in s and "{admonition} Key takeaway" in s for s in sources), path.stem
        assert any(f'glue_action("{path.stem}", render("{path.stem}", "action",' in s for s in sources), path.stem
