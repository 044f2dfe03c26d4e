"""Comparisons of metrics: correlation and significance heatmaps, and two metrics' per-SEG values."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..display import SCALED_STATS, stat_name
from .cell_text import cell_text_trace
from .style import (CORR_SCALE, EVIDENCE_SCALE, HIGHLIGHT, INK, MUTED, NOT_SIGNIFICANT, NOT_SIGNIFICANT_TEXT,
                    SIGNED_SCALE, bottom_legends, empty_figure, figure, json_list, stack_legends)


# -- correlations ---------------------------------------------------------------------------------

def corr_heatmap(matrix, *, title: str, selected: tuple[str, str] | None = None):
    """Metric-metric correlation heatmap (values in [-1, 1], printed x100 like the paper's Figs 6/7).

    Parameters
    ----------
    matrix : pandas.DataFrame
        Square correlation matrix, metric names as columns (and rows, in the same order).
    title : str
        The title.
    selected : tuple of (str, str), optional
        A (column, row) pair of metrics whose cell is outlined.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message for an empty matrix.

    Notes
    -----
    NaN policy: NaN cells read "n/a".
    """
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
    heat = dict(type="heatmap", z=[json_list(r) for r in z], x=names, y=names, zmin=-1, zmax=1, colorscale=CORR_SCALE,
                text=text, xgap=1, ygap=1, colorbar=dict(title=dict(text="r"), thickness=12, len=0.8),
                hovertemplate="%{y} vs %{x}<br>r = %{text} (x100)<extra></extra>")
    values = cell_text_trace([heat], text, font=dict(size=9 if len(names) > 12 else 11))
    return figure([heat, values], dict(shapes=shapes, xaxis=dict(tickangle=-45, showgrid=False),
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

    Parameters
    ----------
    metrics : sequence of str
        The M metric names (rows and columns).
    difference : array_like
        (M, M) ``difference[i, j]`` is row metric i minus column metric j (e.g. a difference of Ord
        averages).
    pvalue : array_like
        (M, M) the p-value of that comparison, typically Holm-corrected
        (:class:`ts2viz.metametrics.comparison.PairwiseComparison`'s ``difference`` and
        ``pvalue_holm``).
    value : {'difference', 'p'}, default 'difference'
        ``"difference"``: significant cells (p < ``alpha``) coloured by the signed difference (x
        ``scale``; blue = row better, orange = row worse), marked ``*``/``**``/``***`` (p below alpha,
        0.01, 0.001); the other cells grey with the difference in muted text. ``"p"``: every cell
        coloured by -log10 p, labelled with p and the same marks.
    alpha : float, default 0.05
        The significance level.
    title : str, optional
        The title.
    scale : float, default 100.0
        Factor the differences are shown in.
    p_label : str, default "Holm p"
        What the p-values are called on hover and in the colour bar.
    cell_text : {'value', 'marks'}, default 'value'
        ``"marks"`` prints only the marks in the cells (for a narrow plot, where a number and its marks
        do not fit a cell; hover still shows both).

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message for no metrics.

    Raises
    ------
    ValueError
        If the matrices are not M x M, or ``value`` or ``cell_text`` is unknown.

    Notes
    -----
    The diagonal is blank. NaN policy: NaN p-values read "n/a" and count as not significant.
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
    # the significance marks large and bold (they were small and grey: issue 40 item 17), in black or white,
    # whichever reads on the cell (cell_text_trace); the not-significant cells keep a muted small text that
    # still reads on their grey
    marks_font = dict(size=(11 if M > 12 else 16) if cell_text == "marks" else font["size"], weight="bold")
    common = dict(type="heatmap", x=names, y=names, xgap=1, ygap=1, customdata=hover,
                  hovertemplate="%{customdata}<extra></extra>")
    if value == "p":
        with np.errstate(divide="ignore"):
            z = np.where(off & ~np.isnan(p), -np.log10(np.maximum(p, 1e-300)), np.nan)
        text = [[f"{_p_text(p[i, j]) if cell_text == 'value' else ''}{marks[i][j]}" if off[i, j] else ""
                 for j in range(M)] for i in range(M)]
        zmax = float(np.nanmax(z)) if np.isfinite(z).any() else 1.0
        traces = [dict(common, z=[json_list(r) for r in z], text=text, zmin=0, zmax=max(zmax, -math.log10(alpha)),
                       colorscale=EVIDENCE_SCALE, colorbar=dict(title=dict(text="−log10 p"), thickness=12, len=0.8))]
        traces.append(cell_text_trace(traces, text, font=marks_font, name="marks"))
    else:
        d = diff * scale
        text = [[f"{_signed(d[i, j]) if cell_text == 'value' else ''}{marks[i][j]}"
                 if off[i, j] and not math.isnan(d[i, j]) else "" for j in range(M)] for i in range(M)]
        zs = np.where(sig, d, np.nan)
        zn = np.where(off & ~sig, 0.0, np.nan)
        lim = float(np.nanmax(np.abs(zs))) if sig.any() else 1.0
        traces = [
            dict(common, z=[json_list(r) for r in zn], text=[[t if off[i, j] and not sig[i, j] else "" for j, t in enumerate(r)]
                                                         for i, r in enumerate(text)],
                 colorscale=[[0.0, NOT_SIGNIFICANT], [1.0, NOT_SIGNIFICANT]], showscale=False, name="not significant"),
            dict(common, z=[json_list(r) for r in zs], text=[[t if sig[i, j] else "" for j, t in enumerate(r)]
                                                         for i, r in enumerate(text)],
                 zmin=-lim, zmax=lim, colorscale=SIGNED_SCALE, name=f"{p_label} < {alpha:g}",
                 colorbar=dict(title=dict(text=f"row − col (×{scale:g})" if scale != 1 else "row − col"),
                               thickness=12, len=0.8)),
        ]
        traces += [cell_text_trace(traces[:2], traces[0]["text"], font=font, color=NOT_SIGNIFICANT_TEXT,
                                   name="not significant text"),
                   cell_text_trace(traces[:2], traces[1]["text"], font=marks_font, name="marks")]
    size = max(440, min(780, 34 * M + 220))
    return figure(traces, dict(xaxis=dict(tickangle=-45, showgrid=False),
                               yaxis=dict(autorange="reversed", showgrid=False), margin=dict(l=140, b=140)),
                  title=title or f"Which orderings are significant ({p_label} < {alpha:g})", height=size, legend=False)


def pair_scatter(points, *, x_name: str, y_name: str, stat: str, highlight: int | None = None):
    """Per-SEG values of two metrics, one point per SEG (hover: id, partition, prompt).

    Parameters
    ----------
    points : pandas.DataFrame
        Columns ``seg_id``, ``partition``, ``prompt``, ``x``, ``y`` (fractions; shown x100 for the
        statistics in :data:`ts2viz.display.SCALED_STATS`).
    x_name, y_name : str
        The two metrics' names.
    stat : str
        The statistic the values are.
    highlight : int, optional
        A SEG id to ring.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure, with the y = x line; an empty figure with a message for no points.
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
            type="scatter", x=json_list(sub["x"] * k), y=json_list(sub["y"] * k), mode="markers", name=str(part),
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
    return figure(traces, dict(xaxis=dict(title=dict(text=f"{x_name}: {name}{unit}")),
                               yaxis=dict(title=dict(text=f"{y_name}: {name}{unit}")),
                               margin=dict(b=48 + sum(heights)), **stack_legends(specs, heights, height)),
                  title=f"Per-SEG {name}: {y_name} vs {x_name}", height=height)
