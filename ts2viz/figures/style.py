"""The figures' shared style: one palette (matching assets/app.css), colour scales, and layout helpers.

Node and family colours with their contrast on white, the figure constructor (:func:`figure`; plain
dicts inside :func:`plain_figures`), text widths, legends under a figure, and the empty figure.
"""
from __future__ import annotations

import contextvars
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

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
#: the colours of the other families (Ensemble, ...): none near a colour of :data:`FAMILY_COLORS` (Ensemble
#: drew TIFA's teal, issue 40 item 17)
OTHER_FAMILY_COLORS = ("#475569", "#92400e", "#be123c", "#65a30d", "#0f172a")
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
#: the muted text of non-significant cells: grey that still reads on :data:`NOT_SIGNIFICANT` (6.9:1; the
#: lighter :data:`MUTED` was 4.4:1, under WCAG's 4.5)
NOT_SIGNIFICANT_TEXT = "#4b5563"


def to_rgb(color) -> tuple[int, int, int]:
    """A colour as (r, g, b) ints in 0-255.

    Parameters
    ----------
    color : str or tuple of int
        ``#rrggbb``, ``#rgb`` or an (r, g, b) triple.

    Returns
    -------
    tuple of int
        The channels.

    Examples
    --------
    >>> from ts2viz.figures.style import to_rgb
    >>> to_rgb("#777"), to_rgb("#1d4ed8")
    ((119, 119, 119), (29, 78, 216))
    """
    if not isinstance(color, str):
        r, g, b = color
        return int(r), int(g), int(b)
    if len(color) == 4:
        color = "#" + "".join(c * 2 for c in color[1:])
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))


def mix(a: str, b: str, t: float) -> str:
    """Colour ``a`` moved a fraction ``t`` of the way to colour ``b``.

    Parameters
    ----------
    a, b : str
        Colours ``#rrggbb``.
    t : float
        The fraction, 0 (``a``) to 1 (``b``).

    Returns
    -------
    str
        The mixed colour, ``#rrggbb`` (each channel interpolated linearly and rounded).

    Examples
    --------
    >>> from ts2viz.figures.style import mix
    >>> mix("#000000", "#ffffff", 0.5)
    '#808080'
    """
    ca, cb = to_rgb(a), to_rgb(b)
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def level_color(level: int, max_level: int) -> str:
    """Colour of an error level.

    Parameters
    ----------
    level : int
        The error level (0 = faithful).
    max_level : int
        The SEG's largest level.

    Returns
    -------
    str
        :data:`LEVEL_COLORS` ``[level]`` (the same in every SEG) while the SEG's largest level has a
        palette colour; for deeper SEGs the levels are spread over the palette, between its colours
        (interpolated), so distinct levels keep distinct colours.

    Examples
    --------
    >>> from ts2viz.figures.style import level_color
    >>> level_color(1, 3), level_color(3, 12)
    ('#ca8a04', '#d35815')
    """
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
#: the least lightness between two shades of one level (:func:`node_colors`)
SHADE_MIN_STEP = 0.04


#: a dot's outline stands out on the white page at least this much (WCAG's contrast ratio for graphical
#: objects): dots in the light shades of a level's colour (yellow) were unreadable on white
MIN_CONTRAST = 3.0


#: WCAG 2.x's least contrast ratio for normal-size text (level AA): every heatmap cell's text reaches it
TEXT_CONTRAST = 4.5


