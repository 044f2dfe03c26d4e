"""The architecture page (docs/development/architecture.md) matches the tree: every package and module of
ts2viz has its line under "Where things live", every old path kept for imports is listed under "Kept for
old imports", and the page names nothing that does not exist. The page's tables are generated
(``tools/gen_docs.py``: each module's docstring first line, grouped by package; ``tests/docs/test_docs.py``
checks that the committed page is current); this test reads the page as a reader does, independently of
the generator. The rooms keep their names apart: no module of the statistics or the figures shares its
name with another module of ts2viz."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from gen_docs import SHIM_MARK, kept_table, module_tables, tree_modules  # noqa: E402

PKG = ROOT / "ts2viz"
PAGE = ROOT / "docs" / "development" / "architecture.md"


def page_rows(text: str) -> dict[str, dict[str, str]]:
    """{section title: {module named in a table's first column: the row's description}} of the page's
    ``##`` sections (tables under their ``###`` subsections count for the section)."""
    sections: dict[str, dict[str, str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip(), {})
            continue
        m = re.match(r"\|\s*`([^`]+)`\s*\|(.*)\|\s*$", line)
        if m and current is not None:
            assert m.group(1) not in current, f"{m.group(1)} is listed twice"
            current[m.group(1)] = m.group(2).strip()
    return sections


def check(page_text: str, modules: dict[str, str]) -> list[str]:
    """Every disagreement between the page and the tree, one line each (empty when they agree)."""
    sections = page_rows(page_text)
    problems = []
    where = sections.get("Where things live", {})
    kept = sections.get("Kept for old imports", {})
    shims = {m for m, doc in modules.items() if doc.startswith(SHIM_MARK)}
    rooms = set(modules) - shims
    problems += [f"{m} is missing from the page" for m in sorted(rooms - set(where))]
    problems += [f"the page names {m}, which is not a module of ts2viz (or is kept for old imports)"
                 for m in sorted(set(where) - rooms)]
    problems += [f"{m} is kept for old imports but not listed under 'Kept for old imports'"
                 for m in sorted(shims - set(kept))]
    problems += [f"'Kept for old imports' names {m}, which is not such a module" for m in sorted(set(kept) - shims)]
    problems += [f"{m} has no description" for m, d in {**where, **kept}.items() if not d.strip("| ")]
    return problems


def test_page_matches_the_tree():
    problems = check(PAGE.read_text(encoding="utf-8"), tree_modules())
    assert not problems, "docs/development/architecture.md and ts2viz/ disagree:\n" + "\n".join(problems)


def test_kept_paths_are_thin():
    """A module kept for old imports holds its one-line docstring, imports and ``__all__``, nothing else."""
    for name, doc in tree_modules().items():
        if not doc.startswith(SHIM_MARK):
            continue
        path = PKG.parent / Path(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        body = ast.parse(path.read_text(encoding="utf-8")).body
        assert "\n" not in doc, f"{name}: the docstring of a kept path is one line"
        for node in body[1:]:
            ok = isinstance(node, ast.ImportFrom) or (
                isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"])
            assert ok, f"{name} holds more than re-exports (line {node.lineno})"


def test_statistics_and_figures_names_are_unique():
    mods = [m for m, doc in tree_modules().items() if not doc.startswith(SHIM_MARK) and m.count(".") >= 1]
    last = {}
    for m in mods:
        last.setdefault(m.rsplit(".", 1)[1], []).append(m)
    for m in mods:
        if m.startswith(("ts2viz.statistics.", "ts2viz.figures.")):
            same = last[m.rsplit(".", 1)[1]]
            assert same == [m], f"{m} shares its name with {[s for s in same if s != m]}"


def test_the_check_sees_disagreements(tmp_path):
    """The check can fail: a module missing from the page, a page row without a module, a kept path not
    listed, and a row without a description are each reported."""
    pkg = tmp_path / "ts2viz"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Top."""\n')
    (pkg / "a.py").write_text('"""A."""\n')
    (pkg / "sub" / "__init__.py").write_text('"""Sub."""\n')
    (pkg / "sub" / "b.py").write_text('"""B."""\n')
    (pkg / "old.py").write_text(f'"""{SHIM_MARK}: see ts2viz.a."""\nfrom .a import x\n')
    page = ("## Where things live\n\n| Module | What |\n|---|---|\n| `ts2viz` | top |\n| `ts2viz.a` | a |\n"
            "| `ts2viz.sub` | |\n| `ts2viz.gone` | was here |\n\n## Kept for old imports\n\n| Old | Now |\n|---|---|\n")
    problems = check(page, tree_modules(pkg))
    assert "ts2viz.sub.b is missing from the page" in problems
    assert any(p.startswith("the page names ts2viz.gone") for p in problems)
    assert any(p.startswith("ts2viz.old is kept for old imports but not listed") for p in problems)
    assert "ts2viz.sub has no description" in problems
    full = page.replace("| `ts2viz.sub` | |", "| `ts2viz.sub` | sub |\n| `ts2viz.sub.b` | b |").replace(
        "| `ts2viz.gone` | was here |\n", "") + "| `ts2viz.old` | `ts2viz.a` |\n"
    assert check(full, tree_modules(pkg)) == []


def test_the_generator_picks_up_a_new_module(tmp_path):
    """A module added anywhere in the tree gets its row, under its package, from its docstring's first line
    (reST roles and literals as Markdown code, a ``|`` escaped); a new subpackage gets its section; a kept
    path goes to the other table; the generated page passes the check."""
    pkg = tmp_path / "ts2viz"
    (pkg / "room").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Top."""\n')
    (pkg / "room" / "__init__.py").write_text('"""A room."""\n')
    (pkg / "room" / "new.py").write_text('"""What :func:`ts2viz.room.f` and ``x | y`` hold.\n\nMore text."""\n')
    (pkg / "old.py").write_text(f'"""{SHIM_MARK}: see :mod:`ts2viz.room`."""\nfrom .room import x\n')
    modules = tree_modules(pkg)
    tables = module_tables(modules)
    assert "### `ts2viz.room`" in tables and "### `ts2viz`" in tables
    room = tables[tables.index("### `ts2viz.room`"):]
    assert room.index("| `ts2viz.room` | A room. |") < room.index("| `ts2viz.room.new` |")
    assert "| `ts2viz.room.new` | What `ts2viz.room.f` and `x \\| y` hold. |" in tables
    assert "ts2viz.old" not in tables
    kept = kept_table(modules)
    assert "| `ts2viz.old` | see `ts2viz.room`. |" in kept
    page = f"## Where things live\n\n{tables}\n\n## Kept for old imports\n\n{kept}\n"
    assert check(page, modules) == []
    (pkg / "old.py").unlink()
    assert "None" in kept_table(tree_modules(pkg))
