"""The "Teaching with this book" page (``book/teaching.md``), read from its source (no book build).

* The table of contents names the page.
* It links every other page of the table of contents at least once with a
  ``{doc}`` role (a course plan that forgets a chapter is a plan with a hole).
* Every ``{ref}`` and ``{numref}`` label it uses is a target of the book: an
  exercise's ``:label:`` or a figure's ``:name:`` in a notebook, or a ``(label)=``
  target of a notebook's markdown cell or of a book page.
* Its two-week plan has between 8 and 12 sessions, numbered from 1, each with a
  time, and a section per session with its time, at least one exercise and a
  ``crsbench`` lab command.
* It has one handout per part of the book (the Reference part excepted), each
  printed on its own page, each referring with ``{numref}`` to a figure of a
  chapter of its part, with two or three takeaways and three discussion questions.
* It carries no decimal number: every number of a run changes with the build, so
  the page quotes none (the chapters compute them).

Each check is a function returning the problems it finds, tested on the real page
and on small broken inputs, so that a broken page fails here before a build does.
"""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from crsbench_lib.report.book import toc_pages

ROOT = Path(__file__).resolve().parents[2]
PAGE_NAME = "book/teaching"
PAGE = ROOT / f"{PAGE_NAME}.md"
TOC = ROOT / "book" / "_toc.yml"
MIN_SESSIONS, MAX_SESSIONS = 8, 12
#: Labels Sphinx itself defines (``{ref}`genindex```).
BUILTIN_LABELS = frozenset({"genindex", "modindex", "search"})

_ROLE = r"(?<!`)\{%s\}`(?P<body>[^`]+)`"
_EXPLICIT = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
_LABEL_OPTION = re.compile(r"^\s*:(?:label|name):\s*(?P<label>\S+)\s*$", re.M)
_TARGET_LINE = re.compile(r"^\((?P<label>[^()\s]+)\)=\s*$", re.M)
_DECIMAL = re.compile(r"(?<![\w.])\d*\.\d+(?![\w])")
_DURATION = re.compile(r"\b\d+\s*(?:min|minutes|h|hours)\b")
_SESSION_ROW = re.compile(r"^\|\s*(?P<n>\d+)\s*\|(?P<rest>.*)\|\s*$", re.M)
_SESSION_SECTION = re.compile(r"^### Session (?P<n>\d+)\b.*?(?=^### |^## |\Z)", re.M | re.S)
_HANDOUT = re.compile(r"^:::\{container\} crs-handout\s*$(?P<body>.*?)^:::\s*$", re.M | re.S)


def role_targets(text: str, role: str) -> list[str]:
    """The target of every ``{role}`` in a MyST text, in order (``{role}`text <target>``` gives ``target``).

    Examples
    --------
    >>> role_targets("See {doc}`../notebooks/a` and {doc}`the b <b>`.", "doc")
    ['../notebooks/a', 'b']
    """
    targets = []
    for match in re.finditer(_ROLE % re.escape(role), text):
        body = match.group("body").strip()
        explicit = _EXPLICIT.match(body)
        targets.append(explicit.group("target").strip() if explicit else body)
    return targets


def resolve_doc(target: str, page: str = PAGE_NAME) -> str:
    """A ``{doc}`` target as a table-of-contents page name (root-relative, no suffix).

    Examples
    --------
    >>> resolve_doc("../notebooks/agreement")
    'notebooks/agreement'
    >>> resolve_doc("method.md")
    'book/method'
    >>> resolve_doc("/notebooks/zoo")
    'notebooks/zoo'
    """
    name = re.sub(r"\.(md|ipynb)$", "", target)
    if name.startswith("/"):
        return posixpath.normpath(name.lstrip("/"))
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), name))


def unlinked_pages(text: str, pages: list[str], page: str = PAGE_NAME) -> list[str]:
    """The table-of-contents pages (other than ``page``) that ``text`` never links with ``{doc}``."""
    linked = {resolve_doc(t, page) for t in role_targets(text, "doc")}
    return [p for p in pages if p != page and p not in linked]


