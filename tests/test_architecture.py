"""The package's import arrows (docs/architecture.md), read from the source with ``ast``.

Function-level imports count like module-level ones: a circle or a forbidden
arrow that only runs inside a function is still one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from crsbench_lib.imports import PACKAGE, find_cycle, import_graph, package_modules, parse_imports

# Layer -> the layers it may import (architecture.md), besides the foundation.
ALLOWED: dict[str, frozenset[str]] = {
    "__main__": frozenset({"cli"}),
    # The command is the top of the house: thin wrappers over every layer below.
    "cli": frozenset({"report", "runner", "registry", "scoring", "standard", "results", "encoders"}),
    "report": frozenset({"scoring", "metrics", "standard", "results"}),
    "registry": frozenset({"scoring", "standard", "results"}),
    "runner": frozenset({"evaluation", "embeddings", "encoders", "cohort", "data", "results", "standard"}),
    # The results table's constants (severities) are shared with the layers that make the rows.
    "embeddings": frozenset({"encoders", "cohort", "data", "results"}),
    "evaluation": frozenset({"metrics", "results"}),
    "scoring": frozenset({"metrics", "standard", "results"}),
    "standard": frozenset({"results"}),
    "cohort": frozenset({"data", "results", "evaluation", "metrics"}),  # the difficulty probe's AUROC
    "metrics": frozenset({"results"}),  # the task names of the results schema
    "data": frozenset(),
    "encoders": frozenset(),
    "results": frozenset(),
}
# Modules every layer may import: they import nothing of the package but each other.
FOUNDATION: frozenset[str] = frozenset({"<root>", "errors", "paths", "atomic", "hashing", "imports", "stratify"})
# Third-party packages a layer must never import (no torch and no images in scoring).
FORBIDDEN_THIRD_PARTY: dict[str, frozenset[str]] = {
    "scoring": frozenset({"torch", "torchvision", "timm", "open_clip", "transformers", "PIL", "skimage"}),
    "standard": frozenset({"torch", "torchvision", "timm", "open_clip", "transformers", "PIL", "skimage"}),
    "results": frozenset({"torch", "torchvision", "PIL", "skimage"}),
    "evaluation": frozenset({"torch", "torchvision", "PIL", "skimage"}),
    # The report words numbers; it computes no statistic (issue 47), so it needs no scipy.
    "report": frozenset({"torch", "torchvision", "scipy"}),
    "metrics": frozenset({"torch", "torchvision", "timm", "open_clip", "transformers", "PIL", "skimage"}),
}


def layer(module: str) -> str:
    """``crsbench_lib.scoring.crs`` -> ``scoring``; the package itself -> ``<root>``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def arrows(graph) -> dict[tuple[str, str], str]:
    """(from layer, to layer) -> one place that draws the arrow (module:line)."""
    found: dict[tuple[str, str], str] = {}
    for name, imports in graph.items():
        for imp in imports:
            pair = (layer(name), layer(imp.target))
            if pair[0] != pair[1]:
                found.setdefault(pair, f"{name}:{imp.line}")
    return found


def test_every_layer_is_on_the_map(graph):
    unknown = sorted({layer(m) for m in graph} - set(ALLOWED) - FOUNDATION)
    assert not unknown, f"layers missing from the architecture map: {unknown} (add their arrows here and in the doc)"


def test_foundation_imports_only_foundation(graph):
    bad = {pair: where for pair, where in arrows(graph).items() if pair[0] in FOUNDATION and pair[1] not in FOUNDATION}
    assert not bad, f"a foundation module imports a layer: {bad}"


def test_only_the_arrows_of_the_map(graph):
    bad = {
        pair: where
        for pair, where in arrows(graph).items()
        if pair[0] in ALLOWED and pair[1] not in FOUNDATION and pair[1] not in ALLOWED[pair[0]]
    }
    assert not bad, f"imports against the architecture map (from, to): {bad}"


@pytest.mark.parametrize(
    ("source", "target"),
    [("scoring", "runner"), ("scoring", "encoders"), ("scoring", "cohort"), ("runner", "scoring"),
     ("encoders", "cohort"), ("standard", "scoring")],
)
def test_forbidden_arrow(graph, source, target):
    where = arrows(graph).get((source, target))
    assert where is None, f"{source} imports {target} at {where}"


def test_no_import_circle_between_modules(graph):
    cycle = find_cycle({name: [i.target for i in imports] for name, imports in graph.items()})
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_no_import_circle_between_layers(graph):
    layers: dict[str, set[str]] = {}
    for source, target in arrows(graph):
        layers.setdefault(source, set()).add(target)
    cycle = find_cycle(layers)
    assert cycle is None, "circle between layers: " + " -> ".join(cycle or [])


