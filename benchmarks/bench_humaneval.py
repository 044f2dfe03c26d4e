"""Benchmark: Gecko's three tasks for 20 metrics on a 100,000-image synthetic rated set, 10,000
bootstrap resamples of prompts.

Work (``ts2viz.metaeval.evaluate``): point-wise Spearman, Kendall tau-b and tau-c, Pearson pooled and
per T2I model (5 models); pair-wise accuracy on same-prompt pairs and the tie-calibrated acc_eq (tie
calibration fitted per metric); model ordering (Wilcoxon signed-rank tests for the 10 model pairs of
every metric and of the humans); percentile intervals from 10,000 resamples of the 20,000 prompts for
Spearman, Kendall, Pearson, both pair-wise accuracies and the ordering tau. At this size Spearman's
and Kendall's resamples are first-order (``rank_bootstrap="auto"``: exact only while images x
prompts <= 2,000,000 and images <= 5,000, see ts2viz.metaeval.humaneval); the script prints that
note, and how far the first-order Spearman and Kendall resamples are from the loop's exact
(re-ranked) ones on the shared resamples.

Baseline (named "loop"): the straightforward implementation, measured in the same run: one resample
at a time, the drawn prompts' images gathered with numpy fancy indexing, then per metric
``np.corrcoef`` (Pearson), ranks of the resample (Spearman), ``ts2viz.metaeval.kendall`` of the
resample (Kendall tau-b, O(n log n)), per-prompt pair counts (pair-wise) and per-model means
(ordering). It runs a few resamples (``--loop-resamples``) on the very same count
matrices and is extrapolated to the full count; the script checks that both give the same Pearson
values on those resamples.

    python benchmarks/bench_humaneval.py [--images 100000] [--metrics 20] [--resamples 10000]
                                         [--rank-bootstrap auto|exact|linear]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def synthetic(n_images: int, k: int, n_models: int = 5, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    n_prompts = n_images // n_models
    prompts = np.repeat(np.arange(n_prompts), n_models)
    models = np.tile(np.arange(n_models), n_prompts)
    quality = rng.normal(size=n_prompts)[prompts] + 0.2 * models + rng.normal(scale=0.5, size=prompts.size)
    human = np.clip(np.round(3 + quality + rng.normal(scale=0.6, size=prompts.size)), 1, 5)
    noise = np.linspace(0.2, 3.0, k)[:, None]
    scores = quality[None, :] + noise * rng.normal(size=(k, prompts.size))
    scores[k // 2:] = np.round(scores[k // 2:] * 2) / 2          # half the metrics with many ties
    return scores, human, prompts, models


def loop(scores, human, prompts, models, counts_list):
    """The baseline: one resample at a time (Pearson, Spearman of the resample's ranks, Kendall's tau-b
    of the resample, pair-wise accuracy, per-model means)."""
    import numpy as np

    from ts2viz.metaeval import kendall
    from ts2viz.statistics.correlation import rankdata

    k = scores.shape[0]
    P = int(prompts.max()) + 1
    members = np.argsort(prompts, kind="stable").reshape(P, -1)
    out = []
    for counts in counts_list:
        drawn = np.repeat(np.arange(P), counts.astype(int))
        idx = members[drawn].ravel()
        copy = np.repeat(np.arange(drawn.size), members.shape[1])
        h = human[idx]
        rh = rankdata(h)
        vals = []
        for i in range(k):
            x = scores[i, idx]
            r = np.corrcoef(x, h)[0, 1]
            rho = np.corrcoef(rankdata(x), rh)[0, 1]
            xm = x.reshape(-1, members.shape[1])
            hm = h.reshape(-1, members.shape[1])
            a, b = np.triu_indices(members.shape[1], 1)
            dg = hm[:, a] - hm[:, b]
            dm = xm[:, a] - xm[:, b]
            acc = ((dg != 0) & (np.sign(dm) == np.sign(dg))).sum() / (dg != 0).sum()
            mm = np.bincount(models[idx], weights=x) / np.bincount(models[idx])
            vals.append((r, rho, acc, mm, kendall(x, h)))
        del copy
        out.append(vals)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=100_000)
    ap.add_argument("--metrics", type=int, default=20)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--loop-resamples", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--rank-bootstrap", default="auto", choices=("auto", "exact", "linear"))
    args = ap.parse_args()

    import numpy as np

    from ts2viz.metaeval.humaneval_settings import HumanEvalSettings
    from ts2viz.metaeval.humaneval import evaluate
    from ts2viz.metaeval.prompt_bootstrap import prompt_resamples
    from ts2viz.statistics.bootstrap import BootstrapSettings

    scores, human, prompts, models = synthetic(args.images, args.metrics)
    names = [f"metric{i}" for i in range(args.metrics)]
    boot = BootstrapSettings(args.resamples, 0.95, 0)
    settings = HumanEvalSettings(rank_bootstrap=args.rank_bootstrap)
    print(f"{args.images:,} images ({int(prompts.max()) + 1:,} prompts x 5 models), {args.metrics} metrics, "
          f"{args.resamples:,} resamples; load average (1, 5, 15 min) "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    best = cpu = float("inf")
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = evaluate(scores, human, prompts, models, names, settings=settings, bootstrap=boot)
        frame = res.frame()
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    print(f"ts2viz (vectorised): {best:.2f} s wall, {cpu:.2f} s CPU (all threads) for the whole meta-evaluation "
          f"({'under' if best < 10 else 'OVER'} the 10 s target in wall time, {'under' if cpu < 10 else 'OVER'} it in "
          f"CPU time, which a busy machine's queue does not inflate); load average now "
          f"{os.getloadavg()[0]:.2f}; rank intervals: {res.interval_methods}")
    for note in res.interval_notes():
        print("  note:", note)
    counts = [c for _, c in prompt_resamples(int(prompts.max()) + 1, boot)]
    counts = np.concatenate(counts)[:args.loop_resamples]
    t0 = time.perf_counter()
    ref = loop(scores, human, prompts, models, counts)
    per = (time.perf_counter() - t0) / len(counts)
    est = per * args.resamples
    print(f"loop (baseline): {per * 1000:.0f} ms per resample, {est:.0f} s extrapolated to {args.resamples:,} "
          f"resamples (bootstrap part only) -> ts2viz is {est / best:.0f}x faster")
    got = res.samples["pearson"][:, :len(counts)]
    want = np.array([[v[0] for v in vals] for vals in ref]).T
    print(f"largest |Pearson difference| over the {len(counts)} shared resamples: {np.nanmax(np.abs(got - want)):.2e}")
    for stat, col, label in (("spearman", 1, "Spearman"), ("kendall", 4, "Kendall tau-b")):
        got = res.samples[stat][:, :len(counts)]
        want = np.array([[v[col] for v in vals] for vals in ref]).T
        spread = np.nanstd(res.samples[stat], axis=1)
        print(f"{label} ({res.interval_methods[stat]}) vs the loop's {label} of the resampled data on those "
              f"resamples: largest |difference| {np.nanmax(np.abs(got - want)):.2e}, at most "
              f"{np.nanmax(np.abs(got - want) / spread[:, None]):.3f} of a metric's bootstrap standard deviation")
    print(frame[["metric", "spearman", "spearman_lo", "spearman_hi", "pairwise_acc", "pairwise_acc_lo",
                 "pairwise_acc_hi"]].head(3).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
