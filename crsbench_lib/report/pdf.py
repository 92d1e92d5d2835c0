"""The book as one PDF: each rendered page printed by headless Chromium, then joined.

Jupyter Book 1.x's own ``pdfhtml`` builder drives a Chromium that pyppeteer
downloads at first use, which an offline machine cannot do; this module prints
the pages ``crsbench book`` already rendered with the system's Chromium
instead (``--headless --print-to-pdf``), in table-of-contents order, and joins
them with pypdf behind a first page that names the edition: package version,
reference standard (version and content hash), results hash and build date,
read from the ``provenance.json`` the book build wrote. Each chapter gets a
bookmark (under its part's caption) in the PDF's outline.

The pages are printed from a temporary copy of the site into which a small
print stylesheet is injected (A4 pages; the site's navigation hidden), so the
built site itself is never touched.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml

from crsbench_lib.atomic import atomic_path
from crsbench_lib.errors import PublishError
from crsbench_lib.paths import project_root
from crsbench_lib.report.banner import Provenance, release_lines
from crsbench_lib.report.book import BOOK_DIR, CONFIG_FILE, SOURCE_DIR, TOC_FILE
from crsbench_lib.report.publish import read_provenance, require_site

PDF_NAME = "crsbench-book.pdf"
PDF_DIR = "pdf"  # beside html/ in _build
CHROMIUM_ENV = "CRSBENCH_CHROMIUM"  # an explicit browser executable
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# No network, no first-run dialogs, no sandbox (containers run as root): an offline, headless print.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-pdf-header-footer",
    "--run-all-compositor-stages-before-draw",
)
# Lets scripts (theme, notebook widgets) settle in virtual time before printing.
VIRTUAL_TIME_BUDGET_MS = 5000
PAGE_TIMEOUT_S = 180
PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm 16mm 14mm; }
html, body { background: #fff !important; }
.bd-header, .bd-header-announcement, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-sidebar,
.header-article, .prev-next-area, .prev-next-footer, .bd-footer, .bd-footer-article, .bd-footer-content,
#pst-back-to-top, .skip-link, .headerlink, .search-button-field, .article-header-buttons { display: none !important; }
#jb-print-toc { display: none !important; }
.bd-page-width, .bd-container, .bd-container__inner, .bd-main, .bd-content, .bd-article-container {
  margin: 0 !important; padding-left: 0 !important; padding-right: 0 !important;
  max-width: none !important; width: auto !important; }
.bd-main, .bd-content, .bd-article-container, .bd-article { min-width: 0 !important; }
.bd-article { padding: 0 !important; overflow-wrap: anywhere; }
.cell_output th, .cell_output td, .output th, .output td { padding: 1px 3px !important; }
img { max-width: 100% !important; height: auto !important; break-inside: avoid; }
pre { white-space: pre-wrap !important; word-break: break-all; }
.cell_output table, .output table { font-size: 7.5pt !important; }
figure, .cell_output img { break-inside: avoid; }
"""


@dataclass(frozen=True)
class Chapter:
    """One page of the book in the PDF.

    Attributes
    ----------
    page : str
        The table-of-contents entry (``book/intro``, ``notebooks/cohort``).
    title : str
        The page's first heading.
    part : str or None
        The caption of the part it belongs to (``None`` for the front page).
    """

    page: str
    title: str
    part: str | None


def find_chromium() -> str:
    """The Chromium (or Chrome) executable to print with.

    ``$CRSBENCH_CHROMIUM`` if set, else the first of ``chromium``,
    ``chromium-browser``, ``google-chrome`` and ``google-chrome-stable`` on
    ``PATH``.

    Raises
    ------
    PublishError
        If none is found (Debian: ``apt-get install chromium``).
    """
    explicit = os.environ.get(CHROMIUM_ENV)
    if explicit:
        if not (Path(explicit).is_file() and os.access(explicit, os.X_OK)):
            raise PublishError(f"{CHROMIUM_ENV}={explicit} is not an executable file")
        return explicit
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise PublishError(
        "no Chromium found to print the PDF (Debian/Ubuntu: apt-get install chromium; "
        f"or set {CHROMIUM_ENV} to a Chromium or Chrome executable)"
    )


