"""The SEG explorer tab: pick a SEG (search, partition, failure finder), its graph, node gallery,
per-walk Spearman plots with the walk table, node CDFs with KS distances."""
from __future__ import annotations

import gradio as gr

from ...display import SIGNED_SEP_SHORT
from .. import callbacks as cb
from ..glue import Page, Refresh, dropdown, plot_value, safe

STATS = [("Ord (Spearman)", "ord"), ("Sep (KS)", "sep"), ("Signed sep", "signed_sep")]

# A click on a node card reports the node's label as the value of a select event.
GRAPH_JS = """
const pick = (card) => trigger('select', {index: 0, value: card.dataset.node});
element.addEventListener('click', (e) => {
  const card = e.target.closest('[data-node]');
  if (card) { pick(card); }
});
element.addEventListener('keydown', (e) => {
  const card = e.target.closest ? e.target.closest('[data-node]') : null;
  if (card && (e.key === 'Enter' || e.key === ' ')) { e.preventDefault(); pick(card); }
});
"""


def default_metrics(app) -> tuple[str | None, str | None]:
    """The metrics shown first: CLIPScore (or the first loaded) against a strong QA metric (or the next)."""
    metrics = app.metrics
    a = "CLIPScore" if "CLIPScore" in metrics else (metrics[0] if metrics else None)
    b = next((m for m in ("TIFA-GPT4V", "DSG-GPT4V") if m in metrics), None)
    if b is None and len(metrics) > 1:
        b = next(m for m in metrics if m != a)
    return a, b


