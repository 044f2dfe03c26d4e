"""The Human ratings tab: metrics against human judgments, by Gecko's three tasks.

Bundled rated sets and the operator's own (``app.py --gold FOLDER``), with a metric-vs-human scatter
coloured by T2I model (click a point: that image's prompt, ratings, scores and per-question answers),
the cross-gold ranks view, and a visitor's own score file joining all three for their session only.
"""
from __future__ import annotations

import gradio as gr

from ...display import md_text
from ..callbacks import gold_uploads as gu
from ..callbacks.humaneval import board as gc_board, crossgold as gc_crossgold, image as gc_image, sets as gc_sets
from . import humaneval_slices
from ..state import gold_session as gs
from ..glue import share
from ..glue.events import Page, Refresh
from ..glue.plots import page_plot
from ..glue.tables import table_value
from ..serving.jobs import GOLD, GOLD_UPLOAD, checkpoint
from . import judges as judges_view

#: a click on a scatter point puts its image id (the point's customdata) into the image box. Gradio's
#: Plot has no click event: the listener is attached to the plotly element after each redraw (polled,
#: as the element is made after the event returns), once per element.
CLICK_JS = """() => {
  let tries = 0;
  const attach = () => {
    const el = document.querySelector('#gold-scatter .js-plotly-plot');
    if (el && el.on && !el._goldClick) {
      el._goldClick = true;
      el.on('plotly_click', (ev) => {
        const pt = ev && ev.points && ev.points[0];
        const box = document.querySelector('#gold-image textarea, #gold-image input');
        if (!pt || !box || pt.customdata === undefined) return;
        box.value = String(pt.customdata);
        box.dispatchEvent(new Event('input', {bubbles: true}));
        for (const t of ['keydown', 'keypress'])
          box.dispatchEvent(new KeyboardEvent(t, {key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true}));
      });
    }
    if (tries++ < 40 && !(el && el._goldClick)) setTimeout(attach, 250);
  };
  attach();
}"""


def answers_label(shown: str | None, chosen: str | None) -> str:
    """The title of an image's question table: whose answers it shows, and how to see another's.

    Parameters
    ----------
    shown : str or None
        The metric whose answers are shown (``None``: the released VQA answers).
    chosen : str or None
        The scatter's metric.

    Returns
    -------
    str
        The title.
    """
    if not shown:
        return "Released VQA answers to each question"
    why = "" if shown == chosen else " (the scatter's metric has no per-question answers)"
    return (f"Questions of {shown} on this image{why}, as in the Questions tab: 'counts' = what the score "
            "averages. Pick a dsg / dsg-transitive / dsg-nodep / vq2a metric for the scatter, then click a point, "
            "to see another VQA model's answers (TIFA's multiple-choice questions are not scored: no answer key "
            "is released)")


