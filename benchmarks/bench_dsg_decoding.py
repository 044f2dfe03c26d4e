"""DSG's InstructBLIP decoding: ts2viz's batched call against DSG's own one-question-at-a-time loop.

DSG's code (j-min/DSG ``InstructBLIP.vqa``) answers one (image, question) pair per ``generate`` call,
beam search with 5 beams. ts2viz (``dsg:MODEL``, ``decoding=dsg``) batches the pairs whose prompts
have the same token lengths, so no row is padded and every answer is the one-at-a-time answer (checked
here too). Baseline: DSG's loop, timed in the same run on the same model. Also shown: ts2viz's
greedy decoding (``decoding=greedy``), the cost of the faithful setting. The model is the tests'
tiny random-weight InstructBLIP (its answers run to the length limit, so the numbers are an upper
bound on the decoding's share); not part of the test suite::

    .venv/bin/python benchmarks/bench_dsg_decoding.py --images 4
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

PROMPT = "A Christmas tree with lights and teddy bear"   # a TS2 prompt: 5 bundled DSG questions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=4, help="images (5 DSG questions each)")
    ap.add_argument("--batch", type=int, default=8, help="pairs per batch for ts2viz")
    args = ap.parse_args()

    import warnings

    import numpy as np
    from PIL import Image

    warnings.filterwarnings("ignore")
    from tiny_models import tiny
    from ts2viz import metrics
    from ts2viz.metrics.common.decoding import DSG_INSTRUCTBLIP

    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 255, size=(40, 48, 3), dtype=np.uint8)) for _ in range(args.images)]
    folder = tiny("instructblip")
    m = metrics.load(f"dsg:{folder}?mapper=lexical&pair_batch_size={args.batch}", device="cpu")
    qs = [q.text for q in m.source.get(PROMPT)]
    pair_images = [im for im in images for _ in qs]
    pair_questions = [q for _ in images for q in qs]
    vqa = m.vqa

    def dsg_loop():  # DSG's code: one pair per generate call
        return [vqa.answer([im], [q], decoding=DSG_INSTRUCTBLIP)[0] for im, q in zip(pair_images, pair_questions)]

    def batched():
        return vqa.answer(pair_images, pair_questions, decoding=DSG_INSTRUCTBLIP)

    def greedy():
        return vqa.answer(pair_images, pair_questions, max_new_tokens=10)

    times, answers = {}, {}
    for name, fn in (("DSG's one-at-a-time loop (baseline)", dsg_loop), ("ts2viz batched, decoding=dsg", batched),
                     ("ts2viz batched, decoding=greedy", greedy)):
        t = time.perf_counter()
        answers[name] = fn()
        times[name] = time.perf_counter() - t
    base = "DSG's one-at-a-time loop (baseline)"
    same = answers[base] == answers["ts2viz batched, decoding=dsg"]
    print(f"{len(pair_questions)} (image, question) pairs, CPU, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for name, t in times.items():
        print(f"  {name:40s} {t:7.2f} s   {times[base] / t:5.2f}x baseline")
    print(f"  batched answers equal the one-at-a-time answers: {same}")


if __name__ == "__main__":
    main()
