"""Plotly figures of the app: pure functions of data (arrays, dicts, DataFrames) to ``go.Figure``.

No statistics are computed here: callers pass meta-metric values from :mod:`ts2viz.metametrics` and
:mod:`ts2viz.stats` (node means come from :func:`ts2viz.stats.node_means`). Meta-metric values are
shown x100 and counts in the right number (:mod:`ts2viz.display`). Labels that could collide are
placed deterministically: KS labels in separate vertical slots, scatter labels greedily at a nominal
plot size (see :func:`place_labels`). Plotly is imported when a figure is built.
"""
from __future__ import annotations

import contextvars
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from .display import SCALED_STATS, fmt_score, fmt_x100, plural, stat_name, x100
from .stats import node_means

# One palette for the whole app (matches assets/app.css).
INK = "#1f2937"
MUTED = "#6b7280"
GRID = "#e5e7eb"
METRIC_A = "#4f46e5"
METRIC_B = "#d97706"
HIGHLIGHT = "#e11d48"
#: error level 0, 1, 2, ...: teal (faithful), then hues far apart, so that the shades of one level's
#: nodes (:func:`node_colors`) stay apart from the next level's
LEVEL_COLORS = ("#0f766e", "#ca8a04", "#dc2626", "#db2777", "#7c3aed", "#2563eb", "#475569")
WALK_COLORS = ("#4f46e5", "#0891b2", "#d97706", "#db2777", "#65a30d", "#7c3aed", "#0d9488", "#b45309",
               "#be123c", "#2563eb")
FAMILY_COLORS = {"Embedding": "#4f46e5", "TIFA": "#0891b2", "DSG": "#16a34a", "LLMScore": "#d97706",
                 "VIEScore": "#db2777", "VQAScore": "#7c3aed"}
#: orange (bad) - light grey - blue (good), for values oriented so that higher is better: a diverging
#: scale that readers with red-green colour blindness see as well (no red against green anywhere)
GOODNESS_SCALE = [[0.0, "#c2410c"], [0.5, "#d6d3d1"], [1.0, "#1d4ed8"]]
CORR_SCALE = [[0.0, "#2563eb"], [0.5, "#f8fafc"], [1.0, "#dc2626"]]
#: significant signed differences, row minus column: orange (row worse) / blue (row better), safe for
#: red-green colour blindness. The jump at 0 keeps a small significant difference clearly tinted next
#: to the grey of non-significant cells.
SIGNED_SCALE = [[0.0, "#c2410c"], [0.5, "#fed7aa"], [0.5, "#bfdbfe"], [1.0, "#1d4ed8"]]
#: -log10 p: white (no evidence) to indigo (strong)
EVIDENCE_SCALE = [[0.0, "#f8fafc"], [1.0, "#4338ca"]]
NOT_SIGNIFICANT = "#f3f4f6"


def _rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def mix(a: str, b: str, t: float) -> str:
    """Colour ``a`` moved a fraction ``t`` (0..1) of the way to colour ``b`` (both ``#rrggbb``)."""
    ca, cb = _rgb(a), _rgb(b)
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def level_color(level: int, max_level: int) -> str:
    """Colour of an error level: :data:`LEVEL_COLORS` ``[level]`` (the same in every SEG) while the
    SEG's largest level has a palette colour; for deeper SEGs the levels are spread over the palette,
    between its colours (interpolated), so distinct levels keep distinct colours."""
    n = len(LEVEL_COLORS)
    level = max(0, int(level))
    if max_level <= n - 1:
        return LEVEL_COLORS[min(level, n - 1)]
    pos = min(1.0, level / max_level) * (n - 1)
    i = min(int(pos), n - 2)
    return mix(LEVEL_COLORS[i], LEVEL_COLORS[i + 1], pos - i)


#: the nodes of one level get lightness from SHADE_LIGHTNESS[0] (first, darkest) to [1] (last), and
#: hues turned over SHADE_HUE_TURN degrees around the level's hue: distinct shades of one hue (the
#: closest two node colours of one level in any TS2 SEG are 9 CIELAB units apart, of two levels 22)
SHADE_LIGHTNESS = (0.26, 0.64)
SHADE_HUE_TURN = 36.0


#: a dot's outline stands out on the white page at least this much (WCAG's contrast ratio for graphical
#: objects): dots in the light shades of a level's colour (yellow) were unreadable on white
MIN_CONTRAST = 3.0


def contrast_on_white(color: str) -> float:
    """WCAG contrast ratio of ``#rrggbb`` against white."""
    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in _rgb(color))
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def _on_white(color: str, min_contrast: float = MIN_CONTRAST) -> str:
    """``color`` darkened (lightness lowered, hue and saturation kept) until its contrast on white is
    at least ``min_contrast``."""
    import colorsys

    if contrast_on_white(color) >= min_contrast:
        return color
    h, light, sat = colorsys.rgb_to_hls(*(c / 255 for c in _rgb(color)))
    while light > 0.05:
        light -= 0.01
        out = "#" + "".join(f"{round(c * 255):02x}" for c in colorsys.hls_to_rgb(h, light, sat))
        if contrast_on_white(out) >= min_contrast:
            return out
    return INK


