"""The app through a newcomer's eyes (issue 14), in a real browser at desktop (1500 px) and phone (390 px) width.

Starts ``app.py`` on a generated dataset whose node 0s hold one image each (as most of TS2's do) and drives
Debian's Chromium with Playwright:

- item 1: a node with one image shows it at a readable size, its caption (file, source, scores) in view;
- item 2: on a fresh page, a row click in the Correlations tab opens that row's SEG and it stays open (4 of 4);
- item 3: live scoring shows its progress, keeps an error in its panel after the toast has gone, and fails
  fast with advice for a hub model it cannot have;
- item 5: the signed separation beside Sep in the SEG header, and the failure finder ranking by it;
- item 7: the page no wider than a phone's window on every tab; the finder's headers never broken inside a
  word and its prompts not cut off;
- item 9: views write no files (a download writes one, on click) and bad input leaves no traceback in the log.

Screenshots go to ``tests/artifacts/newcomer-*.png``.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from app_server import ART, CHROMIUM, WAIT_MS, chromium_browser, open_tab, running_app, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]

WIDTHS = {"desktop": 1500, "phone": 390}
#: node 0 has one image (like most of TS2's node 0s)
NODES = [("0", 1), ("1a", 3), ("1b", 2), ("2a", 2), ("2b", 2), ("3a", 2)]
TABS = ("Leaderboard", "SEG explorer", "Correlations", "Live scoring")


def csv_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.csv") if "ds" not in p.relative_to(folder).parts[:1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("newcomer")
    write_dataset(d / "ds", nodes=NODES, big_image=False)
    scores = write_scores(d, d / "ds")
    scores = scores.rename(d / "ds" / "scores.csv")      # inside ds/: not counted as a file the app wrote
    with running_app(["--data", str(d / "ds"), "--scores", str(scores), "--lower-is-better", "ErrCount",
                      "--host", "127.0.0.1"], d, env={"GRADIO_TEMP_DIR": str(d / "gradio")}) as (url, log_path):
        yield {"url": url + "/", "spec": f"clipscore:{tiny('clip')}", "dir": d, "log": log_path}


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


def open_page(browser, server, width: int):
    """A fresh page (a new session) of the app at ``width`` px, its first render done."""
    pg = browser.new_page(viewport={"width": width, "height": 900 if width < 800 else 1000})
    pg.set_default_timeout(WAIT_MS)
    pg.page_errors = []
    pg.on("pageerror", lambda e: pg.page_errors.append(str(e)))
    pg.goto(server["url"])
    pg.wait_for_selector("#leaderboard .virtual-row")
    pg.wait_for_selector("#board-scatter .js-plotly-plot")         # the load event has filled the views
    return pg


def shot(pg, name: str, locator=None, full: bool = False) -> None:
    settle(pg)   # let pending outputs settle (Gradio fades them while an event runs)
    path = str(ART / f"newcomer-{name}.png")
    if locator is not None:
        locator.scroll_into_view_if_needed()
        locator.screenshot(path=path)
    else:
        pg.screenshot(path=path, full_page=full)


def tab(pg, name: str) -> None:
    open_tab(pg, name)


def box(locator) -> dict:
    b = locator.bounding_box()
    assert b is not None, "not rendered"
    return b


@pytest.fixture(params=list(WIDTHS), ids=list(WIDTHS))
def width(request) -> tuple[str, int]:
    return request.param, WIDTHS[request.param]


# -- item 1: a node with one image ---------------------------------------------------------------------------

def test_single_image_node_shows_its_image_and_caption(browser, server, width):
    from playwright.sync_api import expect

    name, w = width
    pg = open_page(browser, server, w)
    tab(pg, "SEG explorer")
    expect(pg.locator("#node-title")).to_contain_text("Node 0 · 0 errors · 1 image")
    gal = pg.locator("#node-gallery")
    img = gal.locator("img")
    expect(img).to_have_count(1)
    gal.scroll_into_view_if_needed()
    expect(img).to_be_visible()
    pg.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    g, i = box(gal), box(img)
    # a readable size: not a thumbnail, not a 1,000-px square in a 380-px box
    assert 140 <= i["width"] <= 300 and 140 <= i["height"] <= 300, i
    assert i["x"] >= g["x"] - 1 and i["x"] + i["width"] <= g["x"] + g["width"] + 1
    # the caption names the file, its source and its scores, below the image and inside the gallery
    cap = gal.locator(".caption-label")
    expect(cap).to_be_visible()
    text = cap.inner_text()
    assert "000-00.jpg" in text and "SD2.1" in text and "GoodScore" in text and "NoisyScore" in text, text
    c = box(cap)
    assert c["y"] >= i["y"] + i["height"] - 1, "the caption covers the image"
    assert c["y"] + c["height"] <= g["y"] + g["height"] + 1, "the caption is out of the gallery's view"
    assert c["x"] + c["width"] <= g["x"] + g["width"] + 1
    shot(pg, f"gallery-single-{name}", gal)

    # a node of three: three images side by side (two per row on a phone), each with its caption
    pg.locator("#seg-graph [data-node='1a']").click()
    expect(pg.locator("#node-title")).to_contain_text("Node 1a")
    expect(img).to_have_count(3)
    expect(gal.locator(".caption-label")).to_have_count(3)
    boxes = [box(img.nth(k)) for k in range(3)]
    assert len({round(b["y"]) for b in boxes[:2]}) == 1, "the first two images are not in one row"
    assert all(b["width"] >= 140 for b in boxes), boxes
    shot(pg, f"gallery-three-{name}", gal)
    assert not pg.page_errors, pg.page_errors
    pg.close()


# -- item 2: a row click in the Correlations tab on a fresh page -------------------------------------------------

def test_correlations_row_opens_its_seg_on_a_fresh_page(browser, server, width):
    from playwright.sync_api import expect

    name, w = width
    for attempt in range(4):
        pg = open_page(browser, server, w)          # fresh page: the explorer's components not shown yet
        tab(pg, "Correlations")
        pg.wait_for_selector("#pair-table .virtual-row")
        ids = [pg.locator(f"#pair-table [data-testid='cell-{r}-0']").inner_text().strip() for r in range(3)]
        row = next(r for r, s in enumerate(ids) if s != "0")           # SEG 0 is the one it used to snap back to
        want = ids[row]
        cell = pg.locator(f"#pair-table [data-testid='cell-{row}-0']")
        cell.scroll_into_view_if_needed()
        cell.click()
        header = pg.locator("#seg-header h3")
        expect(header).to_contain_text(f"SEG {want} ·")
        settle(pg)              # every event the click started has finished (it used to snap back to SEG 0 then)
        expect(header).to_contain_text(f"SEG {want} ·")
        expect(pg.locator("#seg-pick input")).to_have_value(re.compile(rf"^{want} · "))
        expect(pg.locator("#tab-seg")).to_be_visible()
        if w <= 640:        # on a phone the SEG itself is shown, not the top of the sidebar above it
            top = box(pg.locator("#seg-header"))["y"]
            # scrolled to the header: its top within a pixel of the window's (sub-pixel scroll positions)
            assert -1 < top < pg.viewport_size["height"] / 2, f"SEG header at y={top:.2f}"
        if attempt == 0:
            shot(pg, f"corr-row-opened-{name}")
        assert not pg.page_errors, pg.page_errors
        pg.close()


# -- item 5: the signed separation beside Sep, and the finder ranking by it --------------------------------------

def test_signed_separation_beside_sep_and_in_the_finder(browser, server, width):
    from playwright.sync_api import expect

    name, w = width
    pg = open_page(browser, server, w)
    tab(pg, "SEG explorer")
    header = pg.locator("#seg-header")
    expect(header).to_contain_text("GoodScore")
    text = header.inner_text()
    for metric in ("GoodScore", "NoisyScore"):
        assert re.search(rf"{metric} ord -?\d+\.\d · sep -?\d+\.\d · signed sep -?\d+\.\d", text), text
    assert "Signed sep: Sep (KS)" in text                               # the one-line explanation
    pg.locator("#finder").get_by_label("Signed sep", exact=True).check()
    finder = pg.locator("#finder-table")
    expect(finder).to_contain_text("signed sep GoodScore")
    heads = [" ".join(t.inner_text().replace("⋮", " ").split()) for t in finder.locator("th").all()]
    assert heads[0] == "SEG" and "sep GoodScore" in heads, heads            # Sep beside it, to compare
    k = heads.index("signed sep GoodScore")
    vals = [float(pg.locator(f"#finder-table [data-testid='cell-{r}-{k}']").inner_text()) for r in range(3)]
    assert vals == sorted(vals), f"not worst (lowest signed sep) first: {vals}"
    shot(pg, f"finder-signed-sep-{name}", pg.locator("#finder"))
    pg.close()


# -- item 7: phone width, the finder's headers and prompts ------------------------------------------------------------

WORD_BREAKS = """(el) => {
  // words of the header cells rendered over two lines (a word split mid-way has two client rects)
  const broken = [];
  for (const th of el.querySelectorAll('th')) {
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    let node;
    while ((node = walker.nextNode())) {
      for (const m of node.textContent.matchAll(/\\S+/g)) {
        const r = document.createRange();
        r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        const lines = new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""

CUT_PROMPTS = """(el) => {
  // prompt cells whose text is clipped, or that lie outside the table's visible width
  const view = el.querySelector('.virtual-table-viewport').getBoundingClientRect();
  const heads = [...el.querySelectorAll('th')].map(t => t.innerText.trim());
  const k = heads.indexOf('prompt');
  const out = [];
  for (const c of el.querySelectorAll(`.body-cell[data-col='${k}']`)) {
    const r = c.getBoundingClientRect(), span = c.querySelector('span') || c;
    if (r.right > view.right + 1 || span.scrollWidth > span.clientWidth + 1) out.push(c.innerText);
  }
  return [k, out];
}"""


def test_page_fits_the_window_and_the_finder_reads_well(browser, server, width):
    from playwright.sync_api import expect

    name, w = width
    pg = open_page(browser, server, w)
    for t in TABS:
        tab(pg, t)
        settle(pg)
        sw = pg.evaluate("document.documentElement.scrollWidth")
        assert sw <= w, f"{t} tab is {sw} px wide in a {w}-px window"
        shot(pg, f"page-{t.split()[0].lower()}-{name}", full=True)
    tab(pg, "SEG explorer")
    finder = pg.locator("#finder-table")
    expect(finder).to_contain_text("ord GoodScore")
    for stat in ("Ord (Spearman)", "Sep (KS)", "Signed sep"):
        pg.locator("#finder").get_by_label(stat, exact=True).check()
        settle(pg)
        assert pg.evaluate(WORD_BREAKS, finder.element_handle()) == [], f"headers broken mid-word ({stat})"
        k, cut = pg.evaluate(CUT_PROMPTS, finder.element_handle())
        assert k >= 0, "no prompt column"
        assert cut == [], f"prompts cut off ({stat}): {cut}"
        for prompt in ("a red apple on a wooden table", "two blue birds sitting on a fence"):
            expect(finder).to_contain_text(prompt)
    shot(pg, f"finder-{name}", pg.locator("#finder"))
    assert not pg.page_errors, pg.page_errors
    pg.close()


# -- items 3 and 9: live scoring feedback, the log, files -------------------------------------------------------------

RECORD = """() => {
  window.liveTexts = [];
  const el = document.querySelector('#live-msg');
  new MutationObserver(() => window.liveTexts.push(el.innerText)).observe(el, {subtree: true, childList: true,
                                                                              characterData: true});
}"""


@pytest.mark.toasts_expected("nobody/no-such-model-ts2viz", "upload at least one image",
                             "error pill on #(live|upload)-msg")         # the failures on purpose
def test_live_scoring_feedback_files_and_log(browser, server, width):
    from playwright.sync_api import expect

    name, w = width
    before = csv_files(server["dir"])
    assert before == [], before
    pg = open_page(browser, server, w)
    # every view of the explorer and the correlations tab: no file written for them
    tab(pg, "SEG explorer")
    pg.locator("#seg-graph [data-node='1b']").click()
    expect(pg.locator("#node-title")).to_contain_text("Node 1b")
    pg.locator("#finder").get_by_label("Sep (KS)", exact=True).check()
    tab(pg, "Correlations")
    pg.wait_for_selector("#pair-table .virtual-row")
    settle(pg)
    assert csv_files(server["dir"]) == [], "a view wrote a file"

    tab(pg, "Live scoring")
    msg = pg.locator("#live-msg")
    # a hub model that cannot be had: a quick answer with advice, kept in the panel after the toast has gone
    pg.locator("#live-spec textarea").fill("clipscore:nobody/no-such-model-ts2viz")
    t0 = time.time()
    pg.locator("#live-score").click()
    expect(msg).to_contain_text("Error", timeout=60_000)
    took = time.time() - t0
    assert took < 30, f"the failure took {took:.0f} s"                 # includes the first import of torch
    for advice in ("not in the local hub cache", "local model folder", "FAMILY:/path/to/folder"):
        expect(msg).to_contain_text(advice)
    expect(pg.locator("[data-testid='toast-body']")).to_have_count(0)   # the toast has gone (it lasts 8 s)
    expect(msg).to_contain_text("nobody/no-such-model-ts2viz")
    shot(pg, f"live-error-{name}", msg)

    # a run shows its progress (from the model load on) in the panel, then its outcome
    pg.evaluate(RECORD)
    pg.locator("#live-spec textarea").fill(server["spec"])
    pg.locator("#live-score").click()
    expect(msg).to_contain_text("Scored SEG 0", timeout=120_000)
    texts = pg.evaluate("window.liveTexts")
    assert any("loading the model" in t or re.search(r"\d+/\d+ images", t) for t in texts), texts
    expect(msg).not_to_contain_text("Error")
    shot(pg, f"live-done-{name}", msg)

    # bad input on the upload side: the message in its panel too
    pg.locator("#upload-spec input").fill(server["spec"])
    pg.locator("#upload-score").click()
    expect(pg.locator("#upload-msg")).to_contain_text("upload at least one image")

    # a download makes one file, on the click
    tab(pg, "SEG explorer")
    with pg.expect_download() as dl:
        pg.locator("#finder-csv").click()
    assert Path(dl.value.path()).read_text().startswith("SEG,")
    assert len(csv_files(server["dir"])) == 1
    for f in csv_files(server["dir"]):            # this session's file; the next width starts from none
        f.unlink()
    # expected bad input leaves no traceback in the server's log
    settle(pg)
    assert "Traceback" not in server["log"].read_text()
    assert not pg.page_errors, pg.page_errors
    pg.close()
