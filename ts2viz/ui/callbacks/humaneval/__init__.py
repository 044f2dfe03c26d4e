"""The Human ratings tab's views as plain functions of data (testable without a browser).

Per rated set and rating set, a leaderboard of metrics by Gecko's tasks with bootstrap intervals
(:func:`~ts2viz.ui.callbacks.humaneval.board.board`), a scatter of one metric against the human mean coloured by T2I
model (:func:`~ts2viz.ui.callbacks.humaneval.board.scatter_figure`), one image's details
(:func:`~ts2viz.ui.callbacks.humaneval.image.image_detail`) and the cross-gold ranks of the metric families the
sources share (:func:`~ts2viz.ui.callbacks.humaneval.crossgold.cross_gold_table`). The tab's views are redrawn when
the rated set, rating set, task or scatter metric change (in the gold lane: a session's own metrics compute their
intervals on first drawing); a click on a scatter point shows that image.

The bundled sets and the operator's own (``app.py --gold FOLDER``,
:func:`~ts2viz.ui.callbacks.humaneval.sets.add_operator_sets`) are the same for every visitor: computed once per
process and shared. A session's uploaded score columns (``own``: its
:class:`~ts2viz.ui.state.gold_session.GoldUploads`) join them for that session only: its metrics are evaluated on
their own (same bootstrap settings, so the same prompt resamples) and their rows added to the shared ones.

One module each: :mod:`.sets` (the rated sets, each as a session sees it), :mod:`.board` (a set's
leaderboard and scatter), :mod:`.crossgold` (the cross-gold ranks), :mod:`.image` (one rated image) and
:mod:`.warmup` (the shared views computed at start).
"""
