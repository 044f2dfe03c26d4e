"""The Judges view of the Human ratings tab: judges on side-by-side pairs (GenAI-Bench's 1,735 votes).

An accordion, computed when it opens: the accuracy table with intervals over pairs, the position-bias
bars, the triage list of the pairs where the judges and the raters disagree most (click a row: that
pair), and one pair's prompt, raters' verdict and a judge's text with the parsed verdict marked.
"""
from __future__ import annotations

import gradio as gr

from ..callbacks import judges as jc
from ..glue.errors import Selection
from ..glue.events import Page
from ..glue.plots import page_plot
from ..glue.tables import table_value
from ..serving.jobs import GOLD


def build(page: Page) -> None:
    """Build the Judges view inside the current tab and wire its events (in the gold lane).

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page.
    """
    from ...gold.pairs import PARSE_RULES

    with gr.Accordion("Judges on side-by-side pairs (GenAI-Bench: 1,735 human votes, 18 judges)", open=False,
                      elem_id="judges") as acc:
        gr.Markdown("Each judge's verdict against the raters' (A, B, tie-good, tie-bad), with 95% bootstrap "
                    "intervals over pairs; the parse rule reads the judge's text (genaibench: the release's own "
                    "rule, which reproduces its published table; canonical: the template's four tokens only).",
                    elem_classes="stat-note")
        with gr.Row():
            pset = gr.Radio(list(jc.JUDGE_SETS), value=jc.JUDGE_SETS[0], label="Side-by-side set", elem_id="judge-set")
            parse = gr.Radio(list(PARSE_RULES), value=PARSE_RULES[0], label="Parse rule", elem_id="judge-parse")
        board = gr.Dataframe(interactive=False, max_height=420, elem_id="judge-board", label="Judges")
        bias = gr.Plot(elem_id="judge-bias", show_label=False)
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=260):
                triage = gr.Dataframe(interactive=False, max_height=420, elem_id="judge-triage",
                                      label="Pairs the judges and the raters disagree on most (click one)")
            with gr.Column(scale=1, min_width=260):
                with gr.Row():
                    pair = gr.Textbox(label="Pair (click a row, or type its id and press Enter)", max_lines=1,
                                      elem_id="judge-pair")
                    judge = gr.Dropdown([], label="Judge", elem_id="judge-name")
                detail = gr.HTML(elem_id="judge-detail")

    def views(set_v, parse_v, judge_v, request: gr.Request):
        set_v, parse_v = jc.check_choice(set_v, parse_v)
        names = jc.judges_of(set_v, parse_v)
        judge_v = judge_v if judge_v in names else names[min(1, len(names) - 1)]
        return (table_value(jc.accuracy_table(set_v, parse_v)), page_plot(lambda: jc.bias_figure(set_v, parse_v)),
                table_value(jc.triage_table(set_v, parse_v)), gr.update(choices=names, value=judge_v))

    def show(set_v, parse_v, pair_v, judge_v, request: gr.Request):
        if not str(pair_v or "").strip():
            return ""
        return jc.pair_detail(set_v, parse_v, pair_v, judge_v)

    def open_row(set_v, parse_v, judge_v, evt: Selection, request: gr.Request):
        row = getattr(evt, "row_value", None)       # the clicked row's cells, sent with the event
        if not row:
            return gr.skip(), gr.skip()
        pid = str(row[0])
        return pid, jc.pair_detail(set_v, parse_v, pid, judge_v)

    for ev in (acc.expand, pset.change, parse.change):
        page.on(ev, views, [pset, parse, judge], [board, bias, triage, judge], lane=GOLD, trigger_mode="always_last")
    # a pair's detail reads the cached tables only (tens of ms): answered on its own request, never queued
    # behind another view's computation
    page.on(triage.select, open_row, [pset, parse, judge], [pair, detail], errors_to=detail, queue=False)
    for ev in (pair.submit, judge.change):
        page.on(ev, show, [pset, parse, pair, judge], detail, errors_to=detail, queue=False)
