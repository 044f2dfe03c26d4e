"""A session's own metric scores on the rated sets of the Human ratings tab (private, dropped with it).

A visitor uploads a score file keyed by ``image_id`` for one rated set; its metric columns join that
set's leaderboard, scatter and cross-gold view for that session only. The uploads live beside the
session's :class:`~ts2viz.ui.state.workspace.Workspace` (made on the first upload, closed when the tab closes
or after the idle timeout: :data:`ts2viz.ui.state.session_store.CLOSE_HOOKS` drops them then). A file is checked
and read into them by :func:`ts2viz.ui.callbacks.gold_uploads.add_gold_scores`.
"""
from __future__ import annotations

import threading

from .session_store import SessionStore

#: workspace -> its GoldUploads (weak: a workspace that is gone takes its uploads with it)
_STORE = SessionStore(lambda ws: GoldUploads())


class GoldUploads:
    """One session's uploaded score columns per rated set, and what is computed from them.

    What is computed is memoised until the next upload. ``columns`` maps a rated set's name to a
    DataFrame aligned with its images; ``files`` counts the uploads; ``version`` the changes.
    """

    def __init__(self) -> None:
        self.columns: dict[str, object] = {}     # rated-set name -> DataFrame aligned with its images
        self.files = 0
        self.version = 0
        self._memo: dict = {}
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        """Whether the session uploaded scores for some rated set."""
        return bool(self.columns)

    @property
    def n_metrics(self) -> int:
        """The metrics uploaded, over all rated sets."""
        return sum(len(df.columns) for df in self.columns.values())

    def metrics(self, name: str) -> list[str]:
        """The metrics uploaded for one rated set.

        Parameters
        ----------
        name : str
            The rated set's name.

        Returns
        -------
        list of str
            Their names (empty if none).
        """
        df = self.columns.get(name)
        return [] if df is None else list(df.columns)

    def add(self, name: str, table) -> None:
        """Add a score table for a rated set (its columns beside any uploaded before).

        Parameters
        ----------
        name : str
            The rated set's name.
        table : pandas.DataFrame
            One column per metric, aligned with the set's images.
        """
        import pandas as pd

        with self._lock:
            old = self.columns.get(name)
            self.columns[name] = table if old is None else pd.concat([old, table], axis=1)
            self.files += 1
            self.version += 1
            self._memo.clear()

    def memo(self, key, build):
        """A result computed once until the next upload.

        Parameters
        ----------
        key : hashable
            Names what the result depends on besides the uploads.
        build : callable
            ``build()`` computes it.

        Returns
        -------
        object
            The result.
        """
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        out = build()
        with self._lock:
            self._memo[key] = out
        return out


def uploads_of(view, *, create: bool = False) -> GoldUploads | None:
    """The session's gold uploads.

    Parameters
    ----------
    view : AppView
        The session's view.
    create : bool, default False
        Make them if the session has none.

    Returns
    -------
    GoldUploads or None
        The uploads; ``None`` on a read-only view, or when there are none and ``create`` is off.
    """
    return _STORE.of(view, create=create)
