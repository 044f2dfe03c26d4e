"""What leaving an output out (gr.skip()) costs Gradio, against sending its memoised value.

    python benchmarks/bench_skip_cost.py [--n 300]

For three outputs of an explorer view (a walk plot, the graph's HTML, the node title), built once as the
app memoises them: the server time of a ``gr.skip()`` as Gradio's ``postprocess_data`` handles one (a new
component from the block's arguments, its config, the update dict) and of sending the value (the
component's postprocess, the JSON of the result). Printed per output: both in ms, their ratio, and the
bytes the value would have put on the wire. Baseline: sending the value.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300, help="repetitions of each")
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gradio as gr
    import orjson
    from gradio.blocks import postprocess_update_dict

    from ts2viz.ui import load_state
    from ts2viz.ui.callbacks.explorer import view as cb_view
    from ts2viz.ui.glue.plots import plot_cached

    view = load_state("ts2", fetch_images=False).view()
    v = cb_view.seg_view(view, "paper", 5, "CLIPScore", "TIFA-GPT4V", plot=plot_cached(view, "png"), nodes=False)
    with gr.Blocks():
        blocks = [(gr.Plot(show_label=False), v["walk_fig_a"]), (gr.HTML(min_height=200), v["graph"]),
                  (gr.Markdown(), v["node_title"])]
    print(f"{a.n} repetitions each; load average {os.getloadavg()[0]:.1f}")
    for blk, val in blocks:
        t = time.perf_counter()
        for _ in range(a.n):
            kw = blk.constructor_args.copy()
            kw.pop("value", None)
            kw["render"] = False
            fresh = blk.__class__(**kw)
            fresh.get_config()
            postprocess_update_dict(block=fresh, update_dict={"__type__": "update"}, postprocess=True)
        skip = (time.perf_counter() - t) / a.n
        t = time.perf_counter()
        for _ in range(a.n):
            out = blk.postprocess(val)
            body = orjson.dumps(out.model_dump() if hasattr(out, "model_dump") else out)
        send = (time.perf_counter() - t) / a.n
        print(f"  {type(blk).__name__:<9} skip {1000 * skip:.3f} ms, send {1000 * send:.3f} ms "
              f"(skip / send {skip / send:.0f}x), value {len(body)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
