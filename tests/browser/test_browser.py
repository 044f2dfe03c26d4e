"""A real browser walks a user's path through the app.

Starts ``app.py`` on a loopback port with a small generated image dataset and scores file, then drives
Debian's Chromium with Playwright (never a downloaded browser): leaderboard sorted by a column, a SEG
picked by prompt search, a node clicked and its gallery checked, a walk highlighted, the current SEG
scored live and an image uploaded and scored with a tiny local CLIP, the heatmap shown. Screenshots go
to ``tests/artifacts/``.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from app_server import ART, CHROMIUM, browser_page, docs_shot, running_app, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium "
                                        "(apt-get install chromium; .ci/run does this)")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tiny_models import tiny
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("browser")
    write_dataset(d / "ds")
    scores = write_scores(d, d / "ds")
    with running_app(["--data", str(d / "ds"), "--scores", str(scores), "--lower-is-better", "ErrCount",
                      "--host", "127.0.0.1"], d) as (url, log):
        yield {"url": url + "/", "spec": f"clipscore:{tiny('clip')}", "dir": d, "log": log}


@pytest.fixture(scope="module")
def page(server):
    with browser_page() as pg:
        pg.goto(server["url"])
        pg.wait_for_selector("#leaderboard .virtual-row")
        yield pg


def _shot(pg, name, full=True):
    settle(pg)  # let pending outputs settle (Gradio fades them while an event runs)
    pg.screenshot(path=str(ART / f"{name}.png"), full_page=full)


def _row(pg, table_id, i=0):
    """Row ``i`` of a gr.Dataframe (Gradio 6 renders rows as virtual grid rows)."""
    return pg.locator(f"#{table_id} .virtual-row[data-index='{i}']")


def _text(loc) -> str:
    return " ".join(loc.inner_text().split())


def _wait_text(loc, ok, timeout: float = 30.0) -> str:
    """The element's text (whitespace normalised) once ``ok(text)`` holds; fails after ``timeout`` s."""
    t0 = time.monotonic()
    while True:
        text = _text(loc)
        if ok(text):
            return text
        assert time.monotonic() - t0 < timeout, f"text never matched: {text[:300]}"
        time.sleep(0.2)


def _first_row(pg, table_id) -> str:
    return _row(pg, table_id).inner_text()


