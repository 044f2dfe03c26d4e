"""Every heatmap cell's text reads on its own cell (issue 38): WCAG contrast of at least 4.5:1.

Each heatmap the app draws is built from bundled data and taken as the page receives it (the plot's JSON).
The test paints each cell itself, from the figure's own colour scales (plotly.js interpolates a scale
linearly in RGB; the topmost heatmap with a value colours a cell, a blank cell shows the plot's background),
and computes the WCAG 2.x ratio of the cell's text colour on that paint with its own formula, checked
first against known ratios. Nothing here calls ``ts2viz.figures.cell_text`` or the style's contrast helpers.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from ts2viz.ui import load_state
from ts2viz.ui.glue.plots import page_plot

AA = 4.5


def _lum(color: str) -> float:
    h = color.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    c = np.array([int(h[k:k + 2], 16) for k in (0, 2, 4)]) / 255.0
    lin = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(lin @ [0.2126, 0.7152, 0.0722])


def _ratio(a: str, b: str) -> float:
    hi, lo = sorted((_lum(a), _lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_tests_contrast_formula_gives_known_wcag_ratios():
    assert _ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert _ratio("#777", "#ffffff") == pytest.approx(4.48, abs=0.005)      # the classic just-failing grey
    assert _ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.005)   # the lightest grey passing on white
    assert _ratio("#ffffff", "#ffffff") == pytest.approx(1.0)


def _paint(scale, z: float, zmin: float, zmax: float) -> str:
    """The colour of value z on a plotly colour scale (RGB channels interpolated between the stops)."""
    t = 0.0 if zmax == zmin else float(np.clip((z - zmin) / (zmax - zmin), 0, 1))
    pos = np.array([float(p) for p, _ in scale])
    rgb = np.array([[int(c.lstrip("#")[k:k + 2], 16) for k in (0, 2, 4)] for _, c in scale], dtype=float)
    return "#" + "".join(f"{int(round(np.interp(t, pos, rgb[:, k]))):02x}" for k in range(3))


def _check_cells(name: str, fig: dict) -> dict:
    """Assert every cell text's contrast; returns the count of texts per background colour."""
    heats = [t for t in fig["data"] if t["type"] == "heatmap"]
    texts = [t for t in fig["data"] if t["type"] == "scatter" and t.get("mode") == "text"]
    assert heats and texts, f"{name}: no heatmap or no text layer"
    assert not any(t.get("texttemplate") for t in heats), f"{name}: a heatmap prints its own one-colour text"
    back = {"white": "#ffffff"}.get(fig["layout"]["plot_bgcolor"], fig["layout"]["plot_bgcolor"])
    xs, ys = list(heats[0]["x"]), list(heats[0]["y"])
    ranges = []
    for h in heats:
        vals = [v for row in h["z"] for v in row if v is not None]
        ranges.append((h.get("zmin", min(vals, default=0)), h.get("zmax", max(vals, default=0))))
    printed, seen, worst = set(), {}, (np.inf, "")
    for tr in texts:
        assert tr.get("hoverinfo") == "skip", f"{name}: the text layer would take the heatmap's hover and clicks"
        assert len(tr["textfont"]["color"]) == len(tr["text"]) == len(tr["x"]) == len(tr["y"])
        for x, y, s, col in zip(tr["x"], tr["y"], tr["text"], tr["textfont"]["color"]):
            i, j = ys.index(y), xs.index(x)
            bg = back
            for h, (lo, hi) in zip(heats, ranges):
                if h["z"][i][j] is not None:
                    bg = _paint(h["colorscale"], h["z"][i][j], lo, hi)
            r = _ratio(col, bg)
            worst = min(worst, (r, f"{s!r} at ({y}, {x}): {col} on {bg}"))
            seen[bg] = seen.get(bg, 0) + 1
            printed.add((i, j, s))
    assert worst[0] >= AA, f"{name}: contrast {worst[0]:.2f} < {AA}: {worst[1]}"
    # every cell's text is printed (the heatmaps' ``text`` grids say what each cell holds)
    wanted = {(i, j, s) for h in heats if h.get("text") for i, row in enumerate(h["text"]) for j, s in enumerate(row)
              if s}
    assert wanted <= printed, f"{name}: {len(wanted - printed)} cell texts not drawn"
    return seen


def _page(build) -> dict:
    return json.loads(page_plot(build, "png").plot)


@pytest.fixture(scope="module")
def ts2(tmp_path_factory):
    return load_state("ts2", cache_root=tmp_path_factory.mktemp("ts2cache"), fetch_images=False).view()


@pytest.mark.parametrize("family,stat", [("dsg-category", "spearman"), ("t2i-model", "pairwise_acc")])
def test_slice_heatmap_text_reads_on_every_cell_and_marked_cells_keep_their_values(family, stat):
    from ts2viz.figures.slice_heatmap import P_MARK
    from ts2viz.ui.callbacks import humaneval_slices as hs

    fig = _page(lambda: hs.slice_figure("tifa160", "dsg", family, stat))
    seen = _check_cells(f"slices {family} {stat}", fig)
    res = hs.slice_eval("tifa160", "dsg", family)
    v, p = res.point[stat].T, res.pvalue(stat).T
    marked = (~(p <= P_MARK)) & ~np.isnan(v)
    assert marked.any() and (~marked).any()           # both kinds of cell on the real data
    dark = fig["data"][1]["colorscale"][0][1]
    # the marked (not significant) cells: their bracketed values drawn on the dark layer, white
    (values,) = [t for t in fig["data"] if t["type"] == "scatter"]
    on_dark = [c for s, c in zip(values["text"], values["textfont"]["color"]) if s.startswith("(")]
    assert len(on_dark) == int(marked.sum()) == seen[dark] and set(on_dark) == {"#ffffff"}
    # the values on the scale's dark ends are white, on its light middle black: both colours in use
    assert set(values["textfont"]["color"]) == {"#000000", "#ffffff"} or stat == "pairwise_acc"


def test_question_heatmap_text_reads_on_every_cell(ts2):
    from ts2viz.ui.callbacks.questions import nodes as qa_nodes

    seg = next(iter(ts2.dataset))
    _check_cells("questions x nodes", _page(lambda: qa_nodes.node_questions(ts2, "TIFA-BLIP1", seg.id)["figure"]))


def test_correlation_heatmap_text_reads_on_every_cell(ts2):
    from ts2viz.ui.callbacks import correlations as cb_corr

    seen = _check_cells("correlations", _page(lambda: cb_corr.corr_figure(ts2, "paper", "ord")))
    assert len(seen) > 10                              # many cell colours, each cell's own text colour


@pytest.mark.parametrize("families", ["all", "two"])
def test_significance_heatmaps_text_reads_on_every_cell(ts2, families):
    from ts2viz import figures
    from ts2viz.ui.callbacks import common as cb_common
    from ts2viz.ui.callbacks.uncertainty import significance as uc

    fams = None if families == "all" else cb_common.families(ts2)[:2]     # 9 metrics: numbers printed
    pw = uc.significance(ts2, "paper", "ord", families_sel=fams)
    fig = _page(lambda: uc.significance_figure(ts2, "paper", "ord", families_sel=fams, pw=pw))
    seen = _check_cells(f"significance ({families})", fig)
    ns = fig["data"][0]["colorscale"][0][1]
    if families == "two":                              # numbers: non-significant cells' text on their grey too
        assert seen.get(ns, 0) > 0 and len(seen) > 1
    _check_cells(f"significance p ({families})",
                 _page(lambda: figures.significance_heatmap(pw.metrics, pw.difference, pw.pvalue_holm, value="p")))
