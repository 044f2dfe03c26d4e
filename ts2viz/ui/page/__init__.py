"""The Gradio page: the layout, and the glue between callbacks and components.

The layout of header, tabs and cross-tab events (:mod:`.layout`), the glue that turns callback results
into component updates and errors into messages (:mod:`.glue`), and the guards of Gradio's queue in
a public app (:mod:`.queue_guard`). Imported only when the app is built (imports gradio).
"""
