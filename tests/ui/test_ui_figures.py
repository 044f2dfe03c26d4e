"""Figure builders and the SEG graph HTML: pure functions of data."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ts2viz import figures
from ts2viz.dataset import load_dataset
from ts2viz.metametrics.definitions import ks_separation
from ts2viz.ui.views.graph import goodness_color, seg_graph_html

LEVELS = {"0": 0, "1a": 1, "1b": 1, "2": 2}
SCORES = {"0": np.array([0.9, 0.8]), "1a": np.array([0.7, 0.6, np.nan]), "1b": np.array([0.75]),
          "2": np.array([0.3, 0.4])}
WALKS = [("0", "1a", "2"), ("0", "1b", "2")]


def test_walk_figure():
    f = figures.walk_figure(LEVELS, SCORES, WALKS, np.array([0.9, 0.5]), metric="M", highlight=0)
    names = [t.name for t in f.data]
    assert names[0] == "all 2 walks" and names[-1] == "images"
    assert any(n.startswith("▶ walk 0") and "ord 90.0" in n for n in names)   # x100, as in the paper
    assert any(n.startswith("walk 1") and "ord 50.0" in n for n in names)
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
    seg = next(t for t in f.data if t.name == "KS")
    xs = [x for x in seg.x if x is not None]
    assert xs == [pairs[0]["location"]] * 2 + [pairs[1]["location"]] * 2
    ys = [y for y in seg.y if y is not None]
    assert ys[:2] == sorted([pairs[0]["cdf_a"], pairs[0]["cdf_b"]])
    assert {a.text for a in f.layout.annotations} == {"0–1a 100", "1a–2 100"}
    node0 = next(t for t in f.data if t.name == "0")
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
    # colours: worst mean orange, best blue (no red against green: colour-blind safe); reversed for lower-is-better
    assert goodness_color(0.0) == figures.GOODNESS_SCALE[0][1] and goodness_color(1.0) == figures.GOODNESS_SCALE[-1][1]
    assert goodness_color(math.nan) == "#9ca3af"
    low = seg_graph_html(seg, node_means=means, metric="M", lower_is_better=True)
    assert f'--node-color:{goodness_color(1.0)}' in low.split('data-node="0"')[1][:400]
    # labels are escaped
    assert "<script>" not in seg_graph_html(seg, node_means={}, metric="<script>")


def test_plot_value_sets_download_format():
    pytest.importorskip("gradio")
    from ts2viz.ui.glue.plots import page_plot

    pv = page_plot(lambda: figures.empty_figure("x"), "svg")
    cfg = json.loads(pv.plot)["config"]
    assert cfg["toImageButtonOptions"]["format"] == "svg"
    assert json.loads(page_plot(lambda: figures.empty_figure("x"), "bogus").plot)["config"]["toImageButtonOptions"]["format"] == "png"


def test_app_args(monkeypatch):
    from ts2viz.cli import build_parser, main
    from ts2viz.cli.app import with_env_defaults

    def parse_args(argv):
        return with_env_defaults(build_parser().parse_args(["app", *argv]))

    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "7999")
    monkeypatch.setenv("TS2VIZ_DATA", "/some/folder")
    a = parse_args([])
    assert (a.host, a.port, a.data) == ("0.0.0.0", 7999, "/some/folder")
    b = parse_args(["--host", "127.0.0.1", "--port", "8000", "--data", "ts2"])
    assert (b.host, b.port, b.data) == ("127.0.0.1", 8000, "ts2")
    monkeypatch.delenv("GRADIO_SERVER_NAME")
    monkeypatch.delenv("GRADIO_SERVER_PORT")
    monkeypatch.delenv("TS2VIZ_DATA")
    c = parse_args([])
    assert (c.host, c.port, c.data) == ("127.0.0.1", 7860, "ts2")
    assert main(["app", "--data", "/definitely/not/here"]) == 2


# -- node colours, KS labels, legend, title (issue 14 item 4) -------------------------------------

def _lab(color: str) -> np.ndarray:
    """CIELAB (D65) of a #rrggbb colour: the distance between two is how different they look."""
    rgb = np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    lin = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ lin
    f = [np.cbrt(t) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz / np.array([0.95047, 1.0, 1.08883])]
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_node_colours_distinct_shades_of_their_level():
    import colorsys
    import itertools

    ds = load_dataset("ts2")
    for seg in ds:
        levels = {n.label: n.level for n in seg.nodes}
        cols = figures.node_colors(levels)
        assert set(cols) == set(levels)
        for a, b in itertools.combinations(cols, 2):
            # a just-noticeable difference is about 2.3 CIELAB units: shades of one level clearly
            # different, nodes of two levels more so
            apart = np.linalg.norm(_lab(cols[a]) - _lab(cols[b]))
            assert apart > (8 if levels[a] == levels[b] else 20), (seg.id, a, b, cols[a], cols[b])
        for lv in set(levels.values()):
            base = colorsys.rgb_to_hls(*(int(figures.level_color(lv, max(levels.values()))[i:i + 2], 16) / 255
                                         for i in (1, 3, 5)))[0]
            for lbl in (x for x in levels if levels[x] == lv):
                h = colorsys.rgb_to_hls(*(int(cols[lbl][i:i + 2], 16) / 255 for i in (1, 3, 5)))[0]
                turn = min(abs(h - base), 1 - abs(h - base)) * 360
                assert turn <= figures.SHADE_HUE_TURN / 2 + 1, (seg.id, lbl)      # a shade of the level's hue
    # levels stay distinct when there are more levels than palette colours
    assert len({figures.level_color(lv, 12) for lv in range(13)}) == 13


