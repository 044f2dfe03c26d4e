"""Quality against cost: one point per metric with a cost, the Pareto front drawn as a step line."""
from __future__ import annotations

import numpy as np

from ..cost.pareto import CostTable
from .style import figure


def cost_figure(table: CostTable, cell: str = "ord_avg", title: str | None = None):
    """Quality against cost: ``cell`` (x100) against cost (log axis), the Pareto front labelled and joined.

    Parameters
    ----------
    table : CostTable
        Costs, qualities and fronts (:func:`ts2viz.cost.pareto.cost_table`).
    cell : str, default "ord_avg"
        The leaderboard cell on the y axis.
    title : str, optional
        The title.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure (:func:`ts2viz.figures.style.figure`: a plain figure inside ``plain_figures``, the
        app's path to the page); an empty one asking for costs when no metric has both a cost and a
        value.

    Notes
    -----
    NaN policy: metrics without a cost or a value are not drawn.
    """
    has = ~np.isnan(table.cost) & ~np.isnan(table.quality[cell])
    if not has.any():
        return figure([], {}, title=title or "Give a cost for some metrics to see the quality-cost front",
                      height=420)
    names = np.asarray(table.metrics, dtype=object)
    front = table.front[cell] & has
    q = 100 * table.quality[cell]
    hover = "%{text}<br>cost %{x:.3g}<br>%{y:.1f}<extra></extra>"
    order = np.argsort(table.cost[front], kind="stable")
    traces = [
        dict(type="scatter", x=table.cost[has & ~front].tolist(), y=q[has & ~front].tolist(), mode="markers",
             text=names[has & ~front].tolist(), name="dominated", marker=dict(color="#999", size=9),
             hovertemplate=hover),
        dict(type="scatter", x=table.cost[front][order].tolist(), y=q[front][order].tolist(),
             mode="markers+lines+text", text=names[front][order].tolist(), textposition="top center",
             name="Pareto front", line=dict(shape="hv", color="#1f77b4"), marker=dict(size=11, color="#1f77b4"),
             hovertemplate=hover),
    ]
    label = cell.split("_")[0].capitalize() + " " + cell.rsplit("_", 1)[-1].capitalize()
    return figure(traces, dict(xaxis=dict(title=dict(text=f"cost ({table.unit}, log scale)"), type="log"),
                               yaxis=dict(title=dict(text=f"{label} (x100)")), legend=dict(orientation="h")),
                  title=title or f"{label} against cost: the Pareto front", height=420)
