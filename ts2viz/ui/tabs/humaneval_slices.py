"""The Human ratings tab's slices, agreement and triage views (issue 38), mounted by its builder.

One section, open on demand: a reliable-only switch for every view in it, the metric x slice heatmap of
a tag family (click a cell: its images), Krippendorff's alpha per rating set and T2I model, and the
triage lists (click a row: that image's prompt, ratings and scores). Callbacks:
:mod:`ts2viz.ui.callbacks.humaneval_slices`.
"""
from __future__ import annotations

import gradio as gr

from ..callbacks.humaneval import sets as gc_sets
from ..callbacks import humaneval_slices as hs
from ..glue.errors import Selection
from ..glue.events import Page
from ..glue.plots import page_plot
from ..glue.tables import table_value
from ..serving.jobs import GOLD

#: a click on a heatmap cell writes ``slice | metric`` (the cell's customdata) into the cell box and
#: submits it; attached to the plotly element after each redraw (polled), once per element
CELL_JS = """() => {
  let tries = 0;
  const attach = () => {
    const el = document.querySelector('#gold-slices-heatmap .js-plotly-plot');
    if (el && el.on && !el._sliceClick) {
      el._sliceClick = true;
      el.on('plotly_click', (ev) => {
        const pt = ev && ev.points && ev.points[0];
        const box = document.querySelector('#gold-slices-cell textarea, #gold-slices-cell input');
        if (!pt || !box || !Array.isArray(pt.customdata)) return;
        box.value = pt.customdata[0] + '""" + hs.CELL_SEP + """' + pt.customdata[1];
        box.dispatchEvent(new Event('input', {bubbles: true}));
        for (const t of ['keydown', 'keypress'])
          box.dispatchEvent(new KeyboardEvent(t, {key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true}));
      });
    }
    if (tries++ < 40 && !(el && el._sliceClick)) setTimeout(attach, 250);
  };
  attach();
}"""


