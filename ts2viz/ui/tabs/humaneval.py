"""The Human ratings tab: metrics against human judgments (bundled rated sets), by Gecko's three tasks,
with a metric-vs-human scatter coloured by T2I model and the cross-gold ranks view."""
from __future__ import annotations

import gradio as gr

from .. import gold_callbacks as gc
from ..glue import Page, page_plot, table_value


def build(page: Page) -> None:
    first = gc.GOLD_SETS[0]
    with gr.Tab("Human ratings", id="gold", elem_id="tab-gold") as tab:
        gr.Markdown("Each metric against **human ratings** of other image sets (one slice is not enough: "
                    "compare with the TS2 leaderboard). Computed when this tab opens.", elem_classes="stat-note")
        with gr.Row():
            gold = gr.Radio(list(gc.GOLD_SETS), value=first, label="Rated set", elem_id="gold-set")
            rs = gr.Dropdown(gc.rating_sets(first), value=gc.rated(first).default_rating_set, label="Ratings (gold)",
                             elem_id="gold-ratings")
            task = gr.Radio(list(gc.TASKS), value=gc.TASKS[0], label="Task", elem_id="gold-task")
        note = gr.Markdown(elem_id="gold-note", elem_classes="stat-note")
        table = gr.Dataframe(interactive=False, max_height=420, elem_id="gold-board", label="Leaderboard")
        metric = gr.Dropdown([], label="Scatter: metric", elem_id="gold-metric")
        plot = gr.Plot(elem_id="gold-scatter", show_label=False)
        cross = gr.Dataframe(interactive=False, elem_id="gold-cross",
                             label="Cross-gold: rank [95% interval] (value) of each metric family on each gold "
                                   "standard (TS2 Ord / Sep, Spearman on the rated sets)")

    def set_changed(gold_v, request: gr.Request):
        g = gc.rated(gold_v)
        return gr.update(choices=gc.rating_sets(gold_v), value=g.default_rating_set)

    def views(gold_v, rs_v, task_v, metric_v, request: gr.Request):
        sets = gc.rating_sets(gold_v)
        rs_v = rs_v if rs_v in sets else gc.rated(gold_v).default_rating_set
        res = gc.result(gold_v, rs_v)
        metrics = list(res.metrics)
        metric_v = metric_v if metric_v in metrics else next((m for m in metrics if not m.startswith("human:")),
                                                            metrics[0])
        return (gc.board_note(gold_v, rs_v, task_v), table_value(gc.board(gold_v, rs_v, task_v)),
                gr.update(choices=metrics, value=metric_v), page_plot(lambda: gc.scatter_figure(gold_v, rs_v, metric_v)),
                table_value(gc.cross_gold_table()))

    outputs = [note, table, metric, plot, cross]
    inputs = [gold, rs, task, metric]
    page.on(gold.change, set_changed, [gold], [rs])
    for ev in (tab.select, rs.change, task.change, metric.change):
        page.on(ev, views, inputs, outputs)
