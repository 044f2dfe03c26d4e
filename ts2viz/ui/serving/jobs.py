"""Heavy work in lanes of its own, one job per visitor in each, and a cancel that stops the work.

Gradio runs each event in a concurrency group of its queue (a *lane*). Views have theirs; heavy work
has its own lanes, so that a view change never waits behind it: :data:`MODEL` (live scoring, scores
while authoring: one model call at a time), :data:`FILES` (the authoring tab's images, .zip imports
and exports), :data:`SCORES_UPLOAD` and :data:`GOLD_UPLOAD` (score files read), :data:`GOLD` (the
Human ratings tab's views, whose first drawing for a session's own metrics computes their intervals).

:class:`Jobs` keeps, for the lanes in :data:`ONE_PER_VISITOR`, the jobs each visitor has queued or
running: Gradio's queue asks :meth:`Jobs.admit` before it takes a new event (``queue/join``), and a
visitor (a session, and a client address, :data:`CLIENT_JOBS` each) with one waiting or running is
refused in one line, so that scripted calls cannot fill a lane ahead of everyone else.

Gradio's ``/cancel`` frees an event's place but cannot stop the thread that runs it: the work went on.
Here the thread gets a flag (:meth:`Jobs.running`) that ``/cancel`` sets (:meth:`Jobs.cancel`), and
long work calls :func:`checkpoint` between batches (images checked, batches scored, files written; the
same check, less the turn's passing, runs before each API request and while a batch's requests are in
flight: :func:`ts2viz.metrics.backbones.openai_client.request_hooks`), which raises
:class:`Cancelled` once it is set, or :class:`OverTime` once a model job has run past its time budget
(``job_time_s``). A job's API requests are charged to its visitor's budget before they are sent
(:class:`~ts2viz.ui.serving.api_budget.ApiMeter`). A lane's jobs also hold the lane's lock while they
run, so a cancelled job still finishing its batch and the next one never run at once; the :data:`MODEL`
lane admits :meth:`Jobs.width` jobs at once instead, which take turns on the model
(:class:`~ts2viz.ui.serving.turns.Turnstile`: :func:`checkpoint` passes the turn between batches, and
time waiting for one is off the job's clock).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import os
import threading
import time
from typing import Callable, Container, Iterator

from ...errors import InputError
from .turns import Turnstile

log = logging.getLogger("ts2viz.ui")

MODEL, FILES, SCORES_UPLOAD, GOLD_UPLOAD, GOLD = "model", "files", "scores-upload", "gold-upload", "gold"
#: lanes whose work runs under :meth:`Jobs.running` (a lock each, and a cancel flag)
HEAVY = (MODEL, FILES, SCORES_UPLOAD, GOLD_UPLOAD, GOLD)
#: lanes where a visitor has at most one job queued or running
ONE_PER_VISITOR = (MODEL, FILES, SCORES_UPLOAD, GOLD_UPLOAD)
#: jobs one client address may have queued or running in each such lane (env TS2VIZ_CLIENT_JOBS)
CLIENT_JOBS = int(os.environ.get("TS2VIZ_CLIENT_JOBS") or 1)


class Cancelled(InputError):
    """The visitor cancelled the job; it stopped at its last checkpoint."""


class OverTime(InputError):
    """The job ran past its time budget (:attr:`~ts2viz.ui.serving.access.Limits.job_time_s`) and was stopped."""


_FLAG: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("ts2viz_job_flag", default=None)
#: seconds a job goes on with no page listening for its result (no open event stream) before it stops
UNREAD_GRACE_S = float(os.environ.get("TS2VIZ_UNREAD_GRACE_S") or 10)
#: whether the job running in this thread still has a page waiting for its result
_WATCH: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar("ts2viz_job_watch", default=None)
#: (monotonic deadline, the budget in seconds) of the job running in this thread
_DEADLINE: contextvars.ContextVar[list | None] = contextvars.ContextVar("ts2viz_job_deadline", default=None)
#: (turnstile, ticket, report) of the model job running in this thread
_TURN: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("ts2viz_job_turn", default=None)


@contextlib.contextmanager
def off_the_clock() -> Iterator[None]:
    """Time that does not count against the running job's time budget.

    Loading a model is the server's cost, once, not the visitor's work.

    Yields
    ------
    None
        While the clock is stopped.
    """
    limit = _DEADLINE.get()
    t0 = time.monotonic()
    try:
        yield
    finally:
        if limit is not None:
            limit[0] += time.monotonic() - t0


def checkpoint(*, turn: bool = True) -> None:
    """Raise :class:`Cancelled` if the job running in this thread was cancelled (nothing outside a job).

    Long work calls it between batches (images checked, batches scored, files written, API requests sent).
    In the model lane it also passes the model's turn when it is over and another job waits
    (:meth:`~ts2viz.ui.serving.turns.Turnstile.check_in`), and waits for the next one.

    Parameters
    ----------
    turn : bool, default True
        Whether the turn may pass here; ``False`` after a job's last batch (what is left is quick: passing
        would make a short job wait a whole turn of another's to finish).

    Raises
    ------
    Cancelled
        Once the job's flag is set (its ``/cancel``, or its page gone).
    OverTime
        Once the job has run past its time budget.
    """
    limit = _request_check()
    held = _TURN.get() if turn else None
    if held is not None:
        waited = held[0].check_in(held[1], _stop_check, held[2])
        if waited and limit is not None:
            limit[0] += waited          # waiting for a turn is not the visitor's work


def _request_check() -> list | None:
    """:func:`checkpoint` without passing the turn: a cancel, a page gone, the time budget.

    The check before (and while waiting for) a job's API requests: a job whose requests are in flight
    keeps its turn until its batch is done.

    Returns
    -------
    list or None
        The job's [deadline, budget] (None: no budget).
    """
    _stop_check()
    limit = _DEADLINE.get()
    if limit is not None and time.monotonic() > limit[0]:
        raise OverTime(f"this job ran past its time budget on this app ({limit[1]:g} s) and was stopped; "
                       "try fewer images")
    return limit


def _stop_check() -> None:
    """Raise :class:`Cancelled` if the job running in this thread was cancelled or nobody reads it."""
    flag = _FLAG.get()
    if flag is not None and flag.is_set():
        raise Cancelled("cancelled")
    watch = _WATCH.get()
    if watch is not None and not watch():
        raise Cancelled(f"cancelled: no page read this job's result for {UNREAD_GRACE_S:g} s")


def current_turnstile() -> Turnstile | None:
    """The turnstile of the model job running in this thread (None outside one).

    Returns
    -------
    Turnstile or None
        Its lane's turnstile (for :func:`ts2viz.ui.serving.turns.slice_size`).
    """
    turn = _TURN.get()
    return turn[0] if turn is not None else None


def batch_size(metric) -> int | None:
    """Images per batch for a metric scored by the model job running in this thread.

    Parameters
    ----------
    metric : Metric
        The loaded metric.

    Returns
    -------
    int or None
        An API metric's batch bounded while jobs take turns (:func:`ts2viz.ui.serving.turns.slice_size`),
        else ``None`` (the metric's own).
    """
    from .turns import slice_size

    return slice_size(metric, current_turnstile())


def _waiting_line(progress) -> Callable[[float, int], None] | None:
    """``report(seconds, ahead)`` showing a waiting job's estimate through its ``gr.Progress`` (or None)."""
    if progress is None:
        return None

    def report(seconds: float, ahead: int) -> None:
        try:
            progress(0.0, desc=f"waiting for the model: ~{max(1, round(seconds))} s, "
                               f"{ahead} job{'s' if ahead != 1 else ''} ahead")
        except Exception:  # noqa: BLE001 - a page gone mid-update must not stop the wait
            pass

    return report


class Jobs:
    """The heavy lanes' jobs of one app process (thread-safe).

    Parameters
    ----------
    per_client : int, default CLIENT_JOBS
        Jobs one client address may have queued or running in each lane of :data:`ONE_PER_VISITOR`.
    clock : callable, default time.monotonic
        The clock, in seconds.
    on_end : callable or None, default None
        ``on_end()`` is called when a job's work ends, cancelled or not (the app hands the memory it freed
        back to the system: :func:`ts2viz.ui.state.sessions.release_memory`).
    job_time_s : float or None, default None
        Seconds a job of the :data:`MODEL` lane may run (its time holding the model, from its first turn;
        loading a model, :func:`off_the_clock`, and waiting for a later turn excepted) before
        :func:`checkpoint` stops it (:class:`OverTime`); ``None``: no limit.
    meter : ts2viz.ui.serving.api_budget.ApiMeter or None, default None
        Charges every API request of a job to its client before it is sent (``None``: no budget). Every job
        runs its API requests with its cancel check before each
        (:func:`ts2viz.metrics.backbones.openai_client.request_hooks`).
    private_replies : bool, default False
        Jobs neither read nor write the on-disk cache of API replies
        (:func:`ts2viz.metrics.common.llmcache.no_reply_cache`): a visitor's prompts never reach the disk.
    turnstile : Turnstile or None, default None
        The :data:`MODEL` lane's turns (``None``: ``Turnstile(width=1)``, one job at a time, holding the model
        until it ends).

    Examples
    --------
    A second job of the same page in the model lane is refused while the first one waits:

    >>> jobs = Jobs()
    >>> jobs.admit("page-1", "1.2.3.4", MODEL, live=set()) is None
    True
    >>> jobs.joined("event-1", "page-1", "1.2.3.4", MODEL)
    >>> jobs.admit("page-1", "1.2.3.4", MODEL, live={"event-1"})
    'a job of this page is already waiting or running here; wait for it to finish, or cancel it (one at a time)'
    >>> jobs.cancel("page-1", "event-1")
    True
    """

    def __init__(self, per_client: int = CLIENT_JOBS, clock: Callable[[], float] = time.monotonic,
                 on_end: Callable[[], object] | None = None, *, job_time_s: float | None = None,
                 meter=None, private_replies: bool = False, turnstile: Turnstile | None = None) -> None:
        """Set up empty records and one lock per heavy lane (the model lane: its turnstile)."""
        self.turnstile = turnstile if turnstile is not None else Turnstile(width=1)
        self.per_client = per_client
        self.job_time_s = job_time_s
        self.meter = meter
        self.private_replies = private_replies
        #: ``listening(session)``: whether a page has an open event stream for the session (set by the app's
        #: :class:`~ts2viz.ui.serving.guard.Guard`); a job nobody listens to stops after
        #: :data:`UNREAD_GRACE_S` seconds
        self.listening: Callable[[str], bool] | None = None
        self.on_end = on_end
        self.clock = clock
        self._lock = threading.Lock()
        #: event id -> (session, client, lane): admitted by the queue, not known to be over
        self._events: dict[str, tuple[str | None, str | None, str]] = {}
        #: (session, lane) -> (client, cancel flag, event id or None): a thread running its work
        self._running: dict[tuple[str | None, str], tuple[str | None, threading.Event, str | None]] = {}
        self._cancelled: set[str] = set()
        self.lane_locks = {lane: threading.Lock() for lane in HEAVY if lane != MODEL}
        self.stopped = 0           # jobs that stopped on a cancel (for the tests and the log)

    def width(self, lane: str) -> int:
        """Jobs of a lane that run at once (its Gradio ``concurrency_limit``).

        Parameters
        ----------
        lane : str
            The lane.

        Returns
        -------
        int
            The turnstile's width for :data:`MODEL` (jobs taking turns on the model), else 1.
        """
        return self.turnstile.width if lane == MODEL else 1

    # -- the queue's side ------------------------------------------------------------------------------
    def admit(self, session: str | None, client: str | None, lane: str, live: Container[str]) -> str | None:
        """Whether a new event of a lane may join the queue (Gradio's queue asks before ``queue/join``).

        In the lanes of :data:`ONE_PER_VISITOR`, a session with a job waiting or running there, or a client
        address with ``per_client`` of them, is refused. Events the queue no longer holds are forgotten first.

        Parameters
        ----------
        session : str or None
            The page's session id.
        client : str or None
            The client's address.
        lane : str
            The event's concurrency group.
        live : container of str
            The event ids the queue still holds (waiting or running).

        Returns
        -------
        str or None
            ``None`` to admit it, else the one-line reason shown to the visitor.
        """
        if lane not in ONE_PER_VISITOR:
            return None
        with self._lock:
            running = {v[2] for v in self._running.values()}
            for eid in [e for e in self._events if e not in live and e not in running]:
                self._events.pop(eid, None)
                self._cancelled.discard(eid)
            mine = [(s, c) for s, c, l in self._events.values() if l == lane]
            mine += [(s, v[0]) for (s, l), v in self._running.items() if l == lane and v[2] not in self._events]
        if session is not None and any(s == session for s, _ in mine):
            return ("a job of this page is already waiting or running here; wait for it to finish, or cancel it "
                    "(one at a time)")
        if client is not None and sum(c == client for _, c in mine) >= self.per_client:
            return (f"your address already has {self.per_client} job(s) waiting or running here; wait for one to "
                    "finish (one at a time per visitor)")
        return None

    def joined(self, event_id: str, session: str | None, client: str | None, lane: str) -> None:
        """Record an event the queue took (heavy lanes only).

        Parameters
        ----------
        event_id : str
            The event's id.
        session : str or None
            The page's session id.
        client : str or None
            The client's address.
        lane : str
            The event's concurrency group.
        """
        if lane in HEAVY:
            with self._lock:
                self._events[event_id] = (session, client, lane)

    def finished(self, event_id: str | None) -> None:
        """The queue sent an event's result (or its failure): it no longer counts as waiting.

        A thread still running its work (a cancelled job finishing its batch) counts until it ends.

        Parameters
        ----------
        event_id : str or None
            The event's id.
        """
        with self._lock:
            if event_id in self._events and not any(v[2] == event_id for v in self._running.values()):
                self._events.pop(event_id, None)
                self._cancelled.discard(event_id)

    def cancel(self, session: str | None, event_id: str | None) -> bool:
        """``/cancel`` of one of a session's events: its running thread stops at its next checkpoint.

        A waiting one stops at its start.

        Parameters
        ----------
        session : str or None
            The session the call came from (``None``: any); another session's event is not cancelled.
        event_id : str or None
            The event to cancel.

        Returns
        -------
        bool
            Whether it is one of the heavy lanes' events (and was cancelled).
        """
        with self._lock:
            info = self._events.get(event_id or "")
            if info is None or (session is not None and info[0] != session):
                return False
            for client, flag, eid in self._running.values():
                if eid == event_id:
                    flag.set()
                    return True
            self._cancelled.add(event_id)
            return True

    def cancel_session(self, session: str) -> int:
        """The session's page went away (its event stream closed): its heavy jobs stop.

        Parameters
        ----------
        session : str
            The session id.

        Returns
        -------
        int
            How many jobs were cancelled.
        """
        with self._lock:
            ids = [e for e, (s, _, _) in self._events.items() if s == session]
        return sum(self.cancel(session, e) for e in ids)

    # -- the work's side -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def running(self, session: str | None, client: str | None, lane: str,
                progress=None) -> Iterator[threading.Event]:
        """Run a job of a lane in this thread, with the lane's lock (the model lane: a turn) and a cancel flag.

        Waiting for the lock or a turn checks the flag too; :func:`checkpoint` reads the flag in this
        thread, and passes the model's turn. A job cancelled while it waited starts cancelled.

        Parameters
        ----------
        session : str or None
            The page's session id.
        client : str or None
            The client's address.
        lane : str
            The lane.
        progress : gradio.Progress or None, default None
            Shows a model job's wait for its turn (:meth:`Turnstile.estimate`).

        Yields
        ------
        threading.Event
            The job's cancel flag.

        Raises
        ------
        Cancelled
            When the job is cancelled before or while it runs (counted in ``stopped``, logged).
        """
        flag = threading.Event()
        with self._lock:
            eid = next((e for e, (s, _, l) in self._events.items() if s == session and l == lane), None)
            if eid is not None and eid in self._cancelled:
                flag.set()
            key = (session, lane)
            self._running[key] = (client, flag, eid)
        from ...metrics.backbones.openai_client import RequestHooks, request_hooks
        from ...metrics.common.llmcache import no_reply_cache

        token = _FLAG.set(flag)
        watch_token = _WATCH.set(self._watch(session))
        deadline_token = turn_token = ticket = None
        lock = self.lane_locks.get(lane)
        held = False
        hooks = (self.meter.hooks(client, _request_check) if self.meter is not None
                 else RequestHooks(check=_request_check))
        try:
            if lane == MODEL:
                report = _waiting_line(progress)
                ticket = self.turnstile.enter(session, _stop_check, report)
                turn_token = _TURN.set((self.turnstile, ticket, report))
            while lock is not None and not (held := lock.acquire(timeout=0.25)):
                checkpoint()
            if self.job_time_s is not None and lane == MODEL:
                deadline_token = _DEADLINE.set([time.monotonic() + float(self.job_time_s), float(self.job_time_s)])
            checkpoint()
            with request_hooks(hooks), (no_reply_cache() if self.private_replies else contextlib.nullcontext()):
                yield flag
        except Cancelled:
            self.stopped += 1
            log.warning("stopped a cancelled %s job", lane)
            raise
        except OverTime:
            self.stopped += 1
            log.warning("stopped a %s job of %s past its time budget (%g s)", lane, client or "?", self.job_time_s)
            raise
        finally:
            if held:
                lock.release()
            if ticket is not None:
                self.turnstile.leave(ticket)
            if turn_token is not None:
                _TURN.reset(turn_token)
            if deadline_token is not None:
                _DEADLINE.reset(deadline_token)
            _WATCH.reset(watch_token)
            _FLAG.reset(token)
            if self.on_end is not None:
                self.on_end()
            with self._lock:
                if self._running.get(key, (None, None, None))[1] is flag:
                    self._running.pop(key, None)
                if eid is not None:
                    self._events.pop(eid, None)
                    self._cancelled.discard(eid)

    def _watch(self, session: str | None) -> Callable[[], bool] | None:
        """``watch()``: False once no page has listened for the session's results for :data:`UNREAD_GRACE_S`."""
        listening = self.listening
        if listening is None or session is None:
            return None
        seen = [time.monotonic()]

        def watch() -> bool:
            now = time.monotonic()
            if listening(session):
                seen[0] = now
            return now - seen[0] <= UNREAD_GRACE_S

        return watch

    def guarded(self, fn: Callable, lane: str) -> Callable:
        """A callback run as a job of a lane (:meth:`running`), its session and client read from its ``gr.Request``.

        Parameters
        ----------
        fn : callable
            A callback that takes the ``gr.Request`` among its arguments.
        lane : str
            The lane.

        Returns
        -------
        callable
            The wrapped callback.
        """

        @functools.wraps(fn)
        def run(*args, **kwargs):
            request = next((a for a in (*args, *kwargs.values()) if hasattr(a, "session_hash")
                            and hasattr(a, "client")), None)
            session = getattr(request, "session_hash", None)
            client = getattr(getattr(request, "client", None), "host", None)
            progress = next((a for a in (*args, *kwargs.values()) if type(a).__name__ == "Progress"
                             and hasattr(a, "tqdm")), None)
            with self.running(session, client, lane, progress):
                return fn(*args, **kwargs)

        return run

    def busy(self) -> int:
        """Jobs running now (threads), cancelled ones still finishing their batch included.

        Returns
        -------
        int
            The number of running jobs.
        """
        with self._lock:
            return len(self._running)
