"""Kept for old imports: these live in ts2viz.statistics (bootstrap, wilcoxon, paired_comparison, rank_intervals)."""
from .statistics.bootstrap import (DEFAULTS, MAX_RESAMPLES, BootstrapSettings, LeaderboardBootstrap, averaged_segs,
                                   bootstrap, cell_names, leaderboard_table, quantiles, resample_counts, seg_values,
                                   split_cell, stratified_counts)
from .statistics.paired_comparison import PairedComparison, PairwiseComparison, compare, pairwise
from .statistics.rank_intervals import RankIntervals, rank_intervals
from .statistics.wilcoxon import EXACT_MAX_N, PERMUTATION_MAX_N, WilcoxonResult, holm, wilcoxon

__all__ = ["DEFAULTS", "EXACT_MAX_N", "MAX_RESAMPLES", "PERMUTATION_MAX_N", "BootstrapSettings",
           "LeaderboardBootstrap", "PairedComparison", "PairwiseComparison", "RankIntervals", "WilcoxonResult",
           "averaged_segs", "bootstrap", "cell_names", "compare", "holm", "leaderboard_table", "pairwise", "quantiles",
           "rank_intervals", "resample_counts", "seg_values", "split_cell", "stratified_counts", "wilcoxon"]
