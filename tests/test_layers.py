"""seqlab reads bottom to top as floors: no module imports from a floor above its own, and no imports go round.

:data:`FLOORS` lists the floors, lowest first; a module may import from its own floor or a lower one, and
``features/`` (below them all) imports no seqlab module. Every import counts, wherever it is written: at
module level, inside a function (a lazy import is still a dependency), under ``if TYPE_CHECKING:``, and
relative ones (``from . import x``) resolved to the module they name. Implicit imports of parent packages are
not counted (``import seqlab.core.errors`` runs ``seqlab/__init__.py`` first, as every import does).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The floors, lowest first: a module's floor is the entry naming it or the package holding it.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("seqlab.core",),  # the ground floor: errors, strict config reading, the trainer, run directories, statistics
    ("seqlab.data", "seqlab.render", "seqlab.text"),  # readers, tag schemes, vocabularies, batches, metrics; HTML
    # pages and plots; raw text into sentences and words by language
    ("seqlab.modules",),  # torch layers: encoders, decoders, embedders
    ("seqlab.models",),  # models assembled from the modules
    ("seqlab.tagging", "seqlab.relation"),  # the tasks: config, training view, prediction, API
    ("seqlab.extraction",),  # a tagger and a relation classifier as one model: entities and relations from text
    ("seqlab.apps", "seqlab.serve"),  # whole models of any task: task table, loading, packaging, export, serving
    ("seqlab.cli", "seqlab.__main__", "seqlab"),  # the command and the top-level API (`seqlab` is its __init__)
)


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` imports ``target`` at ``line``."""

    source: str
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.source} (line {self.line}) imports {self.target}"


def module_names(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Every module of ``package`` under ``root``: dotted name -> (file, whether it is a package's __init__)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _known(name: str, modules: Iterable[str]) -> str | None:
    """The longest module of ``modules`` that ``name`` is or lies in (``a.b.c`` -> ``a.b`` for a name in it)."""
    known = set(modules)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, source: str, is_package: bool, modules: Iterable[str], prefix: str = "seqlab") -> list[Import]:
    """The imports of ``module`` (its ``source`` text) of modules named ``prefix...``, resolved against
    ``modules``: ``from a import b`` is an import of ``a.b`` when that is a module, else of ``a``."""
    modules = set(modules)
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin for a in node.names]
        else:
            continue
        for target in dict.fromkeys(targets):  # `from a import b, c` of names in a: one edge
            if target == prefix or target.startswith(prefix + "."):
                resolved = _known(target, modules) or target
                if resolved != module:
                    found.append(Import(module, node.lineno, resolved))
    return found


def floor_of(module: str, floors: tuple[tuple[str, ...], ...] = FLOORS) -> int | None:
    """The index of ``module``'s floor; None when no floor names it or its package."""
    best, best_len = None, -1
    for index, names in enumerate(floors):
        for name in names:
            inside = module == name or (module.startswith(name + ".") and name != "seqlab")
            if inside and len(name) > best_len:
                best, best_len = index, len(name)
    return best


def upward(imports: Iterable[Import], floors: tuple[tuple[str, ...], ...] = FLOORS) -> list[str]:
    """One message per import of a module on a higher floor than the importer's."""
    found = []
    for edge in imports:
        low, high = floor_of(edge.source, floors), floor_of(edge.target, floors)
        if low is not None and high is not None and high > low:
            found.append(f"{edge}: an upward import (floor {low} {floors[low]} -> floor {high} {floors[high]})")
    return found


def cycles(imports: Iterable[Import]) -> list[list[Import]]:
    """One import cycle (its edges, in order) per strongly connected component of the module graph."""
    edges: dict[str, dict[str, Import]] = {}
    for edge in imports:
        edges.setdefault(edge.source, {}).setdefault(edge.target, edge)
    found = []
    for component in _components(edges):
        if len(component) > 1:
            found.append(_cycle_in(component, edges))
    return found


def _components(edges: Mapping[str, Mapping[str, Import]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    nodes = sorted(set(edges) | {t for targets in edges.values() for t in targets})
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    components.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, {})))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def _cycle_in(component: set[str], edges: Mapping[str, Mapping[str, Import]]) -> list[Import]:
    """A shortest cycle through the component's first module (breadth-first within the component)."""
    start = min(component)
    came_from: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target, edge in sorted(edges.get(node, {}).items()):
                if target not in component or target in came_from:
                    continue
                came_from[target] = edge
                if target == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came_from[path[0].source])
                    return path
                following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start} in its component {sorted(component)}")


def package_imports(package: str = "seqlab", prefix: str = "seqlab") -> list[Import]:
    """Every import of a ``prefix`` module in every module of ``package`` in this checkout."""
    modules = module_names(ROOT, package)
    if prefix != package:
        modules = {**modules, **module_names(ROOT, prefix)}
    found = []
    for name, (path, is_package) in module_names(ROOT, package).items():
        found += imports_of(name, path.read_text(encoding="utf-8"), is_package, modules, prefix)
    return found


