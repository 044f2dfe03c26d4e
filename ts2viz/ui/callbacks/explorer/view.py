"""The view of one SEG: header, graph, walk, galleries and image links, and what a node or walk click redraws."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from .... import figures
from ....display import SIGNED_SEP_NOTE, fmt_x100, md_text, plural
from ....errors import InputError
from ....metametrics.definitions import node_means
from ...views.graph import seg_graph_html
from ...state.app_state import AppView
from ...images.thumbs import GALLERY, THUMB, thumb_files
from ..common import Plot, build_figure, get_seg, get_metric, shown, walk_label
from .nodes import node_separation_view
from .walks import score_range, walk_figure, walk_index, walk_table


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
    w = walk_index(walk)
    if w is not None:
        from ....metametrics.structure import seg_structure

        st = seg_structure(seg, mode)
        if 0 <= w < len(st.walks):
            wpath, wname = st.walks[w], f"walk {w} ({walk_label(st.walks[w])})"
    return seg_graph_html(seg, node_means=means, metric=metric, full_range=score_range(app, metric) if metric else None,
                          lower_is_better=bool(metric) and app.lower_is_better(metric),
                          thumb_uri=lambda fn: app.thumbs.data_uri(fn, THUMB, placeholder=False), walk=wpath, walk_name=wname,
                          selected=node, thumb_note=lambda fn: app.thumbs.state(fn, THUMB))


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
    from ....metametrics.structure import seg_structure

    seg = get_seg(app, seg_id)
    st = seg_structure(seg, mode)
    mm = app.mm(mode) if app.metrics else None
    bits = []
    for m in [x for x in (metric, metric_b) if x and x in app.metrics]:
        row = mm.seg_values
        i, k = mm.seg_ids.index(seg.id), mm.metrics.index(m)
        from ...views.significance_view import seg_pacc

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
    w = walk_index(walk)
    # keyed by what its thumbnails show (ready, loading, offline, missing): an image landing for another
    # SEG leaves this one's memo alone
    return app.memo(("graph", mode, seg.id, metric, w, node, app.thumbs.states(thumb_files(seg), THUMB)), [metric],
                    lambda: graph_html(app, mode, seg.id, metric, w, node))


def _node_states(app: AppView, seg, node) -> tuple[list[str], tuple[str, ...]]:
    """The node's images and what their gallery tiles show now (once per view: the gallery and title read it)."""
    files = [im.file_name for im in seg.node(node).images] if node in seg.labels else []
    return files, app.thumbs.states(files, GALLERY)


def _gallery(app: AppView, seg, node, metrics, states) -> list[tuple[str, str]]:
    ms = tuple(m for m in dict.fromkeys(metrics) if m)
    return app.memo(("gallery", seg.id, node, ms, states[1]), ms, lambda: gallery(app, seg.id, node, ms))


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
        def table():
            return app.memo(("walk_table", mode, seg.id, metric, metric_b), ms,
                            lambda: walk_table(app, mode, seg.id, metric, metric_b))

        st = app.mm(mode).walk_stats(seg.id)[0]
        # the table as shown (a Styler) memoised too: made for every call, it was a tenth of a view's time
        shown_table = app.memo(("walk_table_shown", mode, seg.id, metric, metric_b), ms, lambda: shown(table()))
        # by columns: DataFrame.itertuples was a fifth of a first view
        walk_choices = app.memo(("walk_choices", mode, seg.id, metric, metric_b), ms, lambda: [
            (f"walk {int(w)}: {path} (ord {fmt_x100(o)})", str(int(w)))
            for w, path, o in zip(table()["walk"].tolist(), table()["path"].tolist(), table()["ord"].tolist())])
    else:
        from ....metametrics.structure import seg_structure

        st = seg_structure(seg, mode)
        shown_table = shown(pd.DataFrame({"walk": np.arange(len(st.walks)), "path": [walk_label(w) for w in st.walks]}))
        walk_choices = [(f"walk {i}: {walk_label(w)}", str(i)) for i, w in enumerate(st.walks)]
    w = walk_index(walk)
    if w is not None and not 0 <= w < len(st.walks):
        w = None
    no_metric = "No scores loaded: add a scores file or score live"
    states = _node_states(app, seg, node)
    return {
        "header": app.memo(("header", mode, seg.id, metric, metric_b), ms,
                           lambda: seg_header(app, mode, seg.id, metric, metric_b)),
        "graph": _graph(app, mode, seg, metric, w, node),
        "nodes": list(seg.labels),
        "node": node,
        "node_title": _node_title(app, seg, node, states),
        "gallery": _gallery(app, seg, node, ms, states),
        "walk_table": shown_table,
        "walk_choices": walk_choices,
        "walk": None if w is None else str(w),
        "walk_fig_a": (_walk_plot(app, mode, seg, metric, w, figures.METRIC_A, plot) if metric else
                       plot(("empty", no_metric), [], lambda: figures.empty_figure(no_metric))),
        "walk_fig_b": _walk_plot(app, mode, seg, metric_b, w, figures.METRIC_B, plot),
        "prompt": seg.prompt,
        **(node_separation_view(app, seg.id, metric, metric_b, plot=plot) if nodes
           else {"cdf_a": None, "cdf_b": None, "ks_table": None}),
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

    from ....dataset import cached_image
    from ...images.image_fetch import MISSING, OFFLINE

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


def _node_title(app: AppView, seg, node, states) -> str:
    if node not in seg.labels:
        return ""
    n = seg.node(node)
    # the error(s) the node adds relative to its parent (nodes.csv), when the dataset describes them
    adds = f" · adds: *{md_text('; '.join(n.errors))}*" if getattr(n, "errors", ()) else ""
    title = (f"**Node {node}** · {plural(n.level, 'error')} · {plural(len(n.images), 'image')}{adds} "
             f"· click an image to enlarge")
    links = image_links(app.dataset, *states)
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
    states = _node_states(app, seg, node)
    return {"graph": _graph(app, mode, seg, metric, walk, node),
            "gallery": _gallery(app, seg, node, [metric, metric_b], states),
            "node_title": _node_title(app, seg, node, states)}


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
    from ....metametrics.structure import seg_structure

    seg = get_seg(app, seg_id)
    metric = get_metric(app, metric, required=False)
    metric_b = get_metric(app, metric_b, required=False)
    st = seg_structure(seg, mode)
    w = walk_index(walk)
    if w is not None and not 0 <= w < len(st.walks):
        w = None
    return {"graph": _graph(app, mode, seg, metric, w, node),
            "walk_fig_a": _walk_plot(app, mode, seg, metric, w, figures.METRIC_A, plot),
            "walk_fig_b": _walk_plot(app, mode, seg, metric_b, w, figures.METRIC_B, plot)}
