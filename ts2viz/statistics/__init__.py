"""Generic statistical kernels of ts2viz, in pure numpy (never torch, gradio or scipy): one module per concept.

Nothing here knows SEGs, walks or gold sets: this package imports neither :mod:`ts2viz.metametrics` (TS2's
meta-metrics, built on these kernels) nor :mod:`ts2viz.metaeval` (meta-evaluation against human gold sets).

Correlations
- :mod:`.correlation`: ``rankdata`` (average ranks), Pearson (``pearson`` of two vectors, ``pearson_rows``
  of many rows against one vector), Spearman, Kendall tau-b / tau-c (O(n log n)), equal to scipy's
  defaults.
- :mod:`.unit_correlation`: per-unit correlation with gold values as a permutation-test statistic.
- :mod:`.rank_bootstrap`: Spearman and Kendall of bootstrap resamples of units, exact or to first order.

Intervals and tests
- :mod:`.bootstrap`: settings (:class:`~ts2viz.statistics.bootstrap.BootstrapSettings`), stratified resample
  counts, fast quantiles.
- :mod:`.wilcoxon`: the Wilcoxon signed-rank test (scipy's defaults) and Holm's correction.
- :mod:`.permutation_tests`: paired permutation tests of any per-unit statistic (swap items within units,
  or whole units), early stopping, exact enumeration; all pairs at once.
- :mod:`.clusters`: significance clusters (ranks) from a matrix of one-sided p-values.
- :mod:`.slice_table`: per-slice intervals, p-values of no association and the ranking's stability across
  slices (rank correlation between slices, significant reversals).

Import from the modules (``from ts2viz.statistics.bootstrap import quantiles``): this package imports none of
them, so that each stays as cheap as its own imports.
"""
