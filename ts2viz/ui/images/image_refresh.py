"""Images that land after a SEG view was drawn reach the open page without a click.

How (measured in ``benchmarks/bench_hub_images.py``): a view event returns, besides the view, what its
images showed (:func:`shown`: a small per-session record) and switches on a per-session ``gr.Timer``
while any of them is still loading. Each tick (:func:`tick`, off the queue: no model or view waits
behind it) compares what the graph's thumbnails and the open node's gallery would show now with what
was drawn, and redraws only the part that changed: once all of the view's images have settled
(arrived, missing or offline), or every :data:`PROGRESS_S` seconds while a slow hub still delivers. A
tick that finds nothing new sends nothing back (no redraw, no flicker); the timer goes off when the
view has settled, or after :data:`GIVE_UP_S` seconds.

Why not wait in the view event itself: view events run :data:`ts2viz.ui.glue.events.VIEW_CONCURRENCY` at a
time, and a visitor's wait for the hub would hold everyone else's views. A streamed (generator)
event holds its queue slot the same way.

The same events warm the cache ahead of the visitor (:func:`warm_neighbours`, :func:`warm_segs`): the
thumbnails of the previous and next SEG and of the failure finder's top rows are queued behind the
visitor's own images (:mod:`ts2viz.ui.images.image_fetch`: bounded concurrency and disk budget).
"""
from __future__ import annotations

import os
import time
from typing import Iterable

from .image_fetch import LOADING, NEIGHBOUR, VIEW, WARM
from .thumbs import GALLERY, THUMB, thumb_files


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


#: seconds between two looks at a view's pending images (env ``TS2VIZ_IMAGE_TICK``; 0 turns the live
#: redraw off: images then show at the visitor's next event, as before issue 26)
TICK_S = _env_float("TS2VIZ_IMAGE_TICK", 0.5)
#: while images still arrive, the view is redrawn at most this often (seconds)
PROGRESS_S = 3.0
#: a view whose images are still loading after this long stops asking (seconds)
GIVE_UP_S = 90.0
#: how many of the failure finder's top rows are warmed
FINDER_ROWS = 5


def live() -> bool:
    """Whether arriving images are pushed to open views (``TS2VIZ_IMAGE_TICK`` > 0).

    Returns
    -------
    bool
        True when the live redraw is on.
    """
    return TICK_S > 0


def _node(seg, node):
    return node if node in seg.labels else seg.labels[0]


def view_files(seg, node) -> tuple[list[str], list[str]]:
    """The images of a SEG view: the graph's thumbnails and the open node's gallery.

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.
    node : str or None
        The open node (its first node if not one of the SEG's).

    Returns
    -------
    graph : list of str
        The thumbnails' file names.
    gallery : list of str
        The open node's images.
    """
    return thumb_files(seg), [im.file_name for im in seg.node(_node(seg, node)).images]


def shown(app, seg_id, node=None) -> dict | None:
    """What the view of a SEG with a node open shows now, as a small record.

    Call it *before* building the view: an image that lands in between is then redrawn once more, never
    missed. Queues the view's images first (the visitor's own, ahead of everything).

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str or None
        The SEG.
    node : str or None, default None
        The open node.

    Returns
    -------
    dict or None
        ``seg``, ``node``, the states of the ``graph``'s and the ``gallery``'s images, ``t0`` and
        ``drawn`` (times); ``None`` for no SEG.
    """
    if seg_id in (None, "") or not hasattr(app, "thumbs"):
        return None
    try:
        seg = app.dataset[int(seg_id)]
    except (KeyError, TypeError, ValueError):
        return None
    node = _node(seg, node)
    g, gal = view_files(seg, node)
    app.thumbs.request(list(dict.fromkeys(g + gal)), VIEW)
    return {"seg": seg.id, "node": node, "graph": app.thumbs.states(g, THUMB),
            "gallery": app.thumbs.states(gal, GALLERY), "t0": time.time(), "drawn": time.time()}


def settled(rec: dict | None) -> bool:
    """Whether none of a view's images is still loading.

    Parameters
    ----------
    rec : dict or None
        A record of :func:`shown`.

    Returns
    -------
    bool
        True when settled (or no record).
    """
    return rec is None or (LOADING not in rec["graph"] and LOADING not in rec["gallery"])


def timer_on(rec: dict | None) -> bool:
    """Whether the view's timer should tick: live redraw on and some of its images still loading.

    Parameters
    ----------
    rec : dict or None
        A record of :func:`shown`.

    Returns
    -------
    bool
        True to keep ticking.
    """
    return live() and not settled(rec)


