"""An operator's model folders never reach a public app's visitors; select events without their event
data are refused with one log line (issue 22, item 7).

One server (``app.py --public``) offering two metrics from model folders (``clipscore:/…/clip``, a tiny
CLIP built by tests/support/tiny_models.py, and ``clipscore:/…/broken``, a folder that does not load). Over raw
HTTP, as a visitor's script talks to it: ``/config``, the dropdowns, every message a live-scoring call
streams (progress included), the leaderboard, the upload scores and figure, and every error name the
metrics by their display names (``clipscore:clip``, ``clipscore:broken``) and never contain a folder path.
"""
from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path

import httpx
import pytest

from app_server import running_app
from gradio_http import PREFIX, AppConfig, Session

pytestmark = pytest.mark.slow

CLIP, BROKEN = "clipscore:clip", "clipscore:broken"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("names")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    clip = tiny("clip")
    broken = d / "operator-secret-models" / "broken"
    broken.mkdir(parents=True)
    (broken / "config.json").write_text('{"model_type": "clip", "not": "a model"}')
    specs = f"clipscore:{clip}\nclipscore:{broken}"
    with running_app(["--public", "--data", str(d / "ds"), "--scores", str(scores)], d,
                     env={"GRADIO_TEMP_DIR": str(d / "gradio"), "TS2VIZ_METRICS": specs},
                     drop_env=["SPACE_ID", "TS2VIZ_METRICS_FILE"], timeout=120) as (url, log_path):
        # what must never reach a visitor: the folders and the folders holding them
        secrets_ = {str(clip), str(clip.parent), str(broken), str(broken.parent)}
        yield {"url": url, "dir": d, "log": log_path, "secrets": secrets_, "clip": clip, "broken": broken}


def _leaks(server, text: str) -> list[str]:
    return [s for s in server["secrets"] if s in text]


async def _raw_call(client: httpx.AsyncClient, url: str, s: Session, fn: str, data: list) -> tuple[dict, str]:
    """One queued event as the browser makes it; returns its completion message and every line the
    server streamed for it (progress messages included)."""
    body = {"data": data, "fn_index": s.app.fn(fn), "session_hash": s.session_hash, "event_data": None,
            "trigger_id": None}
    r = await client.post(f"{url}{PREFIX}/queue/join", json=body)
    r.raise_for_status()
    eid, lines = r.json()["event_id"], []
    async with client.stream("GET", f"{url}{PREFIX}/queue/data", params={"session_hash": s.session_hash}) as resp:
        async for line in resp.aiter_lines():
            lines.append(line)
            if line.startswith("data:"):
                msg = json.loads(line[5:])
                if msg.get("msg") == "process_completed" and msg.get("event_id") == eid:
                    return msg, "\n".join(lines)
    raise AssertionError("the event did not complete")


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


def test_config_and_dropdowns_show_display_names(server):
    r = httpx.get(server["url"] + "/config")
    assert r.status_code == 200
    assert not _leaks(server, r.text), _leaks(server, r.text)
    app = AppConfig(r.json())
    live = app.components[app.cid("live-spec")]["props"]
    up = app.components[app.cid("upload-spec")]["props"]
    # choices are (label, value) pairs: neither is the spec
    assert [tuple(c) for c in live["choices"]] == [(CLIP, CLIP), (BROKEN, BROKEN)]
    assert [tuple(c) for c in up["choices"]] == [(CLIP, CLIP), (BROKEN, BROKEN)] and up["value"] == CLIP


def test_live_scoring_replies_and_errors_never_show_the_folder(server):
    url = server["url"]

    async def go():
        async with httpx.AsyncClient(timeout=httpx.Timeout(300.0)) as client:
            app = await AppConfig.fetch(client, url)
            s = Session(client, url, app)
            await s.load()
            texts = {}
            done, texts["score"] = await _raw_call(client, url, s, "score", [[CLIP], "seg", 0, "auto"])
            # what the page chains after a live score: new metric lists, redraws of every view
            s.values[app.cid("live-spec")] = [CLIP]
            chained = await s.fire(app.followers(app.fn("score"), bool(done.get("success"))))
            texts["chained"] = json.dumps([r.data for r in chained] + [r.error for r in chained])
            board = await s.call("redraw")
            texts["board"] = json.dumps(board.data)
            for name, data in {"broken": [[BROKEN], "seg", 0, "auto"],
                               "by path": [[f"clipscore:{server['clip']}"], "seg", 0, "auto"],
                               "path as text": [f"clipscore:{server['broken']}", "seg", 0, "auto"]}.items():
                _, texts[name] = await _raw_call(client, url, s, "score", data)
            img = await s.upload("mine.png", _png())
            bad = await s.upload("bad.png", b"not an image")
            up_ok, texts["upload"] = await _raw_call(client, url, s, "upload",
                                                     [[img], "a red apple", CLIP, 0, "auto", "png"])
            up_broken, texts["upload broken"] = await _raw_call(client, url, s, "upload",
                                                                [[img], "a red apple", BROKEN, 0, "auto", "png"])
            _, texts["upload bad"] = await _raw_call(client, url, s, "upload", [[bad], "a prompt", CLIP, 0, "auto",
                                                                                "png"])
            return done, board, up_ok, up_broken, texts, s

    done, board, up_ok, up_broken, texts, s = asyncio.run(go())
    # a spec the visitor typed may come back in Gradio's refusal ("Value: ... is not in the list of
    # choices"): their own text, not the server's; nothing else of the folders may
    typed = [f"clipscore:{server['clip']}", f"clipscore:{server['broken']}"]
    for name, text in texts.items():
        for t in typed:
            text = text.replace(t, "TYPED")
        assert not _leaks(server, text), (name, _leaks(server, text), text[-3000:])
    assert done["success"], done
    assert f"with {CLIP} (" in done["output"]["data"][0]
    assert "loading the model" in texts["score"] and f"{CLIP}: loading the model" in texts["score"]
    rows = s.output(board, "leaderboard")
    metrics = {row[rows["headers"].index("metric")] for row in rows["data"]}
    assert CLIP in metrics and not any("/" in m and m.startswith("clipscore") for m in metrics), metrics
    assert f"{BROKEN}: this metric could not be loaded on the server" in texts["broken"]
    for name in ("by path", "path as text"):      # refused: not among the dropdown's choices, or the offered list
        assert '"success":false' in texts[name].replace(" ", "")
        # the app's own one line, never Gradio's text (which quotes the value and the choices: issue 32)
        assert "not one the page offers" in texts[name] or "not offered here" in texts[name], texts[name][-500:]
        assert "not in the list of choices" not in texts[name]
    assert up_ok["success"], up_ok
    assert f"with {CLIP}." in up_ok["output"]["data"][0]
    assert not up_broken["success"] and f"{BROKEN}: this metric could not be loaded" in texts["upload broken"]
    assert "not a readable image" in texts["upload bad"]


