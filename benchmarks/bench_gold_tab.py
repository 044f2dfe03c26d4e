"""The Human ratings tab's clicks, cold and after the start-up warm-up (issue 40 item 15), in one run.

    python benchmarks/bench_gold_tab.py

Each click is what the tab's redraw computes (``gold_views`` of ``ts2viz/ui/tabs/humaneval.py``): the task's
leaderboard and its note, the scatter's metric list and figure (as the page gets it) and the cross-gold
table. A visitor's path: the tab's first open (tifa160, its default rating set, point-wise), pair-wise,
model ordering, the other rating set, imagenhub-t2i, genaibench-teaser and back.

* ``cold`` (named baseline: the behaviour before the fix): every click computes what it shows, the first
  time it is shown;
* ``warm``: :func:`ts2viz.ui.callbacks.humaneval.warmup.warm` has run (the app runs it in the background at start;
  its own time is printed), then the same clicks.

Timings on a shared machine are noisy: the load average is printed with them; compare the two columns.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLICKS = [("first open", "tifa160", None, "point-wise"), ("pair-wise", "tifa160", None, "pair-wise"),
          ("model ordering", "tifa160", None, "model ordering"), ("rating set tifa", "tifa160", "tifa", "point-wise"),
          ("imagenhub-t2i", "imagenhub-t2i", None, "point-wise"),
          ("genaibench-teaser", "genaibench-teaser", None, "point-wise"), ("back to tifa160", "tifa160", None, "point-wise")]


def click(gold: str, rs: str | None, task: str) -> float:
    from ts2viz.ui.callbacks.humaneval import board as gc_board, crossgold as gc_crossgold, sets as gc_sets
    from ts2viz.ui.glue.plots import page_plot
    from ts2viz.ui.glue.tables import table_value

    t = time.perf_counter()
    rs = rs or gc_sets.rated(gold).default_rating_set
    metrics = gc_sets.metrics_of(gold, rs)
    metric = next((m for m in metrics if not m.startswith("human:")), None)
    gc_board.board_note(gold, rs, task)
    table_value(gc_board.board(gold, rs, task))
    page_plot(lambda: gc_board.scatter_figure(gold, rs, metric))
    table_value(gc_crossgold.cross_gold_shown(gc_crossgold.cross_gold_table()))
    return time.perf_counter() - t


def clear() -> None:
    from ts2viz.ui.callbacks.humaneval import board as gc_board, crossgold as gc_crossgold, sets as gc_sets

    for f in (gc_sets.result, gc_board.clusters, gc_crossgold.cross_long):
        f.cache_clear()


def main() -> int:
    import ts2viz.ui.glue.plots  # noqa: F401 - gradio imported before the clock starts
    from ts2viz.ui.callbacks.humaneval import sets as gc_sets, warmup as gc_warmup

    for name in gc_sets.GOLD_SETS:          # the sets' files read once (both runs)
        gc_sets.rated(name)
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores shared)")
    cold = [click(*c[1:]) for c in CLICKS]
    clear()
    t = time.perf_counter()
    gc_warmup.warm()
    warm_s = time.perf_counter() - t
    warm = [click(*c[1:]) for c in CLICKS]
    print(f"{'click':<20} {'cold s':>8} {'warm s':>8}")
    for (name, *_), a, b in zip(CLICKS, cold, warm):
        print(f"{name:<20} {a:8.2f} {b:8.2f}")
    print(f"warm-up (in the background at start): {warm_s:.1f} s; load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
