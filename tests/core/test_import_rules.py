"""The package's architecture, checked on its own import graph (every import, module- or function-level).

- no import cycle between ts2viz modules;
- statistics (``ts2viz.statistics``, ``ts2viz.metametrics``, ``ts2viz.metaeval``) reach no torch,
  transformers, open_clip, gradio, plotly or scipy, nor the figures, the UI,
  the metric library or the engine, directly or through other ts2viz modules;
- figures reach no model package, no gradio, and neither the UI, the metric library nor the engine;
- the metric library and the scoring engine never reach the UI;
- question answering (``ts2viz.qa``) runs no model: it reaches no model package, nor the metric library
  (its Sentence-BERT mapper is a backbone), nor the UI;
- the UI's rooms below the page (``callbacks``, ``views``, ``state``, ``images``, ``serving``) never reach
  gradio or the page, tabs and glue that import it;
- the UI's rooms import downwards only (:data:`UI_LAYERS`: page, tabs, glue, callbacks, views, state, then
  images and serving), so that no two rooms import each other, directly or around a loop;
- heavy packages (torch, transformers, open_clip, gradio, plotly) are imported inside functions, never at a
  module's top level, except gradio in the page, the tab builders and their glue (imported only when the app
  is built);
- no module imports another module's private (underscore) name, or reads one off an imported module;
- a metric family's module imports nothing heavy, so that its card is cheap to read.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "ts2viz"
HEAVY = ("torch", "transformers", "open_clip", "gradio")
#: the statistics' modules: the package, the meta-metrics and the meta-evaluation built on it
STATISTICS = ("ts2viz.statistics", "ts2viz.metametrics", "ts2viz.metaeval")
#: the UI's rooms that are plain Python (tested without Gradio)
UI_PLAIN = ("ts2viz.ui.callbacks", "ts2viz.ui.serving", "ts2viz.ui.state", "ts2viz.ui.images", "ts2viz.ui.views")
#: the only modules that import a heavy package at their top level: the Gradio page, its tab builders, their glue
TOP_LEVEL_GRADIO = ("ts2viz.ui.page", "ts2viz.ui.tabs", "ts2viz.ui.glue")
#: the UI's rooms from the top down: a room imports only rooms of a later rank (``ts2viz.ui`` itself, the app's
#: entry points, is above them all); rooms of one rank import none of each other
UI_LAYERS = {"page": 0, "tabs": 1, "glue": 2, "callbacks": 3, "views": 4, "state": 5, "images": 6, "serving": 6}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(mod: str, is_pkg: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _graph():
    """{module: set of imported names (modules or module.attr)}, and private-name violations."""
    modules = {}
    for path in PKG.rglob("*.py"):
        modules[_module_name(path)] = path
    edges: dict[str, set[str]] = {m: set() for m in modules}
    private: list[str] = []
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported_modules: dict[str, str] = {}       # local name -> module it names
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    edges[mod].add(a.name)
                    imported_modules[(a.asname or a.name).split(".")[0]] = a.name
            elif isinstance(node, ast.ImportFrom):
                src = _resolve(mod, is_pkg, node.level, node.module)
                for a in node.names:
                    full = f"{src}.{a.name}"
                    # `from . import x` names a submodule; `from .m import f` names module m
                    edges[mod].add(full if full in modules else src)
                    if full in modules:
                        imported_modules[a.asname or a.name] = full
                    if a.name.startswith("_") and not a.name.startswith("__") and src != mod:
                        private.append(f"{mod}: from {src} import {a.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in imported_modules and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                private.append(f"{mod}: {imported_modules[node.value.id]}.{node.attr}")
    return modules, edges, private


def _in(module: str, packages) -> bool:
    """Whether ``module`` is one of ``packages`` or inside one of them."""
    return any(module == p or module.startswith(p + ".") for p in packages)


def _top_level_imports(path: Path) -> list[str]:
    """Absolute names a module imports when it is imported (not inside functions, nor under TYPE_CHECKING)."""
    out: list[str] = []

    def walk(body):
        for node in body:
            if isinstance(node, ast.Import):
                out.extend(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.append(node.module)
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                walk(node.orelse)
                walk(node.finalbody)
                for h in node.handlers:
                    walk(h.body)

    walk(ast.parse(path.read_text(encoding="utf-8")).body)
    return out


def _internal(edges, name):
    return {t for t in edges.get(name, ()) if t.startswith("ts2viz")}


def _reach(edges, start: str) -> set[str]:
    """Everything ``start`` imports, directly or through ts2viz modules (external names as imported)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        m = todo.pop()
        for t in edges.get(m, ()):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return seen


