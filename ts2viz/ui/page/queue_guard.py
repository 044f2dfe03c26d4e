"""Gradio's queue, guarded for a public app (its objects are patched in place once the app's queue exists).

- **One job per visitor in the heavy lanes**: the queue asks :meth:`ts2viz.ui.serving.jobs.Jobs.admit` before it
  takes an event of such a lane; a refusal is Gradio's own one-line answer to ``queue/join`` (HTTP 400
  with the reason), and one log line.
- **A page that goes away stops its heavy job**: when Gradio cleans up a session whose event stream
  closed, its running heavy jobs are cancelled (:meth:`~ts2viz.ui.serving.jobs.Jobs.cancel_session`).
- **The session table keeps live pages**: Gradio keeps each session's messages in a table of 2,000
  entries (``TS2VIZ_QUEUE_SESSIONS`` changes the size) and drops the least recently *added* when a new one comes, even a page that waits for its
  result (the result is then lost, and the queue's position notifier died of the ``KeyError`` for the
  rest of the server's life). Here a new session pushes out the least recently added one that has no
  event queued or running and no open event stream; when every entry is live the table grows instead
  (new sessions per address are rate-limited before they get here: :class:`ts2viz.ui.serving.guard.SessionRate`).
- **A fair share of every lane**: a page (and an address) may have only so many view calls waiting or
  running (:func:`view_share`, ``Limits.view_calls_per_session`` / ``view_calls_per_client``), and each
  lane serves its waiting calls round-robin by page (:func:`fair_order`), so that one page's calls cannot
  queue ahead of all others.
- **Messages to a page that is gone are dropped**, not raised: the queue's notifier and every job's
  completion survive whatever happens to one session's entry.
"""
from __future__ import annotations

import logging

log = logging.getLogger("ts2viz.ui")


def _live_sessions(queue, guard) -> set[str]:
    live = {e.session_hash for e in list(queue.event_ids_to_events.values())}
    if guard is not None:
        live |= guard.streaming()
    return live


def guarded_table(queue, guard):
    """A replacement for ``queue.pending_messages_per_session`` that keeps live pages (see the module docstring).

    A new session pushes out the least recently added one that has no event queued or running and no open
    event stream; when every entry is live the table grows instead.

    Parameters
    ----------
    queue : gradio.queueing.Queue
        The app's queue.
    guard : ts2viz.ui.serving.guard.Guard or None
        The guard (its open streams).

    Returns
    -------
    gradio.utils.LRUCache
        The table, holding the queue's current entries (size ``TS2VIZ_QUEUE_SESSIONS``, default the
        queue's own).
    """
    from gradio.utils import LRUCache

    class LiveSessions(LRUCache):
        def __setitem__(self, key, value) -> None:
            if key in self:
                self.move_to_end(key)
            elif len(self) >= self.max_size:
                live = _live_sessions(queue, guard)
                victim = next((k for k in self if k not in live), None)
                if victim is not None:
                    self.pop(victim, None)
                    queue.pending_event_ids_session.pop(victim, None)
            super(LRUCache, self).__setitem__(key, value)

    import os

    size = int(os.environ.get("TS2VIZ_QUEUE_SESSIONS") or queue.pending_messages_per_session.max_size)
    table = LiveSessions(size)
    for k, v in queue.pending_messages_per_session.items():
        super(LRUCache, table).__setitem__(k, v)
    return table


def fair_order(events: list, key) -> list:
    """Events in round-robin order of their sessions: each session's first, then each one's second, ...

    Within a session the order is kept; sessions take turns in the order of their earliest event, so that
    one page's many calls cannot all run before another page's one.

    Parameters
    ----------
    events : list
        The waiting events, in queue order.
    key : callable
        ``key(event)``: its session.

    Returns
    -------
    list
        The events, reordered.

    Examples
    --------
    >>> fair_order(["a1", "a2", "a3", "b1", "c1", "b2"], key=lambda e: e[0])
    ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']
    """
    rank: dict = {}
    order = []
    for i, e in enumerate(events):
        k = key(e)
        rank[k] = rank.get(k, -1) + 1
        order.append((rank[k], i, e))
    return [e for _, _, e in sorted(order, key=lambda x: (x[0], x[1]))]


