"""Every example in a docstring of ts2viz runs (``>>>`` lines), as a doctest: the documented examples are
tested in CI and cannot drift from the code."""
from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "ts2viz"


def _modules_with_examples() -> list[str]:
    out = []
    for f in sorted(PKG.rglob("*.py")):
        if ">>>" in f.read_text(encoding="utf-8"):
            rel = f.relative_to(PKG.parent).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.append(".".join(parts))
    return out


MODULES = _modules_with_examples()


def test_there_are_examples():
    assert len(MODULES) >= 2


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert res.attempted > 0, f"{name}: no example was run"
    assert res.failed == 0, f"{name}: {res.failed} of {res.attempted} examples failed (run python -m doctest -v)"
