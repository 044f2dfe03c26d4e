"""One hostile visitor against a running public app, over raw HTTP (issue 22).

Each test attacks ``app.py --public`` as any visitor's script can (httpx, no gradio_client) and
checks what the other visitors and the server get: score-file bombs are refused from their metadata
in seconds while another visitor's views keep answering; strangers' traffic does not push out an
active visitor's data; uploads do not outlive their use and one client cannot fill the disk; two
visitors' identical uploads do not interfere; visitors' names are shown as text and cannot run as
spreadsheet formulas; malformed calls leak nothing. The attack files are generated here, small on
disk (a 10-million-row Parquet file is 85 KB).

Several clients are told apart by their address: the tests bind their connections to other loopback
addresses (127.0.0.2, ...), as visitors on other machines would be.
"""
from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from app_server import ROOT, running_app
from gradio_http import AppConfig, Session

pytestmark = pytest.mark.slow

#: how long an upload stays on the test server's disk (short, so that the test sees it go)
TTL_S = 30
CLIENT_MB = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("attacks")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    with running_app(["--public", "--data", str(d / "ds"), "--scores", str(scores), "--lower-is-better", "ErrCount"],
                     d, env={"GRADIO_TEMP_DIR": str(d / "gradio"), "TS2VIZ_UPLOAD_TTL_S": str(TTL_S),
                             "TS2VIZ_CLIENT_UPLOAD_MB": str(CLIENT_MB)},
                     drop_env=["SPACE_ID", "TS2VIZ_METRICS_FILE", "TS2VIZ_METRICS"], timeout=120) as (url, log_path):
        yield {"url": url, "dir": d, "upload_root": d / "gradio", "log": log_path, "pid": _server_pid(url)}


def _server_pid(url: str) -> int:
    import psutil

    port = url.rsplit(":", 1)[1]
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info.get("cmdline") or []
        if any(str(c).endswith("app.py") for c in cmd) and port in cmd:
            return p.pid
    raise RuntimeError("the app's process was not found")


def run(coro):
    return asyncio.run(coro)


@contextlib.asynccontextmanager
async def _client(url: str, address: str = "127.0.0.1"):
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), transport=transport,
                                 limits=httpx.Limits(max_connections=64)) as client:
        yield client, await AppConfig.fetch(client, url)


def _names(dataset_dir: Path) -> list[str]:
    return [r["file_name"] for r in csv.DictReader(open(dataset_dir / "metadata.csv", newline=""))]


def _scores_csv(dataset_dir: Path, columns: list[str]) -> bytes:
    out = io.StringIO()
    wr = csv.writer(out, lineterminator="\n")
    wr.writerow(["file_name", *columns])
    for i, f in enumerate(_names(dataset_dir)):
        wr.writerow([f, *(f"{0.1 * (k + 1) + 0.01 * i:.3f}" for k in range(len(columns)))])
    return out.getvalue().encode()


# -- 1. score-file bombs ------------------------------------------------------------------------------

