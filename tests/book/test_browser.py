"""The built book, read page by page in headless Chromium as a reader would.

On every page of the book the test fails on a console error, an element wider
than the content column, an image without descriptive alt text, a figure
without a caption, an absolute path of the build machine in the text, and a
missing simulated-cohort banner above the fold on a page built on the simulated
cohort. A full-page screenshot of every page is kept as a build artefact
(``_build/screenshots/`` beside the HTML). Each check is shown to catch its
fault on a tiny hand-written page.

Uses Debian's chromium (``apt-get install chromium``) through Playwright; never
``playwright install``. Without chromium the test is skipped locally and fails
on CI (``CI=true``).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from crsbench_lib.paths import project_root
from crsbench_lib.report.book import toc_pages

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 800}  # a laptop screen: "above the fold" is the first 800 px
BANNER_SELECTOR = ".crs-simulated-banner"
COLUMN_SELECTOR = "article.bd-article, main"  # the theme's text column, or a plain page's main
SLACK_PX = 1  # sub-pixel rounding
#: Tables a reader must scroll sideways to read, in the whole book at VIEWPORT (issue 29's bar).
MAX_SCROLLING_TABLES = 3

# Alt text that names a file or a hash, not what the figure shows.
UNDESCRIPTIVE_ALT = re.compile(r"^\s*$|^[0-9a-f]{12,}|\.(png|jpe?g|svg|gif)$", re.IGNORECASE)
MIN_ALT_WORDS = 3

_LAYOUT_JS = """
([columnSelector, slack]) => {
  const column = document.querySelector(columnSelector);
  if (!column) return {column: null, wide: [], images: [], figures: []};
  const box = column.getBoundingClientRect();
  const scrolls = (el) => {
    for (let a = el.parentElement; a && a !== column.parentElement; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if ((o === 'auto' || o === 'scroll') && a.getBoundingClientRect().right <= box.right + slack) return true;
    }
    return false;
  };
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  const wide = [];
  for (const el of column.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if ((r.right > box.right + slack || r.left < box.left - slack) && !scrolls(el)) {
      // Report the outermost offender only.
      const parent = el.parentElement;
      const pr = parent ? parent.getBoundingClientRect() : null;
      if (!pr || !(pr.right > box.right + slack || pr.left < box.left - slack) || parent === column)
        wide.push(describe(el) + ' (' + Math.round(r.width) + ' px, column ' + Math.round(box.width) + ' px)');
    }
  }
  const images = Array.from(column.querySelectorAll('img')).map(img => ({
    src: img.getAttribute('src') || '', alt: img.getAttribute('alt'),
    inFigure: !!img.closest('figure'),
  }));
  const figures = Array.from(column.querySelectorAll('figure')).map(f => {
    const cap = f.querySelector('figcaption');
    return {id: f.id || '', caption: cap ? cap.innerText.trim() : ''};
  });
  return {column: box.width, wide: wide, images: images, figures: figures};
}
"""


def _short(src: str) -> str:
    return src if len(src) < 60 else src[:57] + "..."


def read_page(page, url: str, *, simulated: bool, forbidden: Sequence[str] = (), screenshot: Path | None = None) -> list[str]:
    """Open ``url`` in a Playwright ``page`` and return every fault a reader would notice.

    Parameters
    ----------
    page : playwright.sync_api.Page
        A fresh page of a Chromium browser.
    url : str
        The page to read.
    simulated : bool
        Whether the page is built on the simulated cohort (it must then show
        the banner above the fold).
    forbidden : sequence of str
        Absolute paths of the build machine that must not appear in the text.
    screenshot : path, optional
        Where to keep a full-page screenshot.

    Returns
    -------
    list of str
        One line per fault; empty when the page reads well.
    """
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.set_viewport_size(VIEWPORT)
    page.goto(url, wait_until="load")
    page.wait_for_function("Array.from(document.images).every(img => img.complete)")
    page.wait_for_timeout(200)  # late console errors of deferred scripts
    faults = list(errors)
    layout = page.evaluate(_LAYOUT_JS, [COLUMN_SELECTOR, SLACK_PX])
    if layout["column"] is None:
        return faults + ["no content column (main) on the page"]
    faults += [f"wider than the content column: {w}" for w in layout["wide"]]
    for image in layout["images"]:
        alt = image["alt"] or ""
        if UNDESCRIPTIVE_ALT.search(alt) or len(alt.split()) < MIN_ALT_WORDS:
            faults.append(f"image without descriptive alt text: {_short(image['src'])} (alt={alt!r})")
        if not image["inFigure"]:
            faults.append(f"image outside a captioned figure: {_short(image['src'])}")
    for figure in layout["figures"]:
        if not figure["caption"]:
            faults.append(f"figure without a caption: {figure['id'] or '(no id)'}")
    text = page.inner_text("body")
    for path in forbidden:
        if path and path in text:
            faults.append(f"absolute path of the build machine in the text: {path}")
    if simulated:
        banner = page.locator(BANNER_SELECTOR)
        if banner.count() == 0:
            faults.append("simulated page without the simulated-cohort banner")
        else:
            top = banner.first.bounding_box()
            if top is None or top["y"] + top["height"] > VIEWPORT["height"]:
                faults.append("simulated-cohort banner below the fold")
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=True)
    return faults


_SCROLLING_TABLES_JS = """
([columnSelector, slack]) => {
  const column = document.querySelector(columnSelector);
  if (!column) return [];
  const found = [];
  for (const table of column.querySelectorAll('table')) {
    for (let a = table.parentElement; a && a !== column; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if ((o === 'auto' || o === 'scroll') && a.scrollWidth > a.clientWidth + slack) {
        const caption = table.querySelector('caption');
        found.push((caption ? caption.innerText.trim() : '(no caption)').slice(0, 90) +
                   ' (' + a.scrollWidth + ' px in ' + a.clientWidth + ' px)');
        break;
      }
    }
  }
  return found;
}
"""


def scrolling_tables(page, url: str) -> list[str]:
    """The tables of ``url`` that scroll sideways inside their box at :data:`VIEWPORT` (caption and widths)."""
    page.set_viewport_size(VIEWPORT)
    page.goto(url, wait_until="load")
    return page.evaluate(_SCROLLING_TABLES_JS, [COLUMN_SELECTOR, SLACK_PX])


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


def _build_paths(built_book: Path) -> list[str]:
    """Absolute paths of this machine a page must never show."""
    home = str(Path.home())
    return sorted({str(project_root()), str(built_book.parent.parent), str(Path(os.environ.get("TMPDIR", "/tmp")) / "pytest-of-"),
                   home + "/" if home not in ("/", "") else ""} - {""})


@pytest.mark.browser
@pytest.mark.slow
def test_every_page_reads_well(browser, built_book):
    shots = built_book.parent / "screenshots"
    forbidden = _build_paths(built_book)
    problems: list[str] = []
    for chapter in toc_pages():
        html = built_book / f"{chapter}.html"
        if not html.is_file():
            continue  # a chapter left out of this build (its notebook does not exist)
        page = browser.new_page()
        faults = read_page(page, html.as_uri(), simulated=chapter.startswith("notebooks/"), forbidden=forbidden,
                           screenshot=shots / f"{chapter.replace('/', '__')}.png")
        page.close()
        problems += [f"{chapter}: {fault}" for fault in faults]
    assert not problems, "\n".join(problems)
    assert len(list(shots.glob("*.png"))) >= len([c for c in toc_pages() if (built_book / f"{c}.html").is_file()])


@pytest.mark.browser
@pytest.mark.slow
def test_few_tables_scroll_sideways(browser, built_book):
    """A table wider than the column scrolls inside its box; a reader should rarely have to (key columns hide)."""
    found: list[str] = []
    for chapter in toc_pages():
        html = built_book / f"{chapter}.html"
        if html.is_file():
            page = browser.new_page()
            found += [f"{chapter}: {table}" for table in scrolling_tables(page, html.as_uri())]
            page.close()
    assert len(found) <= MAX_SCROLLING_TABLES, f"{len(found)} tables scroll sideways at 1280 px:\n" + "\n".join(found)


@pytest.mark.browser
@pytest.mark.slow
def test_navigation_reaches_every_chapter(browser, built_book):
    page = browser.new_page()
    page.goto((built_book / "index.html").as_uri())
    page.wait_for_url("**/book/intro.html")  # index.html redirects to the first page
    present = [c for c in toc_pages() if (built_book / f"{c}.html").is_file()]
    hrefs = page.evaluate("Array.from(document.querySelectorAll('nav.bd-links a')).map(a => a.href)")
    linked = {h.split("#")[0] for h in hrefs}
    for chapter in present[1:]:
        assert (built_book / f"{chapter}.html").as_uri() in linked, f"sidebar lacks {chapter}"
    visited = [page.url]
    while page.locator("a.right-next").count():
        page.locator("a.right-next").first.click()
        page.wait_for_load_state("load")
        visited.append(page.url)
        assert len(visited) <= len(present) + 3
    assert [v for v in visited if "genindex" not in v] == [(built_book / f"{c}.html").as_uri() for c in present]
    page.close()


# ---- each check catches its fault on a tiny page ------------------------------------------------------------

PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
GOOD_FIGURE = f'<figure id="fig-a"><img src="{PNG}" alt="Bar chart of ECE before and after calibration"><figcaption>Fig. 1 Simulated cohort. ECE.</figcaption></figure>'
BANNER = '<div class="crs-simulated-banner">SIMULATED COHORT: numbers illustrate the method.</div>'


def _page(tmp_path: Path, body: str, name: str = "page.html") -> str:
    html = ("<!doctype html><html><head><meta charset='utf-8'><title>t</title></head>"
            f"<body style='margin:0'><main style='width:688px;margin:0 auto'><h1>Title</h1>{body}</main></body></html>")
    target = tmp_path / name
    target.write_text(html, encoding="utf-8")
    return target.as_uri()


@pytest.fixture()
def read(browser, tmp_path):
    def _read(body: str, simulated: bool = True, forbidden: Sequence[str] = ()) -> list[str]:
        page = browser.new_page()
        try:
            return read_page(page, _page(tmp_path, body), simulated=simulated, forbidden=forbidden)
        finally:
            page.close()
    return _read


@pytest.mark.browser
def test_scrolling_tables_are_found(browser, tmp_path):
    wide = '<div style="overflow-x:auto"><table style="width:1500px"><caption>Table 1: wide</caption><tr><td>x</td></tr></table></div>'
    narrow = '<div style="overflow-x:auto"><table><caption>Table 2: narrow</caption><tr><td>x</td></tr></table></div>'
    page = browser.new_page()
    try:
        found = scrolling_tables(page, _page(tmp_path, wide + narrow, name="tables.html"))
    finally:
        page.close()
    assert len(found) == 1 and found[0].startswith("Table 1: wide")


@pytest.mark.browser
def test_a_clean_page_passes(read):
    assert read(BANNER + GOOD_FIGURE + '<div style="overflow-x:auto"><table style="width:1500px"><tr><td>x</td></tr></table></div>') == []


@pytest.mark.browser
def test_catches_a_console_error(read):
    faults = read(BANNER + GOOD_FIGURE + "<script>console.error('THEBE_JS_URL already declared')</script>")
    assert any("console error" in f and "THEBE_JS_URL" in f for f in faults), faults


@pytest.mark.browser
def test_catches_an_element_wider_than_the_column(read):
    faults = read(BANNER + GOOD_FIGURE + '<table style="width:1500px"><tr><td>rank</td></tr></table>')
    assert any(f.startswith("wider than the content column: table") for f in faults), faults


@pytest.mark.browser
@pytest.mark.parametrize("alt", ["", "3f2a9c0d1e7b4a6f", "figure.png", "plot"])
def test_catches_an_image_without_descriptive_alt_text(read, alt):
    body = BANNER + f'<figure><img src="{PNG}" alt="{alt}"><figcaption>Fig. 1 A caption.</figcaption></figure>'
    assert any("without descriptive alt text" in f for f in read(body)), alt


@pytest.mark.browser
def test_catches_a_figure_without_a_caption(read):
    faults = read(BANNER + f'<figure id="fig-b"><img src="{PNG}" alt="Line chart of retention by label fraction"></figure>')
    assert "figure without a caption: fig-b" in faults, faults
    faults = read(BANNER + f'<img src="{PNG}" alt="Line chart of retention by label fraction">')
    assert any("outside a captioned figure" in f for f in faults), faults


@pytest.mark.browser
def test_catches_an_absolute_path_of_the_build_machine(read, tmp_path):
    faults = read(BANNER + GOOD_FIGURE + f"<p>results_path = {tmp_path}/runs/results.parquet</p>", forbidden=[str(tmp_path)])
    assert f"absolute path of the build machine in the text: {tmp_path}" in faults, faults


@pytest.mark.browser
def test_catches_a_missing_or_low_banner_on_a_simulated_page(read):
    assert "simulated page without the simulated-cohort banner" in read(GOOD_FIGURE)
    assert "simulated-cohort banner below the fold" in read('<div style="height:1200px">intro</div>' + BANNER + GOOD_FIGURE)
    assert read(GOOD_FIGURE, simulated=False) == []
