"""Views of one SEG: scores by error count per walk, node score CDFs with their KS distances, uploads.

The third view shows where uploaded images land against the nodes' scores.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..display import fmt_score, fmt_x100, plural
from ..metametrics.definitions import node_means
from .labels import KS_LABEL_SIZE, KS_SLOT_PX, ks_label_slots
from .style import (HIGHLIGHT, INK, METRIC_A, TITLE_PX, TOOLBAR_PX, WALK_COLORS, bottom_legends, empty_figure, figure,
                    node_colors, on_white, stack_legends, title_lines, walk_color)


# -- SEG explorer ---------------------------------------------------------------------------------

def walk_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
                walks: Sequence[Sequence[str]], walk_ord: np.ndarray, *, metric: str,
                highlight: int | None = None, top: int = 6, lower_is_better: bool = False,
                node_files: Mapping[str, Sequence[str]] | None = None, color: str = METRIC_A):
    """Per-walk Spearman plot: score against error count.

    Every walk is drawn as a line through its nodes' mean scores (grey); the ``top`` worst walks (lowest
    ord) and the ``highlight``-ed walk are drawn in colour with their ord in the legend. The individual
    image scores are drawn as points at their node's error count.

    Parameters
    ----------
    node_levels : Mapping[str, int]
        Node label -> error count.
    node_scores : Mapping[str, numpy.ndarray]
        Node label -> its images' scores.
    walks : sequence of sequence of str
        The SEG's walks (node labels).
    walk_ord : numpy.ndarray
        Each walk's Ord (fractions; shown x100).
    metric : str
        The metric's name (axis title).
    highlight : int, optional
        A walk to draw thick, in the highlight colour.
    top : int, default 6
        How many of the worst walks to draw in colour.
    lower_is_better : bool, default False
        The metric's direction (an arrow on the axis).
    node_files : Mapping[str, sequence of str], optional
        Node label -> its images' file names (hover text).
    color : str, default METRIC_A
        Unused colour of the metric (kept for callers that pass it).

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message when the SEG has no score.

    Notes
    -----
    NaN policy: a node without a scored image has no mean (its walk points are gaps); NaN images are
    not drawn; walks with a NaN Ord sort last.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.figures.seg_views import walk_figure
    >>> from ts2viz.figures.style import plain_figures
    >>> with plain_figures():
    ...     fig = walk_figure({"0": 0, "1": 1, "2": 2}, {"0": [0.9, 0.8], "1": [0.6], "2": [0.3, 0.4]},
    ...                       [["0", "1", "2"]], np.array([1.0]), metric="CLIPScore")
    >>> [trace["name"] for trace in fig.data]
    ['all 1 walk', 'walk 0: 0>1>2 · ord 100.0', 'node 0', 'node 1', 'node 2', 'images']
    """
    levels = dict(node_levels)
    means = node_means(node_scores)
    if not any(np.isfinite(list(means.values()))):
        return empty_figure(f"No {metric} scores on this SEG")
    labels = list(levels)
    # a small horizontal offset per node within its level, so that nodes do not overlap
    offs = {}
    for lv in sorted(set(levels.values())):
        same = [l for l in labels if levels[l] == lv]
        for i, l in enumerate(same):
            offs[l] = lv + (i - (len(same) - 1) / 2) * min(0.5 / max(len(same), 1), 0.12)

    def path_xy(walk):
        xs, ys = [], []
        for lbl in dict.fromkeys(walk):
            xs.append(offs[lbl])
            ys.append(None if math.isnan(means[lbl]) else means[lbl])
        return xs, ys

    bx, by = [], []
    for w in walks:
        xs, ys = path_xy(w)
        bx += xs + [None]
        by += ys + [None]
    traces = [dict(type="scatter", x=bx, y=by, mode="lines", name=f"all {plural(len(walks), 'walk')}",
                   line=dict(color="rgba(107,114,128,0.25)", width=1), hoverinfo="skip")]
    ords = np.asarray(walk_ord, dtype=float)
    order = [int(i) for i in np.argsort(np.where(np.isnan(ords), np.inf, ords), kind="stable")[:top]]
    if highlight is not None and 0 <= highlight < len(walks):
        if highlight in order:
            order.remove(highlight)
        order.append(int(highlight))
    for wi in order:
        xs, ys = path_xy(walks[wi])
        hl = wi == highlight
        traces.append(dict(
            type="scatter", x=xs, y=ys, mode="lines+markers",
            name=f"{'▶ ' if hl else ''}walk {wi}: {'>'.join(dict.fromkeys(walks[wi]))} · ord {fmt_x100(ords[wi])}",
            # a walk's colour follows its number, so that it is the same in the two metrics' plots side by side
            line=dict(color=HIGHLIGHT if hl else walk_color(wi), width=4 if hl else 1.8),
            marker=dict(size=8 if hl else 5), opacity=1.0 if hl or highlight is None else 0.6,
            hovertemplate=f"walk {wi} · ord {fmt_x100(ords[wi])}<br>node mean %{{y:.3f}}<extra></extra>"))
    px, py, ptxt, pcol = [], [], [], []
    colors = node_colors(levels)
    rng = np.random.default_rng(0)
    for lbl in labels:
        v = np.asarray(node_scores[lbl], dtype=float)
        files = list(node_files[lbl]) if node_files else [""] * len(v)
        for s, fn in zip(v, files):
            if np.isnan(s):
                continue
            px.append(float(offs[lbl] + rng.uniform(-0.04, 0.04)))
            py.append(float(s))
            ptxt.append(f"node {lbl}<br>{fn}")
            pcol.append(colors[lbl])
    # the legend keys the dots' colours by node (the dots are one trace: one legend click shows or hides them)
    shown = [lbl for lbl in labels if np.isfinite(np.asarray(node_scores[lbl], dtype=float)).any()]
    for i, lbl in enumerate(shown):
        traces.append(dict(type="scatter", x=[None], y=[None], mode="markers", name=f"node {lbl}",
                           legendgroup="images", hoverinfo="skip",
                           marker=dict(size=7, color=colors[lbl], line=dict(width=1, color=on_white(colors[lbl]))),
                           **({"legendgrouptitle": {"text": "images, by node"}} if i == 0 else {})))
    traces.append(dict(type="scatter", x=px, y=py, mode="markers", name="images", text=ptxt,
                       legendgroup="images", showlegend=not shown,
                       marker=dict(size=6, color=pcol, opacity=0.85,
                                   line=dict(width=1, color=[on_white(c) for c in pcol])),
                       hovertemplate="%{text}<br>score %{y:.3f}<extra></extra>"))
    arrow = "↓" if lower_is_better else "↑"
    return figure(traces, dict(
          xaxis=dict(title=dict(text="error count"), tickmode="array", tickvals=sorted(set(levels.values()))),
          yaxis=dict(title=dict(text=f"{metric} {arrow}")),
          legend=dict(orientation="h", yanchor="top", y=-0.2, x=0, font=dict(size=10)),
          margin=dict(b=40)), title=f"{metric}: score by error count, per walk", height=460)


CDF_Y_RANGE = (-0.02, 1.04)


def cdf_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
               ks_pairs: Sequence[Mapping], *, metric: str, lower_is_better: bool = False,
               max_labels: int = 10):
    """Empirical CDF of each node's scores, with each adjacent pair's KS distance where it is attained.

    One colour per node (shades of its error level's colour, :func:`~ts2viz.figures.style.node_colors`);
    each KS distance is a vertical segment. Pairs with a negative signed distance (the node with more
    errors scores higher) are drawn in red. The ``max_labels`` lowest (signed) distances get a text label
    (x100), each in its own vertical slot so that labels never overlap; every distance shows on hover.
    The legend is a compact row below.

    Parameters
    ----------
    node_levels : Mapping[str, int]
        Node label -> error count.
    node_scores : Mapping[str, numpy.ndarray]
        Node label -> its images' scores.
    ks_pairs : sequence of Mapping
        Dicts with keys ``a``, ``b`` (node labels), ``statistic``, ``location``, ``cdf_a``, ``cdf_b``
        (as in :class:`ts2viz.metametrics.definitions.KSResult`) and optionally ``signed`` (the KS distance
        signed by the direction of the pair's mean gap, see :func:`ts2viz.metametrics.walks.signed`).
    metric : str
        The metric's name (axis title).
    lower_is_better : bool, default False
        The metric's direction (an arrow on the axis).
    max_labels : int, default 10
        How many distances get a text label.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message when the SEG has no score.

    Notes
    -----
    NaN policy: NaN scores are dropped; a pair with a NaN statistic or location is not drawn.
    """
    levels = dict(node_levels)
    finite = [np.asarray(v, float)[~np.isnan(np.asarray(v, float))] for v in node_scores.values()]
    allv = np.concatenate(finite) if finite else np.array([])
    if allv.size == 0:
        return empty_figure(f"No {metric} scores on this SEG")
    lo, hi = float(allv.min()), float(allv.max())
    pad = (hi - lo) * 0.05 or 0.05
    colors = node_colors(levels)
    traces, ann = [], []
    for lbl, v in node_scores.items():
        v = np.sort(np.asarray(v, float)[~np.isnan(np.asarray(v, float))])
        if v.size == 0:
            continue
        xs = np.concatenate([[lo - pad], v, [hi + pad]])
        ys = np.concatenate([[0.0], np.arange(1, v.size + 1) / v.size, [1.0]])
        lv = levels[lbl]
        traces.append(dict(type="scatter", x=xs.tolist(), y=ys.tolist(), mode="lines",
                           name=str(lbl), legend="legend2", line=dict(color=colors[lbl], width=2, shape="hv"),
                           hovertemplate=f"node {lbl} · {plural(lv, 'error')} · {plural(v.size, 'image')}"
                                         "<br>score %{x:.3f}<br>F %{y:.2f}<extra></extra>"))
    valid = [p for p in ks_pairs if p.get("statistic") is not None and np.isfinite(p["statistic"])
             and np.isfinite(p.get("location", np.nan))]

    def signed_of(p) -> float:
        sg = p.get("signed")
        return float(p["statistic"]) if sg is None or not np.isfinite(sg) else float(sg)

    specs, heights = bottom_legends([("", ["KS", "KS reversed"]), ("node", [t["name"] for t in traces])])
    legend_px = sum(heights)
    height = 440 + legend_px
    top = TOOLBAR_PX + TITLE_PX * len(title_lines(f"{metric}: node score CDFs and KS distances")) + 10
    bottom = 48 + legend_px
    plot_px = height - top - bottom
    y_span = CDF_Y_RANGE[1] - CDF_Y_RANGE[0]
    slot = KS_SLOT_PX / plot_px * y_span
    y_first = 0.0 + slot / 2
    n_slots = int((1.0 - slot / 2 - y_first) / slot) + 1
    ranked = sorted(range(len(valid)), key=lambda i: (signed_of(valid[i]), i))[:min(max_labels, n_slots)]
    spans = [tuple(sorted([float(valid[i]["cdf_a"]), float(valid[i]["cdf_b"])])) for i in ranked]
    slots = dict(zip(ranked, ks_label_slots(spans, n_slots, y_first, slot)))
    seg_xy = {True: ([], [], []), False: ([], [], [])}     # reversed? -> x, y, hover text
    lead_x, lead_y = [], []
    for i, p in enumerate(valid):
        d, x, sg = float(p["statistic"]), float(p["location"]), signed_of(p)
        y0, y1 = sorted([float(p["cdf_a"]), float(p["cdf_b"])])
        sx, sy, stxt = seg_xy[sg < 0]
        sx += [x, x, None]
        sy += [y0, y1, None]
        t = (f"KS {p['a']}–{p['b']} = {fmt_x100(d)} (signed {fmt_x100(sg)})<br>at score {fmt_score(x)}"
             + ("<br>reversed: the node with more errors scores higher" if sg < 0 else ""))
        stxt += [t, t, None]
        if i in slots:
            ly = y_first + slots[i] * slot
            right = (x - (lo - pad)) / ((hi + pad) - (lo - pad)) > 0.6     # near the right edge: label to the left
            ann.append(dict(x=x, y=ly, text=f"{p['a']}–{p['b']} {fmt_x100(sg, 0)}", showarrow=False,
                            xanchor="right" if right else "left", xshift=-4 if right else 4, yanchor="middle",
                            font=dict(size=KS_LABEL_SIZE, color=HIGHLIGHT if sg < 0 else INK),
                            bgcolor="rgba(255,255,255,0.85)", borderpad=1, name="ks-label"))
            if not y0 <= ly <= y1:   # a faint line from the segment to its label
                lead_x += [x, x, None]
                lead_y += [y1 if ly > y1 else y0, ly, None]
    for rev in (False, True):
        sx, sy, stxt = seg_xy[rev]
        if sx:
            col = HIGHLIGHT if rev else INK
            traces.append(dict(type="scatter", x=sx, y=sy, mode="lines+markers",
                               name="KS reversed" if rev else "KS", text=stxt,
                               line=dict(color=col, width=1.5, dash="dot"), marker=dict(size=5, color=col),
                               hovertemplate="%{text}<extra></extra>"))
    if lead_x:
        traces.append(dict(type="scatter", x=lead_x, y=lead_y, mode="lines", showlegend=False, hoverinfo="skip",
                           name="label leaders", line=dict(color="rgba(107,114,128,0.45)", width=1, dash="dot")))
    arrow = "↓" if lower_is_better else "↑"
    return figure(traces, dict(annotations=ann, margin=dict(t=top, b=bottom), **stack_legends(specs, heights, height),
                               xaxis=dict(title=dict(text=f"{metric} {arrow}"), range=[lo - pad, hi + pad]),
                               yaxis=dict(title=dict(text="cumulative fraction of node images"),
                                          range=list(CDF_Y_RANGE))),
                  title=f"{metric}: node score CDFs and KS distances", height=height)


def landing_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
                   uploads: Sequence[tuple[str, float]], *, metric: str, lower_is_better: bool = False):
    """Where uploaded images land against a SEG's node score distributions.

    Each node's scores as a box with points (x = node, ordered by label); each upload as a dashed
    horizontal line across all nodes, labelled with its name.

    Parameters
    ----------
    node_levels : Mapping[str, int]
        Node label -> error count (empty: no SEG to compare with; the uploads are drawn as points).
    node_scores : Mapping[str, numpy.ndarray]
        Node label -> its images' scores.
    uploads : sequence of (str, float)
        Name and score of each uploaded image.
    metric : str
        The metric's name (axis title).
    lower_is_better : bool, default False
        The metric's direction (an arrow on the axis).

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message when nothing is scored.

    Notes
    -----
    NaN policy: NaN node scores and uploads without a finite score are not drawn.
    """
    levels = dict(node_levels)
    colors = node_colors(levels)
    traces, shapes, ann = [], [], []
    for lbl, v in node_scores.items():
        v = np.asarray(v, float)
        v = v[~np.isnan(v)]
        if v.size == 0:
            continue
        col = colors[lbl]
        traces.append(dict(type="box", y=v.tolist(), x=[lbl] * int(v.size), name=f"node {lbl}",
                           marker=dict(color=col, size=5), line=dict(color=col), boxpoints="all", jitter=0.4,
                           pointpos=0, showlegend=False, hovertemplate=f"node {lbl}<br>%{{y:.3f}}<extra></extra>"))
    ups = [(n, float(s)) for n, s in uploads if s is not None and np.isfinite(s)]
    for k, (name, s) in enumerate(ups):
        col = HIGHLIGHT if k == 0 else WALK_COLORS[k % len(WALK_COLORS)]
        shapes.append(dict(type="line", xref="paper", x0=0, x1=1, y0=s, y1=s, line=dict(color=col, width=2, dash="dash")))
        ann.append(dict(xref="paper", x=1, y=s, xanchor="right", yanchor="bottom", showarrow=False,
                        text=f"{name}: {s:.3f}", font=dict(size=11, color=col), bgcolor="rgba(255,255,255,0.8)"))
    if not traces and not ups:
        return empty_figure("Nothing scored yet")
    if not traces:  # no SEG to compare with: the uploads as points
        traces.append(dict(type="scatter", x=[n for n, _ in ups], y=[s for _, s in ups], mode="markers",
                           marker=dict(size=12, color=HIGHLIGHT), showlegend=False))
    arrow = "↓" if lower_is_better else "↑"
    xaxis = dict(title=dict(text="node (error count = leading number)" if levels else "upload"), type="category")
    if levels:
        xaxis.update(categoryorder="array", categoryarray=list(levels))
    title = f"Uploaded images vs this SEG's nodes ({metric})" if levels else f"Uploaded images ({metric})"
    return figure(traces, dict(shapes=shapes, annotations=ann, xaxis=xaxis,
                               yaxis=dict(title=dict(text=f"{metric} {arrow}"))), title=title, height=440, legend=False)
