"""One browser session's own data (:class:`Workspace`), private to it.

Score files it uploaded and metrics it scored live, their meta-metrics, and the folder its downloads are
written to, within the caps of :class:`~ts2viz.ui.serving.access.Limits`.
:class:`~ts2viz.ui.state.sessions.Workspaces` holds one per session and drops it when the session ends.
"""
from __future__ import annotations

import secrets
import shutil
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from ...errors import InputError
from ...metametrics.results import MetaMetrics
from ...scores import Scores, merge
from ..serving.access import Limits
from .memo import Memo
from .session_store import CLOSE_HOOKS, HOLD_CHECKS
from .tables import Table, TableSet


#: bytes of view parts (figure JSON, tables, graph HTML) one session keeps of its own
SESSION_MEMO_BYTES = 4 * 1024 * 1024


#: downloads a session keeps on disk at once (older ones are deleted when a new one is made)
MAX_DOWNLOADS = 20


class Workspace(TableSet):
    """One session's own data: uploaded score files and live-scored metrics, private to it.

    The folder of its downloads, the downloads in it and the visitor's uploaded files registered with
    :meth:`own_file` are deleted by :meth:`close`.

    Parameters
    ----------
    app : AppState
        The app it belongs to.
    limits : Limits or None, default None
        Caps on what it may hold (``None``: the app's trust level's).
    exports_root : pathlib.Path or None, default None
        Where its downloads folder is made (``None``: ``<cache>/sessions``).
    read_only : bool, default False
        Stands for a session that holds nothing: adding to it raises ``RuntimeError``.
    """

    def __init__(self, app: AppState, limits: Limits | None = None, *, exports_root: Path | None = None,
                 read_only: bool = False) -> None:
        super().__init__(app.dataset)
        self.read_only = read_only
        self.app = app
        self.limits = limits or app.access.limits
        self.exports_root = Path(exports_root) if exports_root is not None else app.cache_root / "sessions"
        self.memo = Memo(SESSION_MEMO_BYTES)
        self.uploads = 0
        self.closed = False
        self.last_used = time.monotonic()
        self.client: str | None = None      # the address of the client that made it (per-client cap)
        self._joined: dict[tuple[str, str], tuple[tuple[int, int], MetaMetrics]] = {}
        #: what a metric this session loaded is (``config_hash``, ``family``, ...), by its name: the
        #: question views read its per-image details from the score cache without loading it again
        self.metric_info: dict[str, dict] = {}
        self._exports: Path | None = None
        self._downloads: list[Path] = []
        self._files: list[Path] = []

    def _changed(self) -> None:
        super()._changed()
        self._joined = {}
        self.memo.clear()

    # -- adding data ------------------------------------------------------------------------------
    def require_room(self, new_metrics: Sequence[str]) -> None:
        """Refuse metrics that would pass the session's metric cap.

        Parameters
        ----------
        new_metrics : sequence of str
            The metrics to add (those it holds already do not count).

        Raises
        ------
        InputError
            Past ``limits.max_metrics``.
        """
        fresh = [m for m in dict.fromkeys(new_metrics) if not self.has(m)]
        if len(self.metrics) + len(fresh) > self.limits.max_metrics:
            raise InputError(f"a session may hold at most {self.limits.max_metrics} metrics of its own "
                             f"(this one has {len(self.metrics)}); reload the page to start a new session")

    def add_table(self, scores: Scores, *, kind: str, name: str) -> None:
        """Add an uploaded or live-scored table.

        A metric already loaded (shared or own) is an error, except that a live metric is updated in place (new
        scores fill in or replace old ones).

        Parameters
        ----------
        scores : ts2viz.scores.Scores
            The scores.
        kind : str
            ``uploaded`` or ``live``.
        name : str
            The table's name (for messages).

        Raises
        ------
        ValueError
            For another kind.
        RuntimeError
            On a read-only workspace.
        InputError
            When the session has ended, the scores name an image the dataset lacks or a metric already
            loaded, or the session's caps (uploads, metrics) would be passed.
        """
        if kind not in ("uploaded", "live"):
            raise ValueError(f"a session adds uploaded or live tables, not {kind!r}")
        if self.read_only:
            raise RuntimeError("a read-only view cannot add data; get the session's workspace with create=True")
        self._check_names(scores, name)
        with self._lock:
            if self.closed:
                raise InputError("this session has ended; reload the page")
            clash = [m for m in scores.metrics if self.app.has(m)]
            if clash:
                raise InputError(f"metric {clash[0]!r} is already loaded; rename the column to add it again",
                                 file=name)
            if kind == "uploaded":
                if self.uploads >= self.limits.max_uploads:
                    raise InputError(f"a session may add at most {self.limits.max_uploads} score files; "
                                     "reload the page to start a new session")
            else:
                scores = self._update_live(scores)
            clash = [m for m in scores.metrics if self.has(m)]
            if clash:
                raise InputError(f"metric {clash[0]!r} is already loaded; rename the column to add it again",
                                 file=name)
            self.require_room(scores.metrics)
            if not scores.metrics:
                return
            self.tables.append(Table(name, kind, scores))
            if kind == "uploaded":
                self.uploads += 1
            self._changed()

    def _update_live(self, new: Scores) -> Scores:
        """Fold a live result into an existing live table of the same metric, removing that table."""
        keep_metrics = list(new.metrics)
        for t in list(self.tables):
            if t.kind != "live":
                continue
            shared = [m for m in t.scores.metrics if m in keep_metrics]
            if not shared:
                continue
            names = list(dict.fromkeys(list(t.scores.file_names) + list(new.file_names)))
            old = t.scores.aligned(names, shared, oriented=False)
            fresh = new.aligned(names, shared, oriented=False)
            vals = np.where(np.isnan(fresh), old, fresh)
            rest = [m for m in t.scores.metrics if m not in shared]
            self.tables.remove(t)
            if rest:
                self.tables.append(Table(t.name, "live", t.scores.select(rest)))
            others = [m for m in keep_metrics if m not in shared]
            merged = Scores(names, shared, vals, {m for m in shared if m in new.lower_is_better
                                                   or m in t.scores.lower_is_better}, source="live")
            if others:
                merged = merge([merged, new.select(others)])
            new = merged
        return new

    def joined_mm(self, mode: str, shared: AppState | None = None) -> MetaMetrics:
        """Shared and own meta-metrics side by side (the shared part computed once for all sessions).

        Parameters
        ----------
        mode : str
            A meta-metric policy preset (``paper`` or ``spec``).
        shared : AppState or None, default None
            The version of the shared data the session sees (``None``: the app's own).

        Returns
        -------
        ts2viz.metametrics.results.MetaMetrics
            The joined meta-metrics (cached per mode and variant).

        Raises
        ------
        InputError
            For an unknown mode, or when the session holds no table.
        """
        shared = self.app if shared is None else shared
        own = self.mm(mode)
        if not shared.tables:
            return own
        key = (shared.version, self.version)
        with self._lock:
            hit = self._joined.get((mode, shared.variant_name))
            if hit is not None and hit[0] == key:
                return hit[1]
        out = MetaMetrics.join([shared.mm(mode), own])
        with self._lock:
            self._joined[(mode, shared.variant_name)] = (key, out)
        return out

    def remember_metric(self, metric) -> None:
        """Note what a loaded metric is (:attr:`metric_info`), under the name its scores get.

        Its ``config_hash``, family, whether it has per-image details, its accumulation (DSG) and score
        option: the question views read its details from the score cache without loading it again.

        Parameters
        ----------
        metric : ts2viz.metrics.Metric
            The metric.
        """
        if self.read_only:
            return
        from ...metrics.registry import details_kind
        from ...qa.details import DEPENDENT

        config = getattr(metric, "config", None) or {}
        info = {"config_hash": metric.config_hash, "family": str(config.get("family", getattr(metric, "name", ""))),
                "has_details": bool(getattr(metric, "has_details", False)),
                "accumulation": getattr(metric, "accumulation", None) if details_kind(config.get("family")) == DEPENDENT
                else None,
                "score": getattr(metric, "score", None) if isinstance(getattr(metric, "score", None), str) else None}
        with self._lock:
            self.metric_info[metric.spec] = info

    # -- files ------------------------------------------------------------------------------------
    def exports_dir(self) -> Path:
        """The session's downloads folder (made on first use, a random name nobody else can guess).

        Returns
        -------
        pathlib.Path
            The folder.

        Raises
        ------
        RuntimeError
            On a read-only workspace.
        """
        if self.read_only:
            raise RuntimeError("a read-only view has no downloads folder")
        with self._lock:
            if self._exports is None:
                self.exports_root.mkdir(parents=True, exist_ok=True)
                d = self.exports_root / f"ts2viz-{secrets.token_hex(16)}"
                d.mkdir(mode=0o700)
                self._exports = d
            return self._exports

    def exports_path(self) -> Path | None:
        """The session's downloads folder if it has one (none is made here).

        Returns
        -------
        pathlib.Path or None
            The folder.
        """
        return self._exports

    def new_download(self, name: str) -> Path:
        """A path for a new download in this session's folder.

        The oldest downloads beyond :data:`MAX_DOWNLOADS` are deleted (only this session's own files).

        Parameters
        ----------
        name : str
            The file's name.

        Returns
        -------
        pathlib.Path
            The path (in a new sub-folder of its own; the file is not written).

        Raises
        ------
        RuntimeError
            On a read-only workspace.
        """
        d = self.exports_dir()
        with self._lock:
            sub = d / secrets.token_hex(4)
            sub.mkdir()
            p = sub / name
            self._downloads.append(p)
            old, self._downloads = self._downloads[:-MAX_DOWNLOADS], self._downloads[-MAX_DOWNLOADS:]
        for q in old:
            shutil.rmtree(q.parent, ignore_errors=True)
        return p

    def is_empty(self) -> bool:
        """Whether the session holds nothing of use.

        No tables, downloads or loaded metrics, and nothing in the stores registered in
        :data:`~ts2viz.ui.state.session_store.HOLD_CHECKS`
        (the uploads it tried are let go with it).

        Returns
        -------
        bool
            True when it holds nothing.
        """
        with self._lock:
            if self.tables or self._downloads or self.metric_info:
                return False
        return not any(check(self) for check in list(HOLD_CHECKS))

    def own_file(self, path) -> None:
        """Register a file the visitor uploaded, to be deleted when the session ends.

        Parameters
        ----------
        path : str or os.PathLike
            The uploaded file.

        Raises
        ------
        RuntimeError
            On a read-only workspace.
        """
        if self.read_only:
            raise RuntimeError("a read-only view owns no files")
        with self._lock:
            p = Path(str(path))
            if p not in self._files:      # once per path: its release is counted once (ts2viz.ui.serving.uploads)
                self._files.append(p)

    def close(self) -> None:
        """Drop everything the session holds: its tables, caches, downloads and uploaded files.

        The :data:`~ts2viz.ui.state.session_store.CLOSE_HOOKS` are called; an uploaded file is deleted only when no
        other upload of the same
        path still waits (:class:`ts2viz.ui.serving.uploads.UploadRegistry`).
        """
        with self._lock:
            self.closed = True
            self.tables = []
            self._changed()
            exports, self._exports = self._exports, None
            files, self._files = self._files, []
            self._downloads = []
        for hook in list(CLOSE_HOOKS):
            try:
                hook(self)
            except Exception:  # noqa: BLE001 - one store's failure must not keep the session's files
                pass
        if exports is not None:
            shutil.rmtree(exports, ignore_errors=True)
        ledger = getattr(self.app, "disk", None)
        if ledger is not None:
            ledger.forget(self)
        from ..serving.uploads import REGISTRY

        for f in files:
            if not REGISTRY.release(f):
                continue              # the same bytes uploaded again, by another tab: still waiting
            try:
                f.unlink(missing_ok=True)
                f.parent.rmdir()      # Gradio keeps each upload in a folder of its own
            except OSError:
                pass
