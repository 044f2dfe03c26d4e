"""The Human ratings tab in a real browser, at desktop (1500 px) and phone (390 px) width: the TIFA160
leaderboard with the DSG README's numbers and intervals, the other tasks, the metric-vs-human scatter
(one trace per T2I model, one point per image) and the cross-gold ranks; a visitor's score file for
TIFA160 joining the leaderboard, scatter and cross-gold view; a mouse click on a scatter point showing
that image's prompt, ratings, scores and released VQA answers. Numbers are checked against the library
run in this process. Screenshots go to ``tests/artifacts/``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from app_server import ART, CHROMIUM, chromium_browser, docs_shot, open_tab, running_app, settle

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
    from ts2viz.ui.callbacks.humaneval import board as gc_board

    return gc_board.clusters("tifa160", "dsg", "spearman")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser-gold")
    with running_app(["--host", "127.0.0.1"], d, drop_env=["TS2VIZ_DATA"], timeout=120) as (url, _):
        yield url + "/"


@pytest.fixture(scope="module")
def browser():
    yield from chromium_browser()


def _rows(pg, table_id: str) -> list[str]:
    return pg.evaluate(f"""() => Array.from(document.querySelectorAll('#{table_id} .virtual-row'))
        .map(r => r.innerText.replace(/\\s+/g, ' ').trim())""")


@pytest.mark.parametrize("name", list(WIDTHS))
def test_human_ratings_tab(browser, server, expected, expected_clusters, name, tmp_path):
    from playwright.sync_api import expect

    w = WIDTHS[name]
    pg = browser.new_page(viewport={"width": w, "height": 900 if w < 800 else 1000})
    pg.set_default_timeout(90_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server)
    pg.wait_for_selector("#leaderboard .virtual-row")
    open_tab(pg, "Human ratings")                 # a narrow window folds tabs into Gradio's overflow menu
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
    settle(pg)
    pg.screenshot(path=str(ART / f"gold-tab-{name}.png"), full_page=True)
    if name == "desktop":
        docs_shot(pg, "human-ratings")
    # another task: the pair-wise leaderboard
    pg.locator("#gold-task").get_by_label("pair-wise").check()
    expect(board).to_contain_text("acc_eq", timeout=60_000)
    pair_row = next(r for r in _rows(pg, "gold-board") if r.startswith("dsg:PaLI-17B"))
    assert f"{e['pairwise_acc']:.3f} [{e['pairwise_acc_lo']:.3f}, {e['pairwise_acc_hi']:.3f}]" in pair_row
    upload_and_click(pg, name, tmp_path)
    # another rated set
    pg.locator("#gold-set").get_by_label("imagenhub-t2i").check()
    expect(board).to_contain_text("viescore_sc:gpt4v_0shot", timeout=240_000)
    settle(pg)
    pg.screenshot(path=str(ART / f"gold-tab-imagenhub-{name}.png"), full_page=False)
    assert not errors, errors
    pg.close()


def upload_and_click(pg, name: str, tmp_path) -> None:
    """A score file for TIFA160 (this session only), then a real mouse click on a point of the scatter."""
    import numpy as np
    import pandas as pd
    from playwright.sync_api import expect

    from ts2viz.gold import load_gold

    g = load_gold("tifa160")
    rng = np.random.default_rng(0)
    mine = g.scores["dsg:PaLI-17B"].to_numpy() + 0.05 * rng.normal(size=len(g))
    f = tmp_path / "mygold.csv"
    pd.DataFrame({"image_id": g.image_ids, "MyGold": mine}).to_csv(f, index=False)
    pg.locator("#gold-task").get_by_label("point-wise").check()
    pg.locator("#gold-upload").get_by_text("Add your metric's scores").click()
    pg.locator("#gold-upload-file input[type=file]").set_input_files(str(f))
    # the file component shows the name (its stem and extension may render in separate elements)
    expect(pg.locator("#gold-upload-file")).to_contain_text("mygold", timeout=60_000)
    pg.locator("#gold-upload-btn").click()
    expect(pg.locator("#gold-upload-msg")).to_contain_text("Loaded 1 metric for tifa160", timeout=120_000)
    board = pg.locator("#gold-board")
    expect(board).to_contain_text("MyGold (yours)", timeout=120_000)
    from ts2viz.metaeval import evaluate_rated

    want = evaluate_rated(g.with_scores(pd.DataFrame({"MyGold": mine})), rating_set="dsg", metrics=["MyGold"],
                          ceiling=False).frame().iloc[0]
    row = next(r for r in _rows(pg, "gold-board") if r.startswith("MyGold (yours)"))
    assert f"{want['spearman']:.3f} [{want['spearman_lo']:.3f}, {want['spearman_hi']:.3f}]" in row
    expect(pg.locator("#gold-cross")).to_contain_text("MyGold (yours)", timeout=60_000)
    # the scatter of the visitor's metric
    pg.locator("#gold-metric input").click()
    pg.get_by_role("option", name="MyGold", exact=True).click()
    pg.wait_for_function("""() => { const el = document.querySelector('#gold-scatter .js-plotly-plot');
        return el && el.layout && String(el.layout.title.text || '').startsWith('MyGold'); }""", timeout=120_000)
    pg.locator("#gold-scatter").scroll_into_view_if_needed()
    # a real click on the first point of the first trace, at its pixel position (the listener is attached
    # after each redraw: wait for it)
    pg.wait_for_function("() => { const el = document.querySelector('#gold-scatter .js-plotly-plot');"
                         " return el && el._goldClick; }", timeout=60_000)
    at = pg.evaluate("""() => { const el = document.querySelector('#gold-scatter .js-plotly-plot');
        const fl = el._fullLayout, t = el.data[0], r = el.getBoundingClientRect();
        return {x: r.left + fl._size.l + fl.xaxis.l2p(t.x[0]), y: r.top + fl._size.t + fl.yaxis.l2p(t.y[0]),
                id: t.customdata[0]}; }""")
    pg.mouse.move(at["x"], at["y"])
    pg.mouse.click(at["x"], at["y"])
    box = pg.locator("#gold-image textarea, #gold-image input").first
    expect(box).not_to_have_value("", timeout=60_000)
    iid = box.input_value()                 # the point clicked (another may lie on top of the first)
    assert iid in g.image_ids
    detail = pg.locator("#gold-detail")
    expect(detail).to_contain_text(g.prompt_text(iid), timeout=60_000)
    model = g.images.set_index("image_id").loc[iid, "t2i_model"]
    expect(detail).to_contain_text(f"T2I model: {model}")
    expect(detail).to_contain_text("Ratings dsg")
    expect(pg.locator("#gold-placeholder")).to_contain_text(iid)
    scores = pg.locator("#gold-detail-scores")
    expect(scores).to_contain_text("MyGold (yours)")
    i = g.image_ids.index(iid)
    assert f"clipscore_vitb32 {g.scores['clipscore_vitb32'].iloc[i]:.4g}" in _rows(pg, "gold-detail-scores")
    # the released answers in the Questions tab's question table (issue 19): the scatter shows MyGold, which
    # has none, so the set's first answer-based metric's
    answers = pg.locator("#gold-answers")
    expect(answers).to_contain_text("Questions of dsg:mPLUG-large", timeout=60_000)
    qa = g.qa_answers[g.qa_answers["image_id"] == iid]
    first = qa[(qa["question_set"] == "dsg") & (qa["vqa_model"] == "mPLUG-large")].sort_values("question_id").iloc[0]
    expect(answers).to_contain_text(str(first["question"]))
    heads = [h.strip() for h in answers.locator("thead th").all_inner_texts()]
    assert {"#", "question", "expected", "answer (raw)", "mapped to", "correct", "parents", "counts"} <= set(heads), heads
    sw = pg.evaluate("document.documentElement.scrollWidth")
    assert sw <= pg.viewport_size["width"], f"the image details are {sw} px wide"
    settle(pg)
    pg.locator("#gold-image").scroll_into_view_if_needed()
    pg.screenshot(path=str(ART / f"gold-click-{name}.png"), full_page=False)
    pg.locator("#gold-upload").scroll_into_view_if_needed()
    pg.screenshot(path=str(ART / f"gold-upload-{name}.png"), full_page=False)
    answers.screenshot(path=str(ART / f"gold-answers-{name}.png"))
