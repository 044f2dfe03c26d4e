"""Benchmark: how sure is the leaderboard, for all 19 bundled metrics (paper mode).

Work: 10,000 stratified bootstrap resamples of the 164 averaged SEGs; intervals for every
leaderboard cell (ord/sep/delta/kendall x avg/synth/nat/real) of every metric; for every cell the full
pairwise matrix (171 metric pairs: paired bootstrap interval of the difference, Wilcoxon p-value, Holm
correction); rank intervals by ord_avg.

ts2viz (``ts2viz.statistics``): the resamples are count matrices and every resampled mean is a matrix
product; Wilcoxon is vectorised over the pairs.
Baseline (named "loop"): a straightforward implementation measured in the same run: a Python loop
over the resamples (per resample, numpy fancy indexing of the drawn SEGs and ``np.nanmean`` per
group), then ``np.percentile`` per metric and per pair, ``scipy.stats.wilcoxon`` per pair and a Holm
loop. It uses the very same resamples (the same count matrices), so both must agree to rounding;
the script checks that and prints the largest differences.

    python benchmarks/bench_uncertainty.py [--resamples 10000] [--repeat 3] [--loop-resamples N]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def vectorised(mm, n_resamples: int, seed: int):
    from ts2viz.metametrics import comparison as pcmp, intervals as bs, ranks as ri

    boot = bs.bootstrap(mm, n_resamples=n_resamples, seed=seed)
    pairs = {c: pcmp.pairwise(mm, c, boot=boot) for c in boot.cells}
    ranks = ri.rank_intervals(mm, "ord_avg", boot=boot)
    return boot, pairs, ranks


def loop(mm, counts, cells, groups, confidence: float, phases: dict):
    """The baseline: one resample at a time, then one pair at a time. ``phases`` gets the seconds of
    the parts that grow with the resamples ("resamples", "percentiles") and of the rest ("tests")."""
    import numpy as np
    from scipy import stats

    from ts2viz.metametrics import intervals as bs
    from ts2viz.metametrics.walks import STATS

    M = len(mm.metrics)
    values = np.concatenate([mm.seg_values[s] for s in STATS], axis=1)          # (S, stats*M)
    B = counts.shape[0]
    t0 = time.perf_counter()
    res = np.empty((B, len(groups), values.shape[1]))
    for b in range(B):
        drawn = np.repeat(np.arange(values.shape[0]), counts[b])
        for g, members in enumerate(groups):
            rows = drawn[np.isin(drawn, members)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res[b, g] = np.nanmean(values[rows], axis=0)
    res = res.reshape(B, len(cells), M)                                          # cell = group-major, stat-minor
    phases["resamples"] = time.perf_counter() - t0
    phases["percentiles"] = phases["tests"] = 0.0
    q = [50 * (1 - confidence), 50 * (1 + confidence)]
    low, high = np.percentile(res, q, axis=0)
    pair_low, pair_high, pvals, holms = {}, {}, {}, {}
    I, J = np.triu_indices(M, 1)
    for c, cell in enumerate(cells):
        stat = bs.split_cell(cell)[0]
        members = groups[cells.index(cell) // len(STATS)]
        v = mm.seg_values[stat][members]
        lo, hi, p = np.empty(len(I)), np.empty(len(I)), np.empty(len(I))
        t0 = time.perf_counter()
        for k, (i, j) in enumerate(zip(I, J)):
            lo[k], hi[k] = np.percentile(res[:, c, i] - res[:, c, j], q)
        t1 = time.perf_counter()
        for k, (i, j) in enumerate(zip(I, J)):
            ok = ~np.isnan(v[:, i]) & ~np.isnan(v[:, j])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p[k] = stats.wilcoxon(v[ok, i], v[ok, j]).pvalue
        phases["percentiles"] += t1 - t0
        phases["tests"] += time.perf_counter() - t1
        order = sorted(range(len(p)), key=lambda k: p[k])
        adj, running = np.empty(len(p)), 0.0
        for r, k in enumerate(order):
            running = max(running, min(1.0, (len(p) - r) * p[k]))
            adj[k] = running
        pair_low[cell], pair_high[cell], pvals[cell], holms[cell] = lo, hi, p, adj
    return low, high, pair_low, pair_high, pvals, holms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--loop-resamples", type=int, default=None,
                    help="resamples for the loop baseline (default: the same; fewer are extrapolated)")
    args = ap.parse_args()

    import os

    import numpy as np

    from ts2viz import bundled_scores, compute, load_dataset
    from ts2viz.metametrics import intervals as bs

    t = time.perf_counter()
    mm = compute(load_dataset("ts2"), bundled_scores(), mode="paper")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (other work on the machine slows both paths)")
    print(f"meta-metrics (input, not timed below): {time.perf_counter() - t:.2f} s; "
          f"{len(mm.metrics)} metrics, {len(mm.seg_ids) - len(mm.excluded)} SEGs averaged")

    vectorised(mm, 50, args.seed)                                   # warm-up (imports, caches)
    times, cpu = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        boot, pairs, ranks = vectorised(mm, args.resamples, args.seed)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    t_fast = min(times)
    n_pairs = sum(len(mm.metrics) * (len(mm.metrics) - 1) // 2 for _ in pairs)
    print(f"ts2viz.statistics: {t_fast:7.3f} s  (best of {args.repeat}; median {sorted(times)[len(times) // 2]:.3f} s)"
          f"  {args.resamples:,} resamples, {len(boot.cells)} cells x {len(mm.metrics)} metrics, "
          f"{n_pairs} pair tests; CPU time {min(cpu):.3f} s (all threads)")

    # the same resamples for the loop: the count matrices bootstrap() drew
    counts = bs.resample_counts(mm, n_resamples=args.resamples, seed=args.seed)
    groups = list(bs.averaged_segs(mm).values())
    n_loop = args.loop_resamples or args.resamples
    t, c = time.perf_counter(), time.process_time()
    phases: dict = {}
    low, high, pair_low, pair_high, pvals, holms = loop(mm, counts[:n_loop], list(boot.cells), groups,
                                                        boot.settings.confidence, phases)
    t_loop, c_loop = time.perf_counter() - t, time.process_time() - c
    extra = ""
    if n_loop != args.resamples:
        # the resample loop and the percentiles grow linearly with the resamples, the tests do not
        scale = args.resamples / n_loop
        t_loop_full = t_loop + (scale - 1) * (phases["resamples"] + phases["percentiles"])
        extra = f" ({n_loop:,} resamples; extrapolated to {args.resamples:,}: {t_loop_full:.1f} s)"
    else:
        t_loop_full = t_loop
    print(f"loop baseline     : {t_loop:7.3f} s{extra}; CPU time {c_loop:.3f} s; parts: "
          + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()))
    print(f"speed-up          : {t_loop_full / t_fast:7.1f}x  (loop / ts2viz, same work)")

    if n_loop == args.resamples:
        cells = list(boot.cells)
        iu = np.triu_indices(len(mm.metrics), 1)
        d_cell = float(np.nanmax(np.abs(np.r_[low - boot.low, high - boot.high])))
        d_pair = max(float(np.nanmax(np.abs(np.r_[pair_low[c] - pairs[c].low[iu], pair_high[c] - pairs[c].high[iu]])))
                     for c in cells)
        r_p = max(float(np.nanmax(np.abs(pvals[c] - pairs[c].pvalue[iu]) / np.maximum(pvals[c], 1e-300)))
                  for c in cells)
        r_h = max(float(np.nanmax(np.abs(holms[c] - pairs[c].pvalue_holm[iu]) / np.maximum(holms[c], 1e-300)))
                  for c in cells)
        print(f"agreement: max |diff| cell intervals {d_cell:.1e}, pair intervals {d_pair:.1e}; "
              f"max relative diff Wilcoxon p {r_p:.1e}, Holm p {r_h:.1e}")
        ok = d_cell < 1e-9 and d_pair < 1e-9 and r_p < 1e-9 and r_h < 1e-9
        print("the two implementations agree" if ok else "MISMATCH between the two implementations")
        if not ok:
            sys.exit(1)

    for cmd in (["leaderboard", "--ci"], ["compare", "CLIPScore", "TIFA-mPLUG"]):
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "ts2viz", *cmd], cwd=REPO, capture_output=True)
        print(f"`python -m ts2viz {' '.join(cmd)}` wall time: {time.perf_counter() - t:.2f} s (exit {r.returncode})")


if __name__ == "__main__":
    main()
