"""The package's import arrows (docs/architecture.md), read from the source with ``ast``.

Function-level imports count like module-level ones: a circle or a forbidden
arrow that only runs inside a function is still one.
"""

from __future__ import annotations

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
    "report": frozenset({"torch", "torchvision"}),
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
