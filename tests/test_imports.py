"""The package's import graph, read with ast: lazy imports, closures, fingerprints."""

from pathlib import Path

import pytest

from crsbench_lib.imports import (
    PACKAGE,
    find_cycle,
    import_closure,
    import_graph,
    package_modules,
    source_fingerprint,
)


def _toy(root: Path) -> Path:
    """A small package: ``a`` imports ``b`` at module level and ``c`` inside a function."""
    pkg = root / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text(f"from {PACKAGE}.sub import helper\n")
    (pkg / "sub" / "helper.py").write_text("X = 1\n")
    (pkg / "a.py").write_text(f"from {PACKAGE} import b\n\ndef f():\n    from {PACKAGE}.c import g\n    return g\n")
    (pkg / "b.py").write_text("from .sub.helper import X\n")
    (pkg / "c.py").write_text("def g():\n    return 1\n")
    return pkg


def test_graph_marks_lazy_imports_and_resolves_relative_ones(tmp_path):
    graph = import_graph(_toy(tmp_path))
    a = {(i.target, i.lazy) for i in graph[f"{PACKAGE}.a"]}
    assert a == {(f"{PACKAGE}.b", False), (f"{PACKAGE}.c", True)}
    assert [i.target for i in graph[f"{PACKAGE}.b"]] == [f"{PACKAGE}.sub.helper"]


def test_closure_follows_lazy_imports_and_parents_unless_skipped(tmp_path):
    graph = import_graph(_toy(tmp_path))
    full = import_closure([f"{PACKAGE}.a"], graph)
    assert full == {PACKAGE, f"{PACKAGE}.a", f"{PACKAGE}.b", f"{PACKAGE}.c", f"{PACKAGE}.sub", f"{PACKAGE}.sub.helper"}
    assert f"{PACKAGE}.c" not in import_closure([f"{PACKAGE}.a"], graph, skip_lazy=[f"{PACKAGE}.c"])
    # A module-level import is always followed, even when named in skip_lazy.
    assert f"{PACKAGE}.b" in import_closure([f"{PACKAGE}.a"], graph, skip_lazy=[f"{PACKAGE}.b"])
    with pytest.raises(KeyError, match="not a module"):
        import_closure([f"{PACKAGE}.moved"], graph)


def test_fingerprint_changes_with_any_covered_file(tmp_path):
    pkg = _toy(tmp_path)
    modules = package_modules(pkg)
    names = import_closure([f"{PACKAGE}.a"], import_graph(pkg))
    before = source_fingerprint(names, modules, pkg)
    assert source_fingerprint(sorted(names, reverse=True), modules, pkg) == before
    (pkg / "sub" / "helper.py").write_text("X = 2\n")
    assert source_fingerprint(names, modules, pkg) != before


def test_fingerprint_ignores_documentation_and_follows_behaviour(tmp_path):
    # Issue 47 item 7: a docstring or comment edit no longer recomputes cached cells; a code edit still does.
    pkg = _toy(tmp_path)
    modules = package_modules(pkg)
    names = import_closure([f"{PACKAGE}.a"], import_graph(pkg))
    before = source_fingerprint(names, modules, pkg)
    (pkg / "c.py").write_text('"""The module c, documented."""\n\n\ndef g():\n    """Return one."""\n'
                              '    # one, as before\n    return 1  # unchanged\n')
    assert source_fingerprint(names, modules, pkg) == before
    (pkg / "c.py").write_text('def g():\n    """Return one."""\n    return 1.0\n')
    assert source_fingerprint(names, modules, pkg) != before
    # A string that is not a docstring is code: a constant a cell may compute with.
    (pkg / "c.py").write_text('def g():\n    x = "text"\n    return 1\n')
    assert source_fingerprint(names, modules, pkg) != before


def test_a_docstring_edit_in_a_cells_closure_keeps_its_key(tmp_path, monkeypatch):
    # The cell-level form: the code fingerprint of a real cell's closure, with one metrics module's
    # docstrings rewritten in a copy, is unchanged; with one operator changed, it moves.
    import ast

    from crsbench_lib.imports import normalised_source
    from crsbench_lib.runner.cell import cell_modules

    closure = cell_modules("phantom", "hog", "frozen")
    metric = next(m for m in sorted(closure) if m.startswith("crsbench_lib.metrics."))
    source = package_modules()[metric].read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body and isinstance(
                node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            node.body[0].value.value = "Rewritten documentation."
    assert normalised_source(ast.unparse(tree)) == normalised_source(source)
    assert normalised_source(source + "\n_CHANGED = 1\n") != normalised_source(source)


def test_find_cycle_names_the_circle():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"], "d": []}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None


def test_the_package_itself_is_found():
    modules = package_modules()
    assert {"crsbench_lib", "crsbench_lib.imports", "crsbench_lib.runner.cell"} <= set(modules)
