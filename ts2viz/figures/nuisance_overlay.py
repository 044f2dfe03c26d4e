"""Figures of a nuisance test on one SEG (plain Plotly dicts, through :func:`ts2viz.figures.style.figure`).

- :func:`node_distributions`: each node's clean scores with its transformed copies overlaid, one box
  with its points per transform;
- :func:`walk_band`: a walk's clean node means with the *nuisance band* around them (per node, the
  lowest and highest node mean over the clean scores and every meaning-keeping transform) and one
  transform's node means, over the SEG's other walks in grey.

Nothing heavy is imported here: plotly only when a ``go.Figure`` is asked for (outside
:func:`ts2viz.figures.style.plain_figures`).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..display import fmt_x100
from . import style as F

#: colours of the transforms (clean is the app's metric colour)
VARIANT_COLORS = ("#d97706", "#0891b2", "#db2777", "#65a30d", "#7c3aed", "#dc2626", "#0d9488", "#b45309",
                  "#475569", "#2563eb", "#a16207", "#be185d")
BAND = "rgba(79,70,229,0.16)"


def _rgba(color: str, alpha: float) -> str:
    h = color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _mean(v) -> float:
    a = np.asarray(v, dtype=np.float64)
    a = a[np.isfinite(a)]
    return float(a.mean()) if a.size else float("nan")


def variant_color(k: int) -> str:
    """The colour of the ``k``-th transform (0-based) in every nuisance figure.

    Parameters
    ----------
    k : int
        The transform's position among the transforms shown.

    Returns
    -------
    str
        A colour of :data:`VARIANT_COLORS` (cycling).
    """
    return VARIANT_COLORS[k % len(VARIANT_COLORS)]


def node_distributions(node_levels: Mapping[str, int], clean: Mapping[str, Sequence[float]],
                       transformed: Mapping[str, Mapping[str, Sequence[float]]], *, metric: str,
                       lower_is_better: bool = False, node_files: Mapping[str, Sequence[str]] | None = None,
                       changes_meaning: Sequence[str] = ()):
    """Each node's score distribution, clean and under each transform side by side.

    One box with its points per transform and node, grouped by node in error order.

    Parameters
    ----------
    node_levels : Mapping[str, int]
        Node label -> error count (the order of the x axis).
    clean : Mapping[str, sequence of float]
        Node label -> the node's clean scores.
    transformed : Mapping[str, Mapping[str, sequence of float]]
        Transform spec -> (node label -> the node's scores under it).
    metric : str
        The metric's name (axis title).
    lower_is_better : bool, default False
        The metric's direction (an arrow on the axis).
    node_files : Mapping[str, sequence of str], optional
        Node label -> its images' file names (hover text).
    changes_meaning : sequence of str, default ()
        The transforms to mark with a dagger (they may change what the image shows).

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure.

    Notes
    -----
    NaN policy: non-finite scores are not drawn.
    """
    labels = list(node_levels)
    traces = []
    variants = [("clean", clean, F.METRIC_A)] + [(t, v, variant_color(k)) for k, (t, v) in enumerate(transformed.items())]
    for k, (name, by_node, color) in enumerate(variants):
        xs, ys, text = [], [], []
        for lbl in labels:
            vals = np.asarray(by_node.get(lbl, ()), dtype=np.float64)
            files = list(node_files[lbl]) if node_files else [""] * len(vals)
            for s, fn in zip(vals, files):
                if np.isfinite(s):
                    xs.append(lbl)
                    ys.append(float(s))
                    text.append(fn)
        shown = name + (" †" if name in changes_meaning else "")
        traces.append(dict(type="box", x=xs, y=ys, name=shown, legendgroup=name, offsetgroup=str(k),
                           boxpoints="all", jitter=0.4, pointpos=0, text=text,
                           marker=dict(size=4, color=color, opacity=0.85),
                           line=dict(color=color, width=1.3), fillcolor=_rgba(color, 0.12),
                           hovertemplate=f"%{{text}}<br>{shown}: %{{y:.4f}}<extra>node %{{x}}</extra>"))
    arrow = "↓" if lower_is_better else "↑"
    ticks = [f"{lbl}<br>{node_levels[lbl]} err" for lbl in labels]
    n = max(1, len(variants))
    return F.figure(traces, dict(
        boxmode="group", boxgroupgap=0.25, boxgap=0.1,
        xaxis=dict(title=dict(text="node (error count)"), type="category", categoryorder="array",
                   categoryarray=labels, tickmode="array", tickvals=labels, ticktext=ticks),
        yaxis=dict(title=dict(text=f"{metric} {arrow}")),
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0, font=dict(size=10)),
        margin=dict(b=60)), title=f"{metric}: node scores, clean and under {n - 1} transform(s)", height=460)


def walk_band(node_levels: Mapping[str, int], clean: Mapping[str, Sequence[float]],
              transformed: Mapping[str, Mapping[str, Sequence[float]]], walks: Sequence[Sequence[str]],
              walk_ord: Sequence[float], *, metric: str, walk: int | None = None, selected: str | None = None,
              lower_is_better: bool = False, changes_meaning: Sequence[str] = ()):
    """The walk plot with the transformed scores as a shaded band.

    Parameters
    ----------
    node_levels : Mapping[str, int]
        Node label -> error count.
    clean : Mapping[str, sequence of float]
        Node label -> the node's clean scores.
    transformed : Mapping[str, Mapping[str, sequence of float]]
        Transform spec -> (node label -> the node's scores under it).
    walks : sequence of sequence of str
        The SEG's walks (node labels).
    walk_ord : sequence of float
        Each walk's clean ord (for the legend).
    metric : str
        The metric's name (axis title).
    walk : int, optional
        The walk to draw (default: the walk with the lowest ord).
    selected : str, optional
        A transform whose node means and image scores are drawn along the walk.
    lower_is_better : bool, default False
        The metric's direction (an arrow on the axis).
    changes_meaning : sequence of str, default ()
        Transforms that may change what the image shows: left out of the band.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message when the SEG has no walk or no clean score.

    Notes
    -----
    The band, at each node of the walk, spans the lowest to the highest node mean over the clean scores
    and every transform that keeps the meaning: how far nuisance moves the node, beside how far the
    errors move it from node to node.

    NaN policy: node means skip non-finite scores; a node without any is a gap.
    """
    levels = dict(node_levels)
    means = {lbl: _mean(clean.get(lbl, ())) for lbl in levels}
    if not walks or not any(np.isfinite(list(means.values()))):
        return F.empty_figure(f"No {metric} scores on this SEG")
    ords = np.asarray(walk_ord, dtype=np.float64)
    if walk is None or not 0 <= int(walk) < len(walks):
        walk = int(np.argmin(np.where(np.isnan(ords), np.inf, ords))) if len(ords) else 0
    path = list(dict.fromkeys(walks[walk]))
    x = [levels[lbl] for lbl in path]
    traces = []
    gx, gy = [], []
    for w in walks:
        p = list(dict.fromkeys(w))
        gx += [levels[lbl] for lbl in p] + [None]
        gy += [None if np.isnan(means[lbl]) else means[lbl] for lbl in p] + [None]
    traces.append(dict(type="scatter", x=gx, y=gy, mode="lines", name=f"the SEG's {len(walks)} walk(s), clean",
                       line=dict(color="rgba(107,114,128,0.25)", width=1), hoverinfo="skip"))
    keep = [t for t in transformed if t not in changes_meaning]
    tmeans = {t: {lbl: _mean(transformed[t].get(lbl, ())) for lbl in path} for t in transformed}
    lo, hi = [], []
    for lbl in path:
        vals = [means[lbl]] + [tmeans[t][lbl] for t in keep]
        vals = [v for v in vals if np.isfinite(v)]
        lo.append(min(vals) if vals else None)
        hi.append(max(vals) if vals else None)
    traces.append(dict(type="scatter", x=x, y=hi, mode="lines", line=dict(width=0, color=BAND), showlegend=False,
                       hoverinfo="skip", legendgroup="band"))
    traces.append(dict(type="scatter", x=x, y=lo, mode="lines", fill="tonexty", fillcolor=BAND,
                       line=dict(width=0, color=BAND), legendgroup="band",
                       name=f"nuisance band: node means under {len(keep)} transform(s)", hoverinfo="skip"))
    ordw = ords[walk] if walk < len(ords) else np.nan
    traces.append(dict(type="scatter", x=x, y=[None if np.isnan(means[lbl]) else means[lbl] for lbl in path],
                       mode="lines+markers", name=f"walk {walk}: {'>'.join(path)} · ord {fmt_x100(ordw)} (clean)",
                       line=dict(color=F.METRIC_A, width=3), marker=dict(size=8),
                       text=[f"node {lbl}" for lbl in path],
                       hovertemplate="%{text}<br>clean node mean %{y:.4f}<extra></extra>"))
    if selected in transformed:
        k = list(transformed).index(selected)
        color = variant_color(k)
        traces.append(dict(type="scatter", x=x, y=[None if np.isnan(tmeans[selected][lbl]) else tmeans[selected][lbl]
                                                    for lbl in path],
                           mode="lines+markers", name=f"{selected}: node means",
                           line=dict(color=color, width=2, dash="dot"), marker=dict(size=7, symbol="diamond"),
                           text=[f"node {lbl}" for lbl in path],
                           hovertemplate=f"%{{text}}<br>{selected} node mean %{{y:.4f}}<extra></extra>"))
        rng = np.random.default_rng(0)
        for name, by_node, col, sym in (("clean", clean, F.MUTED, "circle"), (selected, transformed[selected], color,
                                                                             "circle-open")):
            px, py = [], []
            for lbl in path:
                for s in np.asarray(by_node.get(lbl, ()), dtype=np.float64):
                    if np.isfinite(s):
                        px.append(float(levels[lbl] + rng.uniform(-0.06, 0.06)))
                        py.append(float(s))
            traces.append(dict(type="scatter", x=px, y=py, mode="markers", name=f"images, {name}",
                               marker=dict(size=6, color=col, symbol=sym, opacity=0.8),
                               hovertemplate=f"{name} %{{y:.4f}}<extra></extra>"))
    arrow = "↓" if lower_is_better else "↑"
    return F.figure(traces, dict(
        xaxis=dict(title=dict(text="error count"), tickmode="array", tickvals=sorted(set(levels.values()))),
        yaxis=dict(title=dict(text=f"{metric} {arrow}")),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0, font=dict(size=10)), margin=dict(b=40)),
        title=f"{metric}: walk {walk} with the nuisance band", height=460)


__all__ = ["node_distributions", "walk_band", "variant_color", "VARIANT_COLORS"]
