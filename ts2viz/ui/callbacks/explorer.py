"""The SEG explorer tab's callbacks: picking a SEG, the failure finder, and the view of one SEG.

Picking a SEG (search, partition), the failure finder, and the view of one SEG (graph, walks, node
galleries, node-wise CDF/KS).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from ... import figures
from ...display import SCALED_STATS, SIGNED_SEP_NOTE, fmt_x100, md_text, plural, stat_name
from ...errors import InputError
from ...metametrics import signed
from ...statistics.ord_sep import ks_separation, mean_gap, node_means
from ..views.graph import seg_graph_html
from ..state.app_state import AppView
from ..images.thumbs import GALLERY, THUMB, thumb_files
from .common import ALL, Plot, build_figure, get_seg, get_metric, mark_columns, shown, walk_label, check_stat

# -- SEG picking ----------------------------------------------------------------------------------------

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
        from ..views.significance_view import seg_pacc_long

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


# -- SEG explorer ----------------------------------------------------------------------------------------

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


def _node_info(seg):
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


def graph_html(app: AppView, mode: str, seg_id, metric, walk=None, node=None) -> str:
    """The SEG's graph as HTML, nodes coloured by metric A's node means, a walk highlighted, a node marked.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    seg_id : int or str
        The SEG.
    metric : str or None
        The metric colouring the nodes (``None``: uncoloured).
    walk : str or int or None, default None
        The walk to highlight (its index, or the picker's value).
    node : str or None, default None
        The node whose gallery is open.

    Returns
    -------
    str
        The HTML (:func:`ts2viz.ui.views.graph.seg_graph_html`).

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric, required=False)
    means = node_means(app.node_scores(seg.id, metric)) if metric else {}
    wpath, wname = None, ""
    w = _walk_index(walk)
    if w is not None:
        from ...metametrics import seg_structure

        st = seg_structure(seg, mode)
        if 0 <= w < len(st.walks):
            wpath, wname = st.walks[w], f"walk {w} ({walk_label(st.walks[w])})"
    return seg_graph_html(seg, node_means=means, metric=metric, full_range=score_range(app, metric) if metric else None,
                          lower_is_better=bool(metric) and app.lower_is_better(metric),
                          thumb_uri=lambda fn: app.thumbs.data_uri(fn, THUMB, placeholder=False), walk=wpath, walk_name=wname,
                          selected=node, thumb_note=lambda fn: app.thumbs.state(fn, THUMB))


def _walk_index(walk) -> int | None:
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
    levels, files = _node_info(seg)
    return figures.walk_figure(levels, app.node_scores(seg.id, metric), st.walks, wa["ord"], metric=metric,
                               highlight=_walk_index(walk), lower_is_better=app.lower_is_better(metric),
                               node_files=files, color=color)


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
    levels, _ = _node_info(seg)
    return figures.cdf_figure(levels, app.node_scores(seg.id, metric), ks_pairs(app, seg.id, metric),
                              metric=metric, lower_is_better=app.lower_is_better(metric))