def _event_client(event) -> str | None:
    return getattr(getattr(getattr(event, "request", None), "client", None), "host", None)


def unread_results(queue, session: str) -> int:
    """How many results of a session's calls wait to be read (sent to no open event stream yet).

    Parameters
    ----------
    queue : gradio.queueing.Queue
        The app's queue.
    session : str
        The session id.

    Returns
    -------
    int
        The completed calls whose result message is still in the session's message queue.
    """
    from gradio.server_messages import ProcessCompletedMessage

    messages = queue.pending_messages_per_session.get(session) if hasattr(queue.pending_messages_per_session,
                                                                          "get") else None
    pending = list(getattr(messages, "_queue", ()) or ())
    return sum(isinstance(m, ProcessCompletedMessage) for m in pending)


def view_share(queue, lane: str, session: str | None, client: str | None, limits) -> str | None:
    """Whether a page (or its address) already has its share of a view lane's calls waiting or running.

    A page's calls whose results it has not read yet count as its own too (a script that never reads
    them would otherwise fill the server's memory with results).

    Parameters
    ----------
    queue : gradio.queueing.Queue
        The app's queue.
    lane : str
        The call's concurrency group.
    session : str or None
        The page's session id.
    client : str or None
        The client's address.
    limits : ts2viz.ui.serving.access.Limits
        ``view_calls_per_session`` and ``view_calls_per_client`` (``None``: no cap).

    Returns
    -------
    str or None
        ``None`` to admit the call, else the one-line reason shown to the visitor.
    """
    per_session = getattr(limits, "view_calls_per_session", None)
    per_client = getattr(limits, "view_calls_per_client", None)
    if per_session is None and per_client is None:
        return None
    events = [e for e in list(queue.event_ids_to_events.values()) if e.concurrency_id == lane]
    if per_session is not None and session is not None and \
            sum(e.session_hash == session for e in events) + unread_results(queue, session) >= per_session:
        return (f"this page already has {per_session} calls waiting, running or unread; wait for them to "
                "finish (too many at once)")
    if per_client is not None and client is not None and sum(_event_client(e) == client for e in events) >= per_client:
        return (f"your address already has {per_client} calls waiting or running; wait for them to finish "
                "(too many at once)")
    return None


#: what a visitor sees when a call's values are not ones its page could send (a script's call)
BAD_INPUT = "a value of this call is not one the page offers; reload the page"


def guard_inputs(demo) -> None:
    """Refuse event values a page could not send in one line, without quoting them.

    Gradio checks an event's values before the callback runs (a dropdown's choice, a file's place, the form
    of a value) and raises with its own text, which quotes the value (200 KB of it, once) and went to the
    visitor and, with a traceback, to the log. Here any such failure is one log line with the value cut
    short, and the visitor gets :data:`BAD_INPUT`.

    Parameters
    ----------
    demo : gradio.Blocks
        The app (its ``preprocess_data`` is wrapped).
    """
    import gradio as gr

    from ..serving.guard import log_refusal

    import contextvars

    preprocess = demo.preprocess_data
    process = demo.process_api
    caller: contextvars.ContextVar[str | None] = contextvars.ContextVar("ts2viz_caller", default=None)

    async def process_api(*args, **kwargs):
        request = kwargs.get("request")
        if isinstance(request, list):
            request = request[0] if request else None
        token = caller.set(getattr(getattr(request, "client", None), "host", None))
        try:
            return await process(*args, **kwargs)
        finally:
            caller.reset(token)

    async def preprocess_data(block_fn, inputs, state, explicit_call=False):
        try:
            return await preprocess(block_fn, inputs, state, explicit_call)
        except Exception as e:  # noqa: BLE001 - every failure here is a malformed call
            log_refusal(f"{getattr(block_fn, 'api_name', None) or 'event'} values", caller.get(),
                        f"{type(e).__name__}: {e}")
            raise gr.Error(BAD_INPUT, print_exception=False) from None

    demo.process_api = process_api
    demo.preprocess_data = preprocess_data


