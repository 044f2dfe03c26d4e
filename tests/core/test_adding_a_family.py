"""Adding a metric family is one new file: docs/development/adding-a-family.md, followed.

The page's module is written into a copy of the package (nothing else changed), and there the registry
finds it, ``ts2viz metrics`` lists it as the page shows, the documentation generator writes its card page
and its table rows, ``load`` scores with it, and the registry's contract tests
(tests/metrics/test_registry_contract.py) run over it and pass.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "development" / "adding-a-family.md"
NAME = "colourfulness"


def page_blocks(lang: str) -> list[str]:
    """The page's fenced code blocks in ``lang``."""
    return re.findall(rf"^```{lang}\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """A copy of the package and of the files the documentation generator fills, plus the page's one module."""
    root = tmp_path_factory.mktemp("added-family")
    shutil.copytree(ROOT / "ts2viz", root / "ts2viz", ignore=shutil.ignore_patterns("__pycache__"))
    for rel in ("tools/gen_docs.py", "README.md", "docs/metrics/index.md", "docs/development/architecture.md",
                "mkdocs.yml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    (module,) = page_blocks("python")
    (root / "ts2viz" / "metrics" / "families" / f"{NAME}.py").write_text(module, encoding="utf-8")
    return root


def run(copy: Path, code: str, *args: str) -> str:
    """Run ``python -c code`` (or ``python ARGS``) on the copy; its stdout."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    cmd = [sys.executable, *(args or ("-c", code))]
    out = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def test_the_page_teaches_one_module_and_the_family_is_new():
    from ts2viz import metrics

    assert len(page_blocks("python")) == 1
    assert NAME not in [f.name for f in metrics.families()]
    assert not (ROOT / "ts2viz" / "metrics" / "families" / f"{NAME}.py").exists()


def test_the_registry_finds_it_and_the_listing_shows_it_as_the_page_says(copy):
    listing = run(copy, "import sys; from ts2viz.cli import main; sys.exit(main(['metrics']))")
    (console,) = page_blocks("console")
    shown = [ln for ln in console.splitlines() if not ln.startswith("$")]
    lines = listing.splitlines()
    at = lines.index(shown[0])
    assert lines[at:at + len(shown)] == shown
    names = json.loads(run(copy, "import json; from ts2viz import metrics; "
                                 "print(json.dumps([f.name for f in metrics.families()]))"))
    # in its group (preference), after the families the display order names, before the user's own
    assert names.index(NAME) == names.index("hpsv3") + 1 and names.index(NAME) < names.index("callable")


def test_the_documentation_generator_writes_its_pages(copy):
    out = run(copy, "import json, sys; sys.path.insert(0, 'tools'); import gen_docs; "
                    "print(json.dumps({str(k): v for k, v in gen_docs.generated_pages().items()}))")
    pages = json.loads(out)
    card = pages[f"docs/metrics/{NAME}.md"]
    assert card.startswith(f"# `{NAME}`") and "Hasler" in card and "| `batch_size` |" in card
    assert "tests/core/test_adding_a_family.py::test_the_page_family_scores_as_its_formula" in card
    assert f"[{NAME}](docs/metrics/{NAME}.md)" in pages["README.md"]
    assert f"[{NAME}]({NAME}.md)" in pages["docs/metrics/index.md"]
    assert f"      - {NAME}: metrics/{NAME}.md" in pages["mkdocs.yml"]


def test_the_page_family_scores_as_its_formula(copy, tmp_path):
    """Against Eq. 3 of Hasler and Süsstrunk, computed here by hand on two images."""
    from PIL import Image

    rng = np.random.default_rng(3)
    arrays = [rng.integers(0, 256, (6, 5, 3), dtype=np.uint8), np.full((4, 4, 3), 128, dtype=np.uint8)]
    paths = []
    for k, a in enumerate(arrays):
        paths.append(tmp_path / f"{k}.png")
        Image.fromarray(a).save(paths[-1])
    want = []
    for a in arrays:
        r, g, b = (a[..., c].astype(float).ravel() for c in range(3))
        rg, yb = r - g, (r + g) / 2 - b
        sd = np.sqrt(np.mean((rg - rg.mean()) ** 2) + np.mean((yb - yb.mean()) ** 2))
        want.append(sd + 0.3 * np.sqrt(rg.mean() ** 2 + yb.mean() ** 2))
    got = json.loads(run(copy, "import json, sys; from ts2viz import metrics; "
                               f"m = metrics.load('{NAME}:hasler', device='cpu'); "
                               f"print(json.dumps(m(images={[str(p) for p in paths]!r}, prompts=['a', 'b']).tolist()))"))
    assert want[1] == 0.0 and want[0] > 10          # a grey image has none; noise has plenty
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_registry_contract_runs_over_it_and_passes(copy):
    out = run(copy, "", "-m", "pytest", str(ROOT / "tests" / "metrics" / "test_registry_contract.py"),
              "-q", "-n", "0", "-p", "no:cacheprovider", "-k", f"{NAME} or every_family")
    counts = re.search(r"(\d+) passed", out)
    # one test per family check (example, options, card, tiny model) plus the every-family check
    assert counts and int(counts.group(1)) == 5 and "failed" not in out, out[-2000:]
