"""Kept for old imports: this lives in :mod:`ts2viz.statistics.rank_bootstrap`."""
from ..statistics.rank_bootstrap import (ResampledSpearman, kendall_influence, kendall_influence_from_codes,
                                         prefix_counts, spearman_influence, spearman_influence_from_ranks)

__all__ = ["ResampledSpearman", "kendall_influence", "kendall_influence_from_codes", "prefix_counts",
           "spearman_influence", "spearman_influence_from_ranks"]
