"""The nuisance test in the page: the explorer's Nuisance tab and the leaderboard's stability table.

The tab (built inside the explorer, from its SEG, node, walk and metric pickers) shows, for a metric
stress-tested in the session or by the operator, each node's score distribution with its transformed
copies overlaid, the walk plot with the nuisance band, this SEG's statistics, and the node gallery with
each original and transformed image and both scores; and runs the test live on the current SEG (a
model call, under the caps of public mode). It is drawn only while open. The data functions are in
:mod:`ts2viz.ui.callbacks.nuisance`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from ...nuisance.transforms import DEFAULT
from ..callbacks import nuisance as cb
from ..glue.events import Page, Refresh
from ..glue.plots import build_plain, page_plot
from ..glue.tables import dropdown, empty_table, table_value

TAB_ID = "nuisance"
INTRO = ("Does the metric move more for nuisance (JPEG, a resize, a slightly brighter image, \"a photo of\" in the "
         "prompt) than for the SEG's errors? Each node's scores clean and under each transform; the walk with the "
         "*nuisance band* (per node, the lowest to highest node mean under the meaning-keeping transforms) beside "
         "its real error steps; the node's images, each followed by its transformed copy with both scores.")


@dataclass
class NuisanceTab:
    """What the page wires across tabs: the live run's event (a new live metric changes every view).

    Parameters
    ----------
    tab : gradio.Tab
        The tab.
    run_event : gradio.events.Dependency
        The live run's event.
    """

    tab: Any
    run_event: Any


def build(page: Page, *, seg, node, walk, metric_a, open_tab) -> NuisanceTab:
    """The explorer's Nuisance tab (call inside the explorer's ``gr.Tabs``) and its events.

    Drawn only while open; the live run is a model call.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    seg : gradio.Dropdown
        The explorer's SEG picker.
    node : gradio.Dropdown
        Its node picker.
    walk : gradio.Dropdown
        Its walk picker.
    metric_a : gradio.Dropdown
        Its metric A.
    open_tab : gradio.State
        The explorer's per-session state naming its open tab.

    Returns
    -------
    NuisanceTab
        The tab and its live run's event.
    """
    app = page.app
    access = app.access
    with gr.Tab("Nuisance", id=TAB_ID, elem_id="tab-nuisance") as tab:
        gr.Markdown(f"<small>{INTRO}</small>")
        with gr.Row(equal_height=True):
            metric = gr.Dropdown([], label="Stress-tested metric", scale=2, elem_id="nuisance-metric")
            transform = gr.Dropdown([], label="Transform (its line on the walk, its copies in the gallery)", scale=2,
                                    elem_id="nuisance-transform")
        note = gr.Markdown(elem_id="nuisance-note")
        with gr.Row():
            dist = gr.Plot(elem_id="nuisance-dist", show_label=False)
            walkp = gr.Plot(elem_id="nuisance-walk", show_label=False)
        table = gr.Dataframe(empty_table(cb.NO_RESULTS_TABLE), interactive=False, wrap=True, max_height=320,
                             elem_id="nuisance-seg-table",
                             label="This SEG under each transform (NSR: median |Δ| ÷ median node-mean step; "
                                   "* degrading, † changes meaning)")
        gal = gr.Gallery(label="Node images: each original, then its transformed copy", show_label=True, columns=6,
                         height="auto", object_fit="contain", elem_id="nuisance-gallery", allow_preview=True,
                         preview=False)
        with gr.Accordion("Run the nuisance test on this SEG", open=True, elem_id="nuisance-run-box"):
            with gr.Row(equal_height=False):
                if access.public:
                    spec = gr.Dropdown(access.choices(), value=(access.choices() or [None])[0], label="Metric",
                                       elem_id="nuisance-spec", scale=2)
                else:
                    spec = gr.Textbox(value=(access.offered or [""])[0], label="Metric spec", max_lines=1,
                                      elem_id="nuisance-spec", scale=2,
                                      placeholder="clipscore:openai/clip-vit-base-patch32")
                transforms = gr.Dropdown(cb.transform_choices(access), value=list(DEFAULT[:6]), multiselect=True,
                                         max_choices=cb.MAX_TRANSFORMS, label=f"Transforms (at most {cb.MAX_TRANSFORMS})",
                                         elem_id="nuisance-transforms", scale=3)
            run_btn = gr.Button("Run on this SEG", variant="primary", elem_id="nuisance-run")
            run_msg = gr.Markdown("*The outcome of a run shows here.*", elem_id="nuisance-msg", min_height=72,
                                  container=True)

    everything = [metric, transform, note, dist, walkp, table, gal]

    def redraw(sid, node_v, walk_v, ma, current, tr, mode, fmt, shown, request: gr.Request):
        if sid in (None, "") or shown != TAB_ID:
            return tuple(gr.skip() for _ in everything)
        view = page.view(request)
        want = current if current else ma
        choices = cb.metric_choices(view)
        if ma in choices and current not in choices:
            want = ma
        v = build_plain(lambda: cb.seg_view(view, want, sid, tr, walk_v, node_v, mode))
        plot = (lambda f: page_plot(lambda: f, fmt)) if v["dist"] is not None else (lambda f: None)
        tbl = table_value(v["table"], empty=cb.NO_RESULTS_TABLE)
        return (dropdown(v["metrics"], v["metric"]), dropdown(v["transforms"], v["transform"]), v["note"],
                plot(v["dist"]), plot(v["walk"]), tbl, v["gallery"])

    inputs = [seg, node, walk, metric_a, metric, transform, page.mode, page.fmt, open_tab]
    page.refresh["nuisance"] = Refresh(redraw, inputs, everything)
    with tab:
        page.while_open(TAB_ID, (seg.change, node.change, walk.change, metric_a.change), redraw, inputs, everything,
                        elem_id="nuisance-follow-view")
    for ev in (metric.input, transform.input):
        page.on(ev, redraw, inputs, everything)

    def opened(sid, node_v, walk_v, ma, current, tr, mode, fmt, shown, request: gr.Request):
        return (TAB_ID, *redraw(sid, node_v, walk_v, ma, current, tr, mode, fmt, TAB_ID, request))

    page.on(tab.select, opened, inputs, [open_tab, *everything])

    def nuisance_run(spec_v, transforms_v, sid, request: gr.Request, progress=gr.Progress()) -> str:
        view = page.view(request, create=True)
        return f"✓ {cb.live_nuisance(view, spec_v, transforms_v, sid, progress=progress)}"

    dep = page.on(run_btn.click, nuisance_run, [spec, transforms, seg], run_msg, model=True, errors_to=run_msg)
    return NuisanceTab(tab, dep)


def build_board_part(page: Page) -> None:
    """The leaderboard's stability table, an accordion.

    Drawn when opened, and again when the mode changes or a live run adds results while it is open.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    """
    with gr.Accordion("Stability under nuisance (nuisance test): ratio to error steps, flips, ΔOrd, ΔSep",
                      open=False, elem_id="board-stability") as acc:
        gr.Markdown(cb.STABILITY_NOTE, elem_classes="stat-note")
        msg = gr.Markdown(elem_id="stability-msg")
        table = gr.Dataframe(empty_table(cb.NO_RESULTS_TABLE), interactive=False, wrap=True, max_height=480,
                             elem_id="stability-table",
                             label="Stability columns with 95% intervals over SEGs")
    opened = gr.State(False)

    def draw(mode, is_open, request: gr.Request):
        if not is_open:
            return gr.skip(), gr.skip()
        df = cb.stability_table(page.view(request), mode)
        if df is None:
            return cb.NO_STABILITY, empty_table(cb.NO_RESULTS_TABLE)
        return "", table_value(df)

    page.refresh["stability"] = Refresh(draw, [page.mode, opened], [msg, table])

    def stability_opened(mode, request: gr.Request):
        return (True, *draw(mode, True, request))

    page.on(acc.expand, stability_opened, [page.mode], [opened, msg, table])
    page.on(page.mode.change, draw, [page.mode, opened], [msg, table])
