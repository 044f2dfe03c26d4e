"""A bounded, thread-safe memo for results of the app's views.

Many visitors look at the same SEG with the same metric: the parts of a view that depend only on
(SEG, metric, mode) are built once and reused. The memo holds at most ``max_bytes`` (estimated) and
drops the least recently used entries first, so memory stays flat however many views are asked for.
Concurrent requests for the same key build it once: the others wait for that result instead of
building it again (fifty visitors opening the app at the same moment ask for the same first view).
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import orjson


def size_of(value: Any) -> int:
    """A cheap estimate of the memory a value holds.

    Strings and bytes by length, arrays by ``nbytes``, DataFrames by their columns' item sizes (objects and
    strings counted as 8 bytes) and 64 bytes a cell, a pandas Styler by twice its table, Gradio's plot data
    by its JSON, shallow containers by their JSON length times the overhead of Python objects.

    Parameters
    ----------
    value : object
        Any value.

    Returns
    -------
    int
        Bytes, estimated.

    Examples
    --------
    >>> import numpy as np
    >>> size_of("abc"), size_of(np.zeros(100))
    (67, 928)
    """
    if isinstance(value, (str, bytes, bytearray)):
        return len(value) + 64
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes + 128
    dtypes = getattr(value, "dtypes", None)
    if dtypes is not None and hasattr(value, "columns"):
        # a DataFrame: each column's item size (8 for objects and strings) per row, 64 a cell for the
        # Python objects, and its index; from the dtypes, not DataFrame.memory_usage (a tenth of a first
        # explorer view)
        try:
            rows = len(value)
            return sum(int(getattr(t, "itemsize", 8) or 8) for t in dtypes) * rows + 64 * value.size + 8 * rows + 512
        except Exception:  # noqa: BLE001 - only an estimate
            return 4096
    data = getattr(value, "data", None)
    if type(value).__name__ == "Styler" and hasattr(data, "columns"):
        # a pandas Styler: its table, twice (its display values and context once rendered), and its own parts
        return 2 * size_of(data) + 4096
    plot = getattr(value, "plot", None)        # Gradio's PlotData: a JSON string
    if isinstance(plot, str):
        return len(plot) + 128
    if isinstance(value, (dict, list, tuple)):
        # nested tables and choices: their JSON length, times the overhead of Python objects
        if isinstance(value, tuple) and not all(isinstance(v, (str, int, float, type(None))) for v in value):
            return 56 + sum(size_of(v) for v in value)
        try:
            return 4 * len(orjson.dumps(value, default=str, option=orjson.OPT_SERIALIZE_NUMPY
                                        | orjson.OPT_NON_STR_KEYS)) + 256
        except TypeError:
            return 4096
    return sys.getsizeof(value, 256)


class _Pending:
    """A value being built by one thread, waited for by others."""

    __slots__ = ("done", "value", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class Memo:
    """A least-recently-used memo bounded by the estimated size of its values; thread-safe.

    Callers asking for a key while it is being built wait for that build. A value larger than a quarter of
    ``max_bytes`` is returned but not kept. An exception from ``build`` reaches every caller waiting for
    it, and nothing is kept. ``bytes``, ``hits`` and ``misses`` count what it holds and how it was used.

    Parameters
    ----------
    max_bytes : int
        The most bytes (estimated) it holds; the least recently used entries go first.
    sizer : callable, default size_of
        The estimate of a value's bytes.

    Examples
    --------
    >>> m = Memo(1 << 20)
    >>> m.get(("seg", 3), lambda: "built"), m.get(("seg", 3), lambda: "not again")
    ('built', 'built')
    >>> m.discard(lambda key: key[0] == "seg"), len(m)
    (1, 0)
    """

    def __init__(self, max_bytes: int, *, sizer: Callable[[Any], int] = size_of):
        self.max_bytes = int(max_bytes)
        self.sizer = sizer
        self._lock = threading.Lock()
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._building: dict[Hashable, _Pending] = {}
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        """The number of entries held."""
        return len(self._items)

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The value for a key, built by ``build()`` if it is not held.

        Parameters
        ----------
        key : hashable
            Names everything the value depends on.
        build : callable
            ``build()`` makes the value.

        Returns
        -------
        object
            The value.

        Raises
        ------
        BaseException
            Whatever ``build`` raised (in every caller waiting for that build).
        """
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return hit[0]
            pending = self._building.get(key)
            owner = pending is None
            if owner:
                pending = self._building[key] = _Pending()
                self.misses += 1
            else:
                self.hits += 1
        if not owner:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value
        try:
            pending.value = build()
            self._put(key, pending.value)
            return pending.value
        except BaseException as e:
            pending.error = e
            raise
        finally:
            with self._lock:
                self._building.pop(key, None)
            pending.done.set()

    def _put(self, key: Hashable, value: Any) -> None:
        size = self.sizer(value)
        if size > self.max_bytes // 4:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._items[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes and self._items:
                _, (_, s) = self._items.popitem(last=False)
                self.bytes -= s

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._items.clear()
            self.bytes = 0

    def discard(self, match: Callable[[Hashable], bool]) -> int:
        """Drop the entries whose key ``match`` accepts (e.g. a closed session's).

        Parameters
        ----------
        match : callable
            ``match(key) -> bool``.

        Returns
        -------
        int
            How many entries went.
        """
        with self._lock:
            keys = [k for k in self._items if match(k)]
            for k in keys:
                self.bytes -= self._items.pop(k)[1]
        return len(keys)
