"""Turns on the model: several jobs admitted into the model lane, one holding the model at a time.

Gradio's queue starts an event of a lane only while fewer than the lane's ``concurrency_limit`` run, so
with one slot a long job blocks every other visitor until it ends. A :class:`Turnstile` lets
:attr:`~Turnstile.width` jobs into the lane at once (the lane's ``concurrency_limit``,
:meth:`ts2viz.ui.serving.jobs.Jobs.width`); only one of them holds the model, its *turn*. A job checks
in between batches (:func:`ts2viz.ui.serving.jobs.checkpoint`): once it has held the model for
:attr:`~Turnstile.turn_s` seconds and another job waits, the turn passes to the waiting job whose page was
served longest ago (a page never served first, then first come, first served), and the job that gave it
up waits behind the others. Time waiting for a turn does not count against the job's time budget, the
waiting visitor sees an estimate from the measured turn lengths (:meth:`Turnstile.estimate`), and a
cancel stops a waiting job within :data:`POLL_S` seconds.

A batch of an API metric is as long as its slowest request round: :func:`slice_size` bounds its images
per batch so that a turn can pass every few seconds.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

#: seconds between a waiting job's checks of its cancel flag (and updates of its estimate)
POLL_S = 0.25
#: pages whose last turn is remembered (the oldest are forgotten: they count as never served)
SERVED_MEMORY = 10_000
#: weight of the newest turn in the running mean of turn lengths
TURN_WEIGHT = 0.3


@dataclass(eq=False)
class Ticket:
    """One job's place at the turnstile.

    Parameters
    ----------
    session : str or None
        The job's page (session id).
    seq : int
        Arrival order (ties among pages served equally long ago).
    """

    session: str | None
    seq: int
    #: thread that holds the turn (checks in only from it: an API request's worker thread never passes it)
    owner: int | None = None
    #: monotonic time the current turn began (None: not holding)
    since: float | None = None
    #: seconds spent waiting for a turn in all
    waited: float = field(default=0.0)


class Turnstile:
    """Turns on one model lane (thread-safe).

    Parameters
    ----------
    width : int, default 1
        Jobs admitted into the lane at once (``TS2VIZ_TURN_JOBS``; at least 1). With 1 a job holds the
        model until it ends.
    turn_s : float, default 3.0
        Seconds a job holds the model before it passes the turn to a waiting job (``TS2VIZ_TURN_S``).
    slice_size : int or None, default 4
        Images per batch of an API metric while turns pass (``None``: the metric's own batch).
    clock : callable, default time.monotonic
        The clock, in seconds.

    Examples
    --------
    >>> ts = Turnstile(width=2, turn_s=0.0)
    >>> a = ts.enter("page-a")
    >>> ts.holder() is a, ts.waiting()
    (True, 0)
    >>> ts.leave(a)
    >>> ts.holder() is None
    True
    """

    def __init__(self, width: int = 1, turn_s: float = 3.0, slice_size: int | None = 4,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Check the settings; nobody holds the model yet."""
        if int(width) < 1:
            raise ValueError(f"a turnstile admits at least 1 job, not {width}")
        if turn_s < 0:
            raise ValueError(f"turn_s must be at least 0, not {turn_s}")
        if slice_size is not None and int(slice_size) < 1:
            raise ValueError(f"slice_size must be at least 1, not {slice_size}")
        self.width = int(width)
        self.turn_s = float(turn_s)
        self.slice_size = None if slice_size is None else int(slice_size)
        self.clock = clock
        self._cond = threading.Condition()
        self._holder: Ticket | None = None
        self._waiting: list[Ticket] = []
        self._served: OrderedDict[str | None, float] = OrderedDict()
        self._seq = itertools.count()
        #: running mean of measured turn lengths (seconds); the turn's length before any was measured
        self.mean_turn_s = max(self.turn_s, 0.1)
        self.passes = 0            # turns handed to a waiting job before the holder's job ended

    # -- reading -----------------------------------------------------------------------------------------
    def holder(self) -> Ticket | None:
        """The ticket holding the model now.

        Returns
        -------
        Ticket or None
            The holder's ticket; None when the model is free.
        """
        with self._cond:
            return self._holder

    def waiting(self) -> int:
        """Jobs waiting for a turn.

        Returns
        -------
        int
            How many admitted jobs wait for the model.
        """
        with self._cond:
            return len(self._waiting)

    def _order(self) -> list[Ticket]:
        """Waiting tickets, next turn first: page served longest ago (never: first), then arrival."""
        return sorted(self._waiting, key=lambda t: (self._served.get(t.session, float("-inf")), t.seq))

    def estimate(self, ticket: Ticket) -> tuple[float, int]:
        """How long a waiting job may wait, from the measured turn lengths, and how many jobs are ahead.

        Parameters
        ----------
        ticket : Ticket
            A waiting job's ticket.

        Returns
        -------
        seconds : float
            The holder's expected rest of its turn plus one mean turn per waiting job ahead.
        ahead : int
            Jobs ahead of it (the holder included).
        """
        with self._cond:
            order = self._order()
            before = order.index(ticket) if ticket in order else 0
            rest = 0.0
            if self._holder is not None:
                rest = max(0.0, self.mean_turn_s - (self.clock() - (self._holder.since or self.clock())))
            return rest + before * self.mean_turn_s, before + (self._holder is not None)

    # -- the jobs' side ----------------------------------------------------------------------------------
    def enter(self, session: str | None, stop: Callable[[], None] | None = None,
              report: Callable[[float, int], None] | None = None) -> Ticket:
        """Wait for a first turn on the model.

        Parameters
        ----------
        session : str or None
            The job's page.
        stop : callable or None, default None
            Called every :data:`POLL_S` seconds while waiting; raises to give up (a cancel).
        report : callable or None, default None
            ``report(seconds, ahead)``: the waiting job's estimate (:meth:`estimate`), at the start and at
            least once a second while it changes.

        Returns
        -------
        Ticket
            The job's ticket, holding the model; hand it back with :meth:`leave`.
        """
        with self._cond:
            ticket = Ticket(session, next(self._seq))
        self._wait(ticket, stop, report)
        return ticket

    def leave(self, ticket: Ticket) -> None:
        """The job ended: its turn (if it holds one) goes to the next waiting job.

        Parameters
        ----------
        ticket : Ticket
            The job's ticket (holding or not).
        """
        with self._cond:
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            if self._holder is ticket:
                self._end_turn(ticket)
            self._cond.notify_all()

    def check_in(self, ticket: Ticket, stop: Callable[[], None] | None = None,
                 report: Callable[[float, int], None] | None = None) -> float:
        """Between batches: pass the turn if it is over and another job waits, then wait for the next one.

        Only the thread that holds the turn passes it (an API request's worker thread checking in does
        nothing).

        Parameters
        ----------
        ticket : Ticket
            The job's ticket.
        stop, report : callable or None
            As for :meth:`enter`.

        Returns
        -------
        float
            Seconds spent waiting (0.0 when the turn was kept).
        """
        with self._cond:
            if (self._holder is not ticket or ticket.owner != threading.get_ident() or not self._waiting
                    or self.clock() - (ticket.since or 0.0) < self.turn_s):
                return 0.0
            self._end_turn(ticket)
            self.passes += 1
            self._cond.notify_all()
        return self._wait(ticket, stop, report)

    # -- inside ----------------------------------------------------------------------------------------------
    def _end_turn(self, ticket: Ticket) -> None:
        """Record a turn's length and its page as just served (the lock held)."""
        now = self.clock()
        if ticket.since is not None:
            self.mean_turn_s += TURN_WEIGHT * ((now - ticket.since) - self.mean_turn_s)
        self._served[ticket.session] = now
        self._served.move_to_end(ticket.session)
        while len(self._served) > SERVED_MEMORY:
            self._served.popitem(last=False)
        ticket.since = ticket.owner = None
        self._holder = None

    def _wait(self, ticket: Ticket, stop, report) -> float:
        """Queue ``ticket`` and block until it holds the model; returns the seconds waited."""
        t0 = self.clock()
        shown: tuple | None = None
        last_report = float("-inf")
        with self._cond:
            self._waiting.append(ticket)
        try:
            while True:
                with self._cond:
                    if self._holder is None and self._order()[0] is ticket:
                        self._waiting.remove(ticket)
                        self._holder = ticket
                        ticket.owner = threading.get_ident()
                        ticket.since = self.clock()
                        waited = ticket.since - t0
                        ticket.waited += waited
                        return waited
                    self._cond.wait(POLL_S)
                if stop is not None:
                    stop()
                if report is not None:
                    seconds, ahead = self.estimate(ticket)
                    now = self.clock()
                    if shown is None or ((round(seconds), ahead) != shown and now - last_report >= 1.0):
                        shown, last_report = (round(seconds), ahead), now
                        report(seconds, ahead)
        except BaseException:
            with self._cond:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                self._cond.notify_all()
            raise


def slice_size(metric, turnstile: Turnstile | None) -> int | None:
    """Images per batch for a metric in a lane with turns: an API metric's batch bounded, else its own.

    An API metric (one with request ``workers``, its own or its judge's) sends a batch's requests and
    returns when the slowest has answered: its batches are bounded to :attr:`Turnstile.slice_size` images
    so that a turn can pass between them. A local model's batch stays its own (the GPU's throughput).

    Parameters
    ----------
    metric : Metric
        The loaded metric.
    turnstile : Turnstile or None
        The lane's turnstile (``None``, or one of width 1: no bound).

    Returns
    -------
    int or None
        The batch size to score with (``None``: the metric's own).

    Examples
    --------
    >>> class Api:
    ...     workers, batch_size = 4, 16
    >>> slice_size(Api(), Turnstile(width=5, slice_size=4)), slice_size(Api(), Turnstile(width=1))
    (4, None)
    """
    if turnstile is None or turnstile.width <= 1 or turnstile.slice_size is None:
        return None
    workers = getattr(metric, "workers", None) or getattr(getattr(metric, "judge", None), "workers", None)
    if not isinstance(workers, int) or isinstance(workers, bool):
        return None
    own = int(getattr(metric, "batch_size", 0) or 0)
    return min(own, turnstile.slice_size) if own > 0 else turnstile.slice_size
