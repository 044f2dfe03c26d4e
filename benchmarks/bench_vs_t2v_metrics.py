"""VQAScore speed: ``ts2viz score`` against t2v_metrics 3.0's own ``batch_forward``, same checkpoint, same images.

What each side's user runs, timed warm (the model loaded, one warm-up call first), float32 on the CPU:

* **baseline, t2v_metrics 3.0**: its ``Score`` class (``VQAScore``) and ``batch_forward`` over the
  (image, prompt) pairs at its default batch size (16; it calls the model's ``forward`` once per pair), in the
  side venv (``tools/reference/t2v_metrics/bench_side.py time``);
* **ts2viz**: the ``ts2viz score`` command (``ts2viz.cli.main``) on a dataset folder of the same images and
  prompts, ``vqascore:CHECKPOINT``, ``--device cpu --no-cache``, run a second time in the same process (the
  first run, on one SEG, loads the model and warms it up), in this venv.

The checkpoint is built once by ``bench_side.py build`` with t2v_metrics' own classes in the released layout
(a small CLIP-FlanT5 or a small LLaVA-1.5, each with a ViT-B/16-sized CLIP tower at 224 px). Each side runs
in its own process, at the same priority, with the same number of torch threads (``--threads``, also
``OMP_NUM_THREADS``); the rounds alternate which side goes first, and each side's best round is reported,
with the ratio against the baseline and the largest relative difference of the two sides' scores.

Runs only where the side venv exists (``tools/reference/t2v_metrics/setup_side_venv.sh``; ``SIDE`` names its
folder, default /work/side/vqascore; for the same torch on both sides build it with
``TORCH="torch==2.15.0 torchvision==0.29.2"``); elsewhere it says so and exits 0::

    .venv/bin/python benchmarks/bench_vs_t2v_metrics.py --model clip-flant5 --n 16 --rounds 3 --threads 2
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIDE = Path(os.environ.get("SIDE", "/work/side/vqascore"))
BASELINE = "t2v_metrics 3.0 batch_forward"


def side_ready() -> str | None:
    """None if the side venv can run t2v_metrics, else why not."""
    py = SIDE / "venv" / "bin" / "python"
    if not py.exists():
        return f"no side venv at {SIDE} (run tools/reference/t2v_metrics/setup_side_venv.sh)"
    r = subprocess.run([str(py), "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('t2v_metrics') is None)"],
                       capture_output=True)
    return None if r.returncode == 0 else f"t2v_metrics is not installed in {py}"


def side(mode: str, *args: str, threads: int) -> None:
    """``bench_side.py MODE ARGS`` in the side venv (no nice: the same priority as this process)."""
    env = {**os.environ, "SIDE": str(SIDE), "OMP_NUM_THREADS": str(threads)}
    subprocess.run(["sh", str(ROOT / "tools/reference/t2v_metrics/run.sh"), "bench_side.py", mode, *args],
                   check=True, env=env, stdout=subprocess.DEVNULL)


def ts2viz_side(out: Path, result: Path, threads: int) -> int:
    """The ts2viz half, in its own process: ``ts2viz score`` warm, timed; writes ``result`` (JSON)."""
    import torch

    torch.set_num_threads(threads)
    sys.path[:0] = [str(ROOT)]
    from ts2viz.cli import main as cli

    setup = json.loads((out / "setup.json").read_text())
    csv_out = result.with_suffix(".csv")
    argv = ["score", "--metric", f"vqascore:{setup['checkpoint']}", "--dataset", setup["dataset"], "--device", "cpu",
            "--no-cache", "--quiet", "--out", str(csv_out)]
    if cli(argv + ["--seg", "0"]):  # loads the model (kept for this process) and scores one SEG: the warm-up
        return 1
    t0 = time.perf_counter()
    if cli(argv):
        return 1
    seconds = time.perf_counter() - t0
    with open(csv_out, newline="") as f:
        rows = list(csv.DictReader(f))
    col = next(k for k in rows[0] if k.startswith("vqascore:"))
    by_name = {r["file_name"]: float(r[col]) for r in rows}
    result.write_text(json.dumps({"seconds": seconds, "threads": torch.get_num_threads(), "torch": torch.__version__,
                                  "scores": by_name}))
    return 0


def main() -> int:
    """Build (once), run the interleaved rounds, print each side's best and the ratio against the baseline."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("clip-flant5", "llava"), default="clip-flant5")
    ap.add_argument("--n", type=int, default=16, help="image-prompt pairs")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (each side's best is reported)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads on both sides")
    ap.add_argument("--out", type=Path, default=None, help="folder for the checkpoint and images (default: temporary)")
    ap.add_argument("--ts2viz-side", type=Path, default=None, help=argparse.SUPPRESS)  # internal: the ts2viz process
    ap.add_argument("--result", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ts2viz_side is not None:
        return ts2viz_side(args.ts2viz_side, args.result, args.threads)
    why = side_ready()
    if why:
        print(f"bench_vs_t2v_metrics: skipped: {why}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "bench"
        if not (out / "setup.json").exists():
            side("build", "--model", args.model, "--out", str(out), "--n", str(args.n), threads=args.threads)
        setup = json.loads((out / "setup.json").read_text())
        if setup["model"] != args.model or len(setup["images"]) != args.n:
            raise SystemExit(f"{out} holds {setup['model']} with {len(setup['images'])} images, not {args.model} "
                             f"with {args.n}")
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
        times: dict[str, list[float]] = {"t2v": [], "ts2viz": []}
        res: dict[str, dict] = {}
        for r in range(args.rounds):
            order = ("t2v", "ts2viz") if r % 2 == 0 else ("ts2viz", "t2v")
            for who in order:
                f = Path(tmp) / f"{who}{r}.json"
                if who == "t2v":
                    side("time", "--out", str(out), "--result", str(f), "--threads", str(args.threads),
                         threads=args.threads)
                else:
                    subprocess.run([sys.executable, __file__, "--ts2viz-side", str(out), "--result", str(f),
                                    "--threads", str(args.threads)], check=True, env=env)
                res[who] = json.loads(f.read_text())
                times[who].append(res[who]["seconds"])
                print(f"  round {r + 1} {who:>6}: {res[who]['seconds']:7.2f} s  (load {os.getloadavg()[0]:.1f})",
                      flush=True)
    want = dict(zip((Path(p).name for p in res["t2v"]["images"]), res["t2v"]["scores"]))
    got = {Path(k).name: v for k, v in res["ts2viz"]["scores"].items()}
    rel = max(abs(got[k] - w) / abs(w) for k, w in want.items())
    n, t2v, ours = len(want), min(times["t2v"]), min(times["ts2viz"])
    print(f"{args.model}: {n} image-prompt pairs, {args.threads} torch threads, float32 CPU, best of {args.rounds} "
          f"interleaved rounds; torch {res['t2v']['torch']} (t2v_metrics) / {res['ts2viz']['torch']} (ts2viz)")
    print(f"  {BASELINE} (batch {res['t2v']['batch_size']}) : {t2v:7.2f} s  ({n / t2v:.2f} pairs/s)")
    print(f"  ts2viz score                              : {ours:7.2f} s  ({n / ours:.2f} pairs/s)")
    print(f"  ratio against {BASELINE}: {t2v / ours:.2f}x   max relative score difference {rel:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
