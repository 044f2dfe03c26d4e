"""The scoring engine's own cost per image, the model's taken out: this branch against a baseline commit.

``ts2viz.engine.score_images(metric, images, prompts, use_cache=False)`` (what ``benchmarks/bench_gpu.py``
times on a GPU) on 512 x 512 RGB images in memory, for four kinds of metric, each a tiny random-weight
model (tests/support/tiny_models.py) with the released image processor's size, so that preprocessing
costs what it costs for the full-size model while the model itself costs next to nothing:

* ``clip``: CLIPScore with ``preprocess=fast``: transformers' torchvision CLIPImageProcessor (what
  ``bench_gpu.py``'s CLIP rows use), 224 px;
* ``clip-pil``: CLIPScore as it is by default (``preprocess=original``: transformers' PIL processor
  ``CLIPImageProcessorPil``, what TS2's code ran), 224 px;
* ``pickscore``: the PickScore family on its reference fixture (laion's ViT-H/14 processor, PIL, 224 px);
* ``clip-t5``: VQAScore on CLIP-FlanT5 (t2v_metrics' format: padded to square, PIL processor, 336 px);
* ``llava``: VQAScore on LLaVA-1.5 in LLaVA's own layout (t2v_metrics' format, PIL processor, 336 px).

Each run is a fresh process of this script (``--child``) importing ts2viz from this checkout or from the
baseline (``git archive BASELINE ts2viz``, default: main before this work), on the same checkpoints,
images and prompts, in alternating order, ``--reps`` times; the least CPU time of each side is reported.
Measured per image, in CPU milliseconds (``time.thread_time`` / ``time.process_time``, which other load on
a shared machine distorts far less than wall time):

* **model**: inside the model's forward calls (subtracted from everything else);
* **hash**: the engine's content hash of the image (``hash_pil``);
* **prepare**: ``metric.prepare`` on the worker threads (decoded image -> model input);
* **main**: the thread that drives the model, outside the model: collation, tokenisation, whatever
  ``score_prepared`` does besides the forward pass, the engine's bookkeeping. An accelerator waits on it;
* **all**: every thread of the process, outside the model.

and the **ceiling**: images/s that the engine's own work allows on ``N`` cores if it kept all of them busy,
``min(workers / (all - main), 1 / main)``, ``workers`` the engine's preparation threads on ``N`` cores (the
baseline: ``min(8, N - 1)``; this branch: ``N - 1``). It ignores the GIL (Python code of the threads runs
one at a time) and the model's own CPU work, so a real run stays below it. The scores of both sides are
compared image by image (they must be equal). Not part of the test suite::

    python benchmarks/bench_engine_overhead.py                       # about 3 minutes on 2 cores
    python benchmarks/bench_engine_overhead.py --kinds clip --n 256 --batch-size 256
    python benchmarks/bench_engine_overhead.py --torch-threads 16 --workers 8 --kinds clip   # the H100 box's threads
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: main before this work (the engine the GPU benchmark timed)
BASELINE = "d7ab935"
KINDS = ("clip", "clip-pil", "pickscore", "clip-t5", "llava")
#: the kinds whose model is a dual encoder (timed through get_image_features / get_text_features)
DUAL = ("clip", "clip-pil", "pickscore")
PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights"]


# -- the parent: checkpoints, children, the table -------------------------------------------------------------

def build_checkpoints(root: Path, kinds) -> dict:
    """Tiny checkpoints with full-size image processors (few patches): kind -> metric spec."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]
    import tiny_models as tm

    specs = {}
    if {"clip", "clip-pil"} & set(kinds):
        clip = tm.build_clip(root / "clip", image_size=224, patch_size=32)
        specs["clip"], specs["clip-pil"] = f"clipscore:{clip}?preprocess=fast", f"clipscore:{clip}"
    if "pickscore" in kinds:
        from reward_specs import reward_specs

        specs["pickscore"] = reward_specs()["pickscore"]
    if "clip-t5" in kinds:
        specs["clip-t5"] = f"vqascore:{tm.build_clip_t5(root / 'clip_t5', image_size=336, patch_size=48)}"
    if "llava" in kinds:
        orig, _ = tm.build_llava_original(root / "llava", image_size=336, patch_size=48)
        specs["llava"] = f"vqascore:{orig}"
    return {k: specs[k] for k in kinds}