# --- the package itself ---


def test_every_module_is_on_a_floor() -> None:
    lost = [name for name in module_names(ROOT, "seqlab") if floor_of(name) is None]
    assert not lost, f"modules on no floor (add their package to FLOORS in {Path(__file__).name}): {lost}"


def test_no_upward_import() -> None:
    found = upward(package_imports())
    assert not found, "imports from a higher floor:\n" + "\n".join(found)


def test_no_import_cycle() -> None:
    found = cycles(package_imports())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(str(e) for e in cycle) for cycle in found)


def test_features_imports_no_seqlab() -> None:
    found = [str(edge) for edge in package_imports("features", prefix="seqlab")]
    assert not found, "features/ stands alone, but:\n" + "\n".join(found)


def test_the_checker_sees_the_package() -> None:
    """A test that found no imports at all would pass vacuously: the graph must hold the known edges."""
    edges = {(e.source, e.target) for e in package_imports()}
    assert ("seqlab.cli", "seqlab.cli.train") in edges  # `from seqlab.cli import train`: a module
    assert ("seqlab.core.trainer", "seqlab.core.errors") in edges
    assert any(s == "seqlab" and t.startswith("seqlab.apps") for s, t in edges)  # lazy, inside functions


# --- the checker on a small made-up package ---

FAKE = {
    "pkg": (True, ""),
    "pkg.low": (True, ""),
    "pkg.low.a": (False, "import os\nfrom pkg.low import b\n"),
    "pkg.low.b": (False, "def f():\n    from pkg.high import c  # lazy, and upward\n"),
    "pkg.high": (True, "from . import c\n"),
    "pkg.high.c": (False, "from ..low.a import thing\nfrom .d import x\n"),
    "pkg.high.d": (False, "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.low.a import y\n"),
}
FAKE_FLOORS = (("pkg.low",), ("pkg.high", "pkg"))


def _fake_imports() -> list[Import]:
    return [edge for name, (is_package, text) in FAKE.items()
            for edge in imports_of(name, text, is_package, FAKE, prefix="pkg")]


def test_imports_resolve_relative_and_lazy_ones() -> None:
    assert {(e.source, e.line, e.target) for e in _fake_imports()} == {
        ("pkg.low.a", 2, "pkg.low.b"),
        ("pkg.low.b", 2, "pkg.high.c"),
        ("pkg.high", 1, "pkg.high.c"),
        ("pkg.high.c", 1, "pkg.low.a"),
        ("pkg.high.c", 2, "pkg.high.d"),
        ("pkg.high.d", 3, "pkg.low.a"),
    }


def test_an_upward_import_is_named_with_its_line() -> None:
    assert upward(_fake_imports(), FAKE_FLOORS) == [
        "pkg.low.b (line 2) imports pkg.high.c: an upward import (floor 0 ('pkg.low',) -> floor 1 ('pkg.high', 'pkg'))"]


def test_a_cycle_is_named_edge_by_edge() -> None:
    found = sorted([str(e) for e in cycle] for cycle in cycles(_fake_imports()))
    assert found == [
        ["pkg.high.c (line 1) imports pkg.low.a", "pkg.low.a (line 2) imports pkg.low.b",
         "pkg.low.b (line 2) imports pkg.high.c"],
    ]


@pytest.mark.parametrize("removed", [("pkg.low.b", "pkg.high.c"), ("pkg.low.a", "pkg.low.b")])
def test_breaking_the_cycle_clears_it(removed: tuple[str, str]) -> None:
    assert cycles([e for e in _fake_imports() if (e.source, e.target) != removed]) == []


def test_one_cycle_per_component() -> None:
    """Two cycles sharing a module are one component: one cycle is reported, the shortest through its first module."""
    edges = [Import("m.a", 1, "m.b"), Import("m.b", 2, "m.a"), Import("m.b", 3, "m.c"), Import("m.c", 4, "m.a")]
    assert [[str(e) for e in c] for c in cycles(edges)] == [["m.a (line 1) imports m.b", "m.b (line 2) imports m.a"]]


def test_two_module_cycle() -> None:
    edges = [Import("m.x", 3, "m.y"), Import("m.y", 7, "m.x"), Import("m.y", 8, "m.z")]
    assert [[str(e) for e in c] for c in cycles(edges)] == [["m.x (line 3) imports m.y", "m.y (line 7) imports m.x"]]


def test_floor_of() -> None:
    assert floor_of("seqlab") == len(FLOORS) - 1
    assert floor_of("seqlab.core.trainer") == 0
    assert floor_of("seqlab.apps.tasks") == 6
    assert floor_of("seqlab.unknown") is None  # not silently the top floor
