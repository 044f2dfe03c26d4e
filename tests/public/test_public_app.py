"""The app in public mode, attacked and used over raw HTTP (httpx; no gradio_client).

One server (``app.py --public``) on a small generated dataset with the operator's scores and one
offered metric (a tiny local CLIP). Checked: code-execution and file-read routes are refused and leave
no trace; two sessions do not see each other's uploads, live metrics or scores; a session's data and
files go when it ends; the per-session caps hold; many clients at once get no failed call.
"""
from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import httpx
import pytest

from app_server import ROOT, running_app
from gradio_http import AppConfig, Session

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("public")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    spec = f"clipscore:{tiny('clip')}"
    with running_app(["--public", "--data", str(d / "ds"), "--scores", str(scores), "--lower-is-better", "ErrCount"],
                     d, env={"GRADIO_TEMP_DIR": str(d / "gradio"), "TS2VIZ_METRICS": spec},
                     drop_env=["SPACE_ID", "TS2VIZ_METRICS_FILE"], timeout=120) as (url, log_path):
        yield {"url": url, "spec": spec, "dir": d, "scores": scores, "log": log_path}


def run(coro):
    return asyncio.run(coro)


@contextlib.asynccontextmanager
async def _sessions(url: str, n: int):
    """``n`` browser tabs (sessions) on one HTTP client."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as client:
        app = await AppConfig.fetch(client, url)
        yield [Session(client, url, app) for _ in range(n)]


def _scores_csv(dataset_dir: Path, columns: dict[str, float]) -> bytes:
    import csv

    rows = list(csv.DictReader(open(dataset_dir / "metadata.csv", newline="")))
    head = "file_name," + ",".join(columns)
    lines = [head] + [f"{r['file_name']}," + ",".join(f"{v + i * 0.01:.3f}" for v in columns.values())
                      for i, r in enumerate(rows)]
    return ("\n".join(lines) + "\n").encode()


def _board_metrics(s: Session, result) -> set[str]:
    table = s.output(result, "leaderboard")
    col = table["headers"].index("metric")
    return {row[col] for row in table["data"]}


async def _board(s: Session):
    return (await s.call("redraw"))


# -- code execution and file reads ---------------------------------------------------------------

def test_code_and_file_specs_are_refused(server, tmp_path):
    marker = tmp_path / "marker.txt"
    evil = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n" \
           "def f(images, prompts):\n    return [0.0] * len(images)\n"
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").is_file() else None
    first_row = server["scores"].read_text().splitlines()[2]

    async def go():
        async with _sessions(server["url"], 1) as (s,):
            up = await s.upload("evil.py", evil.encode())
            specs = [f"callable:{up['path']}:f", "callable:os:system", "callable:ts2viz.errors:InputError",
                     f"csv:{server['scores']}", "csv:/etc/hostname", "clipscore:/root", "clipscore:/no/such/folder",
                     f"clipscore:{server['dir']}", "tifa:/etc"]
            out = {}
            for spec in specs:
                for data in ([[spec], "seg", 0, "auto"], [spec, "seg", 0, "auto"]):
                    out[(spec, "score", str(type(data[0])))] = await s.call("score", data)
                out[(spec, "upload")] = await s.call("upload", [[up], "a prompt", spec, 0, "auto", "png"])
            return out

    out = run(go())
    assert not marker.exists(), "the uploaded .py was imported"
    for key, r in out.items():
        assert not r.success, key
        assert "\n" not in r.error.strip(), (key, r.error)
        assert "Traceback" not in r.error
        if hostname:
            assert hostname not in r.error.replace("/etc/hostname", ""), key
        assert first_row not in r.error, key
    # a path that exists and one that does not get the same answer (no probing of the file system)
    norm = {k: out[k].error.replace(k[0], "SPEC") for k in out}
    assert norm[("clipscore:/root", "upload")] == norm[("clipscore:/no/such/folder", "upload")]
    assert norm[("clipscore:/root", "score", str(list))] == norm[("clipscore:/no/such/folder", "score", str(list))]


def test_server_files_cannot_be_loaded_as_scores(server):
    secret_line = server["scores"].read_text().splitlines()[2]

    async def go():
        async with _sessions(server["url"], 1) as (s,):
            out = []
            for path in ("/etc/passwd", str(server["scores"]), str(server["dir"] / "app.log")):
                fd = {"path": path, "orig_name": Path(path).name, "meta": {"_type": "gradio.FileData"}}
                out.append(await s.call("added_scores", [fd, ""]))
            py = await s.upload("evil.py", b"import os\n")
            out.append(await s.call("added_scores", [py, ""]))
            bad = await s.upload("mine.csv", b"file_name,Mine\nimages/000-00.jpg,topsecretvalue\n")
            out.append(await s.call("added_scores", [bad, ""]))
            return out

    out = run(go())
    for r in out:
        assert not r.success
        assert "root:" not in r.error and secret_line not in r.error and "topsecretvalue" not in r.error
        assert "\n" not in r.error.strip()
    assert "row 2" in out[-1].error          # where the problem is, without the content


def test_server_files_are_not_served(server):
    for path in ("/etc/passwd", str(server["scores"]), str(server["dir"] / "app.log"), str(ROOT / "app.py")):
        r = httpx.get(f"{server['url']}/gradio_api/file={path}")
        assert r.status_code in (403, 404), (path, r.status_code)
        assert "root:" not in r.text and "file_name" not in r.text


# -- isolation between sessions -------------------------------------------------------------------

def test_sessions_do_not_see_each_other(server):
    ds = server["dir"] / "ds"
    spec = "clipscore:clip"       # the offered clipscore:/tmp/…/clip as visitors see and pick it

    async def go():
        async with _sessions(server["url"], 2) as (a, b):
            await a.load()
            await b.load()
            up = await a.upload("mine.csv", _scores_csv(ds, {"MyScore": 0.5}))
            # as the page does: the action, then what it chains (new metric lists, redraws)
            added = await a.call("added_scores", [up, ""])
            await a.fire(a.app.followers(added.fn, added.success))
            a.values[a.app.cid("live-spec")] = [spec]
            live = await a.call("score", [[spec], "seg", 0, "auto"])
            await a.fire(a.app.followers(live.fn, live.success))
            board_a, board_b = await _board(a), await _board(b)
            # B asks for A's metrics by name
            b_seg = await b.call("show_seg", ["paper", 0, "MyScore", None, "png"])
            b_live = await b.call("show_seg", ["paper", 0, spec, None, "png"])
            a_node = await a.call("node_chosen", ["paper", 0, spec, "MyScore", "1a", None])
            b_node = await b.call("node_chosen", ["paper", 0, "GoodScore", None, "1a", None])
            csv_a = await a.call("board_csv", ["paper", ["All"], "ord_avg", "best first", False])
            csv_b = await b.call("board_csv", ["paper", ["All"], "ord_avg", "best first", False])
            return added, live, board_a, board_b, b_seg, b_live, a_node, b_node, csv_a, csv_b, a, b

    added, live, board_a, board_b, b_seg, b_live, a_node, b_node, csv_a, csv_b, a, b = run(go())
    assert added.success, added.error
    assert live.success, live.error
    assert {"MyScore", spec} <= _board_metrics(a, board_a)
    assert not {"MyScore", spec} & _board_metrics(b, board_b)
    assert "GoodScore" in _board_metrics(b, board_b)        # the operator's scores are everyone's
    assert not b_seg.success and not b_live.success
    caps_a = " ".join((x.get("caption") or "") for x in a.output(a_node, "node-gallery"))
    caps_b = " ".join((x.get("caption") or "") for x in b.output(b_node, "node-gallery"))
    assert "MyScore" in caps_a and spec in caps_a
    assert "MyScore" not in caps_b and spec not in caps_b
    def fetch(fd):
        u = fd["url"]
        return httpx.get(u if u.startswith("http") else server["url"] + u).text

    text_a, text_b = fetch(csv_a.data[0]), fetch(csv_b.data[0])
    assert "MyScore" in text_a and "MyScore" not in text_b and "GoodScore" in text_b
    assert Path(csv_a.data[0]["path"]).parent.parent != Path(csv_b.data[0]["path"]).parent.parent


def test_session_end_drops_its_data_and_files(server):
    ds = server["dir"] / "ds"

    async def go():
        async with _sessions(server["url"], 1) as (a,):
            a.keep_alive()
            up = await a.upload("gone.csv", _scores_csv(ds, {"GoneScore": 0.3}))
            assert (await a.call("added_scores", [up, ""])).success
            dl = await a.call("board_csv", ["paper", ["All"], "ord_avg", "best first", False])
            before = _board_metrics(a, await _board(a))
            await a.close()                       # the tab is closed: Gradio runs the unload event
            for _ in range(50):
                if not Path(up["path"]).exists() and not Path(dl.data[0]["path"]).exists():
                    break
                await asyncio.sleep(0.2)
            after = _board_metrics(a, await _board(a))     # the same session id, later: nothing left
            return up, dl, before, after

    up, dl, before, after = run(go())
    assert "GoneScore" in before and "GoneScore" not in after
    assert not Path(up["path"]).exists(), "the uploaded file outlived its session"
    assert not Path(dl.data[0]["path"]).exists(), "the session's download outlived it"


# -- caps -------------------------------------------------------------------------------------------

def test_per_session_caps(server):
    ds = server["dir"] / "ds"

    async def go():
        async with _sessions(server["url"], 3) as (s, t, u):
            files = []
            for k in range(6):
                up = await s.upload(f"s{k}.csv", _scores_csv(ds, {f"Cap{k}": 0.1 * k}))
                files.append(await s.call("added_scores", [up, ""]))
            big = await t.upload("big.csv", b"file_name,Big\n" + b"x" * (6 * 1024 * 1024))
            too_big = await t.call("added_scores", [big, ""])
            wide = await u.upload("wide.csv", _scores_csv(ds, {f"W{k}": 0.1 * k for k in range(9)}))
            too_wide = await u.call("added_scores", [wide, ""])
            return files, too_big, too_wide

    files, too_big, too_wide = run(go())
    assert all(r.success for r in files[:5]), [r.error for r in files[:5]]
    assert not files[5].success and "at most 5 score files" in files[5].error
    assert not too_big.success and "limit is 5 MB" in too_big.error
    assert not too_wide.success and "at most 8 metrics" in too_wide.error


# -- many clients ---------------------------------------------------------------------------------

def test_many_clients_no_failed_call(server):
    import random

    async def one(s: Session, seed: int):
        rnd = random.Random(seed)
        s.keep_alive()
        out = list(await s.load())
        for _ in range(4):
            kind = rnd.choice(["seg", "metric", "node", "mode", "sort"])
            if kind == "seg":
                out += await s.change("seg-pick", rnd.choice(s.options("seg-pick")))
            elif kind == "metric":
                out += await s.change("metric-a", rnd.choice(s.options("metric-a")))
            elif kind == "node":
                out += await s.change("node-pick", rnd.choice(s.options("node-pick") or ["0"]), events=("input",))
            elif kind == "mode":
                out += await s.change("mode", "spec" if s.value("mode") == "paper" else "paper")
            else:
                out += await s.change("sort-by", rnd.choice(s.options("sort-by")))
        await s.close()
        return out

    async def go():
        async with _sessions(server["url"], 20) as sessions:
            return await asyncio.gather(*[one(s, k) for k, s in enumerate(sessions)])

    per_client = run(go())
    calls = [r for rs in per_client for r in rs]
    failed = [(r.api_name, r.error) for r in calls if not r.success]
    assert not failed, failed[:5]
    assert all(any(r.api_name.startswith("first") for r in rs) for rs in per_client)
    assert len(calls) >= 20 * 5