def node_colors(node_levels: Mapping[str, int]) -> dict[str, str]:
    """One colour per node: its error level's colour (:func:`level_color`), in distinct shades when
    the level has several nodes (1a darkest to 1d lightest, in label order)."""
    import colorsys

    levels = dict(node_levels)
    max_level = max(levels.values(), default=0)
    out = {}
    for lv in sorted(set(levels.values())):
        same = [lbl for lbl in levels if levels[lbl] == lv]
        base = level_color(lv, max_level)
        if len(same) == 1:
            out[same[0]] = base
            continue
        h, _, sat = colorsys.rgb_to_hls(*(c / 255 for c in _rgb(base)))
        lo, hi = SHADE_LIGHTNESS
        for i, lbl in enumerate(same):
            f = i / (len(same) - 1)
            rgb = colorsys.hls_to_rgb((h + (f - 0.5) * SHADE_HUE_TURN / 360) % 1.0, lo + (hi - lo) * f, sat)
            out[lbl] = "#" + "".join(f"{round(c * 255):02x}" for c in rgb)
    return out


def family_color(family: str) -> str:
    if family in FAMILY_COLORS:
        return FAMILY_COLORS[family]
    return WALK_COLORS[sum(map(ord, family)) % len(WALK_COLORS)]


#: the modebar (plotly's toolbar, shown on hover) takes the top TOOLBAR_PX of a figure: titles go below it
TOOLBAR_PX = 30
TITLE_PX = 20          # one line of title text
TITLE_CHARS = 64       # longer titles are wrapped onto a second line


def _title_lines(title: str) -> list[str]:
    """A title in lines of at most :data:`TITLE_CHARS` characters (broken at spaces)."""
    lines, cur = [], ""
    for word in title.split(" "):
        if cur and len(cur) + 1 + len(word) > TITLE_CHARS:
            lines.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    return lines + [cur]


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

    The title sits below the strip where plotly's modebar appears, so the toolbar never covers it.
    Built in one go without plotly's per-property validation (which costs a second on a figure
    with a few hundred traces or annotations); the dicts use only standard plotly attributes.
    """

    lines = _title_lines(title) if title else []
    top = TOOLBAR_PX + TITLE_PX * len(lines) + 10 if lines else 16
    base = dict(
        title=dict(text="<br>".join(lines), x=0.01, xanchor="left", y=1, yref="container", yanchor="top",
                   pad=dict(t=TOOLBAR_PX), font=dict(size=14, color=INK)) if lines else None,
        height=height, showlegend=legend, autosize=True,
        font=dict(family="Inter, ui-sans-serif, system-ui, sans-serif", size=12, color=INK),
        margin=dict(l=56, r=16, t=top, b=48),
        paper_bgcolor="white", plot_bgcolor="white",
        legend=dict(font=dict(size=11), bgcolor="rgba(255,255,255,0.85)"),
        hoverlabel=dict(font=dict(size=12)), hovermode="closest",
        modebar=dict(bgcolor="rgba(255,255,255,0.9)", color=MUTED, activecolor=INK),
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


def figure(traces: list, layout: dict, *, title: str | None = None, height: int = 380, legend: bool = True):
    """A figure from plain trace and layout dicts in the app's style: a ``go.Figure``, or the
    :class:`PlainFigure` that reaches the page as it is inside :func:`plain_figures` (the app's one path,
    ``ts2viz.ui.glue.page_plot``). Builders outside this module (cost, human gold standards) use this.
    Traces are dicts with a ``type`` (``"scatter"``, ``"scattergl"``, ...), spelled as plotly.js reads
    them (``line: {shape: "hv"}``, not plotly.py's ``line_shape``)."""
    return _fig(traces, dict(layout), title=title, height=height, legend=legend)


#: character widths, in font sizes, a little above those of DejaVu Sans (wider than Inter), by class
_NARROW, _WIDE = set("iljtfrI.,:;'|!()[] -"), set("mwMW%@#&+<=>^~")


def text_width(text: str, size: float = 10) -> float:
    """Estimated width in pixels of ``text`` in the app's sans-serif font at ``size`` px, on the
    generous side (measured against DejaVu Sans, which Chromium uses when Inter is missing), for
    placing labels without overlap."""
    em = 0.0
    for c in text:
        em += 0.42 if c in _NARROW else 1.0 if c in _WIDE else 0.8 if c.isupper() else 0.66
    return size * em


#: the figure width (px) legends are laid out for: a phone; wider screens need fewer rows
LEGEND_WIDTH = 320


def bottom_legends(groups: Sequence[tuple[str, Sequence[str]]], *, size: float = 11,
                   width: float = LEGEND_WIDTH) -> tuple[list[dict], list[int]]:
    """Horizontal legends stacked at the bottom of a figure, one per group, and the pixels each needs.

    ``groups``: ``(title, entry names)`` per legend (``legend``, ``legend2``, ...; a trace picks its
    legend by name). Plotly lays a wrapping horizontal legend out as a grid whose column is its widest
    entry, so short node labels and long names go in separate legends. Rows are counted for a figure
    ``width`` pixels wide; on a wider screen fewer rows are needed, so the space reserved (the bottom
    margin) always suffices and the plot area keeps the height it was given. Positions are set by
    :func:`stack_legends` once the figure's height is known.
    """
    specs, heights = [], []
    row_px = size + 10
    for title, names in groups:
        title_w = text_width(title, size) + 12 if title else 0.0
        col = 45 + max((text_width(str(n), size) for n in names), default=0.0)
        per_row = max(1, int((width - title_w) // col))
        rows = max(1, math.ceil(len(names) / per_row))
        spec = dict(orientation="h", x=0.01, xref="container", xanchor="left", yref="container", yanchor="top",
                    itemwidth=30, font=dict(size=size), tracegroupgap=0, bgcolor="rgba(255,255,255,0)")
        if title:
            spec["title"] = dict(text=title, side="left", font=dict(size=size, color=MUTED))
        specs.append(spec)
        heights.append(rows * row_px + 4)
    return specs, heights


def stack_legends(specs: list[dict], heights: list[int], figure_height: int) -> dict:
    """Layout entries ``legend``, ``legend2``, ... for :func:`bottom_legends`' legends: the first just
    under the x axis, the others below it (space a wide screen does not need is left at the bottom)."""
    out, top = {}, sum(heights)
    for k, (spec, h) in enumerate(zip(specs, heights)):
        out["legend" if k == 0 else f"legend{k + 1}"] = {**spec, "y": top / figure_height}
        top -= h
    return out


def empty_figure(message: str, height: int = 300):
    """A blank figure with a centred message (no data, nothing selected)."""
    return _fig([], dict(annotations=[dict(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                                           font=dict(size=13, color=MUTED))],
                         xaxis=dict(visible=False), yaxis=dict(visible=False)), height=height, legend=False)


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

#: the plot width (px) scatter labels are placed for; narrower screens hide them (assets/app.css), wider
#: ones only move them apart
LABEL_PLOT_WIDTH = 900
#: label offsets tried around a point, nearest first (px); beyond the first ring a leader line is drawn
LABEL_RINGS = (0, 14, 28, 44, 62, 84)
_DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1), (0.75, -0.75), (-0.75, -0.75), (0.75, 0.75), (-0.75, 0.75))


def _overlaps(a, b, gap: float = 0.0) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def _leader_blocked(p, q, boxes, dots) -> bool:
    """Whether the segment p-q passes through any of the boxes (sampled every 3 px)."""
    n = max(2, int(math.hypot(q[0] - p[0], q[1] - p[1]) / 3))
    for k in range(1, n + 1):
        x, y = p[0] + (q[0] - p[0]) * k / n, p[1] + (q[1] - p[1]) * k / n
        if any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in boxes) or \
                any(d[0] <= x <= d[2] and d[1] <= y <= d[3] for d in dots):
            return True
    return False


