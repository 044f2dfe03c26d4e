"""The Authoring tab in Chromium (issue 23): a visitor builds a 3-level SEG from 6 uploaded PNGs, with
error descriptions, exports it as a dataset, the real CLI ranks a metric on the export
(``ts2viz leaderboard --dataset EXPORTED --scores FILE``), and the export reloads into the tab; at a
phone's width the tab starts a variant of the explorer's SEG and draws it.
"""
from __future__ import annotations

import csv
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from app_server import ART, ROOT, WAIT_MS, chromium_browser, docs_shot, open_tab, running_app, settle

pytestmark = pytest.mark.slow

#: node label -> (error descriptions, uploaded images)
PLAN = {"0": ("", ["cube-0.png", "cube-1.png"]),
        "1a": ("cube not red", ["cube-2.png", "cube-3.png"]),
        "2a": ("cube not red; no table", ["cube-4.png", "cube-5.png"])}


def write_pngs(folder: Path) -> list[Path]:
    from PIL import Image, ImageDraw

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(6):
        arr = np.zeros((96, 128, 3), np.uint8)
        arr[..., 0] = 200 - 30 * i
        arr[..., 2] = 40 + 30 * i
        im = Image.fromarray(arr)
        ImageDraw.Draw(im).text((8, 8), f"cube {i}", fill=(255, 255, 255))
        p = folder / f"cube-{i}.png"
        im.save(p)
        out.append(p)
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("authoring")
    write_dataset(d / "ds", big_image=False)
    # error descriptions of SEG 0's nodes (the explorer shows them; a variant of the SEG carries them)
    (d / "ds" / "nodes.csv").write_text('id,rank,errors\n0,1a,no apple\n0,2a,"no apple; no table"\n')
    scores = write_scores(d, d / "ds")
    with running_app(["--data", str(d / "ds"), "--scores", str(scores), "--host", "127.0.0.1"], d,
                     env={"GRADIO_TEMP_DIR": str(d / "gradio")}) as (url, log_path):
        yield {"url": url + "/", "dir": d, "log": log_path}


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


def open_page(browser, server, width: int, height: int):
    pg = browser.new_page(viewport={"width": width, "height": height})
    pg.set_default_timeout(WAIT_MS)
    pg.page_errors = []
    pg.on("pageerror", lambda e: pg.page_errors.append(str(e)))
    pg.goto(server["url"])
    pg.wait_for_selector("#leaderboard .virtual-row")
    open_tab(pg, "Authoring")
    return pg


def choose(pg, dropdown: str, option: str) -> None:
    pg.locator(f"{dropdown} input").click()
    pg.get_by_role("option", name=option, exact=True).click()


def act(pg, button: str, expected: str) -> None:
    """Click an action of the tab and wait for its message."""
    from playwright.sync_api import expect

    pg.locator(button).click()
    expect(pg.locator("#author-msg")).to_contain_text(expected)
    settle(pg)


