"""Significance of metric differences: permutation tests and significance clusters (pure numpy).

- :mod:`.permutation`: paired permutation tests for the difference between two metrics' meta-metric
  values, over any per-unit statistic of a score matrix (PERM-BOTH: swap items within units; or swap
  whole units), with early stopping and exact enumeration; all pairs of metrics at once on per-unit
  values.
- :mod:`.clusters`: greedy significance clusters (ranks) from a one-sided p-value matrix.
- :mod:`.ts2`: both applied to TS2 leaderboard cells (SEGs as units).
- :mod:`.correlation`: per-unit correlation with gold values (Pearson, Spearman, Kendall tau-b) as a
  permutation-test statistic, for human-gold meta-evaluation.
- :mod:`.gold`: permutation tests and clusters of pooled human-gold statistics (Spearman, Kendall,
  Pearson, pair-wise accuracy) on rated sets (``ts2viz humaneval --clusters / --compare``).
- :mod:`.two_level`: the two-level bootstrap (SEGs, then images within nodes).
"""
from .clusters import Clusters, significance_clusters
from .permutation import (DEFAULT_SETTINGS, PairwisePermutation, PermutationResult, PermutationSettings,
                          pairwise_unit_permutation, permutation_test, standardise)

__all__ = ["Clusters", "DEFAULT_SETTINGS", "PairwisePermutation", "PermutationResult", "PermutationSettings",
           "pairwise_unit_permutation", "permutation_test", "significance_clusters", "standardise"]
