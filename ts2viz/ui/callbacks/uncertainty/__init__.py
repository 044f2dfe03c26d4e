"""The app's "How sure is the leaderboard?" views: intervals, rank intervals, significance, paired comparisons.

Interval whiskers, intervals and rank intervals in the leaderboard table, the significance heatmap and
the paired comparison of two metrics.

Plain functions of data like :mod:`ts2viz.ui.callbacks` (the session's :class:`~ts2viz.ui.state.app_state.AppView`
first, plain values after; tested without a browser); the statistics are :mod:`ts2viz.statistics`'s, with its
defaults (:data:`~ts2viz.ui.callbacks.uncertainty.resampled.SETTINGS`: 10,000 resamples, 95 %, seed 0), so the app
shows the numbers ``ts2viz leaderboard --ci``, ``compare`` and ``significance`` print.

One bootstrap serves every view of a mode: it is drawn when a view first needs it (never at start,
never for a view without intervals) and kept whole, since ranks, pairwise tests and paired intervals
all read its resamples. It is drawn over every metric of one side:

- the operator's metrics: one bootstrap per (data version, mode, metrics), shared by all sessions
  (:data:`~ts2viz.ui.callbacks.uncertainty.resampled.SHARED_BOOT_BYTES`);
- a session with metrics of its own (uploads, live scores): one over the shared and its own metrics
  together, kept in a store for all such sessions with its own bound
  (:data:`~ts2viz.ui.callbacks.uncertainty.resampled.SESSION_BOOT_BYTES`), keyed by a token of that session's
  workspace, so no session can reach another's.

The resamples depend only on the seed, their number and the partition sizes, never on the metrics
(:func:`ts2viz.metametrics.intervals.bootstrap`), so a view of shared metrics only (a pair, a family)
reads the shared bootstrap even in a session that has its own. The small results derived from a
bootstrap (tables, figures, captions) go through ``app.memo`` like every other view.

One module each: :mod:`.bootstrap` (the one bootstrap per mode and side), :mod:`.intervals` (the
leaderboard's intervals and rank intervals), :mod:`.significance` (the significance heatmap) and
:mod:`.comparison` (two metrics compared).
"""
