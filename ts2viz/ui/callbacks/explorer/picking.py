"""Picking a SEG: search and partition, a table row, and the failure finder."""
from __future__ import annotations

import numpy as np

from ....display import SCALED_STATS, stat_name
from ...state.app_state import AppView
from ..common import ALL, get_metric, mark_columns, check_stat


def seg_options(app: AppView, query: str = "", partition: str = ALL, limit: int = 300) -> list[tuple[str, int]]:
    """The SEG picker's options: SEGs matching a prompt search (or an id) and a partition.

    Called when the search box (debounced) or the partition filter changes, through :func:`seg_choice`.

    Parameters
    ----------
    app : AppView
        The session's view.
    query : str, default ""
        Text the prompt must contain (case-insensitive, at most 200 characters), or a SEG id.
    partition : str, default ALL
        A partition, or all.
    limit : int, default 300
        The most options.

    Returns
    -------
    list of (str, int)
        ``("id · partition · prompt", id)`` pairs.

    Examples
    --------
    >>> from ts2viz.ui import load_state
    >>> seg_options(load_state("ts2", fetch_images=False).view(), "teddy")[:1]
    [('0 · Synth · A Christmas tree with lights and teddy bear', 0)]
    """
    q = (query or "").strip().lower()[:200]
    out = []
    for seg in app.dataset:
        if partition not in (None, "", ALL) and seg.partition != partition:
            continue
        if q and not (q in seg.prompt.lower() or (q.isdigit() and int(q) == seg.id)):
            continue
        out.append((f"{seg.id} · {seg.partition} · {seg.prompt[:80]}", seg.id))
        if len(out) >= limit:
            break
    return out


def seg_choice(app: AppView, query: str = "", partition: str = ALL, current=None):
    """The SEG picker after a search: its options and value.

    The current SEG stays chosen while it still matches, else the first match.

    Parameters
    ----------
    app : AppView
        The session's view.
    query : str, default ""
        The search.
    partition : str, default ALL
        The partition filter.
    current : int or str or None, default None
        The SEG chosen now.

    Returns
    -------
    options : list of (str, int)
        :func:`seg_options`.
    value : int or None
        The SEG to show; ``None`` when nothing matches.
    """
    opts = seg_options(app, query, partition)
    ids = [o[1] for o in opts]
    try:
        cur = int(current)
    except (TypeError, ValueError):
        cur = None
    if not ids:
        return opts, None
    return opts, cur if cur in ids else ids[0]


def seg_from_row(table, row) -> int | None:
    """The SEG id in a row of a table whose first column holds SEG ids (finder, pair table): a row click.

    Parameters
    ----------
    table : pandas.DataFrame
        The table's value.
    row : int
        The clicked row.

    Returns
    -------
    int or None
        The SEG id; ``None`` when the row holds none.
    """
    try:
        return int(table.iloc[int(row), 0])
    except (TypeError, ValueError, IndexError, AttributeError):
        return None


def partitions(app: AppView) -> list[str]:
    """The partition filter's choices: "All", then the dataset's partitions in order.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    list of str
        The choices.
    """
    return [ALL] + list(dict.fromkeys(s.partition for s in app.dataset))


def failure_finder(app: AppView, mode: str, metric, stat: str = "ord", metric_b=None,
                   partition: str = ALL, limit: int = 50):
    """The failure finder's table: SEGs ranked worst first by a metric's per-SEG statistic.

    By ord, sep or signed sep (or delta, kendall, pairwise accuracy ``pacc``), or by how much worse the
    metric does than ``metric_b``. Ranked by sep or signed sep, the other of the two is shown beside it: a
    SEG where they differ in sign is one the metric orders backwards. Called when the finder's statistic,
    gap, partition or metrics (A, B) change; a row click opens the SEG.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    metric : str or None
        Metric A.
    stat : str, default "ord"
        The statistic to rank by.
    metric_b : str or None, default None
        Metric B (compared beside A; optional).
    partition : str, default ALL
        A partition, or all.
    limit : int, default 50
        The most rows.

    Returns
    -------
    pandas.DataFrame
        ``SEG``, the statistic's column(s) (and ``gap``), ``partition``, ``prompt``; fractions
        (:func:`shown` displays them x100).

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    metric = get_metric(app, metric)
    metric_b = get_metric(app, metric_b, required=False)
    if stat == "pacc":      # pairwise accuracy on SEGs (ts2viz.metaeval.seg_pairwise), worst SEGs first
        from ...views.significance_view import seg_pacc_long

        segs = seg_pacc_long(app, mode)
    else:
        check_stat(stat)
        segs = app.mm(mode).segs()
    import pandas as pd

    def wide(k):
        return segs.pivot(index="seg_id", columns="metric", values=k)

    main = wide(stat)
    df = pd.DataFrame({"SEG": main.index.astype(int)})
    df["partition"] = [app.dataset[s].partition for s in df["SEG"]]
    df["prompt"] = [app.dataset[s].prompt for s in df["SEG"]]
    col = f"{stat_name(stat)} {metric}"
    df[col] = main[metric].to_numpy()
    kinds = {col: stat}                       # column -> the statistic it holds
    if partition not in (None, "", ALL):
        keep = (df["partition"] == partition).to_numpy()
    else:
        keep = np.ones(len(df), bool)
    if metric_b and metric_b != metric:
        col_b = f"{stat_name(stat)} {metric_b}"
        df[col_b] = main[metric_b].to_numpy()
        df["gap"] = df[col] - df[col_b]
        kinds.update({col_b: stat, "gap": stat})
        key = "gap"
    else:
        key = col
    companion = {"sep": "signed_sep", "signed_sep": "sep"}.get(stat)
    if companion:
        df[f"{stat_name(companion)} {metric}"] = wide(companion)[metric].to_numpy()
        kinds[f"{stat_name(companion)} {metric}"] = companion
    df = df[keep & df[key].notna().to_numpy()]
    df = df[[c for c in df.columns if c not in ("partition", "prompt")] + ["partition", "prompt"]]
    df = df.sort_values([key, "SEG"], kind="stable").head(limit).reset_index(drop=True)
    return mark_columns(df, x100=[c for c, k in kinds.items() if k in SCALED_STATS],
                        scores=[c for c, k in kinds.items() if k not in SCALED_STATS])
