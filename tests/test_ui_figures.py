"""Figure builders and the SEG graph HTML: pure functions of data."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ts2viz import figures
from ts2viz.dataset import load_dataset
from ts2viz.stats import ks_separation
from ts2viz.ui.graph import goodness_color, seg_graph_html

LEVELS = {"0": 0, "1a": 1, "1b": 1, "2": 2}
SCORES = {"0": np.array([0.9, 0.8]), "1a": np.array([0.7, 0.6, np.nan]), "1b": np.array([0.75]),
          "2": np.array([0.3, 0.4])}
WALKS = [("0", "1a", "2"), ("0", "1b", "2")]


def test_walk_figure():
    f = figures.walk_figure(LEVELS, SCORES, WALKS, np.array([0.9, 0.5]), metric="M", highlight=0)
    names = [t.name for t in f.data]
    assert names[0] == "all walks (2)" and names[-1] == "images"
    assert any(n.startswith("▶ walk 0") and "ord 0.90" in n for n in names)
    assert any(n.startswith("walk 1") and "ord 0.50" in n for n in names)
    assert len(f.data[-1].y) == 7  # the NaN score is not drawn
    hl = next(t for t in f.data if t.name.startswith("▶"))
    assert hl.line.width == 4 and list(hl.y) == pytest.approx([0.85, 0.65, 0.35])
    json.loads(f.to_json())
    e = figures.walk_figure(LEVELS, {k: np.full(2, np.nan) for k in LEVELS}, WALKS, np.array([np.nan] * 2), metric="M")
    assert "No M scores" in e.layout.annotations[0].text


def test_cdf_figure_draws_ks_where_attained():
    pairs = []
    for a, b in [("0", "1a"), ("1a", "2")]:
        r = ks_separation(SCORES[a], SCORES[b])
        pairs.append(dict(a=a, b=b, statistic=r.statistic, location=r.location, cdf_a=r.cdf_a, cdf_b=r.cdf_b))
    f = figures.cdf_figure(LEVELS, SCORES, pairs, metric="M")
    seg = next(t for t in f.data if t.name.startswith("KS distance"))
    xs = [x for x in seg.x if x is not None]
    assert xs == [pairs[0]["location"]] * 2 + [pairs[1]["location"]] * 2
    ys = [y for y in seg.y if y is not None]
    assert ys[:2] == sorted([pairs[0]["cdf_a"], pairs[0]["cdf_b"]])
    assert {a.text for a in f.layout.annotations} == {"0–1a: 1.00", "1a–2: 1.00"}
    node0 = next(t for t in f.data if t.name.startswith("node 0"))
    assert node0.line.shape == "hv" and list(node0.y)[-2:] == [1.0, 1.0]


def test_heatmap_and_pair_scatter():
    m = pd.DataFrame([[1.0, 0.5], [0.5, 1.0]], index=["A", "B"], columns=["A", "B"])
    f = figures.corr_heatmap(m, title="t", selected=("A", "B"))
    assert f.data[0].text[0][1] == "50" and len(f.layout.shapes) == 1
    pts = pd.DataFrame({"seg_id": [3, 4], "partition": ["Real", "Synth"], "prompt": ["p", "q"],
                        "x": [0.1, 0.2], "y": [0.3, 0.1]})
    s = figures.pair_scatter(pts, x_name="A", y_name="B", stat="ord", highlight=4)
    real = next(t for t in s.data if t.name == "Real")
    assert real.customdata[0][0] == 3
    assert any(t.name == "selected" for t in s.data)
    assert "No SEGs" in figures.pair_scatter(pts.iloc[:0], x_name="A", y_name="B", stat="ord").layout.annotations[0].text


def test_landing_and_board_scatter():
    f = figures.landing_figure(LEVELS, SCORES, [("up.png", 0.72), ("nan.png", float("nan"))], metric="M")
    assert sum(t.type == "box" for t in f.data) == 4
    assert len(f.layout.shapes) == 1 and "up.png: 0.720" in f.layout.annotations[0].text
    board = pd.DataFrame({"metric": ["A", "B"], "family": ["Embedding", "TIFA"], "ord_avg": [0.7, 0.8],
                          "sep_avg": [0.9, 0.85]})
    b = figures.ord_sep_scatter(board)
    assert [t.name for t in b.data] == ["Embedding", "TIFA"]
    assert b.data[0].marker.color == figures.FAMILY_COLORS["Embedding"]


def test_graph_html():
    ds = load_dataset("ts2")
    seg = ds[9]
    means = {lbl: float(i) for i, lbl in enumerate(seg.labels)}
    h = seg_graph_html(seg, node_means=means, metric="M", thumb_uri=lambda fn: f"u:{fn}",
                       walk=("0", "0", "1a", "2b"), selected="1a")
    assert h.count('class="seg-level"') == len(seg.levels)
    assert h.count("<path ") == len(seg.adjacent_pairs())
    assert h.count("edge-walk") == 2  # 0->1a, 1a->2b (the doubled root adds no edge)
    assert h.count("<img ") == sum(min(4, len(n.images)) for n in seg.nodes)
    assert 'data-node="1a"' in h and "selected" in h
    # colours: worst mean red, best green; reversed for lower-is-better
    assert goodness_color(0.0) == "#dc2626" and goodness_color(1.0) == "#16a34a"
    assert goodness_color(math.nan) == "#9ca3af"
    low = seg_graph_html(seg, node_means=means, metric="M", lower_is_better=True)
    assert f'--node-color:{goodness_color(1.0)}' in low.split('data-node="0"')[1][:400]
    # labels are escaped
    assert "<script>" not in seg_graph_html(seg, node_means={}, metric="<script>")


def test_plot_value_sets_download_format():
    pytest.importorskip("gradio")
    from ts2viz.ui.glue import plot_value

    pv = plot_value(figures.empty_figure("x"), "svg")
    cfg = json.loads(pv.plot)["config"]
    assert cfg["toImageButtonOptions"]["format"] == "svg"
    assert json.loads(plot_value(figures.empty_figure("x"), "bogus").plot)["config"]["toImageButtonOptions"]["format"] == "png"


def test_app_args(monkeypatch):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("ts2viz_app", Path(__file__).parents[1] / "app.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "7999")
    monkeypatch.setenv("TS2VIZ_DATA", "/some/folder")
    a = mod.parse_args([])
    assert (a.host, a.port, a.data) == ("0.0.0.0", 7999, "/some/folder")
    b = mod.parse_args(["--host", "127.0.0.1", "--port", "8000", "--data", "ts2"])
    assert (b.host, b.port, b.data) == ("127.0.0.1", 8000, "ts2")
    monkeypatch.delenv("GRADIO_SERVER_NAME")
    monkeypatch.delenv("GRADIO_SERVER_PORT")
    monkeypatch.delenv("TS2VIZ_DATA")
    c = mod.parse_args([])
    assert (c.host, c.port, c.data) == ("127.0.0.1", 7860, "ts2")
    assert mod.main(["--data", "/definitely/not/here"]) == 2