def place_labels(xs: Sequence[float], ys: Sequence[float], texts: Sequence[str], *, x_range: Sequence[float],
                 y_range: Sequence[float], width: float, height: float, size: float = 10,
                 marker: float = 11) -> list[dict | None]:
    """Places a text label beside each point so that no two labels overlap, nor a label a point.

    Greedy and deterministic: the most crowded points choose first, each taking the first free spot
    of the rings :data:`LABEL_RINGS` around it (right, left, above, below, then the diagonals); a
    point without a free spot gets no label (its name stays on hover).

    Parameters
    ----------
    xs, ys : point positions in data units (NaN points get no label and block nothing).
    texts : the labels.
    x_range, y_range : the axis ranges shown.
    width, height : the plot area in pixels the placement is made for.
    size : font size (px); ``marker`` : marker diameter (px).

    Returns
    -------
    Per point ``None`` or a dict ``x, y`` (the label's anchor, data units), ``xanchor``, ``yanchor``,
    ``leader`` (whether a line should join the label to its point) and ``box`` (x0, y0, x1, y1 in
    pixels, y downwards). The anchor lies inside the box, so boxes that are apart at ``width`` stay
    apart on any wider plot: anchors move apart, box sizes do not.
    """
    x0, x1 = x_range
    y0, y1 = y_range
    px = [(x - x0) / (x1 - x0) * width if np.isfinite(x) and np.isfinite(y) else np.nan for x, y in zip(xs, ys)]
    py = [(y1 - y) / (y1 - y0) * height if np.isfinite(x) and np.isfinite(y) else np.nan for x, y in zip(xs, ys)]
    pts = [(a, b) for a, b in zip(px, py) if np.isfinite(a)]
    half = marker / 2 + 1
    dots = [(a - half, b - half, a + half, b + half) for a, b in pts]
    order = sorted((i for i in range(len(texts)) if np.isfinite(px[i])),
                   key=lambda i: (-sum(math.hypot(px[i] - a, py[i] - b) < 60 for a, b in pts), i))
    placed: list[tuple] = []
    out: list[dict | None] = [None] * len(texts)
    for i in order:
        w, h = text_width(texts[i], size) + 6, size * 1.25 + 4
        for ring in LABEL_RINGS:
            r = half + 2 + ring
            spot = None
            for dx, dy in _DIRECTIONS:
                ax, ay = px[i] + dx * r, py[i] + dy * r
                bx = ax if dx > 0 else ax - w if dx < 0 else ax - w / 2
                by = ay - h if dy < 0 else ay if dy > 0 else ay - h / 2
                box = (bx, by, bx + w, by + h)
                if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
                    continue
                if any(_overlaps(box, b, 2) for b in placed) or any(_overlaps(box, d) for d in dots):
                    continue
                if ring and _leader_blocked((px[i], py[i]), (ax, ay), placed, [d for j, d in enumerate(dots)
                                                                              if pts[j] != (px[i], py[i])]):
                    continue      # the leader line would run under another label or through a point
                spot = dict(x=x0 + ax / width * (x1 - x0), y=y1 - ay / height * (y1 - y0),
                            xanchor="left" if dx > 0 else "right" if dx < 0 else "center",
                            yanchor="bottom" if dy < 0 else "top" if dy > 0 else "middle",
                            leader=bool(ring), box=box)
                break
            if spot is not None:
                placed.append(spot["box"])
                out[i] = spot
                break
    return out


