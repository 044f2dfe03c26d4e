"""Benchmark: permutation tests of every pair of the bundled TIFA160 rows on the pooled human-gold statistics.

Work: the 23 rows ``ts2viz humaneval --gold tifa160`` shows (22 metrics and the TIFA raters as
``human:tifa``), gold = the DSG raters' mean over 800 images; for each of the 253 unordered pairs a
two-sided PERM-BOTH test (every image's two z-scored scores swapped with probability 1/2, the pooled
statistic recomputed), 1,000 permutations, (a) with mt-metrics-eval's early stopping (blocks of 100,
stop below p=0.02 or above 0.5) and (b) without.

ts2viz (``pairwise_gold_permutation``): Pearson and pair-wise accuracy every pair at once (sums linear or
quadratic in the swap pattern: a few matrix products per block); Spearman and Kendall pair by pair,
the statistic vectorised over a block of permutations (ranks by one row-wise sort; Kendall by a batched
merge sort): for them ts2viz *is* the loop below, so only one time is printed.
Baseline (named "loop"): the pair-by-pair loop through the generic ``permutation_test`` with the
statistic vectorised over the permutations of one pair (``vectorise=False``). Same draws: the script
checks that the p-values are identical.

    python benchmarks/bench_gold_permutation.py [--stats spearman,pearson,pairwise_acc,kendall] [--repeat 1]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stats", default="spearman,pearson,pairwise_acc,kendall")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-loop", action="store_true", help="skip the loop baseline")
    args = ap.parse_args()
    import numpy as np

    from ts2viz.gold import answer_scores, load_gold
    from ts2viz.metaeval.rated import rated_score_rows
    from ts2viz.statistics.permutation_tests import PermutationSettings
    from ts2viz.metaeval.permutation import VECTORISED, GoldStatistic, pairwise_gold_permutation

    g = load_gold("tifa160")
    g = g.with_scores(answer_scores(g))
    x, names = rated_score_rows(g)
    h, prompts = g.human(), g.images["prompt_id"].to_numpy()
    k = len(names)
    iu = np.triu_indices(k, 1)
    print(f"TIFA160: {k} rows, {k * (k - 1) // 2} pairs, {x.shape[1]} images, 1,000 permutations, two-sided; "
          f"load average {os.getloadavg()[0]:.2f}")
    for stat in args.stats.split(","):
        spec = GoldStatistic(stat)
        for label, st in (("early stopping", PermutationSettings()),
                          ("no early stopping", PermutationSettings(early_min=0.0, early_max=1.0))):
            runs = {}
            for name, vec in (("ts2viz", True), ("loop", False)):
                if name == "loop" and (args.no_loop or stat not in VECTORISED):
                    continue
                best = np.inf
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    res = pairwise_gold_permutation(x, h, prompts, spec, alternative="two-sided", settings=st,
                                                    vectorise=vec)
                    best = min(best, time.perf_counter() - t)
                runs[name] = (best, res)
            t_fast, r_fast = runs["ts2viz"]
            line = (f"{stat:13s} {label:18s} ts2viz {t_fast:7.2f} s (mean {r_fast.n_used[iu].mean():.0f} "
                    f"permutations per pair)")
            if "loop" in runs:
                t_loop, r_loop = runs["loop"]
                same = np.array_equal(r_fast.pvalue, r_loop.pvalue, equal_nan=True)
                line += f"   loop {t_loop:7.2f} s   x{t_loop / t_fast:.1f}   identical p-values: {same}"
            print(line, flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
