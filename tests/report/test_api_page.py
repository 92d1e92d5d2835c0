"""The page "How each number is computed" (book/api.md) is generated from the chapters' code and up to date."""

import json
import re

from crsbench_lib.paths import project_root
from crsbench_lib.report.api_page import COMPUTING, api_markdown, chapter_calls, chapter_label, resolve
from crsbench_lib.report.book import toc_pages

ROOT = project_root()


def _chapters() -> list[str]:
    return [page.split("/", 1)[1] for page in toc_pages() if page.startswith("notebooks/")]


def test_the_shipped_page_is_the_generated_one():
    shipped = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    assert shipped == api_markdown(ROOT / "notebooks", _chapters()), (
        "book/api.md is out of date: regenerate it with crsbench_lib.report.api_page.write_api_page")
    assert "book/api" in toc_pages()


def test_every_chapter_links_its_part_and_every_part_lists_what_the_chapter_computes_with():
    page = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    for chapter in _chapters():
        path = ROOT / "notebooks" / f"{chapter}.ipynb"
        markdown = "".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                           if c["cell_type"] == "markdown")
        assert re.search(rf"\{{ref\}}`[^`]*<{chapter_label(chapter)}>`", markdown), f"{chapter} does not link its part"
        part = page.split(f"({chapter_label(chapter)})=", 1)[1].split("\n(api-", 1)[0]
        for dotted in chapter_calls(path):
            if dotted.startswith(COMPUTING) and resolve(dotted) is not None:
                assert f"`{dotted}`" in part, f"{chapter}: {dotted} is not listed"


def test_chapter_calls_reads_names_and_module_attributes(tmp_path):
    cells = [{"cell_type": "code", "source": "from crsbench_lib.scoring import crs, agreement as ag\n"
                                             "from numpy import mean\nx = ag.score_agreement(crs.score_results(t, s))\n"
                                             "mean(x)\ncrs.score_results(t, s)\n"}]
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    assert chapter_calls(path) == ["crsbench_lib.scoring.agreement.score_agreement",
                                   "crsbench_lib.scoring.crs.score_results"]


def test_each_function_is_documented_once_in_full():
    page = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    names = re.findall(r":::\{admonition\} Documentation of `(\w+)`", page)
    full = re.findall(r"^- `([\w.]+)`: .*?\n\n  :::\{admonition\}", page, flags=re.M)
    assert len(full) == len(set(full)) == len(names) > 20


def test_summaries_read_as_markdown_not_as_sphinx_roles():
    page = (ROOT / "book" / "api.md").read_text(encoding="utf-8")
    summaries = [line for line in page.splitlines() if line.startswith("- `")]
    assert summaries and not [line for line in summaries if re.search(r":(func|class|mod|meth|attr):`", line)]
