"""What a new user reads, in Chromium at 1400x1000 and 390x844 on the bundled TS2 data (issue 21):

- item 4: the leaderboard's headers are written for people ("Ord avg", "signed Sep avg", "SEGs"), not snake_case;
- item 7: every metric of the Ord-vs-Sep scatter is named: beside its point (the rendered labels do not
  overlap) or in the list under the plot, and on a phone, where the plot's labels are hidden, in the list
  under it;
- item 10: the SEG graph's node colours follow the legend's colour scale (the metric's full range by
  default, this SEG's range on a click);
- item 12: on a phone the SEG graph comes right after the SEG picker (only the SEG's header between them),
  the failure finder below it.

Screenshots go to ``tests/artifacts/readable-*.png``.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_server import ART, CHROMIUM, WAIT_MS, chromium_browser, open_tab, running_app, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]

SIZES = {"desktop": (1400, 1000), "phone": (390, 844)}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("readable")
    with running_app(["--host", "127.0.0.1"], d, env={"GRADIO_TEMP_DIR": str(d / "gradio")}) as (url, _log):
        yield url + "/"


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


def open_page(browser, url: str, size: str):
    w, h = SIZES[size]
    pg = browser.new_page(viewport={"width": w, "height": h})
    pg.set_default_timeout(WAIT_MS)
    pg.goto(url)
    pg.wait_for_selector("#leaderboard .virtual-row")
    pg.wait_for_selector("#board-scatter .js-plotly-plot")          # the load event has filled the views
    pg.wait_for_function("() => document.querySelector('#board-scatter .js-plotly-plot').data"
                         " && document.querySelector('#board-scatter .js-plotly-plot').data.length > 0")
    settle(pg)
    return pg


#: every point of the scatter (name) and each annotation the page drew: text, box, shown or not
SCATTER_JS = """() => {
  const el = document.querySelector('#board-scatter .js-plotly-plot');
  const names = el.data.flatMap(t => t.text);
  const anns = [...el.querySelectorAll('.infolayer g.annotation')].map(g => {
    const r = g.getBoundingClientRect();
    const lines = [...g.querySelectorAll('tspan.line')].map(t => t.textContent);
    return {text: lines.length ? lines.join(' · ') : g.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom,
            shown: getComputedStyle(g).display !== 'none' && r.width > 0};
  });
  return {names, anns};
}"""


def test_desktop_headers_scatter_and_colour_scale(browser, server):
    pg = open_page(browser, server, "desktop")
    # item 4: headers for people
    heads = [h.strip() for h in pg.locator("#leaderboard thead th").all_inner_texts() if h.strip()]
    assert {"Ord avg", "Sep avg", "signed Sep avg", "Ord synth", "Sep real", "SEGs", "dir"} <= set(heads), heads
    assert not [h for h in heads if "_" in h], heads
    pg.locator("#leaderboard").screenshot(path=str(ART / "readable-desktop-board.png"))

    # item 7: each name beside its point, the rendered labels apart, or in the list under the plot
    pg.locator("#board-scatter").scroll_into_view_if_needed()
    got = pg.evaluate(SCATTER_JS)
    labels = [a for a in got["anns"] if a["shown"] and not a["text"].startswith("No room")]
    listed = {n for a in got["anns"] if a["shown"] and a["text"].startswith("No room")
              for n in re.split(r" · |: ", a["text"])[1:]}
    assert len(got["names"]) == 19 and len(labels) >= 10
    missing = [n for n in got["names"] if n not in {a["text"] for a in labels} and n not in listed]
    assert not missing, (missing, listed)
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            apart = a["x1"] <= b["x0"] + 0.5 or b["x1"] <= a["x0"] + 0.5 or a["y1"] <= b["y0"] + 0.5 or b["y1"] <= a["y0"] + 0.5
            assert apart, (a, b)
    assert not pg.locator("#board-ci-note .scatter-names").is_visible()    # the phone's list is not shown here
    pg.locator("#board-scatter").screenshot(path=str(ART / "readable-desktop-scatter.png"))

    # item 10: node colours on the metric's full range by default, this SEG's range on a click
    open_tab(pg, "SEG explorer")
    pg.wait_for_selector("#seg-graph .seg-node")
    settle(pg)
    colours = """() => [...document.querySelectorAll('#seg-graph .seg-node')].map(n => {
        const probe = (v) => { const s = document.createElement('span'); s.style.color = v; document.body.append(s);
          const c = getComputedStyle(s).color; s.remove(); return c; };
        return {shown: getComputedStyle(n).borderLeftColor, pill: getComputedStyle(n.querySelector('.mean')).backgroundColor,
                full: probe(n.style.getPropertyValue('--node-color')), seg: probe(n.style.getPropertyValue('--node-color-seg'))};
      })"""
    cards = pg.evaluate(colours)
    assert cards and all(c["shown"] == c["full"] == c["pill"] for c in cards), cards
    assert any(c["full"] != c["seg"] for c in cards)
    expect_visible = pg.locator("#seg-graph .seg-legend .range-full")
    assert expect_visible.is_visible() and "(all images)" in expect_visible.inner_text()
    pg.locator("#seg-graph").screenshot(path=str(ART / "readable-desktop-graph-full-range.png"))
    pg.locator("#seg-graph [data-scale=seg]").click()
    pg.wait_for_function("() => document.querySelector('#seg-graph .seg-range') !== null")
    cards = pg.evaluate(colours)
    assert all(c["shown"] == c["seg"] == c["pill"] for c in cards), cards
    assert pg.locator("#seg-graph .seg-legend .range-seg").is_visible()
    assert not pg.locator("#seg-graph .seg-legend .range-full").is_visible()
    pg.locator("#seg-graph").screenshot(path=str(ART / "readable-desktop-graph-seg-range.png"))
    pg.close()


def test_phone_names_listed_and_graph_after_the_seg_picker(browser, server):
    pg = open_page(browser, server, "phone")
    # item 7 on a phone: the plot's labels hidden, every name in the list under it
    pg.locator("#board-scatter").scroll_into_view_if_needed()
    got = pg.evaluate(SCATTER_JS)
    assert not [a for a in got["anns"] if a["shown"]]
    names = pg.locator("#board-ci-note .scatter-names")
    assert names.is_visible()
    text = names.inner_text()
    assert "not drawn on the plot" in text
    assert set(names.locator("b").all_inner_texts()) == set(got["names"]), text
    pg.screenshot(path=str(ART / "readable-phone-scatter.png"))

    # item 12: the SEG graph right after the SEG picker, the finder below it
    open_tab(pg, "SEG explorer")
    pg.wait_for_selector("#seg-graph .seg-node")
    settle(pg)
    pos = pg.evaluate("""() => Object.fromEntries(['#seg-pick', '#seg-header', '#seg-graph', '#metric-a', '#finder']
        .map(s => { const r = document.querySelector(s).getBoundingClientRect();
                    return [s, {top: r.top + scrollY, bottom: r.bottom + scrollY}]; }))""")
    pick, header, graph = pos["#seg-pick"], pos["#seg-header"], pos["#seg-graph"]
    assert 0 <= header["top"] - pick["bottom"] < 40, pos         # only the SEG's header between them
    assert 0 <= graph["top"] - header["bottom"] < 40, pos
    assert pos["#finder"]["top"] > graph["bottom"] and pos["#metric-a"]["top"] > graph["bottom"], pos
    assert graph["top"] < 1400, pos
    assert pg.evaluate("document.documentElement.scrollWidth") <= 390
    pg.screenshot(path=str(ART / "readable-phone-explorer.png"))
    pg.screenshot(path=str(ART / "readable-phone-explorer-full.png"), full_page=True)
    pg.close()
