"""The book builds: every chapter of the table of contents becomes an HTML page."""

import pytest

from crsbench_lib.report.book import toc_pages


@pytest.mark.slow
def test_book_builds_every_chapter(built_book):
    assert (built_book / "index.html").is_file()
    for page in toc_pages():
        html = built_book / f"{page}.html"
        assert html.is_file(), page
        text = html.read_text(encoding="utf-8")
        assert "Traceback (most recent call last)" not in text, page
        if page.startswith("notebooks/"):
            assert "<img" in text, f"{page}: no figure"
            assert "<table" in text, f"{page}: no table"
    intro = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    assert "profile:" in intro and "SIMULATED COHORT" in intro  # the provenance substitution
