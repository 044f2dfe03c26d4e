"""Kept for old imports: permutation tests and significance clusters live in :mod:`ts2viz.statistics`."""
from ..statistics.clusters import Clusters, significance_clusters
from ..statistics.permutation_tests import (DEFAULT_SETTINGS, PairwisePermutation, PermutationResult,
                                            PermutationSettings, pairwise_unit_permutation, permutation_test,
                                            standardise)

__all__ = ["Clusters", "DEFAULT_SETTINGS", "PairwisePermutation", "PermutationResult", "PermutationSettings",
           "pairwise_unit_permutation", "permutation_test", "significance_clusters", "standardise"]
