"""The SEG drawn as HTML: one column per error level, SVG edges, a card per node.

Pure function of data; cards carry ``data-node`` so a click handler in the page can report which
node was clicked.
"""
from __future__ import annotations

import html
import math
from typing import Callable, Mapping, Sequence

from ...display import plural
from ..images.thumbs import N_THUMBS

CW, CH = 164, 112        # card size
GX, GY = 36, 14          # gaps between columns / cards
PAD = 12


def _lerp(a: str, b: str, t: float) -> str:
    ca = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def goodness_color(t: float) -> str:
    """The colour of a goodness between 0 and 1: orange (0), light grey (0.5), blue (1).

    As :data:`ts2viz.figures.GOODNESS_SCALE` (safe for red-green colour blindness); grey for NaN.

    Parameters
    ----------
    t : float or None
        The goodness (clipped to [0, 1]); NaN or ``None``: no value.

    Returns
    -------
    str
        A ``#rrggbb`` colour.
    """
    from ...figures import GOODNESS_SCALE

    if t is None or math.isnan(t):
        return "#9ca3af"
    t = max(0.0, min(1.0, t))
    (_, lo), (_, mid), (_, hi) = GOODNESS_SCALE
    return _lerp(lo, mid, t * 2) if t < 0.5 else _lerp(mid, hi, (t - 0.5) * 2)


def ink_on(color: str) -> str:
    """The text colour readable on a ``#rrggbb`` background.

    Dark ink on light colours (the pale middle of the scale), white on dark ones (WCAG relative luminance
    above 0.4 counts as light).

    Parameters
    ----------
    color : str
        The background, ``#rrggbb`` (anything else: white ink).

    Returns
    -------
    str
        ``"#1f2937"`` or ``"white"``.

    Examples
    --------
    >>> ink_on("#ffffff"), ink_on("#1e3a8a")
    ('#1f2937', 'white')
    """
    if not (isinstance(color, str) and len(color) == 7 and color.startswith("#")):
        return "white"
    lin = [(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
           for c in (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))]
    return "#1f2937" if 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] > 0.4 else "white"


