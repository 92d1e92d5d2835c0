"""`crsbench pdf`: the built book printed by headless Chromium and joined behind an edition page.

The browser tests use the system's Chromium and are skipped without it locally,
failing instead on CI (``CI=true``), as tests/book/test_browser.py does.
"""

import json
import os
import stat
import unicodedata
from pathlib import Path

import pytest
import yaml

from crsbench_lib import __version__
from crsbench_lib.cli import main
from crsbench_lib.errors import PublishError
from crsbench_lib.paths import project_root
from crsbench_lib.report.banner import Provenance, release_lines
from crsbench_lib.report.book import PROVENANCE_FILE, toc_pages
from crsbench_lib.report.pdf import (
    CHROMIUM_ENV,
    Chapter,
    build_pdf,
    cover_html,
    find_chromium,
    page_title,
    toc_outline,
)

PROV = Provenance("quick", "crs-test-v1", "sha256:" + "a" * 64, (), "9.9.9", (), True, "sha256:" + "c" * 64,
                  "2026-11-30")


def _chromium() -> str:
    try:
        return find_chromium()
    except PublishError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is not installed (apt-get install chromium); required on CI")
        pytest.skip("chromium is not installed")


def _text(page) -> str:
    """A page's text without whitespace: lines wrap titles and hashes anywhere.

    NFKC folds the ligatures the fonts print (the "fi" of "fixed" is one glyph).
    """
    return _squeeze(unicodedata.normalize("NFKC", page.extract_text()))


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _outline_starts(reader) -> dict[str, int]:
    """Bookmark title -> 0-based page, flattened over parts."""
    starts: dict[str, int] = {}

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                starts[item.title] = reader.get_destination_page_number(item)

    walk(reader.outline)
    return starts


def test_page_title_skips_the_permalink_and_needs_a_heading(tmp_path):
    page = tmp_path / "p.html"
    page.write_text('<html><h2>Not me</h2><h1>The <em>four</em> axes<a class="headerlink" href="#a">#</a></h1>'
                    "<h1>Second</h1></html>")
    assert page_title(page) == "The four axes"
    page.write_text("<html><p>no heading</p></html>")
    with pytest.raises(PublishError, match="no <h1>"):
        page_title(page)


def test_toc_outline_follows_parts_and_sections():
    toc = {"format": "jb-book", "root": "book/intro", "parts": [
        {"caption": "One", "chapters": [{"file": "a", "sections": [{"file": "a1"}]}, {"file": "b"}]},
        {"caption": "Two", "chapters": [{"file": "c"}]}]}
    assert toc_outline(toc) == [(None, "book/intro"), ("One", "a"), ("One", "a1"), ("One", "b"), ("Two", "c")]
    assert [page for _, page in toc_outline(yaml.safe_load((project_root() / "book" / "_toc.yml").read_text()))] == toc_pages()


def test_cover_names_the_edition_and_lists_chapters_with_pages():
    chapters = [(Chapter("book/intro", "Intro & more", None), 2), (Chapter("notebooks/a", "Axes", "Part <1>"), 5)]
    page = cover_html(PROV, "Title", "Authors", chapters)
    for _, value in release_lines(PROV):
        assert value.replace("&", "&amp;") in page
    assert "Intro &amp; more" in page and "Part &lt;1&gt;" in page and ">5<" in page
    assert "simulated phantom cohort" in page


def test_find_chromium_honours_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(CHROMIUM_ENV, str(tmp_path / "nothing"))
    with pytest.raises(PublishError, match="not an executable"):
        find_chromium()
    fake = tmp_path / "chrome"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv(CHROMIUM_ENV, str(fake))
    assert find_chromium() == str(fake)
    monkeypatch.delenv(CHROMIUM_ENV)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(PublishError, match="apt-get install chromium"):
        find_chromium()