def _bombs(folder: Path, dataset_dir: Path) -> dict[str, bytes]:
    """Files under the 5 MB upload cap that hold far more than the row, metric or text caps allow."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = _names(dataset_dir)
    out = {}
    n = 10_000_000      # one file name, dictionary- and run-length-encoded: 10 M rows in ~85 KB
    t = pa.table({"file_name": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([names[0]])),
                  "Bomb": pa.array(np.zeros(n))})
    pq.write_table(t, folder / "rows.parquet", compression="zstd")
    cols = {"file_name": names[:1], **{f"c{i}": [0.0] for i in range(16_000)}}
    pq.write_table(pa.table(cols), folder / "wide.parquet")
    cols = {"file_name": names[:1], **{f"c{i}": [0.0] for i in range(200)}}
    pq.write_table(pa.table(cols), folder / "cols.parquet")
    t = pa.table({"file_name": pa.DictionaryArray.from_arrays(pa.array(np.zeros(50_000, dtype=np.int32)),
                                                              pa.array(["x" * 1_000_000])), "Long": np.zeros(50_000)})
    pq.write_table(t, folder / "longtext.parquet", compression="zstd")
    for f in ("rows.parquet", "wide.parquet", "cols.parquet", "longtext.parquet"):
        out[f] = (folder / f).read_bytes()
        assert len(out[f]) < 5 * 1024 * 1024
    out["oneline.csv"] = b"file_name,Line\n" + b"a" * (5 * 1024 * 1024 - 100) + b",1\n"
    out["manyrows.csv"] = b"file_name,Many\n" + b"".join(b"a,1\n" for _ in range(1_200_000))
    out["quote.csv"] = b'file_name,Quote\n"' + names[0].encode() + b',1\n' + names[1].encode() + b",2\n"
    out["header.csv"] = b"file_name," + b",".join(b"m%d" % i for i in range(100_000)) + b"\n"
    return out


def _rss_sampler(pid: int):
    import psutil

    proc = psutil.Process(pid)
    peak = [proc.memory_info().rss]
    stop = threading.Event()

    def loop():
        while not stop.wait(0.05):
            try:
                peak[0] = max(peak[0], proc.memory_info().rss)
            except psutil.Error:
                return

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    return proc.memory_info().rss, peak, stop


def test_score_file_bombs_refused_from_metadata_while_others_answer(server, tmp_path):
    ds = server["dir"] / "ds"
    bombs = _bombs(tmp_path, ds)
    cr_only = _scores_csv(ds, ["OldExcel"]).replace(b"\n", b"\r")     # valid: CR-only line ends

    async def bystander(s: Session, stop: asyncio.Event, times: list[float]):
        segs = s.options("seg-pick")
        k = 0
        while not stop.is_set():
            t0 = time.perf_counter()
            res = await s.change("seg-pick", segs[k % len(segs)])
            times.append(time.perf_counter() - t0)
            assert all(r.success for r in res), [r.error for r in res if not r.success]
            k += 1

    async def attack(client, app, name: str, content: bytes):
        s = Session(client, server["url"], app)
        up = await s.upload(name, content)
        t0 = time.perf_counter()
        r = await s.call("added_scores", [up, ""])
        return name, r, time.perf_counter() - t0

    async def go():
        async with _client(server["url"]) as (client, app), _client(server["url"], "127.0.0.2") as (bad, bad_app):
            other = Session(client, server["url"], app)
            await other.load()
            stop, times = asyncio.Event(), []
            watcher = asyncio.create_task(bystander(other, stop, times))
            await asyncio.sleep(0.5)
            results = []
            for name, content in bombs.items():       # one after another, as fast as answered
                results.append(await attack(bad, bad_app, name, content))
            results.append(await attack(bad, bad_app, "cr_only.csv", cr_only))
            stop.set()
            await watcher
            return results, times

    base, peak, stop = _rss_sampler(server["pid"])
    try:
        results, times = run(go())
    finally:
        stop.set()
    growth_mb = (peak[0] - base) / 2**20
    out = {name: (r, dt) for name, r, dt in results}
    print("\n" + ", ".join(f"{n} {dt:.2f} s" for n, (r, dt) in out.items())
          + f"; server RSS +{growth_mb:.0f} MB at most; bystander {len(times)} calls, max {max(times):.2f} s")
    for name in bombs:
        r, dt = out[name]
        assert not r.success, name
        assert "\n" not in r.error.strip() and "Traceback" not in r.error, (name, r.error)
        assert dt < 10, (name, dt)
    for name in ("rows.parquet", "wide.parquet", "cols.parquet", "longtext.parquet", "oneline.csv", "manyrows.csv",
                 "header.csv"):
        assert "limit" in out[name][0].error, (name, out[name][0].error)
    assert "10,000,000 rows" in out["rows.parquet"][0].error
    assert "xxxxxxxxxx" not in out["longtext.parquet"][0].error
    assert out["cr_only.csv"][0].success, out["cr_only.csv"][0].error
    assert growth_mb < 300, f"the server grew by {growth_mb:.0f} MB"
    assert len(times) >= 3 and max(times) < 5.0, f"another visitor waited {max(times):.1f} s"
    assert "_csv.Error" not in server["log"].read_text()


# -- 3. uploads do not outlive their use; one client cannot fill the disk ---------------------------

def test_unused_uploads_go_and_one_client_cannot_fill_the_disk(server):
    url = server["url"]

    async def go():
        async with _client(url, "127.0.0.3") as (client, app):
            s = Session(client, url, app)
            unused = await s.upload("never-submitted.csv", b"file_name,X\nimages/000-00.jpg,1\n")
            served_before = (await client.get(f"{url}/gradio_api/file={unused['path']}")).status_code
            many = await client.post(f"{url}/gradio_api/upload",
                                     files=[("files", (f"f{i}.txt", b"x")) for i in range(40)])
            sizes = []
            for i in range(4):          # 4 x 19 MB (each under Gradio's 20 MB) against a budget of 60 MB per client
                r = await client.post(f"{url}/gradio_api/upload", files={"files": (f"big{i}.bin", bytes([i]) * (19 << 20))})
                sizes.append(r.status_code)
        async with _client(url, "127.0.0.4") as (client, app):      # another client is not held back
            other = (await client.post(f"{url}/gradio_api/upload", files={"files": ("o.bin", b"o" * (1 << 20))})).status_code
        return unused, served_before, many, sizes, other

    unused, served_before, many, sizes, other = run(go())
    assert served_before == 200
    assert many.status_code == 413 and "\n" not in many.text.strip()
    assert sizes == [200, 200, 200, 429]
    assert other == 200
    # the chosen-but-never-submitted file, Gradio's leftovers of the refused request and the big files go
    t0 = time.time()
    while time.time() - t0 < 4 * TTL_S:
        left = [p for p in server["upload_root"].iterdir() if not p.name.startswith("ts2viz-")] \
            if server["upload_root"].is_dir() else []
        if not Path(unused["path"]).exists() and not left:
            break
        time.sleep(2)
    assert not Path(unused["path"]).exists(), "an unused upload outlived the upload TTL"
    assert not left, [p.name for p in left][:5]
    assert httpx.get(f"{url}/gradio_api/file={unused['path']}").status_code in (403, 404)


# -- 4. two visitors, one path ------------------------------------------------------------------------

def test_two_visitors_same_bytes_do_not_interfere(server):
    ds = server["dir"] / "ds"
    content = _scores_csv(ds, ["Shared"])

    async def go():
        async with _client(server["url"]) as (client, app):
            a, b = Session(client, server["url"], app), Session(client, server["url"], app)
            a.keep_alive()
            up_a = await a.upload("same.csv", content)
            up_b = await b.upload("same.csv", content)
            added_a = await a.call("added_scores", [up_a, ""])
            await a.close()                       # A's tab closes: its session's files go
            for _ in range(50):
                r = await a.call("redraw")
                if "Shared" not in {row[0] for row in a.output(r, "leaderboard")["data"]}:
                    break
                await asyncio.sleep(0.2)
            added_b = await b.call("added_scores", [up_b, ""])
            return up_a, up_b, added_a, added_b

    up_a, up_b, added_a, added_b = run(go())
    assert up_a["path"] == up_b["path"]          # Gradio names an upload by its content
    assert added_a.success, added_a.error
    assert added_b.success, added_b.error         # B's upload survived the end of A's session


# -- 5. markup from visitors --------------------------------------------------------------------------

PAYLOADS = ["<img src=http://127.0.0.1:9/i.png>", "![m](http://127.0.0.1:9/m.png)", "<b>bold</b>"]
#: the payloads as markup (the page's own HTML has <img> and <b> tags: only the visitor's must not be there)
RAW = ("<img src=http://127.0.0.1:9", "<b>bold", "](http://127.0.0.1:9", "![m]")


def test_visitor_names_are_shown_as_text_everywhere(server):
    ds = server["dir"] / "ds"

    async def go():
        async with _client(server["url"]) as (client, app):
            s = Session(client, server["url"], app)
            out = list(await s.load())
            up = await s.upload("names.csv", _scores_csv(ds, PAYLOADS))
            added = await s.call("added_scores", [up, ""])
            out.append(added)
            out += await s.fire(app.followers(added.fn, added.success))
            for elem, v in (("metric-a", PAYLOADS[0]), ("metric-b", PAYLOADS[1]), ("corr-x", PAYLOADS[2]),
                            ("corr-y", PAYLOADS[0])):
                s.values[app.cid(elem)] = v
            out += await s.change("mode", "spec")
            out += await s.change("node-pick", "1a", events=("input",))
            return s, app, out

    s, app, out = run(go())
    assert out and all(r.success for r in out), [(r.api_name, r.error) for r in out if not r.success]
    shown_any = False
    for r in out:
        for cid, v in zip(app.deps[r.fn]["outputs"], r.data or []):
            if app.components[cid]["type"] not in ("markdown", "html"):
                continue
            v = v.get("value") if isinstance(v, dict) and v.get("__type__") == "update" else v
            if not isinstance(v, str):
                continue
            for raw in RAW:
                assert raw not in v, (r.api_name, app.components[cid]["props"].get("elem_id"), v[:300])
            shown_any |= "bold" in v
    assert shown_any, "the names were not shown at all"


# -- 6. formula injection in downloads -----------------------------------------------------------------

def test_downloads_are_spreadsheet_safe(server):
    ds = server["dir"] / "ds"
    formulas = ['=HYPERLINK("http://127.0.0.1:9/","x")', "@SUM(1)", "+1+2"]

    async def go():
        async with _client(server["url"]) as (client, app):
            s = Session(client, server["url"], app)
            up = await s.upload("formulas.csv", _scores_csv(ds, formulas))
            added = await s.call("added_scores", [up, ""])
            dl = await s.call("board_csv", ["paper", ["All"], "ord_avg", "best first", False])
            u = dl.data[0]["url"]
            text = (await client.get(u if u.startswith("http") else server["url"] + u)).text
            return added, text

    added, text = run(go())
    assert added.success, added.error
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    for f in formulas:
        assert "'" + f in cells, f
    for c in cells:
        try:
            float(c)
            continue
        except ValueError:
            assert not c.startswith(("=", "+", "-", "@")), c


# -- 7. small leaks -------------------------------------------------------------------------------------

def test_malformed_calls_leak_nothing(server):
    url = server["url"]
    secrets_ = [str(ROOT), str(server["dir"])]

    async def go():
        async with _client(url) as (client, app):
            s = Session(client, url, app)
            await s.load()
            rel = {"path": "some/relative.csv", "orig_name": "relative.csv", "meta": {"_type": "gradio.FileData"}}
            out = [await s.call("added_scores", [rel, ""])]
            for d in app.deps.values():          # select events without their event data
                if d.get("backend_fn") and any(t[1] == "select" for t in d["targets"]):
                    out.append(await s.call(d["id"], [s.values.get(c) for c in d["inputs"]], None))
            body = {"data": ["paper", 0, None, None, "png"], "fn_index": app.fn("show_seg"), "session_hash": "",
                    "event_data": None, "trigger_id": None}
            empty = await client.post(f"{url}/gradio_api/queue/join", json=body)
            return out, empty

    out, empty = run(go())
    assert empty.status_code == 400 and "session_hash" in empty.text
    for r in out:
        text = r.error or ""
        for bad in (*secrets_, "Traceback", "NoneType", "subscriptable", "object has no attribute"):
            assert bad not in text, (r.api_name, text)


# -- 2. eviction by strangers (last: it fills the server's sessions) -----------------------------------

def test_strangers_cannot_push_out_an_active_visitor(server):
    ds = server["dir"] / "ds"
    url = server["url"]

    async def stranger(address: str, n: int):
        async with _client(url, address) as (client, app):
            res = []
            for _ in range(n):                    # each call a fresh session id, as a script's would be
                s = Session(client, url, app)
                res.append(await s.call("board_csv", ["paper", ["All"], "ord_avg", "best first", False]))
            return res

    async def go():
        async with _client(url) as (client, app):
            victim = Session(client, url, app)
            victim.keep_alive()
            up = await victim.upload("mine.csv", _scores_csv(ds, ["VictimScore"]))
            uploaded_at = time.time()
            added = await victim.call("added_scores", [up, ""])
            before = {row[0] for row in victim.output(await victim.call("redraw"), "leaderboard")["data"]}
            t0 = time.perf_counter()
            own = await stranger("127.0.0.5", 30)      # one client, many tabs: only its own are pushed out
            many = []
            for batch in range(0, 40, 8):             # 40 other clients x 10 fresh sessions = 400 calls
                many += await asyncio.gather(*[stranger(f"127.0.1.{k + 1}", 10) for k in range(batch, batch + 8)])
            seconds = time.perf_counter() - t0
            after = {row[0] for row in victim.output(await victim.call("redraw"), "leaderboard")["data"]}
            csv_v = await victim.call("board_csv", ["paper", ["All"], "ord_avg", "best first", False])
            # the upload folder's janitor removes any upload older than the TTL (the scores are in memory
            # by then); before that, only the end of the victim's session could have deleted it
            file_kept = Path(up["path"]).exists() or time.time() - uploaded_at > TTL_S
            await victim.close()
            return added, before, after, own, [r for rs in many for r in rs], csv_v, seconds, file_kept

    added, before, after, own, many, csv_v, seconds, file_kept = run(go())
    assert added.success, added.error
    assert "VictimScore" in before and "VictimScore" in after
    assert file_kept, "the victim's uploaded file was deleted before the upload TTL"
    assert csv_v.success, csv_v.error
    assert all(r.success for r in own), [r.error for r in own if not r.success][:3]
    assert len(many) == 400
    refused = [r for r in many if not r.success]
    # 300 places: the victim's, 16 of the one client's, then the strangers' until full; the rest refused
    assert refused and all("try again" in r.error for r in refused), {r.error for r in refused}
    print(f"400 stranger calls in {seconds:.0f} s, {len(refused)} refused")
