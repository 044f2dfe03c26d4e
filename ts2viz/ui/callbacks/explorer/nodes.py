"""A SEG's nodes side by side: KS separation of each pair, the node-wise CDFs."""
from __future__ import annotations

import numpy as np

from .... import figures
from ....metametrics.walks import signed
from ....metametrics.definitions import ks_separation, mean_gap
from ...state.app_state import AppView
from ..common import Plot, build_figure, get_seg, get_metric, mark_columns, shown


def node_info(seg):
    """Each node's error level and image files, by node label.

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.

    Returns
    -------
    tuple of (dict, dict)
        ``({label: level}, {label: [file names]})``.
    """
    levels = {n.label: n.level for n in seg.nodes}
    files = {n.label: [im.file_name for im in n.images] for n in seg.nodes}
    return levels, files


def ks_pairs(app: AppView, seg_id, metric) -> list[dict]:
    """KS statistic (and where it is attained), mean gap and signed KS of every adjacent node pair of a SEG.

    Memoised per (SEG, metric).

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.
    metric : str
        The metric.

    Returns
    -------
    list of dict
        ``a``, ``b`` (labels), ``statistic``, ``location``, ``cdf_a``, ``cdf_b``, ``mean_gap``
        (better-oriented), ``signed``.

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric)

    def build() -> list[dict]:
        ns = app.node_scores(seg.id, metric)
        out = []
        lib = app.lower_is_better(metric)
        for a, b in seg.adjacent_pairs():
            r = ks_separation(ns[a], ns[b])
            gap = -mean_gap(ns[a], ns[b]) if lib else mean_gap(ns[a], ns[b])
            out.append({"a": a, "b": b, "statistic": r.statistic, "location": r.location,
                        "cdf_a": r.cdf_a, "cdf_b": r.cdf_b, "mean_gap": gap,
                        "signed": float(signed(np.float64(r.statistic), np.float64(gap)))})
        return out

    return app.memo(("ks_pairs", seg.id, metric), [metric], build)


KS_COLUMNS = ("pair", "KS", "signed KS", "at", "Δmean")


def ks_table(app: AppView, seg_id, metric, metric_b=None):
    """The explorer's KS table: KS distance of every adjacent node pair for one or two metrics.

    Signed KS (negative: the node with more errors scores higher), where the KS distance is attained and
    the mean gap (better-oriented mean of the node with fewer errors minus the other's). Lowest signed KS
    first. KS values are fractions shown x100 by :func:`shown`; the location and gap are scores.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.
    metric : str or None
        Metric A.
    metric_b : str or None, default None
        Metric B (compared beside A; optional).

    Returns
    -------
    pandas.DataFrame
        The table.

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    import pandas as pd

    metric = get_metric(app, metric)
    metric_b = get_metric(app, metric_b, required=False)
    pa = ks_pairs(app, seg_id, metric)
    df = pd.DataFrame({"pair": [f"{p['a']} – {p['b']}" for p in pa],
                       f"KS {metric}": [p["statistic"] for p in pa],
                       f"signed KS {metric}": [p["signed"] for p in pa],
                       f"at {metric}": [p["location"] for p in pa],
                       f"Δmean {metric}": [p["mean_gap"] for p in pa]})
    scaled, scores = [f"KS {metric}", f"signed KS {metric}"], [f"at {metric}", f"Δmean {metric}"]
    if metric_b and metric_b != metric:
        pb = ks_pairs(app, seg_id, metric_b)
        df[f"KS {metric_b}"] = [p["statistic"] for p in pb]
        df[f"signed KS {metric_b}"] = [p["signed"] for p in pb]
        df[f"Δmean {metric_b}"] = [p["mean_gap"] for p in pb]
        scaled += [f"KS {metric_b}", f"signed KS {metric_b}"]
        scores.append(f"Δmean {metric_b}")
    df = df.sort_values(f"signed KS {metric}", na_position="last", kind="stable").reset_index(drop=True)
    return mark_columns(df, x100=scaled, scores=scores)


def cdf_figure(app: AppView, seg_id, metric):
    """The node-wise CDFs of one metric on a SEG, with the KS distances of adjacent nodes.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.
    metric : str or None
        The metric (``None``: an empty figure asking for one).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric, required=False)
    if not metric:
        return figures.empty_figure("Choose a second metric to compare")
    levels, _ = node_info(seg)
    return figures.cdf_figure(levels, app.node_scores(seg.id, metric), ks_pairs(app, seg.id, metric),
                              metric=metric, lower_is_better=app.lower_is_better(metric))


def node_separation_view(app: AppView, seg_id, metric, metric_b=None, *, plot: Plot = build_figure) -> dict:
    """The explorer's node-separation part for one SEG, memoised like :func:`~ts2viz.ui.callbacks.explorer.view.seg_view`.

    Called when the Nodes tab is opened, and while it is open by the explorer's redraws.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.
    metric : str or None
        Metric A.
    metric_b : str or None, default None
        Metric B (compared beside A; optional).
    plot : callable, default build_figure
        How figures are made (:data:`Plot`).

    Returns
    -------
    dict
        ``cdf_a``, ``cdf_b`` (each metric's node-wise CDF figure) and ``ks_table`` (adjacent node pairs).

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    import pandas as pd

    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric, required=False)
    metric_b = get_metric(app, metric_b, required=False)
    ms = [metric, metric_b]
    no_metric = "No scores loaded: add a scores file or score live"
    return {
        "cdf_a": (plot(("cdf", seg.id, metric), [metric], lambda: cdf_figure(app, seg.id, metric)) if metric else
                  plot(("empty", no_metric), [], lambda: figures.empty_figure(no_metric))),
        "cdf_b": plot(("cdf", seg.id, metric_b), [metric_b], lambda: cdf_figure(app, seg.id, metric_b)),
        "ks_table": shown(app.memo(("ks_table", seg.id, metric, metric_b), ms,
                                   lambda: ks_table(app, seg.id, metric, metric_b)) if metric
                          else pd.DataFrame(columns=KS_COLUMNS)),
    }
