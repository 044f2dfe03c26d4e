"""A real browser sees how sure the leaderboard is: interval whiskers, intervals in the table, the
significance heatmap and the paired comparison of two metrics.

Starts ``python app.py`` with no ``--data`` (the bundled TS2 metadata and published scores; no images
needed) and drives Debian's Chromium with Playwright. The numbers the page shows are checked against
:mod:`ts2viz.statistics` run in this process on the same data. Screenshots (1500 px wide) go to
``tests/artifacts/``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app_server import CHROMIUM, browser_page, docs_shot, running_app
from test_browser import _row, _shot

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                 reason="Debian's chromium is not installed at /usr/bin/chromium "
                                        "(apt-get install chromium; .ci/run does this)")]


@pytest.fixture(scope="module")
def expected():
    """The statistics, computed here from the library (not by the app)."""
    from ts2viz import bundled_scores, compute, load_dataset
    from ts2viz.metametrics import comparison as pcmp, intervals as bs, ranks as ri

    mm = compute(load_dataset("ts2"), bundled_scores(), policy="paper")
    boot = bs.bootstrap(mm)
    return {"mm": mm, "boot": boot, "pairwise": pcmp.pairwise(mm, "ord_avg", boot=boot),
            "pairwise_sep": pcmp.pairwise(mm, "sep_avg", boot=boot),
            "ranks": ri.rank_intervals(mm, "ord_avg", boot=boot),
            "compare": pcmp.compare(mm, "TIFA-GPT4V", "CLIPScore", boot=boot)}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser-ci")
    with running_app(["--host", "127.0.0.1"], d, drop_env=["TS2VIZ_DATA"], timeout=120) as (url, _):
        yield {"url": url + "/", "dir": d}


@pytest.fixture(scope="module")
def page(server):
    with browser_page() as pg:
        pg.goto(server["url"])
        pg.wait_for_selector("#leaderboard .virtual-row")
        yield pg


def _traces(pg, elem_id: str) -> list[dict]:
    """The traces plotly.js drew in a gr.Plot (its graph div's data)."""
    pg.wait_for_selector(f"#{elem_id} .js-plotly-plot")
    return pg.evaluate(f"""() => document.querySelector('#{elem_id} .js-plotly-plot').data.map(t => ({{
        name: t.name, text: t.text, x: t.x, y: t.y, z: t.z,
        ex: t.error_x ? {{plus: t.error_x.array, minus: t.error_x.arrayminus}} : null,
        ey: t.error_y ? {{plus: t.error_y.array, minus: t.error_y.arrayminus}} : null}}))""")


def _whiskers(traces) -> dict[str, tuple[float, float, float, float]]:
    """metric -> (ord lo, ord hi, sep lo, sep hi) as drawn (x100)."""
    out = {}
    for t in traces:
        if not t["ex"] or t["ex"]["plus"] is None:
            continue
        for i, name in enumerate(t["text"]):
            out[name] = (t["x"][i] - t["ex"]["minus"][i], t["x"][i] + t["ex"]["plus"][i],
                         t["y"][i] - t["ey"]["minus"][i], t["y"][i] + t["ey"]["plus"][i])
    return out


def test_leaderboard_intervals(page, expected):
    from playwright.sync_api import expect

    pg = page
    boot = expected["boot"]
    # whiskers are on by default: every metric gets its interval on both axes, as the library computes it
    pg.wait_for_function("() => { const g = document.querySelector('#board-scatter .js-plotly-plot');"
                         " return g && g.data && g.data.some(t => t.error_x && t.error_x.array); }")
    drawn = _whiskers(_traces(pg, "board-scatter"))
    assert set(drawn) == set(boot.metrics)
    for m, (olo, ohi, slo, shi) in drawn.items():      # the scatter shows x100 to one decimal
        _, lo, hi = boot.interval(m, "ord_avg")
        assert (olo, ohi) == pytest.approx((round(lo * 100, 1), round(hi * 100, 1)), abs=1e-9)
        _, lo, hi = boot.interval(m, "sep_avg")
        assert (slo, shi) == pytest.approx((round(lo * 100, 1), round(hi * 100, 1)), abs=1e-9)
    expect(pg.locator("#board-ci-note")).to_contain_text("10,000 resamples")
    assert pg.locator("#board-scatter g.errorbar").count() >= len(boot.metrics)
    pg.locator("#board-scatter").scroll_into_view_if_needed()
    _shot(pg, "ci-01-scatter-whiskers", full=False)
    docs_shot(pg, "leaderboard-intervals")

    # off: the same points without whiskers; on again
    pg.locator("#board-ci-plot input").uncheck()
    pg.wait_for_function("() => !document.querySelector('#board-scatter .js-plotly-plot').data"
                         ".some(t => t.error_x && t.error_x.array)")
    assert pg.locator("#board-scatter g.errorbar path").count() == 0
    pg.locator("#board-ci-plot input").check()
    pg.wait_for_function("() => document.querySelector('#board-scatter .js-plotly-plot').data"
                         ".some(t => t.error_x && t.error_x.array)")

    # intervals and rank intervals in the table
    pg.locator("#board-ci-table input").check()
    expect(_row(pg, "leaderboard")).to_contain_text("[")
    expect(pg.locator("#leaderboard")).to_contain_text("median rank [95%]")
    # the wider table scrolls inside its block: the page itself does not get wider than the window
    assert pg.evaluate("document.documentElement.scrollWidth") <= 1500
    _, v, lo, hi = (None, *boot.interval("CLIPScore", "ord_avg"))
    ranks = expected["ranks"]
    k = ranks.metrics.index("CLIPScore")
    row = pg.locator("#leaderboard .virtual-row", has_text="CLIPScore").first
    row.scroll_into_view_if_needed()
    text = row.inner_text()
    assert f"{v * 100:.1f} [{lo * 100:.1f}, {hi * 100:.1f}]" in text, text
    assert f"{ranks.median[k]:.0f} [{ranks.low[k]:.0f}, {ranks.high[k]:.0f}]" in text, text
    expect(pg.locator("#board-ci-note")).to_contain_text("rank by Ord · all SEGs")
    pg.locator("#leaderboard").scroll_into_view_if_needed()
    _shot(pg, "ci-02-table-intervals", full=False)

    # the CSV holds fractions with lo/hi columns and the rank interval
    with pg.expect_download() as dl:
        pg.locator("#board-csv").click()
    import pandas as pd

    csv = pd.read_csv(dl.value.path()).set_index("metric")
    assert {"ord_avg_lo", "ord_avg_hi", "sep_real_lo", "rank_median", "rank_lo", "rank_hi"} <= set(csv.columns)
    for m in boot.metrics:
        _, lo, hi = boot.interval(m, "sep_nat")
        assert (csv.loc[m, "sep_nat_lo"], csv.loc[m, "sep_nat_hi"]) == pytest.approx((lo, hi), abs=1e-12)
    pg.locator("#board-ci-table input").uncheck()
    expect(_row(pg, "leaderboard")).not_to_contain_text("[")
    assert not pg.page_errors, pg.page_errors


def test_significance_heatmap(page, expected):
    from playwright.sync_api import expect

    pg = page
    pg.get_by_role("tab", name="Correlations").click()
    expect(pg.locator("#sig-heatmap .js-plotly-plot")).to_be_visible()
    expect(pg.locator("#sig-heatmap")).to_contain_text("Which orderings are significant")
    pw = expected["pairwise"]
    M = len(pw.metrics)
    n_sig = int(np.triu(pw.pvalue_holm < 0.05, 1).sum())
    expect(pg.locator("#sig-note")).to_contain_text(f"{n_sig} of {M * (M - 1) // 2} pairs")
    traces = _traces(pg, "sig-heatmap")
    # the coloured trace has a value exactly where the Holm-corrected p < 0.05
    coloured = traces[1]
    names = list(coloured["x"])
    marked = {(names[i], names[j]) for i, r in enumerate(coloured["z"]) for j, z in enumerate(r) if z is not None}
    want = {(a, b) for i, a in enumerate(pw.metrics) for j, b in enumerate(pw.metrics)
            if i != j and pw.pvalue_holm[i, j] < 0.05}
    assert marked == want
    # the pair caption: TIFA-GPT4V (y) against CLIPScore (x), as the library compares them
    c = expected["compare"]
    k = c.cells.index("ord_avg")
    cap = pg.locator("#pair-compare")
    expect(cap).to_contain_text("TIFA-GPT4V − CLIPScore")
    expect(cap).to_contain_text(f"[{c.low[k] * 100:.1f}, {c.high[k] * 100:.1f}]")
    expect(cap).to_contain_text(f"p = {c.pvalue[k]:.3f}" if c.pvalue[k] >= 0.001 else f"p = {c.pvalue[k]:.1e}")
    pg.locator("#heatmap").scroll_into_view_if_needed()
    _shot(pg, "ci-03-significance", full=False)
    docs_shot(pg, "significance-heatmap")
    pg.locator("#pair-plot").scroll_into_view_if_needed()
    _shot(pg, "ci-04-pair-compare", full=False)

    # another statistic: the heatmap follows
    pg.locator("#corr-stat").get_by_label("Sep (KS)").check()
    ps = expected["pairwise_sep"]
    n_sep = int(np.triu(ps.pvalue_holm < 0.05, 1).sum())
    expect(pg.locator("#sig-note")).to_contain_text(f"{n_sep} of {M * (M - 1) // 2} pairs")
    expect(pg.locator("#sig-heatmap")).to_contain_text("Sep · all SEGs")
    _shot(pg, "ci-05-significance-full")
    assert not pg.page_errors, pg.page_errors
