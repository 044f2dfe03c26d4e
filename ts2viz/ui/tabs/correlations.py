"""The Correlations tab: metric x metric heatmaps of per-SEG ord or sep, and the scatter of two metrics.

The heatmaps show correlation and which orderings are significant; the per-SEG scatter of two metrics
comes with their paired comparison.
"""
from __future__ import annotations

import gradio as gr

from ... import figures
from ...display import SIGNED_SEP_NOTE
from ..callbacks import common as cb_common, correlations as cb_corr
from ..callbacks.explorer import picking as cb_explorer_picking
from ..callbacks.uncertainty import comparison as uc_comparison, significance as uc_significance
from ..glue.events import Page, Refresh
from ..glue.plots import page_plot, plot_cached
from ..glue.tables import table_value
from .board import tidy_families
from .explorer import STATS, default_metrics


def build(page: Page) -> None:
    """Build the Correlations tab and wire its events.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    """
    app = page.app
    m_a, m_b = default_metrics(app)
    choices = cb_common.metric_choices(app)
    with gr.Tab("Correlations", id="corr", elem_id="tab-corr"):
        with gr.Row():
            stat = gr.Radio(STATS, value="ord", label="Per-SEG statistic", info=SIGNED_SEP_NOTE,
                            elem_id="corr-stat")
            part = gr.Radio(cb_explorer_picking.partitions(app), value=cb_common.ALL, label="SEGs")
            method = gr.Radio(["pearson", "spearman"], value="pearson", label="Correlation")
            fam = gr.Dropdown([cb_common.ALL] + cb_common.families(app), value=[cb_common.ALL], multiselect=True, label="Metric family")
        with gr.Row(equal_height=False):
            heat = gr.Plot(elem_id="heatmap", show_label=False)
            sig = gr.Plot(elem_id="sig-heatmap", show_label=False)
        sig_note = gr.Markdown(elem_id="sig-note", elem_classes="stat-note")
        with gr.Row():
            x = gr.Dropdown(choices, value=m_a, label="Cell: metric (x)", elem_id="corr-x")
            y = gr.Dropdown(choices, value=m_b or m_a, label="Cell: metric (y)", elem_id="corr-y")
        with gr.Row():
            with gr.Column():
                pair_plot = gr.Plot(elem_id="pair-plot", show_label=False)
                pair_cmp = gr.Markdown(elem_id="pair-compare")
            with gr.Column():
                pair_tb = gr.Dataframe(interactive=False, max_height=420, elem_id="pair-table",
                                       label="SEGs, largest disagreement first (ord, sep, signed sep, "
                                             "kendall x100) · click a row to open it")
                pair_csv = gr.Button("Download CSV", size="sm", elem_id="pair-csv")
    page.metric_pickers += [x, y]

    def corr(mode, stat_v, part_v, method_v, fam_v, x_v, y_v, fmt, request: gr.Request):
        view = page.view(request)
        if not view.metrics:
            return (gr.skip(),) * 6
        # a picker left empty (the first metric of a session came by live scoring or an upload, which sets
        # only the explorer's metric): the defaults the tab starts with, not "choose a metric" (issue 40 item 9)
        d_a, d_b = default_metrics(view)
        x_v = x_v or d_a
        y_v = y_v or d_b or x_v
        plot = plot_cached(view, fmt)
        fam_key = tuple(sorted(map(str, fam_v or [])))
        every = view.metrics
        heat_v = plot(("corr", mode, stat_v, part_v, method_v, fam_key, x_v, y_v), every,
                      lambda: cb_corr.corr_figure(view, mode, stat_v, part_v, fam_v, method_v, selected=(x_v, y_v)))
        pts = view.memo(("pairs", mode, stat_v, x_v, y_v, part_v), [x_v, y_v],
                        lambda: cb_corr.pair_points(view, mode, stat_v, x_v, y_v, part_v))
        pair_v = plot(("pair", mode, stat_v, x_v, y_v, part_v), [x_v, y_v],
                      lambda: figures.pair_scatter(pts, x_name=x_v, y_name=y_v, stat=stat_v))
        table = view.memo(("pair_table", mode, stat_v, x_v, y_v, part_v), [x_v, y_v],
                          lambda: table_value(cb_corr.pair_table(pts, x_v, y_v)))
        shown = cb_common.metric_choices(view, fam_v)

        def sig_parts():
            pw = uc_significance.significance(view, mode, stat_v, part_v, fam_v)
            return (page_plot(lambda: uc_significance.significance_figure(view, mode, stat_v, part_v, fam_v, pw=pw), fmt),
                    uc_significance.significance_note(pw))

        sig_v, sig_md = view.memo(("sig", fmt, mode, stat_v, part_v, fam_key), shown, sig_parts)
        cmp_md = view.memo(("pair_cmp", mode, stat_v, x_v, y_v, part_v), [x_v, y_v],
                           lambda: uc_comparison.pair_comparison_md(uc_comparison.pair_comparison(view, mode, stat_v, x_v, y_v, part_v),
                                                         stat_v))
        return heat_v, sig_v, sig_md, pair_v, table, cmp_md

    def pairs_csv_file(mode, stat_v, part_v, x_v, y_v, request: gr.Request):
        view = page.view(request, create=True)
        return cb_common.table_csv(view, cb_corr.pair_points(view, mode, stat_v, x_v, y_v, part_v), "pairs")

    page.refresh["corr"] = Refresh(corr, [page.mode, stat, part, method, fam, x, y, page.fmt],
                                   [heat, sig, sig_note, pair_plot, pair_tb, pair_cmp])
    for ev in (stat.change, part.change, method.change, fam.change, x.change, y.change):
        page.on(ev, corr, page.refresh["corr"].inputs, page.refresh["corr"].outputs)
    tidy_families(page, fam)
    page.download(pair_csv, pairs_csv_file, [page.mode, stat, part, x, y])
    page.open_seg_from_table(pair_tb)
