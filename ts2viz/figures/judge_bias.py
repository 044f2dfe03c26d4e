"""Judges on side-by-side pairs: the position-bias bars (share of verdicts naming the first image shown)."""
from __future__ import annotations

import math

from .style import HIGHLIGHT, METRIC_A, MUTED, empty_figure, figure


def position_bias_bars(frame, *, title: str = "Position bias: verdicts naming the first image shown"):
    """Horizontal bars of each judge's ``first_share`` with its interval; 50% (no position preference) marked.

    A bar is red when its interval excludes 50% (a position preference beyond chance), blue otherwise.

    Parameters
    ----------
    frame : pandas.DataFrame
        :meth:`ts2viz.metaeval.judges.JudgeResult.frame` (``judge``, ``first_share`` and, when present,
        ``first_share_lo`` / ``first_share_hi``).
    title : str
        The title.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty one with a message when no judge names a side.

    Notes
    -----
    NaN policy: a judge whose verdicts never name a side (all unparsed) has no bar and is listed as
    "n/a" on its axis label.
    """
    rows = [r for _, r in frame.iterrows()]
    if not rows or all(math.isnan(float(r["first_share"])) for r in rows):
        return empty_figure("No judge names a side: no position bias to show")
    names, x, lo, hi, colors = [], [], [], [], []
    for r in rows:
        v = float(r["first_share"])
        names.append(str(r["judge"]) if not math.isnan(v) else f"{r['judge']} (n/a)")
        x.append(None if math.isnan(v) else 100 * v)
        a, b = float(r.get("first_share_lo", math.nan)), float(r.get("first_share_hi", math.nan))
        lo.append(0.0 if math.isnan(a) else 100 * (v - a))
        hi.append(0.0 if math.isnan(b) else 100 * (b - v))
        colors.append(HIGHLIGHT if not (math.isnan(a) or math.isnan(b)) and (a > 0.5 or b < 0.5) else METRIC_A)
    bar = dict(type="bar", orientation="h", x=x, y=names, marker=dict(color=colors),
               error_x=dict(type="data", symmetric=False, array=hi, arrayminus=lo, color=MUTED, thickness=1.2),
               hovertemplate="%{y}: %{x:.1f}% first-image verdicts<extra></extra>")
    line = dict(type="line", x0=50, x1=50, yref="paper", y0=0, y1=1, line=dict(color=MUTED, dash="dot", width=1.5))
    return figure([bar], dict(shapes=[line], xaxis=dict(title="% of A-or-B verdicts naming the first image shown",
                                                         range=[0, 100]),
                              yaxis=dict(autorange="reversed"), margin=dict(l=170)),
                  title=title, height=max(300, 22 * len(names) + 140), legend=False)
