"""One hostile visitor against a running public app, the round after issue 22 (issue 32): the Authoring
and Human ratings tabs and the queue itself, attacked over raw HTTP as a Space's visitor's script can,
with another visitor changing SEGs meanwhile (its view changes' latency and queue wait measured), and the
server's memory (RSS) and disk measured before, during and after.

The server plays a Space behind its proxy: ``TS2VIZ_PROXY_HOPS=1``, so a request's
``X-Forwarded-For`` entries are what a client wrote, followed by the one the proxy appended (here: the
test, writing both). Requests without the header come from their connection's address (127.0.0.x:
clients on other machines). Gradio's table of sessions is made smaller (``TS2VIZ_QUEUE_SESSIONS``) so
that a flood fills it in seconds; the mechanism is the one of 2,000 entries.

Each test's runtime on this 2-core machine (load average 10-15, shared) is in its docstring.
"""
from __future__ import annotations

import asyncio
import io
import re
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from app_server import running_app
from attack_helpers import Bystander, Rss, Stream, client, dataset_zip, disk_bytes, join, png, server_pid
from gradio_http import Session

pytestmark = pytest.mark.slow

TABLE = 50           # Gradio's session table, made small (TS2VIZ_QUEUE_SESSIONS)
CLIENT_MB = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    from ts2viz.ui.serving.access import display_names

    d = tmp_path_factory.mktemp("guard")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    spec = f"clipscore:{tiny('clip')}"
    env = {"GRADIO_TEMP_DIR": str(d / "gradio"), "TS2VIZ_METRICS": spec, "TS2VIZ_PROXY_HOPS": "1",
           "TS2VIZ_QUEUE_SESSIONS": str(TABLE), "TS2VIZ_CLIENT_UPLOAD_MB": str(CLIENT_MB),
           # these tests need a long job that outlasts a flood; the per-job time budget (default 40 s) has
           # its own test (tests/public/test_public_api.py)
           "TS2VIZ_JOB_TIME_S": "900",
           # and a model lane that queues the next page behind it (its place in the queue is what they
           # read); jobs taking turns (default 5 at once) have their tests in tests/public/test_public_api.py
           # and tests/public/test_public_turns_units.py
           "TS2VIZ_TURN_JOBS": "1"}
    with running_app(["--public", "--data", str(d / "ds"), "--scores", str(scores)], d, env=env,
                     drop_env=["SPACE_ID", "TS2VIZ_METRICS_FILE", "FORWARDED_ALLOW_IPS", "TS2VIZ_TRUSTED_PROXIES"],
                     timeout=120) as (url, log_path):
        yield {"url": url, "dir": d, "root": d / "gradio", "log": log_path, "pid": server_pid(url),
               "clip": display_names([spec])[spec]}


def run(coro):
    return asyncio.run(coro)


def _one_line(text: str | None) -> bool:
    return bool(text) and "\n" not in text.strip() and "Traceback" not in text


async def _draft(s: Session, prompt: str = "a red apple") -> None:
    r = await s.call("author_start_draft", [prompt, None, "Custom"])
    assert r.success, r.error


# -- 1. the cost of a SEG is known before any work --------------------------------------------------------

