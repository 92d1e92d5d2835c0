"""Every notebook executes through papermill and shows its figure and its table."""

import nbformat
import pytest

from crsbench_lib.report.notebooks import available_notebooks, error_outputs, execute_notebook, notebook_parameters

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
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{name}: no figure"
    assert any("<table" in o.get("data", {}).get("text/html", "") for o in outputs), f"{name}: no table"
    nb = nbformat.read(result.output, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and book_inputs["results_path"] in injected[0].source
    if "simulated" in declared and name != "registry":
        assert any("Simulated cohort" in o.get("data", {}).get("text/html", "") for o in outputs), f"{name}: no banner"
