"""Every interpretation a chapter shows goes through ``report.takeaway.findings`` (issue 30, item 3).

A page whose table does not fit its standard states no finding: its takeaway
box says so, and so must every longer paragraph that reads its scores. The
chapters are read with ``ast``: a markdown output built by a library call is
either shown through :func:`~crsbench_lib.report.takeaway.findings` or built
only from the pure descriptions listed here (the data, its checks, the fit
itself, definitions); every "Is this real?" section and every exercise's
solution goes through ``findings``.
"""

from __future__ import annotations

import ast
import json

import pytest

from crsbench_lib.report.notebooks import available_notebooks

NOTEBOOKS = sorted(available_notebooks())

# Library calls that describe the data, the run or a definition, never a finding (and the look-ups they read):
# they may be shown as they are.
DESCRIPTIONS = frozenset({
    "world.run_cost", "zoo_families", "summaries.reference_encoders",
    "own_data.prevalence_markdown", "own_data.fit_markdown", "own_data.study_label", "own_data.site_text",
    "own_data.site_caption", "own_data.zoo_checks_intro", "own_data.cohort_method", "own_data.cohort_limits",
    "own_data.sheets_caption", "own_data.read_run_data", "describe_measurement_budget", "describe_counts", "describe_tier_definition",
    "describe_encoder_counts", "describe_unaudited", "describe_new_domain_encoders", "describe_registry_cohort",
    "describe_standard_scales", "describe_retention_scale", "zoo_summary",
})


def _library_names(tree: ast.Module) -> set[str]:
    """Names a chapter imports from the package: functions (``describe_x``) and modules (``own_data``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("crsbench_lib"):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _called(node: ast.AST, library: set[str]) -> set[str]:
    """The library calls inside ``node``: ``f`` for an imported function, ``module.f`` for one of a module."""
    calls = set()
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        func = call.func
        if isinstance(func, ast.Name) and func.id in library:
            calls.add(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in library:
            calls.add(f"{func.value.id}.{func.attr}")
    return calls


def _name(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else ""


def _chapter(name: str) -> tuple[ast.Module, list[ast.Call]]:
    cells = json.loads(available_notebooks()[name].read_text(encoding="utf-8"))["cells"]
    source = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    tree = ast.parse(source)
    return tree, [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_interpretations_go_through_findings(name):
    tree, calls = _chapter(name)
    library = _library_names(tree)
    # A markdown output shown as it is is built from descriptions only.
    for call in (c for c in calls if _name(c) == "Markdown"):
        found = _called(call, library) - DESCRIPTIONS
        assert not found, f"{name}: {sorted(found)} shown without findings() (line {call.lineno} of its code)"
    routed = [c for c in calls if _name(c) == "findings"]
    inside = {id(n) for c in routed for n in ast.walk(c)}
    # "Is this real?" states this page's lessons; the solutions answer from this page's numbers.
    lessons = [c for c in calls if _name(c) == "describe_lessons"]
    assert lessons and all(id(c) in inside for c in lessons), f"{name}: an 'Is this real?' section without findings()"
    for call in (c for c in calls if _name(c) == "glue" and c.args and isinstance(c.args[0], ast.Constant)
                 and str(c.args[0].value).startswith("sol-")):
        assert len(call.args) > 1 and isinstance(call.args[1], ast.Call) and _name(call.args[1]) == "findings", \
            f"{name}: solution {call.args[0].value!r} glued without findings()"
    if routed:
        assert "findings" in library, f"{name}: findings() used but not imported from the package"


def test_the_rule_catches_a_finding_shown_as_it_is():
    """The check itself: a describe_* call shown through a bare Markdown is caught, a description is not."""
    tree = ast.parse("from crsbench_lib.report.sentences.agreement import describe_floor_axis\n"
                     "from crsbench_lib.report import own_data\n"
                     "display(Markdown(describe_floor_axis(x)))\ndisplay(Markdown(own_data.fit_markdown(r, s)))\n")
    library = _library_names(tree)
    shown = [_called(c, library) - DESCRIPTIONS for c in ast.walk(tree)
             if isinstance(c, ast.Call) and _name(c) == "Markdown"]
    assert shown == [{"describe_floor_axis"}, set()]
