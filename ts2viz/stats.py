"""Kept for old imports: the scalar Ord and Sep definitions live in :mod:`ts2viz.statistics.ord_sep`."""
from .statistics.ord_sep import (CONSTANT_RANK_TOL, KSResult, kendall_ord, ks_separation, mean_gap, node_means,
                                 rankdata, spearman_ord)

__all__ = ["CONSTANT_RANK_TOL", "KSResult", "kendall_ord", "ks_separation", "mean_gap", "node_means", "rankdata",
           "spearman_ord"]
