"""The package's own import graph, read from its source with :mod:`ast`.

Two things need to know which modules of ``crsbench_lib`` import which: the
code fingerprint of a cached cell (:mod:`crsbench_lib.runner.cell`), which must
cover every module a cell runs, and the architecture test, which checks the
import arrows of the package map. Both read the graph from the source files
rather than from a hand-kept list, so a new or moved module is covered as soon
as something imports it.

An import inside a function body is *lazy*: it runs only when that function
does. The graph keeps that distinction, because the runner imports the loaders
of dataset and encoder kinds lazily and a cell runs only the ones it uses.
Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``; the closure
includes those parents.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from crsbench_lib.paths import PACKAGE_DIR

PACKAGE = "crsbench_lib"


@dataclass(frozen=True)
class Import:
    """One import statement's target.

    Attributes
    ----------
    target : str
        Dotted module name (for ``from a import b``: ``a.b`` where that is a
        module of the package, else ``a``).
    lazy : bool
        Whether the statement sits inside a function (runs only when called).
    line : int
        Line number of the statement.
    """

    target: str
    lazy: bool
    line: int


def package_modules(root: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Every module of the package: dotted name -> source file.

    Parameters
    ----------
    root : pathlib.Path
        The package folder (default the installed ``crsbench_lib``).

    Returns
    -------
    dict
        ``{"crsbench_lib.runner.cell": Path(...), "crsbench_lib.runner": Path(.../__init__.py), ...}``.

    Examples
    --------
    >>> "crsbench_lib.imports" in package_modules()
    True
    """
    return dict(_package_modules(root.resolve()))


@lru_cache(maxsize=4)
def _package_modules(root: Path) -> tuple[tuple[str, Path], ...]:
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return tuple(found)


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def parse_imports(name: str, path: Path, modules: Mapping[str, Path]) -> tuple[Import, ...]:
    """Every import of one module, of the package or not, in source order.

    Parameters
    ----------
    name : str
        The module's dotted name (resolves relative imports).
    path : pathlib.Path
        Its source file.
    modules : mapping
        The package's modules (:func:`package_modules`), to tell a submodule
        from a name imported out of a module.

    Returns
    -------
    tuple of Import
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import(alias.name, lazy, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                for alias in child.names:
                    sub = f"{module}.{alias.name}"
                    found.append(Import(sub if sub in modules else module, lazy, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return tuple(found)


def import_graph(root: Path = PACKAGE_DIR) -> dict[str, tuple[Import, ...]]:
    """Each module of the package -> its imports of other modules of the package."""
    modules = package_modules(root)
    return {
        name: tuple(i for i in parse_imports(name, path, modules) if i.target.split(".")[0] == PACKAGE)
        for name, path in modules.items()
    }


def import_closure(
    roots: Iterable[str],
    graph: Mapping[str, Iterable[Import]],
    skip_lazy: Iterable[str] = (),
) -> frozenset[str]:
    """The modules that importing ``roots`` and calling their functions can run.

    Follows every import, at module level and inside functions, and adds each
    module's parent packages (their ``__init__`` runs first). A lazy import of
    a module in ``skip_lazy`` is not followed: that is how a caller says "this
    kind of work is not done here" (a module imported at module level is always
    followed).

    Raises
    ------
    KeyError
        If a root or an import names no module of the package.

    Examples
    --------
    >>> graph = import_graph()
    >>> "crsbench_lib.paths" in import_closure(["crsbench_lib.imports"], graph)
    True
    """
    skip = set(skip_lazy)
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in graph:
            raise KeyError(f"{name} is not a module of the package")
        seen.add(name)
        todo.extend(_parents(name))
        todo.extend(i.target for i in graph[name] if not (i.lazy and i.target in skip))
    return frozenset(seen)


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One import circle of a directed graph (``[a, b, ..., a]``), or None.

    Examples
    --------
    >>> find_cycle({"a": ["b"], "b": ["a"]})
    ['a', 'b', 'a']
    >>> find_cycle({"a": ["b"], "b": []}) is None
    True
    """
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = walk(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = walk(start)
            if cycle:
                return cycle
    return None


def _without_docstrings(tree: ast.AST) -> ast.AST:
    """The tree with every module, class and function docstring removed (a body left empty gets ``pass``)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def normalised_source(source: str | bytes) -> bytes:
    r"""What a module *does*: its syntax tree without docstrings, comments or layout, as bytes.

    Comments and layout never reach the syntax tree; docstrings do, as the first
    string statement of a module, class or function, and are removed here. So a
    documentation edit leaves the result unchanged and a behaviour change
    changes it. The form is :func:`ast.dump` without line numbers, which is
    stable for a given Python version (a new version may change it, and so
    recompute cached cells once). A module that cannot be parsed is returned as
    its bytes, so that its fingerprint still changes with every edit.

    Examples
    --------
    >>> a = normalised_source('def f(x):\n    "Twice x."\n    return 2 * x  # double\n')
    >>> b = normalised_source('def f(x):\n    "Two times x, documented again."\n\n    return 2 * x\n')
    >>> a == b, a == normalised_source('def f(x):\n    return 3 * x\n')
    (True, False)
    """
    text = source.decode() if isinstance(source, bytes) else source
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text.encode()
    return ast.dump(_without_docstrings(tree), annotate_fields=True, include_attributes=False).encode()


def source_fingerprint(names: Iterable[str], modules: Mapping[str, Path], root: Path = PACKAGE_DIR) -> str:
    """SHA-256 over the relative paths and :func:`normalised_source` of the named modules, in name order.

    Documentation (docstrings, comments, layout) does not enter it, so editing
    it does not recompute a cached cell; code does (issue 47, item 7).
    """
    digest = hashlib.sha256()
    for name in sorted(set(names)):
        path = modules[name]
        digest.update(path.relative_to(root.resolve()).as_posix().encode())
        digest.update(b"\0")
        digest.update(normalised_source(path.read_bytes()))
        digest.update(b"\0")
    return digest.hexdigest()


__all__ = [
    "Import",
    "find_cycle",
    "import_closure",
    "import_graph",
    "normalised_source",
    "package_modules",
    "parse_imports",
    "source_fingerprint",
]
