"""Plotly figures of the app: pure functions of data (arrays, dicts, DataFrames) to ``go.Figure``.

No statistics are computed here: callers pass meta-metric values from :mod:`ts2viz.metametrics` and
:mod:`ts2viz.stats` (node means come from :func:`ts2viz.stats.node_means`). Plotly is imported when
a figure is built.
"""
from __future__ import annotations

import contextvars
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .stats import node_means

# One palette for the whole app (matches assets/app.css).
INK = "#1f2937"
MUTED = "#6b7280"
GRID = "#e5e7eb"
METRIC_A = "#4f46e5"
METRIC_B = "#d97706"
HIGHLIGHT = "#e11d48"
#: error level 0 .. high: teal (faithful) to crimson (many errors)
LEVEL_COLORS = ("#0f766e", "#16a34a", "#ca8a04", "#ea580c", "#dc2626", "#9d174d", "#581c87")
WALK_COLORS = ("#4f46e5", "#0891b2", "#d97706", "#db2777", "#65a30d", "#7c3aed", "#0d9488", "#b45309",
               "#be123c", "#2563eb")
FAMILY_COLORS = {"Embedding": "#4f46e5", "TIFA": "#0891b2", "DSG": "#16a34a", "LLMScore": "#d97706",
                 "VIEScore": "#db2777", "VQAScore": "#7c3aed"}
#: red (bad) - amber - green (good), for values oriented so that higher is better
GOODNESS_SCALE = [[0.0, "#dc2626"], [0.5, "#f59e0b"], [1.0, "#16a34a"]]
CORR_SCALE = [[0.0, "#2563eb"], [0.5, "#f8fafc"], [1.0, "#dc2626"]]


def level_color(level: int, max_level: int) -> str:
    """Colour of an error level, spread over :data:`LEVEL_COLORS` by the SEG's largest level."""
    if max_level <= 0:
        return LEVEL_COLORS[0]
    i = round(level / max_level * (len(LEVEL_COLORS) - 1))
    return LEVEL_COLORS[max(0, min(len(LEVEL_COLORS) - 1, i))]


def family_color(family: str) -> str:
    if family in FAMILY_COLORS:
        return FAMILY_COLORS[family]
    return WALK_COLORS[sum(map(ord, family)) % len(WALK_COLORS)]


@dataclass(frozen=True)
class PlainFigure:
    """A figure as the plain ``data`` (traces) and ``layout`` dicts that plotly.js reads."""

    data: list
    layout: dict


_PLAIN = contextvars.ContextVar("ts2viz_plain_figures", default=False)


@contextmanager
def plain_figures():
    """Within this block the builders return :class:`PlainFigure` instead of ``go.Figure``: the same
    traces and layout, without building plotly's object model (a server that sends many figures as
    JSON skips most of its cost). Per thread and task (a context variable)."""
    token = _PLAIN.set(True)
    try:
        yield
    finally:
        _PLAIN.reset(token)


def _fig(traces: list, layout: dict, *, title: str | None = None, height: int = 380, legend: bool = True):
    """A ``go.Figure`` from plain trace and layout dicts, in the app's style (a :class:`PlainFigure`
    inside :func:`plain_figures`).

    Built in one go without plotly's per-property validation (which costs a second on a figure
    with a few hundred traces or annotations); the dicts use only standard plotly attributes.
    """

    base = dict(
        title=dict(text=title, x=0.01, xanchor="left", font=dict(size=14, color=INK)) if title else None,
        height=height, showlegend=legend, autosize=True,
        font=dict(family="Inter, ui-sans-serif, system-ui, sans-serif", size=12, color=INK),
        margin=dict(l=56, r=16, t=48 if title else 16, b=48),
        paper_bgcolor="white", plot_bgcolor="white",
        legend=dict(font=dict(size=11), bgcolor="rgba(255,255,255,0.85)"),
        hoverlabel=dict(font=dict(size=12)), hovermode="closest",
    )
    axis = dict(gridcolor=GRID, zerolinecolor=GRID, linecolor=GRID, automargin=True)
    for ax in ("xaxis", "yaxis"):
        base[ax] = {**axis, **layout.pop(ax, {})}
    for k, v in layout.items():
        base[k] = {**base[k], **v} if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    if base["title"] is None:
        del base["title"]
    if _PLAIN.get():
        return PlainFigure(traces, base)
    import plotly.graph_objects as go

    return go.Figure(data=traces, layout=base, _validate=False)


