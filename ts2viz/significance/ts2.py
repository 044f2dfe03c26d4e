"""Kept for old imports: this lives in :mod:`ts2viz.statistics.leaderboard_permutation`."""
from ..statistics.leaderboard_permutation import (cell_unit_values, leaderboard_clusters, pairwise_permutation,
                                                  perm_both, seg_sds, seg_statistic)

__all__ = ["cell_unit_values", "leaderboard_clusters", "pairwise_permutation", "perm_both", "seg_sds", "seg_statistic"]
