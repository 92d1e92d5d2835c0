"""The book's page "How each number is computed": per chapter, the library functions its cells call.

Every chapter keeps its library calls in the page (collapsed), and its method
section links to its part of this page, where each function the chapter calls
is named with the first line of its documentation and, in a dropdown, its whole
documentation rendered by Sphinx's autodoc (numpy-style docstrings through
napoleon: parameters, returns, examples, and the formula and reference where a
metric has one). The page is a build product, like the executed notebooks: the
book build writes it from the notebooks' code (:func:`api_markdown`, staged by
:func:`crsbench_lib.report.book.stage_book`), so it cannot drift from what the
chapters run, and no copy of it is kept in the repository.
"""

from __future__ import annotations

import ast
import importlib
import re
import inspect
import json
import os
from pathlib import Path


PACKAGE = "crsbench_lib"
#: Where the numbers are computed: a chapter's calls into these modules are listed (its calls that lay out the
#: page, phrase the findings or draw the figures are in its cells, not here).
COMPUTING = ("crsbench_lib.scoring.", "crsbench_lib.metrics.", "crsbench_lib.registry.", "crsbench_lib.data.",
             "crsbench_lib.report.summaries.", "crsbench_lib.report.differences.", "crsbench_lib.report.comparison.",
             "crsbench_lib.report.world.")
PAGE_LABEL = "api"  # the page's label; a chapter's part is "api-<chapter>"
TITLE = "How each number is computed"


def chapter_label(chapter: str) -> str:
    """The label of a chapter's part of the page (``{ref}`` target), e.g. ``api-agreement``."""
    return f"{PAGE_LABEL}-{chapter.replace('_', '-')}"


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def chapter_calls(path: str | os.PathLike[str]) -> list[str]:
    """Dotted names of the package's functions and classes a notebook's code cells call, in order of first call.

    Names imported from the package (``from crsbench_lib.x import f``) and
    attributes of imported package modules (``from crsbench_lib import m``;
    ``m.f(...)``) count; calls of anything else do not.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> cell = {"cell_type": "code", "source": ["from crsbench_lib.scoring import agreement\\n",
    ...         "from crsbench_lib.report.grammar import fmt\\n", "fmt(agreement.score_agreement(t).tau_b, 3)"]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "n.ipynb"
    >>> _ = path.write_text(json.dumps({"cells": [cell]}))
    >>> chapter_calls(path)
    ['crsbench_lib.report.grammar.fmt', 'crsbench_lib.scoring.agreement.score_agreement']
    """
    names: dict[str, str] = {}  # local name -> dotted package name
    called: list[str] = []
    trees = [ast.parse(source) for source in _code_cells(Path(path))]
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == PACKAGE:
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for tree in trees:
        calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            func = call.func
            if isinstance(func, ast.Name) and func.id in names:
                dotted = names[func.id]
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names:
                dotted = f"{names[func.value.id]}.{func.attr}"
            else:
                continue
            if dotted not in called:
                called.append(dotted)
    return called


def resolve(dotted: str) -> object | None:
    """The function or class a dotted name names (None for a module or anything else)."""
    module, _, attr = dotted.rpartition(".")
    try:
        value = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None
    return value if inspect.isfunction(value) or inspect.isclass(value) else None


def _title(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        text = "".join(cell["source"]).strip()
        if cell["cell_type"] == "markdown" and text.startswith("# "):
            return text.splitlines()[0][2:].strip()
    return path.stem


# A Sphinx role of a docstring (":func:`~a.b`") read as the code span it names ("`b`"): the page is MyST, not rST.
_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc):`(~?)([^`]+)`")


def _summary(value: object) -> str:
    doc = inspect.getdoc(value) or ""
    first = doc.split("\n\n")[0].replace("\n", " ").strip() or "(no documentation)"
    # "~" asks for the last part of the name only, as Sphinx shows it.
    return _ROLE.sub(lambda m: f"`{m.group(2).rpartition('.')[2] if m.group(1) else m.group(2)}`", first)


def _entry(dotted: str, value: object) -> str:
    summary = _summary(value)
    directive = "autoclass" if inspect.isclass(value) else "autofunction"
    # The documentation is rendered by autodoc from the object itself, in a dropdown, so a reader opens only
    # what they need; the reStructuredText block is what autodoc's directives expect.
    return (f"- `{dotted}`: {summary}\n\n"
            f"  :::{{admonition}} Documentation of `{dotted.rpartition('.')[2]}`\n"
            f"  :class: dropdown\n\n  ```{{eval-rst}}\n  .. {directive}:: {dotted}\n  ```\n  :::\n")


def api_markdown(notebook_dir: str | os.PathLike[str], chapters: list[str]) -> str:
    """The page's Markdown for ``chapters`` (notebook names, in reading order).

    Parameters
    ----------
    notebook_dir : path
        The folder of the chapters' notebooks.
    chapters : list of str
        Notebook names without suffix.

    Returns
    -------
    str
    """
    lines = [f"({PAGE_LABEL})=", f"# {TITLE}", "",
             "Every chapter computes its tables and figures by calling this package's functions; the calls are in",
             "the chapter's collapsed cells. Here, chapter by chapter, are the package functions that compute its",
             "numbers (the calls that lay out the page, phrase its findings or draw its figures stay in its cells),",
             "with the first line of their documentation; open a dropdown for the whole documentation (parameters,",
             "returns, an example, and a metric's formula and reference), or type `help(name)` in Python.",
             "The book build writes this page from the chapters' code (`crsbench_lib.report.api_page`).", ""]
    shown: dict[str, str] = {}  # function -> the chapter whose part shows its whole documentation
    for chapter in chapters:
        path = Path(notebook_dir) / f"{chapter}.ipynb"
        title = _title(path)
        lines += [f"({chapter_label(chapter)})=", f"## {title}", ""]
        computing = [d for d in chapter_calls(path) if d.startswith(COMPUTING) and resolve(d) is not None]
        if not computing:
            lines += ["This chapter's cells call no computing function of the package: its numbers come from a "
                      "command its collapsed cells run (and show), whose documentation is its `--help`.", ""]
        for dotted in computing:
            if dotted in shown:
                summary = _summary(resolve(dotted))
                lines.append(f"- `{dotted}`: {summary} (documentation under {shown[dotted]}, above)\n")
            else:
                shown[dotted] = title
                lines.append(_entry(dotted, resolve(dotted)))
    return "\n".join(lines).rstrip() + "\n"
