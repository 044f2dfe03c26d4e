"""The docstrings of the packages that are done follow the house convention (numpy style), checked two ways:

- ``ruff check`` with the docstring rules configured in pyproject.toml (``[tool.ruff.lint]``: every public
  name has a docstring, numpydoc's layout, every parameter of a Parameters section named);
- the sections ruff does not require: a public function or method that takes parameters has a Parameters
  section, one that returns a value a Returns (or Yields) section, a generator a Yields section, one that
  raises an exception itself a Raises section.

DONE lists the packages and modules whose docstrings are done; extend it as more are (one place).
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: the paths (relative to the repository root) whose docstrings are done: checked by both tests
DONE = (
    "app.py",
    "ts2viz",   # the whole package: every public module, class and function (issue 35)
)


def test_done_paths_exist():
    missing = [p for p in DONE if not (ROOT / p).exists()]
    assert not missing, f"DONE names paths that do not exist (moved? update the list): {missing}"


def test_ruff_docstring_rules_pass_on_the_done_paths():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *DONE],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, "ruff check (docstring rules, pyproject.toml) fails:\n" + (r.stdout + r.stderr)[-6000:]


# -- the numpy sections ruff does not require ---------------------------------------------------------

_SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]*)\n\s*-{3,}\s*$", re.M)


def _sections(doc: str) -> set[str]:
    return set(_SECTION.findall(doc))


def _own_nodes(fn: ast.AST):
    """The nodes of a function's own body (not of functions, lambdas or classes defined in it)."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _returns_value(fn: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None
               and not (isinstance(n.value, ast.Constant) and n.value.value is None) for n in _own_nodes(fn))


def _missing_sections(path: Path, root: Path = ROOT) -> list[str]:
    rel = path.relative_to(root)
    out: list[str] = []

    def visit(body, prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body, f"{prefix}{node.name}.", True)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name.startswith("_"):          # private, and dunders (ruff checks they have a docstring)
                    continue
                decorators = [ast.unparse(d) for d in node.decorator_list]
                doc = ast.get_docstring(node)
                if doc is None or any("overload" in d for d in decorators):
                    continue                           # a missing docstring is ruff's D1
                where = f"{rel}:{node.lineno} {prefix}{node.name}"
                if any("property" in d or d.endswith(".setter") for d in decorators):
                    continue                           # documented as an attribute
                secs = _sections(doc)
                args = node.args
                params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
                if in_class and params and params[0] in ("self", "cls") and "staticmethod" not in decorators:
                    params = params[1:]
                if params and not secs & {"Parameters", "Other Parameters"}:
                    out.append(f"{where}: no Parameters section")
                if _returns_value(node) and not secs & {"Returns", "Yields"}:
                    out.append(f"{where}: no Returns section")
                if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(node)) and "Yields" not in secs:
                    out.append(f"{where}: no Yields section")
                if any(isinstance(n, ast.Raise) and n.exc is not None for n in _own_nodes(node)) \
                        and "Raises" not in secs:
                    out.append(f"{where}: no Raises section")

    visit(ast.parse(path.read_text(encoding="utf-8")).body, "", False)
    return out


def _done_files() -> list[Path]:
    files: list[Path] = []
    for p in DONE:
        path = ROOT / p
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [f for f in files if not any(part.startswith("_") and part != "__init__.py"
                                        for part in f.relative_to(ROOT).parts)]


def test_the_sections_cover_parameters_returns_yields_and_raises():
    problems = [m for f in _done_files() for m in _missing_sections(f)]
    assert not problems, "numpy sections missing from public docstrings:\n" + "\n".join(problems)


@pytest.mark.parametrize("source, expected", [
    ('def f(x):\n    """Sum."""\n    return x\n', ["no Parameters section", "no Returns section"]),
    ('def f():\n    """Sum.\n\n    Returns\n    -------\n    int\n        One.\n    """\n    raise ValueError\n',
     ["no Raises section"]),
    ('def f():\n    """Items.\n\n    Returns\n    -------\n    int\n        One.\n    """\n    yield 1\n',
     ["no Yields section"]),
    ('class C:\n    def m(self):\n        """Nothing."""\n\n    @property\n    def p(self):\n        """P."""\n'
     '        return 1\n', []),
    ('def f(x):\n    """F.\n\n    Parameters\n    ----------\n    x : int\n        X.\n    """\n'
     '    def g():\n        raise ValueError\n', []),
])
def test_the_section_check_finds_what_is_missing(tmp_path, source, expected):
    """The check above is itself checked: it flags each missing section and nothing else."""
    f = tmp_path / "m.py"
    f.write_text(source)
    assert [m.split(": ", 1)[1] for m in _missing_sections(f, tmp_path)] == expected