class _HeadingParser(HTMLParser):
    """Collects the text of the first ``<h1>``, without its permalink anchor."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # > 0 inside the first h1
        self.skip = 0  # > 0 inside a headerlink anchor
        self.done = False
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        if tag == "h1":
            self.depth += 1
        elif self.depth and tag == "a" and "headerlink" in (dict(attrs).get("class") or ""):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.done:
            return
        if tag == "a" and self.skip:
            self.skip -= 1
        elif tag == "h1" and self.depth:
            self.depth -= 1
            self.done = self.depth == 0

    def handle_data(self, data: str) -> None:
        if self.depth and not self.skip and not self.done:
            self.parts.append(data)


def page_title(html_file: str | os.PathLike[str]) -> str:
    """The text of a rendered page's first ``<h1>`` (its chapter title).

    Raises
    ------
    PublishError
        If the page has no ``<h1>``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> page = pathlib.Path(tempfile.mkdtemp()) / "p.html"
    >>> _ = page.write_text('<h1>Four axes<a class="headerlink" href="#x">#</a></h1>')
    >>> page_title(page)
    'Four axes'
    """
    parser = _HeadingParser()
    parser.feed(Path(html_file).read_text(encoding="utf-8"))
    title = " ".join("".join(parser.parts).split())
    if not title:
        raise PublishError(f"{html_file}: no <h1> heading to title the chapter")
    return title


def _files(entries: Iterable[Any]) -> list[str]:
    found: list[str] = []
    for entry in entries:
        if isinstance(entry, dict):
            if isinstance(entry.get("file"), str):
                found.append(entry["file"])
            found.extend(_files(entry.get("sections", []) or []))
    return found


def toc_outline(toc: dict[str, Any]) -> list[tuple[str | None, str]]:
    """(part caption, page) for every page of a jb-book table of contents, in order.

    Examples
    --------
    >>> toc_outline({"root": "intro", "parts": [{"caption": "A", "chapters": [{"file": "x"}]}]})
    [(None, 'intro'), ('A', 'x')]
    """
    outline: list[tuple[str | None, str]] = [(None, toc["root"])] if isinstance(toc.get("root"), str) else []
    outline += [(None, page) for page in _files(toc.get("chapters", []) or [])]
    for part in toc.get("parts", []) or []:
        caption = part.get("caption") if isinstance(part, dict) else None
        outline += [(caption, page) for page in _files(part.get("chapters", []) or [])]
    return outline


def _book_file(html_dir: Path, name: str, root: Path) -> Path:
    """The staged copy of a book file (the build's exact one), else the project's."""
    staged = html_dir.parent / SOURCE_DIR / name
    return staged if staged.is_file() else root / (BOOK_DIR + "/" + name if name == TOC_FILE else name)


def book_chapters(html_dir: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> list[Chapter]:
    """The pages of a built book, in reading order, with their titles.

    The table of contents is the one the build staged (pages whose notebook
    was not executed are not in it), else the project's.

    Raises
    ------
    PublishError
        If a page of the table of contents was not rendered.
    """
    site = Path(html_dir)
    base = Path(root) if root is not None else project_root()
    toc = yaml.safe_load(_book_file(site, TOC_FILE, base).read_text(encoding="utf-8")) or {}
    chapters = []
    for part, page in toc_outline(toc):
        rendered = site / f"{page}.html"
        if not rendered.is_file():
            raise PublishError(f"{rendered} is missing: the built book does not match its table of contents; rebuild it")
        chapters.append(Chapter(page, page_title(rendered), part))
    return chapters


def book_title(html_dir: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> tuple[str, str]:
    """(title, author) from the book's ``_config.yml``."""
    base = Path(root) if root is not None else project_root()
    config = yaml.safe_load(_book_file(Path(html_dir), CONFIG_FILE, base).read_text(encoding="utf-8")) or {}
    return str(config.get("title", "CRS-Bench")), str(config.get("author", ""))


def print_to_pdf(chromium: str, source: Path, out: Path, profile_dir: Path) -> Path:
    """Print one HTML file to ``out`` with headless Chromium.

    Raises
    ------
    PublishError
        If Chromium fails, times out or writes no PDF.
    """
    command = [chromium, *CHROMIUM_ARGS, f"--user-data-dir={profile_dir}",
               f"--virtual-time-budget={VIRTUAL_TIME_BUDGET_MS}", f"--print-to-pdf={out}", source.as_uri()]
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=PAGE_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise PublishError(f"chromium took more than {PAGE_TIMEOUT_S} s to print {source.name}") from None
    except OSError as exc:
        raise PublishError(f"cannot run {chromium}: {exc.strerror}") from None
    if completed.returncode != 0 or not out.is_file() or out.stat().st_size == 0:
        tail = (completed.stderr.strip().splitlines() or ["no message"])[-1]
        raise PublishError(f"chromium could not print {source.name}: {tail}")
    return out


def _inject_print_css(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    style = f"<style>{PRINT_CSS}</style>"
    text, n = re.subn(r"</head>", lambda _: style + "</head>", text, count=1, flags=re.IGNORECASE)
    page.write_text(text if n else style + text, encoding="utf-8")


def cover_html(prov: Provenance, title: str, author: str, contents: Sequence[tuple[Chapter, int]]) -> str:
    """The first page(s): title, the edition (:func:`release_lines`) and the contents.

    Parameters
    ----------
    prov : Provenance
        What produced the book.
    title, author : str
        From the book's configuration.
    contents : sequence of (Chapter, int)
        Each chapter with its first page number in the PDF (1-based).
    """
    esc = html.escape
    edition = "".join(f"<tr><th>{esc(label)}</th><td>{esc(value)}</td></tr>" for label, value in release_lines(prov))
    simulated = (
        '<p class="sim">Built on the simulated phantom cohort: the numbers illustrate the method and are not '
        "claims about real medical encoders.</p>" if prov.simulated is True else ""
    )
    rows, part = [], object()
    for chapter, number in contents:
        if chapter.part != part and chapter.part is not None:
            rows.append(f'<tr class="part"><td colspan="2">{esc(chapter.part)}</td></tr>')
        part = chapter.part
        rows.append(f"<tr><td>{esc(chapter.title)}</td><td class='n'>{number}</td></tr>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title><style>
@page {{ size: A4; margin: 22mm 20mm; }}
body {{ font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: #222; font-size: 10.5pt; }}
h1 {{ font-size: 22pt; margin: 0 0 4pt 0; color: #0b3d62; }}
.author {{ font-size: 12pt; margin: 0 0 18pt 0; color: #444; }}
h2 {{ font-size: 12pt; margin: 16pt 0 6pt 0; color: #0b3d62; }}
table {{ border-collapse: collapse; width: 100%; }}
.edition th {{ text-align: left; width: 32%; padding: 3pt 8pt 3pt 0; vertical-align: top; }}
.edition td {{ font-family: "DejaVu Sans Mono", monospace; font-size: 9pt; word-break: break-all; padding: 3pt 0; }}
.contents td {{ padding: 2pt 0; }} .contents td.n {{ text-align: right; width: 10%; }}
.contents tr.part td {{ font-weight: bold; padding-top: 8pt; }}
.sim {{ border-left: 4px solid #D55E00; padding: 4pt 8pt; background: #FDF3EC; }}
</style></head><body>
<h1>{esc(title)}</h1><p class="author">{esc(author)}</p>
<h2>This edition</h2><table class="edition">{edition}</table>{simulated}
<h2>Contents</h2><table class="contents">{"".join(rows)}</table>
</body></html>
"""


def build_pdf(
    html_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    provenance: Provenance | None = None,
    chromium: str | None = None,
    root: str | os.PathLike[str] | None = None,
) -> Path:
    """Print a built book to one PDF.

    Parameters
    ----------
    html_dir : path
        The rendered book (``_build/html``).
    out : path, optional
        The PDF (default: ``_build/pdf/crsbench-book.pdf`` beside ``html_dir``).
        Written atomically.
    provenance : Provenance, optional
        What produced the book (default: the ``provenance.json`` that
        ``crsbench book`` wrote into ``html_dir``).
    chromium : str, optional
        The browser executable (default: :func:`find_chromium`).
    root : path, optional
        Project root, for a book built without a staged configuration.

    Returns
    -------
    pathlib.Path
        The PDF: a first page naming the edition and listing the chapters with
        their page numbers, then every page of the table of contents in order,
        each with a bookmark.

    Raises
    ------
    PublishError
        If the book is not built, a page is missing, or Chromium fails.

    Examples
    --------
    >>> build_pdf("_build/html")  # doctest: +SKIP
    PosixPath('_build/pdf/crsbench-book.pdf')
    """
    from pypdf import PdfReader, PdfWriter

    site = require_site(html_dir)
    prov = provenance if provenance is not None else read_provenance(site)
    browser = chromium if chromium is not None else find_chromium()
    chapters = book_chapters(site, root)
    title, author = book_title(site, root)
    target = Path(out) if out is not None else site.parent / PDF_DIR / PDF_NAME
    with tempfile.TemporaryDirectory(prefix="crsbench-pdf-") as scratch:
        work = Path(scratch)
        copy = work / "site"
        shutil.copytree(site, copy)
        printed: list[Path] = []
        for index, chapter in enumerate(chapters):
            page = copy / f"{chapter.page}.html"
            _inject_print_css(page)
            printed.append(print_to_pdf(browser, page, work / f"{index:03d}.pdf", work / "profile"))
        counts = [len(PdfReader(p).pages) for p in printed]
        cover_pages, cover = 1, work / "cover.pdf"
        # The contents list page numbers, which depend on the cover's own length: print until it is stable.
        for _ in range(3):
            starts = [cover_pages + 1 + sum(counts[:i]) for i in range(len(chapters))]
            cover_file = work / "cover.html"
            cover_file.write_text(cover_html(prov, title, author, list(zip(chapters, starts, strict=True))),
                                  encoding="utf-8")
            print_to_pdf(browser, cover_file, cover, work / "profile")
            length = len(PdfReader(cover).pages)
            if length == cover_pages:
                break
            cover_pages = length
        else:  # pragma: no cover - a cover that keeps changing length cannot happen with fixed rows
            raise PublishError("the PDF's first pages did not settle on a length")
        writer = PdfWriter()
        writer.append(str(cover), outline_item="Edition and contents")
        parts: dict[str, Any] = {}
        for chapter, pdf, start in zip(chapters, printed, starts, strict=True):
            writer.append(str(pdf))
            parent = None
            if chapter.part is not None:
                if chapter.part not in parts:
                    parts[chapter.part] = writer.add_outline_item(chapter.part, start - 1)
                parent = parts[chapter.part]
            writer.add_outline_item(chapter.title, start - 1, parent=parent)
        writer.add_metadata({
            "/Title": title,
            "/Author": author,
            "/Subject": "; ".join(f"{label}: {value}" for label, value in release_lines(prov)),
            "/Creator": f"crsbench {prov.package_version} (crsbench pdf)",
        })
        with atomic_path(target) as tmp, open(tmp, "wb") as handle:
            writer.write(handle)
    return target
