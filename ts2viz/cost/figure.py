"""Quality against cost: one point per metric with a cost, the Pareto front drawn as a step line."""
from __future__ import annotations

import numpy as np

from .pareto import CostTable


def cost_figure(table: CostTable, cell: str = "ord_avg", title: str | None = None):
    """A plotly figure of ``cell`` (x100) against cost (log axis), front metrics labelled and joined."""
    import plotly.graph_objects as go

    has = ~np.isnan(table.cost) & ~np.isnan(table.quality[cell])
    fig = go.Figure()
    if not has.any():
        fig.update_layout(title=title or "Give a cost for some metrics to see the quality-cost front",
                          height=420)
        return fig
    names = np.asarray(table.metrics, dtype=object)
    front = table.front[cell] & has
    q = 100 * table.quality[cell]
    fig.add_trace(go.Scatter(x=table.cost[has & ~front], y=q[has & ~front], mode="markers",
                             text=names[has & ~front], name="dominated", marker=dict(color="#999", size=9),
                             hovertemplate="%{text}<br>cost %{x:.3g}<br>%{y:.1f}<extra></extra>"))
    order = np.argsort(table.cost[front], kind="stable")
    fig.add_trace(go.Scatter(x=table.cost[front][order], y=q[front][order], mode="markers+lines+text",
                             text=names[front][order], textposition="top center", name="Pareto front",
                             line=dict(shape="hv", color="#1f77b4"), marker=dict(size=11, color="#1f77b4"),
                             hovertemplate="%{text}<br>cost %{x:.3g}<br>%{y:.1f}<extra></extra>"))
    label = cell.split("_")[0].capitalize() + " " + cell.rsplit("_", 1)[-1].capitalize()
    fig.update_layout(title=title or f"{label} against cost: the Pareto front", height=420,
                      xaxis=dict(title=f"cost ({table.unit}, log scale)", type="log"),
                      yaxis=dict(title=f"{label} (x100)"), legend=dict(orientation="h"))
    return fig
