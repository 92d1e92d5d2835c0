"""The reference pages, read from their sources (no book build): the glossary and the bibliography.

* The glossary (``book/glossary.md``) defines at least 30 terms, in case-insensitive
  alphabetical order, none twice, each with a definition.
* Every ``{term}`` role of the book's pages, the notebooks and the library names a
  defined term. Sphinx's standard domain (7.x) resolves a term role by the exact term
  first and then by its lower-cased form (``StandardDomain._resolve_term_xref``), with
  the role's whitespace collapsed; ``{term}`text <target>``` links ``target``.
* Every citation key (``{cite}``, ``{cite:p}``, ``{cite:t}``, ... in MyST, ``:cite:p:``
  in reST) used in ``book/``, ``notebooks/`` and ``crsbench_lib/`` is an entry of
  ``book/references.bib``, which holds at least 22 entries, each with an author, a
  title and a year.

Each check is a function returning the problems it finds, tested on the real sources
and on small broken inputs, so that a broken page fails here before a build does.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
GLOSSARY = BOOK / "glossary.md"
BIBLIOGRAPHY = BOOK / "references.bib"
MIN_TERMS = 30
MIN_ENTRIES = 22

_GLOSSARY_BLOCK = re.compile(r"^(?P<fence>`{3,}|:{3,})\{glossary\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$", re.S | re.M)
_TERM_ROLE = re.compile(r"(?<!`)\{term\}`(?P<text>[^`]+)`")
_CITE_ROLE = re.compile(r"(?<!`)(?:\{(?:foot)?cite(?::[a-z]+)?\}|:(?:foot)?cite(?::[a-z]+)?:)`(?P<keys>[^`]+)`")
_EXPLICIT_TARGET = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


def glossary_entries(text: str) -> list[tuple[str, str]]:
    """(term, definition) of every entry of the ``{glossary}`` blocks of a MyST page, in order.

    The directive's own format: an unindented line is a term (consecutive ones are
    aliases of one definition), the indented lines below it are its definition; a
    line of options (``:sorted:``) or a comment (``.. ``) is neither. A term's
    classifier (``term : classifier``) is dropped, as Sphinx drops it.
    """
    entries: list[tuple[str, list[str]]] = []
    for block in _GLOSSARY_BLOCK.finditer(text):
        body: list[str] = []
        after_term = False
        for line in block.group("body").splitlines():
            if not line.strip():
                continue
            if line[0].isspace():
                if entries:
                    body.append(line.strip())
                after_term = False
                continue
            if line.startswith((":", ".. ")):
                continue
            if not after_term:  # a new entry; an alias right below a term shares its definition
                body = []
            entries.append((re.split(r" +: +", line.strip())[0], body))
            after_term = True
    return [(term, " ".join(body)) for term, body in entries]


def glossary_problems(entries: list[tuple[str, str]], minimum: int = MIN_TERMS) -> list[str]:
    """What keeps a glossary from being complete, sorted and unique (empty when it is)."""
    terms = [term for term, _ in entries]
    problems = []
    if len(terms) < minimum:
        problems.append(f"{len(terms)} terms, fewer than {minimum}")
    for before, after in itertools.pairwise(terms):
        if before.casefold() > after.casefold():
            problems.append(f"{after!r} comes after {before!r}: not in alphabetical order")
    seen: set[str] = set()
    for term in terms:
        if term.casefold() in seen:
            problems.append(f"{term!r} is defined twice")
        seen.add(term.casefold())
    problems.extend(f"{term!r} has no definition" for term, body in entries if not body.strip())
    return problems


def term_targets(text: str) -> list[str]:
    """The glossary term each ``{term}`` role of a text links to (whitespace collapsed, as Sphinx does)."""
    targets = []
    for match in _TERM_ROLE.finditer(text):
        role = " ".join(match.group("text").split()).lstrip("!")
        explicit = _EXPLICIT_TARGET.match(role)
        targets.append(explicit.group("target").strip() if explicit else role)
    return targets


def undefined_terms(targets: list[str], terms: list[str]) -> list[str]:
    """The targets Sphinx cannot resolve: neither the exact term nor its lower-cased form is defined."""
    exact, lower = set(terms), {t.lower() for t in terms}
    return [t for t in targets if t not in exact and t.lower() not in lower]


def citation_keys(text: str) -> list[str]:
    """Every citation key of a text's cite roles, MyST or reST (pre- and post-notes ``{...}`` dropped)."""
    keys = []
    for match in _CITE_ROLE.finditer(text):
        for key in match.group("keys").split(","):
            key = re.sub(r"\{[^{}]*\}", "", key).strip()
            if key:
                keys.append(key)
    return keys