def dense_cluster(xs: Sequence[float], ys: Sequence[float], k: float = 3.0) -> np.ndarray:
    """Which points lie in the dense middle of a scatter: within ``k`` scaled median absolute
    deviations of the median on both axes (the modified z-score rule). NaN points are outside."""
    keep = np.ones(len(xs), dtype=bool)
    for v in (np.asarray(xs, float), np.asarray(ys, float)):
        ok = np.isfinite(v)
        if not ok.any():
            return np.zeros(len(xs), dtype=bool)
        med = np.median(v[ok])
        mad = 1.4826 * np.median(np.abs(v[ok] - med))
        keep &= ok & (np.abs(np.where(ok, v, med) - med) <= k * mad if mad > 0 else ok)
    return keep


def _padded(v: np.ndarray, frac: float = 0.08) -> list[float]:
    lo, hi = float(np.nanmin(v)), float(np.nanmax(v))
    pad = (hi - lo) * frac or max(abs(hi) * 0.05, 1.0)
    return [lo - pad, hi + pad]


#: the Ord-vs-Sep scatter names the points left without a label in rows under the plot: this many
#: characters a row (the plot is at least :data:`LABEL_PLOT_WIDTH` px wide where labels show), this many
#: pixels a row
UNLABELLED_CHARS = 120
UNLABELLED_ROW_PX = 14


def _wrap_names(head: str, names: Sequence[str]) -> list[str]:
    """``head`` and every one of ``names`` joined by " · ", in rows of at most :data:`UNLABELLED_CHARS`
    characters (a longer name gets a row of its own); no name is left out."""
    lines, cur = [], head
    for n in names:
        piece = n if cur == head else f" · {n}"
        if len(cur) + len(piece) > UNLABELLED_CHARS and cur != head:
            lines.append(cur)
            cur, piece = "", n
        cur += piece
    return lines + [cur]


