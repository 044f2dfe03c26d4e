"""Benchmark: the full paper-mode leaderboard (19 bundled metrics x 165 SEGs).

Baseline (named "naive"): a straightforward implementation, per walk pandas filtering +
scipy.stats.spearmanr / ks_2samp (tests/support/reference_metametrics.py). Measured in the same run as
ts2viz's vectorised engine; prints both times and the speed-up ratio, and checks the numbers agree.
Also times the whole `ts2viz leaderboard` command in a fresh process.

    python benchmarks/bench_metametrics.py [--repeat 5] [--naive-metrics N]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "support")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--naive-metrics", type=int, default=19,
                    help="run the naive baseline on the first N metrics (19 = all; it takes about a minute)")
    args = ap.parse_args()

    import numpy as np

    from reference_metametrics import leaderboard as naive_leaderboard
    from ts2viz import bundled_scores, compute, load_dataset

    sc = bundled_scores()

    times = []
    for _ in range(args.repeat):
        ds = load_dataset("ts2")         # fresh SEG objects: walk enumeration is in every timing
        t = time.perf_counter()
        fast = compute(ds, sc, mode="paper").leaderboard()
        times.append(time.perf_counter() - t)
    t_fast = min(times)
    print(f"ts2viz engine : {t_fast * 1000:8.1f} ms  (best of {args.repeat}; median "
          f"{sorted(times)[len(times) // 2] * 1000:.1f} ms)")

    metrics = sc.metrics[: args.naive_metrics]
    images = ds.images_frame()[["seg_id", "file_name", "label", "level", "partition"]]
    scores = sc.to_frame()
    t = time.perf_counter()
    naive = naive_leaderboard(images, scores, metrics, mode="paper", lower_is_better=sc.lower_is_better)
    t_naive = time.perf_counter() - t
    scale = len(sc.metrics) / len(metrics)
    print(f"naive baseline: {t_naive * 1000:8.1f} ms  ({len(metrics)} metrics"
          + (f", x{scale:.2f} extrapolated to 19: {t_naive * scale:.1f} s" if scale != 1 else "") + ")")
    print(f"speed-up      : {t_naive * scale / t_fast:8.0f}x  (naive / ts2viz, same work)")

    a = fast.set_index("metric").loc[metrics]
    b = naive.set_index("metric").loc[metrics, a.columns]
    diff = float(np.nanmax(np.abs(a.to_numpy(float) - b.to_numpy(float))))
    print(f"max |difference| between the two leaderboards: {diff:.2e}")

    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "ts2viz", "leaderboard"], cwd=REPO, capture_output=True)
    print(f"`python -m ts2viz leaderboard` wall time: {time.perf_counter() - t:.2f} s (exit {r.returncode})")


if __name__ == "__main__":
    main()
