"""The explorer's Questions tab: a question metric's answers for one image, and the questions x nodes view.

The answers for one image of the node gallery (with T2I-FineEval's boxes drawn on the image), and the
SEG's questions x nodes view. Built inside the explorer (:mod:`ts2viz.ui.tabs.explorer`), from its SEG,
node and metric pickers and its gallery: clicking a gallery image shows that image's questions. The
data functions are in :mod:`ts2viz.ui.callbacks.questions`.
"""
from __future__ import annotations

import gradio as gr

from ...qa.details import BOX_KINDS
from ..callbacks.questions import image as qa_image, nodes as qa_nodes, sources as qa_sources
from ..callbacks.common import shown, table_csv
from ..glue.errors import Selection
from ..glue.events import Page, Refresh
from ..glue.plots import plot_cached
from ..glue.tables import dropdown, table_value

INTRO = ("Question-based metrics (TIFA, DSG, Gecko, T2I-FineEval) one question at a time, and the judges' "
         "ratings with their reasoning (VIEScore, LLMScore): pick an image (or "
         "click one in the gallery above) to see what was asked and answered; below, how often each question "
         "is answered right in each node, i.e. which question notices which error along the graph. Bundled "
         "TIFA/DSG columns use the TS2 release's answers; live-scored metrics their cached details.")
NO_QA = ("_No loaded metric has per-question details. Load the bundled TS2 scores (their TIFA-/DSG- columns), "
         "or score a `tifa:`, `dsg:`, `gecko:`, `fineeval:`, `viescore:` or `llmscore:` metric in the Live scoring "
         "tab._")


#: the tab's id, and the value of the explorer's open-tab state while it is open
TAB_ID = "questions"


