import nbformat
import pytest
import yaml
from nbformat.v4 import new_notebook

from crsbench_lib.errors import NotebookError
from crsbench_lib.report import book


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / "book").mkdir(parents=True)
    (root / "_config.yml").write_text("title: T\nparse:\n  myst_enable_extensions: [dollarmath]\n")
    toc = {"format": "jb-book", "root": "book/intro", "parts": [
        {"caption": "A", "chapters": [{"file": "notebooks/one"}, {"file": "notebooks/two"}]},
        {"caption": "B", "chapters": [{"file": "notebooks/three"}]},
        {"caption": "C", "chapters": [{"file": "book/extra"}]},
    ]}
    (root / "book" / "_toc.yml").write_text(yaml.safe_dump(toc))
    (root / "book" / "intro.md").write_text("# Intro\n{{ provenance }}\n")
    (root / "book" / "extra.md").write_text("# Extra\n")
    return root


def _executed(tmp_path, *names):
    out = {}
    for name in names:
        path = tmp_path / f"exec-{name}.ipynb"
        nbformat.write(new_notebook(), path)
        out[name] = path
    return out


def test_stage_prunes_missing_chapters_and_adds_substitutions(project, tmp_path):
    stage, skipped = book.stage_book(_executed(tmp_path, "one"), tmp_path / "stage", {"provenance": "run X"}, root=project)
    assert skipped == ["notebooks/two", "notebooks/three"]
    toc = yaml.safe_load((stage / "_toc.yml").read_text())
    assert book._toc_files(toc) == ["book/intro", "notebooks/one", "book/extra"]
    assert [p["caption"] for p in toc["parts"]] == ["A", "C"]
    config = yaml.safe_load((stage / "_config.yml").read_text())
    assert config["parse"]["myst_substitutions"] == {"provenance": "run X"}
    assert "substitution" in config["parse"]["myst_enable_extensions"]
    assert (stage / "notebooks" / "one.ipynb").is_file() and (stage / "book" / "intro.md").is_file()


def test_stage_removes_stale_pages_and_keeps_unchanged_files(project, tmp_path):
    stage, _ = book.stage_book(_executed(tmp_path, "one", "two"), tmp_path / "stage", root=project)
    page = stage / "notebooks" / "one.ipynb"
    before = page.stat().st_mtime_ns
    stage, _ = book.stage_book(_executed(tmp_path, "one"), tmp_path / "stage", root=project)
    assert not (stage / "notebooks" / "two.ipynb").exists()
    assert page.stat().st_mtime_ns == before  # same content: not rewritten, so Sphinx skips it


def test_missing_prose_page_is_an_error(project, tmp_path):
    (project / "book" / "extra.md").unlink()
    with pytest.raises(NotebookError, match="names page 'book/extra'"):
        book.stage_book({}, tmp_path / "stage", root=project)


def test_shipped_toc_names_every_shipped_notebook_and_page():
    from crsbench_lib.paths import project_root
    from crsbench_lib.report.notebooks import available_notebooks

    pages = book.toc_pages()
    assert {f"notebooks/{n}" for n in available_notebooks()} <= set(pages)
    assert "notebooks/registry" in pages
    for page in pages:
        if page.startswith("book/") and page != book.API_PAGE:  # the API page is written at build time
            assert (project_root() / f"{page}.md").is_file(), page


def test_launch_buttons_only_with_a_public_repository(project, tmp_path):
    stage, _ = book.stage_book({}, tmp_path / "stage", root=project)
    config = yaml.safe_load((stage / "_config.yml").read_text())
    assert "repository" not in config and "launch_buttons" not in config
    stage, _ = book.stage_book({}, tmp_path / "stage2", root=project, repository="https://github.com/o/r")
    config = yaml.safe_load((stage / "_config.yml").read_text())
    assert config["repository"]["url"] == "https://github.com/o/r"
    assert config["launch_buttons"]["binderhub_url"] == book.BINDER_URL
    assert config["launch_buttons"]["colab_url"] == book.COLAB_URL
    assert config["launch_buttons"]["thebe"] is False


def test_execution_table_lists_every_chapter():
    from pathlib import Path

    from crsbench_lib.report.notebooks import ExecutionResult

    table = book.execution_table([ExecutionResult("one", Path("x"), True, "a" * 64, 1.25),
                                  ExecutionResult("two", Path("y"), False, "b" * 64, 12.0)])
    lines = table.splitlines()
    assert len(lines) == 4
    assert "{doc}`../notebooks/one` | reused from the execution cache | 1.2 |" in lines[2]
    assert "executed in this build | 12.0 | `bbbbbbbbbbbb`" in lines[3]


def test_shipped_config_has_no_thebe_and_loads_the_book_extension():
    from crsbench_lib.paths import project_root

    config = yaml.safe_load((project_root() / "_config.yml").read_text())
    assert config["launch_buttons"]["thebe"] is False
    assert "crsbench_lib.report.sphinx_ext" in config["sphinx"]["extra_extensions"]
    assert config["bibtex_bibfiles"] == ["book/references.bib"]


def _prose_lines(text):
    """The lines of a MyST page outside code blocks (directives such as ```{admonition} count as prose)."""
    fence = None
    for line in text.splitlines():
        if line.startswith("```"):
            if fence is None:
                fence = line
            elif line.strip() == "```":
                fence = None
            continue
        if fence is None or fence.startswith("```{"):
            yield line


def test_every_substitution_of_the_prose_has_a_default_in_the_config():
    """A page built without a run (or a key render_book forgot) shows the config's default, never '{{ key }}'."""
    import re

    from crsbench_lib.paths import project_root

    root = project_root()
    defaults = yaml.safe_load((root / book.CONFIG_FILE).read_text())["parse"]["myst_substitutions"]
    used = {key for page in (root / book.BOOK_DIR).glob("*.md")
            for line in _prose_lines(page.read_text(encoding="utf-8"))
            for key in re.findall(r"\{\{ (\w+) \}\}", line)}
    assert {"cohort_text", "fit_report", "rebuild", "provenance"} <= used
    assert used <= set(defaults), sorted(used - set(defaults))


def test_a_chapter_the_run_cannot_fill_is_left_out_with_the_reason(table):
    names = ["cohort", "transfer", "agreement"]
    assert book.runnable_chapters(table, names) == (names, {})  # both arms
    kept, lacking = book.runnable_chapters(table[table["arm"] == "frozen"], names)
    assert kept == ["cohort", "agreement"]
    assert lacking == {"transfer": book.CHAPTER_NEEDS["transfer"][1]} and "no LoRA arm" in lacking["transfer"]
