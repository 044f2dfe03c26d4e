"""The app's callbacks, one module per tab (mirroring :mod:`ts2viz.ui.tabs`): plain functions of data.

Testable without a browser. Each takes the :class:`~ts2viz.ui.state.app_state.AppView` (the app as one
session sees it: the operator's shared tables and the session's own) first and plain values (strings,
numbers, lists, file paths) after it, and returns plain values: DataFrames, plotly figures, HTML
strings, lists of (path, caption) pairs, dicts of those. The tab builders in :mod:`ts2viz.ui.tabs` wire
them to Gradio components: a callback's docstring says which event of the page calls it and which
components its results fill. Bad input raises :class:`ts2viz.errors.InputError` with a readable
message (shown in a toast, or in the panel's message box); in public mode (``app.access.public``)
messages about a visitor's file never quote its contents.

Tables are built in fractions (what a CSV download holds); :func:`~ts2viz.ui.callbacks.common.shown`
turns one into what people read, meta-metric columns x100 (:mod:`ts2viz.display`), without changing
the data underneath. Parts of a view that depend only on (SEG, metric, mode) go through ``app.memo``
and are built once for every session that shows them.

* :mod:`~ts2viz.ui.callbacks.common`: what several tabs share (the SEG and metric a view names, family
  filters, tables as people read them, CSV downloads, a visitor's uploaded file);
* :mod:`~ts2viz.ui.callbacks.board`: the leaderboard; :mod:`~ts2viz.ui.callbacks.uncertainty`: its
  intervals, paired comparisons and significance (also used by the correlations tab);
* :mod:`~ts2viz.ui.callbacks.explorer`: SEG picking, the failure finder and the SEG view;
* :mod:`~ts2viz.ui.callbacks.correlations`: metric x metric correlations and the pair scatter;
* :mod:`~ts2viz.ui.callbacks.questions`: per-question answers (TIFA, DSG, Gecko, FineEval, judges);
* :mod:`~ts2viz.ui.callbacks.live`: live scoring of SEGs and of uploaded images;
* :mod:`~ts2viz.ui.callbacks.nuisance`: the nuisance test's views and its live run;
* :mod:`~ts2viz.ui.callbacks.authoring`: the authoring tab's actions;
* :mod:`~ts2viz.ui.callbacks.humaneval`: the human gold standards tab (:mod:`~ts2viz.ui.callbacks.gold_uploads`:
  a visitor's score file for a rated set; :mod:`~ts2viz.ui.callbacks.humaneval_slices` and
  :mod:`~ts2viz.ui.callbacks.judges`: its slices and its Judges view).

A tab whose callbacks are several concepts has a package, one module per concept (``authoring``,
``explorer``, ``questions``, ``humaneval``, ``uncertainty``); its modules import each other, the callbacks
they share (:mod:`~ts2viz.ui.callbacks.common`, ...) and the rooms below (:mod:`ts2viz.ui.state`,
:mod:`ts2viz.ui.views`), never the Gradio glue or the tabs above them.
"""