def gallery(app: AppView, seg_id, node, metrics: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The node gallery: (image path, caption) for every image of a node.

    Captions carry the file name, the image's source and the metrics' scores.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.
    node : str or None
        The node (``None`` or ``""``: no gallery).
    metrics : sequence of str, default ()
        The metrics whose scores the captions show.

    Returns
    -------
    list of (str, str)
        Gallery-size image files (or placeholders) and captions.

    Raises
    ------
    InputError
        For a SEG the dataset lacks, or a node the SEG lacks.
    """
    seg = get_seg(app, seg_id)
    if node in (None, ""):
        return []
    if node not in seg.labels:
        raise InputError(f"SEG {seg.id} has no node {node!r} (nodes: {', '.join(seg.labels)})")
    ms = [m for m in dict.fromkeys(metrics) if m and m in app.metrics]
    imgs = seg.node(node).images
    vals = app.image_scores([im.file_name for im in imgs], ms) if ms else np.zeros((len(imgs), 0))
    out = []
    for im, row in zip(imgs, vals):
        sc = " · ".join(f"{m} {'–' if math.isnan(v) else f'{v:.3f}'}" for m, v in zip(ms, row))
        cap = f"{Path(im.file_name).name} · {im.image_source or 'unknown source'}" + (f" · {sc}" if sc else "")
        out.append((str(app.thumbs.path(im.file_name, GALLERY)), cap))
    return out


def seg_header(app: AppView, mode: str, seg_id, metric, metric_b=None) -> str:
    """The SEG's header: id, partition, prompt, counts, and each metric's ord, sep, signed sep and pairwise accuracy.

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
    str
        Markdown (metric names escaped).

    Raises
    ------
    InputError
        For a SEG the dataset lacks.
    """
    from ...metametrics import seg_structure

    seg = get_seg(app, seg_id)
    st = seg_structure(seg, mode)
    mm = app.mm(mode) if app.metrics else None
    bits = []
    for m in [x for x in (metric, metric_b) if x and x in app.metrics]:
        row = mm.seg_values
        i, k = mm.seg_ids.index(seg.id), mm.metrics.index(m)
        from ..views.significance_view import seg_pacc

        pacc, eps = seg_pacc(app, mode, seg.id, m)
        bits.append(f"**{md_text(m)}** ord {fmt_x100(row['ord'][i, k])} · sep {fmt_x100(row['sep'][i, k])} · "
                    f"signed sep {fmt_x100(row['signed_sep'][i, k])} · pairwise acc {fmt_x100(pacc)} "
                    f"(tie ε {eps:.3g})")
    note = f"  \n<small>Values x100, as in the paper. {SIGNED_SEP_NOTE}</small>" if bits else ""
    return (f"### SEG {seg.id} · {seg.partition}\n**Prompt:** {seg.prompt}\n\n"
            f"{plural(len(seg.nodes), 'node')} · {plural(seg.n_images, 'image')} · "
            f"{plural(len(st.walks), 'walk')} ({mode} mode)"
            + ("  \n" + "  \n".join(bits) if bits else "") + note)


def _graph(app: AppView, mode: str, seg, metric, walk, node) -> str:
    w = _walk_index(walk)
    # keyed by what its thumbnails show (ready, loading, offline, missing): an image landing for another
    # SEG leaves this one's memo alone
    return app.memo(("graph", mode, seg.id, metric, w, node, app.thumbs.states(thumb_files(seg), THUMB)), [metric],
                    lambda: graph_html(app, mode, seg.id, metric, w, node))


def _gallery(app: AppView, seg, node, metrics) -> list[tuple[str, str]]:
    ms = tuple(m for m in dict.fromkeys(metrics) if m)
    files = [im.file_name for im in seg.node(node).images] if node in seg.labels else []
    return app.memo(("gallery", seg.id, node, ms, app.thumbs.states(files, GALLERY)), ms,
                    lambda: gallery(app, seg.id, node, ms))


def _walk_plot(app: AppView, mode: str, seg, metric, w, color: str, plot: Plot):
    return plot(("walk", mode, seg.id, metric, w, color), [metric],
                lambda: walk_figure(app, mode, seg.id, metric, w, color=color))


def seg_view(app: AppView, mode: str, seg_id, metric, metric_b=None, node=None, walk=None, *,
             plot: Plot = build_figure, nodes: bool = True) -> dict:
    """Everything the explorer shows for one SEG, as a dict of plain values.

    Called by the explorer's redraw: choosing a SEG (picker, search, a table row), changing metric A or B,
    the mode or the figure format, and the first render. Figures come from ``plot`` (default: plotly
    figures; see :data:`Plot`). Parts that depend only on (SEG, metrics, mode) are memoised (``app.memo``)
    and shared with every session showing them.

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
    node : str or None, default None
        The open node (default: the first).
    walk : str or int or None, default None
        The highlighted walk.
    plot : callable, default build_figure
        How figures are made (:data:`Plot`).
    nodes : bool, default True
        Include the node-separation part (else ``cdf_a``, ``cdf_b``, ``ks_table`` are ``None``), for a
        page that does not show it.

    Returns
    -------
    dict
        ``header``, ``graph``, ``nodes``, ``node``, ``node_title``, ``gallery``, ``walk_table``,
        ``walk_choices``, ``walk``, ``walk_fig_a``, ``walk_fig_b``, ``prompt``, ``cdf_a``, ``cdf_b``,
        ``ks_table``: the values of the explorer's components.

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
    if node not in seg.labels:
        node = seg.labels[0]
    if metric:
        wt = app.memo(("walk_table", mode, seg.id, metric, metric_b), ms,
                      lambda: walk_table(app, mode, seg.id, metric, metric_b))
        st = app.mm(mode).walk_stats(seg.id)[0]
        walk_choices = app.memo(("walk_choices", mode, seg.id, metric, metric_b), ms, lambda: [
            (f"walk {int(r.walk)}: {r.path} (ord {fmt_x100(r.ord)})", str(int(r.walk))) for r in wt.itertuples()])
    else:
        from ...metametrics import seg_structure

        st = seg_structure(seg, mode)
        wt = pd.DataFrame({"walk": np.arange(len(st.walks)), "path": [walk_label(w) for w in st.walks]})
        walk_choices = [(f"walk {i}: {walk_label(w)}", str(i)) for i, w in enumerate(st.walks)]
    w = _walk_index(walk)
    if w is not None and not 0 <= w < len(st.walks):
        w = None
    no_metric = "No scores loaded: add a scores file or score live"
    return {
        "header": app.memo(("header", mode, seg.id, metric, metric_b), ms,
                           lambda: seg_header(app, mode, seg.id, metric, metric_b)),
        "graph": _graph(app, mode, seg, metric, w, node),
        "nodes": list(seg.labels),
        "node": node,
        "node_title": _node_title(app, seg, node),
        "gallery": _gallery(app, seg, node, ms),
        "walk_table": shown(wt),
        "walk_choices": walk_choices,
        "walk": None if w is None else str(w),
        "walk_fig_a": (_walk_plot(app, mode, seg, metric, w, figures.METRIC_A, plot) if metric else
                       plot(("empty", no_metric), [], lambda: figures.empty_figure(no_metric))),
        "walk_fig_b": _walk_plot(app, mode, seg, metric_b, w, figures.METRIC_B, plot),
        "prompt": seg.prompt,
        **(node_separation_view(app, seg.id, metric, metric_b, plot=plot) if nodes
           else {"cdf_a": None, "cdf_b": None, "ks_table": None}),
    }


def node_separation_view(app: AppView, seg_id, metric, metric_b=None, *, plot: Plot = build_figure) -> dict:
    """The explorer's node-separation part for one SEG, memoised like :func:`seg_view`.

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


#: the one command that puts a hub dataset's images on this machine (then ``python app.py --data FOLDER``)
GET_IMAGES = "hf download {hf_id} --repo-type dataset --local-dir {folder}"


def image_links(ds, file_names: Sequence[str], states: Sequence[str] | None = None) -> str:
    """Markdown for images this machine does not hold: a link to each on the hub and the command that gets them all.

    Offline, the gallery shows placeholders; this names each image on the dataset's Hugging Face page.
    Only ``offline`` and ``missing`` images get links: a ready one is on screen (a hub download the app
    made), a loading one is on its way and its tile fills without a click (the node title is not redrawn
    then, so a link written now would stay beside the image).

    Parameters
    ----------
    ds : ts2viz.dataset.Dataset
        The dataset.
    file_names : sequence of str
        The node's images.
    states : sequence of str or None, default None
        Per file, what its gallery tile shows now (:mod:`ts2viz.ui.images.image_fetch`: ``ready``,
        ``loading``, ``offline``, ``missing``); ``None``: the images neither on disk nor in the local hub
        cache.

    Returns
    -------
    str
        The Markdown; ``""`` when the images are shown or the dataset has no hub copy.
    """
    from urllib.parse import quote

    from ...dataset import cached_image
    from ..images.image_fetch import MISSING, OFFLINE

    if ds.hf_id is None:
        return ""
    if states is not None:
        missing = [f for f, st in zip(file_names, states) if st in (OFFLINE, MISSING) and ds.has_image(f)]
    else:
        missing = [f for f in file_names if ds.image_path(f) is None and cached_image(ds, f) is None]
    if not missing:
        return ""
    base = f"https://huggingface.co/datasets/{quote(ds.hf_id)}/blob/main/"
    links = " · ".join(f"[{Path(f).name}]({base}{quote(f)})" for f in missing[:12])
    more = f" (and {len(missing) - 12} more)" if len(missing) > 12 else ""
    cmd = GET_IMAGES.format(hf_id=ds.hf_id, folder="ts2-data")
    return (f"<small>Images not on this machine; open them on the Hugging Face dataset: {links}{more}. "
            f"To have them all here: `{cmd}` then `python app.py --data ts2-data`.</small>")


def _node_title(app: AppView, seg, node) -> str:
    if node not in seg.labels:
        return ""
    n = seg.node(node)
    # the error(s) the node adds relative to its parent (nodes.csv), when the dataset describes them
    adds = f" · adds: *{md_text('; '.join(n.errors))}*" if getattr(n, "errors", ()) else ""
    title = (f"**Node {node}** · {plural(n.level, 'error')} · {plural(len(n.images), 'image')}{adds} "
             f"· click an image to enlarge")
    files = [im.file_name for im in n.images]
    links = image_links(app.dataset, files, app.thumbs.states(files, GALLERY))
    return f"{title}\n\n{links}" if links else title


def select_node(app: AppView, mode: str, seg_id, metric, metric_b, node, walk=None) -> dict:
    """Clicking a node (on the graph or in the node picker): the graph with the node marked, and its gallery.

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
    metric_b : str or None
        Metric B.
    node : str
        The node.
    walk : str or int or None, default None
        The highlighted walk.

    Returns
    -------
    dict
        ``graph``, ``gallery``, ``node_title``.

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric, required=False)
    metric_b = get_metric(app, metric_b, required=False)
    return {"graph": _graph(app, mode, seg, metric, walk, node),
            "gallery": _gallery(app, seg, node, [metric, metric_b]),
            "node_title": _node_title(app, seg, node)}


def select_walk(app: AppView, mode: str, seg_id, metric, metric_b, walk, node=None, *,
                plot: Plot = build_figure) -> dict:
    """Choosing a walk (the walk picker, or a row of the walk table): the graph and Spearman plots with it emphasised.

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
    metric_b : str or None
        Metric B.
    walk : str or int or None
        The walk.
    node : str or None, default None
        The open node.
    plot : callable, default build_figure
        How figures are made (:data:`Plot`).

    Returns
    -------
    dict
        ``graph``, ``walk_fig_a``, ``walk_fig_b``.

    Raises
    ------
    InputError
        For a SEG or metric the session does not have, or an unknown mode.
    """
    from ...metametrics import seg_structure

    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric, required=False)
    metric_b = get_metric(app, metric_b, required=False)
    st = seg_structure(seg, mode)
    w = _walk_index(walk)
    if w is not None and not 0 <= w < len(st.walks):
        w = None
    return {"graph": _graph(app, mode, seg, metric, w, node),
            "walk_fig_a": _walk_plot(app, mode, seg, metric, w, figures.METRIC_A, plot),
            "walk_fig_b": _walk_plot(app, mode, seg, metric_b, w, figures.METRIC_B, plot)}


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
