"""Every notebook executes through papermill and shows its figure and its table."""

import json

import nbformat
import pytest

from crsbench_lib.report.notebooks import available_notebooks, error_outputs, execute_notebook, notebook_parameters
from crsbench_lib.report.takeaway import TAKEAWAY_TITLE, takeaway_key

NOTEBOOKS = sorted(available_notebooks())


def _outputs(path):
    nb = nbformat.read(path, as_version=4)
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes_with_figure_and_table(name, book_inputs):
    declared = notebook_parameters(available_notebooks()[name])
    params = {k: v for k, v in book_inputs.items() if k in declared}
    result = execute_notebook(name, params, book_inputs["executed"] / f"{name}.ipynb", cache=book_inputs["cache"])
    assert error_outputs(result.output) == []
    outputs = _outputs(result.output)
    # Figures are glued for numbered MyST figures (myst-nb stores them under a prefixed mime type).
    assert any(key.endswith("image/png") for o in outputs for key in o.get("data", {})), f"{name}: no figure"
    assert any("<table" in o.get("data", {}).get("text/html", "") for o in outputs), f"{name}: no table"
    nb = nbformat.read(result.output, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and book_inputs["results_path"] in injected[0].source
    # The injected values stay in the notebook but off the page.
    assert "remove-cell" in injected[0].metadata["tags"]
    # The banner is the first output of the chapter, right under its title.
    first = next(o for o in outputs if "text/html" in o.get("data", {}))
    assert "crs-simulated-banner" in first["data"]["text/html"], f"{name}: no banner at the top"
    assert "<details" in first["data"]["text/html"], f"{name}: no provenance block"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_chapter_layout(name):
    """Parameters off the page, objectives, the study beside ours, teaching sections, numbered figures with alt text."""
    nb = nbformat.read(available_notebooks()[name], as_version=4)
    parameters = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert "remove-cell" in parameters[0].metadata["tags"]
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for heading in ("Learning objectives", "## The question", "## The method", "## What this teaches, and its limits",
                    "## Is this real?", "## Exercises", "{solution}"):
        assert heading in text, f"{name}: no {heading!r}"
    # Lessons sorted by the library (report.sentences.lessons), after the teaching text and before the exercises.
    assert text.index("## What this teaches") < text.index("## Is this real?") < text.index("## Exercises"), name
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "describe_lessons(" in code, f"{name}: an 'Is this real?' section not written by describe_lessons"
    # Every exercise asks for a prediction first; every solution is more than a command.
    exercises = text.split("## Exercises", 1)[1]
    assert exercises.count("{exercise}") >= 1, name
    assert exercises.count("Predict") >= exercises.count("{exercise}"), f"{name}: an exercise without a prediction"
    # One key-takeaway box, glued by the library's checked builder, above the teaching text.
    key = takeaway_key(name)
    boxes = [c.source for c in nb.cells if c.cell_type == "markdown" and f"{{admonition}} {TAKEAWAY_TITLE}" in c.source]
    assert len(boxes) == 1 and f"{{glue:md}} {key}" in boxes[0], f"{name}: not one {TAKEAWAY_TITLE!r} box gluing {key}"
    assert f'glue_takeaway("{name}",' in code, f"{name}: the takeaway is not glued by glue_takeaway"
    assert text.index(f"{{glue:md}} {key}") < text.index("## What this teaches"), f"{name}: takeaway after the teaching"
    figures = [c.source for c in nb.cells if c.cell_type == "markdown" and "{glue:figure}" in c.source]
    assert figures, f"{name}: no numbered figure"
    for source in figures:
        assert ":alt: " in source and ":name: fig-" in source, name
        assert "{glue:md}`cohort_note`" in source, f"{name}: a caption without the cohort note"
    # Every cell has its own id (nbformat 4.5; a missing one becomes an error in later nbformat versions).
    # Read as stored: nbformat.read fills a missing id with a random one.
    ids = [cell.get("id") for cell in json.loads(available_notebooks()[name].read_text())["cells"]]
    assert None not in ids and len(set(ids)) == len(ids), f"{name}: a cell without an id, or two with one"
    # Every visible code cell hides its input.
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert {"remove-input", "remove-cell", "hide-input"} & set(cell.metadata.get("tags", [])), (name, cell.source[:60])


def _table_rows(html):
    import html as html_lib
    import re

    rows = []
    for row in re.findall(r"<tr.*?</tr>", re.sub(r"<style.*?</style>", "", html, flags=re.S), flags=re.S):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)
        rows.append([html_lib.unescape(re.sub(r"<.*?>", "", c)).replace("\u200b", "").strip() for c in cells])
    return rows


