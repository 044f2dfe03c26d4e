"""The Leaderboard tab's significance panel: significance clusters, and pairwise accuracy on SEGs.

The metrics grouped into significance clusters, and pairwise accuracy on SEGs with its chance baselines
and intervals. Plain functions of data (HTML out).
"""
from __future__ import annotations

import html

import numpy as np

from ...metaeval.seg_pairwise import pairwise_intervals, seg_pairwise
from ...statistics.permutation_tests import DEFAULT_SETTINGS, pairwise_unit_permutation
from ...statistics.clusters import significance_clusters
from ...metametrics.permutation import cell_unit_values
from ...metametrics.intervals import resample_counts
from ..state.app_state import AppView

#: the cell the clusters are formed on, and their level
CLUSTER_CELL = "ord_avg"
ALPHA = 0.05
#: resamples of the pairwise-accuracy intervals (the leaderboard's interval settings draw these same SEGs)
PACC_RESAMPLES = 2000
CLUSTER_COLOURS = ("#e8f1fb", "#fdf1e3", "#e9f6ec", "#f6e9f3", "#f3f3e3", "#e6f4f4", "#f4e8e8")


def significance_data(app: AppView, mode: str, metrics: list[str], cell: str = CLUSTER_CELL) -> dict:
    """Significance clusters among some metrics and their pairwise accuracy (memoised).

    Clusters by ``cell`` (one-sided SEG-swap permutation tests, no correction, level :data:`ALPHA`);
    pairwise accuracy with a cross-validated tie threshold, chance baselines and 95% intervals
    (:data:`PACC_RESAMPLES` SEG resamples).

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    metrics : list of str
        The metrics (ones the session does not see are left out).
    cell : str, default CLUSTER_CELL
        The leaderboard cell the clusters are formed on.

    Returns
    -------
    dict
        ``clusters``, ``pairwise``, ``intervals`` and ``ord`` (the cell's values of the metrics).
    """
    metrics = [m for m in metrics if m in app.metrics]

    def build():
        mm = app.mm(mode)
        cols = [mm.metrics.index(m) for m in metrics]
        vals = cell_unit_values(mm, cell)[:, cols]
        tests = pairwise_unit_permutation(vals, settings=DEFAULT_SETTINGS)
        est = np.asarray(mm.averages()[cell])[cols]
        cl = significance_clusters(metrics, est, tests.pvalue, alpha=ALPHA)
        pw = seg_pairwise(mm, app.scores(), metrics=metrics)
        iv = pairwise_intervals(pw, resample_counts(mm, n_resamples=PACC_RESAMPLES, seed=0))
        return {"clusters": cl, "pairwise": pw, "intervals": iv, "ord": est}

    return app.memo(("significance_panel", mode, cell, tuple(metrics)), metrics, build)


def _pct(v: float) -> str:
    return "–" if v != v else f"{100 * v:.1f}"


