"""The Leaderboard tab's "Slices of SEGs" section (issue 38): pick a SEG tag family, see the heatmap and the table.

An accordion drawn when opened, and again when the mode, the family or the statistic changes while it is
open: the metric x slice heatmap of Ord (or signed Sep), non-significant cells marked, and the leaderboard's
rows per slice with their intervals. Callbacks: :mod:`ts2viz.ui.callbacks.board_slices`.
"""
from __future__ import annotations

import gradio as gr

from ..callbacks import board_slices as cb
from ..glue.events import Page, Refresh
from ..glue.plots import page_plot
from ..glue.tables import table_value


def build_board_part(page: Page) -> None:
    """Build the section inside the Leaderboard tab and wire it to the page's mode.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    """
    fams = cb.families(page.app)
    with gr.Accordion("Slices of SEGs: the leaderboard per partition or SEG tag (one slice is not enough)",
                      open=False, elem_id="board-slices") as acc:
        with gr.Row():
            family = gr.Dropdown(fams, value=fams[0], label="SEG tag family (slices)", elem_id="board-slices-family")
            stat = gr.Dropdown(list(cb.HEATMAP_STATS), value=cb.HEATMAP_STATS[0], label="Heatmap statistic",
                               elem_id="board-slices-stat")
        note = gr.Markdown(elem_id="board-slices-note", elem_classes="stat-note")
        heat = gr.Plot(elem_id="board-slices-heatmap", show_label=False)
        table = gr.Dataframe(interactive=False, max_height=480, elem_id="board-slices-table",
                             label="The leaderboard per slice (x100, 95% intervals over SEGs)")
    opened = gr.State(False)

    def draw(mode, family_v, stat_v, is_open, fmt, request: gr.Request):
        if not is_open:
            return gr.skip(), gr.skip(), gr.skip()
        view = page.view(request)
        fig = page_plot(lambda: cb.slices_figure(view, mode, family_v, stat_v), fmt)
        return (cb.slices_note(view, mode, family_v, stat_v), fig,
                table_value(cb.slices_table(view, mode, family_v)))

    inputs = [page.mode, family, stat, opened, page.fmt]
    page.refresh["board-slices"] = Refresh(draw, inputs, [note, heat, table])

    def slices_opened(mode, family_v, stat_v, fmt, request: gr.Request):
        return (True, *draw(mode, family_v, stat_v, True, fmt, request))

    page.on(acc.expand, slices_opened, [page.mode, family, stat, page.fmt], [opened, note, heat, table],
            errors_to=note)
    for ev in (page.mode.change, family.change, stat.change):
        page.on(ev, draw, inputs, [note, heat, table], errors_to=note, trigger_mode="always_last")