def relative_luminance(rgb) -> float:
    """WCAG 2.x relative luminance of a colour.

    Parameters
    ----------
    rgb : str or tuple of int
        ``#rrggbb``, ``#rgb`` or (r, g, b) in 0-255.

    Returns
    -------
    float
        0 (black) to 1 (white): 0.2126 R + 0.7152 G + 0.0722 B of the linearised sRGB channels (WCAG 2.x's
        threshold 0.03928).

    Examples
    --------
    >>> from ts2viz.figures.style import relative_luminance
    >>> relative_luminance("#000000"), relative_luminance("#fff")
    (0.0, 1.0)
    """
    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in to_rgb(rgb))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(c1, c2) -> float:
    """WCAG 2.x contrast ratio of two colours, (L1 + 0.05) / (L2 + 0.05) with L1 the lighter.

    Parameters
    ----------
    c1, c2 : str or tuple of int
        Colours (:func:`relative_luminance`).

    Returns
    -------
    float
        The ratio, 1 (the same luminance) to 21 (black and white), whichever is given first.

    Examples
    --------
    >>> from ts2viz.figures.style import contrast_ratio
    >>> round(contrast_ratio("#000", "#ffffff"), 2), round(contrast_ratio("#ffffff", "#777777"), 2)
    (21.0, 4.48)
    """
    a, b = sorted((relative_luminance(c1), relative_luminance(c2)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def text_color_on(bg) -> str:
    """Black or white text, whichever contrasts more with the background ``bg``.

    Either reaches a ratio of at least 4.58 on every colour (the least, at a luminance of 0.18, is
    sqrt(1.05 x 0.05) / 0.05), so the text of a cell coloured ``bg`` is always readable at WCAG AA.

    Parameters
    ----------
    bg : str or tuple of int
        The background.

    Returns
    -------
    str
        ``"#000000"`` or ``"#ffffff"``.

    Examples
    --------
    >>> from ts2viz.figures.style import text_color_on
    >>> text_color_on("#1d4ed8"), text_color_on("#d6d3d1")
    ('#ffffff', '#000000')
    """
    return "#000000" if contrast_ratio("#000000", bg) >= contrast_ratio("#ffffff", bg) else "#ffffff"


def readable_on(color, bg, min_ratio: float = TEXT_CONTRAST) -> str:
    """``color`` where it reads on ``bg`` (contrast at least ``min_ratio``), else black or white.

    Parameters
    ----------
    color : str
        The text colour wanted (a muted grey, ...).
    bg : str or tuple of int
        The background.
    min_ratio : float, default TEXT_CONTRAST
        The least contrast ratio.

    Returns
    -------
    str
        ``color``, or :func:`text_color_on` ``(bg)`` when ``color`` has too little contrast.

    Examples
    --------
    >>> from ts2viz.figures.style import readable_on
    >>> readable_on("#4b5563", "#f3f4f6"), readable_on("#6b7280", "#1d4ed8")
    ('#4b5563', '#ffffff')
    """
    return color if contrast_ratio(color, bg) >= min_ratio else text_color_on(bg)


def contrast_on_white(color: str) -> float:
    """WCAG contrast ratio of a colour against white.

    Parameters
    ----------
    color : str
        ``#rrggbb``.

    Returns
    -------
    float
        The ratio, from 1 (white) to 21 (black).

    Examples
    --------
    >>> from ts2viz.figures.style import contrast_on_white
    >>> round(contrast_on_white("#0f766e"), 2)
    5.47
    """
    return 1.05 / (relative_luminance(color) + 0.05)


def on_white(color: str, min_contrast: float = MIN_CONTRAST) -> str:
    """``color`` darkened until its contrast on white is at least ``min_contrast``.

    Parameters
    ----------
    color : str
        ``#rrggbb``.
    min_contrast : float, default MIN_CONTRAST
        The WCAG contrast ratio to reach.

    Returns
    -------
    str
        ``color`` itself when it has the contrast already, else its lightness lowered (hue and
        saturation kept) in steps of 0.01 until it does; :data:`INK` if none does.
    """
    import colorsys

    if contrast_on_white(color) >= min_contrast:
        return color
    h, light, sat = colorsys.rgb_to_hls(*(c / 255 for c in to_rgb(color)))
    while light > 0.05:
        light -= 0.01
        out = "#" + "".join(f"{round(c * 255):02x}" for c in colorsys.hls_to_rgb(h, light, sat))
        if contrast_on_white(out) >= min_contrast:
            return out
    return INK


def node_colors(node_levels: Mapping[str, int]) -> dict[str, str]:
    """One colour per node of a SEG.

    Parameters
    ----------
    node_levels : Mapping[str, int]
        Node label -> error level.

    Returns
    -------
    dict[str, str]
        Node label -> its error level's colour (:func:`level_color`), in distinct shades when the level
        has several nodes (1a darkest to 1d lightest, in label order); the lightest darkened towards a
        contrast of :data:`MIN_CONTRAST` on white as far as :data:`SHADE_MIN_STEP` allows (a light yellow
        shade was faint on the white plots, issue 40 item 17).

    Examples
    --------
    >>> from ts2viz.figures.style import node_colors
    >>> node_colors({"0": 0, "1a": 1, "1b": 1})
    {'0': '#0f766e', '1a': '#823303', '1b': '#9b9703'}
    """
    import colorsys

    levels = dict(node_levels)
    max_level = max(levels.values(), default=0)
    out = {}
    for lv in sorted(set(levels.values())):
        same = [lbl for lbl in levels if levels[lbl] == lv]
        base = level_color(lv, max_level)
        if len(same) == 1:
            out[same[0]] = on_white(base)
            continue
        h, _, sat = colorsys.rgb_to_hls(*(c / 255 for c in to_rgb(base)))
        lo, hi = SHADE_LIGHTNESS

        def shade(f: float, top: float) -> str:
            rgb = colorsys.hls_to_rgb((h + (f - 0.5) * SHADE_HUE_TURN / 360) % 1.0, lo + (top - lo) * f, sat)
            return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)

        # the lightest shade darkened towards MIN_CONTRAST on white (node 1b's light yellow was faint on the
        # white plots), as far as the shades keep SHADE_MIN_STEP of lightness between them: many nodes of
        # one level stay apart, and light ones keep their outline (on_white) in the plots
        floor = lo + SHADE_MIN_STEP * (len(same) - 1)
        while hi - 0.01 >= floor and contrast_on_white(shade(1.0, hi)) < MIN_CONTRAST:
            hi -= 0.01
        for i, lbl in enumerate(same):
            out[lbl] = shade(i / (len(same) - 1), hi)
    return out


def walk_color(walk: int) -> str:
    """Colour of a SEG's walk in the walk plots: by its number, the same in every plot of the SEG.

    Parameters
    ----------
    walk : int
        The walk's number in its SEG.

    Returns
    -------
    str
        A colour of :data:`WALK_COLORS`.

    Examples
    --------
    >>> walk_color(1) == walk_color(1 + len(WALK_COLORS)) == WALK_COLORS[1]
    True
    """
    return WALK_COLORS[int(walk) % len(WALK_COLORS)]


def family_color(family: str) -> str:
    """Colour of a metric family.

    Parameters
    ----------
    family : str
        A family name (``Embedding``, ``TIFA``, ``DSG``, ...).

    Returns
    -------
    str
        :data:`FAMILY_COLORS` ``[family]``, or a colour of :data:`OTHER_FAMILY_COLORS` chosen by the name
        for any other family (stable across runs).
    """
    if family in FAMILY_COLORS:
        return FAMILY_COLORS[family]
    return OTHER_FAMILY_COLORS[sum(map(ord, family)) % len(OTHER_FAMILY_COLORS)]


#: the modebar (plotly's toolbar, shown on hover) takes the top TOOLBAR_PX of a figure: titles go below it
TOOLBAR_PX = 30
TITLE_PX = 20          # one line of title text
TITLE_CHARS = 64       # longer titles are wrapped onto a second line


def title_lines(title: str) -> list[str]:
    """A title in lines of at most :data:`TITLE_CHARS` characters (broken at spaces).

    Parameters
    ----------
    title : str
        The title.

    Returns
    -------
    list of str
        The lines (a word longer than the limit gets a line of its own).
    """
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
    """A figure as the plain ``data`` (traces) and ``layout`` dicts that plotly.js reads.

    Attributes
    ----------
    data : list
        The traces, dicts with a ``type``.
    layout : dict
        The layout.
    """

    data: list
    layout: dict


_PLAIN = contextvars.ContextVar("ts2viz_plain_figures", default=False)


@contextmanager
def plain_figures():
    """Within this block the builders return :class:`PlainFigure` instead of ``go.Figure``.

    The same traces and layout, without building plotly's object model (a server that sends many figures
    as JSON skips most of its cost). Per thread and task (a context variable).

    Yields
    ------
    None
        The block runs with plain figures on.

    Examples
    --------
    >>> from ts2viz.figures.style import empty_figure, plain_figures
    >>> with plain_figures():
    ...     fig = empty_figure("no SEG selected")
    >>> type(fig).__name__, fig.layout["annotations"][0]["text"]
    ('PlainFigure', 'no SEG selected')
    """
    token = _PLAIN.set(True)
    try:
        yield
    finally:
        _PLAIN.reset(token)


def _fig(traces: list, layout: dict, *, title: str | None = None, height: int = 380, legend: bool = True):
    """A ``go.Figure`` from plain trace and layout dicts, in the app's style.

    A :class:`PlainFigure` inside :func:`plain_figures`. The title sits below the strip where plotly's
    modebar appears, so the toolbar never covers it. Built in one go without plotly's per-property
    validation (which costs a second on a figure with a few hundred traces or annotations); the dicts use
    only standard plotly attributes.
    """
    lines = title_lines(title) if title else []
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
    """A figure from plain trace and layout dicts in the app's style.

    Builders outside this package (cost, human gold standards) use this.

    Parameters
    ----------
    traces : list of dict
        Traces with a ``type`` (``"scatter"``, ``"scattergl"``, ...), spelled as plotly.js reads them
        (``line: {shape: "hv"}``, not plotly.py's ``line_shape``).
    layout : dict
        Layout entries; ``xaxis`` and ``yaxis`` are merged into the app's axis style, other dicts into
        the app's defaults.
    title : str, optional
        The title, wrapped at :data:`TITLE_CHARS` characters and placed below the modebar.
    height : int, default 380
        Height in pixels.
    legend : bool, default True
        Show the legend.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        A ``go.Figure``, or the :class:`PlainFigure` that reaches the page as it is inside
        :func:`plain_figures` (the app's one path, ``ts2viz.ui.glue.plots.page_plot``).

    Examples
    --------
    >>> from ts2viz.figures.style import figure, plain_figures
    >>> with plain_figures():
    ...     fig = figure([{"type": "scatter", "x": [1, 2], "y": [3, 4]}], {"xaxis": {"title": "errors"}})
    >>> fig.layout["xaxis"]["title"], fig.layout["height"]
    ('errors', 380)
    """
    return _fig(traces, dict(layout), title=title, height=height, legend=legend)


#: character widths, in font sizes, a little above those of DejaVu Sans (wider than Inter), by class
_NARROW, _WIDE = set("iljtfrI.,:;'|!()[] -"), set("mwMW%@#&+<=>^~")


def text_width(text: str, size: float = 10) -> float:
    """Estimated width in pixels of ``text`` in the app's sans-serif font.

    Parameters
    ----------
    text : str
        The text.
    size : float, default 10
        Font size in px.

    Returns
    -------
    float
        The width, on the generous side (measured against DejaVu Sans, which Chromium uses when Inter
        is missing), for placing labels without overlap.
    """
    em = 0.0
    for c in text:
        em += 0.42 if c in _NARROW else 1.0 if c in _WIDE else 0.8 if c.isupper() else 0.66
    return size * em


#: the figure width (px) legends are laid out for: a phone; wider screens need fewer rows
LEGEND_WIDTH = 320


def bottom_legends(groups: Sequence[tuple[str, Sequence[str]]], *, size: float = 11,
                   width: float = LEGEND_WIDTH) -> tuple[list[dict], list[int]]:
    """Horizontal legends stacked at the bottom of a figure, one per group, and the pixels each needs.

    Plotly lays a wrapping horizontal legend out as a grid whose column is its widest entry, so short
    node labels and long names go in separate legends. Rows are counted for a figure ``width`` pixels
    wide; on a wider screen fewer rows are needed, so the space reserved (the bottom margin) always
    suffices and the plot area keeps the height it was given. Positions are set by
    :func:`stack_legends` once the figure's height is known.

    Parameters
    ----------
    groups : sequence of (str, sequence of str)
        ``(title, entry names)`` per legend (``legend``, ``legend2``, ...; a trace picks its legend by
        name).
    size : float, default 11
        Font size in px.
    width : float, default LEGEND_WIDTH
        The figure width the rows are counted for.

    Returns
    -------
    specs : list of dict
        Plotly legend layouts, without their vertical position.
    heights : list of int
        The pixels each legend needs.
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
    """Layout entries for :func:`bottom_legends`' legends, stacked under the x axis.

    Parameters
    ----------
    specs : list of dict
        The legends (:func:`bottom_legends`).
    heights : list of int
        Their heights in pixels.
    figure_height : int
        The figure's height in pixels.

    Returns
    -------
    dict
        ``legend``, ``legend2``, ...: the first just under the x axis, the others below it (space a
        wide screen does not need is left at the bottom).
    """
    out, top = {}, sum(heights)
    for k, (spec, h) in enumerate(zip(specs, heights)):
        out["legend" if k == 0 else f"legend{k + 1}"] = {**spec, "y": top / figure_height}
        top -= h
    return out


def empty_figure(message: str, height: int = 300):
    """A blank figure with a centred message (no data, nothing selected).

    Parameters
    ----------
    message : str
        The message.
    height : int, default 300
        Height in pixels.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure (a :class:`PlainFigure` inside :func:`plain_figures`).
    """
    return _fig([], dict(annotations=[dict(text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                                           font=dict(size=13, color=MUTED))],
                         xaxis=dict(visible=False), yaxis=dict(visible=False)), height=height, legend=False)


def json_list(v) -> list:
    """A list for JSON: numpy scalars to Python numbers, NaN to None.

    Parameters
    ----------
    v : iterable
        The values.

    Returns
    -------
    list
        The values, floats and ints as Python numbers, NaN and None as None, others unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.figures.style import json_list
    >>> json_list([np.float64(1.5), float("nan"), np.int64(3), "x"])
    [1.5, None, 3, 'x']
    """
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
