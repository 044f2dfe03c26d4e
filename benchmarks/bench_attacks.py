"""Issue 32's attacks on a public app, measured before and after: what the attacker got, how long another
visitor's view changes waited in the queue meanwhile, the server's memory (RSS) and its disk.

    python benchmarks/bench_attacks.py                        # this tree's app (after)
    python benchmarks/bench_attacks.py --root /work/main      # another tree's app (before), same attacks
    python benchmarks/bench_attacks.py --only walks,zips

The server is ``ROOT/app.py --public`` on a small generated dataset with a tiny CLIP offered, behind a
pretend Space proxy: every request's ``X-Forwarded-For`` ends with the address the proxy saw
(``FORWARDED_ALLOW_IPS=*`` as app.py set it on a Space before issue 32, ``TS2VIZ_PROXY_HOPS=1`` after;
each tree reads the setting it knows). Attacks (each a function below): ``walks`` (a SEG of 3 nodes on
L levels scored with loaded scores, in a process of the tree's own), ``zips`` (119 MB of zeros as an
image, imported three times; a PNG followed by 4 MB of zeros, imported and exported; three 13,000 x
13,000 PNGs; a metadata.csv of 1,000,000 rows), ``cancel`` (four heavy model jobs, each cancelled after
a second), ``xff`` (twelve 19 MB uploads under invented addresses), ``gold`` (8 metrics uploaded for a
rated set of 800 images, then its rating set switched), ``logs`` (50 unknown sessions on the event
stream, a 200 KB value that is no choice). Not a pass/fail test: tests/public/test_public_guard.py is.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests" / "support"))

import httpx  # noqa: E402

from attack_helpers import Bystander, Rss, Stream, client, dataset_zip, disk_bytes, join, png  # noqa: E402
from gradio_http import Session  # noqa: E402

ATTACKS = ("walks", "zips", "cancel", "xff", "gold", "logs")


def _load() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class App:
    """``root``'s app.py in public mode, on a generated dataset under ``work``."""

    def __init__(self, root: Path, work: Path, spec: str, ds: Path, scores: Path) -> None:
        self.root, self.work = root, work
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = work / "app.log"
        self.temp = work / "gradio"
        env = {**os.environ, "PYTHONPATH": str(root), "TS2VIZ_CACHE": str(work / "cache"), "HF_HUB_OFFLINE": "1",
               "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1", "GRADIO_TEMP_DIR": str(self.temp),
               "TS2VIZ_METRICS": spec, "FORWARDED_ALLOW_IPS": "*", "TS2VIZ_PROXY_HOPS": "1"}
        for k in ("SPACE_ID", "TS2VIZ_METRICS_FILE", "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"):
            env.pop(k, None)
        self.proc = subprocess.Popen([sys.executable, str(root / "app.py"), "--public", "--data", str(ds), "--scores",
                                      str(scores), "--port", str(self.port)], cwd=root, env=env,
                                     stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        t0 = time.time()
        while time.time() - t0 < 180:
            try:
                if httpx.get(self.url + "/config", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text()[-3000:])
            time.sleep(0.3)
        self.pid = self.proc.pid
        self.clip = spec

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _clip_name(spec: str) -> str:
    sys.path.insert(0, str(HERE))
    from ts2viz.ui.serving.access import display_names

    return display_names([spec])[spec]


# -- the attacks ----------------------------------------------------------------------------------------------

def walks(app: App, ds: Path, scores: Path) -> None:
    """A SEG of 3 nodes on each of L levels (each node one image of the dataset), scored with the loaded
    scores: in a process of the tree's own code (what an HTTP call runs), its time and peak memory."""
    script = textwrap.dedent(f"""
        import resource, time, sys
        from ts2viz.authoring import SegDraft
        from ts2viz.ui import load_state
        from ts2viz.ui.serving import access
        from ts2viz.ui.state.authoring_session import drafts_of
        from ts2viz.ui.callbacks import authoring as cb
        view = load_state({str(ds)!r}, [{str(scores)!r}], fetch_images=False, access=access.public()).view()
        names = view.dataset.file_names
        L = int(sys.argv[1])
        d = SegDraft("p", 0)
        k = 0
        for lv in range(L):
            for x in "abc":
                d = d.add_node(f"{{lv}}{{x}}").add_image("ds:" + names[k % len(names)], f"im{{k}}.png", f"{{lv}}{{x}}")
                k += 1
        st = drafts_of(view, create=True); st.drafts, st.current = [d], 0
        r0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        try:
            out = cb.score_draft(view, "loaded", "GoodScore", "paper")
            what = f"scored, {{len(out['walks']):,}} walks"
        except Exception as e:
            what = f"refused: {{e}}"
        dt = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"L={{L}}: {{dt:.2f}} s, peak RSS +{{(r1 - r0) / 1024:.0f}} MB; {{what}}")
    """)
    for levels in (8, 9, 10):
        env = {**os.environ, "PYTHONPATH": str(app.root), "HF_HUB_OFFLINE": "1"}
        r = subprocess.run([sys.executable, "-c", script, str(levels)], env=env, cwd=app.work, capture_output=True,
                           text=True, timeout=600)
        print("  walks", (r.stdout.strip() or r.stderr.strip()[-300:]))


def _zips() -> dict[str, bytes]:
    import io
    import zipfile

    from PIL import Image

    meta = "id,target_prompt,file_name,image_source,rank\n0,p,images/a.png,SD,0\n0,p,images/b.png,SD,1\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ds/metadata.csv", meta)
        z.writestr("ds/images/a.png", png())
        z.writestr("ds/images/b.png", png() + bytes(119 << 20))
    zeros = buf.getvalue()
    one = [("images/a.png", "0"), ("images/b.png", "1")]
    tail = dataset_zip({0: one}, {"images/b.png": png() + bytes(4 << 20)})
    big = io.BytesIO()
    Image.new("1", (13_000, 13_000)).save(big, "PNG", optimize=True)
    huge = dataset_zip({0: one + [("images/c.png", "1")]}, {f"images/{x}.png": big.getvalue() for x in "abc"})
    rows = "id,target_prompt,file_name,image_source,rank\n" + "".join(
        f"0,p,images/{k}.png,SD,{k % 3}\n" for k in range(1_000_000))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ds/metadata.csv", rows)
        z.writestr("ds/images/0.png", png())
    return {"zeros": zeros, "tail": tail, "huge": huge, "rows": buf.getvalue()}


