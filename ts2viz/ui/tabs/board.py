"""The Leaderboard tab: the table, its filters and sort order, the Ord-vs-Sep scatter, slices of SEGs, score uploads."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import gradio as gr

from ... import figures
from ...display import SIGNED_SEP_NOTE, md_text
from ..callbacks import common as cb_common, board as cb_board
from ..callbacks.uncertainty import resampled as uc_bootstrap, intervals as uc_intervals
from ..glue.events import Page, Refresh
from ..glue.plots import build_plain, page_plot
from ..glue.tables import empty_table
from . import board_slices as board_slices_ui, nuisance as nuisance_ui

SORT_CHOICES = [("Ord · Avg", "ord_avg"), ("Sep · Avg", "sep_avg"), ("Signed sep · Avg", "signed_sep_avg"),
                ("Ord · Synth", "ord_synth"),
                ("Sep · Synth", "sep_synth"), ("Ord · Nat", "ord_nat"), ("Sep · Nat", "sep_nat"),
                ("Ord · Real", "ord_real"), ("Sep · Real", "sep_real"), ("Metric name", "metric")]


@dataclass
class BoardTab:
    """What the page wires across tabs from the leaderboard: its family filter and its scores upload.

    Parameters
    ----------
    families : gradio.Dropdown
        The family filter.
    upload_button : gradio.Button
        The upload's button.
    upload_inputs : list
        The upload's inputs (file, lower-is-better names).
    upload_message : gradio.Markdown
        Where the upload's status (or error) is shown.
    """

    families: Any
    upload_button: Any
    upload_inputs: list
    upload_message: Any


def board_view(app, mode: str, families, sort_by: str, order: str, fmt: str, table=None, *,
               whiskers: bool = True, table_ci: bool = False):
    """Table, scatter and interval note of the leaderboard for the current choices.

    Built once per choice for every session that sees the same metrics. The bootstrap behind the intervals
    is drawn the first time either is asked for in a mode, then reused.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    families : list of str or None
        The family filter.
    sort_by : str
        The column to sort by (default ``ord_avg``).
    order : str
        ``"worst first"`` or best first.
    fmt : str
        The figures' download format.
    table : gradio.Dataframe or None, default None
        With it, the styled table is converted to its value once, not per request.
    whiskers : bool, default True
        95 % bootstrap intervals on the scatter.
    table_ci : bool, default False
        Intervals in the table's cells and a rank column (:mod:`ts2viz.ui.callbacks.uncertainty`).

    Returns
    -------
    table : pandas.io.formats.style.Styler or dict
        The styled table (its value with ``table``).
    scatter : gradio.components.plot.PlotData or None
        The Ord-vs-Sep scatter.
    note : str
        HTML: the metrics' names, and the intervals' note.
    """
    fam = tuple(sorted(map(str, families or [])))
    whiskers, table_ci = bool(whiskers), bool(table_ci)
    key = ("board", mode, fam, sort_by or "ord_avg", order != "worst first", fmt, whiskers, table_ci)

    def build():
        board = cb_board.leaderboard(app, mode, families, sort_by or "ord_avg", order != "worst first")
        ci = uc_intervals.board_intervals(app, mode, board, sort_by) if (whiskers or table_ci) and len(board) else None
        scatter = page_plot(lambda: figures.ord_sep_scatter(
            ci if whiskers and ci is not None else board, title=f"Ord vs Sep ({mode} mode)",
            error_bars=whiskers and ci is not None), fmt)
        styled = uc_intervals.style_board_intervals(ci) if table_ci and ci is not None else cb_board.style_leaderboard(board)
        # first the names, shown where the plot's labels are not (a phone), right under the plot
        note = cb_board.scatter_names_html(board)
        note += f"<small>{uc_intervals.interval_note(app, mode, ci, ranks=table_ci)}</small>" if ci is not None else ""
        if not len(board):
            return empty_table(cb_common.NO_SCORES), scatter, note
        return (table.postprocess(styled).model_dump() if table is not None else styled,
                scatter, note)

    return app.memo(key, app.metrics, build)


#: what the leaderboard's columns mean (issue 21 item 4: a newcomer met Ord, Sep, dir and segs undefined)
BOARD_LEGEND = (
    "<small>**How to read it.** **Ord** (ordering): Spearman correlation between a metric's scores and the "
    "error count along each walk (a path from the prompt-faithful node to nodes with more errors), averaged "
    "over walks and SEGs; 100 = scores always fall as errors rise. **Sep** (separation): Kolmogorov–Smirnov "
    "distance between the score distributions of adjacent nodes; 100 = the nodes' scores never overlap. "
    "**Avg** / **Synth** / **Nat** / **Real**: all SEGs, or one partition: Synth (an error graph designed from a "
    "prompt, images generated for its nodes), Nat (stock photos placed in a constructed error graph), Real (many "
    "images of one prompt with real text-to-image errors, sorted into a graph). **signed Sep**: "
    + SIGNED_SEP_NOTE.split(": ", 1)[1] + " **dir**: ↑ higher scores mean a more faithful image, "
    "↓ lower ones do (the metric is turned round before Ord and Sep). **SEGs**: SEGs on which the metric has "
    "an Ord value; in paper mode the averages leave out the last TS2 SEG (id 164) as the published code does, "
    "so a metric scored on all 165 SEGs is averaged over 164 (spec mode keeps all). The CSV keeps the "
    "columns' plain names (`ord_avg`, `signed_sep_avg`, `segs`, ...).</small>")


def build(page: Page) -> BoardTab:
    """Build the Leaderboard tab and wire its events (filters, sort, intervals, significance, cost, downloads).

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).

    Returns
    -------
    BoardTab
        What the page wires across tabs.
    """
    app = page.app
    with gr.Tab("Leaderboard", id="board", elem_id="tab-board"):
        with gr.Row(equal_height=False, elem_classes="board-controls"):
            fam_f = gr.Dropdown([cb_common.ALL] + cb_common.families(app), value=[cb_common.ALL], multiselect=True,
                                label="Metric family", scale=2, elem_id="family-filter")
            sort_by = gr.Dropdown(SORT_CHOICES, value="ord_avg", label="Sort by", scale=1, elem_id="sort-by")
            order = gr.Radio(["best first", "worst first"], value="best first", label="Order", scale=1)
            ci_table = gr.Checkbox(value=False, label="95% intervals and rank intervals in the table and CSV",
                                   elem_id="board-ci-table", scale=1, min_width=220)
            csv = gr.Button("Download CSV", scale=0, min_width=150, size="md", elem_id="board-csv",
                            elem_classes="dl-btn")
        first = cb_board.style_leaderboard(cb_board.leaderboard(app, "paper")) if app.metrics else empty_table(cb_common.NO_SCORES)
        table = gr.Dataframe(first, label="Leaderboard, values x100 as in the paper (best value per column "
                                          "highlighted; the CSV holds fractions)", interactive=False,
                             elem_id="leaderboard", max_height=620, wrap=False, pinned_columns=1)
        gr.Markdown(BOARD_LEGEND, elem_classes="stat-note", elem_id="board-legend")
        ci_plot = gr.Checkbox(value=True, label="show 95% intervals on the scatter", elem_id="board-ci-plot")
        # filled by the page's load event: a figure in the initial page makes the browser load plotly.js
        # (1.3 MB) before it shows anything
        scatter = gr.Plot(label="Ord vs Sep", elem_id="board-scatter")
        ci_note = gr.Markdown(elem_id="board-ci-note", elem_classes="stat-note")
        sig_on = gr.Checkbox(value=False, label="significance clusters and pairwise accuracy (permutation tests, "
                             "tie-calibrated accuracy with chance baselines)", elem_id="board-significance")
        sig_panel = gr.HTML(elem_id="board-significance-panel")
        cost_parts = build_cost_view(page)
        nuisance_ui.build_board_part(page)
        board_slices_ui.build_board_part(page)
        with gr.Accordion("Add a scores file (CSV or Parquet: file_name + one column per metric)", open=False):
            with gr.Row():
                up_file = gr.File(label="Scores file", file_types=[".csv", ".parquet"], scale=2)
                with gr.Column(scale=1):
                    up_lib = gr.Textbox(label="Lower-is-better metrics (comma-separated)", max_lines=1)
                    up_btn = gr.Button("Add scores", variant="primary")
            up_msg = gr.Markdown()

    def redraw(mode, families, sort_by_v, order_v, fmt, whiskers, table_ci, significance, request: gr.Request):
        view = page.view(request)
        out = board_view(view, mode, families, sort_by_v, order_v, fmt, table, whiskers=whiskers, table_ci=table_ci)
        return (*out, significance_panel(view, mode, families, significance, sort_by_v))

    def board_csv(mode, families, sort_by_v, order_v, table_ci, request: gr.Request):
        view = page.view(request, create=True)
        if table_ci:
            return uc_intervals.leaderboard_ci_csv(view, mode, families, sort_by_v)
        return cb_board.leaderboard_csv(view, mode, families, sort_by_v or "ord_avg", order_v != "worst first")

    page.refresh["board"] = Refresh(redraw, [page.mode, fam_f, sort_by, order, page.fmt, ci_plot, ci_table, sig_on],
                                    [table, scatter, ci_note, sig_panel])
    for ev in (fam_f.change, sort_by.change, order.change, ci_plot.change, ci_table.change, sig_on.change):
        page.on(ev, redraw, page.refresh["board"].inputs, page.refresh["board"].outputs)
    page.download(csv, board_csv, [page.mode, fam_f, sort_by, order, ci_table])
    page.family_pickers.append(fam_f)
    tidy_families(page, fam_f)
    return BoardTab(fam_f, up_btn, [up_file, up_lib], up_msg)


def build_cost_view(page: Page):
    """The cost view's components (inside the leaderboard) and its draw event.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).

    Returns
    -------
    tuple
        The cost text box, the plot and the note.
    """
    from ..views.cost_view import CELLS, cost_view
    from ...cost import COST_UNITS

    with gr.Accordion("Cost: quality against what a metric costs (Pareto front)", open=False,
                      elem_id="board-cost"):
        with gr.Row():
            text = gr.Textbox(label="Cost per metric (name=cost, separated by commas)", lines=2, scale=3,
                              placeholder="CLIPScore=0.02, ALIGNScore=0.03, TIFA-GPT4V=3.5", elem_id="cost-text")
            with gr.Column(scale=1):
                unit = gr.Radio(list(COST_UNITS), value=COST_UNITS[0], label="Cost is")
                cell = gr.Radio(list(CELLS), value="ord_avg", label="Quality")
                go = gr.Button("Draw the front", elem_id="cost-draw")
        plot = gr.Plot(elem_id="cost-plot")
        note = gr.Markdown(elem_id="cost-note")

    def draw(mode, text_v, unit_v, cell_v, fmt, request: gr.Request):
        fig, md = build_plain(lambda: cost_view(page.view(request), mode, text_v, unit_v, cell_v))
        return page_plot(lambda: fig, fmt), md

    page.on(go.click, draw, [page.mode, text, unit, cell, page.fmt], [plot, note], errors_to=note)
    return text, plot, note


def significance_panel(view, mode: str, families, on: bool, sort_by: str = "ord_avg") -> str:
    """The significance clusters and pairwise accuracy of the metrics the board shows.

    Clusters by the sort column when it is a statistic, else Ord · Avg.

    Parameters
    ----------
    view : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    families : list of str or None
        The family filter.
    on : bool
        Whether the panel is shown.
    sort_by : str, default "ord_avg"
        The board's sort column.

    Returns
    -------
    str
        The panel's HTML (empty when off).
    """
    if not on:
        return ""
    from ..views.significance_view import significance_html

    board = cb_board.leaderboard(view, mode, families)
    cell = sort_by if sort_by in cb_board.BOARD_STATS else "ord_avg"
    return significance_html(view, mode, [str(m) for m in board["metric"]], cell)


def tidy_families(page: Page, picker) -> None:
    """A family filter drops "All" when a family is picked (and the families when "All" is), at once in the page.

    Its change event then redraws as usual (:func:`ts2viz.ui.callbacks.common.family_selection`).

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    picker : gradio.Dropdown
        The family filter.
    """

    def tidy(chosen):
        new = cb_common.family_selection(chosen)
        return gr.skip() if list(chosen or []) == new else gr.update(value=new)

    page.on(picker.input, tidy, picker, picker, queue=False, show_progress="hidden")


def add_scores(page: Page, path, lower_is_better: str, request) -> str:
    """Load an uploaded scores file into the session's workspace (the upload button's event, in its own lane).

    The session's own meta-metrics and leaderboard bootstrap are computed here, in the upload's queue
    group, not by the redraws that follow it in the views' queue, where every other visitor's view would
    wait behind them.

    Parameters
    ----------
    page : ts2viz.ui.glue.events.Page
        The page (its app, shared controls and redraws).
    path : str or None
        The uploaded file.
    lower_is_better : str
        Names of its lower-is-better metrics (comma-separated).
    request : gradio.Request
        The event's request.

    Returns
    -------
    str
        The status line shown under the upload (names escaped).

    Raises
    ------
    InputError
        For a file that does not load or breaks the session's caps.
    """
    view = page.view(request, create=True)
    msg = cb_board.add_scores_file(view, path, os.path.basename(str(path)) if path else None, lower_is_better)
    # The session's own meta-metrics and leaderboard bootstrap (about a second on 2 cores) are computed
    # here, in the upload's queue group, not by the redraws that follow it in the views' queue, where
    # every other visitor's view would wait behind them (issue 22).
    uc_bootstrap.board_bootstrap(view, "paper")
    return f"✓ {md_text(msg)}"      # names a visitor chose (file, columns) shown as text