def empty_figure(message: str, height: int = 300):
    """A blank figure with a centred message (no data, nothing selected)."""
    return _fig([], dict(annotations=[dict(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                                           font=dict(size=13, color=MUTED))],
                         xaxis=dict(visible=False), yaxis=dict(visible=False)), height=height, legend=False)


def _fmt(x: float, nd: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _clean(v) -> list:
    """A list for JSON: numpy scalars to floats, NaN to None."""
    out = []
    for x in v:
        if x is None:
            out.append(None)
        elif isinstance(x, (float, np.floating)):
            out.append(None if math.isnan(x) else float(x))
        elif isinstance(x, np.integer):
            out.append(int(x))
        else:
            out.append(x)
    return out


# -- leaderboard ---------------------------------------------------------------------------------

def ord_sep_scatter(board, x: str = "ord_avg", y: str = "sep_avg", title: str | None = None):
    """Ord against Sep, one point per metric, coloured by family.

    ``board``: DataFrame with columns ``metric``, ``family`` and the two value columns.
    """
    if board is None or len(board) == 0:
        return empty_figure("No metrics to show")
    traces = []
    for fam, sub in board.groupby("family", sort=False):
        traces.append(dict(
            type="scatter", x=_clean(sub[x]), y=_clean(sub[y]), mode="markers+text", name=str(fam),
            text=list(map(str, sub["metric"])), textposition="top center", textfont=dict(size=10, color=MUTED),
            marker=dict(size=11, color=family_color(str(fam)), line=dict(width=1, color="white")),
            hovertemplate="<b>%{text}</b><br>" + f"{x}: " + "%{x:.3f}<br>" + f"{y}: " + "%{y:.3f}<extra></extra>"))
    return _fig(traces, dict(xaxis=dict(title=dict(text=x.replace("_", " "))),
                             yaxis=dict(title=dict(text=y.replace("_", " ")))),
                title=title or "Ordering vs separation", height=420)


# -- SEG explorer ---------------------------------------------------------------------------------

def walk_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
                walks: Sequence[Sequence[str]], walk_ord: np.ndarray, *, metric: str,
                highlight: int | None = None, top: int = 6, lower_is_better: bool = False,
                node_files: Mapping[str, Sequence[str]] | None = None, color: str = METRIC_A):
    """Per-walk Spearman plot: score against error count.

    Every walk is drawn as a line through its nodes' mean scores (grey); the ``top`` worst walks
    (lowest ord) and the ``highlight``-ed walk are drawn in colour with their ord in the legend.
    The individual image scores are drawn as points at their node's error count.
    """
    levels = dict(node_levels)
    max_level = max(levels.values()) if levels else 0
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
    traces = [dict(type="scatter", x=bx, y=by, mode="lines", name=f"all walks ({len(walks)})",
                   line=dict(color="rgba(107,114,128,0.25)", width=1), hoverinfo="skip")]
    ords = np.asarray(walk_ord, dtype=float)
    order = [int(i) for i in np.argsort(np.where(np.isnan(ords), np.inf, ords), kind="stable")[:top]]
    if highlight is not None and 0 <= highlight < len(walks):
        if highlight in order:
            order.remove(highlight)
        order.append(int(highlight))
    for k, wi in enumerate(order):
        xs, ys = path_xy(walks[wi])
        hl = wi == highlight
        traces.append(dict(
            type="scatter", x=xs, y=ys, mode="lines+markers",
            name=f"{'▶ ' if hl else ''}walk {wi}: {'>'.join(dict.fromkeys(walks[wi]))} · ord {_fmt(ords[wi], 2)}",
            line=dict(color=HIGHLIGHT if hl else WALK_COLORS[k % len(WALK_COLORS)], width=4 if hl else 1.8),
            marker=dict(size=8 if hl else 5), opacity=1.0 if hl or highlight is None else 0.6,
            hovertemplate=f"walk {wi} · ord {_fmt(ords[wi], 3)}<br>node mean %{{y:.3f}}<extra></extra>"))
    px, py, ptxt, pcol = [], [], [], []
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
            pcol.append(level_color(levels[lbl], max_level))
    traces.append(dict(type="scatter", x=px, y=py, mode="markers", name="images", text=ptxt,
                       marker=dict(size=6, color=pcol, opacity=0.75, line=dict(width=0.5, color="white")),
                       hovertemplate="%{text}<br>score %{y:.3f}<extra></extra>"))
    arrow = "↓" if lower_is_better else "↑"
    return _fig(traces, dict(
        xaxis=dict(title=dict(text="error count"), tickmode="array", tickvals=sorted(set(levels.values()))),
        yaxis=dict(title=dict(text=f"{metric} {arrow}")),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0, font=dict(size=10)),
        margin=dict(b=40)), title=f"{metric}: score by error count, per walk", height=460)


