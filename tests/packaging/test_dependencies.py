"""Every declared runtime dependency earns its place (issue 47, item 8): the package imports it or runs it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from crsbench_lib.paths import project_root

#: Distribution name -> the module the package imports (where the two differ).
IMPORT_NAMES: dict[str, str] = {
    "scikit-learn": "sklearn", "pyyaml": "yaml", "pillow": "PIL", "ghp-import": "ghp_import",
    "jupyter-book": "jupyter_book", "sphinx-exercise": "sphinx_exercise",
}
#: Dependencies the package uses without importing them, and how.
USED_OTHERWISE: dict[str, str] = {
    "jupyter-book": "run as the `jupyter-book build` command (report/book.py)",
    "sphinx-exercise": "a Sphinx extension named in the book's configuration (_config.yml)",
    "ipykernel": "the Jupyter kernel papermill executes the chapters in",
    "ghp-import": "run as `python -m ghp_import` by `crsbench publish` (report/publish.py)",
    "transformers": "imported by name when a hub encoder asks for it (encoders/hub.py, `_require`)",
    "dask": "the distributed scheduler's task graphs (`crsbench run --scheduler`, via `distributed`)",
}


def _imports() -> set[str]:
    """Top-level module names imported anywhere in the package, its notebooks or its benchmarks."""
    root = project_root()
    names: set[str] = set()
    sources = [p.read_text() for p in (root / "crsbench_lib").rglob("*.py")]
    sources += [p.read_text() for p in (root / "benchmarks").glob("*.py")]
    for path in (root / "notebooks").glob("*.ipynb"):
        import json

        sources += ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def test_every_runtime_dependency_is_imported_or_used_as_a_tool() -> None:
    project = tomllib.loads((project_root() / "pyproject.toml").read_text())["project"]
    imported = _imports()
    unused = []
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0].lower()
        module = IMPORT_NAMES.get(name, name.replace("-", "_"))
        if module not in imported and name not in USED_OTHERWISE:
            unused.append(name)
    assert not unused, f"declared in pyproject.toml but never imported or run: {unused}"


def test_the_tools_said_to_be_run_are_named_where_they_run() -> None:
    root = project_root()
    text = "\n".join(p.read_text() for p in (root / "crsbench_lib").rglob("*.py"))
    for tool in ("jupyter-book", "ghp_import", "\"transformers\""):
        assert tool in text, f"{tool} is declared as used by the package but the package never names it"
    assert "sphinx_exercise" in (root / "_config.yml").read_text()
