"""The Gradio page: the header, one builder per tab (:mod:`.tabs`), and the events that span tabs.

Events inside a tab are wired by its builder. Here: the mode and figure-format switches, the events
that change which metrics a session sees (a scores upload, live scoring), which redraw every tab, and
the end of a session (its workspace is dropped).
"""
from __future__ import annotations

from typing import Sequence

import gradio as gr  # this module is imported only when the app is built

from ...metametrics.policy import MODES
from ..callbacks import common as cb_common, live as cb_live
from ..glue import share
from ..glue.events import Page, Refresh
from ..serving.jobs import SCORES_UPLOAD
from ..state.sessions import Workspaces
from ..state.app_state import AppState
from ..tabs import authoring, board, correlations, explorer, humaneval, live


def build_blocks(app: AppState, *, title: str = "ts2viz", workspaces: Workspaces | None = None) -> gr.Blocks:
    """The ``gr.Blocks`` of the app (not launched): the header, every tab, and the events across tabs.

    Parameters
    ----------
    app : AppState
        The app.
    title : str, default "ts2viz"
        The page's title.
    workspaces : Workspaces or None, default None
        The sessions' private data (made if ``None``).

    Returns
    -------
    gradio.Blocks
        The page.
    """
    with gr.Blocks(title=title, fill_width=True) as demo:
        with gr.Row(elem_classes="app-header", equal_height=False):
            header = gr.HTML(cb_common.header_html(app), elem_classes="brand-wrap", js_on_load=None, scale=4)
            mode = gr.Radio(list(MODES), value="paper", label="Mode (paper = published numbers, spec = as defined)",
                            scale=2, min_width=280, elem_id="mode", elem_classes="compact")
            fmt = gr.Radio(["png", "svg"], value="png", label="Figure download (camera icon)", scale=1,
                           min_width=200, elem_id="fmt", elem_classes="compact")
            variant = variant_control(app)
        page = Page(app, mode, fmt, workspaces, variant=variant)

        def header_view(request: gr.Request):
            return cb_common.header_html(page.view(request))

        # the header counts the metrics the session sees: redrawn when its metrics change
        page.refresh["header"] = Refresh(header_view, [], [header])
        with gr.Tabs(elem_id="tabs") as tabs:
            page.tabs = tabs
            board_tab = board.build(page)
            nuisance_tab = explorer.build(page)
            correlations.build(page)
            live_tab = live.build(page)
            authoring.build(page)
            humaneval.build(page)
        for slot in page.download_slots:
            slot.render()
        wire_across_tabs(page, board_tab, live_tab, nuisance_tab)
        wire_first_render(demo, page)
        share.wire(demo, page)

        def end_session(request: gr.Request):
            sid = getattr(request, "session_hash", None)
            page.workspaces.end(sid)
            # Gradio keeps a closed tab's component state (a copy of the page's config and the last
            # value of every output) until it has 10,000 sessions: drop it with the session's data.
            holder = getattr(demo, "state_holder", None)
            if sid and holder is not None:
                holder.session_data.pop(sid, None)

        demo.unload(end_session)   # the tab was closed: the session's data goes now
    demo.ts2viz_page = page
    # The events are the page's own wiring, not an API: left out of the API docs (and so out of the
    # ~400 KB of API description Gradio would embed in every page load). They stay callable over HTTP,
    # which is why every callback checks its inputs (see ts2viz.ui.serving.access).
    for fn in demo.fns.values():
        if fn.api_visibility == "public":
            fn.api_visibility = "undocumented"
    return demo


#: how the variants of the bundled TS2 data are called in the header (see ts2viz.ui.load_state)
VARIANT_LABELS = {"mean": "mean (web leaderboard)", "gated": "gated (release files)"}


def variant_control(app: AppState):
    """The header's choice between versions of the shared data (the bundled TS2 scores' DSG accumulation).

    Parameters
    ----------
    app : AppState
        The app.

    Returns
    -------
    gradio.Radio or None
        The control; ``None`` when the data has one version only.
    """
    names = app.variant_names
    if len(names) < 2:
        return None
    return gr.Radio([(VARIANT_LABELS.get(n, n), n) for n in names], value=app.variant_name,
                    label="Bundled DSG scores: accumulation", scale=1, min_width=300,
                    elem_id="dsg-accumulation", elem_classes="compact")


def metric_lists(page: Page, view, select: str | None = None) -> tuple:
    """New choices in every metric and family picker (after metrics were added to the session).

    Parameters
    ----------
    page : Page
        The page.
    view : AppView
        The session's view.
    select : str or None, default None
        The metric the first metric picker shows.

    Returns
    -------
    tuple of dict
        One update per metric picker, then per family picker.
    """
    ch = cb_common.metric_choices(view)
    out = [gr.update(choices=ch, value=select) if (select and k == 0) else gr.update(choices=ch)
           for k in range(len(page.metric_pickers))]
    out += [gr.update(choices=[cb_common.ALL] + cb_common.families(view)) for _ in page.family_pickers]
    return tuple(out)


