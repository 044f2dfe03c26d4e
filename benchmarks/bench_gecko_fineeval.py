"""Gecko and T2I-FineEval throughput on the CPU, against VQAScore on the same VQA model.

Both metrics ask many questions per image (Gecko: one per labelled word, two answer likelihoods each;
T2I-FineEval: every entity question on every detected box plus the whole image, every relation
question on up to 10 union boxes plus the whole image, and the coarse pass). VQAScore asks one
question per image with the same VQA model, so the ratio printed here is the cost of that pipeline
per image. Models are the tests' tiny random-weight models (real architectures: PaliGemma, T5,
BLIP-VQA, RT-DETR) and the LLM is the tests' local canned-reply endpoint; the LLM/NLI question stage
is timed separately (it runs once per prompt and its replies are cached on disk). Not part of the
test suite::

    .venv/bin/python benchmarks/bench_gecko_fineeval.py --segs 6
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--segs", type=int, default=6, help="SEGs in the generated dataset (5 images each)")
    ap.add_argument("--confidence", type=float, default=0.55, help="detector confidence (tiny detector)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per metric (the best is reported)")
    args = ap.parse_args()

    from llm_server import chat_server
    from tiny_models import tiny, write_image_dataset
    from ts2viz import engine, metrics
    from ts2viz.dataset import load_dataset

    tmp = Path(tempfile.mkdtemp(prefix="bench-gf-"))
    os.environ["TS2VIZ_CACHE"] = str(tmp / "cache")
    ds = write_image_dataset(tmp / "ds", n_segs=args.segs)
    n = 5 * args.segs
    prompts = [r.prompt for r in load_dataset(ds).rows]
    with chat_server() as (url, _):
        runs = [
            ("vqascore (PaliGemma)", f"vqascore:{tiny('paligemma')}", None),
            ("gecko (PaliGemma, T5 NLI)", f"gecko:{tiny('paligemma')}?generator={url}&nli={tiny('t5nli')}",
             "vqascore (PaliGemma)"),
            ("vqascore (BLIP-VQA)", f"vqascore:{tiny('blip')}", None),
            ("fineeval (BLIP-VQA, RT-DETR)", f"fineeval:{tiny('blip')}?generator={url}&detector={tiny('rtdetr')}"
             f"&confidence={args.confidence}&coarse=same", "vqascore (BLIP-VQA)"),
        ]
        rate = {}
        print(f"{n} images (generated, 40-56 x 48 px), CPU, {os.cpu_count()} cores, best of {args.repeat} runs")
        for name, spec, base in runs:
            m = metrics.load(spec, device="cpu")
            t = time.perf_counter()
            m.check_prompts(prompts)
            t_q = time.perf_counter() - t
            pairs = _pairs(m, ds, prompts)  # also the warm-up
            dt = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                engine.score_dataset(ds, [m], use_cache=False)
                dt = min(dt, time.perf_counter() - t)
            rate[name] = n / dt
            extra = f"  {rate[base] / rate[name]:.1f}x the time of {base}" if base else ""
            print(f"{name:30s} {rate[name]:6.2f} images/s  VQA pairs/image {pairs:5.1f}  "
                  f"question stage {t_q:5.2f} s{extra}")


def _pairs(m, ds, prompts) -> float:
    """Mean (image or crop, question) pairs the metric sends to its VQA model per image (5 images)."""
    names = sorted(p for p in (ds / "images").iterdir())[:5]
    m(images=names, prompts=prompts[:5])
    if not m.has_details:
        return 1.0
    if m.name == "gecko":  # yes/no likelihoods share one forward pass per kept question
        return sum(d["n_kept"] for d in m.last_details) / 5
    return sum(len(dict.fromkeys([*q["candidates"], 0])) for d in m.last_details for q in d["questions"]) / 5


if __name__ == "__main__":
    main()
