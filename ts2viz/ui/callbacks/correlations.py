"""The correlations tab's callbacks: metric x metric correlation of per-SEG statistics, and the pair scatter.

The pair scatter comes with its per-SEG table. Called by the tab's redraw (the statistic, SEGs,
correlation, family, the two cell metrics, the mode and the figure format).
"""
from __future__ import annotations

from ... import figures
from ...display import SCALED_STATS, stat_name
from ...errors import InputError
from ..state.app_state import AppView
from .common import ALL, get_metric, mark_columns, shown, metric_choices, check_stat

# -- correlations -------------------------------------------------------------------------------------------

def _seg_wide(app: AppView, mode: str, stat: str, partition: str = ALL, metrics=None):
    check_stat(stat)
    segs = app.mm(mode).segs()
    if partition not in (None, "", ALL):
        segs = segs[segs["partition"] == partition]
    wide = segs.pivot(index="seg_id", columns="metric", values=stat)
    cols = [m for m in (metrics or app.metrics) if m in wide.columns]
    return wide[cols]


def corr_matrix(app: AppView, mode: str, stat: str = "ord", partition: str = ALL, families_sel=None,
                method: str = "pearson"):
    """Metric-metric correlation of per-SEG values of a statistic (over SEGs where both have values, at least 3).

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str, default "ord"
        A per-SEG statistic (:data:`ts2viz.ui.callbacks.common.SEG_STATS`).
    partition : str, default ALL
        The SEGs: a partition, or all.
    families_sel : list of str or None, default None
        The family filter's value.
    method : str, default "pearson"
        ``pearson``, ``spearman`` or ``kendall``.

    Returns
    -------
    pandas.DataFrame
        The metrics x metrics correlations.

    Raises
    ------
    InputError
        For an unknown statistic, method or mode.
    """
    if method not in ("pearson", "spearman", "kendall"):
        raise InputError(f"unknown correlation method {method!r}")
    wide = _seg_wide(app, mode, stat, partition, metric_choices(app, families_sel))
    return wide.corr(method=method, min_periods=3)


def corr_figure(app: AppView, mode: str, stat: str = "ord", partition: str = ALL, families_sel=None,
                method: str = "pearson", selected=None):
    """The heatmap of :func:`corr_matrix` (x100), the chosen cell outlined: the tab's left heatmap.

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
    method : str, default "pearson"
        The correlation.
    selected : (str, str) or None, default None
        The cell's two metrics.

    Returns
    -------
    plotly.graph_objects.Figure
        The heatmap.

    Raises
    ------
    InputError
        For an unknown statistic, method or mode.
    """
    m = corr_matrix(app, mode, stat, partition, families_sel, method)
    where = "all SEGs" if partition in (None, "", ALL) else f"{partition} SEGs"
    name = {"ord": "Ord (Spearman)", "sep": "Sep (KS)", "signed_sep": "signed Sep"}.get(stat, stat_name(stat))
    return figures.corr_heatmap(m, title=f"Correlation of per-SEG {name} between metrics, {where} "
                                         f"({method}, x100)", selected=selected)


def pair_points(app: AppView, mode: str, stat: str, x, y, partition: str = ALL):
    """Per-SEG values of two metrics, largest disagreement first: the pair scatter's points and table.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str
        A per-SEG statistic.
    x : str
        The x metric.
    y : str
        The y metric.
    partition : str, default ALL
        The SEGs.

    Returns
    -------
    pandas.DataFrame
        ``seg_id``, ``partition``, ``prompt``, ``x``, ``y``, ``diff`` (fractions; x, y and diff marked for
        display x100 when ``stat`` is one of :data:`ts2viz.display.SCALED_STATS`, else as scores).

    Raises
    ------
    InputError
        For a metric the session does not have, an unknown statistic or mode.
    """
    x, y = get_metric(app, x), get_metric(app, y)
    wide = _seg_wide(app, mode, stat, partition, [x, y] if x != y else [x])
    import pandas as pd

    df = pd.DataFrame({"seg_id": wide.index.astype(int)})
    df["partition"] = [app.dataset[s].partition for s in df["seg_id"]]
    df["prompt"] = [app.dataset[s].prompt for s in df["seg_id"]]
    df["x"] = wide[x].to_numpy()
    df["y"] = wide[y].to_numpy()
    df = df.dropna(subset=["x", "y"])
    df["diff"] = df["y"] - df["x"]
    df = df.reindex(df["diff"].abs().sort_values(ascending=False, kind="stable").index).reset_index(drop=True)
    cols = ["x", "y", "diff"]
    return mark_columns(df, x100=cols if stat in SCALED_STATS else (), scores=() if stat in SCALED_STATS else cols)


def pair_table(points, x: str, y: str):
    """The per-SEG table beside the pair scatter as people read it (:func:`shown`).

    Parameters
    ----------
    points : pandas.DataFrame
        What :func:`pair_points` returns.
    x : str
        The x metric's name (a column header).
    y : str
        The y metric's name.

    Returns
    -------
    pandas.io.formats.style.Styler
        seg_id, the two metrics, y - x, partition, prompt.
    """
    names = {"x": x, "y": y if y != x else f"{y} ", "diff": "y - x"}
    df = points[["seg_id", "x", "y", "diff", "partition", "prompt"]].rename(columns=names)
    mark_columns(df, x100=[names[c] for c in points.attrs.get("x100", [])],
                 scores=[names[c] for c in points.attrs.get("scores", [])])
    return shown(df)