def test_walks_nodes_and_edges_are_refused_before_any_work(server):
    """3 nodes a level, level after level (the issue's draft: 3^L walks): the node that takes the SEG
    past 5,000 walks is refused at once, with the number and the limit; an edge to a node the SEG lacks
    is refused; imported SEGs past the caps are refused from their CSV files before an image is
    unpacked. (About 15 s.)"""
    url = server["url"]

    async def go():
        async with Bystander(url) as by, client(url, "127.0.0.31") as (c, app):
            s = Session(c, url, app)
            s.keep_alive()
            await _draft(s)
            refused, times = None, []
            for lv in range(12):
                for x in "abc":
                    r = await s.call("author_save_node", [f"{lv}{x}", ""])
                    times.append(r.seconds)
                    if not r.success:
                        refused = (lv, x, r)
                        break
                if refused:
                    break
            edge = await s.call("author_add_edge", ["0a", "9z"])
            letters = [a + b for a in " abc" for b in "abcdefghijklmnopqrstuvwxyz"]
            wide = dataset_zip({0: [("images/n0.png", "0")] + [(f"images/n{k}.png", "1" + letters[k].strip())
                                                               for k in range(1, 70)]})
            deep = dataset_zip({0: [(f"images/{lv}{x}.png", f"{lv}{x}") for lv in range(12) for x in "abc"]})
            rs = {}
            for name, z in (("wide", wide), ("deep", deep)):
                up = await s.upload(f"{name}.zip", z)
                rs[name] = await s.call("author_import_zip", [up])
            await s.close()
            return refused, times, edge, rs, by

    rss = Rss(server["pid"])
    try:
        refused, times, edge, rs, by = run(go())
    finally:
        rss.stop()
    print(f"\nnode refused at {refused[0]}{refused[1]} in {refused[2].seconds:.2f} s ({refused[2].error}); "
          f"{by.summary()}; RSS peak +{rss.peak_mb:.0f} MB")
    lv, x, r = refused
    # levels 0-5 full and x of 3 nodes on level 6: 3^7 x paper walks (3 error-0 nodes, each walk from an
    # ordered pair of them); 4,374 for 6b, 6,561 for 6c
    assert (lv, x) == (6, "c")
    assert _one_line(r.error) and "6,561 walks (the limit is 5,000)" in r.error, r.error
    assert not edge.success and "no node '9z'" in edge.error
    assert not rs["wide"].success and "70 nodes (the limit is 64)" in rs["wide"].error, rs["wide"].error
    assert not rs["deep"].success and "walks (the limit is 5,000)" in rs["deep"].error, rs["deep"].error
    assert all(_one_line(x.error) for x in rs.values())
    assert rss.peak_mb < 150
    by.check()


def test_operator_sees_a_warning_and_has_higher_caps(tmp_path, monkeypatch):
    """The operator's own app (in process): the same SEG is taken with a warning naming its walks, and
    scoring it warns too; nodes and edges have caps of their own, far higher. (About 3 s.)"""
    from ui_helpers import write_dataset, write_scores

    from ts2viz.errors import InputError
    from ts2viz.ui import load_state
    from ts2viz.ui.serving import access
    from ts2viz.ui.state.authoring_session import OPERATOR_CAPS
    from ts2viz.ui.callbacks.authoring import drafts as cb_drafts, nodes as cb_nodes

    write_dataset(tmp_path / "ds", big_image=False)
    app = load_state(str(tmp_path / "ds"), [str(write_scores(tmp_path, tmp_path / "ds"))], cache_root=tmp_path / "c",
                     fetch_images=False, access=access.operator()).view()
    cb_drafts.start_draft(app, "a red apple")
    msgs = []
    for lv in range(11):
        for x in "abc":
            msgs.append(cb_nodes.save_node(app, f"{lv}{x}", ""))
    # the operator's walk limit is 200,000: 3^10 x 3 = 177,147 at 9c, 3^11 x 2 = 354,294 at 10b
    assert all("⚠" not in m for m in msgs[:31]) and "⚠ SEG 0 has 354,294 walks" in msgs[31], msgs[31]
    assert "531,441 walks" in msgs[-1]
    assert OPERATOR_CAPS.max_nodes > 64 and OPERATOR_CAPS.max_walks > 5_000 and not OPERATOR_CAPS.refuse_walks
    # the operator's caps hold too (here made small, to reach one quickly)
    import dataclasses

    small = dataclasses.replace(OPERATOR_CAPS, max_nodes=35)
    monkeypatch.setattr(cb_drafts, "caps_for", lambda view: small)     # a changed SEG's size check
    for k in range(2):
        cb_nodes.save_node(app, f"11{'ab'[k]}", "")
    with pytest.raises(InputError, match=r"36 nodes \(the limit is 35\)"):
        cb_nodes.save_node(app, "11c", "")


def _deep_draft(app, levels: int):
    """A SEG of 3 nodes on each of ``levels`` levels, each node with one image of the loaded dataset (so
    that its loaded scores apply), put into the session's drafts as it is (no action checks it)."""
    from ts2viz.authoring import SegDraft
    from ts2viz.ui.state.authoring_session import drafts_of
    from ts2viz.ui.callbacks.authoring.drafts import DATASET_KEY

    names = app.dataset.file_names
    d = SegDraft("a red apple", 0)
    k = 0
    for lv in range(levels):
        for x in "abc":
            d = d.add_node(f"{lv}{x}").add_image(DATASET_KEY + names[k], names[k], f"{lv}{x}")
            k += 1
    store = drafts_of(app, create=True)
    store.drafts, store.current = [d], 0
    return d


