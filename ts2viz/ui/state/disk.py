"""One disk budget for what visitors' sessions keep on the server: per session, per client, in all.

A session's bytes on disk are what lies in its own folder (the authoring tab's images, unpacked
imports, exports, the CSV downloads) and the uploaded files it used (Gradio's upload folder), measured
on disk, not estimated. Before a call writes something large (images added to a SEG, an imported
.zip, an export) it asks :meth:`DiskLedger.require` for room for what it is about to write: past the
session's, its client's (address) or the app's budget it is refused with one line, before a byte is
written. After the call the session's usage is measured again (:meth:`DiskLedger.refresh`); a session
that ends takes its bytes with it (its folder is deleted, :meth:`DiskLedger.forget`).

Budgets (public mode; the operator's own app has none): ``TS2VIZ_SESSION_DISK_MB`` (default 400),
``TS2VIZ_CLIENT_DISK_MB`` (default 800), ``TS2VIZ_DISK_MB`` (default 4096).
"""
from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path

from ...errors import InputError

MIB = 1024 * 1024


def _env_mb(name: str, default: float) -> int:
    try:
        return int(float(os.environ.get(name) or default) * MIB)
    except ValueError:
        return int(default * MIB)


def folder_bytes(path: Path | None) -> int:
    """Bytes of the files under a folder (links not followed).

    Parameters
    ----------
    path : pathlib.Path or None
        The folder.

    Returns
    -------
    int
        Bytes; 0 for ``None`` or a missing folder.
    """
    if path is None:
        return 0
    total = 0
    stack = [str(path)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        elif e.is_file(follow_symlinks=False):
                            total += e.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total


def _mb(n: int) -> str:
    return f"{n / MIB:,.0f} MB" if n >= 10 * MIB else f"{n / MIB:,.1f} MB"


class DiskLedger:
    """The bytes each open session keeps on disk, against three budgets.

    Parameters
    ----------
    per_session : int or None
        Bytes one session may keep (``None``: no budget).
    per_client : int or None
        Bytes one client's (address's) sessions may keep together.
    total : int or None
        Bytes all sessions may keep together.

    Examples
    --------
    A session (here a stand-in with no folder yet) may write 2 MB of its 10, not 12:

    >>> class Session:
    ...     client = "1.2.3.4"
    ...     def exports_path(self):
    ...         return None
    >>> ledger, session = DiskLedger(per_session=10 * MIB, per_client=None, total=None), Session()
    >>> ledger.require(session, 2 * MIB, "the export")
    >>> ledger.require(session, 12 * MIB, "the export")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: the export needs 12 MB of disk; this session's files already take 0.0 MB of 10 MB; ...
    """

    def __init__(self, per_session: int | None, per_client: int | None, total: int | None) -> None:
        self.per_session = per_session
        self.per_client = per_client
        self.total = total
        self._usage: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, public: bool) -> "DiskLedger":
        """The budgets of the environment: a public app's, or none (the operator's app counts but refuses nothing).

        ``TS2VIZ_SESSION_DISK_MB`` (default 400), ``TS2VIZ_CLIENT_DISK_MB`` (default 800), ``TS2VIZ_DISK_MB``
        (default 4096).

        Parameters
        ----------
        public : bool
            Public mode.

        Returns
        -------
        DiskLedger
            The ledger.
        """
        if not public:
            return cls(None, None, None)
        return cls(_env_mb("TS2VIZ_SESSION_DISK_MB", 400), _env_mb("TS2VIZ_CLIENT_DISK_MB", 800),
                   _env_mb("TS2VIZ_DISK_MB", 4096))

    @staticmethod
    def measure(workspace) -> int:
        """The session's bytes on disk now: its own folder and the uploaded files it used.

        Parameters
        ----------
        workspace : ts2viz.ui.state.workspace.Workspace
            The session's workspace.

        Returns
        -------
        int
            Bytes.
        """
        n = folder_bytes(workspace.exports_path())
        for f in list(getattr(workspace, "_files", ())):
            try:
                n += os.stat(f).st_size
            except OSError:
                pass
        return n

    def refresh(self, workspace) -> int:
        """Measure a session again and record it.

        Parameters
        ----------
        workspace : ts2viz.ui.state.workspace.Workspace
            The session's workspace.

        Returns
        -------
        int
            Its bytes on disk.
        """
        n = self.measure(workspace)
        with self._lock:
            self._usage[workspace] = n
        return n

    def forget(self, workspace) -> None:
        """Stop counting a session (it ended; its folder is deleted).

        Parameters
        ----------
        workspace : ts2viz.ui.state.workspace.Workspace
            The session's workspace.
        """
        with self._lock:
            self._usage.pop(workspace, None)

    def used(self, client: str | None = None) -> int:
        """Bytes of every open session, or of one client's.

        Parameters
        ----------
        client : str or None, default None
            A client address (``None``: every session).

        Returns
        -------
        int
            Bytes, as last measured.
        """
        with self._lock:
            items = list(self._usage.items())
        return sum(n for w, n in items if client is None or getattr(w, "client", None) == client)

    def require(self, workspace, extra: int, what: str) -> None:
        """Refuse a write that would pass a budget, before a byte is written.

        Parameters
        ----------
        workspace : ts2viz.ui.state.workspace.Workspace
            The session's workspace.
        extra : int
            The bytes about to be written.
        what : str
            What was to be written (for the message).

        Raises
        ------
        InputError
            One line saying which budget (the session's, the client's, the app's) is used up.
        """
        mine = self.refresh(workspace)
        checks = [(self.per_session, mine, "this session's"),
                  (self.per_client, self.used(getattr(workspace, "client", None)), "your sessions'"),
                  (self.total, self.used(), "the app's")]
        for budget, used, whose in checks:
            if budget is not None and used + extra > budget:
                raise InputError(f"{what} needs {_mb(extra)} of disk; {whose} files already take {_mb(used)} "
                                 f"of {_mb(budget)}" + ("; try again later" if whose == "the app's"
                                                          else "; remove SEGs or images, or reload the page"))


def ledger_of(view) -> DiskLedger | None:
    """The app's disk ledger: the one of the app that made the session's workspace.

    A variant of the shared data counts in the same ledger.

    Parameters
    ----------
    view : AppView or Workspace
        A session's view or workspace.

    Returns
    -------
    DiskLedger or None
        The ledger, if the app has one.
    """
    ws = getattr(view, "workspace", view)
    return getattr(getattr(ws, "app", None), "disk", None)


def require(view, extra: int, what: str) -> None:
    """:meth:`DiskLedger.require` for the session of a view (nothing without a ledger or on a read-only view).

    Parameters
    ----------
    view : AppView
        The session's view.
    extra : int
        The bytes about to be written.
    what : str
        What was to be written.

    Raises
    ------
    InputError
        When a budget is used up.
    """
    ledger = ledger_of(view)
    ws = getattr(view, "workspace", None)
    if ledger is not None and ws is not None and not getattr(ws, "read_only", False):
        ledger.require(ws, int(extra), what)


def refresh(view) -> None:
    """Measure the session of a view again (nothing without a ledger or on a read-only view).

    Parameters
    ----------
    view : AppView
        The session's view.
    """
    ledger = ledger_of(view)
    ws = getattr(view, "workspace", None)
    if ledger is not None and ws is not None and not getattr(ws, "read_only", False):
        ledger.refresh(ws)
