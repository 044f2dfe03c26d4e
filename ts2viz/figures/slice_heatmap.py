"""Metric x slice heatmap (Gecko's Fig. 3): a statistic per slice, the cells that are not significant marked."""
from __future__ import annotations

import numpy as np

from ..display import plural
from .cell_text import cell_text_trace
from .style import GOODNESS_SCALE, TITLE_PX, TOOLBAR_PX, empty_figure, figure, json_list, title_lines

#: the p-value above which a cell is marked (Gecko's Fig. 3: "square black indicates p-values > 0.05")
P_MARK = 0.05


def slice_heatmap(res, stat: str = "spearman", *, title: str | None = None, p_mark: float = P_MARK):
    """Metrics (rows) x slices (columns) of one statistic, as Gecko's Fig. 3.

    Each cell prints the value, in black or white, whichever reads on the cell
    (:func:`~ts2viz.figures.cell_text.cell_text_trace`, the last trace); a cell whose bootstrap p-value of no
    association is above ``p_mark`` (or that has no p-value) is drawn dark with its value in brackets; a slice with no number reads "n/a"
    (its note in the hover). Column labels give each slice's images and prompts, so a small slice is
    seen as small.

    Parameters
    ----------
    res : ts2viz.metaeval.slices.SliceEval
        Per-slice results (:func:`ts2viz.metaeval.slices.evaluate_slices`).
    stat : str, default "spearman"
        The statistic (:data:`ts2viz.metaeval.slices.SLICE_STATS`).
    title : str, optional
        The title.
    p_mark : float, default 0.05
        Cells with a p-value above this are marked.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure, its heatmap's ``customdata`` holding ``[slice, metric]`` per cell (what a click
        opens); an empty figure with a message when there is no slice.

    Notes
    -----
    NaN policy: a NaN value reads "n/a" and is not coloured.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.figures.slice_heatmap import slice_heatmap
    >>> from ts2viz.figures.style import plain_figures
    >>> from ts2viz.metaeval.slices import evaluate_slices_arrays
    >>> from ts2viz.statistics.bootstrap import BootstrapSettings
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=80)
    >>> prompts, models = np.repeat(np.arange(40), 2), np.tile([0, 1], 40)
    >>> res = evaluate_slices_arrays(np.stack([y + rng.normal(size=80), rng.normal(size=80)]), y, prompts, models,
    ...                              ["good", "noise"], np.stack([prompts < 40, prompts < 20]), ["all", "half"],
    ...                              bootstrap=BootstrapSettings(n_resamples=200))
    >>> with plain_figures():
    ...     fig = slice_heatmap(res)
    >>> fig.data[0]["text"]
    [['0.68', '0.63'], ['(-0.15)', '(-0.31)']]
    """
    if not len(res.slices) or not len(res.metrics):
        return empty_figure("No slice to show")
    v = res.point[stat].T                       # (metrics, slices)
    p = res.pvalue(stat).T
    marked = ~(p <= p_mark)
    notes = list(res.notes) or [""] * len(res.slices)

    def cell(val: float, mark: bool) -> str:
        if np.isnan(val):
            return "n/a"
        return f"({val:.2f})" if mark else f"{val:.2f}"

    text = [[cell(a, m) for a, m in zip(row, mrow)] for row, mrow in zip(v, marked)]
    z = np.where(marked, np.nan, v)
    cols = _column_labels(res)
    hover = [[f"{m} on {s}<br>{stat}: {cell(a, mk)}" + ("" if np.isnan(pp) else f", p = {pp:.3g}")
              + (f"<br>{note}" if note else "")
              for s, a, mk, pp, note in zip(res.slices, row, mrow, prow, notes)]
             for m, row, mrow, prow in zip(res.metrics, v, marked, p)]
    custom = [[[s, m] for s in res.slices] for m in res.metrics]
    zmin, zmax = (0.0, 1.0) if stat.startswith("pairwise") else (-1.0, 1.0)
    dark = dict(type="heatmap", z=[json_list(r) for r in np.where(marked & ~np.isnan(v), 0.0, np.nan)], x=cols,
                y=list(res.metrics), zmin=0, zmax=1, colorscale=[[0, "#292524"], [1, "#292524"]], showscale=False,
                hoverinfo="skip", xgap=2, ygap=2)
    heat = dict(type="heatmap", z=[json_list(r) for r in z], x=cols, y=list(res.metrics), zmin=zmin, zmax=zmax,
                colorscale=GOODNESS_SCALE, text=text, customdata=custom,
                hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", xgap=2, ygap=2,
                colorbar=dict(title=dict(text=stat), thickness=12, len=0.8))
    # the values on top of both layers, each in black or white for its cell (a marked cell's too)
    values = cell_text_trace([heat, dark], text, font=dict(size=11 if len(res.slices) <= 12 else 9))
    height = max(280, min(1100, 26 * len(res.metrics) + 200))
    top = (TOOLBAR_PX + TITLE_PX * len(title_lines(title)) + 10 if title else 16) + 44
    return figure([heat, dark, values], dict(xaxis=dict(side="top", showgrid=False, tickfont=dict(size=10)),
                                     yaxis=dict(autorange="reversed", showgrid=False, tickfont=dict(size=11)),
                                     margin=dict(l=16, b=16, t=top)),
                  title=title, height=height, legend=False)


def _column_labels(res) -> list[str]:
    """Each slice's name with its size: a board result's own labels (SEGs), else images and prompts."""
    labels = getattr(res, "column_labels", None)
    if labels is not None:
        return list(labels)
    return [f"{s}<br>{plural(int(n), 'image')}, {plural(int(q), 'prompt')}"
            for s, n, q in zip(res.slices, res.n_images, res.n_prompts)]


def board_slice_heatmap(board, stat: str = "ord", *, title: str | None = None, p_mark: float = P_MARK):
    """Metrics x slices of SEGs of one averaged leaderboard cell (:func:`slice_heatmap` on a board result).

    Parameters
    ----------
    board : ts2viz.metametrics.slices.BoardSlices
        The leaderboard per slice (:func:`ts2viz.metametrics.slices.board_slices`).
    stat : str, default "ord"
        A statistic of ``board.stats`` (or its averaged cell, ``ord_avg``). Sep has no null value, so no
        p-value: its cells are all marked.
    title : str, optional
        The title.
    p_mark : float, default 0.05
        Cells with a p-value above this (or none: no ``--ci`` resamples, a slice of 1 SEG) are marked.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        As :func:`slice_heatmap`; column labels give each slice's SEGs.

    Raises
    ------
    InputError
        If ``board`` has no such statistic.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores
    >>> from ts2viz.dataset.tags import seg_slices
    >>> from ts2viz.figures.slice_heatmap import board_slice_heatmap
    >>> from ts2viz.figures.style import plain_figures
    >>> from ts2viz.metametrics.slices import board_slices
    >>> from ts2viz.statistics.bootstrap import BootstrapSettings
    >>> ds = load_dataset("ts2")
    >>> board = board_slices(ds, bundled_scores(), seg_slices(ds, "partition"), metrics=["CLIPScore", "DSG-mPLUG"],
    ...                      bootstrap=BootstrapSettings(n_resamples=200))
    >>> with plain_figures():
    ...     fig = board_slice_heatmap(board)
    >>> fig.data[0]["x"][1], fig.data[0]["text"][0]
    ('Synth<br>111 SEGs', ['0.71', '0.75', '0.58', '0.69'])
    """
    cell = board.cell_of(stat)
    return slice_heatmap(board, cell, title=title, p_mark=p_mark)
