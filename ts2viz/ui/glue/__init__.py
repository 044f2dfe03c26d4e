"""The glue between the plain callbacks and Gradio, below the tab builders.

Everything here converts: component values to callback arguments (:mod:`~ts2viz.ui.glue.events`), callback
results to component updates (:mod:`~ts2viz.ui.glue.plots`, :mod:`~ts2viz.ui.glue.tables`), and
:class:`~ts2viz.errors.InputError` (or any other failure) to a readable message while the app keeps running
(:mod:`~ts2viz.ui.glue.errors`). The tabs import it; it imports the callbacks and the state, never a tab or
the page. Imported only when the app is built (it imports gradio).
"""