def seg_graph_html(seg, *, node_means: Mapping[str, float], metric: str | None,
                   lower_is_better: bool = False, thumb_uri: Callable[[str], str] | None = None,
                   walk: Sequence[str] | None = None, walk_name: str = "", selected: str | None = None,
                   thumb_note: Callable[[str], str] | None = None,
                   full_range: tuple[float, float] | None = None) -> str:
    """HTML of a SEG graph: one column per error level, SVG edges, a card per node coloured by its mean score.

    Cards carry ``data-node`` so a click handler in the page can report which node was clicked. Node
    labels, errors, file names and the metric's name are escaped.

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.
    node_means : mapping of str to float
        Mean score of the chosen metric per node label (NaN = unscored).
    metric : str or None
        The metric's name (legend), or ``None``.
    lower_is_better : bool, default False
        Reverse the colour scale.
    thumb_uri : callable or None, default None
        File name -> image URL (e.g. a ``data:`` URI), or ``None`` when the image is unavailable (a
        placeholder tile with the file name is drawn); no thumbnails at all if ``thumb_uri`` is ``None``.
    walk : sequence of str or None, default None
        Node labels of a walk to highlight.
    walk_name : str, default ""
        The walk's name in the legend.
    selected : str or None, default None
        Label of the node whose gallery is open.
    thumb_note : callable or None, default None
        File name -> why its image is not shown (``loading``, ``offline``, ``missing``), written on its
        placeholder tile (default: ``unavailable``).
    full_range : (float, float) or None, default None
        The metric's lowest and highest score over the whole dataset. With it, node colours are scaled to
        that range (``--node-color``: 0.510 and 0.530 get near colours when scores span 0 to 1) and each
        card also carries its colour on this SEG's own range (``--node-color-seg``: the SEG's worst node
        mean is the scale's one end, its best the other); the legend offers both and the page switches
        between them without a server round trip (the ``seg-range`` class, assets/app.css). Without it,
        colours use this SEG's range only.

    Returns
    -------
    str
        The HTML.
    """
    levels = list(seg.levels)
    cols = {lv: [n for n in seg.nodes if n.level == lv] for lv in levels}
    tallest = max(len(v) for v in cols.values())
    height = PAD * 2 + tallest * CH + (tallest - 1) * GY + 28
    width = PAD * 2 + len(levels) * CW + (len(levels) - 1) * GX
    pos: dict[str, tuple[float, float]] = {}
    for i, lv in enumerate(levels):
        nodes = cols[lv]
        colh = len(nodes) * CH + (len(nodes) - 1) * GY
        y0 = 28 + PAD + (height - 28 - 2 * PAD - colh) / 2
        for j, n in enumerate(nodes):
            pos[n.label] = (PAD + i * (CW + GX), y0 + j * (CH + GY))

    finite = [v for v in node_means.values() if v is not None and not math.isnan(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)

    def t_of(v, lo=lo, hi=hi):
        if v is None or math.isnan(v):
            return float("nan")
        t = 0.5 if hi == lo else (v - lo) / (hi - lo)
        return 1 - t if lower_is_better else t

    full = None
    if full_range is not None and all(v is not None and math.isfinite(v) for v in full_range):
        full = (float(min(full_range)), float(max(full_range)))

    walk_nodes = list(dict.fromkeys(walk)) if walk else []
    walk_edges = {(a, b) for a, b in zip(walk_nodes, walk_nodes[1:])}
    parts = [f'<div class="seg-graph-wrap"><div class="seg-graph" style="width:{width}px;height:{height}px">']
    for i, lv in enumerate(levels):
        x = PAD + i * (CW + GX)
        parts.append(f'<div class="seg-level" style="left:{x}px;width:{CW}px">'
                     f'{plural(lv, "error")}</div>')
    # edges
    svg = [f'<svg class="seg-edges" width="{width}" height="{height}" viewBox="0 0 {width} {height}">']
    hl_svg = []
    for a, b in seg.adjacent_pairs():
        (xa, ya), (xb, yb) = pos[a], pos[b]
        x1, y1, x2, y2 = xa + CW, ya + CH / 2, xb, yb + CH / 2
        mid = (x1 + x2) / 2
        d = f"M{x1:.0f},{y1:.0f} C{mid:.0f},{y1:.0f} {mid:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
        if (a, b) in walk_edges:
            hl_svg.append(f'<path d="{d}" class="edge edge-walk"/>')
        else:
            svg.append(f'<path d="{d}" class="edge{" edge-dim" if walk_nodes else ""}"/>')
    svg += hl_svg + ["</svg>"]
    parts.append("".join(svg))
    # cards
    for n in seg.nodes:
        x, y = pos[n.label]
        mean = node_means.get(n.label, float("nan"))
        col = goodness_color(t_of(mean))
        seg_col = ""
        if full is not None:     # the default colour on the metric's full range; this SEG's range on request
            seg_col = f";--node-color-seg:{col};--node-ink-seg:{ink_on(col)}"
            col = goodness_color(t_of(mean, *full))
        seg_col = f";--node-ink:{ink_on(col)}{seg_col}"
        cls = ["seg-node"]
        if n.label in walk_nodes:
            cls.append("in-walk")
        elif walk_nodes:
            cls.append("dim")
        if n.label == selected:
            cls.append("selected")
        lab = html.escape(n.label)
        thumbs = ""
        if thumb_uri is not None:
            imgs = []
            for im in n.images[:N_THUMBS]:
                uri = thumb_uri(im.file_name)
                name = html.escape(im.file_name, quote=True)
                if uri is None:
                    short = html.escape(im.file_name.rsplit("/", 1)[-1].rsplit(".", 1)[0][-6:])
                    why = html.escape(thumb_note(im.file_name) if thumb_note else "unavailable")
                    imgs.append(f'<span class="ph" data-state="{why}" title="{name}: image {why}">'
                                f'{short}<i>{why}</i></span>')
                else:
                    imgs.append(f'<img src="{html.escape(uri, quote=True)}" alt="{name}" loading="lazy"/>')
            more = len(n.images) - N_THUMBS
            if more > 0:
                imgs.append(f'<span class="more">+{more}</span>')
            thumbs = f'<div class="thumbs">{"".join(imgs)}</div>'
        mean_txt = "–" if mean is None or math.isnan(mean) else f"{mean:.3f}"
        # the error(s) the node adds relative to its parent (nodes.csv), on the card and in its hover text
        errs = "; ".join(getattr(n, "errors", ()) or ())
        errs_html = f'<div class="errs">+ {html.escape(errs)}</div>' if errs else ""
        errs_title = html.escape(f" · adds: {errs}", quote=True) if errs else ""
        parts.append(
            f'<div class="{" ".join(cls)}" data-node="{lab}" role="button" tabindex="0" '
            f'title="node {lab}: {plural(len(n.images), "image")}, mean {mean_txt}{errs_title}" '
            f'style="left:{x:.0f}px;top:{y:.0f}px;width:{CW}px;height:{CH}px;--node-color:{col}{seg_col}">'
            f'<div class="head"><span class="label">{lab}</span>'
            f'<span class="count">{len(n.images)} img</span>'
            f'<span class="mean">{mean_txt}</span></div>{errs_html}{thumbs}</div>')
    parts.append("</div></div>")
    legend = ""
    if metric:
        lo_c, hi_c = (goodness_color(1), goodness_color(0)) if lower_is_better else (goodness_color(0), goodness_color(1))
        legend = (f'<div class="seg-legend"><span>node mean of <b>{html.escape(metric)}</b></span>'
                  f'<span class="scale" style="background:linear-gradient(90deg,{lo_c},{goodness_color(0.5)},{hi_c})">'
                  + (f'</span><span class="range-full" title="node colours on the metric\'s lowest to highest score '
                     f'over the whole dataset">{full[0]:.3f} … {full[1]:.3f} (all images)</span>'
                     f'<span class="range-seg" title="node colours on this SEG\'s lowest to highest node mean">'
                     f'{lo:.3f} … {hi:.3f} (this SEG)</span>'
                     '<span class="scale-pick" role="group" aria-label="colour scale">colour scale: '
                     '<button type="button" data-scale="full">metric\'s full range</button>'
                     '<button type="button" data-scale="seg">this SEG</button></span>'
                     if full is not None else f'</span><span>{lo:.3f} … {hi:.3f}</span>')
                  + (f'<span class="walk-key">highlighted: {html.escape(walk_name)}</span>' if walk_nodes else "")
                  + '<span class="hint">click a node to open its images</span></div>')
    return legend + "".join(parts)
