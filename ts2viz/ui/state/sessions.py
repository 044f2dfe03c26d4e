"""One private :class:`~ts2viz.ui.state.workspace.Workspace` per browser session, dropped when the session ends.

A session is named by the id Gradio gives each page load (``gr.Request.session_hash``, a random
string only that browser tab knows). A workspace is made when the session first adds data (an
upload, a live score, a download) and dropped when the tab closes (Gradio's unload event), after
``idle_timeout_s`` without a request. Sessions that only look at the shared data hold nothing here.

Room is not free for the taking (a public app's visitors are strangers to each other):

- a call that fails leaves no workspace behind (:meth:`Workspaces.discard_if_empty`);
- one client (an address) holds at most ``max_sessions_per_client`` workspaces: a new one pushes
  out that client's own least recently used, never another client's;
- when ``max_sessions`` are held, the least recently used goes only if it has been idle for more
  than ``keep_active_s``; otherwise the new session is refused with a message (an active visitor's
  data is never pushed out by others' traffic).
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable

from ...errors import InputError
from ..serving.access import Limits
from .app_state import AppState, AppView
from .workspace import Workspace

#: how often (seconds) idle sessions are looked for, at the latest on the next request
SWEEP_EVERY_S = 30.0
#: at most this often (seconds) freed memory is handed back to the system after sessions end
TRIM_EVERY_S = 5.0


def _load_trim():
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None       # not glibc (macOS, musl): nothing to call


_TRIM = _load_trim()
_last_trim = [0.0]
_pending: list = [None]
_trim_lock = threading.Lock()


def release_memory(force: bool = False) -> bool:
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``), at most every few seconds.

    At most every :data:`TRIM_EVERY_S` seconds. Python frees a closed session's tables, but glibc keeps the
    freed arenas mapped: without this the process stays at its peak size after the sessions have gone. A
    call within the interval schedules one more run when the interval is over (the last session's memory).
    Nothing happens without glibc.

    Parameters
    ----------
    force : bool, default False
        Run now, whatever the interval.

    Returns
    -------
    bool
        Whether it ran.
    """
    now = time.monotonic()
    if _TRIM is None:
        return False
    with _trim_lock:
        if not force and now - _last_trim[0] < TRIM_EVERY_S:
            if _pending[0] is None:      # run once more when the interval is over (the last session's memory)
                _pending[0] = threading.Timer(TRIM_EVERY_S, release_memory, kwargs={"force": True})
                _pending[0].daemon = True
                _pending[0].start()
            return False
        _last_trim[0] = now
        _pending[0] = None
    _TRIM(0)
    return True