async def zips(app: App) -> None:
    files = _zips()
    rss = Rss(app.pid)
    d0 = disk_bytes(app.temp)
    async with Bystander(app.url) as by, client(app.url, "127.0.0.32") as (c, cfg):
        s = Session(c, app.url, cfg)
        s.keep_alive()
        await s.call("author_start_draft", ["p", None, "Custom"])
        for k in range(3):
            up = await s.upload("zeros.zip", files["zeros"])
            r = await s.call("author_import_zip", [up])
            print(f"  zeros.zip ({len(files['zeros']) / 1e3:.0f} KB) import {k + 1}: {r.seconds:.2f} s, "
                  f"{'ok' if r.success else 'refused: ' + str(r.error)[:90]}; disk +{(disk_bytes(app.temp) - d0) / 2**20:.0f} MB")
        up = await s.upload("tail.zip", files["tail"])
        r = await s.call("author_import_zip", [up])
        print(f"  PNG + 4 MB of zeros: {r.seconds:.2f} s, {'imported' if r.success else 'refused: ' + str(r.error)[:90]}")
        if r.success:
            e = await s.call("author_zip", ["x"])
            size = Path(e.data[0]["path"]).stat().st_size if e.success else 0
            print(f"    its export: {e.seconds:.2f} s, {size / 2**20:.1f} MB")
        for name in ("huge", "rows"):
            up = await s.upload(f"{name}.zip", files[name])
            w0 = len(by.waits)
            r = await s.call("author_import_zip", [up])
            print(f"  {name}.zip ({len(files[name]) / 1e3:.0f} KB): {r.seconds:.2f} s, "
                  f"{'ok' if r.success else 'refused: ' + str(r.error)[:90]}; bystander waited up to "
                  f"{max(by.waits[w0:], default=0):.2f} s")
        d1 = disk_bytes(app.temp)
        await s.close()
    await asyncio.sleep(3)
    rss.stop()
    print(f"  disk while the session was open +{(d1 - d0) / 2**20:.0f} MB, after it closed "
          f"+{(disk_bytes(app.temp) - d0) / 2**20:.0f} MB; RSS peak +{rss.peak_mb:.0f} MB, after "
          f"{(rss.now() - rss.start) / 2**20:+.0f} MB; {by.summary()}")


