"""A visitor's click on the slices heatmap while the app's warm-up runs, with and without visitors first (issue 38).

    python benchmarks/bench_slices_first_draw.py [--repeats 3] [--at 2.0]

The click draws the Human ratings tab's slices heatmap of a family nothing has computed yet (tifa160, rating
set ``tifa``, ``dsg-category``: the heatmap as the page gets it, and its note), as a visitor's call
(:func:`ts2viz.ui.serving.priority.visitor_call`). Three cases, each run in a fresh process (empty caches,
the rated sets read and Gradio imported before the clock starts), the click timed alone:

* ``alone``: no warm-up running;
* ``warm-up, old`` (named baseline: the behaviour before the fix, ``priority.set_enabled(False)``): the click
  ``--at`` seconds after the start-up warm-up (:func:`ts2viz.ui.callbacks.humaneval.warmup.warm`) and the
  slices warm-up of the default rating set (:func:`ts2viz.ui.callbacks.humaneval_slices.warm`) started;
  the warm-up's threads contend with it for the interpreter lock;
* ``warm-up, visitors first``: the same, the warm-up waiting at its pause points while the click runs.

Each case's median over ``--repeats`` runs and the ratios are printed. Timings on a shared machine are
noisy: the load average is printed with them.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SET, RATING_SET, FAMILY = "tifa160", "tifa", "dsg-category"
CASES = ("alone", "warm-up, old", "warm-up, visitors first")


def one(case: str, at: float) -> dict:
    """One case in this process: the seconds of the click (and where the warm-up was)."""
    import ts2viz.ui.glue.plots  # noqa: F401 - gradio imported before the clock starts
    from ts2viz.ui.callbacks import humaneval_slices as hs
    from ts2viz.ui.callbacks.humaneval import sets as gc_sets, warmup
    from ts2viz.ui.glue.plots import page_plot
    from ts2viz.ui.serving import priority

    for name in gc_sets.GOLD_SETS:          # the sets' files read once, as the app does before serving
        gc_sets.rated(name)
    priority.set_enabled(case != "warm-up, old")
    if case != "alone":
        default_rs = gc_sets.rated(SET).default_rating_set
        threading.Thread(target=warmup.warm, daemon=True).start()
        hs.warm(SET, default_rs)
        time.sleep(at)                      # the visitor arrives this long after start (the benchmark's clock)
    t = time.perf_counter()
    with priority.visitor_call():
        page_plot(lambda: hs.slice_figure(SET, RATING_SET, FAMILY))
        hs.slice_note(SET, RATING_SET, FAMILY)
    return {"case": case, "click_s": time.perf_counter() - t}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--at", type=float, default=2.0, help="seconds into the warm-up the click comes")
    ap.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)     # one run, in a child process
    args = ap.parse_args()
    if args.case:
        print(json.dumps(one(args.case, args.at)))
        return 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times: dict = {c: [] for c in CASES}
    for _ in range(args.repeats):           # the cases interleaved, so that a change of load hits all three
        for case in CASES:
            out = subprocess.run([sys.executable, __file__, "--case", case, "--at", str(args.at)], env=env,
                                 capture_output=True, text=True, check=True)
            times[case].append(json.loads(out.stdout.strip().splitlines()[-1])["click_s"])
    med = {c: statistics.median(v) for c, v in times.items()}
    print(f"click on the slices heatmap ({SET}, {RATING_SET}, {FAMILY}), {args.at:g} s into the warm-up; "
          f"median of {args.repeats}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for c in CASES:
        print(f"  {c:<24} {med[c]:6.2f} s   runs: {', '.join(f'{v:.2f}' for v in times[c])}")
    a, old, new = med["alone"], med["warm-up, old"], med["warm-up, visitors first"]
    print(f"  old / alone {old / a:.2f}x   visitors first / alone {new / a:.2f}x   old / visitors first {old / new:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
