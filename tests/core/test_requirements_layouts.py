"""Every package a released checkpoint layout needs is required by ``requirements.txt``.

transformers imports some packages only when a file needs them: ``sentencepiece`` (and ``protobuf``) for
a SentencePiece ``spiece.model`` / ``tokenizer.model`` without ``tokenizer.json`` (SigLIP, T5 question
filter and NLI, InstructBLIP's LLaMA tokenizer), and so on. A development environment may have such a
package from elsewhere (protobuf comes with Ray here), so a missing requirement would only show on a fresh
``pip install -r requirements.txt`` (``tools/fresh_venv_check.py`` checks that by hand). This test loads a
tiny checkpoint in each layout of ``tests/support/released_layouts.py`` through ts2viz in a fresh
interpreter, lists the distributions whose modules were imported, and fails when one of them is neither
in ``requirements.txt`` nor (transitively) required by something in it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, sys, tempfile
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests/support"]
import released_layouts as rl
before = set(sys.modules)
errors = {}
with tempfile.TemporaryDirectory() as tmp:
    for name in rl.LAYOUTS:
        try:
            rl.check(name, Path(tmp))
        except Exception as e:
            errors[name] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
mods = sorted({m.split('.')[0] for m in sys.modules if not m.startswith('_')})
print(json.dumps({"modules": mods, "errors": errors}))
"""


def requirement_closure(path: Path) -> set[str]:
    """Canonical names of the distributions in ``path`` and of everything they require (installed
    metadata, unconditional requirements and those whose markers hold here, extras left out)."""
    todo = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            todo.append(Requirement(line).name)
    seen: set[str] = set()
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for r in map(Requirement, reqs):
            if r.marker is None or r.marker.evaluate({"extra": ""}):
                todo.append(r.name)
    return seen


#: distributions transformers and torch import when they are installed, without needing them: the layouts
#: loaded in a fresh ``pip install -r requirements.txt`` venv without these (tools/fresh_venv_check.py)
OPTIONAL = {"scipy", "psutil",
            # imported when present by packages of the test environment (requests' charset detection,
            # click's and tqdm's terminal colours), needed by none of the layouts
            "charset-normalizer", "colorama"}


def test_released_layouts_need_only_required_packages(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert not result["errors"], result["errors"]
    dists = metadata.packages_distributions()
    allowed = requirement_closure(ROOT / "requirements.txt") | OPTIONAL | {"ts2viz"}    # and the project itself
    needed = {canonicalize_name(d) for m in result["modules"] for d in dists.get(m, [])
              if not ({canonicalize_name(x) for x in dists.get(m, [])} & allowed)}
    missing = sorted(needed - allowed)
    assert not missing, (f"released layouts import {missing}, which requirements.txt does not bring "
                         "(add them, pinned)")


def test_closure_follows_requirements():
    """The closure is what it claims: it has the pinned packages and their own requirements."""
    allowed = requirement_closure(ROOT / "requirements.txt")
    assert {"torch", "transformers", "tokenizers", "safetensors"} <= allowed
    assert "huggingface-hub" in allowed and "filelock" in allowed     # transformers' own requirements
    assert "pytest" not in allowed and "ray" not in allowed           # test-only packages are not run-time
