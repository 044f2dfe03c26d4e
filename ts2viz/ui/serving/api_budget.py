"""What a public app's visitors spend of the operator's paid APIs, counted and refused before any request.

:class:`ApiMeter` keeps, per visitor (a client address, IPv6 grouped by its network) and for all visitors
together, the requests, tokens and bytes sent in the last minute and the last day, against an
:class:`~ts2viz.ui.serving.access.ApiBudget`. A heavy job runs its requests with the meter's hooks
(:meth:`ApiMeter.hooks`, given to :func:`ts2viz.metrics.backbones.openai_client.request_hooks`): each request is
charged before it is sent and refused, with one line, when it would take any count past its budget.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Callable

from ...errors import InputError
from .access import ApiBudget

_UNITS = ("requests", "tokens", "bytes")
_PERIODS = (("min", 60.0, "this minute", "in a minute"), ("day", 86_400.0, "today", "tomorrow"))


class BudgetSpent(InputError):
    """A request refused before it was sent: an API budget is spent."""


class _Window:
    """Counts of the last day, with the events of the last minute and day kept to age them out."""

    def __init__(self) -> None:
        self.events: deque = deque()           # (t, requests, tokens, bytes)
        self.day = [0, 0, 0]

    def trim(self, now: float) -> None:
        while self.events and now - self.events[0][0] > 86_400.0:
            _, *counts = self.events.popleft()
            self.day = [a - b for a, b in zip(self.day, counts)]

    def minute(self, now: float) -> list[int]:
        out = [0, 0, 0]
        for t, *counts in reversed(self.events):
            if now - t > 60.0:
                break
            out = [a + b for a, b in zip(out, counts)]
        return out

    def add(self, now: float, counts) -> None:
        self.events.append((now, *counts))
        self.day = [a + b for a, b in zip(self.day, counts)]


class ApiMeter:
    """The API spending of one app process, per visitor and in all (thread-safe).

    Parameters
    ----------
    budget : ApiBudget
        The budgets.
    clock : callable, default time.monotonic
        The clock, in seconds.

    Examples
    --------
    >>> meter = ApiMeter(ApiBudget(visitor_requests_per_min=2))
    >>> meter.charge("1.2.3.4", 1, 100, 1000); meter.charge("1.2.3.4", 1, 100, 1000)
    >>> meter.charge("1.2.3.4", 1, 100, 1000)
    Traceback (most recent call last):
    ...
    ts2viz.ui.serving.api_budget.BudgetSpent: your API budget on this app is spent for this minute (2 requests); try again in a minute
    >>> meter.charge("5.6.7.8", 1, 100, 1000)
    """

    def __init__(self, budget: ApiBudget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self.clock = clock
        self._lock = threading.Lock()
        self._visitors: dict[str, _Window] = {}
        self._all = _Window()
        self.refused = 0

    def _limit(self, scope: str, unit: str, period: str) -> int:
        return int(getattr(self.budget, f"{scope}_{unit}_per_{period}"))

    def charge(self, visitor: str | None, requests: int, tokens: int, nbytes: int) -> None:
        """Count one request of a visitor, or refuse it when it would take a count past its budget.

        Parameters
        ----------
        visitor : str or None
            The visitor (client address or network).
        requests, tokens, nbytes : int
            What the request costs (tokens estimated).

        Raises
        ------
        BudgetSpent
            With one line naming the budget, before anything is counted.
        """
        want = (requests, tokens, nbytes)
        key = visitor or "?"
        with self._lock:
            now = self.clock()
            mine = self._visitors.get(key) or _Window()
            for scope, win in (("visitor", mine), ("all", self._all)):
                win.trim(now)
                for period, _, when, retry in _PERIODS:
                    have = win.minute(now) if period == "min" else win.day
                    for unit, used, add in zip(_UNITS, have, want):
                        limit = self._limit(scope, unit, period)
                        if add and used + add > limit:
                            self.refused += 1
                            who = "your API budget on this app" if scope == "visitor" else "this app's API budget"
                            raise BudgetSpent(f"{who} is spent for {when} ({limit:,} {unit}); try again {retry}")
            self._visitors[key] = mine
            mine.add(now, want)
            self._all.add(now, want)
            if len(self._visitors) > 10_000:           # visitors gone for a day
                for k in [k for k, w in self._visitors.items() if not w.events or now - w.events[-1][0] > 86_400]:
                    self._visitors.pop(k, None)

    def settle(self, visitor: str | None, tokens: int) -> None:
        """Correct a request's estimated tokens by what the endpoint reported (the difference, may be negative).

        Parameters
        ----------
        visitor : str or None
            The visitor.
        tokens : int
            Reported minus estimated tokens.
        """
        with self._lock:
            now = self.clock()
            win = self._visitors.setdefault(visitor or "?", _Window())
            win.add(now, (0, tokens, 0))
            self._all.add(now, (0, tokens, 0))

    def used(self, visitor: str | None = None) -> dict:
        """What a visitor (or, with ``None``, everyone) used in the last minute and day.

        Parameters
        ----------
        visitor : str or None, default None
            The visitor; ``None``: all visitors.

        Returns
        -------
        dict
            ``{"min": {"requests", "tokens", "bytes"}, "day": {...}}``.
        """
        with self._lock:
            now = self.clock()
            win = self._all if visitor is None else self._visitors.get(visitor, _Window())
            win.trim(now)
            return {"min": dict(zip(_UNITS, win.minute(now))), "day": dict(zip(_UNITS, win.day))}

    def hooks(self, visitor: str | None, check: Callable[[], None] | None = None):
        """The request hooks of one visitor's job (:class:`~ts2viz.metrics.backbones.openai_client.RequestHooks`).

        Parameters
        ----------
        visitor : str or None
            The visitor (the job's client address).
        check : callable or None, default None
            The job's cancel check, called before each request.

        Returns
        -------
        ts2viz.metrics.backbones.openai_client.RequestHooks
            Hooks that charge this meter.
        """
        from ...metrics.backbones.openai_client import RequestHooks

        return RequestHooks(check=check, charge=lambda r, t, b: self.charge(visitor, r, t, b),
                            settle=lambda t: self.settle(visitor, t))
