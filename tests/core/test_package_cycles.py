"""No import cycle between packages: the rooms of ts2viz depend on each other one way.

``tests/core/test_import_rules.py`` forbids cycles between *modules*; this test forbids them between
*packages*, where a loop is a design problem even when no single module imports itself back (the issue-41
loops: ``statistics`` -> ``metametrics`` -> ``statistics``, ``statistics`` -> ``metaeval`` -> ``statistics``,
``cost`` -> ``figures`` -> ``cost``).

The units are the first-level subpackages and modules of ``ts2viz`` (``ts2viz.statistics``,
``ts2viz.metametrics``, ``ts2viz.scores``, ...; the root ``ts2viz/__init__.py`` is the unit ``ts2viz``), and
the second-level ones inside ``ts2viz.ui`` and ``ts2viz.metrics`` (``ts2viz.ui.page``, ``ts2viz.ui.tabs``,
``ts2viz.metrics.registry``, ...), whose subpackages are rooms of their own. A unit's imports are every
``import`` and ``from ... import`` in its files, read with ``ast`` from the source tree (nothing is
imported), **including imports inside functions and under ``if TYPE_CHECKING:``**: a lazy import defers the
cost of loading a module, not the dependency on it, so it counts. A package that imports one of its own
subpackages (``ts2viz.metrics`` -> ``ts2viz.metrics.registry``) is an edge like any other.

:data:`KNOWN` lists the cycles still allowed (none); the test fails on any other cycle, and on a listed one
that no longer exists (so the list stays exact).
"""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "ts2viz"
#: packages whose subpackages are units of their own
SECOND_LEVEL = ("ts2viz.ui", "ts2viz.metrics")

#: Cycles between packages still allowed, as the groups of packages that reach each other (strongly connected
#: components): none.
KNOWN: set[frozenset[str]] = set()


def _module_name(path: Path, pkg: Path) -> str:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def unit_of(module: str) -> str:
    """The package unit a module belongs to (see the module docstring).

    >>> unit_of("ts2viz.statistics.bootstrap"), unit_of("ts2viz.ui.page.glue"), unit_of("ts2viz")
    ('ts2viz.statistics', 'ts2viz.ui.page', 'ts2viz')
    """
    depth = 3 if any(module == s or module.startswith(s + ".") for s in SECOND_LEVEL) else 2
    return ".".join(module.split(".")[:depth])


def package_graph(pkg: Path = PKG) -> dict[str, dict[str, list[str]]]:
    """{unit: {imported unit: ["module -> imported module", ...]}} from every import in the tree under ``pkg``."""
    root = pkg.name
    modules = {_module_name(p, pkg): p for p in sorted(pkg.rglob("*.py"))}
    graph: dict[str, dict[str, list[str]]] = {}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    src = ".".join(base + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                # `from pkg import sub` names the submodule; `from mod import name` names the module
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in modules else src for a in node.names]
            else:
                continue
            for t in targets:
                if t.split(".")[0] != root:
                    continue
                while t not in modules and "." in t:          # `import ts2viz.x.y` of a name, not a module
                    t = t.rsplit(".", 1)[0]
                a, b = unit_of(mod), unit_of(t)
                if a != b:
                    graph.setdefault(a, {}).setdefault(b, []).append(f"{mod} -> {t}")
    return graph


def cycles(graph: dict[str, dict[str, list[str]]]) -> set[frozenset[str]]:
    """The groups of two or more units that reach each other (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                out.add(frozenset(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def explain(graph: dict[str, dict[str, list[str]]], group: frozenset[str]) -> str:
    """One cycle through ``group`` with an import that makes each step, for the failure message."""
    start = min(group)
    path, seen = [start], {start}
    while True:                                        # walk inside the group until a unit repeats
        nxt = min(w for w in graph[path[-1]] if w in group)
        if nxt in seen:
            path = path[path.index(nxt):] + [nxt]
            break
        path.append(nxt)
        seen.add(nxt)
    steps = [f"  {a} -> {b}  (e.g. {graph[a][b][0]})" for a, b in zip(path, path[1:])]
    return " -> ".join(path) + "\n" + "\n".join(steps)


def test_no_cycle_between_packages():
    graph = package_graph()
    found = cycles(graph)
    new = [g for g in found if g not in KNOWN]
    assert not new, "import cycles between packages:\n" + "\n".join(explain(graph, g) for g in new)
    stale = [sorted(g) for g in KNOWN if g not in found]
    assert not stale, f"KNOWN lists cycles that no longer exist (remove them): {stale}"


def test_the_check_sees_cycles(tmp_path):
    """The check can fail: a cycle made only by an import inside a function, between two ui rooms, is found;
    an import of a package's own module, and a one-way dependency, are not cycles."""
    pkg = tmp_path / "ts2viz"
    for d in ("a", "b", "c", "ui", "ui/page", "ui/tabs"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text('"""Package."""\n')
    (pkg / "__init__.py").write_text('"""Top."""\nfrom .a.x import f\n')
    (pkg / "a" / "x.py").write_text('"""A."""\nfrom . import y\n\n\ndef f():\n    from ..b.z import g\n    return g\n')
    (pkg / "a" / "y.py").write_text('"""A too."""\n')
    (pkg / "b" / "z.py").write_text('"""B."""\n\n\ndef g():\n    from ts2viz.a import x\n    return x\n')
    (pkg / "c" / "w.py").write_text('"""C: one way."""\nfrom ..a.y import __doc__\n')
    (pkg / "ui" / "page" / "p.py").write_text('"""Page."""\nfrom ..tabs import t\n')
    (pkg / "ui" / "tabs" / "t.py").write_text('"""Tab."""\n\n\ndef h():\n    from ..page.p import __doc__\n')
    graph = package_graph(pkg)
    assert graph["ts2viz.c"] == {"ts2viz.a": ["ts2viz.c.w -> ts2viz.a.y"]}
    assert cycles(graph) == {frozenset({"ts2viz.a", "ts2viz.b"}), frozenset({"ts2viz.ui.page", "ts2viz.ui.tabs"})}
    assert "ts2viz.a -> ts2viz.b -> ts2viz.a" in explain(graph, frozenset({"ts2viz.a", "ts2viz.b"}))
