"""The Gradio page: the header, one builder per tab (:mod:`.tabs`), and the events that span tabs.

Events inside a tab are wired by its builder. Here: the mode and figure-format switches, and the
events that change which metrics are loaded (a scores upload, live scoring), which redraw every tab.
"""
from __future__ import annotations

import gradio as gr  # this module is imported only when the app is built

from ..policy import MODES
from . import callbacks as cb
from .glue import Page, Refresh, safe
from .state import AppState
from .tabs import board, correlations, explorer, live


def build_blocks(app: AppState, *, title: str = "ts2viz") -> gr.Blocks:
    """The gr.Blocks of the app (not launched)."""
    with gr.Blocks(title=title, fill_width=True) as demo:
        with gr.Row(elem_classes="app-header", equal_height=False):
            header = gr.HTML(cb.header_html(app), elem_classes="brand-wrap", js_on_load=None, scale=4)
            mode = gr.Radio(list(MODES), value="paper", label="Mode (paper = published numbers, spec = as defined)",
                            scale=2, min_width=280, elem_id="mode", elem_classes="compact")
            fmt = gr.Radio(["png", "svg"], value="png", label="Figure download (camera icon)", scale=1,
                           min_width=200, elem_id="fmt", elem_classes="compact")
        page = Page(app, mode, fmt)
        # the header counts the loaded metrics: redrawn when metrics are added
        page.refresh["header"] = Refresh(lambda: cb.header_html(app), [], [header])
        with gr.Tabs(elem_id="tabs") as tabs:
            page.tabs = tabs
            board_tab = board.build(page)
            explorer.build(page)
            correlations.build(page)
            live_tab = live.build(page)
        wire_across_tabs(page, board_tab, live_tab)
        wire_first_render(demo, page)
    # The events are the page's own wiring, not an API: left out of the API docs (and so out of the
    # ~400 KB of API description Gradio would embed in every page load), still callable by clients.
    for fn in demo.fns.values():
        if fn.api_visibility == "public":
            fn.api_visibility = "undocumented"
    return demo


def metric_lists(page: Page, select: str | None = None) -> tuple:
    """New metric choices in every metric and family picker (after metrics were added); the first
    metric picker shows ``select`` if given."""
    ch = cb.metric_choices(page.app)
    out = [gr.Dropdown(choices=ch, value=select) if (select and k == 0) else gr.Dropdown(choices=ch)
           for k in range(len(page.metric_pickers))]
    out += [gr.Dropdown(choices=[cb.ALL] + cb.families(page.app)) for _ in page.family_pickers]
    return tuple(out)


def wire_across_tabs(page: Page, board_tab: board.BoardTab, live_tab: live.LiveTab) -> None:
    everything = ["board", "seg", "finder", "corr"]
    page.then_redraw(page.mode.change(safe(page.refresh["board"].fn), page.refresh["board"].inputs,
                                      page.refresh["board"].outputs), everything[1:])
    page.then_redraw(page.fmt.change(safe(page.refresh["board"].fn), page.refresh["board"].inputs,
                                     page.refresh["board"].outputs), ["seg", "corr"])
    pickers = page.metric_pickers + page.family_pickers

    def added_scores(path, lib):
        return board.add_scores(page, path, lib)

    dep = board_tab.upload_button.click(safe(added_scores), board_tab.upload_inputs, board_tab.upload_message)
    page.then_redraw(dep.success(lambda: metric_lists(page), None, pickers), ["header", "board", "seg", "corr"])

    def first_live(specs):
        wanted = cb.parse_specs(specs)
        return metric_lists(page, next((m for m in page.app.metrics if m in wanted), None))

    dep = live_tab.score_button.click(safe(live_tab.score), live_tab.score_inputs, live_tab.score_message)
    page.then_redraw(dep.success(first_live, live_tab.spec, pickers), ["header", "board", "seg", "corr"])
    dep = live_tab.upload_button.click(safe(live_tab.upload), live_tab.upload_inputs, live_tab.upload_outputs)
    page.then_redraw(dep.success(lambda: metric_lists(page), None, pickers), ["header", "board"])


def wire_first_render(demo: gr.Blocks, page: Page) -> None:
    """One load event fills every view. The leaderboard table is in the initial page already: only
    its scatter and CSV come from here."""
    parts = ["board", "seg", "finder", "corr"] if page.app.metrics else ["seg"]
    refs = [page.refresh[p] for p in parts]
    inputs = list(dict.fromkeys(c for r in refs for c in r.inputs))
    outputs = [c for r in refs for c in r.outputs]
    if page.app.metrics:
        outputs = outputs[1:]                       # not the board table

    def first(*values):
        by = dict(zip(inputs, values))
        out = []
        for name, r in zip(parts, refs):
            res = r.fn(*(by[c] for c in r.inputs))
            out += list(res[1:] if name == "board" else res)
        return tuple(out)

    demo.load(safe(first), inputs, outputs, show_progress="hidden")


__all__ = ["build_blocks"]
