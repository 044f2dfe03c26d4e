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

Issue 42's attacks (``--only secrets,spend,...``) add two API metrics, ``vqascore:gpt-4o`` and
``viescore:gpt-4o``, pointed at a local listener (``tests/support/api_listener.py``) with the key
``sk-test-canary`` given as ``api_key=`` and as ``OPENAI_API_KEY`` (and a third, never called, with it in
its URL): ``secrets`` (the key and
the API's address in /config and a refused call's message), ``spend`` (one page scoring a 12 MB PNG for
30 s: requests, bytes, reply files left on disk), ``viewflood`` (500 unread ``show_seg`` calls, another
page's SEG change), ``ipv6`` (12 addresses of one /64), ``jobtime`` (four 16-image jobs at 6 s a request,
a fifth visitor's wait; ``--job-time``), ``apicancel`` (a job cancelled while the API hangs), ``unread`` (a
job nobody reads, the next visitor's wait), ``echo`` (HTML in the upload message, 3 MB of event data, the
log's address). Their tests: tests/public/test_public_api.py.
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
#: issue 42's attacks on the paid API behind the app (a local listener stands in for it)
API_ATTACKS = ("secrets", "spend", "viewflood", "ipv6", "jobtime", "apicancel", "unread", "echo")


def _load() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class App:
    """``root``'s app.py in public mode, on a generated dataset under ``work``."""

    def __init__(self, root: Path, work: Path, spec: str, ds: Path, scores: Path, extra_env: dict | None = None) -> None:
        self.root, self.work = root, work
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = work / "app.log"
        self.temp = work / "gradio"
        env = {**os.environ, "PYTHONPATH": str(root), "TS2VIZ_CACHE": str(work / "cache"), "HF_HUB_OFFLINE": "1",
               "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1", "GRADIO_TEMP_DIR": str(self.temp),
               "TS2VIZ_METRICS": spec, "FORWARDED_ALLOW_IPS": "*", "TS2VIZ_PROXY_HOPS": "1", **(extra_env or {})}
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
        self.clip = spec.split("\n")[0]
        self.api = None

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
        from ts2viz.ui.callbacks.authoring import scoring as cb_scoring
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
            out = cb_scoring.score_draft(view, "loaded", "GoodScore", "paper")
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

    from ts2viz.ui.callbacks.humaneval import sets as gc_sets

    g = gc_sets.rated("tifa160")
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


# -- issue 42: the paid API behind the app ---------------------------------------------------------------------

async def _api_name(c, url: str, family: str) -> str:
    """The name the page offers for the API metric of ``family`` (each tree shows it its own way)."""
    cfg = (await c.get(f"{url}/config")).json()
    for comp in cfg["components"]:
        for ch in comp.get("props", {}).get("choices") or []:
            v = ch[1] if isinstance(ch, (list, tuple)) else ch
            if isinstance(v, str) and v.startswith(family + ":gpt-4o"):
                return v
    raise RuntimeError(f"no {family} API metric offered")


def _big_png() -> bytes:
    import io

    import numpy as np
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(3).integers(0, 255, (1800, 2400, 3), dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


async def _score(s: Session, name: str, images: list[bytes], prompt: str = "a red apple"):
    ups = [await s.upload(f"u{k}.png", b) for k, b in enumerate(images)]
    return await s.call("upload", [ups, prompt, name, None, "auto", "png"])


async def secrets(app: App) -> None:
    from api_listener import CANARY

    api = app.api
    api.mode = "refuse"
    async with client(app.url, "127.0.0.80") as (c, cfg):
        raw = (await c.get(f"{app.url}/config")).text
        s = Session(c, app.url, cfg)
        r = await _score(s, await _api_name(c, app.url, "viescore"), [png(64, 64)])
    api.mode = "ok"
    internal = f"127.0.0.1:{api.port}"
    print(f"  /config: the key {raw.count(CANARY)} times, the API's address {raw.count(internal)} times; a refused "
          f"judge call: the visitor read {(r.error or '')[:110]!r}; the key in it: {CANARY in (r.error or '')}; "
          f"the key in the log: {app.log.read_text(errors='replace').count(CANARY)} times")


async def spend(app: App) -> None:
    api = app.api
    big = _big_png()
    n0 = api.count()
    calls = refused = 0
    t0 = time.perf_counter()
    async with client(app.url, "127.0.0.81") as (c, cfg):
        name = await _api_name(c, app.url, "vqascore")
        s = Session(c, app.url, cfg)
        s.keep_alive()
        while time.perf_counter() - t0 < 30:
            try:
                r = await _score(s, name, [big], prompt=f"visitor prompt {calls}")
            except httpx.HTTPStatusError:           # the upload budget (429): the loop is over
                refused += 1
                break
            calls += 1
            refused += not r.success
        await s.close()
    reqs = api.requests[n0:]
    llm = app.work / "cache" / "llm"
    files = [p for p in llm.rglob("*") if p.is_file()] if llm.exists() else []
    with_prompt = sum(b"visitor prompt" in p.read_bytes() for p in files)
    sizes = sorted({sz for r in reqs for sz in r["images"]})
    print(f"  one page, 30 s of upload scoring of a {len(big) / 2**20:.1f} MB 2,400 x 1,800 PNG: {calls} calls "
          f"({refused} refused), {len(reqs)} API requests, {max((r['bytes'] for r in reqs), default=0) / 2**20:.1f} MB "
          f"per request at most, images sent at {sizes[:3]}; reply files left in cache/llm: {len(files)} "
          f"({with_prompt} with the visitor's prompt)")


async def viewflood(app: App) -> None:
    out = {}
    for n in (0, 500):
        async with client(app.url, "127.0.0.82") as (c, cfg), client(app.url, "127.0.0.83") as (c2, cfg2):
            fn = cfg.fn("show_seg")
            s = Session(c, app.url, cfg)
            answers = await asyncio.gather(*[join(c, app.url, s.session_hash, fn, [str(k % 3), 0, None, None, "png"])
                                             for k in range(n)])
            other = Session(c2, app.url, cfg2)
            await other.load()
            t0 = time.perf_counter()
            await other.change("seg-pick", other.options("seg-pick")[1])
            out[n] = (time.perf_counter() - t0, sum(a.status_code == 200 for a in answers))
    print(f"  another page's SEG change: {out[0][0]:.2f} s alone, {out[500][0]:.2f} s after one page posted 500 "
          f"show_seg calls it never reads ({out[500][1]} admitted)")


async def ipv6(app: App) -> None:
    api = app.api
    api.mode, api.hang_s = "hang", 6.0
    codes = []
    async with client(app.url, "127.0.0.84") as (c, cfg):
        name = await _api_name(c, app.url, "viescore")
        fn = cfg.fn("upload")
    for k in range(12):
        async with client(app.url, "127.0.0.84", headers={"X-Forwarded-For": f"2001:db8:7:7::{k + 1:x}"}) as (c, cfg):
            s = Session(c, app.url, cfg)
            up = await s.upload(f"a{k}.png", png(32, 32, (k * 20, 9, 9)))
            r = await join(c, app.url, s.session_hash, fn, [[up], "a cat", name, None, "auto", "png"])
            codes.append(r.status_code)
    await asyncio.sleep(api.hang_s + 2)
    api.mode = "ok"
    print(f"  12 addresses of one IPv6 /64, one heavy job each: {codes.count(200)} admitted, "
          f"{len(codes) - codes.count(200)} refused")


async def jobtime(app: App) -> None:
    api = app.api
    api.delay_s = 6.0
    async with client(app.url, "127.0.0.85") as (c, cfg):
        name = await _api_name(c, app.url, "vqascore")
    t0 = time.perf_counter()

    async def heavy(k: int):
        async with client(app.url, f"127.0.0.{86 + k}") as (c, cfg):
            s = Session(c, app.url, cfg)
            s.keep_alive()
            r = await _score(s, name, [png(24, 24, (k * 40, 20 * j, 9)) for j in range(16)])
            await s.close()
            return time.perf_counter() - t0, r

    async def light():
        await asyncio.sleep(3.0)
        async with client(app.url, "127.0.0.90") as (c, cfg):
            s = Session(c, app.url, cfg)
            s.keep_alive()
            t1 = time.perf_counter()
            r = await _score(s, name, [png(24, 24)])
            await s.close()
            return time.perf_counter() - t1, r

    res = await asyncio.gather(*[heavy(k) for k in range(4)], light())
    api.delay_s = 0.0
    wait, r = res[-1]
    print(f"  four addresses, one 16-image API job each (6 s a request): jobs ended at "
          f"{', '.join(f'{t:.0f}' for t, _ in res[:-1])} s ({sum(not x.success for _, x in res[:-1])} stopped); "
          f"a fifth visitor's 1-image job took {wait:.0f} s ({'ok' if r.success else r.error})")


async def apicancel(app: App) -> None:
    api = app.api
    api.mode, api.hang_s = "hang", 15.0
    async with client(app.url, "127.0.0.91") as (c, cfg), client(app.url, "127.0.0.92") as (c2, cfg2):
        name = await _api_name(c, app.url, "viescore")
        s = Session(c, app.url, cfg)
        ups = [await s.upload(f"c{k}.png", png(24, 24, (k * 15, 50, 50))) for k in range(16)]
        fn = cfg.fn("upload")
        n0 = api.count()
        ev = await join(c, app.url, s.session_hash, fn, [ups, "a cat", name, None, "auto", "png"])
        st = Stream(c, app.url, s.session_hash)
        await asyncio.sleep(2.0)
        await c.post(f"{app.url}/gradio_api/cancel", json={"session_hash": s.session_hash, "fn_index": fn,
                                                          "event_id": ev.json()["event_id"]})
        t_cancel = time.perf_counter()
        await asyncio.sleep(1.0)
        api.mode = "ok"                      # the API answers again; is the lane free?
        other = Session(c2, app.url, cfg2)
        other.keep_alive()
        r = await _score(other, name, [png(24, 24)])
        t_other = time.perf_counter() - t_cancel
        await asyncio.sleep(20.0)
        st.close()
        await other.close()
    print(f"  a 16-image judge job against an API that hangs, cancelled after 2 s: {api.count() - n0 - 1} requests "
          f"sent in all; the next visitor's job done {t_other:.1f} s after the cancel ({'ok' if r.success else r.error})")


async def unread(app: App) -> None:
    api = app.api
    api.delay_s = 2.0
    async with client(app.url, "127.0.0.93") as (c, cfg), client(app.url, "127.0.0.94") as (c2, cfg2):
        name = await _api_name(c, app.url, "viescore")
        s = Session(c, app.url, cfg)
        ups = [await s.upload(f"n{k}.png", png(24, 24, (k * 15, 90, 50))) for k in range(16)]
        await join(c, app.url, s.session_hash, cfg.fn("upload"), [ups, "a cat", name, None, "auto", "png"])
        await asyncio.sleep(0.5)
        other = Session(c2, app.url, cfg2)
        other.keep_alive()
        t0 = time.perf_counter()
        r = await _score(other, name, [png(24, 24)])
        took = time.perf_counter() - t0
        await other.close()
    api.delay_s = 0.0
    print(f"  a 16-image job whose result nobody reads, then another visitor's 1-image job: done in {took:.1f} s "
          f"({'ok' if r.success else r.error})")


async def echo(app: App) -> None:
    prompt = "<img src=x onerror=alert(1)> **bold**"
    size0 = app.log.stat().st_size
    async with client(app.url, "127.0.0.95") as (c, cfg):
        name = await _api_name(c, app.url, "vqascore")
        s = Session(c, app.url, cfg)
        s.keep_alive()
        r = await _score(s, name, [png(24, 24)], prompt)
        msg = s.output(r, "upload-msg") if r.success else r.error
        bad = await s.call("show_seg", ["0", {"x": "y" * 3_000_000}, None, None, "png"])
        await s.close()
    text = app.log.read_bytes()[size0:].decode("utf-8", "replace")
    refusals = [ln for ln in text.splitlines() if "refused" in ln and "values" in ln]
    print(f"  upload message with a prompt of HTML and Markdown: raw <img in it: {'<img' in (msg or '')}; 3 MB of "
          f"event data: the visitor read {len(bad.error or ''):,} characters; the refusal's log line: "
          f"{refusals[0][:90] if refusals else '-'!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=str(HERE), help="the source tree whose app.py to attack (default: this one)")
    ap.add_argument("--only", default=",".join(ATTACKS), help="attacks to run, comma-separated (issue 42's: "
                    + ",".join(API_ATTACKS) + ")")
    ap.add_argument("--job-time", default="10", help="TS2VIZ_JOB_TIME_S for the app (issue 42's jobtime attack)")
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
    wanted = [n.strip() for n in args.only.split(",")]
    api = extra = None
    if any(n in API_ATTACKS for n in wanted):
        from api_listener import CANARY, Listener

        api = Listener()
        # the key as an option in the two that are called (a key in the URL did not reach the API before
        # issue 42), and in the URL of a third offered one
        spec += (f"\nvqascore:gpt-4o?endpoint=http://127.0.0.1:{api.port}/v1&api_key={CANARY}&retries=0"
                 f"\nviescore:gpt-4o?endpoint=http://127.0.0.1:{api.port}/v1&api_key={CANARY}&timeout=10"
                 f"\nviescore:gpt-4o-mini?endpoint=http://me:{CANARY}@127.0.0.1:{api.port}/v1")
        extra = {"OPENAI_API_KEY": CANARY, "TS2VIZ_JOB_TIME_S": args.job_time}
    app = App(root, work, spec, ds, scores, extra)
    app.api = api
    try:
        for name in wanted:
            t0 = time.perf_counter()
            print(f"{name}:")
            if name == "walks":
                walks(app, ds, scores)
            else:
                asyncio.run(globals()[name](app))
            print(f"  ({time.perf_counter() - t0:.0f} s; {_load()})")
    finally:
        app.stop()
        if api is not None:
            api.close()
        tb = app.log.read_text(errors="replace")
        print(f"server log: {len(tb):,} bytes, {tb.count('Traceback')} tracebacks")


if __name__ == "__main__":
    main()