def test_no_import_cycle():
    modules, edges, _ = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in _internal(edges, m):
            if t not in modules:
                continue
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in modules:
        if m not in state:
            visit(m)


def test_statistics_reach_no_heavy_dependency():
    modules, edges, _ = _graph()
    checked = [m for m in modules if _in(m, STATISTICS)]
    assert "ts2viz.statistics.bootstrap" in checked and "ts2viz.metametrics.results" in checked
    for m in checked:
        bad = sorted(t for t in _reach(edges, m) if t.split(".")[0] in HEAVY + ("plotly", "scipy")
                     or _in(t, ("ts2viz.figures", "ts2viz.ui", "ts2viz.metrics", "ts2viz.engine")))
        assert not bad, f"{m} reaches {bad}"


def test_figures_reach_no_model_nor_app():
    modules, edges, _ = _graph()
    checked = [m for m in modules if _in(m, ("ts2viz.figures",))]
    assert "ts2viz.figures.style" in checked
    for m in checked:
        bad = sorted(t for t in _reach(edges, m) if t.split(".")[0] in HEAVY
                     or _in(t, ("ts2viz.ui", "ts2viz.metrics", "ts2viz.engine")))
        assert not bad, f"{m} reaches {bad}"


def test_plain_ui_rooms_never_reach_gradio():
    modules, edges, _ = _graph()
    checked = [m for m in modules if _in(m, UI_PLAIN)]
    assert "ts2viz.ui.state.app_state" in checked
    for m in checked:
        bad = sorted(t for t in _reach(edges, m) if t.split(".")[0] == "gradio" or _in(t, TOP_LEVEL_GRADIO))
        assert not bad, f"{m} reaches {bad}"


def _ui_room(module: str) -> str | None:
    """The UI room of a module (``""`` for ``ts2viz.ui`` itself), or ``None`` outside the UI."""
    parts = module.split(".")
    if parts[:2] != ["ts2viz", "ui"]:
        return None
    return parts[2] if len(parts) > 2 else ""


def _upward_ui_imports(edges, layers) -> list[str]:
    """The imports between UI rooms that do not go down :data:`UI_LAYERS` (``layers``)."""
    bad = []
    for m, targets in edges.items():
        a = _ui_room(m)
        if not a:
            continue
        for t in targets:
            b = _ui_room(t)
            if b is not None and b != a and (b == "" or layers[a] >= layers[b]):
                bad.append(f"{m} -> {t}")
    return sorted(bad)


def test_ui_rooms_import_downwards():
    modules, edges, _ = _graph()
    rooms = {_ui_room(m) for m in modules} - {None, ""}
    assert rooms == set(UI_LAYERS), f"rooms without a rank (or ranks without a room): {rooms ^ set(UI_LAYERS)}"
    bad = _upward_ui_imports(edges, UI_LAYERS)
    assert not bad, "UI imports against page -> tabs -> glue -> callbacks -> views -> state -> images/serving:\n" + "\n".join(bad)
    # the check can fail: an upward import, an import between rooms of one rank and one of the entry points
    fake = {"ts2viz.ui.state.a": {"ts2viz.ui.callbacks.b"}, "ts2viz.ui.images.c": {"ts2viz.ui.serving.d"},
            "ts2viz.ui.views.e": {"ts2viz.ui"}, "ts2viz.ui.tabs.f": {"ts2viz.ui.glue.g", "ts2viz.ui.tabs.h"}}
    assert _upward_ui_imports(fake, UI_LAYERS) == ["ts2viz.ui.images.c -> ts2viz.ui.serving.d",
                                                   "ts2viz.ui.state.a -> ts2viz.ui.callbacks.b",
                                                   "ts2viz.ui.views.e -> ts2viz.ui"]


