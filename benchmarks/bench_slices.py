"""Benchmark: Gecko's tasks per slice, 20 metrics x 50 slices x 10,000 bootstrap resamples of prompts.

Work (``ts2viz.metaeval.slices.evaluate_slices_arrays``): for every slice, the point values of every
task (Spearman, Kendall tau-b, Pearson, pair-wise accuracy and acc_eq with the slice's tie calibration,
model ordering with Wilcoxon tests, the per-model Spearman average), then percentile intervals and
bootstrap p-values of Spearman, Kendall, Pearson, both pair-wise accuracies and the ordering tau from
one matrix of 10,000 resamples of the whole set's prompts, applied to every slice (Spearman and Kendall
first-order, the others exact).

Synthetic set (``--prompts 1000 --models 4``, Gecko2K's size): 4,000 images; each slice holds each
prompt with probability ``--slice-share`` (default 0.1: about 100 prompts, 400 images a slice, slices
overlapping as a prompt's tags do).

Baseline (named "loop"): what a user without slices would do, measured in the same run: a loop over
the slices calling ``ts2viz.metaeval.humaneval.evaluate`` on each slice's images with 10,000 resamples of
that slice's prompts (``rank_bootstrap="linear"``, the same first-order rank intervals). It runs
``--loop-slices`` slices (default 5) and is extrapolated to all of them; the script checks that the
two give the same point values on those slices.

    python benchmarks/bench_slices.py [--metrics 20] [--slices 50] [--resamples 10000] [--loop-slices 5]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def synthetic(n_prompts: int, n_models: int, k: int, n_slices: int, share: float, seed: int = 0):
    """bench_humaneval's synthetic rated set, and each slice holding each prompt with probability ``share``."""
    import numpy as np

    from bench_humaneval import synthetic as rated_set

    scores, human, prompts, models = rated_set(n_prompts * n_models, k, n_models, seed)
    member = np.random.default_rng(seed + 1).random((n_slices, n_prompts)) < share
    return scores, human, prompts, models, member[:, prompts]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=int, default=20)
    ap.add_argument("--slices", type=int, default=50)
    ap.add_argument("--prompts", type=int, default=1000)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--slice-share", type=float, default=0.1)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--loop-slices", type=int, default=5)
    args = ap.parse_args()

    import numpy as np
    import pandas  # noqa: F401  (imported before the clocks start: both paths build tables)

    from ts2viz.metaeval.humaneval_settings import HumanEvalSettings
    from ts2viz.metaeval.humaneval import evaluate
    from ts2viz.metaeval.slices import evaluate_slices_arrays
    from ts2viz.statistics.bootstrap import BootstrapSettings

    x, y, prompts, models, masks = synthetic(args.prompts, args.models, args.metrics, args.slices, args.slice_share)
    names = [f"m{i}" for i in range(args.metrics)]
    snames = [f"s{i}" for i in range(args.slices)]
    boot = BootstrapSettings(n_resamples=args.resamples)
    print(f"{x.shape[1]:,} images, {args.prompts:,} prompts, {args.metrics} metrics, {args.slices} slices "
          f"(mean {masks.sum(1).mean():.0f} images), {args.resamples:,} resamples; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    t0, c0 = time.perf_counter(), time.process_time()
    res = evaluate_slices_arrays(x, y, prompts, models, names, masks, snames, bootstrap=boot)
    fr = res.frame()
    t_vec, c_vec = time.perf_counter() - t0, time.process_time() - c0
    print(f"vectorised (one resample matrix for all slices): {t_vec:.2f} s wall, {c_vec:.2f} s CPU")

    st = HumanEvalSettings(rank_bootstrap="linear")
    n_loop = min(args.loop_slices, args.slices)
    t0, c0 = time.perf_counter(), time.process_time()
    for s in range(n_loop):
        sel = masks[s]
        he = evaluate(x[:, sel], y[sel], prompts[sel], models[sel], names, settings=st, bootstrap=boot)
        lf = he.frame()
        mine = fr[fr["slice"] == snames[s]]
        for stat in ("spearman", "kendall", "pearson", "pairwise_acc", "pairwise_acc_eq", "ordering_kendall"):
            assert np.allclose(lf[stat].to_numpy(), mine[stat].to_numpy(), equal_nan=True, atol=1e-12), stat
    t_loop = (time.perf_counter() - t0) / n_loop * args.slices
    c_loop = (time.process_time() - c0) / n_loop * args.slices
    print(f"loop (humaneval.evaluate per slice, its own resamples), extrapolated from {n_loop} slices: "
          f"{t_loop:.2f} s wall, {c_loop:.2f} s CPU")
    print(f"ratio loop / vectorised: {t_loop / t_vec:.1f}x wall, {c_loop / c_vec:.1f}x CPU; the point values "
          f"agree on the {n_loop} slices; load average now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
