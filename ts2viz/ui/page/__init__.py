"""The Gradio page: the layout of header, tabs and cross-tab events (:mod:`.layout`), and the glue that turns
callback results into component updates and errors into messages (:mod:`.glue`). Imported only when the
app is built (imports gradio)."""
