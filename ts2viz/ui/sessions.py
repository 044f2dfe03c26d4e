"""One private :class:`~ts2viz.ui.state.Workspace` per browser session, dropped when the session ends.

A session is named by the id Gradio gives each page load (``gr.Request.session_hash``, a random
string only that browser tab knows). A workspace is made when the session first adds data (an
upload, a live score, a download) and dropped when the tab closes (Gradio's unload event), after
``idle_timeout_s`` without a request, or, when ``max_sessions`` are held, the least recently used
first. Sessions that only look at the shared data hold nothing here.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable

from .access import Limits
from .state import AppState, AppView, Workspace

#: how often (seconds) idle sessions are looked for, at the latest on the next request
SWEEP_EVERY_S = 30.0


class Workspaces:
    """The workspaces of the sessions of one app process (thread-safe)."""

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

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._items

    def _new(self) -> Workspace:
        return Workspace(self.app, self.limits, exports_root=self.exports_root)

    def get(self, session_id: str | None, *, create: bool) -> Workspace | None:
        """The session's workspace; made if ``create`` and there is none (else ``None``).

        A request without a session id gets a workspace of its own that is not kept.
        """
        if not session_id:
            return self._new() if create else None
        now = self.clock()
        drop: list[Workspace] = []
        with self._lock:
            if now - self._last_sweep >= SWEEP_EVERY_S:
                drop += self._expired(now)
            ws = self._items.get(session_id)
            if ws is None and create:
                while len(self._items) >= self.limits.max_sessions:
                    drop.append(self._items.popitem(last=False)[1])
                ws = self._items[session_id] = self._new()
            if ws is not None:
                ws.last_used = now
                self._items.move_to_end(session_id)
        for w in drop:
            w.close()
        return ws

    def view(self, session_id: str | None, *, create: bool = False) -> AppView:
        """The app as this session sees it (with an empty workspace when it holds nothing yet)."""
        ws = self.get(session_id, create=create)
        return AppView(self.app, ws if ws is not None else self._empty)

    def end(self, session_id: str | None) -> bool:
        """Drop a session's workspace now (the tab was closed). Returns whether there was one."""
        with self._lock:
            ws = self._items.pop(session_id, None) if session_id else None
        if ws is not None:
            ws.close()
        return ws is not None

    def sweep(self) -> int:
        """Drop the workspaces idle for longer than the timeout; returns how many."""
        with self._lock:
            drop = self._expired(self.clock())
        for w in drop:
            w.close()
        return len(drop)

    def _expired(self, now: float) -> list[Workspace]:
        self._last_sweep = now
        old = [k for k, w in self._items.items() if now - w.last_used > self.limits.idle_timeout_s]
        return [self._items.pop(k) for k in old]

    def close_all(self) -> None:
        with self._lock:
            items, self._items = list(self._items.values()), OrderedDict()
        for w in items:
            w.close()