def source_labels(texts: list[str]) -> set[str]:
    """Every label that ``{ref}``/``{numref}`` can reach in MyST texts: ``:label:``, ``:name:`` and ``(label)=``.

    Examples
    --------
    >>> sorted(source_labels(["(sec-a)=\\n## A", "```{exercise}\\n:label: ex-1\\n```"]))
    ['ex-1', 'sec-a']
    """
    labels: set[str] = set()
    for text in texts:
        labels |= {m.group("label") for m in _LABEL_OPTION.finditer(text)}
        labels |= {m.group("label") for m in _TARGET_LINE.finditer(text)}
    return labels


def book_texts() -> dict[str, str]:
    """The MyST text of every book page and every notebook markdown cell, by file."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted((ROOT / "book").glob("*.md"))}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[str(path.relative_to(ROOT))] = "\n\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return texts


def unknown_labels(text: str, labels: set[str]) -> list[str]:
    """The ``{ref}`` and ``{numref}`` targets of ``text`` that no source defines."""
    used = role_targets(text, "ref") + role_targets(text, "numref")
    return sorted({label for label in used if label not in labels | BUILTIN_LABELS})


def plan_problems(text: str, minimum: int = MIN_SESSIONS, maximum: int = MAX_SESSIONS) -> list[str]:
    """What keeps the page's two-week plan from being complete (empty when it is).

    The plan is the table under the heading ``## A two-week module``: one row per
    session, numbered 1, 2, ..., each with a duration (``60 min``, ``2 h``); below
    it a ``### Session N`` section per session with a ``**Time:**`` line, at least
    one ``{ref}`` (an exercise) and a ``crsbench`` command.
    """
    start = text.find("## A two-week module")
    if start < 0:
        return ["no '## A two-week module' section"]
    end = text.find("\n## ", start + 1)
    plan = text[start:end if end > 0 else len(text)]
    rows = [(int(m.group("n")), m.group("rest")) for m in _SESSION_ROW.finditer(plan)]
    problems = []
    if not minimum <= len(rows) <= maximum:
        problems.append(f"{len(rows)} sessions in the plan's table, not between {minimum} and {maximum}")
    if [n for n, _ in rows] != list(range(1, len(rows) + 1)):
        problems.append(f"sessions numbered {[n for n, _ in rows]}, not 1 to {len(rows)}")
    problems += [f"session {n} has no time in the table" for n, rest in rows if not _DURATION.search(rest)]
    sections = {int(m.group("n")): m.group(0) for m in _SESSION_SECTION.finditer(plan)}
    for n, _ in rows:
        section = sections.get(n)
        if section is None:
            problems.append(f"session {n} has no '### Session {n}' section")
            continue
        time_line = re.search(r"^\s*- \*\*Time:\*\*(.*)$", section, re.M)
        if time_line is None or not _DURATION.search(time_line.group(1)):
            problems.append(f"session {n}: no '**Time:**' line with a duration")
        if not role_targets(section, "ref"):
            problems.append(f"session {n}: no exercise ({{ref}} of an exercise label)")
        if "crsbench " not in section:
            problems.append(f"session {n}: no crsbench command for the lab")
    return problems


def decimal_numbers(text: str) -> list[str]:
    """Every decimal number of ``text`` (``0.863``, ``.5``, ``12.0``): what a run result looks like.

    Examples
    --------
    >>> decimal_numbers("tau 0.863, 95 %, version 1.x, section 9")
    ['0.863']
    """
    return _DECIMAL.findall(text)


def part_figures(toc: dict, labels_by_page: dict[str, set[str]]) -> list[tuple[str, set[str]]]:
    """(caption, figure names of its chapters) per part of the table of contents with a chapter notebook.

    Parts of prose pages only (the playbook's "Start here", the Reference part) have no figures and no handout.
    """
    parts = []
    for part in toc["parts"]:
        if not any(chapter["file"].startswith("notebooks/") for chapter in part["chapters"]):
            continue
        names: set[str] = set()
        for chapter in part["chapters"]:
            names |= {label for label in labels_by_page.get(chapter["file"], set()) if label.startswith("fig-")}
        parts.append((part["caption"], names))
    return parts


def handout_problems(text: str, parts: list[tuple[str, set[str]]]) -> list[str]:
    """What keeps the handouts from being one printable page per part (empty when they are).

    One ``:::{container} crs-handout`` block per part, in the parts' order; each
    states the part's question, refers with ``{numref}`` to a figure of one of the
    part's chapters (the first ``{numref}`` of its key-figure paragraph; later ones
    are "see also"), gives two or three takeaways and three discussion questions;
    and the page's print rule starts each handout on a new page.
    """
    handouts = [m.group("body") for m in _HANDOUT.finditer(text)]
    problems = []
    if len(handouts) != len(parts):
        problems.append(f"{len(handouts)} handouts for {len(parts)} parts")
    if not re.search(r"@media print\s*\{[^}]*\.crs-handout\s*\{[^}]*break-before:\s*page", text):
        problems.append("no print rule that starts each handout (.crs-handout) on a new page")
    for number, (body, (caption, figures)) in enumerate(zip(handouts, parts), start=1):
        if "**The part's question.**" not in body:
            problems.append(f"handout {number} ({caption}): no part's question")
        key = body.split("**Key figure.**", 1)[1].split("\n\n", 1)[0] if "**Key figure.**" in body else ""
        key_figures = role_targets(key, "numref")  # the first is the key figure, the others "see also"
        if not key_figures or key_figures[0] not in figures:
            problems.append(f"handout {number} ({caption}): its key figure is no {{numref}} of a figure of its part")
        takeaways = (body.split("**Takeaways.**", 1)[1].split("**Discussion.**", 1)[0]
                     if "**Takeaways.**" in body else "")
        n_takeaways = len(re.findall(r"^- ", takeaways, re.M))
        if not 2 <= n_takeaways <= 3:
            problems.append(f"handout {number} ({caption}): {n_takeaways} takeaways, not 2 or 3")
        discussion = body.split("**Discussion.**", 1)[1] if "**Discussion.**" in body else ""
        n_questions = len(re.findall(r"^\d+\. .*?\?", discussion, re.M | re.S))
        if n_questions != 3:
            problems.append(f"handout {number} ({caption}): {n_questions} discussion questions, not 3")
    return problems


# --- the real page -------------------------------------------------------------------------------


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _labels_by_page() -> dict[str, set[str]]:
    return {re.sub(r"\.(md|ipynb)$", "", name): source_labels([text]) for name, text in book_texts().items()}


def test_the_page_is_in_the_table_of_contents():
    assert PAGE.is_file()
    assert PAGE_NAME in toc_pages()


def test_the_page_links_every_page_of_the_table_of_contents():
    assert unlinked_pages(_page(), toc_pages()) == []


def test_every_ref_label_of_the_page_exists():
    assert unknown_labels(_page(), source_labels(list(book_texts().values()))) == []
    assert role_targets(_page(), "ref"), "the page refers to no exercise"


def test_the_two_week_plan_is_complete():
    assert plan_problems(_page()) == []


def test_one_printable_handout_per_part():
    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))
    assert handout_problems(_page(), part_figures(toc, _labels_by_page())) == []


def test_the_page_quotes_no_number_of_a_run():
    assert decimal_numbers(_page()) == [], "a decimal number on the teaching page: the chapters compute them"


# --- each check catches its fault ----------------------------------------------------------------

_PLAN = """## A two-week module

