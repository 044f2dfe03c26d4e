"""TS2's meta-metrics (Ord, Sep, delta, Kendall, signed Sep) on semantic error graphs: one module per concept.

How the numbers are made
- :mod:`.policy`: the rules (:class:`~ts2viz.metametrics.policy.Policy`): ``paper`` reproduces the published
  numbers, ``spec`` follows the paper's text, any rule can be changed.
- :mod:`.definitions`: Ord and Sep of one walk or one pair of nodes (``spearman_ord``, ``kendall_ord``,
  ``ks_separation``, ``mean_gap``, ``node_means``), the readable definitions that the walks vectorise.
- :mod:`.structure`: the walk layout of one SEG under a policy (independent of the metrics).
- :mod:`.walks`: the vectorised per-walk and per-SEG statistics (every walk and metric at once).
- :mod:`.results`: :func:`~ts2viz.metametrics.results.compute` over a dataset (the policy resolved once)
  and the :class:`~ts2viz.metametrics.results.MetaMetrics` result: tables, joins, save and load.

How sure, and which metric is better
- :mod:`.intervals`: bootstrap intervals of every leaderboard cell (SEGs resampled within partitions).
- :mod:`.two_level`: SEGs, then the images within each node.
- :mod:`.ranks`: each metric's leaderboard rank over the resamples.
- :mod:`.table`: the leaderboard table with chosen cells, intervals and rank intervals.
- :mod:`.comparison`: two metrics (``compare``) or all pairs (``pairwise``): paired bootstrap intervals and
  Wilcoxon p-values.
- :mod:`.permutation`: permutation tests and significance clusters of leaderboard cells (SEGs as units;
  PERM-BOTH).

Built on the generic kernels of :mod:`ts2viz.statistics`; the meta-evaluation against human gold sets is
:mod:`ts2viz.metaeval`. Import from the modules (``from ts2viz.metametrics.results import compute``, or
``from ts2viz import compute``): this package imports none of them.
"""
