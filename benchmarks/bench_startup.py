"""Start-up: the app against a minimal Gradio app, and the command line against ``python -c pass``.

    python benchmarks/bench_startup.py                 # 5 interleaved rounds of each, after one warm-up round
    python benchmarks/bench_startup.py --rounds 3 --no-cli
    python benchmarks/bench_startup.py --before /tmp/old-checkout   # also that checkout's app, interleaved

The app: ``python app.py`` (operator mode, loopback) and ``python app.py --public``, against a minimal
Gradio app (one Blocks, one textbox filled by a load event) started the same way, in interleaved
rounds (the order rotates each round), each a fresh process on a free port. Per start: the seconds
to the first answer (``GET /config`` answers 200) and to the page complete (``/config`` read and every
load event of the page answered, as a browser tab fires them: ``tests/support/gradio_http.py``).
Printed: median and range per app, and each app's median over the minimal app's median (the same
run, the same machine load), in wall time and in the server process's CPU seconds (user + system, all
threads: on a loaded machine much steadier than wall time). The command line: ``python -c pass``, ``python -c "import ts2viz"``,
``ts2viz --help`` and ``ts2viz leaderboard`` (the console script, in an empty folder), interleaved too.

Each child runs with this checkout first on ``PYTHONPATH``, offline (``HF_HUB_OFFLINE=1``), a cache
folder of its own (filled by the warm-up round, as a second start of a Space finds it), and writing
bytecode (``PYTHONDONTWRITEBYTECODE`` unset, as an installed package has its ``.pyc`` files).
The load average before and after is printed: on a shared machine the absolute seconds move with it,
the ratios much less.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
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
import psutil  # noqa: E402

from gradio_http import AppConfig, Session  # noqa: E402

#: the baseline: a Gradio app with one component and one load event
MINIMAL_APP = """\
import gradio as gr

with gr.Blocks() as demo:
    box = gr.Textbox(label="answer")
    demo.load(lambda: "ready", None, box)
