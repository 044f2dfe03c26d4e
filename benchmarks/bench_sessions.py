"""Many sessions at the public caps, then closed: the server's memory and a bystander's latency (issue 22).

    python benchmarks/bench_sessions.py                       # starts `app.py --public` (bundled TS2 data), 200 sessions
    python benchmarks/bench_sessions.py --sessions 40 --concurrency 4

Each session is a browser tab (``tests/support/gradio_http.py``) at the public caps: it keeps its heartbeat
open, adds 5 score files holding 8 metrics (the caps) over every image of the dataset, draws its
leaderboard (its own meta-metrics) and downloads it as CSV. All sessions are held open together,
then closed (their tabs' heartbeats end, Gradio runs the unload event). Meanwhile one more visitor,
the bystander, changes its SEG over and over.

Baseline, measured in the same run: the idle app (its RSS after start, and the bystander's latency
alone). Printed: RSS idle, at the peak while the sessions are held, and after they are closed (the
workspaces are freed and glibc's free pages handed back, ``ts2viz.ui.state.sessions.release_memory``);
the bystander's p50/p95/max latency alone and under the load, with ratios to the baseline; the
sessions' failed calls. Not a pass/fail test.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

import httpx  # noqa: E402

from gradio_http import AppConfig, Session  # noqa: E402

PER_ADDRESS = 10
FILES_METRICS = (2, 2, 2, 1, 1)        # 5 files, 8 metrics: the public caps (ts2viz.ui.serving.access.PUBLIC_LIMITS)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * len(xs))) - 1))] if xs else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(port: int, folder: Path) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "TS2VIZ_CACHE": str(folder / "cache"),
           "GRADIO_TEMP_DIR": str(folder / "gradio"), "PYTHONUNBUFFERED": "1"}
    for k in ("GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT", "SPACE_ID", "TS2VIZ_METRICS", "TS2VIZ_METRICS_FILE"):
        env.pop(k, None)
    log = open(folder / "app.log", "w")
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--public", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    t0 = time.time()
    while time.time() - t0 < 300:
        if proc.poll() is not None:
            raise RuntimeError("app exited:\n" + (folder / "app.log").read_text()[-2000:])
        try:
            if httpx.get(url + "/config", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("app did not start")


def file_names(url: str) -> list[str]:
    import csv

    return [r["file_name"] for r in csv.DictReader(open(ROOT / "data" / "ts2" / "metadata.csv", newline=""))]


def scores_csv(names: list[str], metrics: list[str], rnd: random.Random) -> bytes:
    out = io.StringIO()
    out.write("file_name," + ",".join(metrics) + "\n")
    for f in names:
        out.write(f + "," + ",".join(f"{rnd.random():.6f}" for _ in metrics) + "\n")
    return out.getvalue().encode()


def with_inputs(s: Session, api_name: str, by_type: dict) -> list:
    """The inputs of an event as the page holds them, with the components of the given types set (the
    page's other inputs, e.g. the bundled data's DSG-variant radio, as they are)."""
    fn = s.app.fn(api_name)
    return [by_type.get(s.app.components[c]["type"], s.values.get(c)) for c in s.app.deps[fn]["inputs"]]


async def bystander(c: httpx.AsyncClient, url: str, app: AppConfig, stop: asyncio.Event, times: list[float],
                    limit: int | None = None) -> None:
    s = Session(c, url, app)
    s.keep_alive()
    await s.load()
    segs = s.options("seg-pick")
    rnd = random.Random(1)
    n = 0
    while not stop.is_set() and (limit is None or n < limit):
        t0 = time.perf_counter()
        res = await s.change("seg-pick", rnd.choice(segs))
        if all(r.success for r in res):
            times.append(time.perf_counter() - t0)
        n += 1
    await s.close()


async def at_caps(c: httpx.AsyncClient, url: str, app: AppConfig, k: int, names: list[str], held: list[Session],
                  failed: list[str]) -> None:
    rnd = random.Random(100 + k)
    s = Session(c, url, app)
    s.keep_alive()
    m = 0
    for j, n in enumerate(FILES_METRICS):
        metrics = [f"S{k}M{m + i}" for i in range(n)]
        m += n
        up = await s.upload(f"s{k}-{j}.csv", scores_csv(names, metrics, rnd))
        r = await s.call("added_scores", with_inputs(s, "added_scores", {"file": up, "textbox": ""}))
        if not r.success:
            failed.append(f"added_scores: {r.error}")
    for name, data in (("redraw", None), ("board_csv", None)):
        r = await s.call(name, data)
        if not r.success:
            failed.append(f"{name}: {r.error}")
    held.append(s)


def downloads_left(upload_root: Path) -> int:
    """The sessions' download folders on disk (each goes with its session)."""
    return sum(1 for p in upload_root.glob("ts2viz-*")) if upload_root.is_dir() else 0


def rss_sampler(pid: int):
    import psutil

    proc = psutil.Process(pid)
    peak = [proc.memory_info().rss]
    stop = threading.Event()

    def loop():
        while not stop.wait(0.2):
            try:
                peak[0] = max(peak[0], proc.memory_info().rss)
            except psutil.Error:
                return

    threading.Thread(target=loop, daemon=True).start()
    return proc, peak, stop