@pytest.mark.toasts_expected("the prompt is empty", "error pill on #upload-msg")   # the bad input on purpose
def test_user_path(page, server):
    from playwright.sync_api import expect

    pg = page
    # 1. leaderboard, sorted by a column (worst ord first puts the random metric on top)
    expect(pg.locator("#leaderboard")).to_contain_text("GoodScore")
    assert "GoodScore" in _first_row(pg, "leaderboard")
    pg.get_by_label("worst first").check()
    expect(_row(pg, "leaderboard")).to_contain_text("NoisyScore")
    pg.locator("#sort-by input").click()
    pg.get_by_role("option", name="Sep · Avg", exact=True).click()
    expect(_row(pg, "leaderboard")).not_to_contain_text("GoodScore")
    expect(pg.locator("#board-scatter .js-plotly-plot")).to_be_visible()
    _shot(pg, "01-leaderboard")
    docs_shot(pg, "leaderboard")
    # one click makes the CSV (in this session's folder) and the browser saves it
    with pg.expect_download() as dl:
        pg.locator("#board-csv").click()
    text = Path(dl.value.path()).read_text()
    assert text.startswith("metric,ord_avg") and "GoodScore" in text

    # 2. SEG explorer: pick a SEG by searching its prompt
    pg.get_by_role("tab", name="SEG explorer").click()
    pg.locator("#seg-search input, #seg-search textarea").first.fill("yellow taxi")
    expect(pg.locator("#seg-header")).to_contain_text("SEG 2")
    expect(pg.locator("#seg-header")).to_contain_text("a yellow taxi in the rain")
    expect(pg.locator("#seg-header")).to_contain_text("signed sep")          # beside sep, x100
    expect(pg.locator("#seg-graph [data-node]")).to_have_count(6)

    # 3. click a node: its gallery shows exactly its images
    pg.locator("#seg-graph [data-node='1a']").click()
    expect(pg.locator("#node-title")).to_contain_text("Node 1a")
    expect(pg.locator("#seg-graph [data-node='1a'].selected")).to_have_count(1)
    gal = pg.locator("#node-gallery")
    expect(gal.locator("img")).to_have_count(3)
    for name in ("002-02.jpg", "002-03.jpg", "002-04.jpg"):
        expect(gal).to_contain_text(name)
    expect(gal).not_to_contain_text("002-05.jpg")
    _shot(pg, "02-seg-node")
    docs_shot(pg, "explorer")

    # 4. highlight a walk from the walk table (worst first)
    pg.locator("#walk-table [data-testid='cell-0-1']").click()
    expect(pg.locator("#seg-graph .edge-walk")).to_have_count(3)
    expect(pg.locator("#seg-graph .seg-node.in-walk")).to_have_count(4)
    expect(pg.locator("#seg-graph")).to_contain_text("highlighted: walk")
    expect(pg.locator("#walk-plot-a")).to_contain_text("▶ walk")
    pg.locator("#seg-graph").scroll_into_view_if_needed()
    _shot(pg, "03-seg-walk")

    # 4b. the Nodes tab is drawn when opened, follows the SEG while open, and again after being closed
    pg.get_by_role("tab", name="Nodes (separation)").click()
    expect(pg.locator("#cdf-plot-a")).to_contain_text("node score CDFs")
    # each node's CDF is a step function as plotly.js understood the figure (its _fullData), and the
    # line it drew is made of horizontal and vertical moves only
    drawn = pg.evaluate("""() => {
        const gd = document.querySelector('#cdf-plot-a .js-plotly-plot');
        return gd._fullData.filter(t => t.legend === 'legend2').map(t => ({
            name: t.name, shape: t.line.shape,
            d: gd.querySelectorAll('.scatterlayer .trace')[t.index].querySelector('path.js-line').getAttribute('d')}));
    }""")
    assert [t["name"] for t in drawn] == ["0", "1a", "1b", "2a", "2b", "3a"], drawn
    for t in drawn:
        assert t["shape"] == "hv", t
        assert "L" not in t["d"] and "H" in t["d"] and "V" in t["d"], t
    ks = pg.locator("#ks-table")
    expect(ks).to_contain_text("0 – 1a")
    seg2_ks = _text(ks)
    pg.locator("#seg-search input, #seg-search textarea").first.fill("red apple")
    expect(pg.locator("#seg-header")).to_contain_text("SEG 0")
    seg0_ks = _wait_text(ks, lambda t: t != seg2_ks)      # NoisyScore's KS values are each SEG's own
    pg.get_by_role("tab", name="Walks (ordering)").click()
    pg.locator("#seg-search input, #seg-search textarea").first.fill("yellow taxi")
    expect(pg.locator("#seg-header")).to_contain_text("SEG 2")
    pg.get_by_role("tab", name="Nodes (separation)").click()
    _wait_text(ks, lambda t: t == seg2_ks)
    assert seg0_ks != seg2_ks and "0 – 1a" in seg0_ks
    _shot(pg, "03b-seg-nodes")
    pg.get_by_role("tab", name="Walks (ordering)").click()

    # 5. live scoring of the current SEG, then an uploaded image scored against it
    pg.get_by_role("tab", name="Live scoring").click()
    settle(pg)                  # the tab's own updates land first; a spec typed before them can be reset
    spec_box = pg.locator("#live-spec textarea")
    spec_box.fill(server["spec"])
    expect(spec_box).to_have_value(server["spec"])
    settle(pg)
    pg.locator("#live-score").click()
    expect(pg.locator("#live-msg")).to_contain_text("Scored SEG 2", timeout=120_000)
    expect(pg.locator(".brand")).to_contain_text("4 metrics")               # the header counts the new one
    assert pg.locator("#upload-prompt textarea").input_value() == "a yellow taxi in the rain"
    from PIL import Image

    up = server["dir"] / "my-taxi.png"
    Image.new("RGB", (96, 64), (230, 200, 30)).save(up)
    pg.locator("#upload-images input[type=file]").set_input_files(str(up))
    expect(pg.locator("#upload-images")).to_contain_text("my-taxi")
    pg.locator("#upload-spec input").fill(server["spec"])
    pg.locator("#upload-score").click()
    expect(pg.locator("#upload-table")).to_contain_text("my-taxi.png", timeout=120_000)
    expect(pg.locator("#landing-plot")).to_contain_text("my-taxi.png")
    _shot(pg, "04-upload")
    docs_shot(pg, "live-scoring")

    # bad input: an empty prompt gives a readable message and the app keeps working
    pg.locator("#upload-prompt textarea").fill("")
    pg.locator("#upload-score").click()
    expect(pg.get_by_text("the prompt is empty").first).to_be_visible()
    expect(pg.locator("#metric-a")).not_to_contain_text("Error")  # only the upload area reports it

    # the live metric joined the leaderboard
    pg.get_by_role("tab", name="Leaderboard").click()
    expect(pg.locator("#leaderboard")).to_contain_text(server["spec"][:20])

    # 6. correlations heatmap
    pg.get_by_role("tab", name="Correlations").click()
    expect(pg.locator("#heatmap .js-plotly-plot")).to_be_visible()
    expect(pg.locator("#heatmap")).to_contain_text("Correlation of per-SEG")
    expect(pg.locator("#pair-plot")).to_contain_text("Per-SEG ord")
    _shot(pg, "05-correlations")
    docs_shot(pg, "correlations")
    assert not pg.page_errors, pg.page_errors