def test_scoring_counts_walks_first(tmp_path, monkeypatch):
    """Scoring a SEG counts its walks before it builds one: a visitor's SEG over the limit is refused at
    once (however it came to be), the operator's is scored with a warning. (About 5 s.)"""
    import dataclasses

    from ui_helpers import write_dataset, write_scores

    from ts2viz.errors import InputError
    from ts2viz.ui import load_state
    from ts2viz.ui.serving import access
    from ts2viz.ui.state.authoring_session import OPERATOR_CAPS
    from ts2viz.ui.callbacks.authoring import scoring as cb_scoring

    write_dataset(tmp_path / "ds", big_image=False)
    scores = [str(write_scores(tmp_path, tmp_path / "ds"))]
    public = load_state(str(tmp_path / "ds"), scores, cache_root=tmp_path / "c", fetch_images=False,
                        access=access.public()).view()
    _deep_draft(public, 12)                      # 3 x 3^12 paper walks: 1,594,323
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"SEG 0 has 1,594,323 walks; at most 5,000 are scored here"):
        cb_scoring.score_draft(public, "loaded", "GoodScore", "paper")
    assert time.perf_counter() - t0 < 1.0
    op = load_state(str(tmp_path / "ds"), scores, cache_root=tmp_path / "c", fetch_images=False,
                    access=access.operator()).view()
    _deep_draft(op, 7)                           # 6,561 paper walks, over a limit made small here
    monkeypatch.setattr(cb_scoring, "caps_for", lambda view: dataclasses.replace(OPERATOR_CAPS, max_walks=1_000))
    r = cb_scoring.score_draft(op, "loaded", "GoodScore", "paper")
    assert "⚠ 6,561 walks (more than 1,000)" in r["message"] and len(r["walks"]) == 6_561


# -- 2, 3, 4, 6. zips: read in proportion to what is accepted; images checked as uploads; nothing left -----

def _zip_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return buf.getvalue()


