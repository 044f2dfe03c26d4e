"""What the command line imports (issue 43): ``--help`` no subcommand's module, ``score`` only its family's.

Each check runs in a fresh interpreter and reads ``sys.modules`` after the command.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE_CLIP = REPO / "tests" / "fixtures" / "reference" / "clipscore" / "tiny-clip-vit-b-32"
#: packages none of these commands may import
NEVER = ("torch", "transformers", "gradio", "plotly", "open_clip")

RUN = """\
import contextlib, io, json, sys
from ts2viz.cli import main
argv = json.loads(sys.argv[1])
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def modules_after(argv: list[str], tmp_path: Path) -> tuple[int, set[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TS2VIZ_CACHE": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", RUN, json.dumps(argv)], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return out["rc"], set(out["modules"])


def test_help_imports_no_subcommand_module_nor_numpy(tmp_path):
    rc, mods = modules_after(["--help"], tmp_path)
    assert rc == 0
    heavy = [m for m in (*NEVER, "numpy", "pandas", "scipy") if m in mods]
    assert not heavy, heavy
    assert sorted(m for m in mods if m.startswith("ts2viz")) == ["ts2viz", "ts2viz.cli", "ts2viz.errors"]


def test_import_ts2viz_is_light_and_its_names_still_there(tmp_path):
    code = ("import sys, ts2viz\nassert 'numpy' not in sys.modules and 'pandas' not in sys.modules\n"
            "from ts2viz import compute, load_dataset, Scores, SEG, PAPER\n"
            "assert compute.__module__ == 'ts2viz.metametrics.results' and 'numpy' in sys.modules\n"
            "assert set(ts2viz.__all__) <= set(dir(ts2viz))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert r.returncode == 0, r.stderr


def test_one_subcommand_imports_its_module_only(tmp_path):
    rc, mods = modules_after(["validate", "--help"], tmp_path)
    assert rc == 0
    assert sorted(m for m in mods if m.startswith("ts2viz.cli.")) == ["ts2viz.cli.datasets"]


def test_score_imports_only_its_family(tmp_path):
    import tiny_models

    ds = tiny_models.write_image_dataset(tmp_path / "ds", n_segs=1)
    rc, mods = modules_after(["score", "--metric", f"clipscore:{FIXTURE_CLIP}", "--dataset", str(ds),
                              "--out", str(tmp_path / "out.csv"), "--no-cache", "-q"], tmp_path)
    assert rc == 0 and (tmp_path / "out.csv").exists()
    assert "torch" in mods and "transformers" in mods          # it did load the model
    assert not [m for m in ("gradio", "plotly", "open_clip") if m in mods]
    families = sorted(m for m in mods if m.startswith("ts2viz.metrics.families."))
    assert families == ["ts2viz.metrics.families.clipscore"], families
    assert not [m for m in mods if m.startswith(("ts2viz.ui", "ts2viz.figures", "ts2viz.metrics.qametric"))]
