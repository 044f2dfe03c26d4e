"""VQAScore speed: ts2viz's engine against t2v_metrics 3.0's own scoring loop, same checkpoint, same images.

Baseline: t2v_metrics' ``forward`` called once per (image, prompt) pair, as its ``batch_forward`` scores a
dataset (run in the side venv by ``tools/reference/t2v_metrics/bench_side.py``, which also builds the
mid-size random-weight checkpoint with t2v_metrics' own classes in the released layout: a small CLIP-FlanT5
or a small LLaVA-1.5, each with a ViT-B/16-sized CLIP tower at 224 px). Then ts2viz's engine
(``ts2viz.engine.score_images``: images decoded and prepared in worker threads, pairs batched) scores the
same pairs from the same checkpoint in this venv. Both in float32 on the CPU with the same number of torch
threads, after one warm-up; model loading is not timed. The two sides' scores are compared too.

Runs only where the side venv exists (``tools/reference/t2v_metrics/setup_side_venv.sh``; ``SIDE`` names its
folder, default /work/side/vqascore); elsewhere it says so and exits 0::

    .venv/bin/python benchmarks/bench_vs_t2v_metrics.py --model clip-flant5 --n 24 --threads 2
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
SIDE = Path(os.environ.get("SIDE", "/work/side/vqascore"))


def side_ready() -> str | None:
    """None if the side venv can run t2v_metrics, else why not."""
    py = SIDE / "venv" / "bin" / "python"
    if not py.exists():
        return f"no side venv at {SIDE} (run tools/reference/t2v_metrics/setup_side_venv.sh)"
    r = subprocess.run([str(py), "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('t2v_metrics') is None)"],
                       capture_output=True)
    return None if r.returncode == 0 else f"t2v_metrics is not installed in {py}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("clip-flant5", "llava"), default="clip-flant5")
    ap.add_argument("--n", type=int, default=24, help="image-prompt pairs")
    ap.add_argument("--threads", type=int, default=2, help="torch threads on both sides")
    ap.add_argument("--batch-size", type=int, default=None, help="ts2viz's pairs per model call (default: its own)")
    args = ap.parse_args()
    why = side_ready()
    if why:
        print(f"bench_vs_t2v_metrics: skipped: {why}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SIDE": str(SIDE)}
        subprocess.run(["sh", str(ROOT / "tools/reference/t2v_metrics/run.sh"), "bench_side.py", "--model", args.model,
                        "--out", tmp, "--n", str(args.n), "--threads", str(args.threads)], check=True, env=env)
        ref = json.loads((Path(tmp) / "t2v.json").read_text())

        import torch

        from ts2viz import engine, metrics

        torch.set_num_threads(args.threads)
        opts = {"batch_size": args.batch_size} if args.batch_size else {}
        m = metrics.load(f"vqascore:{ref['checkpoint']}", device="cpu", dtype="float32", **opts)
        engine.score_images(m, ref["images"][:1], ref["prompts"][:1], use_cache=False)  # warm-up
        t0 = time.perf_counter()
        got = np.asarray(engine.score_images(m, ref["images"], ref["prompts"], use_cache=False), dtype=float)
        ours = time.perf_counter() - t0
    want = np.asarray(ref["scores"])
    rel = float(np.max(np.abs(got - want) / np.abs(want)))
    n = len(want)
    print(f"{args.model}: {n} image-prompt pairs, {args.threads} torch threads, float32 CPU")
    print(f"  t2v_metrics 3.0 forward per pair : {ref['seconds']:7.2f} s  ({n / ref['seconds']:.2f} pairs/s)")
    print(f"  ts2viz engine (batch {m.batch_size:>2})        : {ours:7.2f} s  ({n / ours:.2f} pairs/s)")
    print(f"  ratio (t2v_metrics / ts2viz)     : {ref['seconds'] / ours:.2f}x   max relative score difference {rel:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