async def cancel(app: App) -> None:
    import io

    import psutil
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (7000, 7000), (200, 30, 30)).save(buf, "PNG", compress_level=1)
    clip = _clip_name(app.clip)
    async with client(app.url, "127.0.0.39") as (c, cfg):      # the model loaded once, first
        w = Session(c, app.url, cfg)
        up = await w.upload("w.png", png(64, 64))
        await w.call("upload", [[up], "a prompt", clip, 0, "auto", "png"])
    proc = psutil.Process(app.pid)
    cpu0, t0 = sum(proc.cpu_times()[:2]), time.perf_counter()
    rss = Rss(app.pid)
    refused = 0
    for k in range(4):
        async with client(app.url, f"127.0.0.{40 + k}") as (c, cfg):
            s = Session(c, app.url, cfg)
            ups = [await s.upload("big.png", buf.getvalue())] * 16
            fn = cfg.fn("upload")
            r = await join(c, app.url, s.session_hash, fn, [ups, "a prompt", clip, 0, "auto", "png"])
            eid = r.json()["event_id"]
            st = Stream(c, app.url, s.session_hash)
            await st.wait(eid, "process_starts")
            await asyncio.sleep(1.0)
            more = await join(c, app.url, Session(c, app.url, cfg).session_hash, fn, [ups, "a prompt", clip, 0, "auto", "png"])
            refused += more.status_code != 200
            await c.post(f"{app.url}/gradio_api/cancel", json={"session_hash": s.session_hash, "fn_index": fn,
                                                              "event_id": eid})
            st.close()
    t_cancel = time.perf_counter() - t0
    samples = []
    for _ in range(20):       # 10 s after the last cancel: is the server still working?
        c1 = sum(proc.cpu_times()[:2])
        await asyncio.sleep(0.5)
        samples.append((sum(proc.cpu_times()[:2]) - c1) / 0.5)
    rss.stop()
    print(f"  4 jobs started and cancelled in {t_cancel:.1f} s: server CPU {sum(proc.cpu_times()[:2]) - cpu0:.1f} s "
          f"over {time.perf_counter() - t0:.1f} s; CPU in the 10 s after the last cancel: mean "
          f"{sum(samples) / len(samples):.2f} cores, last 2 s {sum(samples[-4:]) / 4:.2f}; RSS peak "
          f"+{rss.peak_mb:.0f} MB; a second job of the same address: {refused} of 4 refused")


async def xff(app: App) -> None:
    out = []
    for k in range(12):
        async with httpx.AsyncClient(headers={"X-Forwarded-For": f"203.0.113.{k + 1}, 10.7.0.1"}, timeout=120) as c:
            r = await c.post(f"{app.url}/gradio_api/upload", files={"files": (f"b{k}.bin", bytes([k]) * (19 << 20))})
            out.append(r.status_code)
    print(f"  twelve 19 MB uploads, one real address under twelve invented ones (budget 200 MB): {out}")
    async with httpx.AsyncClient(headers={"X-Forwarded-For": "203.0.113.77, 10.7.0.2"}, timeout=120) as c:
        r = await c.post(f"{app.url}/gradio_api/upload", files=[("files", (f"f{i}.txt", b"x")) for i in range(40)])
        print(f"  40 files in one request: {r.status_code}")


