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


def test_find_cycle_names_the_circle():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"], "d": []}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None


def test_the_package_itself_is_found():
    modules = package_modules()
    assert {"crsbench_lib", "crsbench_lib.imports", "crsbench_lib.runner.cell"} <= set(modules)
