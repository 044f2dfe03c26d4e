"""The getting-started page, run as a new user would run it: every ``ts2viz`` command and every Python
block of ``docs/getting-started.md``, in order, in a fresh folder (only the install line and the app's
start are left out: the suite runs in an installed environment, and the app is tested elsewhere)."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting-started.md"


def _blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(bash|python)\n(.*?)```", text, re.S)


def test_getting_started_runs_as_written(tmp_path, monkeypatch):
    blocks = _blocks(PAGE.read_text(encoding="utf-8"))
    assert sum(kind == "bash" for kind, _ in blocks) >= 5 and sum(kind == "python" for kind, _ in blocks) >= 2
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    outputs = []
    for kind, code in blocks:
        if kind == "python":
            exec(compile(code, str(PAGE), "exec"), {"__name__": "__getting_started__"})
            continue
        for line in code.strip().splitlines():
            if line.startswith(("pip install", "python app.py")):
                continue
            args = shlex.split(line)
            assert args[0] == "ts2viz", f"unexpected command in the page: {line}"
            r = subprocess.run([sys.executable, "-m", "ts2viz", *args[1:]], capture_output=True, text=True,
                               env=env, cwd=tmp_path, timeout=600)
            assert r.returncode == 0, f"{line}\n{r.stderr[-2000:]}"
            outputs.append((line, r.stdout))
    assert (tmp_path / "my_scores.csv").is_file() and (tmp_path / "my_tifa160_scores.csv").is_file()
    text = "\n".join(out for _, out in outputs)
    assert "Ensemble" in text and "CLIPScore" in text
    # the numbers the page quotes are the ones the commands print
    page = PAGE.read_text(encoding="utf-8")
    for quoted in re.findall(r"\((\d+\.\d \[\d+\.\d, \d+\.\d\])\)", page):
        assert quoted in text, f"the page quotes {quoted}, which the commands no longer print"
