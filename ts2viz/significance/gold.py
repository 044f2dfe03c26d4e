"""Kept for old imports: this lives in :mod:`ts2viz.statistics.gold_permutation`."""
from ..statistics.gold_permutation import (STATISTICS, VECTORISED, GoldStatistic, gold_clusters, gold_permutation_test,
                                           inversions_rows, kendall_rows, metric_estimates, pairwise_gold_permutation,
                                           pooled_statistic)

__all__ = ["STATISTICS", "VECTORISED", "GoldStatistic", "gold_clusters", "gold_permutation_test", "inversions_rows",
           "kendall_rows", "metric_estimates", "pairwise_gold_permutation", "pooled_statistic"]
