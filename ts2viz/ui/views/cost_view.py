"""The Leaderboard tab's cost view: quality against each metric's typed cost, with the Pareto front.

The visitor types each metric's cost; the view draws quality against cost with the Pareto front. Plain
functions of data.
"""
from __future__ import annotations

import numpy as np

from ...cost import COST_UNITS, cost_table, parse_costs
from ...figures.cost_front import cost_figure
from ...display import md_text
from ...errors import InputError
from ..state.app_state import AppView

#: the quality cells the view offers
CELLS = (("Ord · Avg", "ord_avg"), ("Sep · Avg", "sep_avg"))
#: longest cost text accepted from a visitor
MAX_TEXT = 20_000


def cost_view(app: AppView, mode: str, text: str, unit: str, cell: str):
    """The cost view for the costs a visitor typed (``name=cost, ...``).

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    text : str
        The typed costs (at most :data:`MAX_TEXT` characters).
    unit : str
        What the costs are (one of :data:`ts2viz.cost.COST_UNITS`).
    cell : str
        The quality cell (one of :data:`CELLS`' values).

    Returns
    -------
    figure : plotly.graph_objects.Figure
        Quality against cost, the front drawn.
    text : str
        Markdown listing the front (metric names escaped), or a hint when no cost is given.

    Raises
    ------
    InputError
        For an unknown cell or unit, a text too long, or costs that do not parse.
    """
    if cell not in dict((v, k) for k, v in CELLS):
        raise InputError(f"unknown quality cell {cell!r}")
    if unit not in COST_UNITS:
        raise InputError(f"unknown cost unit {unit!r}")
    if len(text or "") > MAX_TEXT:
        raise InputError(f"the cost list is longer than {MAX_TEXT:,} characters")
    costs = parse_costs(text or "", app.metrics)
    mm = app.mm(mode)
    t = cost_table(mm.metrics, costs, {cell: mm.averages()[cell]}, unit)
    fig = cost_figure(t, cell)
    idx = [i for i in np.argsort(t.cost, kind="stable") if t.front[cell][i]]
    if not idx:
        return fig, "Type a cost for some metrics, e.g. `CLIPScore=0.02, TIFA-GPT4V=3.5`."
    front = " → ".join(f"{md_text(t.metrics[i])} ({100 * t.quality[cell][i]:.1f} at {t.cost[i]:.3g})" for i in idx)
    return fig, (f"**Pareto front** ({md_text(unit)}, {md_text(mode)} mode): {front}. A metric is on it when no other "
                 "metric with a cost is at least as good for at most the cost; the others are dominated.")
