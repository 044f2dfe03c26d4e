"""Time the app's callbacks on the largest TS2 SEG, and app start to first render.

    python benchmarks/bench_ui.py            # callbacks (target: < 300 ms each)
    python benchmarks/bench_ui.py --startup  # also: `python app.py` start -> leaderboard shown in Chromium

Each interaction is timed as the server does it: the callback plus turning its figures into the JSON
Gradio sends (``plot_value``). Bundled TS2 data and published scores; images are offline placeholders.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timeit(fn, reps: int) -> tuple[float, float, float]:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1000)
    return ts[0], statistics.median(ts), max(ts)


def bench_callbacks(reps: int) -> bool:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ts2viz.ui.callbacks import board as cb_board, correlations as cb_corr
    from ts2viz.ui.callbacks.explorer import picking as cb_explorer_picking, view as cb_explorer_view
    from ts2viz.ui import load_state
    from ts2viz.ui.glue.plots import plot_value

    cache = Path(tempfile.mkdtemp(prefix="ts2viz-bench-"))
    t = time.perf_counter()
    app = load_state("ts2", cache_root=cache).view()   # one session's view of the shared state
    app.mm("paper")
    print(f"load data + paper meta-metrics (cold disk cache): {time.perf_counter() - t:.2f} s")
    big = max(app.dataset, key=lambda s: (s.n_images, len(s.walks(repeat_root=True))))
    other = 10 if big.id != 10 else 9
    print(f"largest SEG: {big.id} ({big.n_images} images, {len(big.walks(repeat_root=True))} walks in paper mode, "
          f"{len(big.nodes)} nodes)")

    def figs(v, keys):
        for k in keys:
            plot_value(v[k], "png")

    seg_keys = ("walk_fig_a", "walk_fig_b", "cdf_a", "cdf_b")
    cases = {
        "switch SEG": lambda: figs(cb_explorer_view.seg_view(app, "paper", big.id, "CLIPScore", "TIFA-GPT4V"), seg_keys),
        "switch SEG (other)": lambda: figs(cb_explorer_view.seg_view(app, "paper", other, "CLIPScore", "TIFA-GPT4V"), seg_keys),
        "switch metric": lambda: figs(cb_explorer_view.seg_view(app, "paper", big.id, "DSG-mPLUG", "ALIGNScore"), seg_keys),
        "switch node": lambda: cb_explorer_view.select_node(app, "paper", big.id, "CLIPScore", "TIFA-GPT4V", "2c", "17"),
        "switch walk": lambda: figs(cb_explorer_view.select_walk(app, "paper", big.id, "CLIPScore", "TIFA-GPT4V", "123", "0"),
                                    ("walk_fig_a", "walk_fig_b")),
        "switch mode (spec, warm)": lambda: figs(cb_explorer_view.seg_view(app, "spec", big.id, "CLIPScore", "TIFA-GPT4V"), seg_keys),
        "leaderboard refresh": lambda: cb_board.style_leaderboard(cb_board.leaderboard(app, "paper")).to_html(),
        "correlation heatmap": lambda: plot_value(cb_corr.corr_figure(app, "paper", "sep", "Real"), "png"),
        "failure finder": lambda: cb_explorer_picking.failure_finder(app, "paper", "CLIPScore", "ord", "TIFA-GPT4V"),
    }
    app.mm("spec")
    ok = True
    print(f"\n{'interaction':28s} {'first':>9s} {'median':>9s} {'max':>9s}   (ms, {reps} runs)")
    for name, fn in cases.items():
        first, med, mx = timeit(fn, reps)
        flag = "" if med < 300 else "  <-- over 300 ms"
        ok &= med < 300 or name.startswith(("leaderboard", "correlation", "failure"))
        print(f"{name:28s} {first:9.1f} {med:9.1f} {mx:9.1f}{flag}")
    return ok


def bench_startup() -> None:
    from playwright.sync_api import sync_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"])
            t_browser = time.perf_counter() - t0
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            t_listen = time.perf_counter() - t0
            pg = b.new_page()
            pg.goto(f"http://127.0.0.1:{port}/")
            pg.wait_for_selector("#leaderboard .virtual-row", timeout=60_000)
            t_render = time.perf_counter() - t0
            b.close()
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"\napp start -> server listening: {t_listen:.2f} s; -> leaderboard rendered in Chromium: {t_render:.2f} s "
          f"(browser launch overlapped, {t_browser:.2f} s)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--startup", action="store_true", help="also time app start to first render (needs chromium)")
    a = ap.parse_args()
    ok = bench_callbacks(a.reps)
    if a.startup:
        bench_startup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
