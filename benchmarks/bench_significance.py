"""Benchmark: permutation tests for all 171 pairs of the 19 bundled metrics (paper mode, OrdAvg).

Work: for every unordered pair of metrics, a one-sided SEG-swap permutation test of "the higher-ranked
metric's OrdAvg > the other's" on the 164 averaged SEGs, 1,000 permutations, (a) with mt-metrics-eval's
early stopping (blocks of 100, stop below p=0.02 or above 0.5) and (b) without; then the significance
clusters. And PERM-BOTH (single images' standardised scores swapped within SEGs, each SEG's Ord
recomputed for every permutation) for all 171 pairs: ``perm_both_pairs`` (per SEG, one
``metametrics.swap_ord.SwapOrd`` kernel scores every pair's swapped rows for a block of patterns with a few
matrix products: bilinear sign tables per node pair for the covariances, per-value holder counts for the
rank variances) against the named baseline "per-permutation": the test as it was written before,
``permutation_test`` with ``seg_stats`` (all five per-SEG statistics) per permuted row, one pair at a time,
timed on one pair and extrapolated to 171; the same draws, so the script checks that the two give the same
p-value on that pair, and that ``perm_both`` (the one-pair test, Ord's sort-based ``seg_ord`` per row)
gives every p-value of the first ``--check-pairs`` pairs.

ts2viz (``ts2viz.statistics``): per block of permutations, one (permutations x SEGs) @ (SEGs x pairs)
product for the swapped sums (and one for the NaN counts), every pair at once.
Baseline (named "loop"): the same test written plainly, measured in the same run: per pair, per
permutation, ``np.where`` to swap the drawn SEGs and ``np.nanmean`` of both metrics. It uses the very
same draws, so both must give identical p-values; the script checks that.

    python benchmarks/bench_significance.py [--permutations 1000] [--repeat 3] [--loop-pairs 171]
        [--perm-both 1000] [--baseline-permutations 100] [--check-pairs 3]
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
    ap.add_argument("--perm-both", type=int, default=1000, help="PERM-BOTH permutations per pair (0: skip)")
    ap.add_argument("--baseline-permutations", type=int, default=100,
                    help="permutations of the per-permutation baseline on one pair (extrapolated)")
    ap.add_argument("--check-pairs", type=int, default=3, help="pairs whose p-values are checked against perm_both")
    args = ap.parse_args()
    import numpy as np

    from ts2viz import bundled_scores, compute, load_dataset
    from ts2viz.statistics.permutation_tests import PermutationSettings, pairwise_unit_permutation
    from ts2viz.metametrics.permutation import cell_unit_values, leaderboard_clusters

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
        perm_both_section(mm, scores, order, pairs, args)


def perm_both_section(mm, scores, order, pairs, args) -> None:
    import numpy as np

    from ts2viz.metametrics.walks import seg_stats
    from ts2viz.metametrics.intervals import averaged_segs
    from ts2viz.metametrics.permutation import perm_both, perm_both_pairs
    from ts2viz.parallel import usable_cpus
    from ts2viz.statistics.permutation_tests import PermutationSettings, permutation_test

    names = [(mm.metrics[i], mm.metrics[j]) for i, j in pairs]
    # baseline: one pair, the per-permutation path (seg_stats per permuted row), its first block of draws
    a, b = mm.metrics[order[0]], mm.metrics[order[3]]
    k = args.baseline_permutations
    st_base = PermutationSettings(n_permutations=k, block_size=k, early_min=0.0, early_max=1.0)
    idx = averaged_segs(mm)["avg"]
    structures = [mm.walk_stats(mm.seg_ids[i])[0] for i in idx]
    xs = [scores.aligned(s.file_names, [a, b]) for s in structures]
    t = time.perf_counter()
    ref = permutation_test([x[:, 0] for x in xs], [x[:, 1] for x in xs],
                           lambda u, rows: seg_stats(structures[u], rows, policy=mm.policy)["ord"],
                           swap="items", settings=st_base)
    base = (time.perf_counter() - t) / k
    one = perm_both_pairs(mm, scores, pairs=[(a, b)], settings=st_base)
    same = one.pvalue[mm.metrics.index(a), mm.metrics.index(b)] == ref.pvalue
    print(f"PERM-BOTH baseline (per-permutation, seg_stats): {base * 1000:.1f} ms per permutation of one pair "
          f"({a} > {b}, {k} permutations; p={ref.pvalue:.4f}, perm_both_pairs gives the same p: {same})")
    for label, st in (("no early stopping", PermutationSettings(n_permutations=args.perm_both, block_size=100,
                                                                early_min=0.0, early_max=1.0)),
                      ("early stopping (blocks of 100)", PermutationSettings(n_permutations=args.perm_both,
                                                                             block_size=100))):
        t, cpu = time.perf_counter(), time.process_time()
        res = perm_both_pairs(mm, scores, pairs=names, settings=st)
        dt, cpu = time.perf_counter() - t, time.process_time() - cpu
        used = int(sum(res.n_used[i, j] for i, j in pairs))
        sig = int(sum(res.pvalue[i, j] <= 0.05 for i, j in pairs))
        print(f"PERM-BOTH all {len(pairs)} pairs x {args.perm_both} permutations, {label}: ts2viz {dt:.1f} s "
              f"({used} pair-permutations, {dt / used * 1000:.3f} ms each; process CPU {cpu:.1f} s on "
              f"{usable_cpus()} CPUs); baseline {base * used:.0f} s "
              f"(extrapolated): x{base * used / dt:.0f}; {sig} pairs with p <= 0.05; load {os.getloadavg()[0]:.2f}")
        for a_, b_ in names[:args.check_pairs]:
            one_pair = perm_both(mm, scores, a_, b_, settings=st)
            i, j = mm.metrics.index(a_), mm.metrics.index(b_)
            print(f"  {a_} > {b_}: p={res.pvalue[i, j]:.4f} ({res.n_used[i, j]} permutations), perm_both "
                  f"p={one_pair.pvalue:.4f} ({one_pair.n_used}): "
                  f"{'equal' if (one_pair.pvalue, one_pair.n_used) == (res.pvalue[i, j], res.n_used[i, j]) else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
