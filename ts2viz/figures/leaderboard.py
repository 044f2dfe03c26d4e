"""The leaderboard's figure: Ord against Sep, one point per metric, labelled where the labels fit."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..display import stat_name, x100
from .labels import LABEL_PLOT_WIDTH, dense_cluster, place_labels
from .style import (GRID, INK, MUTED, TITLE_PX, TOOLBAR_PX, bottom_legends, empty_figure, family_color, figure,
                    json_list, stack_legends)


# -- leaderboard ---------------------------------------------------------------------------------

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
    """``head`` and every one of ``names`` joined by " · ", in rows of at most :data:`UNLABELLED_CHARS` characters.

    A longer name gets a row of its own; no name is left out.
    """
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

    Labels are placed without overlap for a plot :data:`~ts2viz.figures.labels.LABEL_PLOT_WIDTH` pixels
    wide (hover shows every name; names left without a label are listed under the plot). When most
    metrics sit in a dense cluster, a button zooms to it (with its own labels).

    Parameters
    ----------
    board : pandas.DataFrame
        Columns ``metric``, ``family`` and the two value columns (fractions); with ``error_bars`` also
        ``{x}_lo``, ``{x}_hi``, ``{y}_lo``, ``{y}_hi`` (the layout of
        :func:`ts2viz.metametrics.table.leaderboard_table` with a bootstrap).
    x : str, default "ord_avg"
        The value column on the x axis.
    y : str, default "sep_avg"
        The value column on the y axis.
    title : str, optional
        The title (default "Ordering vs separation").
    error_bars : bool, default False
        Draw the intervals as whiskers on both axes.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message when there is nothing to show.

    Raises
    ------
    ValueError
        If ``error_bars`` is set and an interval column is missing.

    Notes
    -----
    NaN policy: a metric with a NaN value is not drawn; a NaN bound draws no whisker on that side.
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
            type="scatter", x=json_list(xv[idx]), y=json_list(yv[idx]), mode="markers", name=fam,
            text=[names[i] for i in idx],
            marker=dict(size=11, color=col, line=dict(width=1, color="white")),
            hovertemplate=f"<b>%{{text}}</b><br>{xname} {xpart}: %{{x:.1f}}<br>{yname} {ypart}: %{{y:.1f}}"
                          "<extra></extra>")
        if error_bars:
            lohi = {c: np.array([x100(v) for v in board[c]], dtype=float)[idx] for c in bounds}
            for axis, c, v in (("x", x, xv[idx]), ("y", y, yv[idx])):
                trace[f"error_{axis}"] = dict(type="data", symmetric=False, array=json_list(lohi[f"{c}_hi"] - v),
                                              arrayminus=json_list(v - lohi[f"{c}_lo"]), color=col, thickness=1.2,
                                              width=0)
            trace["customdata"] = [json_list(r) for r in np.stack([lohi[c] for c in bounds], axis=1)]
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
    return figure(traces, layout, title=title or "Ordering vs separation", height=height)
