"""The chapters' own prose comes in short paragraphs, as their generated findings do (report.takeaway.short_paragraphs)."""

import json

from crsbench_lib.paths import project_root
from crsbench_lib.report.takeaway import LONGEST_PARAGRAPH

# Blocks that are not running prose: lists, quotes, tables, headings, directives and fences.
NOT_PROSE = ("- ", "* ", ">", "|", "#", "`", ":", "{glue", "{index", "(", "1. ", "2. ", "3. ", "4. ", "5. ", "6. ", "7. ", "8. ", "9. ")


def long_paragraphs(markdown: str) -> list[str]:
    """The opening words of every prose paragraph of ``markdown`` longer than :data:`LONGEST_PARAGRAPH` words."""
    return [" ".join(block.split()[:8]) for block in markdown.split("\n\n")
            if not block.lstrip().startswith(NOT_PROSE) and len(block.split()) > LONGEST_PARAGRAPH]


def test_long_paragraphs_are_found():
    assert long_paragraphs("word " * (LONGEST_PARAGRAPH + 1)) == ["word " * 7 + "word"]
    assert long_paragraphs("word " * LONGEST_PARAGRAPH + "\n\n- " + "item " * 200) == []


def test_no_chapter_has_a_prose_paragraph_longer_than_the_findings_limit():
    found = {}
    for path in sorted((project_root() / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            if cell["cell_type"] == "markdown":
                for opening in long_paragraphs("".join(cell["source"])):
                    found.setdefault(path.stem, []).append(opening)
    assert not found, found