def cdf_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
               ks_pairs: Sequence[Mapping], *, metric: str, lower_is_better: bool = False,
               max_labels: int = 6):
    """Empirical CDF of each node's scores, coloured by error count, with each adjacent pair's KS
    distance drawn as a vertical segment where it is attained.

    ``ks_pairs``: dicts with keys ``a``, ``b`` (node labels), ``statistic``, ``location``, ``cdf_a``,
    ``cdf_b`` (as in :class:`ts2viz.stats.KSResult`). The ``max_labels`` smallest distances get a
    text label (the rest show theirs on hover).
    """
    levels = dict(node_levels)
    max_level = max(levels.values()) if levels else 0
    finite = [np.asarray(v, float)[~np.isnan(np.asarray(v, float))] for v in node_scores.values()]
    allv = np.concatenate(finite) if finite else np.array([])
    if allv.size == 0:
        return empty_figure(f"No {metric} scores on this SEG")
    lo, hi = float(allv.min()), float(allv.max())
    pad = (hi - lo) * 0.05 or 0.05
    traces, ann = [], []
    many = len(node_scores) > 8  # then one legend entry per error level
    shown: set[int] = set()
    for lbl, v in node_scores.items():
        v = np.sort(np.asarray(v, float)[~np.isnan(np.asarray(v, float))])
        if v.size == 0:
            continue
        xs = np.concatenate([[lo - pad], v, [hi + pad]])
        ys = np.concatenate([[0.0], np.arange(1, v.size + 1) / v.size, [1.0]])
        lv = levels[lbl]
        first = lv not in shown
        shown.add(lv)
        traces.append(dict(type="scatter", x=xs.tolist(), y=ys.tolist(), mode="lines", line_shape="hv",
                           name=(f"{lv} error{'s' if lv != 1 else ''}" if many else f"node {lbl} (n={v.size})"),
                           showlegend=first or not many, legendgroup=f"lv{lv}",
                           line=dict(color=level_color(levels[lbl], max_level), width=2),
                           hovertemplate=f"node {lbl}<br>score %{{x:.3f}}<br>F %{{y:.2f}}<extra></extra>"))
    valid = [p for p in ks_pairs if p.get("statistic") is not None and np.isfinite(p["statistic"])
             and np.isfinite(p.get("location", np.nan))]
    labelled = set(sorted(range(len(valid)), key=lambda i: valid[i]["statistic"])[:max_labels])
    sx, sy, stxt = [], [], []
    for i, p in enumerate(valid):
        d, x = float(p["statistic"]), float(p["location"])
        y0, y1 = sorted([float(p["cdf_a"]), float(p["cdf_b"])])
        sx += [x, x, None]
        sy += [y0, y1, None]
        t = f"KS {p['a']}–{p['b']} = {d:.3f} at {x:.3f}"
        stxt += [t, t, None]
        if i in labelled:
            ann.append(dict(x=x, y=(y0 + y1) / 2, text=f"{p['a']}–{p['b']}: {d:.2f}", showarrow=False,
                            xanchor="left", xshift=4, font=dict(size=10, color=INK),
                            bgcolor="rgba(255,255,255,0.8)"))
    if sx:
        traces.append(dict(type="scatter", x=sx, y=sy, mode="lines+markers", name="KS distance (adjacent nodes)",
                           text=stxt, line=dict(color=INK, width=1.5, dash="dot"), marker=dict(size=5, color=INK),
                           hovertemplate="%{text}<extra></extra>"))
    arrow = "↓" if lower_is_better else "↑"
    return _fig(traces, dict(annotations=ann,
                             xaxis=dict(title=dict(text=f"{metric} {arrow}"), range=[lo - pad, hi + pad]),
                             yaxis=dict(title=dict(text="cumulative fraction of node images"), range=[-0.02, 1.04])),
                title=f"{metric}: node score CDFs and KS distances", height=460)


