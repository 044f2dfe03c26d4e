"""What the app's interval views cost: the bootstrap drawn once per mode, then reused.

    python benchmarks/bench_ui_uncertainty.py [--reps 5]

Bundled TS2 data and published scores (19 metrics), paper mode, as the server runs the views:
callback, figure as plot JSON, table as the Dataframe's value. Each view is built afresh (the
view memo is cleared before each run; a repeated view is a memo hit and costs nothing). Baseline:
the same leaderboard view without intervals, measured in the same run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ts2viz.ui import load_state
    from ts2viz.ui.callbacks.uncertainty import (resampled as uc_bootstrap, comparison as uc_comparison,
                                                 significance as uc_significance)
    from ts2viz.ui.tabs.board import board_view
    import gradio as gr

    table = gr.Dataframe(interactive=False, render=False)
    cache = Path(tempfile.mkdtemp(prefix="ts2viz-bench-"))
    load_state("ts2", cache_root=cache, fetch_images=False).mm("paper")      # meta-metrics on disk

    def fresh():
        st = load_state("ts2", cache_root=cache, fetch_images=False)
        st.mm("paper")
        return st

    def ms(fn, reps, before=None):
        ts = []
        for _ in range(reps):
            if before:
                before()
            t = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t) * 1000)
        return statistics.median(ts), min(ts)

    st = fresh()
    view = st.view()

    def board(whiskers, table_ci, sort_by="ord_avg"):
        return lambda: board_view(view, "paper", ["All"], sort_by, "best first", "png", table,
                                  whiskers=whiskers, table_ci=table_ci)

    clear = st.memo.clear
    base, _ = ms(board(False, False), args.reps, clear)

    # the first view that needs intervals in a mode draws the bootstrap (a fresh app each time)
    holder = {}

    def new_app():
        holder["st"] = fresh()
        holder["v"] = holder["st"].view()

    first_draw, _ = ms(lambda: uc_bootstrap.board_bootstrap(holder["v"], "paper"), args.reps, new_app)
    first_view, _ = ms(lambda: board_view(holder["v"], "paper", ["All"], "ord_avg", "best first", "png", table,
                                          whiskers=True, table_ci=False), args.reps, new_app)
    uc_bootstrap.board_bootstrap(view, "paper")
    cached_boot, _ = ms(lambda: uc_bootstrap.board_bootstrap(view, "paper"), args.reps)
    whisk, _ = ms(board(True, False), args.reps, clear)
    both, _ = ms(board(True, True), args.reps, clear)
    resort, _ = ms(board(True, True, "sep_avg"), args.reps, clear)
    hit, _ = ms(board(True, True), args.reps)
    sig, _ = ms(lambda: uc_significance.significance_figure(view, "paper", "ord", "All"), args.reps, clear)
    pair, _ = ms(lambda: uc_comparison.pair_comparison_md(uc_comparison.pair_comparison(view, "paper", "ord", "CLIPScore", "TIFA-GPT4V"),
                                               "ord"), args.reps, clear)
    boot = uc_bootstrap.board_bootstrap(view, "paper").boot
    print(f"bundled TS2, {len(boot.metrics)} metrics, {boot.settings.n_resamples:,} resamples, "
          f"{len(boot.cells)} cells; bootstrap kept: {boot.resampled.nbytes / 2**20:.0f} MiB; median of {args.reps}")
    rows = [
        ("baseline: leaderboard view, no intervals", base),
        ("bootstrap drawn (first use in a mode)", first_draw),
        ("first leaderboard view with whiskers (draws it)", first_view),
        ("bootstrap reused (cached)", cached_boot),
        ("leaderboard view, whiskers (bootstrap cached)", whisk),
        ("leaderboard view, whiskers + table intervals", both),
        ("same, sorted by Sep (rank intervals by Sep)", resort),
        ("same view again (view memo hit)", hit),
        ("significance heatmap, Ord · Avg (bootstrap cached)", sig),
        ("pair caption, CLIPScore vs TIFA-GPT4V", pair),
    ]
    for name, v in rows:
        print(f"  {name:<52} {v:8.1f} ms   {v / base:6.2f}x baseline")


if __name__ == "__main__":
    main()