async def bench(url: str, pid: int, sessions: int, concurrency: int, baseline_calls: int, upload_root: Path,
                after_s: float) -> None:
    names = file_names(url)
    limits = httpx.Limits(max_connections=4 * concurrency + sessions + 20, max_keepalive_connections=4 * concurrency + 10)
    async with httpx.AsyncClient(timeout=httpx.Timeout(600.0), limits=limits) as c:
        app = await AppConfig.fetch(c, url)
        proc, peak, stop_rss = rss_sampler(pid)
        # baseline: the app after one session at the caps has come and gone (what any first visitor
        # builds once for all: the shared bootstrap, figure code), and the bystander alone
        rss_start = proc.memory_info().rss
        warm: list[Session] = []
        await at_caps(c, url, app, -1, names, warm, [])
        await warm[0].close()
        await asyncio.sleep(20)      # its unload (next heartbeat, 15 s) and the trim
        rss_idle = proc.memory_info().rss
        alone: list[float] = []
        await bystander(c, url, app, asyncio.Event(), alone, limit=baseline_calls)
        # the load: sessions at the caps, held together, with the bystander running meanwhile
        stop, loaded = asyncio.Event(), []
        by = asyncio.create_task(bystander(c, url, app, stop, loaded))
        held: list[Session] = []
        failed: list[str] = []
        t0 = time.perf_counter()
        sem = asyncio.Semaphore(concurrency)

        # visitors on other machines: each group of PER_ADDRESS sessions from an address of its own
        # (the app holds at most 16 sessions per client address)
        clients = [httpx.AsyncClient(timeout=httpx.Timeout(600.0), limits=limits,
                                     transport=httpx.AsyncHTTPTransport(local_address=f"127.0.2.{g + 1}"))
                   for g in range((sessions + PER_ADDRESS - 1) // PER_ADDRESS)]

        async def one(k: int) -> None:
            async with sem:
                await at_caps(clients[k // PER_ADDRESS], url, app, k, names, held, failed)

        await asyncio.gather(*[one(k) for k in range(sessions)])
        t_open = time.perf_counter() - t0
        rss_held = proc.memory_info().rss
        dirs_held = downloads_left(upload_root)
        for s in held:
            await s.close()
        stop.set()
        await by
        t_after = time.time()
        rss_closed, dirs_closed = [], []
        # Gradio notices a closed tab at its next heartbeat (15 s), runs the unload event (the workspace
        # goes), then the heap is trimmed (at most every 5 s)
        while time.time() - t_after < after_s:
            await asyncio.sleep(2)
            rss_closed.append(proc.memory_info().rss)
            dirs_closed.append(downloads_left(upload_root))
        stop_rss.set()
        for cl in clients:
            await cl.aclose()

    mb = 2**20
    print(f"sessions at the caps: {sessions} ({len(FILES_METRICS)} files, {sum(FILES_METRICS)} metrics, "
          f"{len(names)} images each), {concurrency} at a time, all held in {t_open:.0f} s; failed calls: {len(failed)}"
          + (f" (first: {failed[0][:160]})" if failed else ""))
    print(f"RSS  at start        {rss_start / mb:7.0f} MB")
    print(f"RSS  idle (baseline) {rss_idle / mb:7.0f} MB  (after one session at the caps came and went)")
    print(f"RSS  held, at end    {rss_held / mb:7.0f} MB  x{rss_held / rss_idle:.2f}")
    print(f"RSS  peak            {peak[0] / mb:7.0f} MB  x{peak[0] / rss_idle:.2f}")
    print(f"RSS  {after_s:.0f} s after close {rss_closed[-1] / mb:6.0f} MB  x{rss_closed[-1] / rss_idle:.2f}  "
          f"(every 2 s: {', '.join(f'{x / mb:.0f}' for x in rss_closed)})")
    print(f"sessions' download folders: {dirs_held} held; after close (every 2 s): "
          f"{', '.join(map(str, dirs_closed))}")
    for label, xs in (("alone (baseline)", alone), ("under the load", loaded)):
        print(f"bystander {label:17s} n={len(xs):4d}  p50 {pct(xs, 0.5):6.2f} s  p95 {pct(xs, 0.95):6.2f} s  "
              f"max {max(xs) if xs else float('nan'):6.2f} s")
    if alone and loaded:
        print(f"bystander p95 ratio under load / alone: x{pct(loaded, 0.95) / pct(alone, 0.95):.1f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=8, help="sessions being filled at once")
    ap.add_argument("--baseline-calls", type=int, default=20, help="the bystander's calls alone (the baseline)")
    ap.add_argument("--after", type=float, default=40.0, help="seconds RSS is followed after the sessions close")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ts2viz-bench-sessions-") as d:
        port = free_port()
        proc = start_app(port, Path(d))
        try:
            asyncio.run(bench(f"http://127.0.0.1:{port}", proc.pid, args.sessions, args.concurrency, args.baseline_calls,
                              Path(d) / "gradio", args.after))
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
