"""The leading tier is the same set on every page that names it (issue 27: one definition everywhere).

The leading-tier chapter and the selection gate each run the two-level
bootstrap and glue the tier they name under
:data:`~crsbench_lib.report.sentences.leading_tier.TIER_GLUE_KEY`; the tests
execute both on the quick profile and compare what they glued, what their prose
says, and the definition each prints.
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from crsbench_lib.report.grammar import and_list
from crsbench_lib.report.notebooks import available_notebooks, execute_notebook, notebook_parameters
from crsbench_lib.report.sentences.leading_tier import LEADING_TIER_DEFINITION, TIER_GLUE_KEY

GLUE_MIME = "application/papermill.record/text/plain"
PAGES = ("leading_tier", "selection_gate")


def glued(path, key: str) -> str:
    """The text glued under ``key`` in an executed notebook (myst-nb's hidden glue output)."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("metadata", {}).get("scrapbook", {}).get("name") == key:
                return ast.literal_eval(output["data"][GLUE_MIME])
    raise AssertionError(f"{path}: nothing glued under {key!r}")


def prose(path) -> str:
    nb = nbformat.read(path, as_version=4)
    return " ".join("".join(o["data"]["text/markdown"]) for c in nb.cells for o in c.get("outputs", [])
                    if "text/markdown" in o.get("data", {}))


def test_glued_reads_back_what_was_glued(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output("display_data", data={GLUE_MIME: "'a, b'"},
                                           metadata={"scrapbook": {"name": TIER_GLUE_KEY, "mime_prefix": ""}})]
    nb.cells = [cell]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    assert glued(path, TIER_GLUE_KEY) == "a, b"
    with pytest.raises(AssertionError, match="nothing glued"):
        glued(path, "other")


@pytest.mark.slow
def test_the_leading_tier_and_gate_pages_name_the_same_tier(book_inputs):
    executed = {}
    for name in PAGES:
        declared = notebook_parameters(available_notebooks()[name])
        params = {k: v for k, v in book_inputs.items() if k in declared}
        executed[name] = execute_notebook(name, params, book_inputs["executed"] / f"{name}.ipynb",
                                          cache=book_inputs["cache"]).output
    tiers = {name: glued(path, TIER_GLUE_KEY).split(", ") for name, path in executed.items()}
    assert tiers["leading_tier"] == tiers["selection_gate"] and tiers["leading_tier"][0]
    members = tiers["leading_tier"]
    tier_text = prose(executed["leading_tier"])
    if len(members) > 1:
        assert f"The leading tier holds {len(members)} candidates: {and_list(members)}." in tier_text
    else:
        assert f"{members[0]} alone forms the leading tier" in tier_text
    assert f"coverage of the best) is {and_list(members)}." in prose(executed["selection_gate"])
    for path in executed.values():  # both pages print the one wording
        assert LEADING_TIER_DEFINITION[1:] in " ".join(prose(path).split())