def ord_sep_scatter(board, x: str = "ord_avg", y: str = "sep_avg", title: str | None = None, *,
                    error_bars: bool = False):
    """Ord against Sep (x100), one point per metric, coloured by family, each labelled where it fits.

    ``board``: DataFrame with columns ``metric``, ``family`` and the two value columns (fractions).
    Labels are placed without overlap for a plot :data:`LABEL_PLOT_WIDTH` pixels wide (hover shows
    every name). When most metrics sit in a dense cluster, a button zooms to it (with its own labels).
    With ``error_bars``, also ``{x}_lo``, ``{x}_hi``, ``{y}_lo``, ``{y}_hi`` (the layout of
    :func:`ts2viz.uncertainty.leaderboard_table` with a bootstrap), drawn as whiskers on both axes; a
    NaN bound draws no whisker on that side.
    """
    if board is None or len(board) == 0:
        return empty_figure("No metrics to show")
    bounds = [f"{c}_{side}" for c in (x, y) for side in ("lo", "hi")]
    if error_bars:
        missing = [c for c in bounds if c not in board.columns]
        if missing:
            raise ValueError(f"error_bars needs columns {', '.join(bounds)}; missing {', '.join(missing)}")
    xv = np.array([x100(v) for v in board[x]], dtype=float)
    yv = np.array([x100(v) for v in board[y]], dtype=float)
    names = [str(m) for m in board["metric"]]
    if not np.isfinite(xv).any() or not np.isfinite(yv).any():
        return empty_figure("No values to show")
    xname, yname = stat_name(x.split("_")[0]).capitalize(), stat_name(y.split("_")[0]).capitalize()
    xpart, ypart = x.rsplit("_", 1)[-1].capitalize(), y.rsplit("_", 1)[-1].capitalize()
    traces = []
    fams = [str(f) for f in board["family"]]
    for fam in dict.fromkeys(fams):
        idx = [i for i, f in enumerate(fams) if f == fam]
        col = family_color(fam)
        trace = dict(
            type="scatter", x=_clean(xv[idx]), y=_clean(yv[idx]), mode="markers", name=fam,
            text=[names[i] for i in idx],
            marker=dict(size=11, color=col, line=dict(width=1, color="white")),
            hovertemplate=f"<b>%{{text}}</b><br>{xname} {xpart}: %{{x:.1f}}<br>{yname} {ypart}: %{{y:.1f}}"
                          "<extra></extra>")
        if error_bars:
            lohi = {c: np.array([x100(v) for v in board[c]], dtype=float)[idx] for c in bounds}
            for axis, c, v in (("x", x, xv[idx]), ("y", y, yv[idx])):
                trace[f"error_{axis}"] = dict(type="data", symmetric=False, array=_clean(lohi[f"{c}_hi"] - v),
                                              arrayminus=_clean(v - lohi[f"{c}_lo"]), color=col, thickness=1.2,
                                              width=0)
            trace["customdata"] = [_clean(r) for r in np.stack([lohi[c] for c in bounds], axis=1)]
            trace["hovertemplate"] = (
                f"<b>%{{text}}</b><br>{xname} {xpart}: %{{x:.1f}} [%{{customdata[0]:.1f}}, %{{customdata[1]:.1f}}]"
                f"<br>{yname} {ypart}: %{{y:.1f}} [%{{customdata[2]:.1f}}, %{{customdata[3]:.1f}}]<extra></extra>")
        traces.append(trace)
    specs, heights = bottom_legends([("", list(dict.fromkeys(fams)))])
    legend_px = sum(heights)
    cluster = dense_cluster(xv, yv)
    zoom = 3 <= cluster.sum() < np.sum(np.isfinite(xv) & np.isfinite(yv))
    buttons_px = 28 if zoom else 0               # a row under the title for the zoom buttons
    top = TOOLBAR_PX + TITLE_PX + 10 + buttons_px
    # the plot area's height does not depend on the rows under it that name the points left without a
    # label (``note_px``): labels are placed first, then the figure is made as tall as those rows need
    plot_h = 440 - TOOLBAR_PX - TITLE_PX - 10 - 48

    # the full view also spans the whiskers (a zoom keeps to the points: it is for reading names)
    span = {}
    if error_bars:
        span = {a: np.concatenate([v, *(np.array([x100(b) for b in board[f"{c}_{side}"]], dtype=float)
                                        for side in ("lo", "hi"))])
                for a, c, v in (("x", x, xv), ("y", y, yv))}

    def view(keep: np.ndarray, whiskers: bool = False, bottom: float = 48.0) -> dict:
        if whiskers and span:
            k3 = np.tile(keep, 3)
            xr, yr = _padded(span["x"][k3], 0.03), _padded(span["y"][k3], 0.03)
        else:
            xr, yr = _padded(xv[keep]), _padded(yv[keep])
        inside = keep | ((xv >= xr[0]) & (xv <= xr[1]) & (yv >= yr[0]) & (yv <= yr[1]))
        spots = place_labels(np.where(inside, xv, np.nan), np.where(inside, yv, np.nan), names, x_range=xr,
                             y_range=yr, width=LABEL_PLOT_WIDTH, height=plot_h)
        ann, shapes = [], []
        for i, sp in enumerate(spots):
            if sp is None:
                continue
            ann.append(dict(x=sp["x"], y=sp["y"], text=names[i], xanchor=sp["xanchor"], yanchor=sp["yanchor"],
                            showarrow=False, font=dict(size=10, color=INK), bgcolor="rgba(255,255,255,0.7)",
                            borderpad=1, name="label"))
            if sp["leader"]:
                shapes.append(dict(type="line", x0=float(xv[i]), y0=float(yv[i]), x1=sp["x"], y1=sp["y"],
                                   line=dict(color="#9ca3af", width=1), layer="below", name="leader"))
        left = [names[i] for i, sp in enumerate(spots) if sp is None and inside[i]
                and np.isfinite(xv[i]) and np.isfinite(yv[i])]
        rows = _wrap_names("No room for a label (hover the point): ", left) if left else []
        if left:    # no silent gaps: every name that found no room is listed (its point shows it on hover)
            ann.append(dict(x=0, xref="paper", xanchor="left", y=-(bottom - 2) / plot_h, yref="paper",
                            yanchor="bottom", showarrow=False, align="left", name="unlabelled",
                            text="<br>".join(rows), font=dict(size=10, color=MUTED)))
        return {"xaxis.range": xr, "yaxis.range": yr, "annotations": ann, "shapes": shapes, "rows": len(rows)}

    def finished(v: dict) -> dict:
        return {k: val for k, val in v.items() if k != "rows"}

    finite = np.isfinite(xv) & np.isfinite(yv)
    rows = max(view(finite, whiskers=True)["rows"], view(cluster)["rows"] if zoom else 0)
    note_px = UNLABELLED_ROW_PX * rows + (4 if rows else 0)
    bottom = 48 + legend_px + note_px
    height = top + plot_h + bottom
    full = finished(view(finite, whiskers=True, bottom=bottom))
    layout = dict(xaxis=dict(title=dict(text=f"{xname} · {xpart} (x100)"), range=full["xaxis.range"]),
                  yaxis=dict(title=dict(text=f"{yname} · {ypart} (x100)"), range=full["yaxis.range"]),
                  annotations=full["annotations"], shapes=full["shapes"], margin=dict(b=bottom, t=top),
                  **stack_legends(specs, heights, height))
    if zoom:
        layout["updatemenus"] = [dict(
            type="buttons", direction="right", showactive=True, active=0, x=0, xanchor="left", y=1.0,
            yanchor="bottom", pad=dict(b=6, l=0), font=dict(size=11), bgcolor="white", bordercolor=GRID,
            buttons=[dict(label="All metrics", method="relayout", args=[full]),
                     dict(label=f"Zoom to cluster ({int(cluster.sum())})", method="relayout",
                          args=[finished(view(cluster, bottom=bottom))])])]
    return _fig(traces, layout, title=title or "Ordering vs separation", height=height)


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
    for k, wi in enumerate(order):
        xs, ys = path_xy(walks[wi])
        hl = wi == highlight
        traces.append(dict(
            type="scatter", x=xs, y=ys, mode="lines+markers",
            name=f"{'▶ ' if hl else ''}walk {wi}: {'>'.join(dict.fromkeys(walks[wi]))} · ord {fmt_x100(ords[wi])}",
            line=dict(color=HIGHLIGHT if hl else WALK_COLORS[k % len(WALK_COLORS)], width=4 if hl else 1.8),
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
    traces.append(dict(type="scatter", x=px, y=py, mode="markers", name="images", text=ptxt,
                       marker=dict(size=6, color=pcol, opacity=0.85,
                                   line=dict(width=1, color=[_on_white(c) for c in pcol])),
                       hovertemplate="%{text}<br>score %{y:.3f}<extra></extra>"))
    arrow = "↓" if lower_is_better else "↑"
    return _fig(traces, dict(
        xaxis=dict(title=dict(text="error count"), tickmode="array", tickvals=sorted(set(levels.values()))),
        yaxis=dict(title=dict(text=f"{metric} {arrow}")),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0, font=dict(size=10)),
        margin=dict(b=40)), title=f"{metric}: score by error count, per walk", height=460)


#: KS labels: font size and the height (px) of one label's slot
KS_LABEL_SIZE = 10
KS_SLOT_PX = 18
CDF_Y_RANGE = (-0.02, 1.04)


def ks_label_slots(segments: Sequence[tuple[float, float]], n_slots: int, y_lo: float, slot: float) -> list[int]:
    """A distinct vertical slot for each KS label, as near its segment as possible.

    ``segments``: the (y0, y1) extent of each labelled KS segment, in the order labels have priority.
    Slot ``k`` is centred at ``y_lo + k * slot``. Shorter segments choose first (they have fewer
    slots beside them); each takes the free slot nearest its midpoint, preferring one inside the
    segment. Labels in distinct slots cannot overlap, however wide or narrow the plot is.
    Returns the slot index of each segment (at most ``n_slots`` segments are given).
    """
    free = set(range(n_slots))
    out = [0] * len(segments)
    for i in sorted(range(len(segments)), key=lambda i: (segments[i][1] - segments[i][0], i)):
        y0, y1 = segments[i]
        mid = (y0 + y1) / 2
        k = min(free, key=lambda k: (not (y0 <= y_lo + k * slot <= y1), abs(y_lo + k * slot - mid), k))
        free.remove(k)
        out[i] = k
    return out


def cdf_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
               ks_pairs: Sequence[Mapping], *, metric: str, lower_is_better: bool = False,
               max_labels: int = 10):
    """Empirical CDF of each node's scores, one colour per node (shades of its error level's colour,
    :func:`node_colors`), with each adjacent pair's KS distance drawn as a vertical segment where it
    is attained.

    ``ks_pairs``: dicts with keys ``a``, ``b`` (node labels), ``statistic``, ``location``, ``cdf_a``,
    ``cdf_b`` (as in :class:`ts2viz.stats.KSResult`) and optionally ``signed`` (the KS distance signed
    by the direction of the pair's mean gap, see :func:`ts2viz.metametrics.signed`). Pairs with a
    negative signed distance (the node with more errors scores higher) are drawn in red. The
    ``max_labels`` lowest (signed) distances get a text label (x100), each in its own vertical slot
    so that labels never overlap; every distance shows on hover. The legend is a compact row below.
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
    top = TOOLBAR_PX + TITLE_PX * len(_title_lines(f"{metric}: node score CDFs and KS distances")) + 10
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
    return _fig(traces, dict(annotations=ann, margin=dict(t=top, b=bottom), **stack_legends(specs, heights, height),
                             xaxis=dict(title=dict(text=f"{metric} {arrow}"), range=[lo - pad, hi + pad]),
                             yaxis=dict(title=dict(text="cumulative fraction of node images"),
                                        range=list(CDF_Y_RANGE))),
                title=f"{metric}: node score CDFs and KS distances", height=height)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"


def question_node_heatmap(accuracy, *, title: str | None = None, value_label: str = "accuracy",
                          percent: bool = True, max_chars: int = 46):
    """Questions x nodes of one SEG: which question catches which error along the graph.

    ``accuracy``: a DataFrame as :func:`ts2viz.qa.views.question_node_accuracy` returns it (index
    question id, a ``question`` column, one column per node label in the SEG's order, values in [0, 1]
    or NaN; ``attrs["levels"]`` the error count per node, ``attrs["n_images"]`` the images with
    records per node). One row per question (ids top to bottom), one column per node (its label with
    its error count and a mark in its colour, :func:`node_colors`); cells orange (0) to blue (1), printed as percentages
    (``percent``) or two decimals, "n/a" where a node has no records. A question whose cell turns orange
    from a node to the next level is one that notices the error added there.
    """
    if accuracy is None or len(accuracy) == 0:
        return empty_figure("No questions to show for this SEG and metric")
    nodes = [c for c in accuracy.columns if c != "question"]
    levels = dict(accuracy.attrs.get("levels") or {})
    counts = dict(accuracy.attrs.get("n_images") or {})
    colors = node_colors({n: int(levels.get(n, 0)) for n in nodes})
    qids = [int(q) for q in accuracy.index]
    texts = [str(t) for t in accuracy["question"]]
    ylabels = [f"{q} · {_short(t, max_chars)}" for q, t in zip(qids, texts)]
    z = accuracy[nodes].to_numpy(dtype=float)

    def cell(v: float) -> str:
        if np.isnan(v):
            return "n/a"
        return f"{v * 100:.0f}%" if percent else f"{v:.2f}"

    text = [[cell(v) for v in row] for row in z]
    hover = [[f"q{q}: {t}<br>node {n} ({plural(int(levels.get(n, 0)), 'error')}, "
              f"{plural(int(counts.get(n, 0)), 'image')})<br>{value_label}: {cell(v)}"
              for n, v in zip(nodes, row)] for q, t, row in zip(qids, texts, z)]
    ticks = [f"<span style='color:{colors[n]}'>■</span> <b>{n}</b><br>{plural(int(levels.get(n, 0)), 'error')}"
             for n in nodes]
    heat = dict(type="heatmap", z=[_clean(r) for r in z], x=nodes, y=ylabels, zmin=0, zmax=1,
                colorscale=GOODNESS_SCALE, text=text, texttemplate="%{text}", customdata=hover,
                textfont=dict(size=11 if len(nodes) <= 12 else 9), xgap=2, ygap=2,
                colorbar=dict(title=dict(text=value_label), thickness=12, len=0.8),
                hovertemplate="%{customdata}<extra></extra>")
    height = max(280, min(1100, 26 * len(qids) + 190))
    # the node labels sit above the cells, under the title: room for both (two lines of tick text)
    top = (TOOLBAR_PX + TITLE_PX * len(_title_lines(title)) + 10 if title else 16) + 44
    return _fig([heat], dict(xaxis=dict(side="top", showgrid=False, tickmode="array", tickvals=nodes, ticktext=ticks),
                             yaxis=dict(autorange="reversed", showgrid=False, tickfont=dict(size=11)),
                             margin=dict(l=16, b=16, t=top)),
                title=title, height=height, legend=False)


def landing_figure(node_levels: Mapping[str, int], node_scores: Mapping[str, np.ndarray],
                   uploads: Sequence[tuple[str, float]], *, metric: str, lower_is_better: bool = False):
    """Where uploaded images land against a SEG's node score distributions.

    Each node's scores as a box with points (x = node, ordered by label); each upload as a dashed
    horizontal line across all nodes, labelled with its name.
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
                hovertemplate="%{y} vs %{x}<br>r = %{text} (x100)<extra></extra>")
    return _fig([heat], dict(shapes=shapes, xaxis=dict(tickangle=-45, showgrid=False),
                             yaxis=dict(autorange="reversed", showgrid=False), margin=dict(l=140, b=140)),
                title=title, height=size, legend=False)