@pytest.mark.slow
def test_leading_tier_says_every_point_outside_its_own_interval(book_inputs):
    """Fails if the chapter's table shows a point outside its interval that its prose does not name."""
    declared = notebook_parameters(available_notebooks()["leading_tier"])
    params = {k: v for k, v in book_inputs.items() if k in declared}
    result = execute_notebook("leading_tier", params, book_inputs["executed"] / "leading_tier.ipynb",
                              cache=book_inputs["cache"])
    outputs = _outputs(result.output)
    prose = " ".join("".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {}))
    table = next(o["data"]["text/html"] for o in outputs
                 if "Bootstrap summary" in o.get("data", {}).get("text/html", ""))
    rows = _table_rows(table)
    header = next(r for r in rows if "point inside" in r)
    body = [r for r in rows if len(r) == len(header) and r != header]
    outside = [r[header.index("encoder")].removesuffix(" (reference)") for r in body
               if r[header.index("point inside")] in ("no", "False")]
    assert body
    if outside:
        assert f"For {len(outside)} of {len(body)} encoders the point CRS lies outside its own" in prose
        for name in outside:
            assert f"{name} (" in prose.split("lies outside its own")[1], name
    else:
        assert "Every point CRS lies inside its own" in prose


def _swallowed_tables(source: str) -> list[str]:
    """Bare ``show_table(...)`` calls that are not a cell's last statement (Jupyter shows only the last)."""
    import ast

    body = ast.parse(source).body
    return [
        ast.unparse(stmt)[:60]
        for stmt in body[:-1]
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
        and getattr(stmt.value.func, "attr", getattr(stmt.value.func, "id", None)) == "show_table"
    ]


def test_swallowed_table_detector():
    assert _swallowed_tables("tables.show_table(a)\nx = 1") == ["tables.show_table(a)"]
    assert _swallowed_tables("display(tables.show_table(a))\ntables.show_table(b)") == []


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_table_reaches_the_page(name):
    nb = nbformat.read(available_notebooks()[name], as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert _swallowed_tables(cell.source) == [], f"{name}: wrap the table in display(), or Jupyter drops it"


def _bare_last_calls(source: str, name: str) -> list[str]:
    """A cell whose last statement is a bare ``name(...)`` call: Jupyter displays its return value."""
    import ast

    body = ast.parse(source).body
    if not body:
        return []
    last = body[-1]
    called = getattr(last, "value", None)
    if isinstance(last, ast.Expr) and isinstance(called, ast.Call) and \
            getattr(called.func, "attr", getattr(called.func, "id", None)) == name:
        return [ast.unparse(last)[:60]]
    return []


def test_bare_last_call_detector():
    assert _bare_last_calls('x = 1\nglue_takeaway("zoo", "t")', "glue_takeaway") == ["glue_takeaway('zoo', 't')"]
    assert _bare_last_calls('takeaway = glue_takeaway("zoo", "t")', "glue_takeaway") == []
    assert _bare_last_calls('glue_takeaway("zoo", "t")\nx = 1', "glue_takeaway") == []
    assert _bare_last_calls("", "glue_takeaway") == []


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_takeaway_string_reaches_the_page(name):
    """A bare ``glue_takeaway(...)`` as a cell's last line shows its return value, the takeaway again as a raw
    string in a wide scrolling box under the cell (the lecturer's read: zoo, four_axes, cohort, calibration)."""
    nb = nbformat.read(available_notebooks()[name], as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert _bare_last_calls(cell.source, "glue_takeaway") == [], \
                f"{name}: assign it (takeaway = glue_takeaway(...)), or the page shows the string"
