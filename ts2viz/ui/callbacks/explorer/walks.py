"""A SEG's walks: the table of their Ord and Sep, one walk drawn, the metric's score range."""
from __future__ import annotations

import numpy as np

from .... import figures
from ....display import stat_name
from ...state.app_state import AppView
from ..common import get_seg, get_metric, mark_columns, walk_label
from .nodes import node_info


def _walk_data(app: AppView, mode: str, seg_id: int, metric: str):
    mm = app.mm(mode)
    st, ws = mm.walk_stats(seg_id)
    i = mm.metrics.index(metric)
    return st, {"ord": ws.ord[i], "sep": ws.sep[i], "signed_sep": ws.signed_sep[i], "delta": ws.delta[i],
                "n_images": ws.n_images[i]}


WALK_STATS = ("ord", "sep", "signed_sep")


def walk_table(app: AppView, mode: str, seg_id, metric, metric_b=None):
    """One row per walk of a SEG, worst ord first: the explorer's walk table.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    seg_id : int or str
        The SEG.
    metric : str or None
        Metric A.
    metric_b : str or None, default None
        Metric B (compared beside A; optional).

    Returns
    -------
    pandas.DataFrame
        ``walk``, ``path``, ord, sep, signed sep (and the second metric's); fractions, shown x100 by
        :func:`shown`.

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    import pandas as pd

    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric)
    metric_b = get_metric(app, metric_b, required=False)
    st, wa = _walk_data(app, mode, seg.id, metric)
    df = pd.DataFrame({"walk": np.arange(len(st.walks)), "path": [walk_label(w) for w in st.walks],
                       **{stat_name(k): wa[k] for k in WALK_STATS}})
    cols = [stat_name(k) for k in WALK_STATS]
    if metric_b and metric_b != metric:
        _, wb = _walk_data(app, mode, seg.id, metric_b)
        for k in WALK_STATS:
            df[f"{stat_name(k)} {metric_b}"] = wb[k]
            cols.append(f"{stat_name(k)} {metric_b}")
    df = df.sort_values(["ord", "walk"], na_position="last", kind="stable").reset_index(drop=True)
    return mark_columns(df, x100=cols)


def score_range(app: AppView, metric: str) -> tuple[float, float] | None:
    """The lowest and highest score of a metric over the dataset's images (memoised).

    The graph's "full range" colour scale.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        The metric.

    Returns
    -------
    (float, float) or None
        The range; ``None`` when it has no score.
    """
    def build():
        v = np.asarray(app.scores().column(metric), dtype=float)
        v = v[np.isfinite(v)]
        return (float(v.min()), float(v.max())) if len(v) else None

    return app.memo(("score_range", metric), [metric], build)


def walk_index(walk) -> int | None:
    """The index of a walk as the walk picker names it (``"walk 3: 0 > 1a > 2a"``, or a bare number).

    Parameters
    ----------
    walk : str or int or None
        The picker's value.

    Returns
    -------
    int or None
        The index; ``None`` for no walk (empty, ``"—"``) or a value that names none.
    """
    if walk in (None, "", "—"):
        return None
    try:
        return int(str(walk).split(":")[0].replace("walk", "").strip())
    except ValueError:
        return None


def walk_figure(app: AppView, mode: str, seg_id, metric, walk=None, *, color: str = figures.METRIC_A):
    """The per-walk Spearman plot of one metric on a SEG.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    seg_id : int or str
        The SEG.
    metric : str or None
        The metric (``None``: an empty figure asking for one).
    walk : str or int or None, default None
        The walk to emphasise.
    color : str, default figures.METRIC_A
        The metric's colour.

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
    st, wa = _walk_data(app, mode, seg.id, metric)
    levels, files = node_info(seg)
    return figures.walk_figure(levels, app.node_scores(seg.id, metric), st.walks, wa["ord"], metric=metric,
                               highlight=walk_index(walk), lower_is_better=app.lower_is_better(metric),
                               node_files=files, color=color)


def walk_from_row(table, row: int) -> str | None:
    """The walk id in a row of a walk table (a row click).

    Parameters
    ----------
    table : pandas.DataFrame
        The walk table's value.
    row : int
        The clicked row.

    Returns
    -------
    str or None
        The walk id as a string; ``None`` when the row holds none.
    """
    try:
        return str(int(table.iloc[int(row)]["walk"]))
    except Exception:
        return None
