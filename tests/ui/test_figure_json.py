"""Every figure as the page receives it: the JSON of the Gradio plot data, checked against Plotly's schema.

Figures reach the page one way only (:func:`ts2viz.ui.glue.plots.page_plot`: builders run returning plain
dicts, serialised as they are). These tests take that JSON, the string the browser parses, and walk
it key by key against plotly's object model (tests/support/plotly_schema.py): a key plotly.js would ignore,
such as a trace's ``line_shape`` (plotly.py's spelling of ``line.shape``), fails here.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from plotly_schema import schema_errors
from ts2viz import figures
from ts2viz.ui.callbacks import common as cb_common, correlations as cb_corr
from ts2viz.ui.callbacks.explorer import nodes as cb_explorer_nodes, view as cb_explorer_view
from ts2viz.ui import load_state
from ts2viz.ui.callbacks.uncertainty import significance as uc_significance
from ts2viz.ui.glue.plots import figure_json, page_plot, plot_cached

LEVELS = {"0": 0, "1a": 1, "1b": 1, "2": 2}
SCORES = {"0": np.array([0.9, 0.8]), "1a": np.array([0.7, 0.6, np.nan]), "1b": np.array([0.75]),
          "2": np.array([0.3, 0.4])}


def sent(plot_data) -> dict:
    """The figure the page gets: the plot data's JSON string, parsed as the browser parses it."""
    assert plot_data is not None and plot_data.type == "plotly"
    return json.loads(plot_data.plot)


def page_json(build) -> dict:
    return sent(page_plot(build, "png"))


# -- the checker itself fails on what plotly.js ignores ------------------------------------------

def test_checker_rejects_keys_plotly_js_ignores():
    good = {"data": [{"type": "scatter", "x": [0, 1], "y": [0, 1], "mode": "lines", "line": {"shape": "hv"}}],
            "layout": {"xaxis2": {"range": [0, 1]}, "legend2": {"orientation": "h"},
                       "annotations": [{"text": "a", "x": 0, "y": 0}]}}
    assert schema_errors(good) == []
    # the spelling plotly.py accepts (and rewrites) but plotly.js does not read
    bad = json.loads(json.dumps(good))
    del bad["data"][0]["line"]
    bad["data"][0]["line_shape"] = "hv"
    assert any("line_shape" in e for e in schema_errors(bad))
    import plotly.graph_objects as go
    assert go.Figure(bad).data[0].line.shape == "hv"          # why a validated copy is no test of this
    # invented keys, misplaced objects and invalid values anywhere in the tree
    for mutate, where in [(lambda f: f["layout"]["annotations"][0].update(fontsize=3), "fontsize"),
                          (lambda f: f["layout"].update(title="a string, not {text}"), "layout.title"),
                          (lambda f: f["data"][0]["line"].update(shape="steps"), "line.shape"),
                          (lambda f: f["layout"].update(xaxis7={"bogus": 1}), "bogus")]:
        f = json.loads(json.dumps(good))
        mutate(f)
        assert any(where in e for e in schema_errors(f)), where


def test_cdf_steps_in_the_json_the_page_gets():
    f = page_json(lambda: figures.cdf_figure(LEVELS, SCORES, [], metric="M"))
    assert schema_errors(f) == []
    nodes = [t for t in f["data"] if t.get("legend") == "legend2"]
    assert [t["name"] for t in nodes] == list(LEVELS)
    for t in nodes:
        assert t["line"]["shape"] == "hv" and "line_shape" not in t
    one = next(t for t in nodes if t["name"] == "1b")            # a one-image node: 0 until 0.75, then 1
    assert one["y"][:2] == [0.0, 1.0] and one["x"][1] == 0.75


def test_only_plain_figures_are_serialised():
    with pytest.raises(TypeError):
        figure_json(figures.empty_figure("x"))              # a go.Figure: built outside build_plain


# -- every builder the app calls, through the app's own path ----------------------------------------

@pytest.fixture(scope="module")
def ts2(tmp_path_factory):
    return load_state("ts2", cache_root=tmp_path_factory.mktemp("ts2cache"), fetch_images=False).view()


def _check(name: str, f: dict) -> None:
    errors = schema_errors(f)
    assert errors == [], f"{name}: {errors[:8]}"


