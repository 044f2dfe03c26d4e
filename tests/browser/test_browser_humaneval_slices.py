"""The Human ratings tab's slices section in Chromium (issue 38 part 6): pick a tag family, click a heatmap
cell and see its images, flip the reliable switch, read the agreement table, open a triage row. Numbers are
checked against the library run in this process; every wait is on a condition. Screenshots go to
``tests/artifacts/``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from app_server import ART, CHROMIUM, chromium_browser, docs_shot, open_tab, running_app, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser-gold-slices")
    with running_app(["--host", "127.0.0.1"], d, drop_env=["TS2VIZ_DATA"], timeout=120) as (url, _):
        yield url + "/"


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


def _rows(pg, table_id: str) -> list[str]:
    return pg.evaluate(f"""() => Array.from(document.querySelectorAll('#{table_id} .virtual-row'))
        .map(r => r.innerText.replace(/\\s+/g, ' ').trim())""")


HEAT = "#gold-slices-heatmap .js-plotly-plot"


def _click_cell(pg, slice_name: str, metric: str) -> None:
    """A real mouse click on the centre of one heatmap cell (found by its customdata)."""
    pg.wait_for_function(f"() => {{ const el = document.querySelector('{HEAT}'); return el && el._sliceClick; }}",
                         timeout=60_000)
    pg.locator("#gold-slices-heatmap").scroll_into_view_if_needed()
    at = pg.evaluate(f"""([s, m]) => {{ const el = document.querySelector('{HEAT}');
        const t = el.data[0], fl = el._fullLayout, r = el.getBoundingClientRect();
        const j = t.y.indexOf(m), i = t.customdata[j].findIndex(c => c[0] === s);
        return {{x: r.left + fl._size.l + fl.xaxis.l2p(i), y: r.top + fl._size.t + fl.yaxis.l2p(j)}}; }}""",
                     [slice_name, metric])
    pg.mouse.move(at["x"], at["y"])
    pg.mouse.click(at["x"], at["y"])


def test_slices_reliable_agreement_triage(browser, server):
    from playwright.sync_api import expect

    from ts2viz.gold import load_gold
    from ts2viz.gold.tags import rated_tags, slices
    from ts2viz.metaeval.reliable import reliable_prompts

    g = load_gold("tifa160")
    sl = slices(g, rated_tags(g), "dsg-category")
    rel = reliable_prompts(g, 0.5)
    color = sl.masks[sl.names.index("attribute/color")]
    metric = "tifa_mplug-large"

    pg = browser.new_page(viewport={"width": 1500, "height": 1000})
    pg.set_default_timeout(90_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server)
    pg.wait_for_selector("#leaderboard .virtual-row")
    open_tab(pg, "Human ratings")
    expect(pg.locator("#gold-board")).to_contain_text("dsg:PaLI-17B", timeout=240_000)
    pg.locator("#gold-slices").get_by_text("Slices, raters' agreement and triage").click()
    note = pg.locator("#gold-slices-note")
    expect(note).to_contain_text("slices of t2i-model", timeout=120_000)
    # pick a tag family
    pg.locator("#gold-slices-family input").click()
    pg.get_by_role("option", name="dsg-category", exact=True).click()
    expect(note).to_contain_text("slices of dsg-category", timeout=120_000)
    pg.wait_for_function(f"""() => {{ const el = document.querySelector('{HEAT}');
        return el && el.data && el.data[0].customdata[0].length === {len(sl)}; }}""", timeout=120_000)
    # click a cell: its images
    _click_cell(pg, "attribute/color", metric)
    cell_note = pg.locator("#gold-slices-cell-note")
    expect(cell_note).to_contain_text(f"n = {int(color.sum())} images", timeout=60_000)
    expect(cell_note).to_contain_text("attribute/color")
    rows = pg.locator("#gold-slices-rows")
    expect(rows).to_contain_text(metric)
    first = int(color.argmax())
    expect(rows).to_contain_text(g.image_ids[first])
    assert pg.locator("#gold-slices-rows").get_by_text("image_id").count() >= 1
    # agreement: per rating set and T2I model
    agree = pg.locator("#gold-agreement")
    expect(agree).to_contain_text("stable_diffusion_v1_5", timeout=120_000)
    all_row = next(r for r in _rows(pg, "gold-agreement") if r.startswith("all "))
    assert all_row.split(" ")[1] == str(len(g))
    settle(pg)
    pg.screenshot(path=str(ART / "gold-slices-desktop.png"), full_page=True)
    docs_shot(pg, "human-ratings-slices")
    # the reliable switch: every view recomputed on the reliable prompts
    pg.locator("#gold-reliable input").check()
    expect(note).to_contain_text(f"Reliable prompts only: reliable prompts: {len(rel.prompt_ids)} of 160",
                                 timeout=120_000)
    expect(pg.locator("#gold-agreement-note")).to_contain_text("Reliable prompts only", timeout=120_000)
    kept = int(rel.image_mask.sum())
    pg.wait_for_function(f"""() => Array.from(document.querySelectorAll('#gold-agreement .virtual-row'))
        .some(r => r.innerText.replace(/\\s+/g, ' ').trim().startsWith('all {kept} '))""", timeout=120_000)
    _click_cell(pg, "attribute/color", metric)
    expect(cell_note).to_contain_text(f"n = {int((color & rel.image_mask).sum())} images", timeout=60_000)
    # a triage row opens its image
    tri = pg.locator("#gold-triage-raters")
    expect(tri).to_contain_text("variance", timeout=120_000)
    tri.scroll_into_view_if_needed()
    iid = _rows(pg, "gold-triage-raters")[0].split(" ")[0]            # image_id is the first column
    assert iid in g.image_ids
    pg.locator("#gold-triage-raters .virtual-row").first.get_by_text(iid, exact=True).click()
    detail = pg.locator("#gold-triage-detail")
    expect(detail).to_contain_text("Ratings dsg", timeout=60_000)
    expect(detail).to_contain_text(f"Image {iid}")
    expect(detail).to_contain_text(g.prompt_text(iid))
    expect(pg.locator("#gold-triage-scores")).to_contain_text("clipscore_vitb32")
    sw = pg.evaluate("document.documentElement.scrollWidth")
    assert sw <= 1500, f"the section is {sw} px wide"
    settle(pg)
    pg.screenshot(path=str(ART / "gold-slices-reliable-desktop.png"), full_page=True)
    assert not errors, errors
    assert pg.locator(".toast-body").count() == 0
    pg.close()
