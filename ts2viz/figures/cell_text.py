"""Heatmap cell text in a colour chosen per cell, so that every cell's text reads on its own background.

Plotly's heatmap prints its ``texttemplate`` in one font colour for every cell: dark text vanished on the
dark blue and dark orange ends of the scales, and the values of Gecko's marked (dark) cells could not be
read. :func:`cell_text_trace` draws the text instead as a scatter trace of text points, one per cell, each
in :func:`~ts2viz.figures.style.readable_on` its cell's colour: the colour plotly gives the cell's value on
the scale of the topmost heatmap that colours it (:func:`scale_color`), or the page's white for a blank
cell. Every text then has a WCAG contrast of at least 4.5:1 (:data:`~ts2viz.figures.style.TEXT_CONTRAST`).
The points take no hover and no click (``hoverinfo="skip"``): the heatmap under them keeps both.
"""
from __future__ import annotations

import math
from typing import Sequence

from .style import readable_on, text_color_on, to_rgb

#: a blank cell shows the plot's background (the app's figures: white)
BLANK = "#ffffff"


def scale_color(colorscale: Sequence, value: float, zmin: float, zmax: float) -> str:
    """The colour plotly.js paints a heatmap cell of ``value``: the scale interpolated linearly in RGB.

    Parameters
    ----------
    colorscale : sequence of (float, str)
        ``[[position, "#rrggbb"], ...]``, positions 0 to 1 ascending (two stops at one position: a jump).
    value : float
        The cell's value.
    zmin, zmax : float
        The values at positions 0 and 1 (values outside are clamped).

    Returns
    -------
    str
        ``#rrggbb``.

    Examples
    --------
    >>> from ts2viz.figures.cell_text import scale_color
    >>> scale_color([[0, "#000000"], [1, "#ffffff"]], 0.5, 0.0, 1.0)
    '#808080'
    """
    t = 0.0 if zmax == zmin else (float(value) - zmin) / (zmax - zmin)
    t = min(1.0, max(0.0, t))
    stops = [(float(p), to_rgb(c)) for p, c in colorscale]
    for (p0, c0), (p1, c1) in zip(stops, stops[1:]):
        if t <= p1:
            f = 0.0 if p1 == p0 else (t - p0) / (p1 - p0)
            return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(c0, c1))
    return "#" + "".join(f"{c:02x}" for c in stops[-1][1])


def _range(trace: dict) -> tuple[float, float]:
    """The trace's zmin and zmax, or (as plotly does) its values' least and largest."""
    vals = [v for row in trace["z"] for v in row if v is not None and not math.isnan(v)]
    lo = trace.get("zmin", min(vals, default=0.0))
    hi = trace.get("zmax", max(vals, default=0.0))
    return float(lo), float(hi)


def cell_backgrounds(heatmaps: Sequence[dict], blank: str = BLANK) -> list[list[str]]:
    """Each cell's colour as drawn: the topmost heatmap with a value there, else ``blank``.

    Parameters
    ----------
    heatmaps : sequence of dict
        Heatmap traces of one grid (same rows and columns), in drawing order (the last on top), each with
        ``z`` (rows of values, None for no colour), ``colorscale`` and optional ``zmin``/``zmax``.
    blank : str, default BLANK
        The colour of a cell no heatmap colours.

    Returns
    -------
    list of list of str
        ``#rrggbb`` per cell, rows as ``z``'s.
    """
    rows, cols = len(heatmaps[0]["z"]), len(heatmaps[0]["z"][0]) if heatmaps[0]["z"] else 0
    out = [[blank] * cols for _ in range(rows)]
    for trace in heatmaps:
        lo, hi = _range(trace)
        for i, row in enumerate(trace["z"]):
            for j, v in enumerate(row):
                if v is not None and not math.isnan(v):
                    out[i][j] = scale_color(trace["colorscale"], v, lo, hi)
    return out


def cell_text_trace(heatmaps: Sequence[dict], text: Sequence[Sequence[str]], *, font: dict | None = None,
                    color=None, name: str = "cell text") -> dict:
    """A scatter trace printing ``text`` over the cells of ``heatmaps``, each in a colour that reads there.

    Parameters
    ----------
    heatmaps : sequence of dict
        The heatmap traces the text sits on, in drawing order (:func:`cell_backgrounds`); the first one's
        ``x`` and ``y`` name the columns and rows.
    text : sequence of sequence of str
        The text per cell (rows as ``z``'s); an empty string prints nothing.
    font : dict, optional
        Font settings (size, weight) for every cell; its colour is set per cell.
    color : str or sequence of sequence of str, optional
        The colour wanted (one, or one per cell), kept where it reaches
        :data:`~ts2viz.figures.style.TEXT_CONTRAST` on the cell, else black or white
        (:func:`~ts2viz.figures.style.readable_on`); none: black or white, whichever contrasts more.
    name : str, default "cell text"
        The trace's name.

    Returns
    -------
    dict
        A ``scatter`` trace (``mode="text"``, ``textfont.color`` one per point, no hover, no legend).

    Examples
    --------
    >>> from ts2viz.figures.cell_text import cell_text_trace
    >>> heat = dict(type="heatmap", x=["a", "b"], y=["m"], z=[[0.0, 1.0]], zmin=0, zmax=1,
    ...             colorscale=[[0, "#1d4ed8"], [1, "#f8fafc"]])
    >>> t = cell_text_trace([heat], [["0.00", "1.00"]])
    >>> t["x"], t["textfont"]["color"]
    (['a', 'b'], ['#ffffff', '#000000'])
    """
    bg = cell_backgrounds(heatmaps)
    xs, ys = list(heatmaps[0]["x"]), list(heatmaps[0]["y"])
    px, py, pt, pc = [], [], [], []
    for i, row in enumerate(text):
        for j, s in enumerate(row):
            if not s:
                continue
            want = color if color is None or isinstance(color, str) else color[i][j]
            px.append(xs[j])
            py.append(ys[i])
            pt.append(s)
            pc.append(readable_on(want, bg[i][j]) if want else text_color_on(bg[i][j]))
    return dict(type="scatter", mode="text", x=px, y=py, text=pt, textposition="middle center",
                textfont={**(font or {}), "color": pc}, hoverinfo="skip", showlegend=False, name=name,
                cliponaxis=False)
