"""Scoring throughput: the engine on a local Ray instance vs the single-process engine, same machine.

Both sides score the same SEG dataset folder (JPEG 512x512 images, TS2 prompts, 16 images per SEG)
with the same CLIP folder (random weights with a real config, see bench_clipscore.py, or ``--model``
a local copy of a real checkpoint), the same batch size and a fresh score cache each (so both hash
the files and commit every batch, as a first run does). Reported per side:

* **scoring**: images/s from the first report of the metric (its model loaded; for Ray, the first
  actor up, the others still loading) to the last committed batch (the progress callback);
* **second half**: images/s over the second half of the images (all actors long up): the steady state
  that decides a long run;
* **end to end**: images/s of the whole run, model loading included (Ray starts a local instance
  and its actors, each loading the model; the single-process engine loads it once);
* **images per CPU-second** (second half, and end to end): CPU time of this process and everything
  under it (the Ray instance is started here), a figure that other load on a shared machine does not
  distort.

The single-process engine runs before and after Ray (the load of a shared machine drifts); ratios
are against the mean of the two.

The Ray instance is started here with all CPUs of the machine (one actor per CPU, torch on one
thread each); the single-process engine uses its usual decode threads plus torch's threads.
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support"), str(Path(__file__).resolve().parent)]

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


def cpu_seconds() -> float | None:
    """CPU time (user + system) of this process and all its descendants, living or reaped: the Ray
    instance started here runs under this process. Linux (/proc); None elsewhere."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: dict[int, tuple[int, float]] = {}
    try:
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    rest = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields after the name: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
            procs[int(d)] = (int(rest[1]), sum(int(x) for x in rest[11:15]) / tick)
    except OSError:
        return None
    mine = {os.getpid()}
    grew = True
    while grew:
        new = {pid for pid, (ppid, _) in procs.items() if ppid in mine} - mine
        grew = bool(new)
        mine |= new
    return sum(procs[pid][1] for pid in mine if pid in procs)


class Clock:
    """Progress callback recording when each batch of a metric was committed, and the CPU time used
    up to the first report past half of the images."""

    def __init__(self, spec: str):
        self.spec = spec
        self.marks: list[tuple[float, int]] = []
        self.half_cpu: float | None = None
        self.half_done = 0

    def __call__(self, label: str, done: int, total: int) -> None:
        if label == self.spec:
            self.marks.append((time.perf_counter(), done))
            if self.half_cpu is None and done >= total / 2:
                self.half_cpu, self.half_done = cpu_seconds(), done

    def rate(self, start: float = 0.0) -> float:
        """images/s from the first report at or past ``start`` (a fraction of the images) to the last."""
        total = self.marks[-1][1]
        t0, d0 = next((t, d) for t, d in self.marks if d >= start * total)
        t1, d1 = self.marks[-1]
        return (d1 - d0) / (t1 - t0)

    def half_per_cpu(self, end_cpu: float | None) -> float | None:
        """images per CPU-second over the second half (CPU read at the end of the call)."""
        if self.half_cpu is None or end_cpu is None:
            return None
        return (self.marks[-1][1] - self.half_done) / (end_cpu - self.half_cpu)


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

    def per_cpu(c) -> str:
        return f", {n / c:5.2f} images per CPU-second" if c is not None else ""

    def half(clock) -> str:
        return f" ({clock.eff:5.2f} per CPU-second)" if clock.eff is not None else ""

    # The single-process engine loads the model once per process: timed once, added to its end to end.
    t0, c0 = time.perf_counter(), cpu_seconds()
    engine.get_metric(spec, "cpu")
    t_load = time.perf_counter() - t0
    c_load = None if c0 is None else cpu_seconds() - c0

    def single(tag: str):
        t0, c0 = time.perf_counter(), cpu_seconds()
        clock = Clock(spec)
        sc = engine.score_dataset(ds, [spec], device="cpu", batch_size=args.batch_size,
                                  cache_dir=tmp / f"cache-single-{tag}", progress=clock)
        t, end = time.perf_counter() - t0 + t_load, cpu_seconds()
        c = None if c0 is None or c_load is None else end - c0 + c_load
        clock.eff = clock.half_per_cpu(end)
        print(f"single process, {tag:6} ({torch.get_num_threads()} torch threads): scoring {clock.rate():6.1f} "
              f"images/s, second half {clock.rate(0.5):6.1f} images/s{half(clock)}, end to end "
              f"{n / t:6.1f} images/s ({t:.1f} s){per_cpu(c)}")
        return sc, clock, t, c

    def on_ray():
        """The same call with ray=True on a local instance started here (its start timed: a user of
        ``ts2viz score --ray`` waits for it too)."""
        t0, c0 = time.perf_counter(), cpu_seconds()
        ray.init(num_cpus=cpus, include_dashboard=False, object_store_memory=256 * 1024 ** 2,
                 logging_level=logging.ERROR, log_to_driver=False)
        try:
            clock = Clock(spec)
            sc = engine.score_dataset(ds, [spec], device="cpu", batch_size=args.batch_size,
                                      cache_dir=tmp / "cache-ray", progress=clock, ray=True,
                                      ray_actors=args.actors)
            t, end = time.perf_counter() - t0, cpu_seconds()
            c = None if c0 is None else end - c0
        finally:
            ray.shutdown()
        clock.eff = clock.half_per_cpu(end)
        print(f"Ray, {args.actors or cpus} actor(s) x 1 CPU, torch on 1 thread each   : scoring "
              f"{clock.rate():6.1f} images/s, second half {clock.rate(0.5):6.1f} images/s{half(clock)}, "
              f"end to end {n / t:6.1f} images/s ({t:.1f} s){per_cpu(c)}")
        return sc, clock, t, c

    # Single process before and after Ray: on a shared machine the load changes while this runs.
    s1, k1, t1, c1 = single("before")
    dist, k2, t2, c2 = on_ray()
    s3, k3, t3, c3 = single("after")
    # Bit-identical needs the same batches and the same number of torch threads; a 1-CPU actor runs
    # torch on one thread, this process on all cores, which moves float32 rounding a little.
    diff = float(np.nanmax(np.abs(s1.values - dist.values)))
    same = np.array_equal(s1.values, dist.values, equal_nan=True)
    print(f"same scores: bit-identical {same}, largest difference {diff:.2g}")
    base = lambda f: (f(k1, t1, c1) + f(k3, t3, c3)) / 2  # noqa: E731 - mean of the two single runs
    line = (f"ratio Ray / single process (mean of before and after): scoring "
            f"{k2.rate() / base(lambda k, t, c: k.rate()):.2f}x, second half "
            f"{k2.rate(0.5) / base(lambda k, t, c: k.rate(0.5)):.2f}x, end to end "
            f"{(n / t2) / base(lambda k, t, c: n / t):.2f}x")
    if None not in (c1, c2, c3):
        line += (f"; images per CPU-second: second half {k2.eff / base(lambda k, t, c: k.eff):.2f}x, "
                 f"end to end {(n / c2) / base(lambda k, t, c: n / c):.2f}x")
    print(line)
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if diff < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