def build(page: Page, *, seg, node, metric_a, metric_b, gallery, open_tab):
    """The Questions tab (call inside the explorer's ``gr.Tabs``) and its events.

    The question views are computed only while this tab is open: a SEG or metric change costs nothing here
    otherwise, and opening the tab draws the current SEG. Question views are the costliest part of a SEG
    view (the questions x nodes heatmap), and most visits never open them.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    seg : gradio.Dropdown
        The explorer's SEG picker.
    node : gradio.Dropdown
        Its node picker.
    metric_a : gradio.Dropdown
        Its metric A.
    metric_b : gradio.Dropdown
        Its metric B.
    gallery : gradio.Gallery
        Its node gallery (a click picks the image).
    open_tab : gradio.State
        The explorer's per-session state naming its open tab.

    Returns
    -------
    gradio.Tab
        The tab.
    """
    with gr.Tab("Questions", id=TAB_ID, elem_id="tab-questions") as tab:
        gr.Markdown(f"<small>{INTRO}</small>")
        with gr.Row(equal_height=True):
            qa_metric = gr.Dropdown([], label="Question metric ('Metric' or 'Compare with' when they are one)",
                                    scale=2, elem_id="qa-metric")
            image = gr.Dropdown([], label="Image of the node (or click one in the gallery)", scale=2,
                                elem_id="qa-image")
        title = gr.Markdown(elem_id="qa-title")
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=300, visible=False, elem_id="qa-boxes-col") as boxes_col:
                question = gr.Dropdown([], label="Question: highlight its best crop", elem_id="qa-question")
                boxes = gr.HTML(elem_id="qa-boxes")
            with gr.Column(scale=2):
                table = gr.Dataframe(interactive=False, wrap=True, max_height=460, elem_id="qa-table",
                                     label="Questions of this image · click a row to highlight its crop "
                                           "(T2I-FineEval)")
        gr.Markdown("#### Questions × nodes")
        with gr.Row(equal_height=False):
            value = gr.Radio([(qa_nodes.VALUE_CHOICES["correct"], "correct")], value="correct", label="Cell value",
                             scale=3, elem_id="qa-value")
            nodes_csv = gr.Button("Download CSV", size="sm", scale=0, min_width=140, elem_id="qa-nodes-csv")
        nodes_note = gr.Markdown(elem_id="qa-nodes-note")
        heat = gr.Plot(elem_id="qa-heatmap", show_label=False)
        nodes_tb = gr.Dataframe(interactive=False, wrap=True, max_height=420, elem_id="qa-nodes-table",
                                label="Each question's value per node (fraction of the node's images) · catches = "
                                      "edges along which it drops by at least half")

    image_out = [title, boxes_col, question, boxes, table]
    nodes_out = [heat, nodes_tb, nodes_note]
    everything = [qa_metric, image, value, *image_out, *nodes_out]

    def image_part(view, metric, sid, file_name):
        """Title, boxes column (shown for T2I-FineEval), question choices, boxes, table of one image."""
        if not metric or not file_name:
            return ("" if metric else NO_QA, gr.update(visible=False), dropdown([], None), "", None)
        v = qa_image.image_questions(view, metric, sid, file_name)
        tbl = view.memo(("qa_image_table", metric, sid, file_name), [metric],
                        lambda: table_value(v["table"]) if v["table"] is not None else None)
        if not v["boxes"]:
            return v["title"], gr.update(visible=False), dropdown([], None), "", tbl
        html = qa_image.boxes_html(view, metric, sid, file_name, None)
        return (v["title"], gr.update(visible=True),
                dropdown([("(all detections)", "")] + [(lbl, str(q)) for lbl, q in v["questions"]], ""), html, tbl)

    def nodes_part(view, metric, sid, val, fmt):
        if not metric:
            return None, None, ""
        plot = plot_cached(view, fmt)
        figure = plot(("qa_heat", metric, sid, val), [metric], lambda: qa_nodes.node_questions(view, metric, sid, val)["figure"])

        def rest():
            v = qa_nodes.node_questions(view, metric, sid, val, figure=False)
            return table_value(shown(v["table"])), v["note"]

        tbl, note = view.memo(("qa_nodes_table", metric, sid, val), [metric], rest)
        return figure, tbl, note

    def redraw(sid, node_v, ma, mb, current, file_name, val, fmt, shown, request: gr.Request,
               follow: bool = False):
        if sid in (None, "") or shown != TAB_ID:
            return tuple(gr.skip() for _ in everything)
        view = page.view(request)
        metrics, metric = qa_sources.qa_metric_choice(view, [ma, mb], current, follow=follow)
        images = qa_image.node_images(view, sid, node_v)
        names = [fn for _, fn in images]
        file_name = file_name if file_name in names else (names[0] if names else None)
        # another metric starts from its own default value (a probability for Gecko and T2I-FineEval)
        val = qa_nodes.default_value(view, metric, val if metric == current else None) if metric else "correct"
        values = qa_nodes.value_choices(view, metric)
        img = image_part(view, metric, sid, file_name)
        note = qa_sources.substitute_note(view, [ma, mb], metric)       # say so when the explorer's metric has none
        title = f"{note}\n\n{img[0]}" if note else img[0]
        return (dropdown(metrics, metric), dropdown(images, file_name),
                gr.update(choices=values, value=val), title, *img[1:],
                *nodes_part(view, metric, sid, val, fmt))

    inputs = [seg, node, metric_a, metric_b, qa_metric, image, value, page.fmt, open_tab]
    page.refresh["questions"] = Refresh(redraw, inputs, everything)
    # The explorer's SEG, node and metrics are followed only while this tab is open, and the page decides
    # (Page.while_open): a view change with the tab closed, most of them, costs no call here at all.
    # Off the queue: memoised views like the SEG's (the view gate bounds them too).
    light = dict(queue=False)

    def metrics_changed(sid, node_v, ma, mb, current, file_name, val, fmt, shown, request: gr.Request):
        # the explorer's metrics were changed: show the first of them that has questions
        return redraw(sid, node_v, ma, mb, current, file_name, val, fmt, shown, request, follow=True)

    with tab:
        page.while_open(TAB_ID, (seg.change, node.change), redraw, inputs, everything, elem_id="qa-follow-view",
                        **light)
        page.while_open(TAB_ID, (metric_a.change, metric_b.change), metrics_changed, inputs, everything,
                        elem_id="qa-follow-metrics", **light)
    page.on(qa_metric.input, redraw, inputs, everything)

    def opened(sid, node_v, ma, mb, current, file_name, val, fmt, shown, request: gr.Request):
        # the explorer's metrics may have changed while the tab was closed: follow them as on a change
        return (TAB_ID, *redraw(sid, node_v, ma, mb, current, file_name, val, fmt, TAB_ID, request, follow=True))

    page.on(tab.select, opened, inputs, [open_tab, *everything])

    def image_chosen(sid, metric, file_name, request: gr.Request):
        return image_part(page.view(request), metric, sid, file_name)

    page.on(image.input, image_chosen, [seg, qa_metric, image], image_out)

    def gallery_clicked(sid, node_v, metric, shown, evt: Selection, request: gr.Request):
        view = page.view(request)
        file_name = qa_image.image_from_gallery(view, sid, node_v, evt.index)
        if file_name is None:
            return tuple(gr.skip() for _ in [image, *image_out])
        picked = dropdown(qa_image.node_images(view, sid, node_v), file_name)
        if shown != TAB_ID:           # remembered for when the tab opens
            return (picked, *(gr.skip() for _ in image_out))
        return (picked, *image_part(view, metric, sid, file_name))

    page.on(gallery.select, gallery_clicked, [seg, node, qa_metric, open_tab], [image, *image_out])

    def question_chosen(sid, metric, file_name, q, request: gr.Request):
        return qa_image.boxes_html(page.view(request), metric, sid, file_name, q)

    page.on(question.input, question_chosen, [seg, qa_metric, image, question], boxes)

    def row_clicked(sid, metric, file_name, tbl, evt: Selection, request: gr.Request):
        view = page.view(request)
        src = qa_sources.qa_source(view, metric)
        q = qa_image.question_from_row(tbl, evt.index[0])
        if src is None or src.details not in BOX_KINDS or q is None:
            return gr.skip(), gr.skip()
        return gr.update(value=str(q)), qa_image.boxes_html(view, metric, sid, file_name, q)

    page.on(table.select, row_clicked, [seg, qa_metric, image, table], [question, boxes])

    def value_chosen(sid, metric, val, fmt, request: gr.Request):
        return nodes_part(page.view(request), metric, sid, val, fmt)

    page.on(value.input, value_chosen, [seg, qa_metric, value, page.fmt], nodes_out)

    def nodes_csv_file(sid, metric, val, request: gr.Request):
        view = page.view(request, create=True)
        return table_csv(view, qa_nodes.node_questions(view, metric, sid, val, figure=False)["table"], f"questions-seg{sid}")

    page.download(nodes_csv, nodes_csv_file, [seg, qa_metric, value])
    return tab
