"""Kept for old imports: this lives in :mod:`ts2viz.statistics.unit_correlation`."""
from ..statistics.unit_correlation import METHODS, correlation_statistic, rank_rows

__all__ = ["METHODS", "correlation_statistic", "rank_rows"]
