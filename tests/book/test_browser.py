"""Open the built book in headless Chromium: every chapter, every figure, the navigation.

Uses Debian's chromium (installed by .ci/run) through Playwright; never
``playwright install``. Without chromium the test is skipped locally and fails
on CI (``CI=true``).
"""

import os
import shutil
from pathlib import Path

import pytest

from crsbench_lib.report.book import toc_pages

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def _chromium() -> str:
    path = CHROMIUM if Path(CHROMIUM).is_file() else shutil.which("chromium")
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is not installed (apt-get install chromium); required on CI")
        pytest.skip("chromium is not installed")
    return path


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=executable, args=ARGS)
        yield instance
        instance.close()


@pytest.mark.browser
@pytest.mark.slow
def test_every_chapter_renders_with_loaded_figures_and_no_errors(browser, built_book):
    page = browser.new_page()
    for chapter in toc_pages():
        url = (built_book / f"{chapter}.html").as_uri()
        page.goto(url, wait_until="load")
        assert page.locator("h1").count() >= 1, chapter
        errors = page.locator(".output.traceback, .output.error, .output.stderr").count()
        assert errors == 0, f"{chapter}: {errors} error output(s)"
        assert "Traceback (most recent call last)" not in page.inner_text("main"), chapter
        page.wait_for_function("Array.from(document.images).every(img => img.complete)")
        images = page.evaluate(
            "Array.from(document.querySelectorAll('main img')).map(img => [img.src, img.naturalWidth, img.naturalHeight])"
        )
        if chapter.startswith("notebooks/"):
            assert images, f"{chapter}: no figure"
        for src, width, height in images:
            assert width > 0 and height > 0, f"{chapter}: image {src} did not load"
    page.close()


@pytest.mark.browser
@pytest.mark.slow
def test_navigation_reaches_every_chapter(browser, built_book):
    page = browser.new_page()
    page.goto((built_book / "index.html").as_uri())
    page.wait_for_url("**/book/intro.html")  # index.html redirects to the first page
    # The sidebar links every chapter.
    hrefs = page.evaluate("Array.from(document.querySelectorAll('nav.bd-links a')).map(a => a.href)")
    linked = {h.split("#")[0] for h in hrefs}
    for chapter in toc_pages()[1:]:
        assert (built_book / f"{chapter}.html").as_uri() in linked, f"sidebar lacks {chapter}"
    # Following "next" from the first page visits every chapter in order.
    visited = [page.url]
    while page.locator("a.right-next").count():
        page.locator("a.right-next").first.click()
        page.wait_for_load_state("load")
        visited.append(page.url)
        assert len(visited) <= len(toc_pages()) + 1
    assert visited == [(built_book / f"{chapter}.html").as_uri() for chapter in toc_pages()]
    page.close()
