"""Benchmark: permutation tests for all 171 pairs of the 19 bundled metrics (paper mode, OrdAvg).

Work: for every unordered pair of metrics, a one-sided SEG-swap permutation test of "the higher-ranked
metric's OrdAvg > the other's" on the 164 averaged SEGs, 1,000 permutations, (a) with mt-metrics-eval's
early stopping (blocks of 100, stop below p=0.02 or above 0.5) and (b) without; then the significance
clusters. And one PERM-BOTH test (single images' standardised scores swapped within SEGs, the SEG's
Ord recomputed by the leaderboard's own code for each permutation) for one pair, to show its cost.

ts2viz (``ts2viz.statistics``): per block of permutations, one (permutations x SEGs) @ (SEGs x pairs)
product for the swapped sums (and one for the NaN counts), every pair at once.
Baseline (named "loop"): the same test written plainly, measured in the same run: per pair, per
permutation, ``np.where`` to swap the drawn SEGs and ``np.nanmean`` of both metrics. It uses the very
same draws, so both must give identical p-values; the script checks that.

    python benchmarks/bench_significance.py [--permutations 1000] [--repeat 3] [--loop-pairs 171]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def loop(values, pairs, settings):
    import numpy as np

    S = values.shape[0]
    out = {}
    for i, j in pairs:
        a, b = values[:, i], values[:, j]
        obs = np.nanmean(a) - np.nanmean(b)
        rng = np.random.default_rng(settings.seed)
        hits = used = 0
        while used < settings.n_permutations:
            k = min(settings.block_size, settings.n_permutations - used)
            z = rng.random((k, S)) < 0.5
            for t in range(k):
                d = np.nanmean(np.where(z[t], b, a)) - np.nanmean(np.where(z[t], a, b))
                hits += d >= obs - 1e-12 * max(1.0, abs(obs))
            used += k
            p = (hits + 1) / (used + 1)
            if p < settings.early_min or p > settings.early_max:
                break
        out[(i, j)] = (hits + 1) / (used + 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--permutations", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--loop-pairs", type=int, default=171, help="pairs the loop baseline runs (extrapolated to 171)")
    ap.add_argument("--perm-both", type=int, default=100, help="permutations of the PERM-BOTH pair (0: skip)")
    args = ap.parse_args()
    import numpy as np

    from ts2viz import bundled_scores, compute, load_dataset
    from ts2viz.statistics.permutation_tests import PermutationSettings, pairwise_unit_permutation
    from ts2viz.statistics.leaderboard_permutation import cell_unit_values, leaderboard_clusters, perm_both

    scores = bundled_scores()
    mm = compute(load_dataset("ts2"), scores)
    values = cell_unit_values(mm, "ord_avg")
    est = mm.averages()["ord_avg"]
    M = len(mm.metrics)
    order = list(np.argsort(-est, kind="stable"))
    pairs = [(order[a], order[b]) for a in range(M) for b in range(a + 1, M)]   # higher-ranked first
    print(f"{len(mm.metrics)} metrics, {len(pairs)} pairs, {values.shape[0]} SEGs, {args.permutations} permutations; "
          f"load average {os.getloadavg()[0]:.2f}")
    for label, block in (("early stopping (blocks of 100)", 100), ("no early stopping", args.permutations)):
        st = PermutationSettings(n_permutations=args.permutations, block_size=block)
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            res = pairwise_unit_permutation(values, settings=st, pairs=pairs)
            times.append(time.perf_counter() - t)
        fast = min(times)
        used = np.mean([res.n_used[i, j] for i, j in pairs])
        sub = pairs[:args.loop_pairs]
        t = time.perf_counter()
        ref = loop(values, sub, st)
        slow = (time.perf_counter() - t) * len(pairs) / len(sub)
        worst = max(abs(ref[p] - res.pvalue[p]) for p in sub)
        print(f"{label}: ts2viz {fast:.3f} s (best of {args.repeat}), loop {slow:.2f} s"
              f"{'' if len(sub) == len(pairs) else f' (extrapolated from {len(sub)} pairs)'}: "
              f"x{slow / fast:.0f}; mean permutations per pair {used:.0f}; largest p difference {worst:.1e}")
    t = time.perf_counter()
    cl = leaderboard_clusters(mm, "ord_avg")
    print(f"clusters (tests included): {time.perf_counter() - t:.3f} s -> "
          + " | ".join(", ".join(c) for c in cl.members()))
    if args.perm_both:
        a, b = mm.metrics[order[0]], mm.metrics[order[3]]
        st = PermutationSettings(n_permutations=args.perm_both, block_size=args.perm_both)
        t = time.perf_counter()
        r = perm_both(mm, scores, a, b, "ord_avg", settings=st)
        dt = time.perf_counter() - t
        print(f"PERM-BOTH {a} > {b}: p={r.pvalue:.3f} with {r.n_used} permutations in {dt:.1f} s "
              f"({dt / r.n_used * 1000:.0f} ms per permutation: all 171 pairs x 1,000 would take "
              f"~{dt / r.n_used * 171000 / 3600:.1f} h)")


if __name__ == "__main__":
    main()
