"""No code outside a family's module branches on the family's name (issue 41).

What a family's metrics return, how it is written, which group it shows in, is on its ``FAMILY`` record
(:class:`ts2viz.metrics.family.Family`) and read through the registry (``details_kind``, ``display_name``,
...). So a string literal equal to a registered family's name compared with ``==``, ``!=``, ``in`` / ``not
in`` (alone or in a literal tuple, list or set) or matched in a ``case`` is an error anywhere in ``ts2viz/``
outside ``ts2viz/metrics/families/``, unless :data:`ALLOWED` names the file and the literal with a reason.
"""
from __future__ import annotations

import ast
from pathlib import Path

from ts2viz.metrics.registry import builtin_families

ROOT = Path(__file__).resolve().parents[2]
#: where family names may be compared freely: the families' own modules
FAMILY_MODULES = "ts2viz/metrics/families/"
#: (file, literal) -> why the comparison is not a family's knowledge held outside its module
#: (empty: the decoding settings named after TIFA and DSG now live in their families' modules, and the VQA
#: backbones dispatch on ``Decoding.call``)
ALLOWED: dict[tuple[str, str], str] = {}


def _literal(node, names) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
        return node.value
    return None


def family_comparisons(source: str, names) -> list[tuple[int, str]]:
    """(line, name) for every comparison of a literal in ``names`` in ``source`` (the rule above)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for op, a, b in zip(node.ops, sides, sides[1:]):
                if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                    continue
                hits = [_literal(a, names), _literal(b, names)]
                if isinstance(op, (ast.In, ast.NotIn)) and isinstance(b, (ast.Tuple, ast.List, ast.Set)):
                    hits += [_literal(e, names) for e in b.elts]
                found += [(node.lineno, h) for h in hits if h]
        elif isinstance(node, ast.MatchValue) and _literal(node.value, names):
            found.append((node.lineno, node.value.value))
    return sorted(set(found))


def _violations(names, root: Path = ROOT, allowed: dict = ALLOWED) -> tuple[list[str], set]:
    bad, used = [], set()
    for path in sorted((root / "ts2viz").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(FAMILY_MODULES):
            continue
        for line, name in family_comparisons(path.read_text(encoding="utf-8"), names):
            if (rel, name) in allowed:
                used.add((rel, name))
            else:
                bad.append(f"{rel}:{line}: compares the family name {name!r} (ask the family's record)")
    return bad, used


def test_no_family_name_is_compared_outside_its_module():
    names = set(builtin_families())
    assert {"tifa", "dsg", "gecko", "fineeval", "csv"} <= names
    bad, used = _violations(names)
    assert not bad, "\n".join(bad)
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"allow-list entries that no longer match anything: {stale}"
    assert all(why.strip() for why in ALLOWED.values())


def test_the_rule_sees_a_planted_comparison(tmp_path):
    names = {"tifa", "dsg", "gecko"}
    planted = (
        "def f(family, kind, x):\n"
        "    if family == 'tifa':\n"              # line 2
        "        return 1\n"
        "    if 'gecko' != kind or x in ('a', 'dsg'):\n"   # line 4: two
        "        return 2\n"
        "    match kind:\n"
        "        case 'dsg':\n"                   # line 7
        "            return 3\n"
        "    return {'tifa': 4}['tifa'] if x == 'tifa-like' else kind in NAMES\n"   # none
    )
    assert family_comparisons(planted, names) == [(2, "tifa"), (4, "dsg"), (4, "gecko"), (7, "dsg")]
    # a tree like the repository's: the planted line is reported in a caller, not in a family's module,
    # and an allow-listed literal passes in its own file only
    line = "def f(src):\n    return src.family == 'tifa'\n"
    for rel in ("ts2viz/ui/callbacks/questions/nodes.py", "ts2viz/metrics/families/tifa/__init__.py",
                "ts2viz/metrics/common/decoding.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(line)
    allowed = {("ts2viz/metrics/common/decoding.py", "tifa"): "a planted entry"}
    bad, used = _violations(names, tmp_path, allowed)
    assert bad == ["ts2viz/ui/callbacks/questions/nodes.py:2: compares the family name 'tifa' (ask the family's record)"]
    assert used == {("ts2viz/metrics/common/decoding.py", "tifa")}