HEADERS = """() => {
  window.segHeaders = [];
  const el = document.querySelector('#seg-header');
  new MutationObserver(() => window.segHeaders.push(el.innerText)).observe(el, {subtree: true, childList: true,
                                                                              characterData: true});
}"""


def test_typing_a_search_draws_only_where_it_settles(page, server):
    """Issue 21 item 2: keystrokes are debounced (one filter once typing pauses), the SEG drawn is the
    one the whole query picks, and no request fails (a search racing a view used to give HTTP 500s)."""
    from playwright.sync_api import expect

    pg = page
    failed = []
    pg.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 500 else None)
    pg.get_by_role("tab", name="SEG explorer").click()
    box = pg.locator("#seg-search input, #seg-search textarea").first
    box.fill("two blue")
    expect(pg.locator("#seg-header")).to_contain_text("SEG 1")
    box.fill("")
    expect(pg.locator("#seg-pick")).to_contain_text("SEG")
    pg.evaluate(HEADERS)
    # "ta" matches SEG 0 (table) and SEG 2 (taxi): typed one key at a time, SEG 0 used to be drawn on the way
    box.press_sequentially("tax", delay=40)
    expect(pg.locator("#seg-header")).to_contain_text("SEG 2")
    shown = pg.evaluate("window.segHeaders")
    assert not any("SEG 0 ·" in t for t in shown), shown
    # typed fast with an id: the same, and never an error
    box.fill("")
    for q in ("0", "1", "2", "two", "taxi"):
        box.press_sequentially(q, delay=20)
        box.fill("")
    box.press_sequentially("red apple", delay=20)
    expect(pg.locator("#seg-header")).to_contain_text("SEG 0")
    assert failed == [], failed
    log = server["log"].read_text()
    assert "not in the list of choices" not in log and "Traceback" not in log, log[-2000:]
    assert not pg.page_errors, pg.page_errors


def test_family_filter_drops_all_when_a_family_is_picked(page):
    """Issue 21 item 5: picking a family while "All" is selected filters at once ("All" goes)."""
    from playwright.sync_api import expect

    pg = page
    pg.get_by_role("tab", name="Leaderboard").click()
    fam = pg.locator("#family-filter")
    expect(fam).to_contain_text("All")
    fam.locator("input").click()
    pg.get_by_role("option", name="NoisyScore", exact=True).click()
    pg.keyboard.press("Escape")
    expect(fam).not_to_contain_text("All")
    expect(pg.locator("#leaderboard .virtual-row")).to_have_count(1)
    expect(_row(pg, "leaderboard")).to_contain_text("NoisyScore")
