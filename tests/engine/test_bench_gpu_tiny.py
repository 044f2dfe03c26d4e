"""benchmarks/bench_gpu.py runs (tiny configs of its five architectures on the CPU): the GPU run is the same code."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_gpu_tiny_runs_every_model_and_writes_its_table(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_gpu", ROOT / "benchmarks" / "bench_gpu.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--tiny", "--n", "4", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "bench_gpu.json").read_text())
    assert out["errors"] == {} and out["tiny"] is True
    assert [r["model"] for r in out["rows"]] == list(bench.MODELS)
    for r in out["rows"]:
        assert r["images"] == 4 and r["scores_finite"], r
        assert r["engine_images_per_s"] > 0 and r["loop_images_per_s"] > 0
    printed = capsys.readouterr().out
    assert "engine img/s" in printed and "qwen2-vl-7b" in printed
