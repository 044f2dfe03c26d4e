"""One builder per tab of the app.

Each ``build(page)`` lays out its tab's components, wires the events inside the tab, and registers its
redraws on the :class:`~ts2viz.ui.glue.events.Page`.
"""