def significance_html(app: AppView, mode: str, metrics: list[str], cell: str = CLUSTER_CELL) -> str:
    """The significance panel as HTML.

    Cluster boxes (rank, members with their value of ``cell``), then the pairwise-accuracy table sorted
    best first. Metric names are escaped (a visitor's upload names them).

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    metrics : list of str
        The metrics shown.
    cell : str, default CLUSTER_CELL
        The leaderboard cell the clusters are formed on.

    Returns
    -------
    str
        The HTML (a note when fewer than two metrics are given).
    """
    if len(metrics) < 2:
        return "<p class='sig-panel'>Significance clusters need at least two metrics.</p>"
    d = significance_data(app, mode, metrics, cell)
    cl, pw, iv, ords = d["clusters"], d["pairwise"], d["intervals"], d["ord"]
    boxes = []
    for k, members in enumerate(cl.members()):
        colour = CLUSTER_COLOURS[k % len(CLUSTER_COLOURS)]
        chips = "".join(
            f"<span class='sig-chip'>{html.escape(m)} <b>{_pct(ords[cl.metrics.index(m)])}</b></span>"
            for m in members)
        boxes.append(f"<div class='sig-cluster' style='background:{colour};border:1px solid #bbb;border-radius:6px;"
                     f"padding:4px 8px;margin:4px 0'><b>Cluster {k + 1}</b> "
                     f"<span style='display:inline-flex;flex-wrap:wrap;gap:4px 12px'>{chips}</span></div>")
    av = pw.averages()
    order = np.argsort(-np.nan_to_num(av["pacc_avg"], nan=-np.inf), kind="stable")
    groups = [c[len("pacc_"):] for c in iv.cells]
    head = "".join(f"<th>PAcc {html.escape(g.capitalize())}</th>" for g in groups)
    rows = []
    for i in order:
        cells = []
        for k, g in enumerate(groups):
            text = _pct(iv.estimate[k, i])
            if text != "–":
                text += f" <small>[{_pct(iv.low[k, i])}, {_pct(iv.high[k, i])}]</small>"
            cells.append(f"<td>{text}</td>")
        rows.append(f"<tr><td>{html.escape(pw.metrics[i])}</td>{''.join(cells)}"
                    f"<td>{pw.epsilon_all[i]:.3g}</td><td>{_pct(av['pacc_tie_rate_avg'][i])}</td>"
                    f"<td>{_pct(av['pacc_chance_avg'][i])}</td><td>{_pct(av['pacc_chance_ties_avg'][i])}</td></tr>")
    table = (f"<table class='sig-pacc'><thead><tr><th>Metric</th>{head}<th>tie ε</th><th>ties %</th>"
             f"<th>chance</th><th>chance at its tie rate</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")
    label = " · ".join(w.capitalize() for w in cell.replace("signed_sep", "signed sep").rsplit("_", 1))
    note_cl = (f"Significance clusters by {html.escape(label)} ({html.escape(mode)} mode): greedy from the top, a metric starts a "
               f"new cluster when its cluster's best beats it in a one-sided paired permutation test that swaps whole "
               f"SEGs between the two metrics (p ≤ {ALPHA:g}, {DEFAULT_SETTINGS.n_permutations:,} permutations with "
               "early stopping, no multiple-comparison correction, as the WMT metrics task). Values ×100.")
    fitted = (f"fitted on the other {pw.folds - 1} of {pw.folds} folds of SEGs (never on the SEG it scores)"
              if pw.folds >= 2 else "0: too few SEGs to fit it on other SEGs than the one it scores")
    note_pa = ("Pairwise accuracy (Deutsch et al. 2023's acc_eq, ×100): over each SEG's pairs of images on a common "
               "walk, a pair at different error levels is right when the metric orders it as the errors do, two images "
               "of one node (a gold tie) when the metric ties them. A metric ties scores within its tie threshold ε, "
               f"{fitted}; mean over "
               f"SEGs with 95% bootstrap intervals ({PACC_RESAMPLES:,} SEG resamples within partitions). chance: random "
               "scores; chance at its tie rate: random scores that tie as often as the metric does.")
    return (f"<div class='sig-panel'><p><small>{note_cl}</small></p>{''.join(boxes)}"
            f"<p><small>{note_pa}</small></p>{table}</div>")


# -- pairwise accuracy per SEG for the explorer (header, failure finder) ---------------------------------

def seg_pairwise_all(app: AppView, mode: str):
    """Pairwise accuracy of every metric the session sees on every SEG (memoised per mode and metrics).

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.

    Returns
    -------
    ts2viz.metaeval.seg_pairwise.SegPairwise
        The results.
    """
    return app.memo(("seg_pairwise", mode), app.metrics,
                    lambda: seg_pairwise(app.mm(mode), app.scores(), metrics=list(app.metrics)))


def seg_pacc(app: AppView, mode: str, seg_id: int, metric: str) -> tuple[float, float]:
    """Pairwise accuracy of a metric on one SEG, and the tie threshold used.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    seg_id : int
        The SEG.
    metric : str
        The metric.

    Returns
    -------
    accuracy : float
        The pairwise accuracy (NaN without pairs).
    epsilon : float
        The tie threshold.
    """
    pw = seg_pairwise_all(app, mode)
    i, k = pw.seg_ids.index(int(seg_id)), pw.metrics.index(metric)
    return float(pw.accuracy[i, k]), float(pw.epsilon[i, k])


def seg_pacc_long(app: AppView, mode: str):
    """Pairwise accuracy as one row per (SEG, metric), the shape of :meth:`MetaMetrics.segs`.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.

    Returns
    -------
    pandas.DataFrame
        Columns ``seg_id``, ``metric``, ``pacc``.
    """
    import pandas as pd

    pw = seg_pairwise_all(app, mode)
    S, M = len(pw.seg_ids), len(pw.metrics)
    return pd.DataFrame({"seg_id": np.repeat(pw.seg_ids, M), "metric": np.tile(pw.metrics, S),
                         "pacc": pw.accuracy.ravel()})