def landing_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
                   uploads: Sequence[tuple[str, float]], *, metric: str, lower_is_better: bool = False):
    """Where uploaded images land against a SEG's node score distributions.

    Each node's scores as a box with points (x = node, ordered by label); each upload as a dashed
    horizontal line across all nodes, labelled with its name.
    """
    levels = dict(node_levels)
    max_level = max(levels.values()) if levels else 0
    traces, shapes, ann = [], [], []
    for lbl, v in node_scores.items():
        v = np.asarray(v, float)
        v = v[~np.isnan(v)]
        if v.size == 0:
            continue
        col = level_color(levels[lbl], max_level)
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
    return _fig(traces, dict(shapes=shapes, annotations=ann, xaxis=xaxis,
                             yaxis=dict(title=dict(text=f"{metric} {arrow}"))), title=title, height=440, legend=False)


# -- correlations ---------------------------------------------------------------------------------

def corr_heatmap(matrix, *, title: str, selected: tuple[str, str] | None = None):
    """Metric-metric correlation heatmap (values in [-1, 1], printed x100 like the paper's Figs 6/7)."""
    if matrix is None or matrix.shape[0] == 0:
        return empty_figure("No metrics to correlate")
    names = [str(c) for c in matrix.columns]
    z = np.asarray(matrix.to_numpy(dtype=float))
    text = [["n/a" if np.isnan(v) else f"{round(v * 100):d}" for v in row] for row in z]
    shapes = []
    if selected and selected[0] in names and selected[1] in names:
        j, i = names.index(selected[0]), names.index(selected[1])
        shapes.append(dict(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5,
                           line=dict(color=INK, width=2.5)))
    size = max(440, min(780, 34 * len(names) + 220))
    heat = dict(type="heatmap", z=[_clean(r) for r in z], x=names, y=names, zmin=-1, zmax=1, colorscale=CORR_SCALE,
                text=text, texttemplate="%{text}", textfont=dict(size=9 if len(names) > 12 else 11),
                xgap=1, ygap=1, colorbar=dict(title=dict(text="r"), thickness=12, len=0.8),
                hovertemplate="%{y} vs %{x}<br>r = %{z:.2f}<extra></extra>")
    return _fig([heat], dict(shapes=shapes, xaxis=dict(tickangle=-45, showgrid=False),
                             yaxis=dict(autorange="reversed", showgrid=False), margin=dict(l=140, b=140)),
                title=title, height=size, legend=False)


def pair_scatter(points, *, x_name: str, y_name: str, stat: str, highlight: int | None = None):
    """Per-SEG values of two metrics, one point per SEG (hover: id, partition, prompt).

    ``points``: DataFrame with columns ``seg_id``, ``partition``, ``prompt``, ``x``, ``y``.
    """
    if points is None or len(points) == 0:
        return empty_figure("No SEGs with values for both metrics")
    pcols = {"Synth": "#4f46e5", "Nat": "#16a34a", "Real": "#d97706"}
    traces = []
    for part, sub in points.groupby("partition", sort=False):
        traces.append(dict(
            type="scatter", x=_clean(sub["x"]), y=_clean(sub["y"]), mode="markers", name=str(part),
            marker=dict(size=8, color=pcols.get(str(part), MUTED), opacity=0.8, line=dict(width=0.5, color="white")),
            customdata=[[int(s), str(p)[:90]] for s, p in zip(sub["seg_id"], sub["prompt"])],
            hovertemplate="SEG %{customdata[0]}: %{customdata[1]}<br>" + f"{x_name}: " + "%{x:.3f}<br>"
                          + f"{y_name}: " + "%{y:.3f}<extra></extra>"))
    if highlight is not None and (points["seg_id"] == highlight).any():
        r = points[points["seg_id"] == highlight].iloc[0]
        traces.append(dict(type="scatter", x=[float(r["x"])], y=[float(r["y"])], mode="markers+text",
                           text=[f"SEG {highlight}"], textposition="top center", name="selected",
                           marker=dict(size=16, color="rgba(0,0,0,0)", line=dict(width=2.5, color=HIGHLIGHT))))
    lo = float(np.nanmin([points["x"].min(), points["y"].min()]))
    hi = float(np.nanmax([points["x"].max(), points["y"].max()]))
    traces.append(dict(type="scatter", x=[lo, hi], y=[lo, hi], mode="lines", name="y = x", hoverinfo="skip",
                       line=dict(color="#9ca3af", dash="dash", width=1)))
    return _fig(traces, dict(xaxis=dict(title=dict(text=f"{x_name} ({stat})")),
                             yaxis=dict(title=dict(text=f"{y_name} ({stat})"))),
                title=f"Per-SEG {stat}: {y_name} vs {x_name}", height=460)