def test_no_forbidden_third_party_import():
    modules = package_modules()
    bad = []
    for name, path in modules.items():
        forbidden = FORBIDDEN_THIRD_PARTY.get(layer(name), frozenset())
        for imp in parse_imports(name, path, modules):
            if imp.target.split(".")[0] in forbidden:
                bad.append(f"{name}:{imp.line} imports {imp.target}")
    assert not bad, "; ".join(bad)


#: The one home of every rank statistic (Kendall's tau-b, reversed pairs, the rank rules).
RANK_STATISTICS_HOME = "crsbench_lib.scoring.rank_statistics"
#: Calls that compute a rank statistic; outside its home only the AUROC's Mann-Whitney ranks may rank.
RANK_CALLS: frozenset[str] = frozenset({"kendalltau", "rankdata", "spearmanr", "weightedtau", "rank"})
RANK_CALLS_ALLOWED: dict[str, frozenset[str]] = {"crsbench_lib.metrics.auroc": frozenset({"rankdata"})}


def rank_statistic_sites(name: str, source: str) -> list[str]:
    """Where a module defines or computes a rank statistic outside its one home (name:line what)."""
    if name == RANK_STATISTICS_HOME:
        return []
    sites = []
    allowed = RANK_CALLS_ALLOWED.get(name, frozenset())
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and ("kendall" in node.name or node.name.endswith(("_ranks", "_rho"))
                                                  or node.name in {"rank_descending", "reversed_pairs", "pair_counts"}):
            sites.append(f"{name}:{node.lineno} defines {node.name}")
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in RANK_CALLS and called not in allowed:
                sites.append(f"{name}:{node.lineno} calls {called}")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scipy"):
            for alias in node.names:
                if alias.name in RANK_CALLS and alias.name not in allowed:
                    sites.append(f"{name}:{node.lineno} imports {alias.name}")
    return sites


def test_each_rank_statistic_has_one_home():
    sites = [site for name, path in package_modules().items()
             for site in rank_statistic_sites(name, path.read_text(encoding="utf-8"))]
    assert not sites, f"rank statistics belong in {RANK_STATISTICS_HOME}: " + "; ".join(sites)


@pytest.mark.parametrize("source, found", [
    ("from scipy.stats import kendalltau\n", "imports kendalltau"),
    ("import scipy.stats as st\nt = st.kendalltau(a, b)\n", "calls kendalltau"),
    ("def my_kendall(a, b):\n    return 0\n", "defines my_kendall"),
    ("def descending_ranks(x):\n    return x\n", "defines descending_ranks"),
    ("r = table['crs'].rank(ascending=False)\n", "calls rank"),
    ("r = (-x).argsort()\n", None),
])
def test_the_rank_check_catches_a_second_home(source, found):
    sites = rank_statistic_sites("crsbench_lib.report.toy", source)
    assert (found in " ".join(sites)) if found else not sites


def test_the_checks_catch_a_circle_and_a_lazy_import(tmp_path: Path):
    # A toy package with a circle drawn by a function-level import, as scoring/crs.py once had.
    pkg = tmp_path / PACKAGE
    (pkg / "scoring").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "scoring" / "__init__.py").write_text("")
    (pkg / "scoring" / "crs.py").write_text("def f():\n    from crsbench_lib.scoring.standard import g\n")
    (pkg / "scoring" / "standard.py").write_text("from crsbench_lib.scoring import crs\nimport torch\n")
    toy = import_graph(pkg)
    lazy = [i for i in toy["crsbench_lib.scoring.crs"] if i.lazy]
    assert [i.target for i in lazy] == ["crsbench_lib.scoring.standard"]
    cycle = find_cycle({name: [i.target for i in imports] for name, imports in toy.items()})
    assert cycle is not None and set(cycle) == {"crsbench_lib.scoring.crs", "crsbench_lib.scoring.standard"}
    modules = package_modules(pkg)
    third = [i.target for i in parse_imports("crsbench_lib.scoring.standard", modules["crsbench_lib.scoring.standard"],
                                             modules)]
    assert "torch" in third


# Modules that may parse the run manifest's JSON: its one reader. (The encoder
# weights' manifest, crsbench_lib.encoders.weights_manifest, is another file with its own reader.)
MANIFEST_READERS: frozenset[str] = frozenset({"crsbench_lib.results.manifest"})
OTHER_MANIFESTS: frozenset[str] = frozenset({"crsbench_lib.encoders.weights_manifest"})


