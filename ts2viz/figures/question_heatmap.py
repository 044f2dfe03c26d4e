"""Questions x nodes of one SEG: which question of a question-answering metric catches which error."""
from __future__ import annotations

import numpy as np

from ..display import plural
from .cell_text import cell_text_trace
from .style import GOODNESS_SCALE, TITLE_PX, TOOLBAR_PX, empty_figure, figure, json_list, node_colors, title_lines


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"


def question_node_heatmap(accuracy, *, title: str | None = None, value_label: str = "accuracy",
                          percent: bool = True, max_chars: int = 46):
    """Questions x nodes of one SEG: which question catches which error along the graph.

    One row per question (ids top to bottom), one column per node (its label with its error count and a
    mark in its colour, :func:`~ts2viz.figures.style.node_colors`); cells orange (0) to blue (1), their values
    in black or white, whichever reads on the cell (:func:`~ts2viz.figures.cell_text.cell_text_trace`). A
    question whose cell turns orange from a node to the next level is one that notices the error added
    there.

    Parameters
    ----------
    accuracy : pandas.DataFrame
        As :func:`ts2viz.qa.views.question_node_accuracy` returns it: index question id, a
        ``question`` column, one column per node label in the SEG's order, values in [0, 1] or NaN;
        ``attrs["levels"]`` the error count per node, ``attrs["n_images"]`` the images with records per
        node.
    title : str, optional
        The title.
    value_label : str, default "accuracy"
        What the values are (colour bar, hover).
    percent : bool, default True
        Print cells as percentages, else with two decimals.
    max_chars : int, default 46
        Questions longer than this are cut (with an ellipsis) in the row labels.

    Returns
    -------
    plotly.graph_objects.Figure or PlainFigure
        The figure; an empty figure with a message when there is no question.

    Notes
    -----
    NaN policy: a NaN cell (a node without records) reads "n/a".
    """
    if accuracy is None or len(accuracy) == 0:
        return empty_figure("No questions to show for this SEG and metric")
    nodes = [c for c in accuracy.columns if c != "question"]
    levels = dict(accuracy.attrs.get("levels") or {})
    counts = dict(accuracy.attrs.get("n_images") or {})
    colors = node_colors({n: int(levels.get(n, 0)) for n in nodes})
    qids = [int(q) for q in accuracy.index]
    texts = [str(t) for t in accuracy["question"]]
    ylabels = [f"{q} · {_short(t, max_chars)}" for q, t in zip(qids, texts)]
    z = accuracy[nodes].to_numpy(dtype=float)

    def cell(v: float) -> str:
        if np.isnan(v):
            return "n/a"
        return f"{v * 100:.0f}%" if percent else f"{v:.2f}"

    text = [[cell(v) for v in row] for row in z]
    hover = [[f"q{q}: {t}<br>node {n} ({plural(int(levels.get(n, 0)), 'error')}, "
              f"{plural(int(counts.get(n, 0)), 'image')})<br>{value_label}: {cell(v)}"
              for n, v in zip(nodes, row)] for q, t, row in zip(qids, texts, z)]
    ticks = [f"<span style='color:{colors[n]}'>■</span> <b>{n}</b><br>{plural(int(levels.get(n, 0)), 'error')}"
             for n in nodes]
    heat = dict(type="heatmap", z=[json_list(r) for r in z], x=nodes, y=ylabels, zmin=0, zmax=1,
                colorscale=GOODNESS_SCALE, text=text, customdata=hover, xgap=2, ygap=2,
                colorbar=dict(title=dict(text=value_label), thickness=12, len=0.8),
                hovertemplate="%{customdata}<extra></extra>")
    values = cell_text_trace([heat], text, font=dict(size=11 if len(nodes) <= 12 else 9))
    height = max(280, min(1100, 26 * len(qids) + 190))
    # the node labels sit above the cells, under the title: room for both (two lines of tick text)
    top = (TOOLBAR_PX + TITLE_PX * len(title_lines(title)) + 10 if title else 16) + 44
    return figure([heat, values], dict(xaxis=dict(side="top", showgrid=False, tickmode="array", tickvals=nodes, ticktext=ticks),
                               yaxis=dict(autorange="reversed", showgrid=False, tickfont=dict(size=11)),
                               margin=dict(l=16, b=16, t=top)),
                  title=title, height=height, legend=False)
