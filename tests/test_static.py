"""Static checks of the house: the project cites only documents it contains, every
citation of the method page resolves, no module is over 800 lines, and the package
metadata installs without deprecation noise.

These read files as text; they run in a second and need nothing installed beyond
the test dependencies.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
METHOD_PAGE = ROOT / "book" / "method.md"
MAX_MODULE_LINES = 800
# Files whose text is read: what git tracks (and untracked files it does not ignore).
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".ipynb", ".cfg", ".txt", ".json", ".bib", ""}
# Documents of the design notes that were never part of the repository: a citation of
# any of them sends a reader to a file they cannot open.
EXTERNAL_DOCUMENT = re.compile(r"crs-method|\.\./shared/|shared/docs|shared/reference")
DOCS_CITATION = re.compile(r"(?<![\w/.])docs/([\w.-]+\.md)")
METHOD_CITATION = re.compile(
    r"method sections? (\d+)(?:(?: and |-)(\d+))?"
    r"(?:,? \(?(step|item|amendment)s? (\d+)(?:(?: and |-)(\d+))?)?"
)


def tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    files = [ROOT / name for name in listed if name]
    return [f for f in files if f.is_file() and f.suffix in TEXT_SUFFIXES and f.name != Path(__file__).name]


def flattened(text: str) -> str:
    """The text with line breaks, comment markers and docstring indentation folded to
    single spaces, so that a citation broken over two lines reads as one."""
    return re.sub(r"\s*\n\s*(?:#+\s*|//\s*)?", " ", text)


def method_outline(text: str) -> dict[int, set[int]]:
    """Section number -> the numbers of its numbered list entries, from the method page."""
    outline: dict[int, set[int]] = {}
    current: int | None = None
    for line in text.splitlines():
        heading = re.match(r"^## (\d+)\. ", line)
        if heading:
            current = int(heading.group(1))
            outline[current] = set()
            continue
        entry = re.match(r"^(\d+)\. ", line)
        if entry and current is not None:
            outline[current].add(int(entry.group(1)))
    return outline


def unresolved_citations(text: str, outline: dict[int, set[int]]) -> list[str]:
    bad = []
    for match in METHOD_CITATION.finditer(flattened(text)):
        first, last, _, entry_first, entry_last = match.groups()
        sections = range(int(first), int(last or first) + 1)
        missing = [s for s in sections if s not in outline]
        if missing:
            bad.append(f"{match.group(0)!r}: no section {missing[0]}")
            continue
        if entry_first:
            section = int(last or first)
            for entry in range(int(entry_first), int(entry_last or entry_first) + 1):
                if entry not in outline[section]:
                    bad.append(f"{match.group(0)!r}: section {section} has no entry {entry}")
    return bad


@pytest.fixture(scope="module")
def files() -> list[Path]:
    return tracked_files()


@pytest.fixture(scope="module")
def outline() -> dict[int, set[int]]:
    return method_outline(METHOD_PAGE.read_text(encoding="utf-8"))


def test_method_page_has_the_numbered_sections(outline):
    assert sorted(outline) == list(range(1, 10)), sorted(outline)
    assert len(outline[9]) >= 11, "section 9 lists the amendments"


def test_no_file_cites_a_document_outside_the_repository(files):
    bad = []
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if EXTERNAL_DOCUMENT.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{number}")
            for name in DOCS_CITATION.findall(line):
                if not (ROOT / "docs" / name).is_file():
                    bad.append(f"{path.relative_to(ROOT)}:{number} cites docs/{name}, which is not in the repository")
    assert not bad, "citations of documents outside the repository: " + "; ".join(bad)


def test_every_method_citation_resolves(files, outline):
    bad = []
    for path in files:
        for problem in unresolved_citations(path.read_text(encoding="utf-8", errors="replace"), outline):
            bad.append(f"{path.relative_to(ROOT)}: {problem}")
    assert not bad, "; ".join(bad)


def test_the_citation_check_catches_a_missing_entry(outline):
    assert unresolved_citations("see method section 9,\n    amendment 4", outline) == []
    assert unresolved_citations("(method sections 4-5)", outline) == []
    assert unresolved_citations("method section 9, amendment 99", outline)
    assert unresolved_citations("method section 12", outline)
    assert unresolved_citations("method section 6, items 3-40", outline)


def test_no_module_over_800_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "crsbench_lib").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them into rooms of one job): {long}"


def test_license_is_an_spdx_string():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert (ROOT / project["license-files"][0]).is_file()
