import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from crsbench_lib.errors import NotebookError
from crsbench_lib.report import notebooks


def _write(folder, name, params_source, body="print(alpha)"):
    params = new_code_cell(params_source)
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[new_markdown_cell("# t"), params, new_code_cell(body)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(exist_ok=True)
    nbformat.write(nb, folder / f"{name}.ipynb")
    return folder / f"{name}.ipynb"


@pytest.fixture
def folder(tmp_path):
    src = tmp_path / "nbs"
    _write(src, "alpha", 'alpha = 1  # a number\nresults_path = None\nnames = ["a", "b"]')
    _write(src, "beta", 'beta = {"x": 1}', body="print(beta)")
    return src


def test_parameters_and_errors(folder):
    assert notebooks.notebook_parameters(folder / "alpha.ipynb") == {"alpha": 1, "results_path": None, "names": ["a", "b"]}
    with pytest.raises(NotebookError, match="unknown notebook 'gamma'; valid notebooks: alpha, beta"):
        notebooks.notebook_path("gamma", folder)
    with pytest.raises(NotebookError, match="notebook 'alpha' has no parameter 'alfa'; valid parameters: alpha, results_path, names"):
        notebooks.check_parameters("alpha", {"alfa": 2}, folder)
    assert notebooks.check_parameters("alpha", {"alpha": 2}, folder)["alpha"] == 2
    bad = _write(folder, "bad", "x = 1 + 1")
    with pytest.raises(NotebookError, match="must default to a literal"):
        notebooks.notebook_parameters(bad)
    nb = nbformat.read(bad, as_version=4)
    nb.cells[1].metadata["tags"] = []
    nbformat.write(nb, bad)
    with pytest.raises(NotebookError, match="expected one code cell tagged 'parameters', found 0"):
        notebooks.notebook_parameters(bad)


def test_cache_key_tracks_parameters_files_source_and_code(folder, tmp_path):
    source = folder / "alpha.ipynb"
    results = tmp_path / "r.parquet"
    results.write_bytes(b"one")
    base = {"alpha": 1, "results_path": str(results), "names": ["a", "b"]}
    key = notebooks.cache_key(source, base, code="c1")
    assert key == notebooks.cache_key(source, dict(base), code="c1")
    assert key != notebooks.cache_key(source, {**base, "alpha": 2}, code="c1")
    assert key != notebooks.cache_key(source, base, code="c2")
    results.write_bytes(b"two")  # same path, new content
    assert key != notebooks.cache_key(source, base, code="c1")
    results.write_bytes(b"one")
    assert key == notebooks.cache_key(source, base, code="c1")
    nb = nbformat.read(source, as_version=4)
    nb.cells[0].source = "# changed prose"
    nbformat.write(nb, source)
    assert key != notebooks.cache_key(source, base, code="c1")
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="x")]  # outputs do not count
    nb.metadata["extra"] = 1
    nbformat.write(nb, source)
    assert notebooks.cache_key(source, base, code="c1") == notebooks.cache_key(source, base, code="c1")


def test_execution_cache_and_declared_parameters_only(folder, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    out = tmp_path / "out"
    first = notebooks.execute_all({"alpha": 5, "beta": {"x": 2}}, out, directory=folder, cache=cache)
    assert [r.cached for r in first] == [False, False]
    executed = nbformat.read(out / "alpha.ipynb", as_version=4)
    assert any("5" in o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)

    import papermill

    def boom(*args, **kwargs):
        raise AssertionError("must not execute")

    monkeypatch.setattr(papermill, "execute_notebook", boom)
    again = notebooks.execute_all({"alpha": 5, "beta": {"x": 2}}, out, directory=folder, cache=cache)
    assert [r.cached for r in again] == [True, True]
    # a parameter only beta declares does not touch alpha's cache
    with pytest.raises(AssertionError, match="must not execute"):
        notebooks.execute_all({"alpha": 5, "beta": {"x": 3}}, out, directory=folder, cache=cache)
    monkeypatch.undo()
    changed = notebooks.execute_all({"alpha": 5, "beta": {"x": 3}}, out, directory=folder, cache=cache)
    assert [(r.name, r.cached) for r in changed] == [("alpha", True), ("beta", False)]


def test_failing_cell_is_a_notebook_error_with_the_executed_copy(folder, tmp_path):
    _write(folder, "broken", "alpha = 1", body="raise ValueError('no luck')")
    with pytest.raises(NotebookError, match="notebook 'broken' failed in cell .*ValueError: no luck"):
        notebooks.execute_notebook("broken", {}, tmp_path / "broken.ipynb", directory=folder, cache=tmp_path / "c")
    assert notebooks.error_outputs(tmp_path / "broken.ipynb")
    assert not list((tmp_path / "c").glob("broken-*"))  # failures are never cached


def test_shipped_notebooks_are_stored_without_outputs_and_declare_parameters():
    shipped = notebooks.available_notebooks()
    assert {"agreement", "leading_tier", "coverage", "sensitivity", "insertion", "calibration", "corruption", "lodo",
            "transfer", "cohort", "four_axes", "published", "selection_gate"} <= set(shipped)
    for name, path in shipped.items():
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code"), name
        params = notebooks.notebook_parameters(path)
        assert {"results_path", "profile", "standard_path", "simulated"} <= set(params), name


def test_injected_parameters_are_tagged_off_the_page(tmp_path):
    cell = new_code_cell("alpha = 2")
    cell.metadata["tags"] = [notebooks.INJECTED_TAG]
    path = tmp_path / "n.ipynb"
    nbformat.write(new_notebook(cells=[cell, new_code_cell("x = 1")]), path)
    notebooks.hide_injected_parameters(path)
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].metadata["tags"] == [notebooks.INJECTED_TAG, notebooks.HIDDEN_TAG]
    assert "tags" not in nb.cells[1].metadata
    assert nb.cells[0].source == "alpha = 2"  # the values stay in the notebook


