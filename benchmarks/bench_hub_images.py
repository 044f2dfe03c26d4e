"""Cold start to the first fully drawn SEG view on a Space-like setup (issue 26), against the behaviour
before it, in one run.

    python benchmarks/bench_hub_images.py [--delay 0.3] [--wait 15]

Each configuration starts ``python app.py`` on the bundled TS2 metadata (no image files) with an empty
hub cache and ``HF_ENDPOINT`` pointing at the protocol server of ``tests/support/hub_server.py`` (every request
delayed by ``--delay`` seconds), opens Chromium on it as soon as it serves, opens the SEG explorer, and
times (from the app's process start and from the tab's opening) until SEG 0's graph shows all 11 real
thumbnails, with no further interaction:

* ``baseline`` (named baseline: the behaviour before issue 26, as settings of this code): no live
  redraw (``TS2VIZ_IMAGE_TICK=0``), no warm-up (``TS2VIZ_PREFETCH=off``), 2 download threads (the old
  pool). Before issue 26 the probe also dialled port 443 of the mirror's host, so against a mirror on
  another port images never came at all; the baseline here has the probe fixed. Without interaction its
  view stays grey: after ``--wait`` seconds the visitor reloads the page every 2 s until it is drawn.
* ``live``: the live redraw alone (``TS2VIZ_PREFETCH=off``, 6 threads);
* ``default``: what ships (live redraw, the first SEG warmed at start, 6 threads).

Timings on a shared machine are noisy: the load average is printed with them.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

GRAPH_JS = """() => {
  const g = document.querySelector('#seg-graph');
  return g ? g.querySelectorAll('.thumbs img[src^="data:image/jpeg"]').length : -1;
}"""

CONFIGS = {
    "baseline": {"TS2VIZ_IMAGE_TICK": "0", "TS2VIZ_PREFETCH": "off", "TS2VIZ_IMAGE_WORKERS": "2"},
    "live": {"TS2VIZ_PREFETCH": "off", "TS2VIZ_IMAGE_WORKERS": "6"},
    "default": {},
}


def run_one(name: str, extra: dict, delay: float, wait: float) -> dict:
    from app_server import browser_page, running_app
    from hub_server import HubServer, ts2_image_repo

    want = 11   # SEG 0's graph: nodes of 1, 5, 3 and 3 images, 4 shown per node
    with tempfile.TemporaryDirectory(prefix=f"ts2viz-hub-{name}-") as d, HubServer(delay=delay) as hub:
        d = Path(d)
        ts2_image_repo(hub, ROOT / "data" / "ts2" / "metadata.csv")
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(d / "hf"), "HF_HUB_CACHE": str(d / "hf" / "hub"),
               "HF_HUB_DISABLE_TELEMETRY": "1", **extra}
        t_start = time.monotonic()
        with running_app(["--host", "127.0.0.1"], d, env=env, drop_env=("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"),
                         timeout=180) as (url, _):
            t_serving = time.monotonic() - t_start
            with browser_page() as pg:
                pg.goto(url + "/")
                pg.get_by_role("tab", name="SEG explorer").click()
                t_open = time.monotonic()
                reloads = 0
                while pg.evaluate(GRAPH_JS) < want:
                    if time.monotonic() - t_open > wait + 60:
                        return {"name": name, "serving": t_serving, "full": None, "from_tab": None, "reloads": reloads}
                    if time.monotonic() - t_open > wait:      # a visitor who gave up waiting reloads
                        pg.reload()
                        pg.get_by_role("tab", name="SEG explorer").click()
                        reloads += 1
                        time.sleep(2.0)
                        continue
                    time.sleep(0.05)
                t_full = time.monotonic()
    return {"name": name, "serving": t_serving, "full": t_full - t_start, "from_tab": t_full - t_open,
            "reloads": reloads, "requests": len(hub.log)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delay", type=float, default=0.3, help="seconds the hub adds to every request")
    ap.add_argument("--wait", type=float, default=15.0, help="seconds a baseline visitor waits before reloading")
    ap.add_argument("--only", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    args = ap.parse_args()
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    print(f"hub delay {args.delay * 1000:.0f} ms per request; load average before: {os.getloadavg()}")
    res = []
    for name in args.only:
        r = run_one(name, CONFIGS[name], args.delay, args.wait)
        res.append(r)
        full = "never" if r["full"] is None else f"{r['full']:.2f} s"
        tab = "—" if r["from_tab"] is None else f"{r['from_tab']:.2f} s"
        print(f"{name:9s} app serving after {r['serving']:.2f} s · SEG 0 fully drawn {full} after start, {tab} after "
              f"opening the explorer · reloads by the visitor: {r['reloads']} · load {os.getloadavg()[0]:.2f}",
              flush=True)
    base = next((r for r in res if r["name"] == "baseline"), None)
    if base and base["from_tab"]:
        for r in res:
            if r is not base and r["from_tab"]:
                print(f"{r['name']}: from opening the explorer {base['from_tab'] / r['from_tab']:.1f}x faster than the "
                      f"baseline (which needed {base['reloads']} reload(s)); from start "
                      f"{base['full'] / r['full']:.1f}x")


if __name__ == "__main__":
    main()