def test_pdf_of_an_unbuilt_book_is_a_one_line_error(tmp_path, capsys):
    assert main(["pdf", "--html", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no built book" in err


def _tiny_site(root: Path) -> Path:
    """A two-part book rendered by hand: config, staged toc and three pages."""
    build = root / "_build"
    html, source = build / "html", build / "source"
    for folder in (html / "book", html / "notebooks", source):
        folder.mkdir(parents=True, exist_ok=True)
    (source / "_config.yml").write_text("title: Tiny book\nauthor: Tests\n")
    toc = {"format": "jb-book", "root": "book/intro",
           "parts": [{"caption": "Only part", "chapters": [{"file": "notebooks/long"}, {"file": "notebooks/short"}]}]}
    (source / "_toc.yml").write_text(yaml.safe_dump(toc))
    (html / "index.html").write_text('<meta http-equiv="refresh" content="0; url=book/intro.html">')
    (html / "book" / "intro.html").write_text("<html><body><h1>Tiny introduction</h1><p>Hello.</p></body></html>")
    paragraphs = "".join(f"<p>Paragraph {i} of a chapter long enough to need several pages.</p>" for i in range(200))
    (html / "notebooks" / "long.html").write_text(f"<html><body><h1>A long chapter</h1>{paragraphs}</body></html>")
    (html / "notebooks" / "short.html").write_text("<html><body><h1>A short chapter</h1></body></html>")
    (html / PROVENANCE_FILE).write_text(json.dumps(PROV.to_json()))
    return html


@pytest.mark.browser
def test_pdf_of_a_tiny_book_has_edition_page_bookmarks_and_every_chapter(tmp_path):
    from pypdf import PdfReader

    chromium = _chromium()
    html = _tiny_site(tmp_path)
    before = sorted(p.relative_to(html) for p in html.rglob("*"))
    pdf = build_pdf(html, chromium=chromium, root=tmp_path)
    assert pdf == tmp_path / "_build" / "pdf" / "crsbench-book.pdf"
    assert sorted(p.relative_to(html) for p in html.rglob("*")) == before  # the site is not touched
    reader = PdfReader(pdf)
    starts = _outline_starts(reader)
    assert list(starts) == ["Edition and contents", "Tiny introduction", "Only part", "A long chapter",
                            "A short chapter"]
    assert starts["Edition and contents"] == 0 and starts["Only part"] == starts["A long chapter"]
    assert starts["A long chapter"] + 2 <= starts["A short chapter"]  # the long chapter spans pages
    for title in ("Tiny introduction", "A long chapter", "A short chapter"):
        assert _squeeze(title) in _text(reader.pages[starts[title]])
    first = _text(reader.pages[0])
    for needle in ("Tiny book", "crsbench 9.9.9", "crs-test-v1", PROV.standard_hash, PROV.results_hash, "2026-11-30"):
        assert _squeeze(needle) in first, needle
    # The contents give each chapter's page number (1-based).
    assert f"Ashortchapter{starts['A short chapter'] + 1}" in first
    assert reader.metadata.title == "Tiny book"


@pytest.mark.browser
@pytest.mark.slow
def test_pdf_of_the_quick_book_has_every_chapter(book_inputs, tmp_path_factory):
    from pypdf import PdfReader

    from crsbench_lib.report.book import render_book
    from crsbench_lib.report.pdf import book_chapters

    chromium = _chromium()
    # The same output folder as tests/book's built_book: a session running both renders once.
    out = tmp_path_factory.getbasetemp() / "book-output"
    html = render_book(book_inputs["results_path"], book_inputs["profile"], standard_path=book_inputs["standard_path"],
                       simulated=book_inputs["simulated"], output_root=out, cache=book_inputs["cache"])
    pdf = build_pdf(html, out=tmp_path_factory.mktemp("pdf") / "book.pdf", chromium=chromium)
    reader = PdfReader(pdf)
    chapters = book_chapters(html)
    assert [c.page for c in chapters] == toc_pages()
    starts = _outline_starts(reader)
    first_pages = [starts[c.title] for c in chapters]
    assert first_pages == sorted(first_pages) and len(set(first_pages)) == len(chapters)
    # Every chapter starts on its own page, after the edition page.
    assert len(reader.pages) >= first_pages[-1] + 1 >= len(chapters) + 1
    for chapter, start in zip(chapters, first_pages, strict=True):
        assert _squeeze(chapter.title) in _text(reader.pages[start]), chapter.title
    prov = json.loads((html / PROVENANCE_FILE).read_text())
    first = _text(reader.pages[0])
    for needle in (f"crsbench {__version__}", prov["standard_version"], prov["standard_hash"],
                   prov["results_hash"], prov["build_date"]):
        assert _squeeze(needle) in first, needle
