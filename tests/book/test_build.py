"""The book builds: every chapter of the table of contents becomes an HTML page, with its scaffolding."""

import re

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
        # A display object shown as its Python repr (an empty Markdown falls back to it) is no sentence.
        assert "IPython.core.display" not in text and "object at 0x" not in text, f"{page}: a raw Python repr"
        if page.startswith("notebooks/"):
            assert "<img" in text, f"{page}: no figure"
            assert "<table" in text, f"{page}: no table"
            assert re.search(r'<span class="caption-number">Fig\. \d+ </span>', text), f"{page}: no numbered figure"
            assert "Learning objectives" in text and "What this teaches, and its limits" in text, page
            assert "Solution to" in text, f"{page}: no exercise solution"
            assert "crs-simulated-banner" in text, f"{page}: no banner"
            # Tables are numbered; the library calls stay in the page, collapsed behind a toggle.
            assert re.search(r"<caption>\s*Table 1: ", text), f"{page}: no numbered table"
            assert "tag_hide-input" in text and '<details class="admonition hide above-input"' in text, page
            # One key-takeaway box, filled (the glued text, not an empty box or a missing key).
            boxes = re.findall(r'<p class="admonition-title">Key takeaway</p>(.*?)</div>', text, flags=re.S)
            assert len(boxes) == 1, f"{page}: {len(boxes)} key-takeaway boxes"
            words = re.sub(r"<.*?>", " ", boxes[0]).split()
            assert len(words) >= 8 and any(ch.isdigit() for w in words for ch in w), f"{page}: empty takeaway"
    intro = (built_book / "book" / "intro.html").read_text(encoding="utf-8")
    assert "profile:" in intro and "SIMULATED COHORT" in intro  # the provenance substitution
    # The first screen says what the book teaches; the edition's hashes come after the reading guide.
    # (read in the article: the page's table of contents names the sections before the text does).
    article = intro[intro.index("<article"):]
    assert article.index("What this book teaches") < article.index("How to read the book") < article.index(
        "Which run produced")


@pytest.mark.slow
def test_glossary_bibliography_index_and_execution_page(built_book):
    glossary = (built_book / "book" / "glossary.html").read_text(encoding="utf-8")
    for term in ("AUROC", "ECE floor", "Kendall tau-b", "Pareto dominance", "anchor", "saturation", "reference panel",
                 "leading tier", "LoRA"):
        assert f">{term}<" in glossary, term
    references = (built_book / "book" / "references.html").read_text(encoding="utf-8")
    for author in ("Guo", "Naeini", "Kendall", "Chen", "He", "Hu", "Salvo", "Yang", "Cognaptus"):
        assert author in references, author
    index = (built_book / "genindex.html").read_text(encoding="utf-8")
    assert "Kendall tau-b" in index and "leading tier" in index
    execution = (built_book / "book" / "execution.html").read_text(encoding="utf-8")
    assert execution.count("execution cache") + execution.count("executed in this build") >= len(
        [p for p in toc_pages() if p.startswith("notebooks/")])
    # Chapters link to the glossary and cite the study.
    agreement = (built_book / "notebooks" / "agreement.html").read_text(encoding="utf-8")
    assert "glossary.html#term-Kendall-tau-b" in agreement
    assert "references" in (built_book / "book" / "intro.html").read_text(encoding="utf-8")


def solution_prose_words(html: str) -> list[int]:
    """Words of prose (code and markup removed) in each exercise solution of a page."""
    counts = []
    for block in re.findall(r'<div class="solution[^"]*"[^>]*>(.*?)</section>', html, flags=re.S):
        body = block.split('<section id="solution-content">', 1)[-1]
        body = re.sub(r"<code.*?</code>|<pre.*?</pre>|<div class=\"highlight.*?</div>", " ", body, flags=re.S)
        text = re.sub(r"<[^>]+>", " ", body)
        counts.append(len(re.findall(r"[A-Za-z][A-Za-z'-]*", text)))
    return counts


def test_solution_prose_words_leaves_code_out():
    html = ('<div class="solution dropdown admonition" id="s"><p class="admonition-title">Solution</p>'
            '<section id="solution-content"><p><code>crsbench notebook x -p a b</code>. Two words.</p></section></div>')
    assert solution_prose_words(html) == [2]


@pytest.mark.slow
def test_exercise_solutions_answer_in_prose(built_book):
    """Issue 29: at least 15 solutions, 80 % of them with at least 25 words of prose besides code."""
    counts = []
    for page in toc_pages():
        if page.startswith("notebooks/"):
            counts += solution_prose_words((built_book / f"{page}.html").read_text(encoding="utf-8"))
    assert len(counts) >= 15, counts
    assert sum(c >= 25 for c in counts) >= 0.8 * len(counts), counts


def ranked_references(html: str) -> list[str]:
    """Captions of the tables that give an encoder marked "(reference)" a rank (every page leaves it unranked)."""
    found = []
    for table in re.findall(r"<table[^>]*>(.*?)</table>", html, flags=re.S):
        head = re.search(r"<thead>(.*?)</thead>", table, flags=re.S)
        if not head:
            continue
        names = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", head.group(1), flags=re.S)]
        # A row-index header cell (blank) is not a column of the body rows.
        names = [n for n in names if n]
        if "rank" not in names:
            continue
        column = names.index("rank")
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>", 1)[-1], flags=re.S):
            cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)]
            if cells and "(reference)" in cells[0] and len(cells) > column and cells[column] not in ("–", "-", ""):
                caption = re.search(r"<caption>(.*?)</caption>", table, flags=re.S)
                found.append(caption.group(1)[:60] if caption else "a table without caption")
    return found


def test_ranked_references_finds_a_ranked_reference():
    table = ("<table><caption>Table 1: x</caption><thead><tr><th>encoder</th><th>rank</th></tr></thead>"
             "<tbody><tr><td>a</td><td>1</td></tr><tr><td>r (reference)</td><td>{}</td></tr></tbody></table>")
    assert ranked_references(table.format("2")) == ["Table 1: x"]
    assert ranked_references(table.format("–")) == []


@pytest.mark.slow
def test_no_page_ranks_a_reference(built_book):
    for page in toc_pages():
        html = (built_book / f"{page}.html").read_text(encoding="utf-8")
        assert not ranked_references(html), f"{page}: {ranked_references(html)}"


def doubled_articles(html: str) -> list[str]:
    """'the The method'-like phrases: an article before a link whose text (a page title) starts with its own."""
    text = re.sub(r"<script.*?</script>|<style.*?</style>", "", html, flags=re.S)
    text = re.sub(r"<[^>]+>", "", text)
    return re.findall(r"\b(?:the|The|a|an) (?:The|A|An) \w+", text)


def test_doubled_articles_are_found():
    assert doubled_articles('see the <a href="m.html">The method</a> page') == ["the The method"]
    assert doubled_articles('see <a href="m.html">The method</a> and the glossary') == []


@pytest.mark.slow
def test_no_doubled_article_before_a_page_title(built_book):
    for page in toc_pages():
        found = doubled_articles((built_book / f"{page}.html").read_text(encoding="utf-8"))
        assert not found, f"{page}: {found}"
