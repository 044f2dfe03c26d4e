"""CLI part of the cost view: ``leaderboard --cost FILE`` (cost column, Pareto-front columns, the front)."""
from __future__ import annotations

import argparse


def add_cost_options(p: argparse.ArgumentParser) -> None:
    """Add ``--cost`` and ``--cost-unit`` to ``ts2viz leaderboard``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    """
    from ..cost import COST_UNITS

    p.add_argument("--cost", metavar="CSV",
                   help="a CSV 'metric,cost' of what each metric costs (e.g. seconds per image on your hardware): "
                        "adds cost, pareto_ord_avg and pareto_sep_avg columns and prints the quality-cost front")
    p.add_argument("--cost-unit", default=COST_UNITS[0], help=f"what the costs are (a label; default '{COST_UNITS[0]}')")


def cost_columns(mm, args: argparse.Namespace):
    """The cost columns for the leaderboard and the text that lists each quality-cost front.

    Parameters
    ----------
    mm : ts2viz.metametrics.results.MetaMetrics
        The leaderboard's meta-metrics.
    args : argparse.Namespace
        The parsed command line (:func:`ts2viz.cli.build_parser`).

    Returns
    -------
    columns : dict of str to numpy.ndarray
        ``cost``, ``pareto_ord_avg`` and ``pareto_sep_avg`` (1 on the front), in ``mm.metrics`` order.
    text : str
        The fronts of OrdAvg and SepAvg, cheapest first.

    Raises
    ------
    InputError
        For a cost file that cannot be read (:func:`ts2viz.cost.read_costs`).
    """
    import numpy as np

    from ..cost import cost_table, read_costs

    costs = read_costs(args.cost, mm.metrics)
    av = mm.averages()
    cells = ("ord_avg", "sep_avg")
    t = cost_table(mm.metrics, costs, {c: av[c] for c in cells}, args.cost_unit)
    cols = {"cost": t.cost, **{f"pareto_{c}": t.front[c].astype(int) for c in cells}}
    lines = ["", f"Pareto front of quality against cost ({t.unit}; {int((~np.isnan(t.cost)).sum())} metrics with a "
                 "cost): no other metric is as good for less"]
    for c in cells:
        idx = [i for i in np.argsort(t.cost, kind="stable") if t.front[c][i]]
        label = c.split("_")[0].capitalize() + "Avg"
        lines.append(f"  {label}: " + " -> ".join(f"{t.metrics[i]} ({100 * t.quality[c][i]:.1f} @ {t.cost[i]:.3g})"
                                                   for i in idx))
    return cols, "\n".join(lines)