def warm_neighbours(app, seg_id) -> int:
    """Queue the thumbnails of the SEGs before and after one (dataset order) behind the visitor's images.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG on view.

    Returns
    -------
    int
        How many images were queued.
    """
    ids = list(app.dataset.segs)
    try:
        i = ids.index(int(seg_id))
    except (ValueError, TypeError):
        return 0
    near = [ids[j] for j in (i + 1, i - 1) if 0 <= j < len(ids)]
    return warm_segs(app, near, NEIGHBOUR)


def warm_segs(app, seg_ids: Iterable, priority: int = NEIGHBOUR) -> int:
    """Queue the thumbnails of some SEGs' graphs.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_ids : iterable
        SEG ids (ones that are not the dataset's are skipped).
    priority : int, default NEIGHBOUR
        The download priority.

    Returns
    -------
    int
        How many images were queued.
    """
    files: list[str] = []
    for s in seg_ids:
        try:
            files += thumb_files(app.dataset[int(s)])
        except (KeyError, TypeError, ValueError):
            continue
    return app.thumbs.request(files, priority) if files else 0


def warm_finder(app, table: dict | None, rows: int = FINDER_ROWS) -> int:
    """Queue the thumbnails of the SEGs in the failure finder's top rows.

    Parameters
    ----------
    app : AppView
        The session's view.
    table : dict or None
        The finder's table value (its first column is the SEG id).
    rows : int, default FINDER_ROWS
        How many rows.

    Returns
    -------
    int
        How many images were queued.
    """
    if not table or not table.get("data"):
        return 0
    return warm_segs(app, [r[0] for r in table["data"][:rows]], NEIGHBOUR)


def warm_all(app) -> int:
    """Queue every thumbnail of the dataset (an operator's warm-up at start), behind any visitor.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    int
        How many images were queued.
    """
    return warm_segs(app, list(app.dataset.segs), WARM)


def warm_start(app, what: str = "first") -> int:
    """The warm-up at start (``TS2VIZ_PREFETCH``).

    Parameters
    ----------
    app : AppView
        The session's view.
    what : str, default "first"
        ``"first"``: the first SEG's view (its graph and first node's gallery, what every visitor sees
        first) and the next SEG's thumbnails; ``"all"``: every thumbnail; ``"off"``: nothing.

    Returns
    -------
    int
        How many images were queued.
    """
    what = (what or "first").strip().lower()
    if what == "off" or not app.dataset.segs:
        return 0
    if what == "all":
        return warm_all(app)
    seg = next(iter(app.dataset.segs.values()))
    g, gal = view_files(seg, None)
    return app.thumbs.request(list(dict.fromkeys(g + gal)), NEIGHBOUR) + warm_neighbours(app, seg.id)


def tick(app, rec: dict | None, seg_id, node) -> tuple[bool, bool, dict | None]:
    """One look at an open view (the per-session ``gr.Timer``'s tick): what to redraw.

    Nothing is redrawn unless what a part shows changed, and while images still load, at most every
    :data:`PROGRESS_S` seconds.

    Parameters
    ----------
    app : AppView
        The session's view.
    rec : dict or None
        What was drawn (from :func:`shown` or the last tick).
    seg_id : int or str or None
        The SEG on the page now.
    node : str or None
        The node open now.

    Returns
    -------
    redraw_graph : bool
        Redraw the graph's thumbnails.
    redraw_gallery : bool
        Redraw the node's gallery.
    new_record : dict or None
        The record to keep; ``None`` when the timer should stop.
    """
    if rec is None:
        return False, False, None
    now_rec = shown(app, seg_id, node)
    if now_rec is None:
        return False, False, None
    if (now_rec["seg"], now_rec["node"]) != (rec["seg"], rec["node"]):
        # the visitor moved on and the view event that draws the new SEG or node has not answered yet
        # (it brings its own record): nothing to redraw here, the page's values may even be half-updated
        return False, False, (None if time.time() - rec["t0"] > GIVE_UP_S else rec)
    g = now_rec["graph"] != rec["graph"]
    gal = now_rec["gallery"] != rec["gallery"]
    now = time.time()
    done = settled(now_rec)
    if now - rec["t0"] > GIVE_UP_S:
        return g, gal, None
    if not (g or gal):
        return False, False, (None if done else rec)
    if not done and now - rec["drawn"] < PROGRESS_S:
        return False, False, rec          # more are coming: one redraw for several images
    now_rec["t0"] = rec["t0"]
    return g, gal, (None if done else now_rec)
