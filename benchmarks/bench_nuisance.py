"""The nuisance test at TS2's size: one metric, six image transforms, 2,840 images, against a naive loop.

A dataset with TS2's shape (the 165 SEGs of the bundled metadata, their node labels and prompts, 2,840
images) whose images are generated (smooth random JPEGs, ``--side`` px, 256 by default), scored with a
CLIP with random weights (``--size tiny``, the default: the tests' 2-layer CLIP, 32 px input; ``small``:
4+6 layers, 224 px; ``b32``: ViT-B/32's shape) clean and under the six image transforms of the default set
(``jpeg:quality=30, rescale:factor=0.5, crop:fraction=0.9, blur:sigma=2, brightness:factor=1.2,
noise:sigma=8``), in one run:

* **engine**: :func:`ts2viz.nuisance.run.run` (the batch engine: decoding and transforms on worker
  threads ahead of the model, batches of ``--batch-size``, a fresh score cache written per batch), then
  the same again (everything from the cache);
* **naive loop**: per image, decode it, score it, and for each transform transform it and score the
  copy, one model call per image (``metric(images=[im], prompts=[p])``), no cache: what a script
  around a metric does. Over the first ``--naive`` images (default 400; 0: all), compared per image with
  the engine's scores, its time per score set against the engine's;
* **per-image costs**, each measured alone on this machine: decoding, each transform, and the model
  (preprocessing and batched scoring of already decoded images); printed with the ratio of each
  transform's cost to the model's.

CPU seconds are this process's (``time.process_time``: all its threads). Not part of the test suite::

    .venv/bin/python benchmarks/bench_nuisance.py                  # tiny CLIP, 256 px images, 2,840 of them
    .venv/bin/python benchmarks/bench_nuisance.py --naive 0        # the naive loop on all of them too
    .venv/bin/python benchmarks/bench_nuisance.py --size small     # a larger CLIP (224 px input)
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support"), str(Path(__file__).resolve().parent)]

SIX = ("jpeg:quality=30", "rescale:factor=0.5", "crop:fraction=0.9", "blur:sigma=2", "brightness:factor=1.2",
       "noise:sigma=8")


def write_ts2_shaped(folder: Path, side: int) -> Path:
    """The bundled TS2 metadata (SEG ids, prompts, node labels, file names) with generated images."""
    from PIL import Image

    rng = np.random.default_rng(0)
    rows = list(csv.DictReader(open(ROOT / "data" / "ts2" / "metadata.csv", newline="", encoding="utf-8")))
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "metadata.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["id", "target_prompt", "file_name", "image_source", "rank"])
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in ("id", "target_prompt", "file_name", "image_source", "rank")})
            p = folder / r["file_name"]
            p.parent.mkdir(parents=True, exist_ok=True)
            small = rng.integers(0, 255, (12, 12, 3), dtype=np.uint8)
            im = Image.fromarray(small).resize((side, side), Image.BICUBIC)
            im.save(p, format="JPEG", quality=90)
    return folder


def model(folder: Path, size: str, prompts: list[str]) -> str:
    if size == "tiny":
        from tiny_models import build_clip

        return f"clipscore:{build_clip(folder)}"
    from bench_clipscore import build_model

    return f"clipscore:{build_model(folder, size, prompts)}"


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", choices=["tiny", "small", "b32"], default="tiny")
    ap.add_argument("--side", type=int, default=256, help="generated image side in pixels")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--naive", type=int, default=400, help="images for the naive loop (default 400; 0: all)")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import warnings

    warnings.filterwarnings("ignore")
    from PIL import Image

    from ts2viz import engine
    from ts2viz.dataset import load_dataset
    from ts2viz.nuisance import run as R, transforms as T

    tmp = Path(tempfile.mkdtemp(prefix="ts2viz-bench-nuisance-"))
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cpus {os.cpu_count()}", flush=True)
    t0 = time.perf_counter()
    ds = load_dataset(write_ts2_shaped(tmp / "ds", args.side))
    spec = model(tmp / f"clip-{args.size}", args.size, sorted({r.prompt for r in ds.rows}))
    print(f"dataset: {len(ds.segs)} SEGs, {len(ds.rows)} images of {args.side}x{args.side} px "
          f"(made in {time.perf_counter() - t0:.1f} s); model {args.size} CLIP, random weights; batch "
          f"{args.batch_size}; device {args.device}")
    metric = engine.get_metric(spec, args.device, batch_size=args.batch_size)
    ts = [T.parse(s) for s in SIX]
    names = ds.file_names
    prompts = [ds.row(f).prompt for f in names]
    paths = [ds.image_path(f) for f in names]

    # -- the engine, fresh cache, then again from the cache
    ns, eng_w, eng_c = timed(lambda: R.run(ds, metric, SIX, batch_size=args.batch_size, cache_dir=tmp / "cache"))
    _, again_w, again_c = timed(lambda: R.run(ds, metric, SIX, batch_size=args.batch_size, cache_dir=tmp / "cache"))
    n = len(names)
    scored = n * (1 + len(SIX))
    print(f"\nengine: {scored:,} scores (clean + 6 transforms) in {eng_w:.1f} s wall, {eng_c:.1f} s CPU "
          f"({scored / eng_w:.0f} scores/s); re-run from the cache: {again_w:.1f} s wall")

    # -- the naive loop
    k = n if not args.naive else max(1, min(n, args.naive))

    def naive():
        out = np.full((k, 1 + len(SIX)), np.nan)
        for i in range(k):
            im = Image.open(paths[i]).convert("RGB")
            out[i, 0] = metric(images=[im], prompts=[prompts[i]])[0]
            for j, t in enumerate(ts):
                out[i, 1 + j] = metric(images=[t.image(im)], prompts=[prompts[i]])[0]
        return out

    nv, nv_w, nv_c = timed(naive)
    eng = np.column_stack([ns.runs[0].clean, ns.runs[0].transformed])[:k]
    diff = float(np.nanmax(np.abs(nv - eng)))
    eng_w_k, eng_c_k = eng_w * k / n, eng_c * k / n
    print(f"naive loop: {k * (1 + len(SIX)):,} scores ({k} images) in {nv_w:.1f} s wall, {nv_c:.1f} s CPU; "
          f"largest difference from the engine's scores {diff:.1e} (batched vs one image at a time)")
    print(f"  engine vs naive, per score: {nv_w / eng_w_k:.2f}x faster wall, {nv_c / eng_c_k:.2f}x less CPU "
          f"(engine's time scaled to the same {k} images)")

    # -- per-image costs, each alone
    sample = paths[: min(n, 400)]
    imgs, dec_w, dec_c = timed(lambda: [Image.open(p).convert("RGB") for p in sample])
    m = len(sample)
    per_t = {}
    for t in ts:
        _, w, c = timed(lambda t=t: [t.image(im) for im in imgs])
        per_t[t.spec] = (w / m, c / m)

    def model_only():
        for a in range(0, m, args.batch_size):
            batch = imgs[a:a + args.batch_size]
            metric.score_prepared([metric.prepare(im) for im in batch], prompts[a:a + len(batch)])

    _, mod_w, mod_c = timed(model_only)
    mw, mc = mod_w / m, mod_c / m
    print(f"\nper-image costs over {m} images (one thread each, CPU ms; wall ms in brackets):")
    print(f"  decode            {1000 * dec_c / m:7.3f}  [{1000 * dec_w / m:.3f}]")
    print(f"  model (prepare + batched scoring)  {1000 * mc:7.3f}  [{1000 * mw:.3f}]")
    total = 0.0
    for s, (w, c) in per_t.items():
        total += c
        print(f"  {s:<22} {1000 * c:7.3f}  [{1000 * w:.3f}]   transform / model = {c / mc:.3f}")
    print(f"  all six transforms {1000 * total:7.3f}   six transforms / six model calls = {total / (6 * mc):.3f}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