def _stars(p: float, alpha: float) -> str:
    """Significance marks: * below alpha, ** below min(alpha, 0.01), *** below min(alpha, 0.001)."""
    if not p < alpha:
        return ""
    return "***" if p < min(alpha, 0.001) else "**" if p < min(alpha, 0.01) else "*"


def _signed(v: float) -> str:
    """+2.3, -0.4, +22 (no decimal from 10 on, so cells of a 19 x 19 heatmap hold their text)."""
    return f"{v:+.0f}" if abs(v) >= 9.95 else f"{v:+.1f}"


def _p_text(p: float) -> str:
    return "n/a" if math.isnan(p) else (f"{p:.3f}" if p >= 0.001 else f"{p:.0e}")


def significance_heatmap(metrics: Sequence[str], difference, pvalue, *, value: str = "difference",
                         alpha: float = 0.05, title: str | None = None, scale: float = 100.0,
                         p_label: str = "Holm p", cell_text: str = "value"):
    """Which leaderboard orderings are significant: a metric x metric heatmap.

    ``difference[i, j]`` is row metric i minus column metric j (e.g. a difference of Ord averages),
    ``pvalue[i, j]`` the p-value of that comparison, typically Holm-corrected
    (:class:`ts2viz.uncertainty.PairwiseComparison`'s ``difference`` and ``pvalue_holm``).

    ``value="difference"``: significant cells (p < ``alpha``) coloured by the signed difference
    (x ``scale``; blue = row better, orange = row worse), marked ``*``/``**``/``***`` (p below alpha, 0.01, 0.001);
    the other cells grey with the difference in muted text. ``value="p"``: every cell coloured by
    -log10 p, labelled with p and the same marks. The diagonal is blank; NaN p-values read "n/a".
    ``cell_text="marks"`` prints only the marks in the cells (for a narrow plot, where a number and
    its marks do not fit a cell; hover still shows both).
    """
    names = [str(m) for m in metrics]
    M = len(names)
    if M == 0:
        return empty_figure("No metrics to compare")
    diff = np.asarray(difference, dtype=float)
    p = np.asarray(pvalue, dtype=float)
    if diff.shape != (M, M) or p.shape != (M, M):
        raise ValueError(f"difference and pvalue must be {M} x {M} (one row and column per metric)")
    if value not in ("difference", "p"):
        raise ValueError(f"value must be 'difference' or 'p', got {value!r}")
    if cell_text not in ("value", "marks"):
        raise ValueError(f"cell_text must be 'value' or 'marks', got {cell_text!r}")
    off = ~np.eye(M, dtype=bool)
    sig = off & (np.nan_to_num(p, nan=1.0) < alpha)
    marks = [[_stars(p[i, j], alpha) if off[i, j] else "" for j in range(M)] for i in range(M)]
    hover = [[f"{names[i]} − {names[j]}: {diff[i, j] * scale:+.1f}<br>{p_label} = {_p_text(p[i, j])}"
              if off[i, j] else names[i] for j in range(M)] for i in range(M)]
    font = dict(size=8 if M > 12 else 11)
    common = dict(type="heatmap", x=names, y=names, xgap=1, ygap=1, customdata=hover, textfont=font,
                  texttemplate="%{text}", hovertemplate="%{customdata}<extra></extra>")
    if value == "p":
        with np.errstate(divide="ignore"):
            z = np.where(off & ~np.isnan(p), -np.log10(np.maximum(p, 1e-300)), np.nan)
        text = [[f"{_p_text(p[i, j]) if cell_text == 'value' else ''}{marks[i][j]}" if off[i, j] else ""
                 for j in range(M)] for i in range(M)]
        zmax = float(np.nanmax(z)) if np.isfinite(z).any() else 1.0
        traces = [dict(common, z=[_clean(r) for r in z], text=text, zmin=0, zmax=max(zmax, -math.log10(alpha)),
                       colorscale=EVIDENCE_SCALE, colorbar=dict(title=dict(text="−log10 p"), thickness=12, len=0.8))]
    else:
        d = diff * scale
        text = [[f"{_signed(d[i, j]) if cell_text == 'value' else ''}{marks[i][j]}"
                 if off[i, j] and not math.isnan(d[i, j]) else "" for j in range(M)] for i in range(M)]
        zs = np.where(sig, d, np.nan)
        zn = np.where(off & ~sig, 0.0, np.nan)
        lim = float(np.nanmax(np.abs(zs))) if sig.any() else 1.0
        traces = [
            dict(common, z=[_clean(r) for r in zn], text=[[t if off[i, j] and not sig[i, j] else "" for j, t in enumerate(r)]
                                                         for i, r in enumerate(text)],
                 colorscale=[[0.0, NOT_SIGNIFICANT], [1.0, NOT_SIGNIFICANT]], showscale=False,
                 textfont=dict(font, color=MUTED), name="not significant"),
            dict(common, z=[_clean(r) for r in zs], text=[[t if sig[i, j] else "" for j, t in enumerate(r)]
                                                         for i, r in enumerate(text)],
                 zmin=-lim, zmax=lim, colorscale=SIGNED_SCALE, name=f"{p_label} < {alpha:g}",
                 colorbar=dict(title=dict(text=f"row − col (×{scale:g})" if scale != 1 else "row − col"),
                               thickness=12, len=0.8)),
        ]
    size = max(440, min(780, 34 * M + 220))
    return _fig(traces, dict(xaxis=dict(tickangle=-45, showgrid=False),
                             yaxis=dict(autorange="reversed", showgrid=False), margin=dict(l=140, b=140)),
                title=title or f"Which orderings are significant ({p_label} < {alpha:g})", height=size, legend=False)