class Workspaces:
    """The workspaces of the sessions of one app process (thread-safe).

    ``jobs`` holds the heavy lanes' jobs of the process (:class:`ts2viz.ui.serving.jobs.Jobs`); a heavy
    job's memory goes back to the system when it ends.

    Parameters
    ----------
    app : AppState
        The app.
    limits : Limits or None, default None
        The caps (``None``: the app's trust level's).
    exports_root : pathlib.Path or None, default None
        Where sessions' downloads folders are made (the app passes Gradio's upload folder).
    clock : callable, default time.monotonic
        The clock, in seconds.

    Examples
    --------
    >>> from ts2viz.ui import load_state
    >>> spaces = Workspaces(load_state("ts2", fetch_images=False))
    >>> spaces.view("page-1").workspace.read_only, "page-1" in spaces
    (True, False)
    >>> spaces.get("page-1", create=True, client="1.2.3.4") is spaces.get("page-1", create=False)
    True
    >>> spaces.end("page-1"), len(spaces)
    (True, 0)
    """

    def __init__(self, app: AppState, limits: Limits | None = None, *, exports_root: Path | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app = app
        self.limits = limits or app.access.limits
        self.exports_root = exports_root
        self.clock = clock
        self._lock = threading.Lock()
        self._items: OrderedDict[str, Workspace] = OrderedDict()
        self._last_sweep = clock()
        # the view of a session that holds nothing: reads only (adding to it is a programming error)
        self._empty = Workspace(app, self.limits, read_only=True)
        from ..serving.jobs import Jobs

        #: the heavy lanes' jobs of this app process (:mod:`ts2viz.ui.serving.jobs`); a heavy job's memory
        #: (decoded images in its worker thread's own allocator arena) goes back to the system at once when
        #: it ends, cancelled or not (heavy jobs are few: a trim costs milliseconds)
        from ..serving.api_budget import ApiMeter
        from ..serving.turns import Turnstile

        lim = self.limits
        self.jobs = Jobs(on_end=lambda: release_memory(force=True), job_time_s=lim.job_time_s,
                         meter=ApiMeter(lim.api) if lim.api is not None else None,
                         private_replies=app.access.public,
                         turnstile=Turnstile(width=lim.turn_jobs, turn_s=lim.turn_s, slice_size=lim.turn_slice))

    def __len__(self) -> int:
        """The number of workspaces held."""
        return len(self._items)

    def __contains__(self, session_id: object) -> bool:
        """Whether a session has a workspace."""
        return session_id in self._items

    def _new(self) -> Workspace:
        return Workspace(self.app, self.limits, exports_root=self.exports_root)

    def get(self, session_id: str | None, *, create: bool, client: str | None = None) -> Workspace | None:
        """The session's workspace, made when asked for and missing.

        Idle workspaces are swept at most every :data:`SWEEP_EVERY_S` seconds here. Making one may drop the
        client's own least recently used one (past ``max_sessions_per_client``) or the app's least recently used
        idle one (past ``max_sessions``).

        Parameters
        ----------
        session_id : str or None
            The page's session id (``gr.Request.session_hash``).
            Without one, a workspace of its own that is not kept.
        create : bool
            Make it if there is none.
        client : str or None, default None
            Who asks (the request's address), for the per-client cap.

        Returns
        -------
        Workspace or None
            The workspace; ``None`` when there is none and ``create`` is false.

        Raises
        ------
        InputError
            When a new workspace has no room (every held one was used within ``keep_active_s``).
        """
        if not session_id:
            return self._new() if create else None
        now = self.clock()
        drop: list[Workspace] = []
        try:
            with self._lock:
                if now - self._last_sweep >= SWEEP_EVERY_S:
                    drop += self._expired(now)
                ws = self._items.get(session_id)
                if ws is None and create:
                    drop += self._make_room(now, client)
                    ws = self._items[session_id] = self._new()
                    ws.client = client
                if ws is not None:
                    ws.last_used = now
                    self._items.move_to_end(session_id)
        finally:
            for w in drop:
                w.close()
            if drop:
                release_memory()
        return ws

    def _make_room(self, now: float, client: str | None) -> list[Workspace]:
        """Workspaces to drop so that one more fits (called with the lock held)."""
        drop: list[Workspace] = []
        lim = self.limits
        if client is not None:
            mine = [k for k, w in self._items.items() if getattr(w, "client", None) == client]
            while len(mine) >= lim.max_sessions_per_client:
                drop.append(self._items.pop(mine.pop(0)))
        if len(self._items) >= lim.max_sessions:
            drop += self._expired(now)
        while len(self._items) >= lim.max_sessions:
            oldest = next(iter(self._items.values()))
            if now - oldest.last_used <= lim.keep_active_s:
                raise InputError(f"the app holds the data of {len(self._items)} active sessions, its limit; "
                                 "try again in a few minutes")
            drop.append(self._items.popitem(last=False)[1])
        return drop

    def discard_if_empty(self, session_id: str | None) -> bool:
        """Drop the session's workspace if it holds nothing (a call that failed must not take a place).

        Parameters
        ----------
        session_id : str or None
            The page's session id (``gr.Request.session_hash``).

        Returns
        -------
        bool
            Whether one was dropped.
        """
        if not session_id:
            return False
        with self._lock:
            ws = self._items.get(session_id)
            if ws is None or not ws.is_empty():
                return False
            del self._items[session_id]
        ws.close()
        return True

    def view(self, session_id: str | None, *, create: bool = False, client: str | None = None) -> AppView:
        """The app as this session sees it (with an empty, read-only workspace when it holds nothing yet).

        Parameters
        ----------
        session_id : str or None
            The page's session id (``gr.Request.session_hash``).
        create : bool, default False
            Make the session's workspace if there is none.
        client : str or None, default None
            Who asks, for the per-client cap.

        Returns
        -------
        AppView
            The view.

        Raises
        ------
        InputError
            When a new workspace has no room.
        """
        ws = self.get(session_id, create=create, client=client)
        return AppView(self.app, ws if ws is not None else self._empty)

    def end(self, session_id: str | None) -> bool:
        """Drop a session's workspace now (the tab was closed).

        Parameters
        ----------
        session_id : str or None
            The page's session id (``gr.Request.session_hash``).

        Returns
        -------
        bool
            Whether there was one.
        """
        with self._lock:
            ws = self._items.pop(session_id, None) if session_id else None
        if ws is not None:
            ws.close()
            release_memory()
        return ws is not None

    def sweep(self) -> int:
        """Drop the workspaces idle for longer than the timeout.

        Returns
        -------
        int
            How many went.
        """
        with self._lock:
            drop = self._expired(self.clock())
        for w in drop:
            w.close()
        if drop:
            release_memory()
        return len(drop)

    def _expired(self, now: float) -> list[Workspace]:
        self._last_sweep = now
        old = [k for k, w in self._items.items() if now - w.last_used > self.limits.idle_timeout_s]
        return [self._items.pop(k) for k in old]

    def export_dirs(self) -> list[Path]:
        """The download folders of the sessions held now (the upload janitor leaves them alone).

        Returns
        -------
        list of pathlib.Path
            The folders that exist.
        """
        with self._lock:
            items = list(self._items.values())
        return [d for d in (w.exports_path() for w in items) if d is not None]

    def close_all(self) -> None:
        """Drop every workspace."""
        with self._lock:
            items, self._items = list(self._items.values()), OrderedDict()
        for w in items:
            w.close()

