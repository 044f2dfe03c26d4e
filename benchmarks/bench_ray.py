"""Scoring throughput: the engine on a local Ray instance vs the single-process engine, same machine.

Both sides score the same SEG dataset folder (JPEG 512x512 images, TS2 prompts, 16 images per SEG)
with the same CLIP folder (random weights with a real config, see bench_clipscore.py, or ``--model``
a local copy of a real checkpoint), the same batch size and a fresh score cache each (so both hash
the files and commit every batch, as a first run does). Reported per side:

* **scoring**: images/s from the first report of the metric (its model loaded; for Ray, the first
  actor up, the others still loading) to the last committed batch (the progress callback);
* **second half**: images/s over the second half of the images, all actors up: the steady state
  that decides a long run;
* **end to end**: images/s of the whole call, model loading included (Ray starts its actors, each
  loading the model; the single-process engine loads it once).

The ratio is Ray over single-process. The Ray instance is started here with all CPUs of the machine
(one actor per CPU); the single-process engine uses its usual decode threads plus torch's threads.
Not part of the test suite::

    .venv/bin/python benchmarks/bench_ray.py --size small --n 512 --batch-size 32
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(Path(__file__).resolve().parent)]

from bench_clipscore import SIZES, build_model, ts2_prompts, write_images  # noqa: E402

PER_SEG = 16


def write_dataset(folder: Path, n: int) -> Path:
    """A dataset folder: ``n`` JPEGs in SEGs of PER_SEG images (error levels 0, 1, 2), TS2 prompts."""
    paths = write_images(folder / "images", n)
    prompts = ts2_prompts(n // PER_SEG + 1)
    labels = ["0"] * 4 + ["1a"] * 6 + ["2a"] * 6
    lines = ["id,target_prompt,file_name,image_source,rank"]
    for k, p in enumerate(paths):
        seg = k // PER_SEG
        prompt = prompts[seg].replace('"', "'")
        lines.append(f'{seg},"{prompt}",images/{p.name},bench,{labels[k % PER_SEG]}')
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return folder


class Clock:
    """Progress callback recording when each batch of a metric was committed."""

    def __init__(self, spec: str):
        self.spec = spec
        self.marks: list[tuple[float, int]] = []

    def __call__(self, label: str, done: int, total: int) -> None:
        if label == self.spec:
            self.marks.append((time.perf_counter(), done))

    def rate(self, start: float = 0.0) -> float:
        """images/s from the first report at or past ``start`` (a fraction of the images) to the last."""
        total = self.marks[-1][1]
        t0, d0 = next((t, d) for t, d in self.marks if d >= start * total)
        t1, d1 = self.marks[-1]
        return (d1 - d0) / (t1 - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--model", help="an existing local CLIP folder instead of building one")
    ap.add_argument("--n", type=int, default=512, help="number of images")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--actors", type=int, default=None, help="Ray actors (default: one per CPU)")
    args = ap.parse_args()

    import ray
    import torch

    from ts2viz import engine

    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    ds = write_dataset(tmp / "ds", args.n)
    folder = Path(args.model) if args.model else build_model(tmp / f"clip-{args.size}", args.size,
                                                             ts2_prompts(args.n))
    spec = f"clipscore:{folder}"
    n = args.n
    cpus = os.cpu_count() or 1
    print(f"model: {folder.name}; {n} JPEG 512x512 images in SEGs of {PER_SEG}; batch size {args.batch_size}; "
          f"{cpus} CPUs; device cpu")

    # Single process: the model loaded in this process, then the whole dataset.
    t0 = time.perf_counter()
    clock1 = Clock(spec)
    single = engine.score_dataset(ds, [spec], device="cpu", batch_size=args.batch_size,
                                  cache_dir=tmp / "cache-single", progress=clock1)
    t_single = time.perf_counter() - t0
    print(f"single process ({torch.get_num_threads()} torch threads): scoring {clock1.rate():7.1f} images/s, "
          f"second half {clock1.rate(0.5):7.1f} images/s, end to end {n / t_single:7.1f} images/s "
          f"({t_single:.1f} s)")

    # Ray: a local instance started here (not timed), then the same call with ray=True.
    ray.init(num_cpus=cpus, include_dashboard=False, object_store_memory=256 * 1024 ** 2,
             logging_level=logging.ERROR, log_to_driver=False)
    try:
        t0 = time.perf_counter()
        clock2 = Clock(spec)
        dist = engine.score_dataset(ds, [spec], device="cpu", batch_size=args.batch_size,
                                    cache_dir=tmp / "cache-ray", progress=clock2, ray=True,
                                    ray_actors=args.actors)
        t_ray = time.perf_counter() - t0
    finally:
        ray.shutdown()
    actors = args.actors or cpus
    print(f"Ray, {actors} actor(s) x 1 CPU           : scoring {clock2.rate():7.1f} images/s, "
          f"second half {clock2.rate(0.5):7.1f} images/s, end to end {n / t_ray:7.1f} images/s "
          f"({t_ray:.1f} s)")
    # Bit-identical needs the same batches and the same number of torch threads; a 1-CPU actor runs
    # torch on one thread, this process on all cores, which moves float32 rounding a little.
    diff = float(np.nanmax(np.abs(single.values - dist.values)))
    same = np.array_equal(single.values, dist.values, equal_nan=True)
    print(f"same scores: bit-identical {same}, largest difference {diff:.2g}")
    print(f"ratio Ray / single process: scoring {clock2.rate() / clock1.rate():.2f}x, "
          f"second half {clock2.rate(0.5) / clock1.rate(0.5):.2f}x, end to end {t_single / t_ray:.2f}x")
    return 0 if diff < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