def install(demo, guard=None, *, public: bool = True, limits=None) -> None:
    """Patch an app's queue (call after ``demo.queue(...)``, before launch).

    Always: messages to a page that is gone are dropped, the queue's position notifier survives a bad
    entry, and the jobs learn when an event's result was sent. In public mode also: malformed values are
    refused in one line (:func:`guard_inputs`); the session table keeps live pages (:func:`guarded_table`);
    a new event of a heavy lane is refused, with the reason as Gradio's answer to ``queue/join``, when
    :meth:`ts2viz.ui.serving.jobs.Jobs.admit` says so; and a page that goes away stops its heavy jobs.

    Parameters
    ----------
    demo : gradio.Blocks
        The app, its queue made.
    guard : ts2viz.ui.serving.guard.Guard or None, default None
        The app's guard (its jobs and open streams).
    public : bool, default True
        Public mode.
    limits : ts2viz.ui.serving.access.Limits or None, default None
        The caps on view calls in flight per page and per address (:func:`view_share`; ``None``: none). In
        public mode every lane serves its waiting calls round-robin by page (:func:`fair_order`).
    """
    queue = demo._queue
    jobs = getattr(guard, "jobs", None)

    send = queue.send_message
    from gradio.server_messages import ProcessCompletedMessage

    def send_message(event, message):
        if jobs is not None and isinstance(message, ProcessCompletedMessage):
            jobs.finished(getattr(event, "_id", None))      # over for the visitor from this message on
        try:
            send(event, message)
        except KeyError:          # the page's message table entry is gone: nothing to tell it
            pass

    queue.send_message = send_message

    broadcast = queue.broadcast_estimations

    def broadcast_estimations(concurrency_id, after=None):
        try:
            broadcast(concurrency_id, after)
        except Exception as e:  # noqa: BLE001 - the notifier must outlive one bad entry
            log.warning("queue positions not sent this time (%s)", type(e).__name__)

    queue.broadcast_estimations = broadcast_estimations
    if not public:
        return
    guard_inputs(demo)
    if guard is not None:
        guard.queue = queue
    queue.pending_messages_per_session = guarded_table(queue, guard)

    push = queue.push

    async def guarded_push(body, request, username):
        fn = demo.fns.get(body.fn_index) if isinstance(body.fn_index, int) else None
        lane = getattr(fn, "concurrency_id", None)
        client = getattr(getattr(request, "client", None), "host", None)
        if lane is not None:
            from ..serving.jobs import HEAVY

            why = jobs.admit(body.session_hash, client, lane, queue.event_ids_to_events) if jobs is not None \
                else None
            if why is None and lane not in HEAVY:
                why = view_share(queue, lane, body.session_hash, client, limits)
            if why is not None:
                from ..serving.guard import log_refusal

                log_refusal(f"{getattr(fn, 'api_name', None) or 'event'} (queue {lane})", client, why)
                return False, why, "error"
        ok, event_id, state = await push(body, request, username)
        if ok and lane is not None:
            if jobs is not None:
                jobs.joined(event_id, body.session_hash, client, lane)
            lane_queue = queue.event_queue_per_concurrency_id.get(lane)
            if lane_queue is not None and len(lane_queue.queue) > 1:
                # in place, no await in between: the queue's processing loop sees either order whole
                lane_queue.queue[:] = fair_order(lane_queue.queue, key=lambda e: e.session_hash)
        return ok, event_id, state

    queue.push = guarded_push
    if jobs is not None:
        clean = queue.clean_events

        async def clean_events(*, session_hash=None, event_id=None):
            if session_hash:
                jobs.cancel_session(session_hash)
            return await clean(session_hash=session_hash, event_id=event_id)

        queue.clean_events = clean_events