def test_explorer_figures_are_schema_valid(ts2):
    plot = plot_cached(ts2, "svg")
    big = max(ts2.dataset, key=lambda s: s.n_images)
    ma, mb = "CLIPScore", "TIFA-GPT4V"
    v = cb_explorer_view.seg_view(ts2, "paper", big.id, ma, mb, plot=plot)
    _check("walk a", sent(v["walk_fig_a"]))
    _check("walk b", sent(v["walk_fig_b"]))
    w = cb_explorer_view.select_walk(ts2, "paper", big.id, ma, mb, "0", plot=plot)
    _check("walk highlighted", sent(w["walk_fig_a"]))
    n = cb_explorer_nodes.node_separation_view(ts2, big.id, ma, mb, plot=plot)
    for k in ("cdf_a", "cdf_b"):
        f = sent(n[k])
        _check(k, f)
        shapes = [t["line"]["shape"] for t in f["data"] if t.get("legend") == "legend2"]
        assert len(shapes) == len(big.labels) and set(shapes) == {"hv"}
    _check("no metric", sent(cb_explorer_nodes.node_separation_view(ts2, big.id, None, None, plot=plot)["cdf_a"]))


def test_board_and_correlation_figures_are_schema_valid(ts2):
    from ts2viz.ui.tabs.board import board_view

    _, scatter, _ = board_view(ts2, "paper", [cb_common.ALL], "ord_avg", "best first", "png")
    _check("leaderboard scatter", sent(scatter))
    _check("corr heatmap", page_json(lambda: cb_corr.corr_figure(ts2, "paper", "ord")))
    pts = cb_corr.pair_points(ts2, "paper", "ord", "CLIPScore", "TIFA-GPT4V")
    _check("pair scatter", page_json(lambda: figures.pair_scatter(pts, x_name="CLIPScore", y_name="TIFA-GPT4V",
                                                                  stat="ord", highlight=int(pts["seg_id"][0]))))


def test_interval_and_significance_figures_are_schema_valid(ts2):
    from ts2viz.ui.tabs.board import board_view

    fams = cb_common.families(ts2)[:1]
    _, scatter, _ = board_view(ts2, "paper", fams, "ord_avg", "best first", "png", whiskers=True)
    _check("leaderboard scatter with intervals", sent(scatter))
    _check("significance", page_json(lambda: uc_significance.significance_figure(ts2, "paper", "ord", families_sel=fams)))


def test_questions_figure_is_schema_valid(ts2):
    from ts2viz.ui.callbacks.questions import nodes as qa_nodes

    seg = next(iter(ts2.dataset))
    _check("questions x nodes (TS2)", page_json(lambda: qa_nodes.node_questions(ts2, "TIFA-BLIP1", seg.id)["figure"]))


def test_other_figures_are_schema_valid():
    _check("empty", page_json(lambda: figures.empty_figure("nothing")))
    _check("landing", page_json(lambda: figures.landing_figure(LEVELS, SCORES, [("up.png", 0.5)], metric="M")))
    acc = pd.DataFrame({"question": ["is there a cat?", "is it red?"], "0": [1.0, 0.0], "1a": [0.5, np.nan]},
                       index=[1, 2])
    acc.attrs.update(levels={"0": 0, "1a": 1}, n_images={"0": 2, "1a": 1})
    _check("questions x nodes", page_json(lambda: figures.question_node_heatmap(acc, title="t")))
    d = np.array([[0.0, 0.1], [-0.1, 0.0]])
    p = np.array([[np.nan, 0.01], [0.01, np.nan]])
    _check("significance heatmap", page_json(lambda: figures.significance_heatmap(["A", "B"], d, p)))
    _check("significance heatmap (p)", page_json(lambda: figures.significance_heatmap(["A", "B"], d, p, value="p")))
    _check("significance heatmap (marks)",
           page_json(lambda: figures.significance_heatmap(["A", "B"], d, p, cell_text="marks")))


def test_cost_and_human_gold_figures_are_schema_valid():
    from ts2viz.cost import cost_table
    from ts2viz.figures.cost_front import cost_figure
    from ts2viz.ui.callbacks.humaneval import board as gc_board

    t = cost_table(["A", "B", "C"], {"A": 0.1, "B": 1.0, "C": 2.0}, {"ord_avg": np.array([0.5, 0.7, 0.6])})
    front = page_json(lambda: cost_figure(t, "ord_avg"))
    _check("cost", front)
    assert front["data"][1]["line"]["shape"] == "hv" and front["data"][1]["x"] == [0.1, 1.0]
    _check("cost (no costs)", page_json(lambda: cost_figure(cost_table(["A"], {}, {"ord_avg": np.array([0.5])}))))
    gold = page_json(lambda: gc_board.scatter_figure("tifa160", "tifa", "dsg:InstructBLIP"))
    _check("human gold scatter", gold)
    assert len(gold["data"]) == 5 and sum(len(tr["x"]) for tr in gold["data"]) == 800