def test_executed_notebooks_carry_no_path_of_the_build_machine(tmp_path):
    path = tmp_path / "n.ipynb"
    nb = new_notebook(cells=[new_code_cell("x = 1")])
    nb.metadata["papermill"] = {"input_path": str(tmp_path / "src" / "notebooks" / "agreement.ipynb"),
                                "output_path": str(tmp_path / "_build" / ".agreement.tmp.ipynb"), "duration": 1.0}
    nbformat.write(nb, path)
    notebooks.strip_machine_paths(path, tmp_path / "src" / "notebooks" / "agreement.ipynb")
    record = nbformat.read(path, as_version=4).metadata["papermill"]
    assert record["input_path"] == record["output_path"] == "notebooks/agreement.ipynb"
    assert record["duration"] == 1.0 and str(tmp_path) not in path.read_text(encoding="utf-8")


def test_export_html_writes_a_standalone_page(tmp_path):
    params = new_code_cell("alpha = 1")
    params.metadata["tags"] = ["parameters", notebooks.HIDDEN_TAG]
    shown = new_code_cell("secret_input = 3")
    shown.metadata["tags"] = ["remove-input"]
    shown.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "visible output"}, execution_count=1)]
    path = tmp_path / "n.ipynb"
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Title here"), params, shown]), path)
    page = notebooks.export_html(path)
    assert page == tmp_path / "n.html"
    text = page.read_text()
    assert "Title here" in text and "visible output" in text
    assert "alpha = 1" not in text and "secret_input" not in text


def test_cache_key_of_the_default_run_follows_its_table(tmp_path, monkeypatch, folder):
    monkeypatch.setenv("CRSBENCH_CACHE", str(tmp_path / "cache"))
    table = tmp_path / "cache" / "runs" / "default" / "results.parquet"
    table.parent.mkdir(parents=True)
    table.write_bytes(b"one")
    params = {"alpha": 1, "results_path": None, "names": ["a", "b"]}
    first = notebooks.cache_key(folder / "alpha.ipynb", params, code="c")
    table.write_bytes(b"two")
    assert notebooks.cache_key(folder / "alpha.ipynb", params, code="c") != first


@pytest.mark.parametrize("damage", ["flip_notebook", "flip_checksum", "truncate_notebook"])
def test_a_damaged_cached_execution_is_executed_again(folder, tmp_path, capsys, damage):
    cache = tmp_path / "cache"
    first = notebooks.execute_notebook("alpha", {"alpha": 5}, tmp_path / "a.ipynb", directory=folder, cache=cache)
    (copy,) = cache.glob("alpha-*.ipynb")
    checksum = notebooks.checksum_path(copy)
    target = checksum if damage == "flip_checksum" else copy
    data = bytearray(target.read_bytes())
    if damage == "truncate_notebook":
        del data[len(data) // 2 :]
    else:
        data[len(data) // 3] ^= 0x04
    target.write_bytes(bytes(data))
    capsys.readouterr()
    again = notebooks.execute_notebook("alpha", {"alpha": 5}, tmp_path / "b.ipynb", directory=folder, cache=cache)
    err = capsys.readouterr().err
    assert not again.cached and again.key == first.key
    assert err.count("\n") == 1 and f"cached notebook {copy} is damaged" in err
    # The fresh execution replaced the damaged copy: the next call is a verified cache hit.
    assert notebooks.execute_notebook("alpha", {"alpha": 5}, tmp_path / "c.ipynb", directory=folder, cache=cache).cached
    assert (tmp_path / "c.ipynb").read_bytes() == copy.read_bytes()


def test_a_cached_execution_without_its_checksum_is_not_used(folder, tmp_path, capsys):
    cache = tmp_path / "cache"
    notebooks.execute_notebook("alpha", {"alpha": 5}, tmp_path / "a.ipynb", directory=folder, cache=cache)
    (copy,) = cache.glob("alpha-*.ipynb")
    notebooks.checksum_path(copy).unlink()  # as an older version, or a writer stopped between the two files
    again = notebooks.execute_notebook("alpha", {"alpha": 5}, tmp_path / "b.ipynb", directory=folder, cache=cache)
    assert not again.cached and "damaged" not in capsys.readouterr().err


def test_the_kernels_own_log_stays_off_the_terminal(folder, tmp_path, capfd):
    """Without ``KERNEL_ARGUMENTS`` every notebook's kernel warns about TCP on the build's terminal."""
    notebooks.execute_notebook("alpha", {}, tmp_path / "alpha.ipynb", directory=folder, cache=tmp_path / "c")
    err = capfd.readouterr().err
    assert "[IPKernelApp]" not in err
    # The cells' own output still reaches the notebook.
    executed = nbformat.read(tmp_path / "alpha.ipynb", as_version=4)
    assert any("1" in o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
