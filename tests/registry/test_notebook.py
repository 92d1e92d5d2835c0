"""The registry chapter runs end to end (papermill) and shows zero displacement."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest

from crsbench_lib.paths import notebooks_dir
from crsbench_lib.registry import Registry
from crsbench_lib.results.io import write_results

NOTEBOOK = notebooks_dir() / "registry.ipynb"


def test_notebook_is_stored_without_outputs_and_declares_its_parameters() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    for name in ("results_path", "standard_path", "registry_path", "held_out", "n_held_out", "lora_candidates"):
        assert f"{name} = " in tagged[0].source
        assert any(f"`{name}`" in c.source for c in nb.cells if c.cell_type == "markdown"), name


@pytest.mark.slow
def test_notebook_executes(tmp_path: Path, small_results: pd.DataFrame) -> None:
    papermill = pytest.importorskip("papermill")
    table = small_results[(small_results["arm"] == "frozen") | small_results["encoder"].isin(["enc01", "enc06"])]
    results = write_results(table, tmp_path / "results.parquet")
    registry = tmp_path / "book-registry.sqlite"
    out = tmp_path / "registry.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK), str(out), cwd=str(NOTEBOOK.parent), progress_bar=False, kernel_name="python3",
        parameters={"results_path": str(results), "registry_path": str(registry), "profile": "quick",
                    "held_out": ["enc02", "enc05"]},
    )
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # The chapter's figure (before against after; the bars of each move are the insertion chapter's) is glued
    # (myst-nb prefixes the mime type) for a numbered caption.
    assert sum(any(k.endswith("image/png") for k in o.get("data", {})) for o in outputs) == 1
    text = "".join(str(o.get("data", {}).get("text/markdown", "")) for o in outputs)
    assert "6 of 6 published CRS values are the same double" in text
    assert "registry verify: OK" in text
    with Registry(registry) as reg:
        listed = reg.entries()
    assert sorted(listed["candidate"]) == sorted(
        [f"enc{i:02d}" for i in range(8)] + ["enc01 [lora]", "enc06 [lora]"]
    )
