"""The SEG explorer tab: pick a SEG, see its graph, node gallery, walks and node distributions.

Pick a SEG (search, partition, failure finder); its graph, node gallery, per-walk Spearman plots with
the walk table, node CDFs with KS distances, and the Questions and Nuisance tabs.
"""
from __future__ import annotations

import gradio as gr

from ...display import SIGNED_SEP_SHORT
from ..callbacks import common as cb_common
from ..callbacks.explorer import (nodes as cb_explorer_nodes, picking as cb_explorer_picking, view as cb_explorer_view,
                                  walks as cb_explorer_walks)
from ..images import image_refresh as ir
from ..callbacks.questions import finder as qa_finder
from ..glue.errors import Selection
from ..glue.events import Page, Refresh
from ..glue.plots import plot_cached
from ..glue.tables import dropdown, empty_table, table_value
from ..glue import share
from . import nuisance as nuisance_ui, questions

STATS = [("Ord (Spearman)", "ord"), ("Sep (KS)", "sep"), ("Signed sep", "signed_sep")]
#: the failure finder also ranks SEGs by how many errors no question of a question metric notices
#: what the failure finder says when it has no row (with metrics: none of their SEGs in the partition)
NO_FINDER_ROWS = "No SEG of this partition has a value of the chosen metric and statistic"
NO_QUESTION_ROWS = "No question metric (DSG, TIFA, ...) among the session's metrics: nothing to rank by questions"
FINDER_STATS = STATS + [("Pairwise acc.", "pacc"), ("Questions (QA metric)", "questions")]

# A click on a node card reports the node's label as the value of a select event.
GRAPH_JS = """
const pick = (card) => trigger('select', {index: 0, value: card.dataset.node});
element.addEventListener('click', (e) => {
  // the legend's colour scale: the metric's full range or this SEG's (CSS; no round trip, kept across SEGs)
  const scale = e.target.closest('[data-scale]');
  if (scale) { element.classList.toggle('seg-range', scale.dataset.scale === 'seg'); return; }
  const card = e.target.closest('[data-node]');
  if (card) { pick(card); }
});
element.addEventListener('keydown', (e) => {
  const card = e.target.closest ? e.target.closest('[data-node]') : null;
  if (card && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); pick(card); }
});
"""


def default_metrics(app) -> tuple[str | None, str | None]:
    """The metrics shown first: CLIPScore (or the first loaded) against a strong QA metric (or the next).

    Parameters
    ----------
    app : AppState or AppView
        The app.

    Returns
    -------
    (str or None, str or None)
        Metric A and metric B.
    """
    metrics = app.metrics
    a = "CLIPScore" if "CLIPScore" in metrics else (metrics[0] if metrics else None)
    b = next((m for m in ("TIFA-GPT4V", "DSG-GPT4V") if m in metrics), None)
    if b is None and len(metrics) > 1:
        b = next(m for m in metrics if m != a)
    return a, b


#: ids of the explorer's lower tabs (and values of its open-tab state)
WALKS_TAB, NODES_TAB = "walks", "nodes"


def walks_opened() -> str:
    """The open-tab state once the Walks tab is selected (it needs no drawing: it is kept up to date).

    Returns
    -------
    str
        :data:`WALKS_TAB`.
    """
    return WALKS_TAB


#: typing in the SEG search filters once the typing pauses this long (Enter filters at once)
SEARCH_DEBOUNCE_MS = 350
#: the query a debounced keystroke sends instead of its text: the callback skips it
STALE_SEARCH = "\u0000stale"
# Runs in the page before each search change event: waits SEARCH_DEBOUNCE_MS, and if another keystroke
# came meanwhile sends STALE_SEARCH as the query (the event still goes, a no-op). The query is the
# third input from the end ([variant,] search, partition, SEG).
DEBOUNCE_SEARCH_JS = f"""(...a) => new Promise((resolve) => {{
  const n = (window.ts2vizSearchN = (window.ts2vizSearchN || 0) + 1);
  setTimeout(() => {{
    if (window.ts2vizSearchN !== n) a[a.length - 3] = {STALE_SEARCH!r};
    resolve(a);
  }}, {SEARCH_DEBOUNCE_MS});
}})"""


