"""Chapters in decision order: the question, the takeaway and the main figure before the method's details (issue 49).

A reader who acts on a chapter reads its question, its key takeaway and its main
figure first; the method follows in a few sentences and a methodologist's
details wait in a collapsed section at the end. Measured on the stored notebook:
the prose a reader meets before the chapter's first figure or table, counting
the markdown cells' words (directive syntax aside) and the takeaway box at its
longest (:data:`~crsbench_lib.report.takeaway.MAX_WORDS`, plus
:data:`~crsbench_lib.report.takeaway.MAX_ACTION_WORDS` where the box holds what a
team does with the finding), and no code cell
that prints findings before that point (the provenance block is the header's,
and does not count).
"""

from __future__ import annotations

import json
import re

import pytest

from crsbench_lib.paths import project_root
from crsbench_lib.report.takeaway import MAX_ACTION_WORDS, MAX_WORDS, TAKEAWAY_TITLE

#: The most prose a chapter shows before its first figure or table (issue 49: "at most about 250 words").
MAX_WORDS_BEFORE_FIGURE = 250
#: A cell that shows a figure or a table.
FIGURE_OR_TABLE = re.compile(r"\{glue:figure\}|show_table\(|show_tables\(")
#: A code cell that prints prose on the page.
PRINTS_PROSE = re.compile(r"display\(\s*(findings|Markdown)\(|^\s*findings\(", re.MULTILINE)
NOTEBOOKS = sorted((project_root() / "notebooks").glob("*.ipynb"))


def prose_words(markdown: str) -> int:
    """Words of running text in a markdown cell: fences, directive options, index entries and labels left out.

    Examples
    --------
    >>> prose_words("```{index} single: tau\\n```\\n# Title\\n\\nTwo words.\\n:::{note}\\n:class: x\\nThree more here.\\n:::")
    6
    """
    words = 0
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", ":::", "(", "{")) or re.match(r"^:[a-z-]+:", stripped):
            continue
        words += len(stripped.lstrip("#").split())
    return words


def words_before_first_figure(cells: list[dict]) -> tuple[int, list[str]]:
    """The prose words before a notebook's first figure or table, and the code cells that print prose before it."""
    words, printers = 0, []
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if FIGURE_OR_TABLE.search(source):
            return words, printers
        if cell["cell_type"] == "markdown":
            if f"{{admonition}} {TAKEAWAY_TITLE}" in source:  # the box at its longest: takeaway and action line
                words += MAX_WORDS + (MAX_ACTION_WORDS if "{glue:md} action-" in source else 0)
            else:
                words += prose_words(source)
        elif PRINTS_PROSE.search(source) and "remove-cell" not in cell.get("metadata", {}).get("tags", []):
            printers.append(f"cell {index}: {source.strip().splitlines()[0][:60]}")
    return words, printers


def test_the_measure_counts_markdown_the_takeaway_and_prose_printing_cells():
    cells = [{"cell_type": "markdown", "source": ["# T\n", "\n", "one two three"]},
             {"cell_type": "markdown", "source": [f"````{{admonition}} {TAKEAWAY_TITLE}\n", "```{glue:md} k\n"]},
             {"cell_type": "code", "source": ["display(findings(text))"], "metadata": {}},
             {"cell_type": "markdown", "source": ["```{glue:figure} fig\n", "caption words"]},
             {"cell_type": "markdown", "source": ["after the figure " * 100]}]
    words, printers = words_before_first_figure(cells)
    assert words == 4 + MAX_WORDS and printers == ["cell 2: display(findings(text))"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_chapter_shows_its_figure_after_at_most_250_words(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert any(FIGURE_OR_TABLE.search("".join(c["source"])) for c in cells), f"{path.stem}: no figure or table"
    words, printers = words_before_first_figure(cells)
    assert not printers, f"{path.stem}: findings printed before the first figure or table: {printers}"
    assert words <= MAX_WORDS_BEFORE_FIGURE, (
        f"{path.stem}: {words} words before the first figure or table (at most {MAX_WORDS_BEFORE_FIGURE})")