def bibliography_problems(path: Path, minimum: int = MIN_ENTRIES) -> tuple[set[str], list[str]]:
    """The keys of a BibTeX file and what keeps it from being usable (duplicates, missing fields, too few)."""
    from pybtex.database import parse_file
    from pybtex.exceptions import PybtexError

    try:
        data = parse_file(str(path), bib_format="bibtex")
    except PybtexError as error:  # a duplicate key or field, a syntax error (pybtex's default strict mode)
        return set(), [f"{path.name} does not parse: {error}"]
    problems = []
    if len(data.entries) < minimum:
        problems.append(f"{len(data.entries)} entries, fewer than {minimum}")
    for key, entry in data.entries.items():
        if not entry.persons.get("author"):
            problems.append(f"{key}: no author")
        # An undated source says so in its note (the style then prints "n.d."; a year of "n.d." would
        # give a broken list label such as "[Cogd.]").
        undated = entry.fields.get("note", "").strip().startswith("Undated")
        for field in ("title",) if undated else ("title", "year"):
            if not entry.fields.get(field, "").strip():
                problems.append(f"{key}: no {field}")
        if undated and entry.fields.get("year"):
            problems.append(f"{key}: its note says undated, yet it has a year")
    return {key.lower() for key in data.entries}, problems


def source_texts() -> dict[str, str]:
    """The text of every source that may use a role: book pages, notebook cells, library modules."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted(BOOK.rglob("*.md"))
             if "_build" not in p.parts}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[str(path.relative_to(ROOT))] = "\n".join("".join(cell["source"]) for cell in cells)
    for path in sorted((ROOT / "crsbench_lib").rglob("*.py")):
        texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return texts


def _defined_terms() -> list[str]:
    return [term for term, _ in glossary_entries(GLOSSARY.read_text(encoding="utf-8"))]


def test_the_glossary_is_long_enough_sorted_unique_and_defined():
    entries = glossary_entries(GLOSSARY.read_text(encoding="utf-8"))
    assert glossary_problems(entries) == []
    # The terms the built-book test and the chapters' links look for are still there, spelled the same.
    for term in ("AUROC", "ECE floor", "Kendall tau-b", "Pareto dominance", "anchor", "saturation",
                 "reference panel", "leading tier", "LoRA", "CRS", "balance", "floor", "dominance"):
        assert term in dict(entries), term


def test_the_crs_entry_gives_its_formula_and_its_components_theirs():
    entries = dict(glossary_entries(GLOSSARY.read_text(encoding="utf-8")))
    # Formulas in plain text (no dollar math: see test_no_page_needs_mathjax), written as on the method page.
    assert "CRS = w_dom · dominance + w_bal ·" in entries["CRS"]
    assert "balance = 1 − ‖1 − *s*‖₂ / 2" in entries["balance"]
    assert "floor = min_a *s*_a" in entries["floor"]
    assert "Φ((*s*_a − *p*_a)" in entries["noise-aware dominance"]
    assert "(AUROC_f − 0.5) / (AUROC_1 − 0.5)" in entries["label efficiency"]


def test_every_term_role_names_a_defined_term():
    terms = _defined_terms()
    used = {name: term_targets(text) for name, text in source_texts().items()}
    assert sum(len(targets) for targets in used.values()) > 0  # the scan sees the roles
    missing = {name: bad for name, targets in used.items() if (bad := undefined_terms(targets, terms))}
    assert missing == {}


def test_every_citation_key_resolves_and_every_entry_is_complete():
    keys, problems = bibliography_problems(BIBLIOGRAPHY)
    assert problems == []
    used = {name: citation_keys(text) for name, text in source_texts().items()}
    assert sum(len(k) for k in used.values()) > 0
    missing = {name: sorted({k for k in found if k.lower() not in keys}) for name, found in used.items()}
    assert {name: bad for name, bad in missing.items() if bad} == {}


# The checks themselves fail on broken inputs.

_BROKEN_GLOSSARY = """# Glossary

