"""The Judges view of the Human ratings tab in a real browser: GenAI-Bench's side-by-side judges with
intervals, the position-bias bars, a click on a triage row showing that pair's judge text with the parsed
verdict marked (under 2 s), no toast. Numbers are checked against the library run in this process.
Screenshots go to ``tests/artifacts/judges-sxs-*.png``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from app_server import ART, CHROMIUM, open_tab, settle
from test_browser_humaneval import browser, server  # noqa: F401  (the Human ratings tab's app and Chromium)

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]

TOASTS = "[data-testid='toast-body']"


def test_judges_view_and_a_pair_click(browser, server):
    from playwright.sync_api import expect

    from ts2viz.ui.callbacks import judges as jc

    table = jc.accuracy_table("genaibench-pairwise", "genaibench").set_index("judge")
    triage = jc.triage_table("genaibench-pairwise", "genaibench")
    pg = browser.new_page(viewport={"width": 1500, "height": 1000})
    pg.set_default_timeout(90_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server)
    pg.wait_for_selector("#leaderboard .virtual-row")
    open_tab(pg, "Human ratings")
    expect(pg.locator("#gold-board")).to_contain_text("dsg:PaLI-17B", timeout=240_000)
    pg.locator("#judges").get_by_text("Judges on side-by-side pairs").click()
    board = pg.locator("#judge-board")
    expect(board).to_contain_text("gemini-1.5-pro", timeout=120_000)
    expect(board).to_contain_text(table.loc["gpt4o", "4-label acc %"])
    pg.wait_for_selector("#judge-bias .js-plotly-plot")
    bars = pg.evaluate("() => document.querySelector('#judge-bias .js-plotly-plot').data[0].y.length")
    assert bars == 18
    expect(pg.locator("#judge-triage")).to_contain_text(str(triage["pair"].iloc[0]))
    expect(pg.locator("#judge-name input")).to_have_value("gpt4o")
    settle(pg)
    # clicks on triage rows: that pair, the judge's text, its parsed token marked. The time is the page's own,
    # from the click event to the pair's detail in the page (a MutationObserver), not Playwright's overhead.
    for r in (1, 3):
        pid = str(triage["pair"].iloc[r])
        cell = pg.locator(f"#judge-triage [data-testid='cell-{r}-1']")
        cell.scroll_into_view_if_needed()
        pg.evaluate("""(pid) => {
            window.__shown = null; window.__clicked = null;
            document.querySelector('#judge-triage').addEventListener('click',
                () => { window.__clicked = performance.now(); }, {capture: true, once: true});
            const root = document.querySelector('#judge-detail');
            const obs = new MutationObserver(() => {
                const el = root.querySelector('.judge-pair');
                if (el && el.dataset.pair === pid) { window.__shown = performance.now(); obs.disconnect(); }
            });
            obs.observe(root, {childList: true, subtree: true, attributes: true});
        }""", pid)
        cell.click()
        expect(pg.locator("#judge-detail .judge-pair")).to_have_attribute("data-pair", pid, timeout=30_000)
        took = pg.evaluate("() => (window.__shown - window.__clicked) / 1000")
        assert 0 < took < 2.0, f"pair {pid} took {took:.2f} s to show after the click"
    want = jc.pair_detail("genaibench-pairwise", "genaibench", pid, "gpt4o")
    expect(pg.locator("#judge-pair input, #judge-pair textarea").first).to_have_value(pid)
    if "<mark" in want:
        mark = want.split('<mark class="judge-verdict">')[1].split("</mark>")[0]
        expect(pg.locator("#judge-detail mark.judge-verdict")).to_have_text(
            mark.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&"))
    expect(pg.locator("#judge-detail")).to_contain_text("parsed verdict")
    settle(pg)
    pg.locator("#judges").screenshot(path=str(ART / "judges-sxs-view.png"))
    assert pg.locator(TOASTS).count() == 0, "a toast on an ordinary path"
    assert not errors, errors
    pg.close()
