"""The server's work for one explorer view change, this code against another checkout, in one run.

    python benchmarks/bench_explorer_view.py --before /tmp/main-copy [--views 150] [--rounds 2]

For each code root (``--before DIR``, e.g. ``git archive main | tar -x -C DIR``, and this checkout), in a
fresh process each, alternating ``--rounds`` times: the bundled TS2 data loaded offline, both modes'
meta-metrics computed, then ``--views`` random (mode, SEG, metric A, metric B) views built as the
explorer's SEG event builds them (``seg_view`` with the app's plot cache, the walk table's value, the
walk picker's update) and each of the event's seven value outputs through Gradio's own postprocess and
its file scan of the result, twice as Gradio runs it (what the app installs at start included: for this
checkout the scan left out for outputs without files). First pass: every view new (cold memo); second
pass: the same views again (warm). Printed: ms per view, cold and warm, per root and round, and the
ratio of this checkout to the other (medians over rounds). HTTP, the queue and Gradio's per-event work
around the function are not in it (``bench_load.py`` has them).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r'''
import asyncio, json, os, random, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
import gradio as gr
from gradio import processing_utils as pu
try:
    from ts2viz.ui.glue.file_scan import skip_file_scan_of_fileless_outputs
    skip_file_scan_of_fileless_outputs()
except ImportError:
    pass
from ts2viz.ui import load_state
from ts2viz.ui.callbacks.explorer import view as V
from ts2viz.ui.glue.plots import plot_cached
from ts2viz.ui.glue.tables import table_value, dropdown
n = int(sys.argv[1])
app = load_state("ts2", fetch_images=False)
view = app.view()
for m in ("paper", "spec"):
    app.mm(m)
segs, ms = list(app.dataset.segs), app.metrics
comps = {"header": gr.Markdown(), "graph": gr.HTML(), "node_title": gr.Markdown(), "gallery": gr.Gallery(),
         "walk_fig_a": gr.Plot(), "walk_fig_b": gr.Plot(), "walk_table": gr.Dataframe(interactive=False)}
rnd = random.Random(0)
keys = [(rnd.choice(["paper", "spec"]), rnd.choice(segs), rnd.choice(ms), rnd.choice(ms)) for _ in range(n)]

async def post(v, walks):
    for k, c in comps.items():
        out = c.postprocess(walks if k == "walk_table" else v[k])
        out = out.model_dump() if hasattr(out, "model_dump") else out
        await pu.async_move_files_to_cache(out, c, postprocess=True)
        await pu.async_move_files_to_cache(out, c, postprocess=True)

def one(mode, sid, a, b):
    v = V.seg_view(view, mode, sid, a, b, plot=plot_cached(view, "png"), nodes=False)
    walks = view.memo(("walk_table_value", mode, sid, a, b), [a, b], lambda: table_value(v["walk_table"]))
    dropdown(v["walk_choices"], v["walk"])
    asyncio.run(post(v, walks))

out = {}
for name in ("cold", "warm"):
    t = time.perf_counter()
    for k in keys:
        one(*k)
    out[name] = 1000 * (time.perf_counter() - t) / n
print(json.dumps(out))
'''


def run(root: Path, views: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    r = subprocess.run([sys.executable, "-c", CHILD, str(views)], cwd=root, env=env, capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, metavar="DIR", help="the other checkout (the baseline)")
    ap.add_argument("--views", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    roots = {"before": Path(a.before).resolve(), "this": ROOT}
    got: dict[str, list[dict]] = {k: [] for k in roots}
    print(f"{a.views} views, {a.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    for r in range(a.rounds):
        for label, root in roots.items():
            res = run(root, a.views)
            got[label].append(res)
            print(f"  round {r + 1} {label:<6} cold {res['cold']:.1f} ms/view, warm {res['warm']:.1f} ms/view")
    for kind in ("cold", "warm"):
        b = statistics.median(x[kind] for x in got["before"])
        t = statistics.median(x[kind] for x in got["this"])
        print(f"{kind}: before {b:.1f} ms/view, this {t:.1f} ms/view, this / before {t / b:.2f}")
    print(f"load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
