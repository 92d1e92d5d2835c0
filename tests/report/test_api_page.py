"""The page "How each number is computed" is written by the book build from the chapters' code, documented by autodoc."""

import json
import re

import pytest

from crsbench_lib.paths import project_root
from crsbench_lib.report.api_page import COMPUTING, api_markdown, chapter_calls, chapter_label, resolve
from crsbench_lib.report.book import toc_pages

ROOT = project_root()


def _chapters() -> list[str]:
    return [page.split("/", 1)[1] for page in toc_pages() if page.startswith("notebooks/")]


@pytest.fixture(scope="module")
def page() -> str:
    return api_markdown(ROOT / "notebooks", _chapters())


def test_the_page_is_a_build_product_staged_from_the_chapters(tmp_path):
    from crsbench_lib.report.book import API_PAGE, stage_book

    assert API_PAGE in toc_pages()
    assert not (ROOT / f"{API_PAGE}.md").exists(), "the page is written at build time; no copy belongs in book/"
    stage, _ = stage_book({}, tmp_path / "stage")
    staged = (stage / f"{API_PAGE}.md").read_text(encoding="utf-8")
    assert staged == api_markdown(ROOT / "notebooks", _chapters())


def test_every_chapter_links_its_part_and_every_part_lists_what_the_chapter_computes_with(page):
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


def test_each_function_is_documented_once_in_full_by_autodoc(page):
    names = re.findall(r":::\{admonition\} Documentation of `(\w+)`", page)
    full = re.findall(r"^- `([\w.]+)`: .*?\n\n  :::\{admonition\}", page, flags=re.M)
    documented = re.findall(r"^  \.\. auto(?:function|class):: ([\w.]+)$", page, flags=re.M)
    assert len(full) == len(set(full)) == len(names) == len(documented) > 20
    assert documented == full and all(resolve(name) is not None for name in documented)


def test_summaries_read_as_markdown_not_as_sphinx_roles(page):
    summaries = [line for line in page.splitlines() if line.startswith("- `")]
    assert summaries and not [line for line in summaries if re.search(r":(func|class|mod|meth|attr):`", line)]
