"""Statistics of ts2viz, in pure numpy (never torch, gradio or scipy): one module per concept.

Definitions of TS2's scalars
- :mod:`.ord_sep`: Ord and Sep of one walk or one pair of nodes (``spearman_ord``, ``kendall_ord``,
  ``ks_separation``, ``mean_gap``, ``node_means``, ``rankdata``); the readable definitions that
  :mod:`ts2viz.metametrics` vectorises.
- :mod:`.correlation`: Pearson, Spearman, Kendall tau-b / tau-c of two vectors (O(n log n)), equal to
  scipy's defaults.

Intervals (bootstrap)
- :mod:`.bootstrap`: settings (:class:`~.bootstrap.BootstrapSettings`), stratified resampling of SEGs,
  fast quantiles, :func:`~.bootstrap.bootstrap` of every leaderboard cell
  (:class:`~.bootstrap.LeaderboardBootstrap`), and :func:`~.bootstrap.leaderboard_table`.
- :mod:`.two_level_bootstrap`: SEGs, then the images within each node.
- :mod:`.rank_bootstrap`: Spearman and Kendall of bootstrap resamples of prompts (human-gold sets),
  exact or to first order.
- :mod:`.rank_intervals`: each metric's leaderboard rank over the resamples.

Tests of differences
- :mod:`.wilcoxon`: the Wilcoxon signed-rank test (scipy's defaults) and Holm's correction.
- :mod:`.paired_comparison`: two metrics (``compare``) or all pairs (``pairwise``) on the leaderboard:
  paired bootstrap intervals and Wilcoxon p-values.
- :mod:`.permutation_tests`: paired permutation tests of any per-unit statistic (swap items within
  units, or whole units), early stopping, exact enumeration; all pairs at once.
- :mod:`.clusters`: significance clusters (ranks) from a matrix of one-sided p-values.
- :mod:`.unit_correlation`: per-unit correlation with gold values as a permutation-test statistic.
- :mod:`.leaderboard_permutation`: permutation tests and clusters of TS2 leaderboard cells (SEGs as units).
- :mod:`.gold_permutation`: permutation tests and clusters of pooled human-gold statistics (rated sets).

Meta-evaluation against a gold standard (Gecko's tasks, pairwise accuracy with tie calibration, pairwise
accuracy on SEGs) is domain code and lives in :mod:`ts2viz.metaeval`, built on these modules.

Import from the modules (``from ts2viz.statistics.bootstrap import bootstrap``): this package imports
none of them, so that each stays as cheap as its own imports.
"""