def test_build_export_rank_reload(browser, server, tmp_path):
    from playwright.sync_api import expect

    pngs = write_pngs(tmp_path / "pngs")
    pg = open_page(browser, server, 1400, 1000)
    pg.locator("#author-prompt textarea").fill("a red cube on a wooden table")
    act(pg, "#author-new", "Started SEG 0")
    pg.locator("#author-files input[type=file]").set_input_files([str(p) for p in pngs])
    expect(pg.locator("#author-files")).to_contain_text("cube-5")
    pg.locator("#author-source input").fill("MyModel")
    act(pg, "#author-add", "Added 6 images")
    problems = pg.locator("#author-problems")
    expect(problems).to_contain_text("is not in a node")
    for label, (errs, _) in PLAN.items():
        pg.locator("#author-node-label input").fill(label)
        pg.locator("#author-node-errors input").fill(errs)
        act(pg, "#author-save-node", f"Added node {label}")
    for label, (_, files) in PLAN.items():
        pick = pg.locator("#author-pick")
        for f in files:
            pick.get_by_label(f"images/{f} [no node]", exact=True).check()
        choose(pg, "#author-target", label)
        act(pg, "#author-assign", f"2 images put into node {label}")
    expect(problems).to_contain_text("No problems")
    graph = pg.locator("#author-graph")
    expect(graph.locator(".seg-node")).to_have_count(3)
    expect(graph.locator(".seg-node[data-node='2a'] .errs")).to_contain_text("cube not red; no table")
    expect(graph.locator(".seg-node[data-node='1a']")).to_have_attribute("title", "node 1a: 2 images, mean – · adds: cube not red")
    expect(graph.locator(".seg-node .thumbs img")).to_have_count(6)
    expect(pg.locator("#author-nodes")).to_contain_text("cube not red; no table")
    pg.locator("#author-graph").scroll_into_view_if_needed()
    settle(pg)
    pg.screenshot(path=str(ART / "authoring-built-1400.png"))
    docs_shot(pg, "authoring")

    # export: a folder of this machine (operator mode), and the .zip download
    exported = tmp_path / "exported"
    pg.locator("#author-export-dir input").fill(str(exported))
    act(pg, "#author-export", "Exported 1 SEG")
    with pg.expect_download() as dl:
        pg.locator("#author-zip").click()
    zpath = tmp_path / "dl.zip"
    Path(dl.value.path()).replace(zpath)
    with zipfile.ZipFile(zpath) as z:
        names = set(z.namelist())
    assert {"my-segs/metadata.csv", "my-segs/nodes.csv", "my-segs/README.md"} <= names
    assert sum(n.startswith("my-segs/images/") for n in names) == 6

    # the real CLI ranks a metric on the export (scores keyed by file_name, written here from the export)
    rows = list(csv.DictReader(open(exported / "metadata.csv", newline="")))
    assert sorted(r["rank"] for r in rows) == ["0", "0", "1a", "1a", "2a", "2a"]
    assert {r["image_source"] for r in rows} == {"MyModel"}
    rng = np.random.default_rng(3)
    scores = tmp_path / "scores.csv"
    with open(scores, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file_name", "Falls", "Rises"])
        for r in rows:
            lv = int(r["rank"][0])
            w.writerow([r["file_name"], f"{0.9 - 0.3 * lv + rng.normal(0, 0.01):.4f}", f"{0.1 + 0.3 * lv:.4f}"])
    out = tmp_path / "lb.csv"
    run = subprocess.run([sys.executable, "-m", "ts2viz", "leaderboard", "--dataset", str(exported),
                          "--scores", str(scores), "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    import pandas as pd

    lb = pd.read_csv(out).set_index("metric")
    assert list(lb.index) == ["Falls", "Rises"]            # ranked: the metric that falls with errors first
    # perfectly ordered and separated, the other reversed (paper mode: Spearman over images, ties within a node)
    assert lb.loc["Falls", "ord_avg"] > 0.9 and lb.loc["Rises", "ord_avg"] < -0.9
    assert lb.loc["Falls", "sep_avg"] == pytest.approx(1.0)

    # the export reloads into the tab: a second SEG of the session, with its error descriptions
    pg.locator("#author-import-dir input").fill(str(exported))
    act(pg, "#author-import", "Imported 1 SEG: SEG 0")
    expect(pg.locator("#author-drafts input")).to_have_value("SEG 0: a red cube on a wooden table")
    pg.locator("#author-drafts input").click()
    expect(pg.get_by_role("option", name="SEG 0: a red cube on a wooden table")).to_have_count(2)
    pg.keyboard.press("Escape")
    expect(graph.locator(".seg-node[data-node='2a'] .errs")).to_contain_text("cube not red; no table")
    expect(pg.locator("#author-nodes")).to_contain_text("cube not red")
    expect(pg.locator("#author-export-note")).to_contain_text("SEG id 0 is used by 2 SEGs")
    # a click on a node fills the node form
    graph.locator(".seg-node[data-node='1a']").click()
    expect(pg.locator("#author-node-errors input")).to_have_value("cube not red")
    settle(pg)
    pg.screenshot(path=str(ART / "authoring-reloaded-1400.png"), full_page=True)
    assert not pg.page_errors, pg.page_errors
    pg.close()
    log = server["log"].read_text()
    assert "Traceback" not in log, log[-3000:]


def test_phone_width_variant_of_a_seg(browser, server):
    from playwright.sync_api import expect

    pg = open_page(browser, server, 390, 844)
    settle(pg)
    pg.screenshot(path=str(ART / "authoring-start-390.png"))
    act(pg, "#author-vary", "Started a variant of SEG 0")
    graph = pg.locator("#author-graph")
    expect(graph.locator(".seg-node")).to_have_count(6)
    expect(pg.locator("#author-problems")).to_contain_text("No problems")
    expect(pg.locator("#author-nodes")).to_contain_text("no apple; no table")
    expect(graph.locator(".seg-node[data-node='1a'] .errs")).to_contain_text("no apple")
    # scored with the loaded metric: Ord and Sep of the variant
    pg.locator("#author-score-box").get_by_text("Score this SEG while building it").click()
    choose(pg, "#author-loaded-metric", "GoodScore")
    pg.locator("#author-score").click()
    expect(pg.locator("#author-score-summary")).to_contain_text("Ord")
    expect(pg.locator("#author-walks")).to_contain_text("0>1a>2a>3a")
    graph.scroll_into_view_if_needed()
    settle(pg)
    pg.screenshot(path=str(ART / "authoring-variant-390.png"))
    # the page does not scroll sideways at a phone's width (the graph scrolls inside its box)
    assert pg.evaluate("() => document.documentElement.scrollWidth") <= 390 + 1
    # the explorer shows the same error descriptions on SEG 0's node cards
    open_tab(pg, "SEG explorer")
    card = pg.locator("#seg-graph .seg-node[data-node='2a']")
    expect(card.locator(".errs")).to_contain_text("no apple; no table")
    expect(card).to_have_attribute("title", re.compile(r"adds: no apple; no table$"))
    card.scroll_into_view_if_needed()
    settle(pg)
    pg.screenshot(path=str(ART / "authoring-explorer-errors-390.png"))
    assert not pg.page_errors, pg.page_errors
    pg.close()


@pytest.fixture(scope="module")
def public_server(tmp_path_factory):
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("authoring-public")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    with running_app(["--public", "--data", str(d / "ds"), "--scores", str(scores)], d,
                     env={"GRADIO_TEMP_DIR": str(d / "gradio")},
                     drop_env=["SPACE_ID", "TS2VIZ_METRICS_FILE", "TS2VIZ_METRICS"]) as (url, log_path):
        yield {"url": url + "/", "dir": d, "log": log_path, "uploads": d / "gradio"}


def test_public_visitor_builds_downloads_and_another_imports(browser, public_server, tmp_path):
    """A public app: no field names a server path; a visitor's SEG is theirs alone, leaves as a .zip, comes
    back in another session by upload, and its files on the server go when the visitor's tab closes."""
    import time
    from urllib.parse import unquote

    from playwright.sync_api import expect

    from ts2viz.dataset import load_folder

    pngs = write_pngs(tmp_path / "pngs")[:2]
    pg = open_page(browser, public_server, 1400, 1000)
    for field in ("#author-folder", "#author-export-dir", "#author-import-dir", "#author-repo", "#author-push"):
        expect(pg.locator(field)).to_have_count(0)
    pg.locator("#author-prompt textarea").fill("a red cube")
    act(pg, "#author-new", "Started SEG 0")
    pg.locator("#author-files input[type=file]").set_input_files([str(p) for p in pngs])
    expect(pg.locator("#author-files")).to_contain_text("cube-1")
    act(pg, "#author-add", "Added 2 images")
    for label, errs in (("0", ""), ("1a", "cube not red")):
        pg.locator("#author-node-label input").fill(label)
        pg.locator("#author-node-errors input").fill(errs)
        act(pg, "#author-save-node", f"Added node {label}")
    for label, f in (("0", "cube-0.png"), ("1a", "cube-1.png")):
        pg.locator("#author-pick").get_by_label(f"images/{f} [no node]", exact=True).check()
        choose(pg, "#author-target", label)
        act(pg, "#author-assign", f"1 image put into node {label}")
    expect(pg.locator("#author-problems")).to_contain_text("No problems")
    with pg.expect_download() as dl:
        pg.locator("#author-zip").click()
    served = Path(unquote(dl.value.url.split("file=", 1)[1]))
    assert served.is_file() and public_server["uploads"] in served.parents
    zpath = tmp_path / "mine.zip"
    Path(dl.value.path()).replace(zpath)
    with zipfile.ZipFile(zpath) as z:
        z.extractall(tmp_path / "unzipped")
    ds = load_folder(tmp_path / "unzipped" / "my-segs")
    assert ds[0].node("1a").errors == ("cube not red",) and len(ds.rows) == 2

    # another visitor sees nothing of it, and imports the zip into their own session
    other = open_page(browser, public_server, 1400, 1000)
    expect(other.locator("#author-graph")).to_contain_text("No SEG yet")
    other.locator("#author-zip-in input[type=file]").set_input_files(str(zpath))
    expect(other.locator("#author-zip-in")).to_contain_text("mine")
    act(other, "#author-import-zip", "Imported 1 SEG: SEG 0")
    expect(other.locator("#author-graph .seg-node[data-node='1a'] .errs")).to_contain_text("cube not red")
    settle(other)
    other.screenshot(path=str(ART / "authoring-public-import-1400.png"))
    assert not other.page_errors and not pg.page_errors, (other.page_errors, pg.page_errors)
    other.close()
    # the first visitor leaves: their session's files (images, the download) go with it
    pg.close()
    deadline = time.monotonic() + 120
    while served.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not served.exists(), "the visitor's download outlived their session"
    log = public_server["log"].read_text()
    assert "Traceback" not in log, log[-3000:]
