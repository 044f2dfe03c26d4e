"""The Human ratings tab in a real browser, at desktop (1500 px) and phone (390 px) width: the TIFA160
leaderboard with the DSG README's numbers and intervals, the other tasks, the metric-vs-human scatter
(one trace per T2I model, one point per image) and the cross-gold ranks. Numbers are checked against
the library run in this process. Screenshots go to ``tests/artifacts/``.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from app_server import ART, CHROMIUM, launch_chromium, running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]

WIDTHS = {"desktop": 1500, "phone": 390}


@pytest.fixture(scope="module")
def expected():
    from ts2viz.gold import load_gold
    from ts2viz.metaeval import evaluate_rated

    return evaluate_rated(load_gold("tifa160")).frame().set_index("metric")


@pytest.fixture(scope="module")
def expected_clusters():
    from ts2viz.ui import gold_callbacks as gc

    return gc.clusters("tifa160", "dsg", "spearman")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser-gold")
    with running_app(["--host", "127.0.0.1"], d, drop_env=["TS2VIZ_DATA"], timeout=120) as (url, _):
        yield url + "/"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    ART.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


def _rows(pg, table_id: str) -> list[str]:
    return pg.evaluate(f"""() => Array.from(document.querySelectorAll('#{table_id} .virtual-row'))
        .map(r => r.innerText.replace(/\\s+/g, ' ').trim())""")


@pytest.mark.parametrize("name", list(WIDTHS))
def test_human_ratings_tab(browser, server, expected, expected_clusters, name):
    from playwright.sync_api import expect

    w = WIDTHS[name]
    pg = browser.new_page(viewport={"width": w, "height": 900 if w < 800 else 1000})
    pg.set_default_timeout(90_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server)
    pg.wait_for_selector("#leaderboard .virtual-row")
    tab = pg.get_by_role("tab", name="Human ratings")
    if tab.is_visible():
        tab.click()
    else:                                         # a narrow window folds tabs into Gradio's overflow menu
        pg.locator(".overflow-menu > button").first.click()
        pg.locator(".overflow-dropdown button", has_text="Human ratings").click()
    board = pg.locator("#gold-board")
    expect(board).to_contain_text("dsg:PaLI-17B", timeout=240_000)   # computed on first open
    row = next(r for r in _rows(pg, "gold-board") if r.startswith("dsg:PaLI-17B"))
    e = expected.loc["dsg:PaLI-17B"]
    assert f"{e['spearman']:.3f} [{e['spearman_lo']:.3f}, {e['spearman_hi']:.3f}]" in row
    assert "0.571" in row and "0.458" in row            # the DSG README's numbers
    # the significance-cluster column, as the library computes it in this process
    assert row.split(" ")[-1] == str(expected_clusters["dsg:PaLI-17B"])
    expect(pg.locator("#gold-note")).to_contain_text("permutation test", timeout=60_000)
    expect(pg.locator("#gold-note")).to_contain_text("gold = mean of rating set dsg", timeout=60_000)
    # the scatter: one trace per T2I model, one point per image
    pg.wait_for_selector("#gold-scatter .js-plotly-plot")
    traces = pg.evaluate("""() => document.querySelector('#gold-scatter .js-plotly-plot').data
        .map(t => ({name: t.name, n: t.x.length}))""")
    assert len(traces) == 5 and sum(t["n"] for t in traces) == 800
    cross = pg.locator("#gold-cross")
    expect(cross).to_contain_text("CLIPScore", timeout=60_000)
    sw = pg.evaluate("document.documentElement.scrollWidth")
    assert sw <= w, f"the Human ratings tab is {sw} px wide in a {w}-px window"
    time.sleep(1.0)
    pg.screenshot(path=str(ART / f"gold-tab-{name}.png"), full_page=True)
    # another task: the pair-wise leaderboard
    pg.locator("#gold-task").get_by_label("pair-wise").check()
    expect(board).to_contain_text("acc_eq", timeout=60_000)
    pair_row = next(r for r in _rows(pg, "gold-board") if r.startswith("dsg:PaLI-17B"))
    assert f"{e['pairwise_acc']:.3f} [{e['pairwise_acc_lo']:.3f}, {e['pairwise_acc_hi']:.3f}]" in pair_row
    # another rated set
    pg.locator("#gold-set").get_by_label("imagenhub-t2i").check()
    expect(board).to_contain_text("viescore_sc:gpt4v_0shot", timeout=240_000)
    time.sleep(1.0)
    pg.screenshot(path=str(ART / f"gold-tab-imagenhub-{name}.png"), full_page=False)
    assert not errors, errors
    pg.close()