def _plot_px(fig) -> tuple[float, float]:
    """Height in pixels of a figure's plot area, and its y data range."""
    lay = fig.layout
    return lay.height - lay.margin.t - lay.margin.b, tuple(lay.yaxis.range)


def test_ks_labels_never_overlap_on_largest_ts2_seg(tmp_path):
    from ts2viz.ui.callbacks import board as cb_board
    from ts2viz.ui.callbacks.explorer import nodes as cb_explorer_nodes
    from ts2viz.ui import load_state

    app = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    big = max(app.dataset, key=lambda s: s.n_images)
    for metric in ("CLIPScore", "TIFA-GPT4V", "VIEScore"):
        f = cb_explorer_nodes.cdf_figure(app, big.id, metric)
        labels = [a for a in f.layout.annotations if a.name == "ks-label"]
        assert 6 <= len(labels) <= 10
        h_px, (y0, y1) = _plot_px(f)
        boxes = []
        for a in labels:
            yc = (a.y - y0) / (y1 - y0) * h_px
            half = (a.font.size * 1.3 + 2 * a.borderpad + 2) / 2           # text line, padding, border
            boxes.append((yc - half, yc + half))
            assert 0 <= yc - half and yc + half <= h_px                      # inside the plot
        boxes.sort()
        # vertically disjoint, so no two labels overlap at any plot width (phone or desktop)
        assert all(b[0] >= a[1] - 1e-9 for a, b in zip(boxes, boxes[1:])), (metric, boxes)
        # the labelled pairs are those with the lowest signed KS, and every pair is on hover
        pairs = cb_explorer_nodes.ks_pairs(app, big.id, metric)
        lowest = sorted(pairs, key=lambda p: p["signed"])[:len(labels)]
        assert {a.text.rsplit(" ", 1)[0] for a in labels} == {f"{p['a']}–{p['b']}" for p in lowest}
        hover = sum(len([t for t in tr.text if t]) // 2 for tr in f.data if tr.name in ("KS", "KS reversed"))
        assert hover == len(pairs)


def test_cdf_legend_is_compact_rows_below_and_title_clear_of_toolbar(tmp_path):
    from ts2viz.ui.callbacks import board as cb_board
    from ts2viz.ui.callbacks.explorer import nodes as cb_explorer_nodes
    from ts2viz.ui import load_state

    app = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    big = max(app.dataset, key=lambda s: s.n_images)
    f = cb_explorer_nodes.cdf_figure(app, big.id, "CLIPScore")
    lay = f.layout
    nodes = [t for t in f.data if t.name in big.labels]
    assert [t.name for t in nodes] == list(big.labels)                 # one entry per node, its label
    assert len({t.line.color for t in nodes}) == len(nodes)
    legends = [lay.legend, lay.legend2]
    assert {t.legend for t in nodes} == {"legend2"}
    for lg in legends:
        # horizontal rows in the bottom margin, not a column taking width from the plot
        assert lg.orientation == "h" and lg.yref == "container" and lg.yanchor == "top"
        assert 0 < lg.y * lay.height <= lay.margin.b - 40                # under the axis and its title
    assert lay.margin.r <= 16 and lay.margin.b <= 48 + 140
    # the rows reserved for the node legend fit a 320-px phone figure: 18 entries a grid of columns as
    # wide as the widest entry (line symbol 30 px + gaps + text), measured with a real font if present
    measure = _measure() or (lambda s: figures.text_width(s, 10))
    col = 45 + max(measure(t.name) * 1.1 for t in nodes)              # 11-px legend font
    per_row = int((320 - measure("node") * 1.1 - 12) // col)
    rows_px = (lay.legend2.y * lay.height) - 0                        # space from its top to the figure bottom
    assert rows_px >= math.ceil(len(nodes) / per_row) * 20
    # plotly's modebar (26 px of buttons at the top) shows on hover: the title starts below it
    assert lay.title.pad.t >= 28 and lay.title.yref == "container"
    assert lay.margin.t >= lay.title.pad.t + 18


def test_reversed_pairs_drawn_apart():
    pairs = []
    for a, b, sign in [("0", "1a", 1.0), ("1a", "2", -1.0)]:
        r = ks_separation(SCORES[a], SCORES[b])
        pairs.append(dict(a=a, b=b, statistic=r.statistic, location=r.location, cdf_a=r.cdf_a, cdf_b=r.cdf_b,
                          signed=sign * r.statistic))
    f = figures.cdf_figure(LEVELS, SCORES, pairs, metric="M")
    rev = next(t for t in f.data if t.name == "KS reversed")
    assert [x for x in rev.x if x is not None] == [pairs[1]["location"]] * 2
    assert {a.text for a in f.layout.annotations} == {"0–1a 100", "1a–2 -100"}


# -- Ord-vs-Sep scatter (issue 14 item 6) -------------------------------------------------------------

def _label_boxes(fig, annotations, width_px, measure):
    """Pixel boxes (x0, y0, x1, y1; y down) of text annotations on a plot area ``width_px`` wide."""
    h_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    (x0, x1), (y0, y1) = annotations["xaxis.range"], annotations["yaxis.range"]
    out = []
    for a in annotations["annotations"]:
        w, h = measure(a["text"]) + 2 * a.get("borderpad", 1), a["font"]["size"] * 1.2 + 2 * a.get("borderpad", 1)
        ax = (a["x"] - x0) / (x1 - x0) * width_px
        ay = (y1 - a["y"]) / (y1 - y0) * h_px
        bx = {"left": ax, "right": ax - w, "center": ax - w / 2}[a["xanchor"]]
        by = {"top": ay, "bottom": ay - h, "middle": ay - h / 2}[a["yanchor"]]
        out.append((bx, by, bx + w, by + h))
    return out


def _measure():
    """Text width in pixels at 10 px, measured with a real font (DejaVu Sans, what Chromium falls back to
    here), or None."""
    from PIL import ImageFont

    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",):
        try:
            font = ImageFont.truetype(path, 10)
        except OSError:
            continue
        return lambda s: font.getlength(s)
    return None


def test_board_scatter_labels_apart_and_zoom_to_cluster(tmp_path):
    from ts2viz.metametrics import results as metametrics
    from ts2viz.scores import bundled_scores
    from ts2viz.ui.callbacks import board as cb_board
    from ts2viz.ui.callbacks.explorer import nodes as cb_explorer_nodes
    from ts2viz.ui import load_state

    app = load_state("ts2", cache_root=tmp_path, fetch_images=False).view()
    board = cb_board.leaderboard(app, "paper")
    fig = figures.ord_sep_scatter(board)
    # the points are the engine's values x100
    ref = metametrics.compute(app.dataset, bundled_scores(), policy="paper").leaderboard().set_index("metric")
    xs = {n: x for t in fig.data for n, x in zip(t.text, t.x)}
    assert xs["CLIPScore"] == pytest.approx(round(100 * ref.loc["CLIPScore", "ord_avg"], 1))
    menu = fig.layout.updatemenus[0]
    views = {b.label.split(" (")[0]: b.args[0] for b in menu.buttons}
    assert set(views) == {"All metrics", "Zoom to cluster"}
    assert views["All metrics"]["xaxis.range"] == list(fig.layout.xaxis.range)
    # the cluster view holds the 0.70-0.80 cluster of the published board, not the outliers
    cx, cy = views["Zoom to cluster"]["xaxis.range"], views["Zoom to cluster"]["yaxis.range"]
    for m in ("TIFA-GPT4V", "DSG-GPT4V", "CLIPScore", "DSG-mPLUG"):
        assert cx[0] <= 100 * ref.loc[m, "ord_avg"] <= cx[1] and cy[0] <= 100 * ref.loc[m, "sep_avg"] <= cy[1]
    for m in ("DSG-Fuyu", "TIFA-Fuyu", "VIEScore"):
        assert not cx[0] <= 100 * ref.loc[m, "ord_avg"] <= cx[1]
    # narrower than the full view (LLMScore-Over, at 57.7, is inside the cluster with the web DSG rows)
    assert cx[1] - cx[0] < (views["All metrics"]["xaxis.range"][1] - views["All metrics"]["xaxis.range"][0]) / 1.5
    measure = _measure() or (lambda s: figures.text_width(s, 10))
    for name, view in views.items():
        labelled = [a["text"] for a in view["annotations"]]
        assert len(labelled) >= 12, name                       # most metrics named in place
        for width in (figures.LABEL_PLOT_WIDTH, 2 * figures.LABEL_PLOT_WIDTH):
            boxes = _label_boxes(fig, view, width, measure)
            for i, a in enumerate(boxes):
                for b in boxes[i + 1:]:
                    assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (name, width, a, b)
    # the estimate used for placing is no smaller than the measured width
    if _measure():
        import string

        for text in [*board["metric"], *string.printable[:95]]:
            assert figures.text_width(text, 10) >= _measure()(text), text


def test_graph_colours_on_the_metric_full_range():
    """Issue 21 item 10: node means 0.510 and 0.530 of a metric whose scores span 0 to 1 get near colours
    on the full range (the default, ``--node-color``), and the two ends of the scale on this SEG's own
    range (``--node-color-seg``, what the legend's "this SEG" shows)."""
    import re

    seg = load_dataset("ts2")[9]
    means = {lbl: (0.510 if i == 0 else 0.530) for i, lbl in enumerate(seg.labels)}

    def rgb(c):
        return np.array([int(c[k:k + 2], 16) for k in (1, 3, 5)], dtype=float)

    def colours(h, var):
        return {m.group(1): rgb(m.group(2)) for m in re.finditer(
            r'data-node="([^"]+)"[^>]*?' + var + r':(#[0-9a-f]{6})', h)}

    h = seg_graph_html(seg, node_means=means, metric="M", full_range=(0.0, 1.0))
    full, own = colours(h, "--node-color"), colours(h, "--node-color-seg")
    a, b = seg.labels[0], seg.labels[1]
    ends = np.linalg.norm(rgb(goodness_color(0.0)) - rgb(goodness_color(1.0)))
    assert np.linalg.norm(full[a] - full[b]) < 0.05 * ends          # near colours on the full range
    assert np.linalg.norm(full[a] - rgb(goodness_color(0.51))) < 2
    assert np.linalg.norm(own[a] - own[b]) > 0.9 * ends             # the scale's two ends on the SEG's range
    assert "0.000 … 1.000 (all images)" in h and "0.510 … 0.530 (this SEG)" in h
    assert 'data-scale="full"' in h and 'data-scale="seg"' in h
    # lower is better: the full range is turned round too
    low = colours(seg_graph_html(seg, node_means=means, metric="M", full_range=(0.0, 1.0), lower_is_better=True),
                  "--node-color")
    assert np.linalg.norm(low[a] - rgb(goodness_color(0.49))) < 2
    # without a full range, one colour per card on the SEG's range (as before)
    plain = seg_graph_html(seg, node_means=means, metric="M")
    assert "--node-color-seg" not in plain and "data-scale" not in plain
    assert np.linalg.norm(colours(plain, "--node-color")[a] - rgb(goodness_color(0.0))) < 2