def wire_across_tabs(page: Page, board_tab: board.BoardTab, live_tab: live.LiveTab, nuisance_tab=None) -> None:
    """Wire the events that redraw several tabs.

    The mode, figure-format and data-variant switches (each one combined call); a scores upload, live
    scoring and a live nuisance run, which add metrics to the session and redraw every tab that lists
    them.

    Parameters
    ----------
    page : Page
        The page.
    board_tab : ts2viz.ui.tabs.board.BoardTab
        The leaderboard tab (its upload).
    live_tab : ts2viz.ui.tabs.live.LiveTab
        The live-scoring tab.
    nuisance_tab : ts2viz.ui.tabs.nuisance.NuisanceTab or None, default None
        The nuisance tab (its live run), if built.
    """
    # each in one call (see combined): the mode changes every view; the figure format the figures
    # (the board's scatter too); the data variant every view of the shared scores
    for trigger, parts, name in ((page.mode.change, ["board", "seg", "finder", "corr"], "mode_changed"),
                                 (page.fmt.change, ["board", "seg", "nodes", "corr"], "format_changed")):
        r = combined(page, parts, name)
        page.on(trigger, r.fn, r.inputs, r.outputs)
    if page.variant is not None:
        r = combined(page, [n for n in page.refresh if n != "header"], "variant_changed")
        page.on(page.variant.change, r.fn, r.inputs, r.outputs)
    pickers = page.metric_pickers + page.family_pickers

    def lists(request: gr.Request):
        return metric_lists(page, page.view(request))

    def added_scores(path, lib, request: gr.Request):
        return board.add_scores(page, path, lib, request)

    # reading a visitor's file runs beside the views, not in their queue (issue 22: a large file must
    # not make every other visitor wait)
    dep = page.on(board_tab.upload_button.click, added_scores, board_tab.upload_inputs, board_tab.upload_message,
                  errors_to=board_tab.upload_message, lane=SCORES_UPLOAD)
    page.then_redraw(page.on(dep.success, lists, None, pickers), ["header", "board", "seg", "nodes", "corr"])

    def first_live(specs, request: gr.Request):
        wanted = cb_live.parse_specs(specs)
        view = page.view(request)
        return metric_lists(page, view, next((m for m in view.metrics if m in wanted), None))

    # Model calls: one at a time (one GPU), in a queue of their own; a visitor sees their place in it,
    # and view events (their own group) never wait behind a model.
    # errors stay in the panel (the toast goes after a few seconds)
    dep = page.on(live_tab.score_button.click, live_tab.score, live_tab.score_inputs, live_tab.score_message,
                  model=True, errors_to=live_tab.score_message)
    live.clear_error_toasts_on_success(dep)
    # the finder too: it follows metric A, which first_live may set (the pickers' own events are the visitor's)
    page.then_redraw(page.on(dep.success, first_live, live_tab.spec, pickers), ["header", "board", "seg", "nodes",
                                                                              "finder", "corr"])
    dep = page.on(live_tab.upload_button.click, live_tab.upload, live_tab.upload_inputs, live_tab.upload_outputs,
                  model=True, errors_to=live_tab.upload_outputs[0])
    live.clear_error_toasts_on_success(dep)
    page.then_redraw(page.on(dep.success, lists, None, pickers), ["header", "board"])
    if nuisance_tab is not None:
        # a live nuisance run adds the metric's clean scores (a live metric) and its stability rows
        live.clear_error_toasts_on_success(nuisance_tab.run_event)
        page.then_redraw(page.on(nuisance_tab.run_event.success, lists, None, pickers),
                         ["header", "board", "stability", "nuisance"])


def combined(page: Page, parts: Sequence[str], name: str, *, skip_board_table: bool = False) -> Refresh:
    """One callback that redraws several views in one event call.

    A view change that touches several views (the mode, the figure format, the data variant, the first
    render) costs one call instead of a chain of them: under load each call pays Gradio's queue and
    per-input overhead, which is most of what a memoised view costs.

    Parameters
    ----------
    page : Page
        The page.
    parts : sequence of str
        Names of ``page.refresh``.
    name : str
        The event's API name.
    skip_board_table : bool, default False
        Leave out the leaderboard table (the page already has it at the first render).

    Returns
    -------
    Refresh
        The combined redraw.
    """
    refs = [page.refresh[p] for p in parts]
    inputs = list(dict.fromkeys(c for r in refs for c in r.inputs))
    outputs = []
    for part, r in zip(parts, refs):
        outputs += r.outputs[1:] if (skip_board_table and part == "board") else r.outputs

    def redraw(*values):
        *values, request = values
        by = dict(zip(inputs, values))
        out = []
        for part, r in zip(parts, refs):
            res = r.fn(*(by[c] for c in r.inputs), request)
            res = tuple(res) if len(r.outputs) > 1 else (res,)
            out += list(res[1:] if (skip_board_table and part == "board") else res)
        return tuple(out)

    redraw.__signature__ = _signature(len(inputs))
    redraw.__annotations__ = {"request": gr.Request}
    redraw.__name__ = name
    return Refresh(redraw, inputs, outputs)


def wire_first_render(demo: gr.Blocks, page: Page) -> None:
    """One load event fills every view.

    The leaderboard table is in the initial page already: only its scatter comes from here.

    Parameters
    ----------
    demo : gradio.Blocks
        The page.
    page : Page
        The page.
    """
    parts = ["board", "seg", "finder", "corr"] if page.app.metrics else ["seg"]
    r = combined(page, parts, "first_render", skip_board_table=bool(page.app.metrics))
    page.on(demo.load, r.fn, r.inputs, r.outputs, show_progress="hidden")


def _signature(n: int):
    """``(v0, ..., v{n-1}, request)``: Gradio passes the request to a parameter annotated gr.Request."""
    import inspect

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(f"v{i}", kind) for i in range(n)]
                             + [inspect.Parameter("request", kind, annotation=gr.Request)])


__all__ = ["build_blocks"]
