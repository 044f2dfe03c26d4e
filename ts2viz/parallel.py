"""The CPUs this process may use, and a map of independent numpy work over threads that never outnumber them.

numpy releases the interpreter lock in its matrix products, sorts, partitions and most element-wise
loops, so independent pieces of array work (one slice's resampled statistics, one statistic's
intervals) run side by side on threads. The threads never outnumber the CPUs the process may run on
(:func:`usable_cpus`: the affinity mask of a container's or a cluster job's share, else the machine's),
and each piece runs its BLAS calls on one thread (the caller sets that: see
:func:`one_blas_thread`), so a 2-core machine runs two pieces at once and
no more. ``TS2VIZ_THREADS`` sets the number outright (1: everything on the calling thread).

Long loops of background work call :func:`pause_point` between their pieces: a no-op until a host (the app:
:mod:`ts2viz.ui.serving.priority`) sets a hook with :func:`set_pause_hook`, so that its warm-up yields the
interpreter to a visitor's call. The statistics that call it import nothing of the host.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: what :func:`pause_point` calls (None: nothing)
_PAUSE_HOOK: Callable[[], None] | None = None


def set_pause_hook(hook: Callable[[], None] | None) -> Callable[[], None] | None:
    """Set what :func:`pause_point` calls.

    Parameters
    ----------
    hook : callable or None
        Called with no argument at every pause point, on the thread of the loop that reached it (it decides
        whether that thread waits, and for how long); None: pause points do nothing.

    Returns
    -------
    callable or None
        The hook it replaces.
    """
    global _PAUSE_HOOK
    old, _PAUSE_HOOK = _PAUSE_HOOK, hook
    return old


def pause_point() -> None:
    """A point between two pieces of a long computation where background work may wait (the hook's choice).

    Examples
    --------
    >>> from ts2viz.parallel import pause_point, set_pause_hook
    >>> calls = []
    >>> old = set_pause_hook(lambda: calls.append(1))
    >>> pause_point(); _ = set_pause_hook(old); pause_point()
    >>> calls
    [1]
    """
    hook = _PAUSE_HOOK
    if hook is not None:
        hook()


def usable_cpus() -> int:
    """How many CPUs this process may run on.

    Returns
    -------
    int
        The size of the process's affinity mask where the system has one, else ``os.cpu_count()``; at
        least 1.

    Examples
    --------
    >>> from ts2viz.parallel import usable_cpus
    >>> usable_cpus() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def array_threads(limit: int | None = None) -> int:
    """How many threads :func:`thread_map` runs.

    Parameters
    ----------
    limit : int or None, default None
        At most this many (e.g. the number of pieces of work).

    Returns
    -------
    int
        ``TS2VIZ_THREADS`` when set to a positive integer, else :func:`usable_cpus`; never more than
        ``limit``, at least 1.

    Examples
    --------
    >>> from ts2viz.parallel import array_threads
    >>> array_threads(limit=1)
    1
    """
    env = os.environ.get("TS2VIZ_THREADS", "").strip()
    n = int(env) if env.isdigit() and int(env) > 0 else usable_cpus()
    if limit is not None:
        n = min(n, int(limit))
    return max(1, n)


def thread_map(fn: Callable[[T], R], items: Iterable[T], *, threads: int | None = None) -> list[R]:
    """``[fn(x) for x in items]``, the calls spread over :func:`array_threads` threads.

    The results come back in the order of ``items``; an exception from any call is raised here after the
    calls already started have finished. With one thread (or one item) the calls run on the calling
    thread, in order.

    Parameters
    ----------
    fn : callable
        Called once per item; the calls must be independent of each other (no shared state written
        except disjoint parts of preallocated arrays).
    items : iterable
        The inputs.
    threads : int or None, default None
        The number of threads; None: :func:`array_threads` limited to the number of items.

    Returns
    -------
    list
        ``fn``'s results, in the order of ``items``.

    Examples
    --------
    >>> from ts2viz.parallel import thread_map
    >>> thread_map(lambda x: x * x, range(5))
    [0, 1, 4, 9, 16]
    """
    items = list(items)
    n = array_threads(limit=len(items)) if threads is None else max(1, min(int(threads), len(items) or 1))
    if n <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(fn, items))


def one_blas_thread():
    """A context that limits BLAS to one thread (threadpoolctl), or does nothing without threadpoolctl.

    Returns
    -------
    contextlib.AbstractContextManager
        The context.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                                   # optional: only speed depends on it
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")