demo.launch(server_name="127.0.0.1", server_port=int(__import__("sys").argv[1]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env(cache: Path, root: Path = ROOT) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False", "TS2VIZ_CACHE": str(cache),
           "GRADIO_TEMP_DIR": str(cache / "gradio"), "PYTHONPATH": str(root)}
    for k in ("GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT", "SPACE_ID", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    return env


async def page_complete(url: str) -> int:
    """Read ``/config`` and answer every load event of the page; returns the number of load calls."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0)) as c:
        s = Session(c, url, await AppConfig.fetch(c, url))
        s.keep_alive()
        try:
            results = await s.load()
        finally:
            await s.close()
    bad = [r for r in results if not r.success]
    if bad:
        raise RuntimeError(f"a load event failed: {bad[0].error}")
    return len(results)


def cpu_seconds(proc: subprocess.Popen) -> float:
    """The process's CPU seconds so far (user + system, all its threads)."""
    t = psutil.Process(proc.pid).cpu_times()
    return t.user + t.system


def time_app(kind: str, cmd: list[str], port: int, env: dict, timeout: float = 300.0) -> tuple[float, ...]:
    """Wall seconds from the process start to the first ``/config`` answer and to the page complete, then CPU.

    The server's CPU seconds at both moments come after the two wall times.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{kind} exited with {proc.returncode}: {proc.stderr.read().decode()[-500:]}")
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"{kind} did not answer in {timeout:.0f} s")
            try:
                if httpx.get(url + "/config", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        first = time.perf_counter() - t0
        cpu_first = cpu_seconds(proc)
        asyncio.run(page_complete(url))
        complete = time.perf_counter() - t0
        cpu_complete = cpu_seconds(proc)
    finally:
        proc.kill()          # nothing of the app's is kept: its folders are the benchmark's, removed at the end
        proc.wait()
    return first, complete, cpu_first, cpu_complete


def time_cli(cmd: list[str], env: dict, cwd: Path) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.decode()[-500:]}")
    return dt


def summary(name: str, xs: list[float], base: list[float] | None) -> str:
    med = statistics.median(xs)
    ratio = f"{med / statistics.median(base):6.2f}x" if base else "   base"
    return f"  {name:28s} median {med:6.2f} s  range {min(xs):6.2f}-{max(xs):6.2f} s  {ratio}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-app", action="store_true", help="leave out the app starts")
    ap.add_argument("--no-cli", action="store_true", help="leave out the command-line starts")
    ap.add_argument("--before", type=Path, default=None, metavar="DIR",
                    help="another checkout (e.g. `git archive` of an older commit): its app too, in the same rounds")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ts2viz-bench-startup-"))
    env = child_env(work / "cache")
    minimal = work / "minimal_app.py"
    minimal.write_text(MINIMAL_APP, encoding="utf-8")
    empty = work / "empty"
    empty.mkdir()
    console = Path(sys.executable).with_name("ts2viz")
    py = sys.executable
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average before "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {a.rounds} rounds after 1 warm-up round")

    roots = {"": ROOT} | ({" (before)": a.before.resolve()} if a.before else {})
    apps = {"minimal Gradio app": (None, [])}
    for tag, root in roots.items():
        apps[f"app, operator{tag}"] = (root, [])
        apps[f"app, public{tag}"] = (root, ["--public"])
    envs = {root: child_env(work / f"cache{k}", root) for k, root in enumerate(roots.values())}

    def app_run(kind: str) -> tuple[float, float]:
        root, extra = apps[kind]
        port = free_port()
        if root is None:
            return time_app(kind, [py, str(minimal), str(port)], port, env)
        return time_app(kind, [py, str(root / "app.py"), "--port", str(port), *extra], port, envs[root])

    try:
        if not a.no_app:
            kinds = list(apps)
            got_all = {k: [] for k in kinds}
            for r in range(a.rounds + 1):
                order = kinds[r % len(kinds):] + kinds[:r % len(kinds)]
                got = {k: app_run(k) for k in order}
                if r:                      # round 0 warms the caches (bytecode, meta-metrics on disk)
                    for k, g in got.items():
                        got_all[k].append(g)
                print(f"round {r}{' (warm-up)' if not r else ''}, first answer / complete, wall (CPU) s: "
                      + ", ".join(f"{k} {g[0]:.2f}/{g[1]:.2f} ({g[2]:.2f}/{g[3]:.2f})"
                                  for k, g in ((k, got[k]) for k in kinds))
                      + f"; load average {os.getloadavg()[0]:.1f}", flush=True)
            for col, what in enumerate(("wall time to first answer (GET /config)",
                                        "wall time to page complete (/config and every load event answered)",
                                        "server CPU seconds at the first answer",
                                        "server CPU seconds at page complete")):
                print(f"{what}; ratio = median / the minimal app's median:")
                base = [g[col] for g in got_all[kinds[0]]]
                for k in kinds:
                    print(summary(k, [g[col] for g in got_all[k]], None if k == kinds[0] else base))
        if not a.no_cli:
            cmds = {"python -c pass": (ROOT, [py, "-c", "pass"])}
            for tag, root in roots.items():
                cmds |= {f"import ts2viz{tag}": (root, [py, "-c", "import ts2viz"]),
                         f"ts2viz --help{tag}": (root, [str(console), "--help"]),
                         f"ts2viz score --help{tag}": (root, [str(console), "score", "--help"]),
                         f"ts2viz leaderboard{tag}": (root, [str(console), "leaderboard"])}
            times = {k: [] for k in cmds}
            for r in range(a.rounds + 1):
                for k, (root, cmd) in cmds.items():
                    dt = time_cli(cmd, envs[root], empty)
                    if r:
                        times[k].append(dt)
            print("command line, the console script in an empty folder (ratio = median / python -c pass's median;"
                  " with --before, the same command before is beside it):")
            base = times["python -c pass"]
            for k in cmds:
                print(summary(k, times[k], None if k == "python -c pass" else base))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