def build(page: Page, gold: gr.Radio, rs: gr.Dropdown) -> None:
    """Build the section inside the Human ratings tab and wire it to the tab's rated-set and rating-set pickers.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page.
    gold : gradio.Radio
        The tab's rated-set picker.
    rs : gradio.Dropdown
        The tab's rating-set picker.
    """
    first = gc_sets.gold_sets()[0]
    with gr.Accordion("Slices, raters' agreement and triage (Gecko: one slice is not enough)", open=False,
                      elem_id="gold-slices") as acc:
        reliable = gr.Checkbox(False, label=f"Reliable prompts only (Gecko: rating variance below "
                                            f"{hs.RELIABLE_X:g} x the largest, every model and rating set)",
                               elem_id="gold-reliable")
        with gr.Row():
            family = gr.Dropdown(hs.families(first), value=hs.families(first)[0], label="Tag family (slices)",
                                 elem_id="gold-slices-family")
            stat = gr.Dropdown(list(hs.HEATMAP_STATS), value=hs.HEATMAP_STATS[0], label="Statistic",
                               elem_id="gold-slices-stat")
        note = gr.Markdown(elem_id="gold-slices-note", elem_classes="stat-note")
        heat = gr.Plot(elem_id="gold-slices-heatmap", show_label=False)
        cell = gr.Textbox(label=f"Cell (click the heatmap, or type slice{hs.CELL_SEP}metric and press Enter)",
                          max_lines=1, elem_id="gold-slices-cell")
        cell_md = gr.Markdown(elem_id="gold-slices-cell-note")
        cell_rows = gr.Dataframe(interactive=False, max_height=360, elem_id="gold-slices-rows",
                                 label="Images of the cell", visible=False)
        agree_note = gr.Markdown(elem_id="gold-agreement-note", elem_classes="stat-note")
        agree = gr.Dataframe(interactive=False, elem_id="gold-agreement",
                             label="Krippendorff's alpha (interval) [95% interval over prompts] per rating set")
        metric = gr.Dropdown([], label="Triage: metric", elem_id="gold-triage-metric")
        tri_m = gr.Dataframe(interactive=False, max_height=360, elem_id="gold-triage-metric-table",
                             label="Where the metric and the raters disagree most (click a row)")
        tri_r = gr.Dataframe(interactive=False, max_height=360, elem_id="gold-triage-raters",
                             label="Where the raters disagree among themselves (click a row)")
        tri_md = gr.Markdown(elem_id="gold-triage-detail")
        tri_scores = gr.Dataframe(interactive=False, max_height=300, elem_id="gold-triage-scores",
                                  label="Scores of this image", visible=False)
        tri_pic = gr.Image(visible=False, interactive=False, show_label=False, elem_id="gold-triage-picture",
                           height=300)

    def families_of(gold_v):
        fams = hs.families(gold_v)
        return gr.update(choices=fams, value=fams[0])

    def rating_set(gold_v, rs_v):        # the tab's picker may still hold the previous set's
        return rs_v if rs_v in gc_sets.rating_sets(gold_v) else gc_sets.rated(gold_v).default_rating_set

    def slices_view(gold_v, rs_v, fam_v, stat_v, rel_v):
        rs_v = rating_set(gc_sets.check_gold(gold_v), rs_v)
        if fam_v not in hs.families(gold_v):
            fam_v = hs.families(gold_v)[0]
        hs.warm(gold_v, rs_v)                  # the other families and switch position, ahead of the clicks
        fig = page_plot(lambda: hs.slice_figure(gold_v, rs_v, fam_v, stat_v, bool(rel_v)))
        return hs.slice_note(gold_v, rs_v, fam_v, bool(rel_v)), fig, "", "", gr.update(value=None, visible=False)

    def cell_view(gold_v, rs_v, fam_v, cell_v, rel_v):
        rs_v = rating_set(gc_sets.check_gold(gold_v), rs_v)
        md, rows = hs.slice_rows(gold_v, rs_v, fam_v, cell_v, bool(rel_v))
        return md, gr.update(value=table_value(rows), visible=True)

    def agreement_view(gold_v, rel_v):
        gc_sets.check_gold(gold_v)
        return hs.reliable_note(gold_v, bool(rel_v)), table_value(hs.agreement_table(gold_v, bool(rel_v)))

    def triage_view(gold_v, rs_v, metric_v, rel_v):
        metrics = list(gc_sets.rated(gc_sets.check_gold(gold_v)).metrics)
        rs_v = rating_set(gold_v, rs_v)
        if metric_v not in metrics:
            metric_v = metrics[0] if metrics else None
        top = table_value(hs.triage_metric(gold_v, rs_v, metric_v, bool(rel_v))) if metric_v else None
        return (gr.update(choices=metrics, value=metric_v), top,
                table_value(hs.triage_raters(gold_v, rs_v, bool(rel_v))))

    def triage_row(gold_v, table, evt: Selection):
        md, scores, path = hs.triage_detail(gold_v, table, evt.index[0] if evt.index else None)
        pixels = None
        if path is not None:                   # only a file inside the operator's folder
            from PIL import Image

            with Image.open(path) as im:
                pixels = im.convert("RGB")
        return (md, gr.update(value=table_value(scores), visible=len(scores) > 0),
                gr.update(value=pixels, visible=pixels is not None))

    s_in, s_out = [gold, rs, family, stat, reliable], [note, heat, cell, cell_md, cell_rows]
    a_in, a_out = [gold, reliable], [agree_note, agree]
    t_in, t_out = [gold, rs, metric, reliable], [metric, tri_m, tri_r]

    def wire_slices(trigger):
        page.on(trigger, slices_view, s_in, s_out, lane=GOLD, errors_to=note,
                trigger_mode="always_last").then(None, None, None, js=CELL_JS)

    dep = page.on(gold.change, families_of, [gold], [family], lane=GOLD)
    wire_slices(dep.success)
    for ev in (acc.expand, rs.change, family.input, stat.change, reliable.change):
        wire_slices(ev)
    for ev in (acc.expand, gold.change, reliable.change):
        page.on(ev, agreement_view, a_in, a_out, lane=GOLD, errors_to=agree_note, trigger_mode="always_last")
    for ev in (acc.expand, gold.change, rs.change, metric.input, reliable.change):
        page.on(ev, triage_view, t_in, t_out, lane=GOLD, errors_to=tri_md, trigger_mode="always_last")
    page.on(cell.submit, cell_view, [gold, rs, family, cell, reliable], [cell_md, cell_rows], errors_to=cell_md,
            lane=GOLD)
    for tb in (tri_m, tri_r):
        page.on(tb.select, triage_row, [gold, tb], [tri_md, tri_scores, tri_pic], errors_to=tri_md, lane=GOLD)
