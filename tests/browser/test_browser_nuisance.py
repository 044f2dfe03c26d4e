"""The nuisance overlay in Chromium: the app started with the long table of ``ts2viz nuisance`` (a tiny CLIP
on a generated dataset), the explorer's Nuisance tab read as plotly.js holds it (the figure JSON the page
received, ``gd.data``, and what plotly made of it, ``_fullData``), the gallery of original and
transformed images, a live run on the current SEG, and the leaderboard's stability table. Screenshots go
to tests/artifacts/ (and docs/screenshots/nuisance.png)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from app_server import ART, CHROMIUM, browser_page, docs_shot, open_tab, running_app, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium "
                                        "(apt-get install chromium; .ci/run does this)")]

TRANSFORMS = "jpeg:quality=30,blur:sigma=2,brightness:factor=1.2,hflip"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from tiny_models import tiny
    from ts2viz.cli import main
    from ui_helpers import write_dataset, write_scores

    d = tmp_path_factory.mktemp("nuisance-browser")
    write_dataset(d / "ds", big_image=False)
    scores = write_scores(d, d / "ds")
    spec = f"clipscore:{tiny('clip')}"
    assert main(["nuisance", "--metric", spec, "--dataset", str(d / "ds"), "--transforms", TRANSFORMS, "--out",
                 str(d / "n.csv"), "--cache", str(d / "cache"), "--resamples", "500", "-q"]) == 0
    with running_app(["--data", str(d / "ds"), "--scores", str(scores), "--nuisance", str(d / "n.csv"),
                      "--host", "127.0.0.1"], d) as (url, log):
        yield {"url": url + "/", "spec": spec, "dir": d, "log": log}


def test_the_overlay_as_the_browser_has_it(server):
    from playwright.sync_api import expect

    from ts2viz.dataset import load_dataset
    from ts2viz.nuisance import read_nuisance

    ds = load_dataset(server["dir"] / "ds")
    run = read_nuisance(server["dir"] / "n.csv", ds).runs[0]
    idx = {f: i for i, f in enumerate(run.file_names)}
    seg = ds[1]
    with browser_page() as pg:
        pg.goto(server["url"])
        pg.wait_for_selector("#leaderboard .virtual-row")
        open_tab(pg, "SEG explorer")
        pg.locator("#seg-search input, #seg-search textarea").first.fill("blue birds")
        expect(pg.locator("#seg-header")).to_contain_text("SEG 1")
        pg.get_by_role("tab", name="Nuisance").click()
        expect(pg.locator("#nuisance-note")).to_contain_text("under 4 transforms")
        expect(pg.locator("#nuisance-dist .js-plotly-plot")).to_be_visible()
        # the node distributions as plotly.js holds them: the traces the page received, and plotly's reading
        got = pg.evaluate("""() => {
            const gd = document.querySelector('#nuisance-dist .js-plotly-plot');
            return {data: gd.data.map(t => ({type: t.type, name: t.name, x: t.x, y: t.y})),
                    full: gd._fullData.map(t => ({type: t.type, name: t.name, visible: t.visible,
                                                  boxpoints: t.boxpoints})),
                    boxmode: gd._fullLayout.boxmode};
        }""")
        assert got["boxmode"] == "group"
        assert [t["name"] for t in got["data"]] == ["clean", "jpeg:quality=30", "blur:sigma=2", "brightness:factor=1.2",
                                                    "hflip †"]
        assert all(t["type"] == "box" and t["visible"] is True and t["boxpoints"] == "all" for t in got["full"])
        for k, t in enumerate(got["data"]):
            col = run.clean if k == 0 else run.transformed[:, k - 1]
            for node in seg.nodes:
                ys = [y for x, y in zip(t["x"], t["y"]) if x == node.label]
                want = [col[idx[im.file_name]] for im in node.images]
                np.testing.assert_allclose(ys, want, rtol=1e-12)
        # the walk plot with its band: the fill between the band's edges, as plotly drew it
        band = pg.evaluate("""() => {
            const gd = document.querySelector('#nuisance-walk .js-plotly-plot');
            return gd._fullData.filter(t => t.legendgroup === 'band').map(t => ({fill: t.fill, y: t.y}));
        }""")
        assert [b["fill"] for b in band] == ["none", "tonexty"]
        assert all(hi >= lo for hi, lo in zip(band[0]["y"], band[1]["y"]))
        assert any(hi > lo for hi, lo in zip(band[0]["y"], band[1]["y"]))
        # the gallery follows the explorer's node and the chosen transform: each image, then its copy
        pg.locator("#seg-graph [data-node='1a']").click()
        pg.locator("#nuisance-transform input").click()
        pg.get_by_role("option", name="blur:sigma=2", exact=True).click()
        gal = pg.locator("#nuisance-gallery")
        expect(gal.locator("img")).to_have_count(6)
        expect(gal).to_contain_text("001-02.jpg · clean")
        expect(gal).to_contain_text("001-02.jpg · blur:sigma=2")
        i = idx["images/001-02.jpg"]
        expect(gal).to_contain_text(f"blur:sigma=2 {run.transformed[i, 1]:.4f}")
        settle(pg)
        pg.screenshot(path=str(ART / "nuisance-overlay.png"), full_page=True)
        pg.evaluate("() => document.querySelector('#nuisance-note').scrollIntoView({block: 'start'})")
        docs_shot(pg, "nuisance")
        assert not pg.page_errors, pg.page_errors

        # a live run on the current SEG (operator mode: a typed spec), with its progress, then its rows
        pg.locator("#nuisance-spec input, #nuisance-spec textarea").first.fill(server["spec"])
        pg.locator("#nuisance-run").click()
        expect(pg.locator("#nuisance-msg")).to_contain_text("Stress-tested", timeout=240_000)
        expect(pg.locator("#nuisance-note")).to_contain_text("this session's live run")
        open_tab(pg, "Leaderboard")
        pg.locator("#board-stability").get_by_text("Stability under nuisance").first.click()
        table = pg.locator("#stability-table")
        expect(table).to_contain_text("this session")
        expect(table).to_contain_text("shared")
        expect(table).to_contain_text("blur:sigma=2 *")
        settle(pg)
        pg.locator("#board-stability").scroll_into_view_if_needed()
        pg.screenshot(path=str(ART / "nuisance-stability.png"), full_page=True)
        assert not pg.page_errors, pg.page_errors
