"""Objects kept beside a session's workspace (a tab's drafts, uploads or results), dropped with it."""
from __future__ import annotations

import threading
from typing import Any, Callable


#: functions called with each workspace that closes (stores elsewhere that hold a session's data
#: register here: their entries go with the session, not only when their bound is reached)
CLOSE_HOOKS: list[Callable[["Workspace"], None]] = []


#: stores kept beside a workspace say here whether it holds something of theirs (then it is not empty)
HOLD_CHECKS: list[Callable[["Workspace"], bool]] = []


class SessionStore:
    """One object per session beside its workspace (a tab's drafts, uploads or results), made on demand.

    Keyed weakly by the workspace, so a workspace that is gone takes its object with it; registered in
    :data:`CLOSE_HOOKS` (the object is dropped when the session closes, after ``on_close(workspace,
    obj)`` if given) and :data:`HOLD_CHECKS` (a session whose object is truthy is not empty). A read-only
    view (the shared, operator-loaded data) has none.

    Parameters
    ----------
    factory : callable
        ``factory(workspace)`` makes the session's object.
    on_close : callable, optional
        ``on_close(workspace, obj)`` after the object is dropped (to delete its files).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> class Space:             # a stand-in for a session's Workspace
    ...     read_only = False
    >>> store = SessionStore(lambda ws: [])
    >>> ws = Space()
    >>> view = SimpleNamespace(workspace=ws)
    >>> store.of(view) is None, store.of(view, create=True)
    (True, [])
    >>> store.of(view).append(1); store.holds(ws)
    True
    >>> store.forget(ws); store.of(view) is None
    True
    >>> CLOSE_HOOKS.remove(store.forget); HOLD_CHECKS.remove(store.holds)
    """

    def __init__(self, factory: Callable[[Any], Any], on_close: Callable[[Any, Any], None] | None = None):
        import weakref

        self._items: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._factory, self._on_close = factory, on_close
        CLOSE_HOOKS.append(self.forget)
        HOLD_CHECKS.append(self.holds)

    def of(self, view, *, create: bool = False):
        """The session's object.

        Parameters
        ----------
        view : AppView
            The session's view.
        create : bool, default False
            Make it if the session has none.

        Returns
        -------
        object or None
            The object; ``None`` on a read-only view, or when there is none and ``create`` is off.
        """
        ws = getattr(view, "workspace", None)
        if ws is None or getattr(ws, "read_only", False):
            return None
        with self._lock:
            obj = self._items.get(ws)
            if obj is None and create:
                obj = self._items[ws] = self._factory(ws)
        return obj

    def forget(self, workspace) -> None:
        """Drop a workspace's object (a :data:`CLOSE_HOOKS` hook).

        Parameters
        ----------
        workspace : Workspace
            The session's workspace.
        """
        with self._lock:
            obj = self._items.pop(workspace, None)
        if obj is not None and self._on_close is not None:
            self._on_close(workspace, obj)

    def holds(self, workspace) -> bool:
        """Whether the workspace's object holds something (a :data:`HOLD_CHECKS` check).

        Parameters
        ----------
        workspace : Workspace
            The session's workspace.

        Returns
        -------
        bool
            True when its object exists and is truthy.
        """
        with self._lock:
            return bool(self._items.get(workspace))
