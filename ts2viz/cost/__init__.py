"""What a metric costs to run against how well it does: user-given costs and the quality-cost front.

The Pareto front of quality against cost is the TS2 paper's cost comparison. Pure numpy; its figure is
:func:`ts2viz.figures.cost_front.cost_figure`.
"""
from .pareto import COST_UNITS, CostTable, cost_table, parse_costs, pareto_front, read_costs

__all__ = ["COST_UNITS", "CostTable", "cost_table", "parse_costs", "pareto_front", "read_costs"]
