"""Many visitors at once: N clients x M view changes against a running app, over raw HTTP.

    python benchmarks/bench_load.py                        # starts `app.py` (bundled data), 50 x 10, 3 runs
    python benchmarks/bench_load.py --clients 20 --changes 5 --runs 1
    python benchmarks/bench_load.py --url http://127.0.0.1:7860   # an app already running (RSS if local)

Each client is a browser tab (``tests/support/gradio_http.py``): it opens the page (the load event), keeps
its heartbeat open, then makes M view changes chosen at random (a SEG, metric A or B, a node, a walk,
the mode, the leaderboard's sort order, the correlation statistic, a prompt search), each firing every
event the page wires to it and what those trigger, waits for all, and closes the tab. A call's latency
is measured at the client from its queue-join request to its completion message (queue wait
included). Printed per run: calls, failed calls (with the first errors), p50/p95/max latency of the
view-change calls (page loads apart), server CPU seconds and RSS after the run; RSS before the first
run; and per view change: its latency with all its calls (from the first call to the last result,
chained calls in turn), calls, and server CPU. Not a pass/fail test (the suite's tests/public/test_public_app.py has a bounded one).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

import httpx  # noqa: E402

from gradio_http import AppConfig, Result, Session  # noqa: E402

KINDS = ("seg", "seg", "metric_a", "metric_b", "node", "walk", "mode", "sort", "corr_stat", "search")
WORDS = ("dog", "cat", "red", "two", "man", "car", "tree", "blue", "table", "woman")


async def view_change(s: Session, kind: str, rnd: random.Random) -> list[Result]:
    if kind == "seg":
        return await s.change("seg-pick", rnd.choice(s.options("seg-pick")))
    if kind in ("metric_a", "metric_b"):
        elem = "metric-a" if kind == "metric_a" else "metric-b"
        return await s.change(elem, rnd.choice(s.options(elem)))
    if kind == "node":
        return await s.change("node-pick", rnd.choice(s.options("node-pick") or ["0"]), events=("input",))
    if kind == "walk":
        walks = s.options("walk-pick")
        return await s.change("walk-pick", rnd.choice(walks), events=("input",)) if walks else []
    if kind == "mode":
        return await s.change("mode", "spec" if s.value("mode") == "paper" else "paper")
    if kind == "sort":
        return await s.change("sort-by", rnd.choice(s.options("sort-by")))
    if kind == "corr_stat":
        return await s.change("corr-stat", rnd.choice(s.options("corr-stat")))
    if kind == "search":
        return await s.change("seg-search", rnd.choice(WORDS))
    raise ValueError(kind)


async def client(c: httpx.AsyncClient, url: str, app: AppConfig, seed: int, changes: int,
                 loads: list, views: list, whole: list) -> None:
    rnd = random.Random(seed)
    s = Session(c, url, app)
    s.keep_alive()
    try:
        loads += await s.load()
        for _ in range(changes):
            t = time.perf_counter()
            res = await view_change(s, rnd.choice(KINDS), rnd)
            if res:
                whole.append(time.perf_counter() - t)
            views += res
    finally:
        await s.close()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * len(xs))) - 1))] if xs else float("nan")


async def one_run(url: str, clients: int, changes: int, seed: int) -> tuple[list[Result], list[Result], float, list]:
    loads: list[Result] = []
    views: list[Result] = []
    whole: list[float] = []
    # idle connections are dropped before the server's keep-alive timeout (uvicorn: 5 s) would close
    # them under a request, as browsers do
    limits = httpx.Limits(max_connections=4 * clients + 10, max_keepalive_connections=2 * clients,
                          keepalive_expiry=4.0)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), limits=limits) as c:
        app = await AppConfig.fetch(c, url)
        t = time.perf_counter()
        await asyncio.gather(*[client(c, url, app, seed * 1000 + k, changes, loads, views, whole)
                               for k in range(clients)])
        return loads, views, time.perf_counter() - t, whole


def start_app(port: int, cache: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "TS2VIZ_CACHE": str(cache),
           "GRADIO_TEMP_DIR": str(cache / "gradio"), "PYTHONPATH": str(ROOT)}
    env.pop("GRADIO_SERVER_NAME", None)
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while time.time() - t0 < 120:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/config", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("the app did not start in 120 s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--changes", type=int, default=10, help="view changes per client")
    ap.add_argument("--runs", type=int, default=3, help="consecutive runs against the same server")
    ap.add_argument("--url", default=None, help="an app already running (default: start app.py)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--by-event", action="store_true", help="also print calls and latency per event")
    a = ap.parse_args()
    import psutil

    proc = None
    if a.url is None:
        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            port = sk.getsockname()[1]
        cache = Path(tempfile.mkdtemp(prefix="ts2viz-bench-load-"))
        proc = start_app(port, cache)
        url = f"http://127.0.0.1:{port}"
        server = psutil.Process(proc.pid)
    else:
        url = a.url.rstrip("/")
        port = int(url.rsplit(":", 1)[-1].split("/")[0])
        server = next((psutil.Process(c.pid) for c in psutil.net_connections("tcp")
                       if c.laddr and c.laddr.port == port and c.status == "LISTEN" and c.pid), None)
    try:
        print(f"{a.clients} clients x {a.changes} view changes, {a.runs} run(s), {os.cpu_count()} CPUs, "
              f"load average before {os.getloadavg()[0]:.1f}")
        if server is not None:
            print(f"server RSS before: {server.memory_info().rss / 1e6:.0f} MB")
        rss = []
        for r in range(a.runs):
            cpu0 = sum(server.cpu_times()[:2]) if server else 0.0
            loads, views, wall, whole = asyncio.run(one_run(url, a.clients, a.changes, a.seed + r))
            cpu = (sum(server.cpu_times()[:2]) - cpu0) if server else float("nan")
            calls = loads + views
            failed = [x for x in calls if not x.success]
            lat = [x.seconds for x in views]
            lat_load = [x.seconds for x in loads]
            mem = server.memory_info().rss / 1e6 if server else float("nan")
            rss.append(mem)
            print(f"run {r + 1}: {len(calls)} calls ({len(views)} view-change, {len(loads)} page-load), "
                  f"failed {len(failed)}; view-change latency p50 {statistics.median(lat):.3f} s, "
                  f"p95 {pct(lat, 0.95):.3f} s, max {max(lat):.3f} s; page load p50 "
                  f"{statistics.median(lat_load):.3f} s, p95 {pct(lat_load, 0.95):.3f} s; wall {wall:.1f} s, "
                  f"server CPU {cpu:.1f} s ({1000 * cpu / max(1, len(calls)):.1f} ms/call), RSS after {mem:.0f} MB")
            print(f"   view change, all its calls (waves in turn): p50 {statistics.median(whole):.3f} s, "
                  f"p95 {pct(whole, 0.95):.3f} s; {len(views) / max(1, len(whole)):.2f} calls and "
                  f"{1000 * cpu / max(1, len(whole) + len(lat_load)):.1f} ms server CPU per view change or page load")
            for x in failed[:5]:
                print(f"   failed: {x.api_name}: {str(x.error)[:200]}")
            if a.by_event:
                by: dict[str, list[float]] = {}
                for x in views:
                    by.setdefault(x.api_name or str(x.fn), []).append(x.seconds)
                for name, xs in sorted(by.items(), key=lambda kv: -len(kv[1])):
                    print(f"   {name:<28} {len(xs):5d} calls  p50 {statistics.median(xs):.3f} s  "
                          f"p95 {pct(xs, 0.95):.3f} s")
        if len(rss) > 1 and server is not None:
            print(f"RSS after run {len(rss)} vs after run 1: {100 * (rss[-1] / rss[0] - 1):+.1f} %")
        print(f"load average after {os.getloadavg()[0]:.1f}")
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
