"""The import graph is a stack of layers: each module imports only its own layer and those below.

Read from the source with ``ast`` (every ``import`` and ``from ... import``, including those inside
functions, which the package uses to import heavy stages lazily), so a lazy import cannot hide a
cycle or an upward dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rtanalysis"

#: bottom to top; a module belongs to the first layer one of whose prefixes names it
#: (``rtanalysis.x`` names ``rtanalysis.x`` and ``rtanalysis.x.*``; a trailing ``*`` matches any
#: top-level module whose name starts with it, e.g. ``report*`` for the report's modules)
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("leaf", ("rtanalysis.errors", "rtanalysis.about", "rtanalysis.schema")),
    ("load", ("rtanalysis.io", "rtanalysis.adapters", "rtanalysis.scale.dataset")),
    ("simulate", ("rtanalysis.simulate",)),
    ("metrics", ("rtanalysis.metrics",)),
    ("model", ("rtanalysis.model", "rtanalysis.scale.aggregate")),
    ("presentation", ("rtanalysis.plots", "rtanalysis.reporting", "rtanalysis.scale")),  # scale.distributed runs the ingest on Dask
    ("api", ("rtanalysis",)),  # the package itself: re-exports for users, imported by no stage
    ("cli", ()),  # rtanalysis.cli and every module named cli or *_cli, wherever it lives
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> str:
    last = module.rsplit(".", 1)[-1]
    if last == "cli" or last.endswith("_cli"):
        return "cli"
    top = ".".join(module.split(".")[:2])
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if prefix.endswith("*") and top.startswith(prefix[:-1]):
                return name
            if module == prefix or (prefix != "rtanalysis" and module.startswith(prefix + ".")):
                return name
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its body."""
    out = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:  # `from pkg import sub` imports the submodule pkg.sub
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in MODULES else target)
    return {m for m in out if m in MODULES and m != module}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_module_has_a_layer():
    for m in MODULES:
        layer_of(m)


def test_each_module_imports_only_its_layer_and_those_below():
    upward = []
    for src, targets in GRAPH.items():
        for dst in targets:
            if RANK[layer_of(dst)] > RANK[layer_of(src)]:
                upward.append(f"{src} ({layer_of(src)}) imports {dst} ({layer_of(dst)})")
    assert not upward, "imports that go up a layer:\n" + "\n".join(sorted(upward))


def test_no_stage_imports_the_cli():
    offenders = sorted(src for src, targets in GRAPH.items() if "rtanalysis.cli" in targets)
    assert offenders == [], f"only the command line may import rtanalysis.cli: {offenders}"


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return cycles


def test_no_import_cycles():
    assert find_cycles(GRAPH) == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_cycle_finder_finds_a_planted_cycle(graph, expected):
    assert find_cycles(graph) == expected


def test_a_lazy_import_inside_a_function_counts(tmp_path, monkeypatch):
    # the planted upward import is inside a function body, where the package puts its lazy imports
    fake = tmp_path / "rtanalysis" / "metrics" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from ..model import fit\n    from .. import cli\n")
    monkeypatch.setitem(MODULES, "rtanalysis.metrics.fake", fake)
    assert imports_of("rtanalysis.metrics.fake") == {"rtanalysis.model.fit", "rtanalysis.cli"}
