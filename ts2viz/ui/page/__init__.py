"""The Gradio page: the layout, and the guards of Gradio's queue.

The layout of header, tabs and cross-tab events (:mod:`.layout`, on top of the tab builders of
:mod:`ts2viz.ui.tabs` and their glue, :mod:`ts2viz.ui.glue`), and the guards of Gradio's queue in a public
app (:mod:`.queue_guard`). Imported only when the app is built (imports gradio).
"""