def build(page: Page) -> None:
    """Build the Human ratings tab and wire its events (its views run in the gold lane, its uploads in their own).

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    """
    sets = gc_sets.gold_sets()
    first = sets[0]
    with gr.Tab("Human ratings", id="gold", elem_id="tab-gold") as tab:
        gr.Markdown("Each metric against **human ratings** of other image sets (one slice is not enough: "
                    "compare with the TS2 leaderboard). Computed in the background as the app starts; GenAI-Bench 527 "
                    "(`genaibench`) comes with human ratings only: add your metric's scores to evaluate it.",
                    elem_classes="stat-note")
        with gr.Row():
            gold = gr.Radio(sets, value=first, label="Rated set", elem_id="gold-set")
            # allow_custom_value on both dropdowns: their choices change with the rated set, and an event sent
            # with the previous set's value must reach the callbacks, which check it (gold_views falls back to
            # the set's default), instead of Gradio's refusal as a toast (issue 40 items 9, 19)
            rs = gr.Dropdown(gc_sets.rating_sets(first), value=gc_sets.listed(first).default_rating_set, label="Ratings (gold)",
                             elem_id="gold-ratings", allow_custom_value=True)
            task = gr.Radio(list(gc_sets.TASKS), value=gc_sets.TASKS[0], label="Task", elem_id="gold-task")
        with gr.Row(equal_height=True, elem_id="gold-share"):
            link_btn = gr.Button("Copy link to this view", size="sm", scale=0, min_width=180, elem_id="gold-copy-link")
            link_box = gr.Textbox(show_label=False, max_lines=1, scale=3, elem_id="gold-link", interactive=False,
                                  placeholder="a link to this rated set, rating set, task and metric")
        note = gr.Markdown(elem_id="gold-note", elem_classes="stat-note")
        table = gr.Dataframe(interactive=False, max_height=420, elem_id="gold-board", label="Leaderboard")
        with gr.Accordion("Add your metric's scores for this rated set (CSV: image_id + one column per metric; "
                          "private to this session)", open=False, elem_id="gold-upload"):
            with gr.Row():
                up_file = gr.File(label="Score file (.csv)", file_types=[".csv"], scale=2, elem_id="gold-upload-file")
                up_btn = gr.Button("Add scores", variant="primary", scale=1, elem_id="gold-upload-btn")
            up_msg = gr.Markdown(elem_id="gold-upload-msg")
        metric = gr.Dropdown([], label="Scatter: metric", elem_id="gold-metric", allow_custom_value=True)
        plot = gr.Plot(elem_id="gold-scatter", show_label=False)
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=220):
                image_id = gr.Textbox(label="Image (click a point of the scatter, or type its id and press Enter)",
                                      max_lines=1, elem_id="gold-image")
                picture = gr.Image(visible=False, interactive=False, show_label=False, elem_id="gold-picture",
                                   height=300)
                placeholder = gr.HTML(gc_image.placeholder_html(None), elem_id="gold-placeholder")
            with gr.Column(scale=2, min_width=260):
                detail = gr.Markdown(elem_id="gold-detail")
                detail_scores = gr.Dataframe(interactive=False, max_height=300, elem_id="gold-detail-scores",
                                             label="Scores of this image", visible=False)
        answers = gr.Dataframe(interactive=False, max_height=420, elem_id="gold-answers", visible=False,
                               label=answers_label(None, None))
        cross = gr.Dataframe(interactive=False, elem_id="gold-cross",
                             label="Cross-gold: rank [95% interval] (value) of each metric family on each gold "
                                   "standard (TS2 Ord / Sep, Spearman on the rated sets)")
        judges_view.build(page)
        humaneval_slices.build(page, gold, rs)

    def gold_set_changed(gold_v, rs_v, request: gr.Request):
        g = gc_sets.rated(gc_sets.check_gold(gold_v))
        sets = gc_sets.rating_sets(gold_v)      # a link's rating set stays (set with the rated set)
        return gr.update(choices=sets, value=rs_v if rs_v in sets else g.default_rating_set)

    def gold_views(gold_v, rs_v, task_v, metric_v, request: gr.Request):
        gc_sets.check_gold(gold_v)
        own = gs.uploads_of(page.view(request))
        sets = gc_sets.rating_sets(gold_v)
        rs_v = rs_v if rs_v in sets else gc_sets.rated(gold_v).default_rating_set
        metrics = gc_sets.metrics_of(gold_v, rs_v, own)
        if metric_v not in metrics:
            metric_v = next((m for m in metrics if not m.startswith("human:")), metrics[0] if metrics else None)
        fig = page_plot(lambda: gc_board.scatter_figure(gold_v, rs_v, metric_v, own)) if metric_v else None
        return (gc_board.board_note(gold_v, rs_v, task_v, own), table_value(gc_board.board(gold_v, rs_v, task_v, own), empty=gc_sets.NO_GOLD_SCORES),
                gr.update(choices=metrics, value=metric_v), fig, table_value(gc_crossgold.cross_gold_shown(gc_crossgold.cross_gold_table(own))))

    def gold_image(gold_v, image_v, metric_v, request: gr.Request):
        gc_sets.check_gold(gold_v)
        own = gs.uploads_of(page.view(request))
        md, scores, ans, path = gc_image.image_detail(gold_v, image_v, own, metric_v)
        pixels = None
        if path is not None:                   # the operator's own file (image_detail keeps it in the folder)
            from PIL import Image

            with Image.open(path) as im:
                pixels = im.convert("RGB")
        return (md, gr.update(value=table_value(scores), visible=len(scores) > 0),
                gr.update(value=table_value(ans) if len(ans) else None, visible=len(ans) > 0,
                          label=answers_label(ans.attrs.get("metric"), metric_v)),
                gr.update(value=pixels, visible=pixels is not None),
                gr.update(value=gc_image.placeholder_html(str(image_v).strip()), visible=pixels is None))

    def gold_upload(gold_v, path, request: gr.Request):
        view = page.view(request, create=True)
        msg = gu.add_gold_scores(view, gold_v, path, gu.display_name(path))
        # the session's own rows are computed here, in the upload's queue group, not by the redraw that
        # follows in the views' group, where every other visitor's view would wait behind them
        own = gs.uploads_of(view)
        for rs_name in gc_sets.rating_sets(gold_v):       # every rating set's, so that switching sets is light
            checkpoint()
            gc_sets.own_result(gold_v, rs_name, own)
        gc_crossgold.cross_gold_table(own)
        return f"✓ {md_text(msg)}"        # names a visitor chose (file, columns) shown as text

    outputs = [note, table, metric, plot, cross]
    inputs = [gold, rs, task, metric]
    # The tab's views run in a lane of their own (jobs.GOLD), not in the shared view lane: a rating set's
    # first drawing for a session's own metrics evaluates them (intervals, clusters), which takes seconds,
    # and no other visitor's view change may wait behind that (issue 32)
    page.on(page.on(gold.change, gold_set_changed, [gold, rs], [rs], lane=GOLD).success, gold_views, inputs, outputs,
            lane=GOLD).then(None, None, None, js=CLICK_JS)
    # the visitor's own choices only (``input``, not ``change``): the redraw itself sets the rating set and
    # the metric, and a ``change`` it caused queued a second redraw carrying the old set's metric, which
    # Gradio refused with a toast once the first had changed the choices (issue 40 item 9)
    for ev in (tab.select, rs.input, task.change, metric.input):
        page.on(ev, gold_views, inputs, outputs, lane=GOLD, trigger_mode="always_last").then(
            None, None, None, js=CLICK_JS)
    # a shared link (ts2viz.ui.glue.share) naming a rated set or this tab draws its views
    def link_views(link, gold_v, rs_v, task_v, metric_v, request: gr.Request):
        if not link or not ({"gold", "ratings", "task", "gold_metric"} & set(link) or link.get("tab") == "gold"):
            return tuple(gr.skip() for _ in outputs)
        return gold_views(gold_v, rs_v, task_v, metric_v, request)

    page.linkable.update(gold=gold, ratings=rs, task=task, gold_metric=metric)
    page.link_gold = Refresh(link_views, inputs, outputs)
    share.copy_link(page, link_btn, link_box, "gold", {"gold": gold, "ratings": rs, "task": task, "gold_metric": metric})
    page.on(image_id.submit, gold_image, [gold, image_id, metric],
            [detail, detail_scores, answers, picture, placeholder], errors_to=detail, lane=GOLD)
    # a score file is read beside the views (not in their queue: a large file must not make others wait)
    dep = page.on(up_btn.click, gold_upload, [gold, up_file], up_msg, errors_to=up_msg, lane=GOLD_UPLOAD)
    page.on(dep.success, gold_views, inputs, outputs, lane=GOLD).then(None, None, None, js=CLICK_JS)
