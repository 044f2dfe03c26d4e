"""The Human ratings tab in public mode over raw HTTP (httpx; no gradio_client): a visitor's score file
for a rated set joins that set's leaderboard, scatter, image details and cross-gold view for that
session only, never another's, and goes when the session ends; a visitor cannot name a folder or a
server file. The server (``app.py --public --gold FOLDER``) serves an operator's rated set made here.
"""
from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import httpx
import pytest

from app_server import running_app
from gradio_http import AppConfig, Session

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from gold_helpers import make_folder
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("public-gold")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    gold = make_folder(d / "myset")
    with running_app(["--public", "--data", str(d / "ds"), "--scores", str(scores), "--gold", str(gold)], d,
                     env={"GRADIO_TEMP_DIR": str(d / "gradio")},
                     drop_env=["SPACE_ID", "TS2VIZ_METRICS_FILE", "TS2VIZ_METRICS"], timeout=120) as (url, _):
        yield {"url": url, "gold": gold}


@contextlib.asynccontextmanager
async def _sessions(url: str, n: int):
    async with httpx.AsyncClient(timeout=httpx.Timeout(300.0)) as client:
        app = await AppConfig.fetch(client, url)
        yield [Session(client, url, app) for _ in range(n)]


def _column(s: Session, result, elem_id: str, col: str) -> list[str]:
    t = s.output(result, elem_id)
    j = t["headers"].index(col)
    return [row[j] for row in t["data"]]


VIEWS = ["myset", "default", "point-wise", None]


def test_a_visitors_gold_scores_stay_in_their_session(server):
    import pandas as pd

    ids = pd.read_csv(server["gold"] / "images.csv")["image_id"].tolist()
    body = ("image_id,MineGold\n" + "".join(f"{i},{k * 0.1:.2f}\n" for k, i in enumerate(ids))).encode()

    async def go():
        async with _sessions(server["url"], 2) as (a, b):
            a.keep_alive()
            await a.load()
            await b.load()
            assert "myset" in a.options("gold-set")            # the operator's set is offered
            for s in (a, b):                                      # both open it, as in the page
                opened = await s.change("gold-set", "myset")
                assert all(r.success for r in opened), [r.error for r in opened]
            up = await a.upload("mine.csv", body)
            added = await a.call("gold_upload", ["myset", up])
            await a.fire(a.app.followers(added.fn, added.success))
            va, vb = await a.call("gold_views", VIEWS), await b.call("gold_views", VIEWS)
            # B asks for A's metric by name: the scatter falls back to one of B's metrics
            vb_mine = await b.call("gold_views", ["myset", "default", "point-wise", "MineGold"])
            ia, ib = (await a.call("gold_image", ["myset", ids[3], None]),
                      await b.call("gold_image", ["myset", ids[3], None]))
            # what a visitor cannot do: name a folder as the rated set, or a server file as the upload
            folder = await b.call("gold_upload", [str(server["gold"]), up])
            server_file = await b.call("gold_upload", ["myset", {"path": str(server["gold"] / "scores.csv"),
                                                                 "orig_name": "scores.csv",
                                                                 "meta": {"_type": "gradio.FileData"}}])
            bad = await b.upload("bad.csv", b"image_id,Bad\ntopsecretid,1\n")
            bad_row = await b.call("gold_upload", ["myset", bad])
            await a.close()                                       # the tab is closed
            for _ in range(50):
                if not Path(up["path"]).exists():
                    break
                await asyncio.sleep(0.2)
            # the same session id, later (its page state went with it: the set is opened again)
            a.values[a.app.cid("gold-metric")] = None
            after = [r for r in await a.change("gold-set", "myset") if r.api_name == "gold_views"][-1]
            return a, b, added, va, vb, vb_mine, ia, ib, folder, server_file, bad_row, after, up

    a, b, added, va, vb, vb_mine, ia, ib, folder, server_file, bad_row, after, up = asyncio.run(go())
    assert added.success, added.error
    assert "Loaded 1 metric for myset" in a.output(added, "gold-upload-msg")
    assert va.success and vb.success, (va.error, vb.error)
    assert "MineGold (yours)" in _column(a, va, "gold-board", "metric")
    assert not any("MineGold" in m for m in _column(b, vb, "gold-board", "metric"))
    assert "good" in _column(b, vb, "gold-board", "metric")       # the operator's scores are everyone's
    assert "MineGold (yours)" in _column(a, va, "gold-cross", "metric family")
    assert not any("MineGold" in m for m in _column(b, vb, "gold-cross", "metric family"))
    # refused (not one of B's choices) or shown with one of B's own metrics: never A's
    assert not vb_mine.success or b.output(vb_mine, "gold-metric") != "MineGold"
    assert "MineGold" not in str(vb_mine.data) and "MineGold" not in b.options("gold-metric")
    assert ia.success and ib.success, (ia.error, ib.error)
    assert "MineGold (yours)" in _column(a, ia, "gold-detail-scores", "metric")
    assert not any("MineGold" in m for m in _column(b, ib, "gold-detail-scores", "metric"))
    assert "prompt number 1" in b.output(ib, "gold-detail")
    # refused by the radio's choices (Gradio), and by check_gold behind it (test_ui_gold)
    # the app's own one line (not among the page's choices), never Gradio's text quoting the value (issue 32)
    assert not folder.success and ("not one the page offers" in folder.error or "unknown rated set" in folder.error)
    assert str(server["gold"]) not in folder.error
    secret = (server["gold"] / "scores.csv").read_text().splitlines()[1]
    assert not server_file.success and secret not in server_file.error    # refused (by Gradio or visitor_file)
    assert not bad_row.success and "row 2" in bad_row.error and "topsecretid" not in bad_row.error
    assert after.success and not any("MineGold" in m for m in _column(a, after, "gold-board", "metric"))
    assert not Path(up["path"]).exists(), "the uploaded file outlived its session"