| session | day | time | question |
| --- | --- | --- | --- |
{rows}

{sections}
## Assessment
"""


def _plan(n: int, time: str = "60 min lecture, 120 min lab", drop_section: int | None = None) -> str:
    rows = "\n".join(f"| {i} | day {i} | {time} | Why {i}? |" for i in range(1, n + 1))
    sections = "\n".join(
        f"### Session {i}: topic\n\n- **Time:** {time}.\n- **Exercises:** {{ref}}`ex-a-{i}`.\n\n"
        f"```bash\ncrsbench notebook a\n```\n"
        for i in range(1, n + 1) if i != drop_section)
    return _PLAN.format(rows=rows, sections=sections)


def test_plan_problems_accepts_a_complete_plan():
    assert plan_problems(_plan(10)) == []


def test_plan_problems_catches_too_few_or_too_many_sessions():
    assert any("not between" in p for p in plan_problems(_plan(7)))
    assert any("not between" in p for p in plan_problems(_plan(13)))
    assert plan_problems("# no plan") == ["no '## A two-week module' section"]


def test_plan_problems_catches_a_session_without_time_or_section():
    assert any("no time" in p for p in plan_problems(_plan(9, time="lecture and lab")))
    assert any("no '### Session 4' section" in p for p in plan_problems(_plan(9, drop_section=4)))
    no_command = _plan(9).replace("crsbench notebook a", "python lab.py")
    assert any("no crsbench command" in p for p in plan_problems(no_command))


def test_unlinked_pages_and_unknown_labels_catch_their_faults():
    text = "Read {doc}`../notebooks/a`, {doc}`the method <method>`; do {ref}`ex-a-1` and see {numref}`fig-z`."
    assert unlinked_pages(text, ["book/intro", "notebooks/a", "book/method", PAGE_NAME]) == ["book/intro"]
    assert unknown_labels(text, {"ex-a-1"}) == ["fig-z"]
    assert unknown_labels("{ref}`genindex`", set()) == []


def _handout(figure: str = "fig-a", takeaways: int = 2, questions: int = 3) -> str:
    return (":::{container} crs-handout\n\n### Handout\n\n**The part's question.** Why?\n\n"
            f"**Key figure.** {{numref}}`{figure}` in {{doc}}`x`.\n\n**Takeaways.**\n\n"
            + "".join(f"- lesson {i}\n" for i in range(takeaways))
            + "\n**Discussion.**\n\n" + "".join(f"{i + 1}. Why {i}?\n" for i in range(questions)) + ":::\n")


_PRINT_RULE = "<style>@media print { .crs-handout { break-before: page; } }</style>\n"


def test_handout_problems_accepts_good_handouts_and_catches_bad_ones():
    parts = [("One", {"fig-a"}), ("Two", {"fig-b"})]
    assert handout_problems(_PRINT_RULE + _handout("fig-a") + _handout("fig-b"), parts) == []
    assert any("1 handouts for 2 parts" in p for p in handout_problems(_PRINT_RULE + _handout(), parts))
    assert any("no print rule" in p for p in handout_problems(_handout("fig-a") + _handout("fig-b"), parts))
    wrong_figure = handout_problems(_PRINT_RULE + _handout("fig-a") + _handout("fig-a"), parts)
    assert any("handout 2 (Two): its key figure" in p for p in wrong_figure)
    see_also_only = _handout("fig-a").replace("`fig-a` in", "`fig-a` in {doc}`y`; see also {numref}`fig-b` in")
    assert any("handout 2 (Two): its key figure" in p
               for p in handout_problems(_PRINT_RULE + _handout("fig-a") + see_also_only, parts))
    assert any("4 takeaways" in p
               for p in handout_problems(_PRINT_RULE + _handout(takeaways=4) + _handout("fig-b"), parts))
    assert any("2 discussion questions" in p
               for p in handout_problems(_PRINT_RULE + _handout(questions=2) + _handout("fig-b"), parts))


@given(st.floats(min_value=0, max_value=1000, allow_nan=False, allow_infinity=False), st.integers(1, 4))
def test_every_decimal_number_is_caught(value, digits):
    written = f"{value:.{digits}f}"
    assert decimal_numbers(f"the leader's tau was {written}, against the study's.") == [written]


@given(st.integers(min_value=0, max_value=10**6))
def test_whole_numbers_are_not_decimals(value):
    assert decimal_numbers(f"session {value}: 60 min lecture, {value} %, amendment {value}.") == []
