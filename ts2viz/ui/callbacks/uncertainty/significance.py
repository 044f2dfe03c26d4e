"""Which orderings of the leaderboard are significant: paired tests of every two metrics, as a heatmap."""
from __future__ import annotations

import numpy as np

from .... import figures
from ....metametrics import comparison as pcmp
from ....statistics import wilcoxon as wx
from ....display import SCALED_STATS
from ....errors import InputError
from ..common import ALL, metric_choices
from ...state.app_state import AppView
from .resampled import ALPHA, board_bootstrap, cell_label, cell_name, check_cell


#: up to this many metrics the significance heatmap prints each difference in its cell; above, only
#: the significance marks (the colour shows the difference, hover the number)
MAX_NUMBERED = 10


def significance(app: AppView, mode: str, stat: str = "ord", partition: str = ALL,
                 families_sel=None) -> pcmp.PairwiseComparison:
    """All pairs of the metrics shown compared in one leaderboard cell, best first.

    The metrics are those of the family filter, compared in the cell of ``stat`` over ``partition``
    (:func:`~ts2viz.ui.callbacks.uncertainty.resampled.cell_name`) and ordered by it. The comparisons are
    :func:`ts2viz.metametrics.comparison.pairwise`'s (difference, paired bootstrap interval, Wilcoxon
    signed-rank p on per-SEG values); the Holm correction runs over the pairs shown (M(M-1)/2 for M
    metrics): with every metric shown it is ``pairwise``'s own. Called by the Correlations tab's redraw.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str, default "ord"
        A per-SEG statistic.
    partition : str, default ALL
        The SEGs.
    families_sel : list of str or None, default None
        The family filter's value.

    Returns
    -------
    ts2viz.metametrics.comparison.PairwiseComparison
        The comparisons.

    Raises
    ------
    InputError
        For no metric in the chosen families, an unknown statistic, or a partition without SEGs.
    """
    cell = cell_name(stat, partition)
    shown_metrics = metric_choices(app, families_sel)
    if not shown_metrics:
        raise InputError("no metrics in the chosen families")
    entry = board_bootstrap(app, mode, shown_metrics)
    check_cell(entry, cell)
    full = pcmp.pairwise(entry.mm, cell, boot=entry.boot)
    idx = [full.metrics.index(m) for m in shown_metrics]
    est = full.estimate[idx]
    order = [idx[k] for k in np.argsort(np.where(np.isnan(est), np.inf, -est), kind="stable")]
    if len(order) == len(full.metrics):
        holm = full.pvalue_holm[np.ix_(order, order)]
    else:
        M = len(order)
        I, J = np.triu_indices(M, 1)
        raw = full.pvalue[np.ix_(order, order)]
        holm = np.full((M, M), np.nan)
        holm[I, J] = holm[J, I] = wx.holm(raw[I, J])
    sub = np.ix_(order, order)
    return pcmp.PairwiseComparison(cell, tuple(full.metrics[i] for i in order), full.settings, full.mode,
                                full.estimate[order], full.difference[sub], full.low[sub], full.high[sub],
                                full.pvalue[sub], holm, full.n[sub])


def significance_figure(app: AppView, mode: str, stat: str = "ord", partition: str = ALL, families_sel=None,
                        pw: pcmp.PairwiseComparison | None = None):
    """The significance heatmap: cell (row, column) = row metric minus column metric, coloured where significant.

    Coloured where the Holm-corrected p < :data:`~ts2viz.ui.callbacks.uncertainty.resampled.ALPHA`; differences
    printed up to :data:`MAX_NUMBERED` metrics. The Correlations tab's right heatmap.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str, default "ord"
        A per-SEG statistic.
    partition : str, default ALL
        The SEGs.
    families_sel : list of str or None, default None
        The family filter's value.
    pw : ts2viz.metametrics.comparison.PairwiseComparison or None, default None
        :func:`significance`'s result, if already computed.

    Returns
    -------
    plotly.graph_objects.Figure
        The heatmap.
    """
    pw = pw if pw is not None else significance(app, mode, stat, partition, families_sel)
    scaled = stat in SCALED_STATS
    # beside the correlation heatmap a cell is ~20 px wide: numbers from 9 metrics on would not fit
    return figures.significance_heatmap(
        pw.metrics, pw.difference, pw.pvalue_holm, alpha=ALPHA, scale=100.0 if scaled else 1.0,
        cell_text="value" if len(pw.metrics) <= MAX_NUMBERED else "marks",
        title=f"Which orderings are significant: {cell_label(pw.cell)}, row − column"
              f"{' (x100)' if scaled else ''}, Holm p < {ALPHA:g}")


def significance_note(pw: pcmp.PairwiseComparison) -> str:
    """What the significance heatmap shows, with its count of significant pairs (the note under it).

    Parameters
    ----------
    pw : ts2viz.metametrics.comparison.PairwiseComparison
        :func:`significance`'s result.

    Returns
    -------
    str
        The note (Markdown).
    """
    M = len(pw.metrics)
    pairs = M * (M - 1) // 2
    I, J = np.triu_indices(M, 1)
    n_sig = int(pw.significant(ALPHA)[I, J].sum())
    segs = int(np.nanmax(pw.n)) if M > 1 else 0
    return (f"**Which orderings are significant** (right): {n_sig} of {pairs} pairs. A cell is row metric − "
            f"column metric in the leaderboard cell {cell_label(pw.cell)}; it is coloured (blue: row "
            f"better, orange: row worse) when a two-sided Wilcoxon signed-rank test on the two metrics' per-SEG values (up to "
            f"{segs} SEGs), Holm-corrected over the {pairs} pairs shown, gives p < {ALPHA:g} "
            f"(* < {ALPHA:g}, ** < 0.01, *** < 0.001); grey cells are not significant; hover a cell for its "
            "difference and p. Metrics are ordered "
            "by that cell, best first. The correlation heatmap (left) asks whether two metrics fail on the "
            "same SEGs; this one asks whether one is better on average.")
