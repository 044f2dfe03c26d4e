"""The Leaderboard tab's "Slices of SEGs" section in Chromium (issue 38 item 1, TS2's side): open it, read the
heatmap as plotly.js holds it and the table, switch to signed Sep. Numbers are checked against the library run in
this process (the published partition columns are its averages); every wait is on a condition. A
screenshot goes to ``tests/artifacts/``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from app_server import ART, CHROMIUM, chromium_browser, running_app, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]

HEAT = "#board-slices-heatmap .js-plotly-plot"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser-board-slices")
    with running_app(["--host", "127.0.0.1"], d, drop_env=["TS2VIZ_DATA"], timeout=120) as (url, _):
        yield url + "/"


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


def _heat(pg) -> dict:
    return pg.evaluate(f"""() => {{ const el = document.querySelector('{HEAT}');
        return {{x: el.data[0].x, y: el.data[0].y, text: el.data[0].text, dark: el.data[1].z,
                 title: el.data[0].colorbar.title.text}}; }}""")


def test_slices_of_segs_heatmap_and_table(browser, server):
    from playwright.sync_api import expect

    from ts2viz import bundled_scores, load_dataset
    from ts2viz.dataset.tags import seg_slices
    from ts2viz.metametrics.slices import board_slices
    from ts2viz.ui.callbacks.board_slices import BOARD_SLICE_BOOTSTRAP, BOARD_SLICE_STATS

    ds = load_dataset("ts2")
    res = board_slices(ds, bundled_scores(), seg_slices(ds, "partition"), family="partition",
                       stats=BOARD_SLICE_STATS, bootstrap=BOARD_SLICE_BOOTSTRAP)
    pg = browser.new_page(viewport={"width": 1500, "height": 1000})
    pg.set_default_timeout(90_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server)
    pg.wait_for_selector("#leaderboard .virtual-row")
    pg.locator("#board-slices").get_by_text("Slices of SEGs").first.click()
    expect(pg.locator("#board-slices-note")).to_contain_text("on each slice of SEGs of partition")
    pg.wait_for_function(f"() => {{ const el = document.querySelector('{HEAT}'); return el && el.data; }}")
    got = _heat(pg)
    assert got["x"] == ["all<br>164 SEGs", "Synth<br>111 SEGs", "Nat<br>25 SEGs", "Real<br>28 SEGs"]
    assert got["title"] == "ord_avg"
    for r, metric in enumerate(got["y"]):
        want = res.point["ord_avg"][:, res.metrics.index(metric)]
        assert [float(t.strip("()")) for t in got["text"][r]] == [float(f"{v:.2f}") for v in want], metric
    # the table (virtual: the rows in view): the first slice's best Ord first, as the library has it
    best = res.metrics[int(res.point["ord_avg"][0].argmax())]
    expect(pg.locator("#board-slices-table .virtual-row").first).to_contain_text(f"all 164 {best} ")
    # signed Sep: the dark cells are those whose p-value is above 0.05
    pg.locator("#board-slices-stat input").click()
    pg.get_by_role("option", name="signed_sep", exact=True).click()
    pg.wait_for_function(f"() => {{ const el = document.querySelector('{HEAT}');"
                         "return el && el.data && el.data[0].colorbar.title.text === 'signed_sep_avg'; }")
    signed = _heat(pg)
    p = res.pvalue("signed_sep")
    for r, metric in enumerate(signed["y"]):
        dark = [v is not None for v in signed["dark"][r]]
        assert dark == [not v <= 0.05 for v in p[:, res.metrics.index(metric)]], metric
    expect(pg.locator("#board-slices-note")).to_contain_text("(signed_sep = 0)")
    settle(pg)
    pg.locator("#board-slices").scroll_into_view_if_needed()
    pg.screenshot(path=str(ART / "board-slices.png"))
    assert not errors, errors
