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

Named baselines, in the same run (``--baselines``, default ``echo,static``): the same page (same
components, events, queue and lanes: ``build_app`` as ``app.py`` runs it) with every event's function
swapped for one that does no ts2viz work, launched by the benchmark itself, under the same clients and
changes. ``echo`` gives each output that is also an input its input back and skips the others;
``static`` gives every ``gr.Plot`` output one fixed figure (the explorer's walk figure of the first SEG,
built once) and echoes the rest. They answer with less, so fewer ``.change`` events follow: their calls
per view change are printed too. Each app also gets a 1-client run (``--single-changes`` changes). The
summary prints p50/p95 of the view-change calls of each app and the ratio ts2viz / static.
Each started server runs without the Human ratings tab's start-up warm-up (``TS2VIZ_WARM_GOLD=0``: a
minute of CPU on views no client here asks for) and is measured once it is idle (its other warm-ups
done). ``--public`` runs every app in public mode, each client from its own address (``X-Forwarded-For``
through one trusted proxy hop, as on a Space).

    python benchmarks/bench_load.py --clients 50 --changes 5 --runs 1     # ts2viz, echo, static; < 3 min
    python benchmarks/bench_load.py --clients 50 --changes 5 --runs 1 --before /tmp/main-copy   # and before
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
                 loads: list, views: list, whole: list, address: str | None = None) -> None:
    rnd = random.Random(seed)
    if address is not None:     # public mode: a client of its own address, behind the pretend proxy
        async with httpx.AsyncClient(timeout=c.timeout, headers={"X-Forwarded-For": address}) as own:
            return await client(own, url, app, seed, changes, loads, views, whole)
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


async def one_run(url: str, clients: int, changes: int, seed: int,
                  public: bool = False) -> tuple[list[Result], list[Result], float, list]:
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
        await asyncio.gather(*[client(c, url, app, seed * 1000 + k, changes, loads, views, whole,
                                      f"203.0.{113 + k // 250}.{k % 250 + 1}" if public else None)
                               for k in range(clients)])
        return loads, views, time.perf_counter() - t, whole


def start_app(port: int, cache: Path, baseline: str | None = None, public: bool = False,
              root: Path = ROOT) -> subprocess.Popen:
    """``root/app.py`` on a port (or, with ``baseline``, this page with its functions swapped: :func:`serve_baseline`)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "TS2VIZ_CACHE": str(cache),
           "GRADIO_TEMP_DIR": str(cache / "gradio"), "PYTHONPATH": str(root)}
    env.pop("GRADIO_SERVER_NAME", None)
    args = ["--port", str(port)] + (["--public"] if public else [])
    if public:
        env.update({"FORWARDED_ALLOW_IPS": "*", "TS2VIZ_PROXY_HOPS": "1"})
    # the Human ratings tab's start-up warm-up (permutation tests, a minute of CPU) is no view this
    # benchmark asks for: it would run under the first run's clients
    env.setdefault("TS2VIZ_WARM_GOLD", "0")
    cmd = ([sys.executable, str(root / "app.py"), *args] if baseline is None else
           [sys.executable, str(Path(__file__).resolve()), "--serve-baseline", baseline, *args])
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while time.time() - t0 < 120:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/config", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("the app did not start in 120 s")


#: the longest wait for a started server to go idle (the other mode's meta-metrics warmed in a thread)
IDLE_WAIT_S = 120.0


def wait_idle(server, busy: float = 0.05) -> float | None:
    """Wait until the server uses under ``busy`` of a core over a second; the seconds it took (None: not idle)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < IDLE_WAIT_S:
        c0 = sum(server.cpu_times()[:2])
        time.sleep(1.0)
        if sum(server.cpu_times()[:2]) - c0 < busy:
            return time.perf_counter() - t0
    return None


def swap_functions(demo, app, kind: str) -> int:
    """Swap every event function of a built page for a baseline's answer (``echo`` or ``static``).

    Generator functions (streamed jobs) are left as they are: no view change calls them. Returns how many
    were swapped.
    """
    import inspect

    import gradio as gr

    fig = None
    if kind == "static":
        from ts2viz.ui.callbacks.explorer.walks import walk_figure
        from ts2viz.ui.glue.plots import page_plot

        view = app.view()
        fig = page_plot(lambda: walk_figure(view, "paper", next(iter(app.dataset.segs)), app.metrics[0]))
    elif kind != "echo":
        raise ValueError(f"unknown baseline {kind!r} (echo, static)")

    def answer_for(ins: list[int], outs: list):
        def answer(*args):
            given = dict(zip(ins, args))
            res = [fig if fig is not None and isinstance(b, gr.Plot) else given.get(b._id, gr.skip())
                   for b in outs]
            return None if not res else res[0] if len(res) == 1 else tuple(res)
        return answer

    n = 0
    for block_fn in demo.fns.values():
        fn = block_fn.fn
        if fn is None or inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            continue
        block_fn.fn = answer_for([b._id for b in block_fn.inputs], list(block_fn.outputs))
        n += 1
    return n


