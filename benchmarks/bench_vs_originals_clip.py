"""CLIPScore speed against the original: ts2viz's engine vs J. Hessel et al.'s own CLIP-S loop, same machine,
same random-weight ViT-B/32 checkpoint, same images and prompts.

The original runs in its side environment (``tools/reference/README.md``: ``fc-clip``, with a checkout of
jmhessel/clipscore), so this script runs only where that environment exists and says so otherwise (exit 0,
nothing timed). What is timed:

* **original**: ``tools/reference/clipscore/bench_original.py`` in the side environment builds the checkpoint
  with the ``clip`` package's own class (ViT-B/32's shape, random weights), writes it in the hub layout of
  ``openai/clip-vit-base-patch32``, and times Hessel's ``get_clip_score`` on the images (its DataLoaders,
  batch 64, 8 workers, its preprocessing; image decoding included);
* **ts2viz**: ``ts2viz.engine.score_images`` with ``clipscore:MODEL?variant=hessel`` (Hessel's formula, float32
  on the CPU) on the converted checkpoint, batch 64, no cache; image decoding included.

Each side: one warm-up run, then the best of ``--repeat``; model loading is not timed. Both must give the same
per-image scores (checked) before the ratio is printed. JPEG 512x512 images, prompts from TS2's metadata in
order. Not part of the test suite::

    .venv/bin/python benchmarks/bench_vs_originals_clip.py --n 256 --repeat 2
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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

SIDE = os.environ.get("TS2VIZ_SIDE", "/work/side")


def write_images(folder: Path, n: int) -> list[str]:
    from PIL import Image

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        small = rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)   # smooth, JPEG-typical content
        p = folder / f"{i:04d}.jpg"
        Image.fromarray(small).resize((512, 512), Image.BICUBIC).save(p, quality=90)
        out.append(str(p))
    return out


def ts2_prompts(n: int) -> list[str]:
    with open(ROOT / "data" / "ts2" / "metadata.csv", newline="", encoding="utf-8") as f:
        rows = [r["target_prompt"] for r in csv.DictReader(f)]
    return [rows[i % len(rows)] for i in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=256, help="number of images")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs per side after a warm-up (best is reported)")
    ap.add_argument("--batch-size", type=int, default=64, help="ts2viz's batch (Hessel's loop uses 64 images)")
    ap.add_argument("--side-python", default=f"{SIDE}/fc-clip/bin/python")
    ap.add_argument("--checkout", default=f"{SIDE}/src/jmhessel+clipscore", help="a checkout of jmhessel/clipscore")
    args = ap.parse_args()
    missing = [p for p in (args.side_python, str(Path(args.checkout) / "clipscore.py")) if not Path(p).exists()]
    if missing:
        print(f"skipped: the original's side environment is not here ({', '.join(missing)} missing); build it "
              "with tools/reference/setup.sh and fetch jmhessel/clipscore (tools/reference/README.md)")
        return 0

    import torch

    from ts2viz import engine, metrics

    tmp = Path(tempfile.mkdtemp(prefix="bench-vs-clip-"))
    paths, prompts = write_images(tmp / "images", args.n), ts2_prompts(args.n)
    (tmp / "prompts.json").write_text(json.dumps({"images": paths, "prompts": prompts}))
    t0 = time.perf_counter()
    subprocess.run([args.side_python, str(ROOT / "tools" / "reference" / "clipscore" / "bench_original.py"),
                    args.checkout, str(tmp), "--repeat", str(args.repeat)], check=True)
    print(f"(original side, build + warm-up + {args.repeat} runs: {time.perf_counter() - t0:.0f} s)")
    orig = json.loads((tmp / "original.json").read_text())

    m = metrics.load(f"clipscore:{tmp / 'model'}?variant=hessel&dtype=float32", device="cpu")

    def run():
        m.clear_text_memo()
        return engine.score_images(m, paths, prompts, batch_size=args.batch_size, use_cache=False)

    run()
    times, ours = [], None
    for _ in range(args.repeat):
        t = time.perf_counter()
        ours = np.asarray(run(), dtype=np.float64)
        times.append(time.perf_counter() - t)
    want = np.asarray(orig["scores"], dtype=np.float64)
    gap = float(np.max(np.abs(ours - want)))
    agree = bool(np.allclose(ours, want, rtol=1e-4, atol=1e-5))
    t_ours, t_orig = min(times), orig["best"]
    load = os.getloadavg()
    print(f"model: random-weight ViT-B/32 CLIP ({sum(p.numel() for p in m.model.parameters()) / 1e6:.0f}M params), "
          f"CPU float32; ts2viz torch {torch.__version__} ({torch.get_num_threads()} threads), original torch "
          f"{orig['torch']} ({orig['threads']} threads); load average {load[0]:.1f}")
    print(f"images: {args.n} JPEG 512x512, {len(set(prompts))} distinct TS2 prompts; best of {args.repeat} after a warm-up")
    print(f"per-image scores agree (rtol 1e-4): {agree} (largest difference {gap:.2e})")
    print(f"Hessel et al.'s get_clip_score : {args.n / t_orig:8.1f} images/s ({t_orig:.1f} s; runs {orig['times']})")
    print(f"ts2viz engine (variant=hessel) : {args.n / t_ours:8.1f} images/s ({t_ours:.1f} s; runs {times})")
    print(f"ratio (original time / ts2viz time): {t_orig / t_ours:.2f}x")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
