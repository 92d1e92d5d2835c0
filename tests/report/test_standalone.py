import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from crsbench_lib.report.standalone import GLUE_PREFIX, glued_outputs, standalone_markdown, standalone_notebook

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
FIGURE = """```{glue:figure} fig-a
:name: fig-a
:alt: Bar chart of ECE by calibrator

{glue:md}`cohort_note` Mean ECE before and after, see {numref}`fig-a` and {cite:p}`guo2017calibration`.
```"""


def _glue(name, data):
    return new_output("display_data", data={GLUE_PREFIX + k: v for k, v in data.items()},
                      metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}})


def _notebook():
    nb = new_notebook()
    code = new_code_cell("glue")
    code.outputs = [_glue("fig-a", {"image/png": PNG}), _glue("cohort_note", {"text/markdown": "**Simulated cohort.**"})]
    nb.cells = [code, new_markdown_cell(FIGURE), new_markdown_cell("```{index} single: x\n```\n\nSee {term}`AUROC`.")]
    return nb


def test_glued_outputs_are_found_by_name():
    glued = glued_outputs(_notebook())
    assert glued["fig-a"]["image/png"] == PNG and glued["cohort_note"]["text/markdown"] == "**Simulated cohort.**"


def test_a_glued_figure_becomes_an_html_figure_with_alt_and_caption():
    out = standalone_notebook(_notebook())
    figure = out.cells[1].source
    assert figure.startswith('<figure id="fig-a"><img src="data:image/png;base64,')
    assert 'alt="Bar chart of ECE by calibrator"' in figure
    assert "<figcaption><strong>Simulated cohort.</strong> Mean ECE before and after, see the figure below and (guo2017calibration).</figcaption>" in figure
    # Roles and index directives become text; glue outputs leave the code cells.
    assert out.cells[2].source.strip() == "See AUROC."
    assert out.cells[0].outputs == []
    nbformat.validate(out)


def test_exercises_and_admonitions_read_as_text():
    text = standalone_markdown(":::{admonition} Learning objectives\n:class: tip\n- a\n:::\n\n````{exercise}\n:label: e\n\nDo x.\n````", {})
    assert "**Learning objectives**" in text and "- a" in text and "**Exercise.** Do x." in text
    assert "{" not in text
