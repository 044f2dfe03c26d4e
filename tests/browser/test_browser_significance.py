"""A real browser sees the Leaderboard tab's significance panel: the metrics grouped into significance
clusters (the library's clusters, computed here) and the pairwise-accuracy table, in paper mode and after
a switch to spec mode. Starts ``python app.py`` with the bundled data; Debian's Chromium via Playwright;
a screenshot goes to ``tests/artifacts/``."""
from __future__ import annotations

from pathlib import Path

import pytest

from app_server import ART, CHROMIUM, browser_page, running_app

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium")]


def expected(mode):
    from ts2viz import bundled_scores, compute, load_dataset
    from ts2viz.metametrics.permutation import leaderboard_clusters

    return leaderboard_clusters(compute(load_dataset("ts2"), bundled_scores(), policy=mode), "ord_avg").members()


def shown_clusters(pg) -> list[list[str]]:
    return pg.evaluate("""() => [...document.querySelectorAll('#board-significance-panel .sig-cluster')].map(
        box => [...box.querySelectorAll('.sig-chip')].map(c => c.firstChild.textContent.trim()))""")


def test_significance_panel_in_browser(tmp_path):
    with running_app(["--host", "127.0.0.1"], tmp_path, drop_env=["TS2VIZ_DATA"], timeout=120) as (url, _):
        with browser_page() as pg:
            pg.goto(url + "/")
            pg.wait_for_selector("#leaderboard .virtual-row")
            assert pg.locator("#board-significance-panel .sig-cluster").count() == 0     # off by default
            pg.locator("#board-significance input[type=checkbox]").check()
            pg.wait_for_selector("#board-significance-panel .sig-cluster")
            assert shown_clusters(pg) == expected("paper")
            rows = pg.locator("#board-significance-panel table.sig-pacc tbody tr")
            assert rows.count() == 19
            pg.locator("#board-significance-panel").scroll_into_view_if_needed()
            pg.screenshot(path=str(ART / "board-significance.png"), full_page=True)
            # the mode switch redraws the panel with the spec-mode clusters
            spec = expected("spec")
            pg.locator("#mode label", has_text="spec").click()
            pg.wait_for_function("""n => document.querySelector('#board-significance-panel')
                .textContent.includes('(spec mode)')""", arg=None)
            assert shown_clusters(pg) == spec
            # the cost view: typed costs, the front in the note and on the plot
            pg.locator("#board-cost").get_by_text("Cost: quality against").click()
            pg.locator("#cost-text textarea").fill("CLIPScore=0.02, ALIGNScore=0.03, DSG-InstructBLIP=1.5, VIEScore=2")
            pg.locator("#cost-draw").click()
            pg.wait_for_selector("#cost-plot .js-plotly-plot")
            pg.wait_for_function("() => document.querySelector('#cost-note').textContent.includes('Pareto front')")
            note = pg.locator("#cost-note").inner_text()
            assert "VIEScore" not in note and "ALIGNScore" in note and "spec mode" in note
            front = pg.evaluate("""() => document.querySelector('#cost-plot .js-plotly-plot').data
                .find(t => t.name === 'Pareto front').text""")
            assert "VIEScore" not in front and front[0] == "CLIPScore"
            pg.locator("#cost-plot").scroll_into_view_if_needed()
            pg.screenshot(path=str(ART / "board-cost.png"), full_page=False)
            assert not pg.page_errors