def build(page: Page) -> None:
    app = page.app
    m_a, m_b = default_metrics(app)
    choices = cb.metric_choices(app)
    with gr.Tab("SEG explorer", id="seg", elem_id="tab-seg"):
        with gr.Row():
            with gr.Column(scale=1, min_width=360, elem_classes="sidebar"):
                search = gr.Textbox(label="Search prompts (or type a SEG id)", placeholder="e.g. teddy bear",
                                    max_lines=1, elem_id="seg-search")
                part = gr.Radio(cb.partitions(app), value=cb.ALL, label="Partition")
                seg_dd = gr.Dropdown(cb.seg_options(app), value=next(iter(app.dataset.segs)), label="SEG",
                                     elem_id="seg-pick")
                metric_a = gr.Dropdown(choices, value=m_a, label="Metric", elem_id="metric-a")
                metric_b = gr.Dropdown(choices, value=m_b, label="Compare with", elem_id="metric-b")
                with gr.Accordion("Failure finder", open=True, elem_id="finder"):
                    with gr.Row():
                        ff_stat = gr.Radio(STATS, value="ord", label="Rank by", scale=1, info=SIGNED_SEP_SHORT)
                        ff_gap = gr.Checkbox(label="by gap to the 'compare with' metric", value=False, scale=1)
                    finder = gr.Dataframe(interactive=False, max_height=360, elem_id="finder-table",
                                          label="Worst first, values x100 · click a row to open", wrap=True)
                    finder_csv = gr.DownloadButton("Download CSV", size="sm")
            with gr.Column(scale=4):
                header = gr.Markdown(elem_id="seg-header", elem_classes="seg-header")
                graph = gr.HTML(elem_id="seg-graph", js_on_load=GRAPH_JS, min_height=200)
                with gr.Row(equal_height=True):
                    node_dd = gr.Dropdown([], label="Node", scale=1, elem_id="node-pick")
                    walk_dd = gr.Dropdown([], label="Highlight a walk", scale=3, elem_id="walk-pick")
                node_md = gr.Markdown(elem_id="node-title")
                gal = gr.Gallery(label="Node images", columns=6, height=380, object_fit="contain",
                                 elem_id="node-gallery", allow_preview=True, preview=False)
                with gr.Tabs():
                    with gr.Tab("Walks (ordering)"):
                        with gr.Row():
                            walk_a = gr.Plot(elem_id="walk-plot-a", show_label=False)
                            walk_b = gr.Plot(elem_id="walk-plot-b", show_label=False)
                        walks_tb = gr.Dataframe(interactive=False, max_height=320, elem_id="walk-table",
                                                label="Walks, worst ord first, values x100 · click a row to "
                                                      "highlight")
                        walks_csv = gr.DownloadButton("Download CSV", size="sm")
                    with gr.Tab("Nodes (separation)"):
                        with gr.Row():
                            cdf_a = gr.Plot(elem_id="cdf-plot-a", show_label=False)
                            cdf_b = gr.Plot(elem_id="cdf-plot-b", show_label=False)
                        ks_tb = gr.Dataframe(interactive=False, max_height=320, elem_id="ks-table",
                                             label="KS distance of adjacent node pairs x100, lowest signed KS "
                                                   "first (negative: the node with more errors scores "
                                                   "higher); at = where it is attained, Δmean = mean gap "
                                                   "(scores)")
                        ks_csv = gr.DownloadButton("Download CSV", size="sm")
    page.seg, page.search = seg_dd, search
    page.metric_pickers += [metric_a, metric_b]

    # -- the whole SEG view
    seg_out = [header, graph, node_dd, node_md, gal, walk_dd, walk_a, walk_b, walks_tb, walks_csv,
               cdf_a, cdf_b, ks_tb, ks_csv]

    def show_seg(mode, sid, ma, mb, fmt):
        if sid in (None, ""):
            return tuple(gr.skip() for _ in seg_out)
        v = cb.seg_view(app, mode, sid, ma, mb)
        return (v["header"], v["graph"], dropdown(v["nodes"], v["node"]), v["node_title"], v["gallery"],
                dropdown(v["walk_choices"], v["walk"]), plot_value(v["walk_fig_a"], fmt),
                plot_value(v["walk_fig_b"], fmt), v["walk_table"], cb.table_csv(app, v["walk_table"], "walks"),
                plot_value(v["cdf_a"], fmt), plot_value(v["cdf_b"], fmt), v["ks_table"],
                cb.table_csv(app, v["ks_table"], "ks"))

    page.refresh["seg"] = Refresh(show_seg, [page.mode, seg_dd, metric_a, metric_b, page.fmt], seg_out)
    seg_dd.change(safe(show_seg), page.refresh["seg"].inputs, seg_out)
    for ev in (metric_a.input, metric_b.input):
        ev(safe(show_seg), page.refresh["seg"].inputs, seg_out)

    # -- picking a SEG
    def filter_segs(query, partition, current):
        opts, value = cb.seg_choice(app, query, partition, current)
        if value is None:
            gr.Info("No SEG matches that search")
        return dropdown(opts, value)

    search.submit(safe(filter_segs), [search, part, seg_dd], seg_dd)
    search.change(safe(filter_segs), [search, part, seg_dd], seg_dd, trigger_mode="always_last",
                  show_progress="hidden")
    part.change(safe(filter_segs), [search, part, seg_dd], seg_dd)

    # -- nodes and walks
    def node_chosen(mode, sid, ma, mb, node, walk):
        v = cb.select_node(app, mode, sid, ma, mb, node, walk)
        return v["graph"], v["gallery"], v["node_title"]

    node_dd.input(safe(node_chosen), [page.mode, seg_dd, metric_a, metric_b, node_dd, walk_dd],
                  [graph, gal, node_md])

    def node_clicked(mode, sid, ma, mb, walk, evt: gr.SelectData):
        if not evt.value:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        graph_v, gal_v, title = node_chosen(mode, sid, ma, mb, evt.value, walk)
        return graph_v, gal_v, title, gr.Dropdown(value=evt.value)

    graph.select(safe(node_clicked), [page.mode, seg_dd, metric_a, metric_b, walk_dd], [graph, gal, node_md, node_dd])

    def walk_chosen(mode, sid, ma, mb, walk, node, fmt):
        v = cb.select_walk(app, mode, sid, ma, mb, walk, node)
        return v["graph"], plot_value(v["walk_fig_a"], fmt), plot_value(v["walk_fig_b"], fmt)

    walk_dd.input(safe(walk_chosen), [page.mode, seg_dd, metric_a, metric_b, walk_dd, node_dd, page.fmt],
                  [graph, walk_a, walk_b])

    def walk_row(mode, sid, ma, mb, node, fmt, table, evt: gr.SelectData):
        w = cb.walk_from_row(table, evt.index[0])
        if w is None:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        return (*walk_chosen(mode, sid, ma, mb, w, node, fmt), gr.Dropdown(value=w))

    walks_tb.select(safe(walk_row), [page.mode, seg_dd, metric_a, metric_b, node_dd, page.fmt, walks_tb],
                    [graph, walk_a, walk_b, walk_dd])

    # -- failure finder
    def find(mode, ma, mb, stat, gap, partition):
        t = cb.failure_finder(app, mode, ma, stat, mb if gap else None, partition)
        return cb.shown(t), cb.table_csv(app, t, "failures")

    page.refresh["finder"] = Refresh(find, [page.mode, metric_a, metric_b, ff_stat, ff_gap, part],
                                     [finder, finder_csv])
    for ev in (ff_stat.change, ff_gap.change, metric_a.change, metric_b.change):
        ev(safe(find), page.refresh["finder"].inputs, page.refresh["finder"].outputs)
    page.open_seg_from_table(finder)
