"""Label placement: scatter labels, the dense middle of a scatter, and a vertical slot per KS label.

Scatter labels collide with no other label nor point (:func:`place_labels`); :func:`dense_cluster`
finds the dense middle of a scatter; :func:`ks_label_slots` gives each KS label its own vertical slot.
Deterministic, at a nominal plot size, pure Python and numpy.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .style import text_width


#: the plot width (px) scatter labels are placed for; narrower screens hide them (assets/app.css), wider
#: ones only move them apart
LABEL_PLOT_WIDTH = 900
#: label offsets tried around a point, nearest first (px); beyond the first ring a leader line is drawn
LABEL_RINGS = (0, 14, 28, 44, 62, 84)
_DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1), (0.75, -0.75), (-0.75, -0.75), (0.75, 0.75), (-0.75, 0.75))


def _overlaps(a, b, gap: float = 0.0) -> bool:
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def _leader_blocked(p, q, boxes, dots) -> bool:
    """Whether the segment p-q passes through any of the boxes (sampled every 3 px)."""
    n = max(2, int(math.hypot(q[0] - p[0], q[1] - p[1]) / 3))
    for k in range(1, n + 1):
        x, y = p[0] + (q[0] - p[0]) * k / n, p[1] + (q[1] - p[1]) * k / n
        if any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in boxes) or \
                any(d[0] <= x <= d[2] and d[1] <= y <= d[3] for d in dots):
            return True
    return False


def place_labels(xs: Sequence[float], ys: Sequence[float], texts: Sequence[str], *, x_range: Sequence[float],
                 y_range: Sequence[float], width: float, height: float, size: float = 10,
                 marker: float = 11) -> list[dict | None]:
    """Place a text label beside each point so that no two labels overlap, nor a label a point.

    Greedy and deterministic: the most crowded points choose first, each taking the first free spot of
    the rings :data:`LABEL_RINGS` around it (right, left, above, below, then the diagonals); a point
    without a free spot gets no label (its name stays on hover).

    Parameters
    ----------
    xs, ys : sequence of float
        Point positions in data units (NaN points get no label and block nothing).
    texts : sequence of str
        The labels.
    x_range, y_range : sequence of float
        The axis ranges shown, (low, high).
    width, height : float
        The plot area in pixels the placement is made for.
    size : float, default 10
        Font size in px.
    marker : float, default 11
        Marker diameter in px.

    Returns
    -------
    list of dict or None
        Per point ``None`` or a dict ``x, y`` (the label's anchor, data units), ``xanchor``,
        ``yanchor``, ``leader`` (whether a line should join the label to its point) and ``box`` (x0, y0,
        x1, y1 in pixels, y downwards). The anchor lies inside the box, so boxes that are apart at
        ``width`` stay apart on any wider plot: anchors move apart, box sizes do not.

    Examples
    --------
    >>> from ts2viz.figures.labels import place_labels
    >>> spots = place_labels([0.1, 0.5, 0.9], [0.2, 0.5, 0.8], ["CLIPScore", "TIFA", "DSG"],
    ...                      x_range=(0, 1), y_range=(0, 1), width=400, height=300)
    >>> [(s["xanchor"], s["leader"]) for s in spots]
    [('left', False), ('left', False), ('left', False)]
    """
    x0, x1 = x_range
    y0, y1 = y_range
    px = [(x - x0) / (x1 - x0) * width if np.isfinite(x) and np.isfinite(y) else np.nan for x, y in zip(xs, ys)]
    py = [(y1 - y) / (y1 - y0) * height if np.isfinite(x) and np.isfinite(y) else np.nan for x, y in zip(xs, ys)]
    pts = [(a, b) for a, b in zip(px, py) if np.isfinite(a)]
    half = marker / 2 + 1
    dots = [(a - half, b - half, a + half, b + half) for a, b in pts]
    order = sorted((i for i in range(len(texts)) if np.isfinite(px[i])),
                   key=lambda i: (-sum(math.hypot(px[i] - a, py[i] - b) < 60 for a, b in pts), i))
    placed: list[tuple] = []
    out: list[dict | None] = [None] * len(texts)
    for i in order:
        w, h = text_width(texts[i], size) + 6, size * 1.25 + 4
        for ring in LABEL_RINGS:
            r = half + 2 + ring
            spot = None
            for dx, dy in _DIRECTIONS:
                ax, ay = px[i] + dx * r, py[i] + dy * r
                bx = ax if dx > 0 else ax - w if dx < 0 else ax - w / 2
                by = ay - h if dy < 0 else ay if dy > 0 else ay - h / 2
                box = (bx, by, bx + w, by + h)
                if box[0] < 0 or box[1] < 0 or box[2] > width or box[3] > height:
                    continue
                if any(_overlaps(box, b, 2) for b in placed) or any(_overlaps(box, d) for d in dots):
                    continue
                if ring and _leader_blocked((px[i], py[i]), (ax, ay), placed, [d for j, d in enumerate(dots)
                                                                              if pts[j] != (px[i], py[i])]):
                    continue      # the leader line would run under another label or through a point
                spot = dict(x=x0 + ax / width * (x1 - x0), y=y1 - ay / height * (y1 - y0),
                            xanchor="left" if dx > 0 else "right" if dx < 0 else "center",
                            yanchor="bottom" if dy < 0 else "top" if dy > 0 else "middle",
                            leader=bool(ring), box=box)
                break
            if spot is not None:
                placed.append(spot["box"])
                out[i] = spot
                break
    return out


def dense_cluster(xs: Sequence[float], ys: Sequence[float], k: float = 3.0) -> np.ndarray:
    """Which points lie in the dense middle of a scatter.

    Parameters
    ----------
    xs, ys : sequence of float
        Point positions.
    k : float, default 3.0
        The cut-off in scaled median absolute deviations.

    Returns
    -------
    numpy.ndarray
        Bool per point: within ``k`` scaled median absolute deviations (1.4826 MAD) of the median on
        both axes (the modified z-score rule).

    Notes
    -----
    NaN policy: NaN points are outside; an axis with no finite value puts every point outside.

    Examples
    --------
    >>> from ts2viz.figures.labels import dense_cluster
    >>> dense_cluster([1.0, 1.1, 0.9, 1.05, 5.0], [2.0, 2.1, 1.9, 2.0, 9.0]).tolist()
    [True, True, True, True, False]
    """
    keep = np.ones(len(xs), dtype=bool)
    for v in (np.asarray(xs, float), np.asarray(ys, float)):
        ok = np.isfinite(v)
        if not ok.any():
            return np.zeros(len(xs), dtype=bool)
        med = np.median(v[ok])
        mad = 1.4826 * np.median(np.abs(v[ok] - med))
        keep &= ok & (np.abs(np.where(ok, v, med) - med) <= k * mad if mad > 0 else ok)
    return keep


#: KS labels: font size and the height (px) of one label's slot
KS_LABEL_SIZE = 10
KS_SLOT_PX = 18


def ks_label_slots(segments: Sequence[tuple[float, float]], n_slots: int, y_lo: float, slot: float) -> list[int]:
    """A distinct vertical slot for each KS label, as near its segment as possible.

    Shorter segments choose first (they have fewer slots beside them); each takes the free slot nearest
    its midpoint, preferring one inside the segment. Labels in distinct slots cannot overlap, however
    wide or narrow the plot is.

    Parameters
    ----------
    segments : sequence of (float, float)
        The (y0, y1) extent of each labelled KS segment, in the order labels have priority (at most
        ``n_slots`` of them).
    n_slots : int
        Number of slots.
    y_lo : float
        Centre of slot 0.
    slot : float
        Height of a slot; slot ``k`` is centred at ``y_lo + k * slot``.

    Returns
    -------
    list of int
        The slot index of each segment.
    """
    free = set(range(n_slots))
    out = [0] * len(segments)
    for i in sorted(range(len(segments)), key=lambda i: (segments[i][1] - segments[i][0], i)):
        y0, y1 = segments[i]
        mid = (y0 + y1) / 2
        k = min(free, key=lambda k: (not (y0 <= y_lo + k * slot <= y1), abs(y_lo + k * slot - mid), k))
        free.remove(k)
        out[i] = k
    return out
