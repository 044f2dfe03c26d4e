"""Pages that say they are runnable (``<!-- runnable ... -->`` on their first line: the getting-started
page and tutorials) are run as a new user would run them: every Python block and every ``ts2viz``
command, in order, in a fresh folder. Left out: ``pip install`` lines (the suite runs installed) and
starting the app (tested elsewhere). The numbers a page quotes in the form ``(71.4 [67.3, 75.2])`` must
be among what its commands print."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md")
               if p.read_text(encoding="utf-8").startswith("<!-- runnable"))


def _blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(bash|python)\n(.*?)```", text, re.S)


def _commands(code: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", code)
    return [ln.split("  #")[0].strip() for ln in joined.strip().splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def test_there_are_runnable_pages():
    names = {p.relative_to(ROOT / "docs").as_posix() for p in PAGES}
    assert "getting-started.md" in names and any(n.startswith("tutorials/") for n in names)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_page_runs_as_written(page, tmp_path, monkeypatch):
    text = page.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}", "HF_HUB_OFFLINE": "1",
           "TS2VIZ_CACHE": str(tmp_path / ".cache")}
    monkeypatch.setenv("TS2VIZ_CACHE", str(tmp_path / ".cache"))
    printed = []
    namespace: dict = {"__name__": "__page__"}
    for kind, code in _blocks(text):
        if kind == "python":
            exec(compile(code, str(page), "exec"), namespace)
            continue
        for line in _commands(code):
            if line.startswith(("pip install", "python app.py", "mkdocs")):
                continue
            args = shlex.split(line)
            assert args[0] == "ts2viz", f"{page.name}: unexpected command {line!r}"
            r = subprocess.run([sys.executable, "-m", "ts2viz", *args[1:]], capture_output=True, text=True,
                               env=env, cwd=tmp_path, timeout=900)
            assert r.returncode == 0, f"{page.name}: {line}\n{r.stderr[-2000:]}"
            printed.append(r.stdout)
    out = "\n".join(printed)
    for quoted in re.findall(r"\((\d+\.\d \[\d+\.\d, \d+\.\d\])\)", text):
        assert quoted in out, f"{page.name} quotes {quoted}, which its commands no longer print"
