"""tools/reference/gpu_precision.py (issue 39 item 10): it runs the reference comparisons on a device at the
default precision and records, rather than raises, each difference. On the CPU the default is fp32, so every
comparison it records must be within the reference tests' own tolerance."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "tools" / "reference" / "gpu_precision.py"


def _tool():
    spec = importlib.util.spec_from_file_location("gpu_precision", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_on_the_cpu_at_its_default_precision_every_fixture_compared_is_within_tolerance(tmp_path):
    out = tmp_path / "p.json"
    r = subprocess.run([sys.executable, str(TOOL), "--device", "cpu", "--only", "clipscore,hpsv2,hpsv3,pickscore",
                        "--out", str(out)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(out.read_text())
    assert [c["case"] for c in got["cases"]] == ["clipscore", "hpsv2", "hpsv3", "pickscore"]
    for c in got["cases"]:
        assert c["dtypes"] == ["float32"] and c["error"] is None and c["exact_mismatches"] == 0, c
        assert c["checks"] and all(k["within_test_tolerance"] and k["n"] >= 4 for k in c["checks"]), c
    assert "hpsv3" in r.stdout and "max_rel=" in r.stdout


def test_a_difference_is_recorded_with_its_size_and_not_raised():
    rec = _tool()._Recorder("cpu", keep_dtype=False)
    rel = rec.check_close([1.0, 2.5], [1.0, 2.0], "planted")
    assert np.isclose(rel, 0.25) and rec.rows[0]["max_abs"] == 0.5 and not rec.rows[0]["within_test_tolerance"]
    rec.check_equal(["yes"], ["no"], "answers")
    assert rec.mismatches == ["answers"]


def test_the_tests_dtype_is_dropped_from_the_spec_so_the_device_default_applies():
    rec = _tool()._Recorder("cpu", keep_dtype=False)
    seen = {}
    rec._load = lambda spec, *a, **k: seen.update(spec=spec, **k) or type("M", (), {"config": {"dtype": "x"}})()
    rec.load("clipscore:/m?dtype=float32", device="cpu", dtype="float32")
    assert seen["spec"] == "clipscore:/m" and "dtype" not in seen
    rec.load("clipscore:/m?variant=hessel&dtype=float32&x=1", device="cpu")
    assert seen["spec"] == "clipscore:/m?variant=hessel&x=1"


def test_an_unknown_case_is_one_line_and_exit_2():
    r = subprocess.run([sys.executable, str(TOOL), "--only", "nosuch"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown case 'nosuch'" in r.stderr