def build(page: Page) -> "nuisance_ui.NuisanceTab":
    """Build the explorer tab (with its Questions and Nuisance tabs) and wire its events.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).

    Returns
    -------
    ts2viz.ui.tabs.nuisance.NuisanceTab
        Its Nuisance tab (whose live run the page wires across tabs).
    """
    app = page.app
    m_a, m_b = default_metrics(app)
    choices = cb_common.metric_choices(app)
    with gr.Tab("SEG explorer", id="seg", elem_id="tab-seg"):
        # ids for assets/app.css: on a phone the sidebar's parts and the SEG's are put in one column in the
        # order a visitor needs them (the SEG picker, the SEG's header and graph, the metrics, ... the finder)
        with gr.Row(elem_id="seg-row"):
            with gr.Column(scale=1, min_width=360, elem_classes="sidebar", elem_id="seg-sidebar"):
                search = gr.Textbox(label="Search prompts (or type a SEG id)", placeholder="e.g. teddy bear",
                                    max_lines=1, elem_id="seg-search")
                part = gr.Radio(cb_explorer_picking.partitions(app), value=cb_common.ALL, label="Partition",
                                elem_id="seg-partition")
                # allow_custom_value: a search narrows the choices while an earlier view event (sent with the
                # SEG chosen before) may still be on its way; Gradio would refuse that value before the
                # callback runs (an HTTP 500, no message). The callbacks check the id themselves (_seg).
                seg_dd = gr.Dropdown(cb_explorer_picking.seg_options(app), value=next(iter(app.dataset.segs)), label="SEG",
                                     elem_id="seg-pick", allow_custom_value=True)
                metric_a = gr.Dropdown(choices, value=m_a, label="Metric", elem_id="metric-a")
                metric_b = gr.Dropdown(choices, value=m_b, label="Compare with", elem_id="metric-b")
                with gr.Row(equal_height=True, elem_id="seg-share"):
                    link_btn = gr.Button("Copy link to this view", size="sm", scale=1, min_width=120,
                                         elem_id="seg-copy-link")
                    link_box = gr.Textbox(show_label=False, max_lines=1, scale=3, elem_id="seg-link",
                                          placeholder="a link to this SEG, metrics and node", interactive=False)
                with gr.Accordion("Failure finder", open=True, elem_id="finder"):
                    with gr.Row():
                        ff_stat = gr.Radio(FINDER_STATS, value="ord", label="Rank by", scale=1,
                                           info=SIGNED_SEP_SHORT)
                        ff_gap = gr.Checkbox(label="by gap to the 'compare with' metric", value=False, scale=1)
                    # without metrics the page's first render leaves the finder out: it says why from the start
                    finder = gr.Dataframe(None if app.metrics else empty_table(cb_common.NO_SCORES), interactive=False,
                                          max_height=360, elem_id="finder-table",
                                          label="Worst first, values x100 · click a row to open", wrap=True)
                    finder_csv = gr.Button("Download CSV", size="sm", elem_id="finder-csv")
            with gr.Column(scale=4, elem_id="seg-main"):
                header = gr.Markdown(elem_id="seg-header", elem_classes="seg-header")
                graph = gr.HTML(elem_id="seg-graph", js_on_load=GRAPH_JS, min_height=200)
                with gr.Row(equal_height=True):
                    node_dd = gr.Dropdown([], label="Node", scale=1, elem_id="node-pick")
                    walk_dd = gr.Dropdown([], label="Highlight a walk", scale=3, elem_id="walk-pick")
                node_md = gr.Markdown(elem_id="node-title")
                # sized by assets/app.css: images of a readable size with their captions, however many
                gal = gr.Gallery(label="Node images", show_label=False, columns=6, height="auto",
                                 object_fit="contain", elem_id="node-gallery", allow_preview=True, preview=False)
                # per session: what the graph's thumbnails and the gallery showed when drawn, and a timer
                # that runs only while some of them are still downloading (see ts2viz.ui.images.image_refresh)
                img_shown = gr.State(None)
                img_timer = gr.Timer(ir.TICK_S or 1.0, active=False)
                # per session: the tab open below; the Nodes and Questions tabs are drawn only while
                # open (most visits stay on the walks, and every output of a view costs Gradio work)
                open_tab = gr.State(WALKS_TAB)
                with gr.Tabs():
                    with gr.Tab("Walks (ordering)", id=WALKS_TAB) as walks_tab:
                        with gr.Row():
                            walk_a = gr.Plot(elem_id="walk-plot-a", show_label=False)
                            walk_b = gr.Plot(elem_id="walk-plot-b", show_label=False)
                        walks_tb = gr.Dataframe(interactive=False, max_height=320, elem_id="walk-table",
                                                label="Walks, worst ord first, values x100 · click a row to "
                                                      "highlight")
                        walks_csv = gr.Button("Download CSV", size="sm", elem_id="walks-csv")
                    with gr.Tab("Nodes (separation)", id=NODES_TAB) as nodes_tab:
                        with gr.Row():
                            cdf_a = gr.Plot(elem_id="cdf-plot-a", show_label=False)
                            cdf_b = gr.Plot(elem_id="cdf-plot-b", show_label=False)
                        ks_tb = gr.Dataframe(interactive=False, max_height=320, elem_id="ks-table",
                                             label="KS distance of adjacent node pairs x100, lowest signed KS "
                                                   "first (negative: the node with more errors scores "
                                                   "higher); at = where it is attained, Δmean = mean gap "
                                                   "(scores)")
                        ks_csv = gr.Button("Download CSV", size="sm", elem_id="ks-csv")
                    questions_tab = questions.build(page, seg=seg_dd, node=node_dd, metric_a=metric_a,
                                                    metric_b=metric_b, gallery=gal, open_tab=open_tab)
                    nuisance = nuisance_ui.build(page, seg=seg_dd, node=node_dd, walk=walk_dd, metric_a=metric_a,
                                                 open_tab=open_tab)
    page.seg, page.search = seg_dd, search
    page.metric_pickers += [metric_a, metric_b]

    # -- the whole SEG view. Its Nodes tab (CDFs, KS table) is drawn by events of its own, only while it
    # is open (page.while_open): a view change with it closed has no output there (an output that is
    # skipped still costs Gradio a new component and its config).
    # Images that land after a view was drawn are pushed to the page (image_refresh) only where they can
    # land: with a hub fetcher. Without one (local images, or HF_HUB_OFFLINE) a view's images never
    # change, and the timer and its record are no outputs of the view events.
    live_images = ir.live() and getattr(getattr(app, "thumbs", None), "fetcher", None) is not None
    img_out = [img_timer, img_shown] if live_images else []
    seg_out = [header, graph, node_dd, node_md, gal, walk_dd, walk_a, walk_b, walks_tb, *img_out]
    nodes_out = [cdf_a, cdf_b, ks_tb]

    def images_shown(view, sid, node=None):
        """What the view's images show now (:func:`ir.shown`; call before building the view), if pushed."""
        return ir.shown(view, sid, node) if live_images else None

    def images_drawn(rec):
        """The timer and record outputs of a view event that drew the graph and gallery of ``rec``."""
        return (gr.Timer(active=ir.timer_on(rec)), rec) if live_images else ()

    def separation(view, sid, ma, mb, fmt):
        v = cb_explorer_nodes.node_separation_view(view, sid, ma, mb, plot=plot_cached(view, fmt))
        ks = view.memo(("ks_table_value", sid, ma, mb), [ma, mb], lambda: table_value(v["ks_table"]))
        return v["cdf_a"], v["cdf_b"], ks

    def show_seg(mode, sid, ma, mb, fmt, request: gr.Request, *, node_choices: bool = True):
        if sid in (None, ""):
            return tuple(gr.skip() for _ in seg_out)
        view = page.view(request)
        rec = images_shown(view, sid)       # before the view is built: see ir.shown
        v = cb_explorer_view.seg_view(view, mode, sid, ma, mb, plot=plot_cached(view, fmt), nodes=False)
        ir.warm_neighbours(view, sid)
        walks = view.memo(("walk_table_value", mode, sid, ma, mb), [ma, mb], lambda: table_value(v["walk_table"]))
        # the same SEG (a metric changed): its node list stays, only the node is reset, as a plain value (an
        # update, even of a value alone, costs Gradio a new component and its config)
        node = dropdown(v["nodes"], v["node"]) if node_choices else v["node"]
        return (v["header"], v["graph"], node, v["node_title"], v["gallery"],
                dropdown(v["walk_choices"], v["walk"]), v["walk_fig_a"], v["walk_fig_b"], walks, *images_drawn(rec))

    seg_in = [page.mode, seg_dd, metric_a, metric_b, page.fmt]
    page.refresh["seg"] = Refresh(show_seg, seg_in, seg_out)
    page.on(seg_dd.change, show_seg, seg_in, seg_out)

    def nodes_view(sid, ma, mb, fmt, request: gr.Request):
        if sid in (None, ""):
            return gr.skip(), gr.skip(), gr.skip()
        return separation(page.view(request), sid, ma, mb, fmt)

    def nodes_opened(sid, ma, mb, fmt, request: gr.Request):
        return (NODES_TAB, *nodes_view(sid, ma, mb, fmt, request))

    def nodes_redraw(sid, ma, mb, fmt, shown, request: gr.Request):
        # redraws of every view (the figure format, the data variant, new scores): only if it is open
        return nodes_view(sid, ma, mb, fmt, request) if shown == NODES_TAB else (gr.skip(),) * 3

    nodes_in = [seg_dd, metric_a, metric_b, page.fmt]
    page.refresh["nodes"] = Refresh(nodes_redraw, nodes_in + [open_tab], nodes_out)
    page.on(nodes_tab.select, nodes_opened, nodes_in, [open_tab, *nodes_out])
    with nodes_tab:
        page.while_open(NODES_TAB, (seg_dd.change, metric_a.change, metric_b.change), nodes_view, nodes_in,
                        nodes_out, elem_id="nodes-follow")
    page.on(walks_tab.select, walks_opened, None, open_tab, queue=False, show_progress="hidden")
    page.track_open(NODES_TAB, nodes_tab, [walks_tab, questions_tab, nuisance.tab])
    page.track_open(questions.TAB_ID, questions_tab, [walks_tab, nodes_tab, nuisance.tab])
    page.track_open(nuisance_ui.TAB_ID, nuisance.tab, [walks_tab, nodes_tab, questions_tab])

    def walks_csv_file(mode, sid, ma, mb, request: gr.Request):
        view = page.view(request, create=True)
        return cb_common.table_csv(view, cb_explorer_walks.walk_table(view, mode, sid, ma, mb), "walks")

    def ks_csv_file(sid, ma, mb, request: gr.Request):
        view = page.view(request, create=True)
        return cb_common.table_csv(view, cb_explorer_nodes.ks_table(view, sid, ma, mb), "ks")

    page.download(walks_csv, walks_csv_file, [page.mode, seg_dd, metric_a, metric_b])
    page.download(ks_csv, ks_csv_file, [seg_dd, metric_a, metric_b])

    # -- picking a SEG
    def filter_segs(query, partition, current):
        if query == STALE_SEARCH:          # a keystroke followed by another within SEARCH_DEBOUNCE_MS
            return gr.skip()
        opts, value = cb_explorer_picking.seg_choice(app, query, partition, current)
        label = "SEG" if value is not None else "SEG (no SEG matches that search)"
        if value is not None and str(value) == str(current):
            # The current SEG still matches: only the choices change. Sending the value back could undo a
            # newer choice: on a fresh page a row click in another tab sets the SEG and the explorer's
            # components, shown for the first time, fire their change events with the SEG they started with.
            return gr.update(choices=opts, label=label)
        return gr.update(choices=opts, value=value, label=label)

    # a string match over the prompts: answered on its own request, not queued behind views
    page.on(search.submit, filter_segs, [search, part, seg_dd], seg_dd, queue=False)
    page.on(search.change, filter_segs, [search, part, seg_dd], seg_dd, trigger_mode="always_last",
            show_progress="hidden", queue=False, js=DEBOUNCE_SEARCH_JS)
    page.on(part.change, filter_segs, [search, part, seg_dd], seg_dd, queue=False)

    # -- nodes and walks
    def node_chosen(mode, sid, ma, mb, node, walk, request: gr.Request):
        view = page.view(request)
        rec = images_shown(view, sid, node)
        v = cb_explorer_view.select_node(view, mode, sid, ma, mb, node, walk)
        return v["graph"], v["gallery"], v["node_title"], *images_drawn(rec)

    page.on(node_dd.input, node_chosen, [page.mode, seg_dd, metric_a, metric_b, node_dd, walk_dd],
            [graph, gal, node_md, *img_out])

    def node_clicked(mode, sid, ma, mb, walk, evt: Selection, request: gr.Request):
        if not evt.value:
            return (gr.skip(),) * (4 + len(img_out))
        drawn = node_chosen(mode, sid, ma, mb, evt.value, walk, request)
        return (*drawn, evt.value)

    page.on(graph.select, node_clicked, [page.mode, seg_dd, metric_a, metric_b, walk_dd],
            [graph, gal, node_md, *img_out, node_dd])

    # -- shared links (ts2viz.ui.glue.share): the node a link names, once its SEG is drawn; the copy control
    def link_node(link, mode, sid, ma, mb, walk, request: gr.Request):
        node = (link or {}).get("node")
        if not node or str(link.get("seg")) != str(sid):
            return (gr.skip(),) * (4 + len(img_out))
        return (*node_chosen(mode, sid, ma, mb, node, walk, request), node)

    page.linkable.update(seg=seg_dd, metric=metric_a, compare=metric_b, node=node_dd)
    page.link_node = Refresh(link_node, [page.mode, seg_dd, metric_a, metric_b, walk_dd],
                             [graph, gal, node_md, *img_out, node_dd])
    share.copy_link(page, link_btn, link_box, "seg", {"seg": seg_dd, "metric": metric_a, "compare": metric_b,
                                                      "node": node_dd})

    # -- images that land after the view was drawn (a tick is cheap and skips the queue)
    def images_tick(mode, sid, ma, mb, node, walk, rec, request: gr.Request):
        if rec is None:
            return gr.skip(), gr.skip(), gr.Timer(active=False), None
        view = page.view(request)
        g, gal_changed, new = ir.tick(view, rec, sid, node)
        v = cb_explorer_view.select_node(view, mode, sid, ma, mb, node, walk) if (g or gal_changed) else {}
        return (v["graph"] if g else gr.skip(), v["gallery"] if gal_changed else gr.skip(),
                gr.Timer(active=False) if new is None else gr.skip(), gr.skip() if new is rec else new)

    if live_images:
        page.on(img_timer.tick, images_tick, [page.mode, seg_dd, metric_a, metric_b, node_dd, walk_dd, img_shown],
                [graph, gal, img_timer, img_shown], queue=False, show_progress="hidden")

    def walk_chosen(mode, sid, ma, mb, walk, node, fmt, request: gr.Request):
        view = page.view(request)
        v = cb_explorer_view.select_walk(view, mode, sid, ma, mb, walk, node, plot=plot_cached(view, fmt))
        return v["graph"], v["walk_fig_a"], v["walk_fig_b"]

    page.on(walk_dd.input, walk_chosen, [page.mode, seg_dd, metric_a, metric_b, walk_dd, node_dd, page.fmt],
            [graph, walk_a, walk_b])

    def walk_row(mode, sid, ma, mb, node, fmt, table, evt: Selection, request: gr.Request):
        w = cb_explorer_walks.walk_from_row(table, evt.index[0])
        if w is None:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        return (*walk_chosen(mode, sid, ma, mb, w, node, fmt, request), w)    # a plain value: an update would cost a new component

    page.on(walks_tb.select, walk_row, [page.mode, seg_dd, metric_a, metric_b, node_dd, page.fmt, walks_tb],
            [graph, walk_a, walk_b, walk_dd])

    # -- failure finder
    def find(mode, ma, mb, stat, gap, partition, request: gr.Request):
        view = page.view(request)
        if stat == "questions":   # SEGs whose errors no question notices, of the first question metric
            m = qa_finder.finder_metric(view, ma, mb)
            return view.memo(("finder_qa", m, partition), [m],
                             lambda: table_value(qa_finder.question_finder_on_screen(qa_finder.question_finder(view, m, partition)),
                                                 empty=NO_QUESTION_ROWS))
        key = ("finder", mode, ma, mb if gap else None, stat, partition)
        # on screen without the partition column (the CSV keeps it): in the narrow sidebar its width goes
        # to the prompt
        return view.memo(key, [ma, mb if gap else None],
                         lambda: table_value(cb_common.shown(cb_explorer_picking.failure_finder(view, mode, ma, stat, mb if gap else None,
                                                                        partition).drop(columns="partition")),
                                             empty=cb_common.NO_SCORES if not view.metrics else NO_FINDER_ROWS))

    def finder_csv_file(mode, ma, mb, stat, gap, partition, request: gr.Request):
        view = page.view(request, create=True)
        if stat == "questions":
            return cb_common.table_csv(view, qa_finder.question_finder(view, qa_finder.finder_metric(view, ma, mb), partition),
                                "failures-questions")
        return cb_common.table_csv(view, cb_explorer_picking.failure_finder(view, mode, ma, stat, mb if gap else None, partition),
                            "failures")

    def find_and_warm(mode, ma, mb, stat, gap, partition, request: gr.Request):
        table = find(mode, ma, mb, stat, gap, partition, request)
        ir.warm_finder(page.view(request), table)   # their thumbnails, behind the visitor's own
        return table

    page.refresh["finder"] = Refresh(find_and_warm, [page.mode, metric_a, metric_b, ff_stat, ff_gap, part], [finder])
    for ev in (ff_stat.change, ff_gap.change):
        page.on(ev, find_and_warm, page.refresh["finder"].inputs, page.refresh["finder"].outputs)

    # -- a metric picked: one event redraws the SEG's view and the failure finder (two would each pay
    # Gradio's per-event work). Changes of the pickers' values by the page itself (a live metric
    # selected) redraw through page.refresh (ts2viz.ui.page.layout).
    def finder_follows(which: str, stat, gap) -> bool:
        # the finder ranks by metric A; by B too only for a gap, or for questions (the first of A, B with them)
        return which == "a" or bool(gap) or stat == "questions"

    def metric_picked(which: str):
        def metric_chosen(mode, sid, ma, mb, fmt, stat, gap, partition, request: gr.Request):
            view = show_seg(mode, sid, ma, mb, fmt, request, node_choices=False)
            table = (find_and_warm(mode, ma, mb, stat, gap, partition, request) if finder_follows(which, stat, gap)
                     else gr.skip())
            return (*view, table)
        return metric_chosen

    for which, picker in (("a", metric_a), ("b", metric_b)):
        page.on(picker.input, metric_picked(which), seg_in + [ff_stat, ff_gap, part], seg_out + [finder])
    page.download(finder_csv, finder_csv_file, page.refresh["finder"].inputs)
    page.open_seg_from_table(finder)
    return nuisance