async def gold(app: App) -> None:
    sys.path.insert(0, str(HERE))
    import numpy as np

    from ts2viz.ui.callbacks import humaneval as gc

    g = gc.rated("tifa160")
    rng = np.random.default_rng(0)
    body = "image_id," + ",".join(f"mine{k}" for k in range(8)) + "\n" + "".join(
        f"{i}," + ",".join(f"{v:.4f}" for v in rng.normal(size=8)) + "\n" for i in g.image_ids)
    async with Bystander(app.url) as by, client(app.url, "127.0.0.61") as (c, cfg):
        s = Session(c, app.url, cfg)
        s.keep_alive()
        await s.change("gold-set", "tifa160")
        up = await s.upload("mine.csv", body.encode())
        w0 = len(by.waits)
        added = await s.call("gold_upload", ["tifa160", up])
        w1 = len(by.waits)
        sw = [await s.call("gold_views", ["tifa160", rs, "point-wise", None]) for rs in ("tifa", "dsg", "tifa")]
        await s.close()
    print(f"  8-metric upload {added.seconds:.1f} s (bystander waited up to {max(by.waits[w0:w1], default=0):.2f} s); "
          f"rating-set switches {', '.join(f'{r.seconds:.2f} s' for r in sw)} (bystander waited up to "
          f"{max(by.waits[w1:], default=0):.2f} s); {by.summary()}")


async def logs(app: App) -> None:
    size0 = app.log.stat().st_size
    async with client(app.url, "127.0.0.71") as (c, cfg):
        for k in range(50):
            try:
                await c.get(f"{app.url}/gradio_api/queue/data", params={"session_hash": f"nosuch{k}"})
            except httpx.HTTPError:          # a stream the server broke off (before issue 32)
                pass
        await asyncio.sleep(0.5)
        size1 = app.log.stat().st_size
        s = Session(c, app.url, cfg)
        r = await s.call("show_seg", ["x" * 200_000, 0, None, None, "png"])
        await asyncio.sleep(0.5)
        size2 = app.log.stat().st_size
    text = app.log.read_bytes()[size0:].decode("utf-8", "replace")
    print(f"  50 unknown sessions on the event stream: {size1 - size0:,} bytes of log "
          f"({text[:size1 - size0].count('Traceback')} tracebacks); a 200 KB value that is no choice: "
          f"{size2 - size1:,} bytes of log, the visitor read {len(r.error or ''):,} characters: "
          f"{(r.error or '')[:70]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=str(HERE), help="the source tree whose app.py to attack (default: this one)")
    ap.add_argument("--only", default=",".join(ATTACKS), help="attacks to run, comma-separated")
    args = ap.parse_args()
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    root = Path(args.root).resolve()
    work = Path(tempfile.mkdtemp(prefix="bench-attacks-"))
    ds = write_dataset(work / "ds", big_image=False)
    scores = write_scores(work, ds)
    spec = f"clipscore:{tiny('clip')}"
    commit = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %s"], capture_output=True,
                            text=True).stdout.strip()
    print(f"{root} ({commit[:70]}); {_load()}")
    app = App(root, work, spec, ds, scores)
    try:
        for name in args.only.split(","):
            name = name.strip()
            t0 = time.perf_counter()
            print(f"{name}:")
            if name == "walks":
                walks(app, ds, scores)
            else:
                asyncio.run(globals()[name](app))
            print(f"  ({time.perf_counter() - t0:.0f} s; {_load()})")
    finally:
        app.stop()
        tb = app.log.read_text(errors="replace")
        print(f"server log: {len(tb):,} bytes, {tb.count('Traceback')} tracebacks")


if __name__ == "__main__":
    main()