def pair_scatter(points, *, x_name: str, y_name: str, stat: str, highlight: int | None = None):
    """Per-SEG values of two metrics, one point per SEG (hover: id, partition, prompt).

    ``points``: DataFrame with columns ``seg_id``, ``partition``, ``prompt``, ``x``, ``y`` (fractions;
    shown x100 for the statistics in :data:`ts2viz.display.SCALED_STATS`).
    """
    if points is None or len(points) == 0:
        return empty_figure("No SEGs with values for both metrics")
    k = 100.0 if stat in SCALED_STATS else 1.0
    unit, fmt = (" (x100)", ".1f") if k == 100.0 else ("", ".3f")
    name = stat_name(stat)
    pcols = {"Synth": "#4f46e5", "Nat": "#16a34a", "Real": "#d97706"}
    traces = []
    for part, sub in points.groupby("partition", sort=False):
        traces.append(dict(
            type="scatter", x=_clean(sub["x"] * k), y=_clean(sub["y"] * k), mode="markers", name=str(part),
            marker=dict(size=8, color=pcols.get(str(part), MUTED), opacity=0.8, line=dict(width=0.5, color="white")),
            customdata=[[int(s), str(p)[:90]] for s, p in zip(sub["seg_id"], sub["prompt"])],
            hovertemplate="SEG %{customdata[0]}: %{customdata[1]}<br>" + f"{x_name}: %{{x:{fmt}}}<br>"
                          + f"{y_name}: %{{y:{fmt}}}<extra></extra>"))
    if highlight is not None and (points["seg_id"] == highlight).any():
        r = points[points["seg_id"] == highlight].iloc[0]
        traces.append(dict(type="scatter", x=[float(r["x"]) * k], y=[float(r["y"]) * k], mode="markers+text",
                           text=[f"SEG {highlight}"], textposition="top center", name="selected",
                           marker=dict(size=16, color="rgba(0,0,0,0)", line=dict(width=2.5, color=HIGHLIGHT))))
    lo = float(np.nanmin([points["x"].min(), points["y"].min()])) * k
    hi = float(np.nanmax([points["x"].max(), points["y"].max()])) * k
    traces.append(dict(type="scatter", x=[lo, hi], y=[lo, hi], mode="lines", name="y = x", hoverinfo="skip",
                       line=dict(color="#9ca3af", dash="dash", width=1)))
    specs, heights = bottom_legends([("", [t["name"] for t in traces])])
    height = 460 + sum(heights)
    return _fig(traces, dict(xaxis=dict(title=dict(text=f"{x_name}: {name}{unit}")),
                             yaxis=dict(title=dict(text=f"{y_name}: {name}{unit}")),
                             margin=dict(b=48 + sum(heights)), **stack_legends(specs, heights, height)),
                title=f"Per-SEG {name}: {y_name} vs {x_name}", height=height)