def test_select_events_without_event_data_log_one_line(server):
    url = server["url"]
    log = server["log"]

    async def go():
        async with httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as client:
            app = await AppConfig.fetch(client, url)
            s = Session(client, url, app)
            await s.load()
            before = log.read_text()
            out = []
            for d in app.deps.values():
                if d.get("backend_fn") and any(t[1] == "select" for t in d["targets"]):
                    out.append(await s.call(d["id"], [s.values.get(c) for c in d["inputs"]], None))
            return before, out

    before, out = asyncio.run(go())
    # a tab's select event reads no selection and answers; those that read one are refused
    out = [r for r in out if not r.success]
    assert len(out) >= 5          # SEG tables, the graph's nodes, the walks table, the Questions tab's gallery and table
    for r in out:
        assert "selection made on the page" in r.error and "\n" not in r.error.strip(), r
    deadline = time.time() + 10
    while True:
        new = log.read_text()[len(before):]
        lines = [ln for ln in new.splitlines() if "without its event data" in ln]
        if len(lines) >= len(out) or time.time() > deadline:
            break
        time.sleep(0.2)
    assert len(lines) == len(out), new[-3000:]
    assert "Traceback" not in new and "TypeError" not in new, new[-3000:]


def test_a_relative_upload_folder_keeps_the_absolute_path_out_of_upload_answers(tmp_path):
    """Gradio's upload route answers the uploaded file's path as it joins it to its upload folder
    (``GRADIO_TEMP_DIR`` as given, else the absolute ``<tmp>/gradio``): a relative folder, relative to the
    app's working directory, gives relative answers, and the uploads still work end to end."""
    import secrets
    import shutil

    from app_server import ROOT
    from ui_helpers import write_dataset, write_scores

    write_dataset(tmp_path / "ds", big_image=False)
    scores = write_scores(tmp_path, tmp_path / "ds")
    rel = f"tests/artifacts/rel-uploads-{secrets.token_hex(4)}"      # running_app's working directory is ROOT
    try:
        with running_app(["--public", "--data", str(tmp_path / "ds"), "--scores", str(scores)], tmp_path,
                         env={"GRADIO_TEMP_DIR": rel}, drop_env=["SPACE_ID", "TS2VIZ_METRICS", "TS2VIZ_METRICS_FILE"],
                         timeout=120) as (url, _):
            async def go():
                async with httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as client:
                    app = await AppConfig.fetch(client, url)
                    s = Session(client, url, app)
                    await s.load()
                    import csv

                    rows = list(csv.DictReader(open(tmp_path / "ds" / "metadata.csv", newline="")))
                    body = "file_name,RelScore\n" + "".join(f"{r['file_name']},{0.1 * (i % 7):.2f}\n"
                                                            for i, r in enumerate(rows))
                    raw = await client.post(f"{url}{PREFIX}/upload", files={"files": ("mine.csv", body.encode())})
                    fd = {"path": raw.json()[0], "orig_name": "mine.csv", "meta": {"_type": "gradio.FileData"}}
                    added = await s.call("added_scores", [fd, ""])
                    served = await client.get(f"{url}{PREFIX}/file={fd['path']}")
                    return raw, added, served

            raw, added, served = asyncio.run(go())
    finally:
        shutil.rmtree(ROOT / rel, ignore_errors=True)
    assert raw.status_code == 200
    path = raw.json()[0]
    assert path.startswith(rel + "/") and str(ROOT) not in raw.text and not path.startswith("/"), raw.text
    assert added.success, added.error
    assert served.status_code == 200 and "RelScore" in served.text