def _attack_zips() -> dict[str, bytes]:
    one = [("images/a.png", "0"), ("images/b.png", "1")]
    zeros = _zip_of({"ds/metadata.csv": "id,target_prompt,file_name,image_source,rank\n0,p,images/a.png,SD,0\n"
                                       "0,p,images/b.png,SD,1\n", "ds/images/a.png": png(),
                     "ds/images/b.png": png() + bytes(119 << 20)})
    tail = dataset_zip({0: one}, {"images/b.png": png() + bytes(4 << 20)})
    fat = dataset_zip({0: one}, {"images/b.png": png() + bytes(6 << 20)})
    from PIL import Image

    big = io.BytesIO()
    Image.new("1", (13_000, 13_000)).save(big, "PNG", optimize=True)
    huge = dataset_zip({0: one + [("images/c.png", "1")]}, {f"images/{x}.png": big.getvalue() for x in "abc"})
    cut = png(400, 400, (10, 200, 90))
    cut = dataset_zip({0: one}, {"images/b.png": cut[: len(cut) // 2]})
    frames = [Image.new("RGB", (4, 4), (k % 256, k // 256 * 40, 0)) for k in range(2000)]
    anim = io.BytesIO()
    frames[0].save(anim, "GIF", save_all=True, append_images=frames[1:])
    gif = dataset_zip({0: [("images/a.png", "0"), ("images/b.gif", "1")]}, {"images/b.gif": anim.getvalue()})
    rows = "id,target_prompt,file_name,image_source,rank\n" + "".join(
        f"0,p,images/{k}.png,SD,{k % 3}\n" for k in range(1_000_000))
    many = _zip_of({"ds/metadata.csv": rows, "ds/images/0.png": png()})
    return {"zeros": zeros, "tail": tail, "fat": fat, "huge": huge, "cut": cut, "gif": gif, "rows": many}


EXPECTED = {"zeros": "the zip unpacks to 124,780,", "tail": "4,194,304 bytes after the end of the image",
            "fat": "file is 6.3 MB; the limit is 5 MB",
            "huge": "13000x13000 pixels; the limit is 50 megapixels", "cut": "not a readable image",
            "gif": "2,000 frames; the limit is 500", "rows": "metadata.csv is more than 1,048,576 bytes"}


def test_zips_are_refused_from_what_they_declare_and_leave_nothing(server):
    """Each of the issue's zips, imported by one visitor while another changes SEGs: 119 MB of zeros as an
    image (8 times), a valid PNG followed by 4 MB of zeros, three 13,000 x 13,000 PNGs, a truncated
    image, a GIF of 2,000 frames, a metadata.csv of 1,000,000 rows. Each is refused in one line, in well
    under a second of server work, the server's memory stays flat, and nothing is left on disk; a
    valid import then exports within its images' size, and a second export replaces the first. Once the
    attacker's page closes, disk and memory are back where they were. (About 25 s.)"""
    url, root = server["url"], server["root"]
    zips = _attack_zips()

    async def go():
        async with Bystander(url) as by, client(url, "127.0.0.32") as (c, app):
            s = Session(c, url, app)
            s.keep_alive()
            out = {}
            for name, z in zips.items():
                out[name] = []
                for _ in range(8 if name == "zeros" else 1):     # again and again (a refused upload is let go)
                    up = await s.upload(f"{name}.zip", z)
                    out[name].append(await s.call("author_import_zip", [up]))
            session_disk = disk_bytes(root) - start_disk
            ok = dataset_zip({0: [(f"images/{k}.png", "0" if k < 3 else "1") for k in range(6)]},
                             {f"images/{k}.png": png(300, 200, (k * 40, 90, 200)) for k in range(6)})
            up = await s.upload("ok.zip", ok)
            imported = await s.call("author_import_zip", [up])
            exports = [await s.call("author_zip", ["mine"]) for _ in range(3)]
            folders = sorted({str(Path(e.data[0]["path"]).parent.parent) for e in exports if e.success})
            kept = [(p, p.stat().st_size) for p in Path(folders[0]).rglob("*.zip")] if folders else []
            await s.close()
            return out, session_disk, imported, exports, kept, by

    start_disk = disk_bytes(root)
    rss = Rss(server["pid"])
    try:
        out, session_disk, imported, exports, kept, by = run(go())
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 30 and disk_bytes(root) - start_disk > 50 << 20:
            time.sleep(0.2)
        left_disk = disk_bytes(root) - start_disk
        after = (rss.now() - rss.start) / 2**20
    finally:
        rss.stop()
    print("\n" + "; ".join(f"{n} {max(r.seconds for r in rs):.2f} s" for n, rs in out.items())
          + f"; disk during +{session_disk / 2**20:.1f} MB, after close +{left_disk / 2**20:.1f} MB; RSS peak "
          f"+{rss.peak_mb:.0f} MB, after close {after:+.0f} MB; {by.summary()}")
    for name, rs in out.items():
        for r in rs:
            assert not r.success and _one_line(r.error) and EXPECTED[name] in r.error, (name, r.error)
    assert session_disk < 12 << 20, f"refused imports left {session_disk / 2**20:.1f} MB"
    assert imported.success, imported.error
    assert all(e.success for e in exports), [e.error for e in exports]
    # one export kept (each replaces the one before), within its images' own bytes and a megabyte
    assert len(kept) == 1 and kept[0][1] < (1 << 20) + 6 * len(png(300, 200)), kept
    assert rss.peak_mb < 250
    assert left_disk < 50 << 20 and after < 50
    by.check()


# -- 2. cancel that cancels; one job per visitor --------------------------------------------------------------

def _heavy_upload_files() -> list[bytes]:
    """16 images of 49 megapixels (each within the upload cap, small on disk): about a second of decoding
    each, so a job of them runs long enough to be cancelled midway."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (7000, 7000), (200, 30, 30)).save(buf, "PNG", compress_level=1)
    return [buf.getvalue()] * 16


def test_cancel_stops_the_work_and_each_visitor_has_one_job(server):
    """Four visitors each start a heavy model job (16 uploads of 49 megapixels to check, decode and score)
    and cancel it after a second; the same page and the same address try to queue more. Each cancelled
    job stops at its next image (the server logs it), never two run at once (memory: one decode at a
    time), every extra job is refused at the queue in one line, and a victim's small job after them
    runs as soon as the one job ahead of it stops. (About 40 s.)"""
    url = server["url"]
    files = _heavy_upload_files()
    log0 = 0

    async def attacker(address: str, extra: list):
        async with client(url, address) as (c, app):
            s = Session(c, url, app)
            ups = [await s.upload(f"big{k}.png", b) for k, b in enumerate(files[:1])] * 16
            fn = app.fn("upload")
            r = await join(c, url, s.session_hash, fn, [ups, "a prompt", server["clip"], 0, "auto", "png"])
            assert r.status_code == 200, r.text
            eid = r.json()["event_id"]
            stream = Stream(c, url, s.session_hash)
            await stream.wait(eid, "process_starts")
            await asyncio.sleep(1.0)                    # the attack: cancel after a second
            # the same page, and another page of the same address, try to queue more meanwhile
            again = await join(c, url, s.session_hash, fn, [ups, "a prompt", server["clip"], 0, "auto", "png"])
            other = Session(c, url, app)
            more = await join(c, url, other.session_hash, fn, [ups, "a prompt", server["clip"], 0, "auto", "png"])
            extra += [again, more]
            t_cancel = time.perf_counter()
            await c.post(f"{url}/gradio_api/cancel", json={"session_hash": s.session_hash, "fn_index": fn,
                                                          "event_id": eid})
            stream.close()
            return t_cancel

    async def go():
        async with Bystander(url) as by:
            extra: list = []
            for k in range(4):
                await attacker(f"127.0.0.{40 + k}", extra)
            async with client(url, "127.0.0.49") as (c, app):      # the victim: one small image
                v = Session(c, url, app)
                up = await v.upload("small.png", png(64, 64))
                t0 = time.perf_counter()
                victim = await v.call("upload", [[up], "a prompt", server["clip"], 0, "auto", "png"])
                victim_s = time.perf_counter() - t0
            return extra, victim, victim_s, by

    async def warm():
        """The model loaded once (its import is not what this test measures), then one heavy job alone,
        cancelled after a second like the attackers' below: its memory is what one job at a time costs."""
        async with client(url, "127.0.0.48") as (c, app):
            w = Session(c, url, app)
            up = await w.upload("warm.png", png(64, 64))
            r = await w.call("upload", [[up], "a prompt", server["clip"], 0, "auto", "png"])
            assert r.success, r.error
        one = Rss(server["pid"])
        try:
            await attacker("127.0.0.47", [])
            await wait_stopped(1)
        finally:
            one.stop()
        return one.peak_mb

    async def wait_stopped(n: int) -> int:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 60:
            stopped = server["log"].read_text().count("stopped a cancelled model job") - log0
            if stopped >= n:
                break
            await asyncio.sleep(0.2)
        return stopped

    alone_mb = run(warm())
    log0 = server["log"].read_text().count("stopped a cancelled model job")
    rss = Rss(server["pid"])
    try:
        extra, victim, victim_s, by = run(go())
        stopped = run(wait_stopped(4))
    finally:
        rss.stop()
    print(f"\n{stopped} cancelled jobs stopped; victim's job {victim_s:.1f} s; RSS peak +{rss.peak_mb:.0f} MB "
          f"(one such job alone: +{alone_mb:.0f} MB); {by.summary()}")
    assert stopped == 4
    for r in extra:
        assert r.status_code == 400 and "one at a time" in r.text and "\n" not in r.text.strip(), r.text
    assert victim.success, victim.error
    # one decode of 49 megapixels at a time: the attack's peak is one job's, not four (two at once would
    # double it); the margin is for the allocator's leftovers of the job before
    assert rss.peak_mb < alone_mb + 100, f"RSS +{rss.peak_mb:.0f} MB, one job alone +{alone_mb:.0f} MB"
    by.check()


# -- 5, 7. addresses that cannot be forged; a session flood ---------------------------------------------------

def test_forged_forwarded_addresses_are_not_believed(server):
    """The client's own X-Forwarded-For entries (at the left) are not believed, only the one the proxy
    appended (at the right): nine invented addresses do not make nine upload budgets; a page claiming
    a victim's address pushes out only its own sessions; new sessions per address are rate-limited.
    (About 20 s.)"""
    url = server["url"]

    def via(real: str, claimed: str) -> dict:
        return {"X-Forwarded-For": f"{claimed}, {real}"}

    async def go():
        statuses = []
        for k in range(5):                 # 5 x 19 MB as five "addresses"; one real one: 60 MB budget
            async with httpx.AsyncClient(headers=via("10.7.0.1", f"203.0.113.{k + 1}"), timeout=120) as c:
                r = await c.post(f"{url}/gradio_api/upload", files={"files": (f"b{k}.bin", bytes([k]) * (19 << 20))})
                statuses.append(r.status_code)
        async with client(url, headers=via("10.7.0.2", "10.7.0.2")) as (c, app):
            victim = Session(c, url, app)
            victim.keep_alive()
            await _draft(victim, "the victim's SEG")
            async with client(url, headers=via("10.7.0.3", "10.7.0.2")) as (c2, app2):
                for _ in range(20):        # claims the victim's address: more than the 16 sessions per client
                    s = Session(c2, url, app2)
                    r = await s.call("author_start_draft", ["p", None, "Custom"])
                    assert r.success or "too many new sessions" in (r.error or ""), r.error
            still = await victim.call("author_undo", [])
            await victim.close()
        flood = []
        async with httpx.AsyncClient(headers=via("10.7.0.4", "10.7.0.4"), timeout=120) as c:
            app = await __import__("gradio_http").AppConfig.fetch(c, url)
            fn = app.fn("show_seg")
            for _ in range(60):
                s = Session(c, url, app)
                flood.append(await join(c, url, s.session_hash, fn, []))
        return statuses, still, flood

    statuses, still, flood = run(go())
    refused = [r for r in flood if r.status_code == 429]
    print(f"\nuploads {statuses}; 60 new sessions from one address: {len(refused)} refused")
    assert statuses[:3] == [200, 200, 200] and statuses[3:] == [429, 429]
    assert still.success and "Undone" in still.data[0], still.error      # the victim's draft is there
    assert 25 <= len(refused) <= 32, len(refused)                          # 30 at once, then 6 a minute
    assert all("too many new sessions" in r.text and "\n" not in r.text.strip() for r in refused)


def test_a_session_flood_keeps_live_pages_and_queue_positions(server):
    """A visitor's long job runs and another's waits behind it in the model queue, while a script starts
    three times as many sessions as Gradio's session table holds, from many addresses. Both pages get
    their results although more sessions than the table holds came after them (Gradio would have pushed
    them out), the waiting one is still told its place in the queue once the table is full of the
    flood's sessions, and the server logs no traceback. (About 30 s.)"""
    url = server["url"]
    files = _heavy_upload_files()

    async def one_address(a: int) -> list[tuple[float, int]]:
        async with httpx.AsyncClient(headers={"X-Forwarded-For": f"10.9.{a}.1"}, timeout=120) as c:
            app = await __import__("gradio_http").AppConfig.fetch(c, url)
            fn = app.fn("show_seg")
            out = []
            for _ in range(20):
                code = (await join(c, url, Session(c, url, app).session_hash, fn, [])).status_code
                out.append((time.perf_counter(), code))
            return out

    async def flood(n: int) -> list[tuple[float, int]]:
        # 20 new sessions from each of n/20 addresses at once (each address under the rate limit)
        per = await asyncio.gather(*[one_address(a) for a in range(-(-n // 20))])
        return sorted(x for xs in per for x in xs)[:n]

    async def go():
        async with client(url, "127.0.0.51") as (c1, app), client(url, "127.0.0.52") as (c2, _):
            x, y = Session(c1, url, app), Session(c2, url, app)
            fn = app.fn("upload")
            ups = [await x.upload("big.png", files[0])] * 16
            ex = (await join(c1, url, x.session_hash, fn, [ups, "a prompt", server["clip"], 0, "auto", "png"])).json()["event_id"]
            sx = Stream(c1, url, x.session_hash)
            await sx.wait(ex, "process_starts")
            small = await y.upload("small.png", png(64, 64))
            ey = (await join(c2, url, y.session_hash, fn, [[small], "a prompt", server["clip"], 0, "auto", "png"])).json()["event_id"]
            sy = Stream(c2, url, y.session_hash)
            await sy.wait(ey, "estimation")
            joins = await flood(3 * TABLE)
            done_x = await sx.wait(ex, "process_completed", timeout=300)
            done_y = await sy.wait(ey, "process_completed", timeout=300)
            t_x = sx.of(ex, "process_completed")[0][0]
            t_full = joins[TABLE - 1][0]          # from here on the table holds only the flood's sessions
            positions = [m for t, m in sy.of(ey, "estimation") if t > t_full]
            sx.close()
            sy.close()
            return joins, done_x, done_y, t_x, t_full, positions

    t0 = time.perf_counter()
    joins, done_x, done_y, t_x, t_full, positions = run(go())
    log = server["log"].read_text()
    before_x = sum(t < t_x for t, _ in joins)
    print(f"\nflood: {len(joins)} joins in {joins[-1][0] - joins[0][0]:.1f} s, {before_x} of them before the "
          f"running job's result; the waiting page told its place {len(positions)} times once the table was "
          f"full of the flood; test {time.perf_counter() - t0:.0f} s")
    assert [code for _, code in joins] == [200] * (3 * TABLE)
    assert before_x >= TABLE, "the running job ended before the flood filled the table: the test proves less"
    assert done_x["success"], done_x
    assert done_y["success"], done_y
    assert positions and all(m.get("rank") == 0 for m in positions)
    assert "Traceback" not in log and "KeyError" not in log


# -- 8. human ratings beside the views -----------------------------------------------------------------------

def test_human_ratings_switch_runs_beside_the_views(server):
    """A visitor uploads scores of 8 metrics for a rated set (GenAI-Bench's teaser: 220 images, two rating
    sets), then switches its rating set back and forth: another visitor's SEG changes meanwhile never
    wait behind it in the queue. (About 20 s.)"""
    from ts2viz.ui.callbacks.humaneval import sets as gc_sets

    url = server["url"]
    name = "genaibench-teaser"
    g = gc_sets.rated(name)
    sets = gc_sets.rating_sets(name)
    import numpy as np

    rng = np.random.default_rng(0)
    body = "image_id," + ",".join(f"mine{k}" for k in range(8)) + "\n" + "".join(
        f"{i}," + ",".join(f"{v:.4f}" for v in rng.normal(size=8)) + "\n" for i in g.image_ids)

    async def go():
        async with Bystander(url) as by, client(url, "127.0.0.61") as (c, app):
            s = Session(c, url, app)
            s.keep_alive()
            opened = await s.change("gold-set", name)
            up = await s.upload("mine.csv", body.encode())
            added = await s.call("gold_upload", [name, up])
            switches = []
            for rs in (sets[1], sets[0], sets[1]):
                switches.append(await s.call("gold_views", [name, rs, "point-wise", None]))
            await s.close()
            return opened, added, switches, by

    opened, added, switches, by = run(go())
    print(f"\nupload {added.seconds:.1f} s; switches {', '.join(f'{r.seconds:.2f} s' for r in switches)}; {by.summary()}")
    assert all(r.success for r in opened), [r.error for r in opened]
    assert added.success, added.error
    assert all(r.success for r in switches), [r.error for r in switches]
    by.check()


# -- 9. quiet logs, the app's own texts -----------------------------------------------------------------------

def test_malformed_calls_get_one_line_and_cost_one_log_line(server):
    """Unknown sessions on the event stream, a 200 KB value that is no dropdown choice, a gold-score file
    whose header is over 128 KB, results asked for an event that does not exist: each is answered in one
    line of the app's own words, costs at most one short log line, and never a traceback. (About 10 s.)"""
    url = server["url"]
    size0 = server["log"].stat().st_size

    async def go():
        async with client(url, "127.0.0.71") as (c, app):
            unknown = [await c.get(f"{url}/gradio_api/queue/data", params={"session_hash": f"nosuch{k}"})
                       for k in range(50)]
            s = Session(c, url, app)
            big = await s.call("show_seg", ["x" * 200_000, 0, None, None, "png"])     # the mode: a radio
            up = await s.upload("head.csv", ("image_id," + "m" * 140_000 + "\n").encode())
            head = await s.call("gold_upload", ["tifa160", up])
            res = await c.get(f"{url}/gradio_api/call/show_seg/0123456789abcdef")
            return unknown, big, head, res

    unknown, big, head, res = run(go())
    time.sleep(0.5)
    text = server["log"].read_bytes()[size0:].decode("utf-8", "replace")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    print(f"\n{len(lines)} log lines, {len(text):,} bytes for 53 malformed calls")
    assert all(r.status_code == 404 and "no such session" in r.text and "\n" not in r.text.strip() for r in unknown)
    assert not big.success and big.error == "a value of this call is not one the page offers; reload the page", big.error
    assert not head.success and _one_line(head.error) and "cannot be read as CSV" in head.error, head.error
    assert res.status_code == 404
    assert "Traceback" not in text and "xxxxxxxxxx" * 20 not in text and "mmmmmmmmmm" * 20 not in text
    assert len(lines) <= 55 and all(len(ln) < 400 for ln in lines), max(len(ln) for ln in lines)
    assert re.search(r"refused queue/data", text)