def export_baseline(ref: str, into: Path) -> Path:
    """``ts2viz/`` as it is at commit ``ref`` (git archive), in ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "ts2viz"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_child(code_root: Path, specs: dict, args, out: Path) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               HF_HUB_DISABLE_PROGRESS_BARS="1", TRANSFORMERS_VERBOSITY="error", PYTHONPATH=str(code_root))
    if args.workers:
        env["TS2VIZ_WORKERS"] = str(args.workers)
    cmd = [sys.executable, __file__, "--child", str(code_root), "--specs", json.dumps(specs), "--out", str(out),
           "--n", str(args.n), "--torch-threads", str(args.torch_threads)]
    if args.batch_size:
        cmd += ["--batch-size", str(args.batch_size)]
    if args.workers:
        cmd += ["--workers", str(args.workers)]
    subprocess.run(cmd, check=True, env=env, cwd=str(code_root))
    return json.loads(out.read_text())


def baseline_workers(n: int) -> int:
    return max(1, min(8, n - 1))


def current_workers(n: int) -> int:
    return max(1, min(32, n - 1))


def ceiling(r: dict, workers: int) -> float:
    side = max(r["all"] - r["main"], 1e-9)
    return min(workers / side, 1.0 / max(r["main"], 1e-9)) * 1e3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    ap.add_argument("--n", type=int, default=64, help="images per run (default 64)")
    ap.add_argument("--batch-size", type=int, default=None, help="engine batch (default: 32 for every kind)")
    ap.add_argument("--reps", type=int, default=3, help="runs per side, alternating (least CPU kept)")
    ap.add_argument("--baseline", default=BASELINE, help=f"git commit of the baseline (default {BASELINE})")
    ap.add_argument("--torch-threads", type=int, default=1, help="torch threads of each child (default 1)")
    ap.add_argument("--workers", type=int, default=None,
                    help="preparation threads of both sides (default: each side's own rule on this machine)")
    ap.add_argument("--cores", default="2,16", help="core counts to print the ceiling for (default 2,16)")
    ap.add_argument("--json", default=None, help="also write the results here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--specs", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        ap.error(f"unknown kind(s) {bad}; known: {', '.join(KINDS)}")
    tmp = Path(tempfile.mkdtemp(prefix="ts2viz-bench-overhead-"))
    specs = build_checkpoints(tmp / "models", kinds)
    base_root = export_baseline(args.baseline, tmp / "baseline")
    sides = {"baseline": base_root, "this branch": ROOT}
    best: dict = {s: {} for s in sides}
    scores: dict = {s: {} for s in sides}
    for rep in range(args.reps):
        order = list(sides) if rep % 2 == 0 else list(sides)[::-1]
        for side in order:
            res = run_child(sides[side], specs, args, tmp / f"{side.replace(' ', '_')}-{rep}.json")
            for kind, r in res["kinds"].items():
                scores[side][kind] = r.pop("scores")
                if kind not in best[side] or r["all"] < best[side][kind]["all"]:
                    best[side][kind] = r
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cores = [int(c) for c in args.cores.split(",") if c.strip()]
    import numpy as np

    print(f"\nengine overhead per image (CPU ms, least of {args.reps} runs), {args.n} images of 512x512, "
          f"torch threads {args.torch_threads}, workers {args.workers or 'own rule'}, "
          f"{os.cpu_count()} CPUs, load average {load:.1f}; baseline = {args.baseline}\n")
    head = (f"{'kind':<10}{'side':<13}{'model':>7}{'hash':>7}{'prepare':>9}{'main':>7}{'all':>7}{'wall':>8}"
            + "".join(f"{'ceil ' + str(c) + 'c':>11}" for c in cores) + "  scores")
    print(head)
    rows = []
    for kind in kinds:
        for side in sides:
            r = best[side][kind]
            w = baseline_workers if side == "baseline" else current_workers
            if args.workers:
                w = (lambda n, _w=args.workers: _w)
            ceils = [ceiling(r, w(c)) for c in cores]
            a, b = np.asarray(scores["baseline"][kind]), np.asarray(scores["this branch"][kind])
            same = "equal" if np.array_equal(a, b, equal_nan=True) else f"max diff {np.nanmax(np.abs(a - b)):.2e}"
            print(f"{kind:<10}{side:<13}{r['model']:>7.2f}{r['hash']:>7.2f}{r['prepare']:>9.2f}{r['main']:>7.2f}"
                  f"{r['all']:>7.2f}{r['wall']:>8.2f}" + "".join(f"{c:>11.0f}" for c in ceils)
                  + (f"  {same}" if side != "baseline" else ""))
            rows.append({"kind": kind, "side": side, **r, "ceilings": dict(zip(map(str, cores), ceils)),
                         "scores_equal": bool(np.array_equal(a, b, equal_nan=True))})
        base, cur = best["baseline"][kind], best["this branch"][kind]
        print(f"{'':<10}{'ratio':<13}{'':>7}{'':>7}{'':>9}{base['main'] / max(cur['main'], 1e-9):>6.1f}x"
              f"{base['all'] / max(cur['all'], 1e-9):>6.1f}x{base['wall'] / max(cur['wall'], 1e-9):>7.1f}x")
    print("\nms per image: model = inside the model's forward; hash = content hash; prepare = metric.prepare on the "
          "workers;\nmain = the model's thread outside the model; all = every thread outside the model; wall = "
          "elapsed (noisy on a shared machine);\nceil Nc = images/s the engine's own work allows on N cores "
          "(see the docstring).")
    prep = preprocessing_times(args.torch_threads)
    print("\none image's preprocessing (512x512 RGB, CPU ms, least of 3 x 16 images): transformers' processor "
          "call vs ts2viz.metrics.common.pixels.processor_pixels (the same tensor)")
    for name, (ref, fast) in prep.items():
        print(f"  {name:<34}{ref:>7.2f}{fast:>7.2f}   {ref / fast:.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"baseline": args.baseline, "n": args.n, "load": load,
                                               "torch_threads": args.torch_threads, "workers": args.workers,
                                               "rows": rows, "preprocessing": prep}, indent=1))
    return 0 if all(r["scores_equal"] for r in rows) else 1


def preprocessing_times(torch_threads: int) -> dict:
    """Per image, CPU ms of the processor's own call and of processor_pixels (this checkout), 224 and 336 px.

    Both of transformers' CLIP processors: the PIL one (TS2's, t2v_metrics') and the torchvision one
    (CLIPScore's ``preprocess=fast``).
    """
    import numpy as np
    import torch
    import transformers
    from PIL import Image

    sys.path[:0] = [str(ROOT)]
    from ts2viz.metrics.common.pixels import processor_pixels

    torch.set_num_threads(torch_threads)
    rng = np.random.default_rng(1)
    images = [Image.fromarray(rng.integers(0, 256, (512, 512, 3), dtype=np.uint8)) for _ in range(16)]

    def per_image(fn) -> float:
        best = float("inf")
        for _ in range(3):
            t = time.thread_time()
            for im in images:
                fn(im)
            best = min(best, (time.thread_time() - t) / len(images) * 1e3)
        return best

    out = {}
    for cls in (transformers.CLIPImageProcessorPil, transformers.CLIPImageProcessor):   # PIL, torchvision
        for px in (224, 336):
            ip = cls(size={"shortest_edge": px}, crop_size={"height": px, "width": px})
            processor_pixels(ip, images[0])     # the fast path's plan and its check, once
            out[f"{cls.__name__} {px} px"] = (per_image(lambda im: ip(images=im, return_tensors="pt")),
                                              per_image(lambda im: processor_pixels(ip, im)))
    return out


# -- a child: one side, every kind --------------------------------------------------------------------------------

class _Clock:
    """CPU seconds of the calling threads inside wrapped callables (outermost calls only), thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.total = 0.0
        self.depth = threading.local()

    def wrap(self, fn):
        def timed(*a, **k):
            d = getattr(self.depth, "n", 0)
            self.depth.n = d + 1
            t = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                self.depth.n = d
                if d == 0:
                    spent = time.thread_time() - t
                    with self.lock:
                        self.total += spent
        return timed


def child(args) -> int:
    import numpy as np
    import torch

    torch.set_num_threads(args.torch_threads)
    from PIL import Image

    import ts2viz.engine.batches as batches
    import ts2viz.engine.core as core
    from ts2viz import engine
    from ts2viz.metrics import load

    assert Path(core.__file__).resolve().is_relative_to(Path(args.child).resolve()), core.__file__
    if args.workers:
        batches._workers = lambda: args.workers     # noqa: SLF001 - the baseline has no TS2VIZ_WORKERS
    specs = json.loads(args.specs)
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (512, 512, 3), dtype=np.uint8)) for _ in range(args.n)]
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(args.n)]
    hash_clock = _Clock()
    batches.hash_pil = hash_clock.wrap(batches.hash_pil)
    out = {}
    for kind, spec in specs.items():
        metric = load(spec, device="cpu")
        model_clock, prep_clock = _Clock(), _Clock()
        model = metric.model if hasattr(metric, "model") else metric.vqa.model
        for name in ("get_image_features", "get_text_features", "encode_images", "forward"):
            if hasattr(model, name) and not (kind in DUAL and name == "forward"):
                setattr(model, name, model_clock.wrap(getattr(model, name)))
        metric.prepare = prep_clock.wrap(metric.prepare)
        bs = args.batch_size or 32
        engine.score_images(metric, images[:4], prompts[:4], use_cache=False, batch_size=bs)   # warm-up
        if hasattr(metric, "clear_text_memo"):
            metric.clear_text_memo()
        for c in (model_clock, prep_clock, hash_clock):
            c.total = 0.0
        p0, t0, w0 = time.process_time(), time.thread_time(), time.perf_counter()
        values = engine.score_images(metric, images, prompts, use_cache=False, batch_size=bs)
        p1, t1, w1 = time.process_time(), time.thread_time(), time.perf_counter()
        n = args.n
        out[kind] = {"model": model_clock.total / n * 1e3, "hash": hash_clock.total / n * 1e3,
                     "prepare": prep_clock.total / n * 1e3, "main": (t1 - t0 - model_clock.total) / n * 1e3,
                     "all": (p1 - p0 - model_clock.total) / n * 1e3, "wall": (w1 - w0) / n * 1e3,
                     "scores": [float(v) for v in values]}
        del metric, model
    Path(args.out).write_text(json.dumps({"kinds": out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
