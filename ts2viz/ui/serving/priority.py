"""Visitors first: the app's background warm-up yields while any visitor's call is running.

The warm-up (the Human ratings tab's views at start, the other tag families' slices after a first look)
is numpy work in Python threads of the serving process: it shares the interpreter lock with the visitors'
calls, and a click on the slices heatmap took twice as long while it ran (0.87 s alone, 1.9 s during the
warm-up). Here:

- every event the page wires (:meth:`ts2viz.ui.glue.events.Page.on`) runs inside :func:`visitor_call`, which
  counts the visitor calls running;
- warm-up work runs inside :func:`background`; its loops reach pause points (:func:`pause_point`, also
  installed as :func:`ts2viz.parallel.pause_point`'s hook, so the statistics' own long loops pause too:
  :mod:`ts2viz.metaeval.slices`) where a background thread waits while any visitor call is running;
- the waits of one :func:`background` block add up to at most :data:`CAP_S` seconds, so that a steady
  stream of visitors still lets the warm-up finish;
- a visitor waiting for a value a background thread is computing (the views' shared cache,
  :func:`~ts2viz.ui.callbacks.humaneval.sets.shared_once`) lets that thread run on (:func:`awaiting`):
  otherwise the two would wait for each other until the cap.

A call that is not background work (a visitor's own, a test's) never waits at a pause point.
``TS2VIZ_VISITORS_FIRST=0`` (or :func:`set_enabled`) turns the yielding off: the behaviour before it, the
baseline of ``benchmarks/bench_slices_first_draw.py``.
"""
from __future__ import annotations

import functools
import os
import threading
import time
from contextlib import contextmanager
from typing import Callable

#: the most seconds one background block waits for visitors, all its pauses together
CAP_S = 30.0

_cond = threading.Condition()
_active = 0                    # visitor calls running
_boosted: dict[int, int] = {}  # thread id -> visitors waiting for its computation
_local = threading.local()     # .budget (background: seconds of waiting left), .visitor (calls nested)
_enabled = os.environ.get("TS2VIZ_VISITORS_FIRST", "1").strip() != "0"


def set_enabled(on: bool) -> bool:
    """Turn the yielding on or off (off: background work never waits).

    Parameters
    ----------
    on : bool
        Whether background work yields to visitors.

    Returns
    -------
    bool
        The setting it replaces.
    """
    global _enabled
    old, _enabled = _enabled, bool(on)
    with _cond:
        _cond.notify_all()
    return old


def active_visitors() -> int:
    """How many visitor calls are running now.

    Returns
    -------
    int
        The count (:func:`visitor_call` blocks entered and not left).
    """
    return _active


@contextmanager
def visitor_call():
    """A visitor's call runs in this block: background work waits at its pause points meanwhile.

    Yields
    ------
    None
        The block, counted among the running visitor calls.
    """
    global _active
    with _cond:
        _active += 1
    _local.visitor = getattr(_local, "visitor", 0) + 1
    try:
        yield
    finally:
        _local.visitor -= 1
        with _cond:
            _active -= 1
            _cond.notify_all()


def visitor(fn: Callable) -> Callable:
    """``fn`` with each call inside :func:`visitor_call` (the page's events).

    Parameters
    ----------
    fn : callable
        An event callback (synchronous).

    Returns
    -------
    callable
        The wrapped callback (``functools.wraps``: Gradio reads the same signature).
    """
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with visitor_call():
            return fn(*args, **kwargs)
    return run


@contextmanager
def background(cap_s: float = CAP_S):
    """Background work (a warm-up) runs in this block: it waits at pause points while visitors are served.

    Installs :func:`pause_point` as :func:`ts2viz.parallel.pause_point`'s hook. Nested blocks share the
    outer one's budget.

    Parameters
    ----------
    cap_s : float, default CAP_S
        The most seconds the block's pauses wait, all together.

    Yields
    ------
    list of float
        ``[seconds waited so far]``, updated as the block's pauses wait.
    """
    from ...parallel import set_pause_hook

    set_pause_hook(pause_point)
    outer = getattr(_local, "budget", None)
    if outer is not None:
        yield outer
        return
    _local.budget = budget = [0.0, float(cap_s)]
    try:
        yield budget
    finally:
        _local.budget = None


def is_background() -> bool:
    """Whether the calling thread runs background work (inside :func:`background`).

    Returns
    -------
    bool
        True inside a :func:`background` block.
    """
    return getattr(_local, "budget", None) is not None


def pause_point() -> None:
    """Wait here while any visitor call is running, when this is background work with budget left.

    Returns at once for a thread outside :func:`background`, one a visitor is waiting for
    (:func:`awaiting`), with the yielding off, or once the block's :data:`CAP_S` seconds are spent.
    """
    budget = getattr(_local, "budget", None)
    if budget is None or not _enabled:
        return
    me = threading.get_ident()
    with _cond:
        while _enabled and _active > 0 and not _boosted.get(me) and budget[0] < budget[1]:
            t0 = time.monotonic()
            _cond.wait(timeout=budget[1] - budget[0])
            budget[0] += time.monotonic() - t0


@contextmanager
def awaiting(owner: int | None):
    """A visitor's call waits in this block for a computation on thread ``owner``: that thread runs on.

    Outside a visitor call (a background thread waiting for another) it does nothing.

    Parameters
    ----------
    owner : int or None
        The computing thread's ``threading.get_ident()`` (None: nothing to do).

    Yields
    ------
    None
        The block.
    """
    if owner is None or not getattr(_local, "visitor", 0) or owner == threading.get_ident():
        yield
        return
    with _cond:
        _boosted[owner] = _boosted.get(owner, 0) + 1
        _cond.notify_all()
    try:
        yield
    finally:
        with _cond:
            _boosted[owner] -= 1
            if not _boosted[owner]:
                del _boosted[owner]