def serve_baseline(kind: str, argv: list[str]) -> int:
    """``app.py argv`` with :func:`swap_functions` applied to the page it builds."""
    import ts2viz.ui as ui
    from ts2viz.cli import main as cli_main

    real = ui.build_app

    def build_app(*args, **kwargs):
        demo, launch, app = real(*args, **kwargs)
        swap_functions(demo, app, kind)
        return demo, launch, app

    ui.build_app = build_app
    return cli_main(["app", *argv])


def measure(url: str, server, a, clients: int, changes: int, runs: int, label: str) -> list[float]:
    """``runs`` runs of ``clients`` x ``changes`` against ``url``, printed; the view-change latencies of all runs."""
    all_lat: list[float] = []
    rss = []
    print(f"[{label}] {clients} client(s) x {changes} view changes, {runs} run(s), load average before "
          f"{os.getloadavg()[0]:.1f}")
    for r in range(runs):
        cpu0 = sum(server.cpu_times()[:2]) if server else 0.0
        loads, views, wall, whole = asyncio.run(one_run(url, clients, changes, a.seed + r, a.public))
        cpu = (sum(server.cpu_times()[:2]) - cpu0) if server else float("nan")
        calls = loads + views
        failed = [x for x in calls if not x.success]
        lat = [x.seconds for x in views]
        all_lat += lat
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
    return all_lat


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve-baseline":
        return serve_baseline(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--changes", type=int, default=10, help="view changes per client")
    ap.add_argument("--runs", type=int, default=3, help="consecutive runs against the same server")
    ap.add_argument("--single-changes", type=int, default=20, help="view changes of the 1-client run (0: none)")
    ap.add_argument("--baselines", default="echo,static",
                    help="baseline apps run after ts2viz, comma-separated (echo, static; '' for none)")
    ap.add_argument("--public", action="store_true", help="public mode, each client from its own address")
    ap.add_argument("--before", default=None, metavar="DIR",
                    help="also run DIR/app.py (a copy of the code before a change, e.g. `git archive main | tar -x "
                         "-C DIR`), labelled 'before', first")
    ap.add_argument("--url", default=None, help="an app already running (default: start app.py); no baselines")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--by-event", action="store_true", help="also print calls and latency per event")
    a = ap.parse_args()
    import psutil

    apps = ([("before", None)] if a.before and not a.url else []) + [("ts2viz", None)] + (
        [] if a.url else [(b, b) for b in a.baselines.split(",") if b.strip()])
    print(f"{os.cpu_count()} CPUs, {'public' if a.public else 'operator'} mode, uptime: "
          f"{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    summary: dict[str, dict[str, list[float]]] = {}
    for label, baseline in apps:
        proc = None
        if a.url is None:
            with socket.socket() as sk:
                sk.bind(("127.0.0.1", 0))
                port = sk.getsockname()[1]
            cache = Path(tempfile.mkdtemp(prefix="ts2viz-bench-load-"))
            proc = start_app(port, cache, baseline, a.public, Path(a.before) if label == "before" else ROOT)
            url = f"http://127.0.0.1:{port}"
            server = psutil.Process(proc.pid)
        else:
            url = a.url.rstrip("/")
            port = int(url.rsplit(":", 1)[-1].split("/")[0])
            server = next((psutil.Process(c.pid) for c in psutil.net_connections("tcp")
                           if c.laddr and c.laddr.port == port and c.status == "LISTEN" and c.pid), None)
        try:
            if server is not None:
                idle = wait_idle(server)
                print(f"[{label}] server RSS before: {server.memory_info().rss / 1e6:.0f} MB; idle after start "
                      f"(its warm-ups done) {'in' if idle else 'not within'} {idle or IDLE_WAIT_S:.0f} s")
            many = measure(url, server, a, a.clients, a.changes, a.runs, label)
            one = measure(url, server, a, 1, a.single_changes, 1, label) if a.single_changes else []
            summary[label] = {"many": many, "one": one}
        finally:
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
    print(f"summary, view-change calls (load average after {os.getloadavg()[0]:.1f}):")
    ref = summary.get("static")
    for label, d in summary.items():
        line = (f"  {label:<7} {a.clients} clients p50 {statistics.median(d['many']):.3f} s p95 "
                f"{pct(d['many'], 0.95):.3f} s")
        if d["one"]:
            line += f" | 1 client p50 {statistics.median(d['one']):.3f} s p95 {pct(d['one'], 0.95):.3f} s"
        if ref and label != "static":
            line += (f" | ratio to static: p50 {statistics.median(d['many']) / statistics.median(ref['many']):.2f}, "
                     f"p95 {pct(d['many'], 0.95) / pct(ref['many'], 0.95):.2f}")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