def _parses_run_manifest(source: str) -> bool:
    """Whether a module calls json.load/json.loads and names the run manifest's file."""
    tree = ast.parse(source)
    parses_json = any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("load", "loads")
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"
        for node in ast.walk(tree)
    )
    names_manifest = "MANIFEST_FILE" in source or "manifest.json" in source
    return parses_json and names_manifest


def test_at_most_two_modules_parse_the_run_manifest():
    parsers = sorted(name for name, path in package_modules().items()
                     if name not in OTHER_MANIFESTS and _parses_run_manifest(path.read_text(encoding="utf-8")))
    assert len(parsers) <= 2 and set(parsers) <= MANIFEST_READERS, (
        f"modules parsing the run manifest (read it with crsbench_lib.results.manifest.read_manifest): {parsers}")


def test_the_manifest_check_catches_a_second_parser():
    assert _parses_run_manifest("import json\nx = json.loads((d / MANIFEST_FILE).read_text())\n")
    assert not _parses_run_manifest("import json\nx = json.loads(text)\n")


# Layers a chapter notebook may import: the report and what it reads, plus the
# pictures (cohort), the encoder cards (encoders), the registry chapter (registry)
# and the dataset summary of the cohort chapter (data). Never the runner or torch.
NOTEBOOK_LAYERS: frozenset[str] = frozenset(
    {"report", "scoring", "results", "standard", "cohort", "encoders", "registry", "data"})
NOTEBOOK_FORBIDDEN: frozenset[str] = frozenset({"torch", "torchvision"})
NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
# Notebooks that fail the check today, and why; the lead flips these once the
# parallel changes land (remove the entry: strict xfail then fails loudly).
NOTEBOOK_EXPECTED_FAILURES: dict[str, str] = {
    # Known, named exceptions (strict: the test fails once they no longer hold, so the entry must go). None today.
}


def notebook_imports(path: Path, modules) -> list[str]:
    """The ``crsbench_lib`` modules a notebook's code cells import (``from a import b``: ``a.b`` if a module)."""
    import json

    found: list[str] = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                         for a in node.names]
            else:
                continue
            found.extend(n for n in names if n.split(".")[0] == PACKAGE)
    return found


def notebook_problems(path: Path, root: Path | None = None) -> list[str]:
    """What breaks the notebook rules: a module outside :data:`NOTEBOOK_LAYERS`, or torch in the import closure.

    The closure follows function-level imports too (:func:`crsbench_lib.imports.import_closure`).
    """
    from crsbench_lib.imports import import_closure

    modules = package_modules(root) if root is not None else package_modules()
    graph = import_graph(root) if root is not None else import_graph()
    imported = notebook_imports(path, modules)
    problems = [f"imports {name} (layer {layer(name)})" for name in imported if layer(name) not in NOTEBOOK_LAYERS]
    for name in sorted(import_closure(imported, graph)):
        for imp in parse_imports(name, modules[name], modules):
            if imp.target.split(".")[0] in NOTEBOOK_FORBIDDEN:
                problems.append(f"reaches {imp.target} through {name}:{imp.line}")
    return problems


@pytest.mark.parametrize("name", [
    pytest.param(p.stem, marks=pytest.mark.xfail(strict=True, reason=NOTEBOOK_EXPECTED_FAILURES[p.stem]))
    if p.stem in NOTEBOOK_EXPECTED_FAILURES else p.stem
    for p in sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
])
def test_a_notebook_imports_only_its_layers_and_never_torch(name):
    problems = notebook_problems(NOTEBOOKS_DIR / f"{name}.ipynb")
    assert not problems, f"notebooks/{name}.ipynb: " + "; ".join(problems)


def _toy_notebook(folder: Path, source: str) -> Path:
    import json

    path = folder / "toy.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": [source], "metadata": {}, "outputs": [],
                                           "execution_count": None}], "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def test_the_notebook_check_catches_torch_behind_a_report_module_and_the_runner(tmp_path: Path):
    pkg = tmp_path / PACKAGE
    for sub in ("report", "scoring", "runner"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "report" / "page.py").write_text("def f():\n    from crsbench_lib.scoring import deep\n")
    (pkg / "scoring" / "deep.py").write_text("def g():\n    import torch\n")
    (pkg / "runner" / "run.py").write_text("")
    torch_book = _toy_notebook(tmp_path, "from crsbench_lib.report import page\n%matplotlib inline\n")
    assert notebook_problems(torch_book, pkg) == ["reaches torch through crsbench_lib.scoring.deep:2"]
    runner_book = _toy_notebook(tmp_path, "import crsbench_lib.runner.run as run\n")
    assert notebook_problems(runner_book, pkg) == ["imports crsbench_lib.runner.run (layer runner)"]