```{glossary}
beta
  Second.

alpha
  First.

Beta
  Again.

gamma
```
"""


def test_glossary_problems_names_an_unsorted_duplicated_short_or_empty_glossary():
    entries = glossary_entries(_BROKEN_GLOSSARY)
    assert [term for term, _ in entries] == ["beta", "alpha", "Beta", "gamma"]
    problems = glossary_problems(entries, minimum=5)
    assert "4 terms, fewer than 5" in problems
    assert "'alpha' comes after 'beta': not in alphabetical order" in problems
    assert "'Beta' is defined twice" in problems
    assert "'gamma' has no definition" in problems
    assert glossary_problems(entries[1:2], minimum=1) == []


def test_glossary_entries_reads_aliases_options_and_classifiers():
    text = "```{glossary}\n:sorted:\n\nfirst\nsecond : a classifier\n  Shared body\n  on two lines.\n```\n"
    assert glossary_entries(text) == [("first", "Shared body on two lines."), ("second", "Shared body on two lines.")]


@pytest.mark.parametrize(("text", "expected"), [
    ("{term}`AUROC`", ["AUROC"]),
    ("a {term}`reference\n   panel` b", ["reference panel"]),
    ("{term}`Pareto-dominates <Pareto dominance>`", ["Pareto dominance"]),
    ("{term}`!anchor`", ["anchor"]),
    ("`{term}` alone, {cite:p}`x`", []),
])
def test_term_targets_reads_the_role_as_sphinx_does(text, expected):
    assert term_targets(text) == expected


def test_undefined_terms_follows_sphinx_exact_then_lower_case():
    terms = ["AUROC", "Kendall tau-b"]
    assert undefined_terms(["AUROC", "auroc", "kendall TAU-B", "Kendall tau b", "CRS"], terms) == [
        "Kendall tau b", "CRS"]


def test_citation_keys_reads_myst_and_rest_roles():
    text = ("{cite:p}`a2020, b2021` and {cite:t}`c2019` {cite}`{see}d2018{p. 3}` "
            ":cite:p:`e2017` {footcite:t}`f2016` {term}`not a key` `{cite:p}` in inline code")
    assert citation_keys(text) == ["a2020", "b2021", "c2019", "d2018", "e2017", "f2016"]


def test_bibliography_problems_names_missing_fields_duplicates_and_too_few(tmp_path):
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{one, author = {A, B}, title = {T}, year = {2000}}\n"
                   "@article{two, title = {T}, year = {2001}}\n"
                   "@book{three, author = {C, D}, year = {2002}}\n", encoding="utf-8")
    keys, problems = bibliography_problems(bib, minimum=4)
    assert keys == {"one", "two", "three"}
    assert problems == ["3 entries, fewer than 4", "two: no author", "three: no title"]
    bib.write_text("@article{one, author = {A, B}, title = {T}, year = {2000}}\n" * 2, encoding="utf-8")
    keys, problems = bibliography_problems(bib, minimum=1)
    assert keys == set() and "does not parse" in problems[0]


# Dollar math makes Sphinx load MathJax from a CDN, which an offline reader cannot reach
# (the browser test reports it as a console error); the book writes formulas in plain text.
_FENCED = re.compile(r"^(`{3,}|~{3,}).*?^\1\s*$", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_DOLLAR_MATH = re.compile(r"(?<![\\$])\$(?=\S)[^$\n]+(?<=\S)\$")


def dollar_math(text: str) -> list[str]:
    """The ``$...$`` spans of a Markdown text outside code."""
    prose = _INLINE_CODE.sub("", _FENCED.sub("", text))
    return _DOLLAR_MATH.findall(prose)


def _markdown_sources() -> dict[str, str]:
    sources = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted(BOOK.glob("*.md"))}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources[str(path.relative_to(ROOT))] = "\n\n".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return sources


def test_no_page_needs_mathjax():
    found = {name: spans for name, text in _markdown_sources().items() if (spans := dollar_math(text))}
    assert not found, found


def test_dollar_math_is_found_outside_code_only():
    assert dollar_math("a $x^2$ b") == ["$x^2$"]
    assert dollar_math("```bash\ncrsbench score $R $S\n```\n`$R` and $5 or $ 3") == []


# Sphinx's index directive takes its entries as its argument and no content: entries on
# the lines below a MyST ```{index} line are dropped with a warning, so each gets its own.
_INDEX_WITH_CONTENT = re.compile(r"^```\{index\}[^\n]*\n(?!```)[^\n]*\S", re.M)


def test_every_index_entry_has_its_own_directive():
    found = [name for name, text in _markdown_sources().items() if _INDEX_WITH_CONTENT.search(text)]
    assert not found, found
    assert _INDEX_WITH_CONTENT.search("```{index} single: a\n   single: b\n```\n")
    assert not _INDEX_WITH_CONTENT.search("```{index} single: a\n```\n```{index} single: b\n```\n")