def test_heavy_imports_are_lazy():
    modules, _, _ = _graph()
    for m, path in modules.items():
        allowed = ("gradio",) if _in(m, TOP_LEVEL_GRADIO) else ()
        heavy = [t for t in _top_level_imports(path) if t.split(".")[0] in HEAVY + ("plotly",)
                 and t.split(".")[0] not in allowed]
        assert not heavy, f"{m} imports {heavy} at its top level"


def test_metrics_and_engine_never_reach_the_ui():
    modules, edges, _ = _graph()
    for m in modules:
        if m.startswith(("ts2viz.metrics", "ts2viz.engine")):
            ui = sorted(t for t in _reach(edges, m) if t.startswith("ts2viz.ui") or t.split(".")[0] == "gradio")
            assert not ui, f"{m} reaches {ui}"


def test_question_answering_runs_no_model():
    modules, edges, _ = _graph()
    checked = [m for m in modules if _in(m, ("ts2viz.qa",))]
    assert "ts2viz.qa.mapping" in checked and "ts2viz.qa.views" in checked
    for m in checked:
        bad = sorted(t for t in _reach(edges, m) if t.split(".")[0] in HEAVY
                     or _in(t, ("ts2viz.metrics", "ts2viz.ui")))
        assert not bad, f"{m} reaches {bad}"


def test_no_private_names_across_modules():
    _, _, private = _graph()
    assert not private, "\n".join(private)


def test_rules_hold_at_run_time():
    """The static graph is what Python does: computing a leaderboard loads none of the heavy packages."""
    code = ("import sys; from ts2viz import compute, load_dataset, bundled_scores; "
            "compute(load_dataset('ts2'), bundled_scores().select(['CLIPScore']), seg_ids=[0, 1]); "
            "import ts2viz.cli, ts2viz.metrics, ts2viz.engine; "
            f"bad = [m for m in {HEAVY!r} if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_family_modules_import_nothing_heavy():
    """Every module of ``ts2viz.metrics.families`` imports without torch, transformers, open_clip, gradio or
    PIL, so that every family's card (``Family.card``, the module's ``CARD``) can be read cheaply."""
    code = ("import importlib, pkgutil, sys; import ts2viz.metrics as M; import ts2viz.metrics.families as F; "
            "names = [m.name for m in pkgutil.walk_packages(F.__path__, F.__name__ + '.')]; "
            "[importlib.import_module(n) for n in names]; cards = [f.card for f in M.families()]; "
            "assert all(c is not None for c in cards), [f.name for f in M.families() if f.card is None]; "
            "assert len(names) >= len(cards), names; "
            f"bad = [m for m in {HEAVY + ('PIL',)!r} if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_checker_sees_violations(tmp_path):
    """The rules above can fail: a cycle, a heavy import (reached, and at top level) and a private import are
    each reported."""
    src = {
        "a.py": "from . import b\nimport torch\n",
        "b.py": "from .a import _secret\nfrom . import a\n",
    }
    import ts2viz  # noqa: F401  (the real package stays where it is)

    global PKG
    old = PKG
    pkg = tmp_path / "ts2viz"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in src.items():
        (pkg / name).write_text(text)
    PKG = pkg
    try:
        modules, edges, private = _graph()
        assert "ts2viz.b: from ts2viz.a import _secret" in private
        assert "torch" in _reach(edges, "ts2viz.b")
        try:
            test_no_import_cycle()
        except AssertionError as e:
            assert "import cycle" in str(e)
        else:
            raise AssertionError("cycle a -> b -> a not found")
        try:
            test_heavy_imports_are_lazy()
        except AssertionError as e:
            assert "ts2viz.a imports ['torch']" in str(e)
        else:
            raise AssertionError("top-level torch import in a.py not found")
    finally:
        PKG = old
