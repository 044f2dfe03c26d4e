"""The app's state, split by who owns it.

- :class:`AppState`: what the operator loaded at start (the dataset; the bundled published scores or
  the files given on the command line). Shared by every session and never changed by a visitor. Its
  meta-metrics are computed once per mode (and kept on disk, keyed by the data and the format
  version, which keeps app start fast), and view parts that depend only on shared data are kept in a
  bounded :class:`~ts2viz.ui.state.memo.Memo` for every session to reuse.
- :class:`Workspace`: one browser session's own data: score files it uploaded and metrics it scored
  live, their meta-metrics, and the folder its downloads are written to, within the caps of
  :class:`~ts2viz.ui.serving.access.Limits`. :class:`~ts2viz.ui.state.sessions.Workspaces` holds one per session and
  drops it when the session ends.
- :class:`AppView`: the app as one session sees it, the shared tables followed by its own. Every
  callback takes one. Meta-metrics of the two are computed separately and joined metric-wise
  (:meth:`~ts2viz.metametrics.results.MetaMetrics.join`), so a visitor's upload computes only its own metrics.
"""
from __future__ import annotations

import hashlib
import secrets
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import InputError
from ...metametrics.results import FORMAT_VERSION, MetaMetrics, compute
from ...paths import cache_dir
from ...metametrics.policy import MODES, resolve_policy
from ...scores import Scores, merge
from ..serving.access import Access, Limits, operator
from .memo import Memo
from ..images.thumbs import Thumbs

KINDS = ("published", "uploaded", "live")

#: bytes of view parts (figure JSON, tables, graph HTML) kept for all sessions, and for one session's own
SHARED_MEMO_BYTES = 32 * 1024 * 1024
SESSION_MEMO_BYTES = 4 * 1024 * 1024
#: downloads a session keeps on disk at once (older ones are deleted when a new one is made)
MAX_DOWNLOADS = 20


def metric_family(name: str) -> str:
    """A display family for a metric name.

    Parameters
    ----------
    name : str
        A metric name or spec.

    Returns
    -------
    str
        ``Embedding``, ``TIFA``, ``DSG``, ``VQAScore``, ``LLMScore``, ``VIEScore``, or the name's head.

    Examples
    --------
    >>> metric_family("clipscore:openai/clip-vit-base-patch32"), metric_family("TIFA-mPLUG"), metric_family("Mine")
    ('Embedding', 'TIFA', 'Mine')
    """
    head = name.split(":", 1)[0] if ":" in name else name.split("-", 1)[0]
    low = head.lower()
    if low in ("clipscore", "alignscore", "siglip", "siglipscore", "blipscore", "openclip", "embedding"):
        return "Embedding"
    if low.startswith("tifa"):
        return "TIFA"
    if low.startswith("dsg"):
        return "DSG"
    if low.startswith("vqascore") or low == "vqa":
        return "VQAScore"
    if low.startswith("llmscore"):
        return "LLMScore"
    if low.startswith("viescore"):
        return "VIEScore"
    return head or name


@dataclass
class Table:
    """A scores table loaded into the app, with its meta-metrics per mode once computed.

    Parameters
    ----------
    name : str
        Its name (a file name, ``TS2 published scores``, a live metric's).
    kind : str
        ``published`` (the operator's), ``uploaded`` or ``live`` (a session's).
    scores : ts2viz.scores.Scores
        The scores.
    results : dict of str to MetaMetrics, default {}
        Meta-metrics by mode, once computed.
    """

    name: str
    kind: str
    scores: Scores
    results: dict[str, MetaMetrics] = field(default_factory=dict, repr=False)


class TableSet:
    """Scores tables over one dataset, with merged scores and meta-metrics per mode (cached).

    ``version`` counts the changes (a cache key of every view built from the tables).

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        The dataset every table scores.
    """

    def __init__(self, dataset) -> None:
        self.dataset = dataset
        self.tables: list[Table] = []
        self.version = 0
        self._lock = threading.RLock()
        self._mm: dict[str, tuple[int, MetaMetrics]] = {}
        self._merged: tuple[int, Scores] | None = None

    @property
    def metrics(self) -> list[str]:
        """The metrics of every table, in table order."""
        return [m for t in self.tables for m in t.scores.metrics]

    def has(self, metric: str) -> bool:
        """Whether a table holds a metric.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        bool
            True if some table has it.
        """
        return any(metric in t.scores.metrics for t in self.tables)

    def kind_of(self, metric: str) -> str:
        """The kind of the table that holds a metric.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        str
            ``published``, ``uploaded`` or ``live``.

        Raises
        ------
        KeyError
            If no table holds it.
        """
        for t in self.tables:
            if metric in t.scores.metrics:
                return t.kind
        raise KeyError(metric)

    def lower_is_better(self, metric: str) -> bool:
        """Whether a metric's smaller values mean more faithful.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        bool
            True if a table declares it lower-is-better.
        """
        return any(metric in t.scores.lower_is_better for t in self.tables)

    def _check_names(self, scores: Scores, name: str) -> None:
        unknown = [f for f in scores.file_names if not self.dataset.has_image(f)]
        if unknown:
            raise InputError(f"unknown file_name {unknown[0]!r}: not an image of dataset {self.dataset.name}",
                             file=name)

    def _append(self, table: Table) -> None:
        self.tables.append(table)
        self._changed()

    def _changed(self) -> None:
        self.version += 1
        self._mm.clear()
        self._merged = None

    def scores(self) -> Scores:
        """All tables merged (cached until a table is added).

        Returns
        -------
        ts2viz.scores.Scores
            The merged scores.
        """
        with self._lock:
            if self._merged is None or self._merged[0] != self.version:
                self._merged = (self.version, merge([t.scores for t in self.tables]))
            return self._merged[1]

    def mm(self, mode: str) -> MetaMetrics:
        """Meta-metrics of every metric of these tables, in a mode (cached).

        Each table's are computed once and joined metric-wise.

        Parameters
        ----------
        mode : str
            A meta-metric policy preset (``paper`` or ``spec``).

        Returns
        -------
        ts2viz.metametrics.results.MetaMetrics
            The meta-metrics.

        Raises
        ------
        InputError
            For an unknown mode, or when no table is loaded.
        """
        if mode not in MODES:
            raise InputError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
        with self._lock:
            hit = self._mm.get(mode)
            if hit is not None and hit[0] == self.version:
                return hit[1]
            if not self.tables:
                raise InputError("no scores loaded")
            out = MetaMetrics.join([self._table_mm(t, mode) for t in self.tables])
            self._mm[mode] = (self.version, out)
            return out

    def _table_mm(self, t: Table, mode: str) -> MetaMetrics:
        hit = t.results.get(mode)
        if hit is None:
            hit = t.results[mode] = compute(self.dataset, t.scores, policy=mode)
        return hit

    def _owner(self, metric: str) -> Table:
        for t in self.tables:
            if metric in t.scores.metrics:
                return t
        raise InputError(f"no metric {metric!r} loaded")

    def column(self, file_names: Sequence[str], metric: str) -> np.ndarray:
        """Raw (not oriented) scores of one metric for some images, NaN where unscored.

        Parameters
        ----------
        file_names : sequence of str
            The images.
        metric : str
            A metric name.

        Returns
        -------
        numpy.ndarray
            (images,) scores.

        Raises
        ------
        InputError
            If no table holds the metric.
        """
        return self._owner(metric).scores.aligned(list(file_names), [metric], oriented=False)[:, 0]


class AppState(TableSet):
    """What the operator loaded: shared by every session of one app process; thread-safe.

    Made by :func:`ts2viz.ui.load_state` (or :meth:`create`). Tables are added while the app starts
    (:meth:`add_table`); visitors add theirs to a :class:`Workspace`. Meta-metrics of published tables
    are also kept on disk under ``cache_root``, keyed by format version, policy, dataset and scores.

    *Variants* of the shared data (:meth:`add_variant`): the same dataset with other tables, e.g. the
    bundled TS2 scores with the DSG columns accumulated ``gated`` instead of ``mean``. Each is an
    AppState of its own, built once on first use and shared by every session that picks it
    (:meth:`variant`); ``variant_name`` names the one an AppState is (``""`` without variants).

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        The dataset.
    cache_root : pathlib.Path
        The folder for meta-metrics, thumbnails and sessions' downloads.
    thumbs : ts2viz.ui.images.thumbs.Thumbs
        The thumbnail store of the dataset's images.
    access : Access or None, default None
        The process's trust level (:mod:`ts2viz.ui.serving.access`); ``None``: operator mode.

    Examples
    --------
    >>> from ts2viz.ui import load_state
    >>> app = load_state("ts2", fetch_images=False)
    >>> app.variant_names, len(app.metrics)
    (['mean', 'gated'], 19)
    >>> app.mm("paper").averages()["ord_avg"].shape
    (19,)
    """

    def __init__(self, dataset, cache_root: Path, thumbs: Thumbs, access: Access | None = None) -> None:
        super().__init__(dataset)
        self.cache_root = cache_root
        self.thumbs = thumbs
        self.access = access or operator()
        self.memo = Memo(SHARED_MEMO_BYTES)
        from .disk import DiskLedger

        #: the sessions' bytes on disk against the public app's budgets (:mod:`ts2viz.ui.state.disk`)
        self.disk = DiskLedger.from_env(self.access.public)
        self.variant_name = ""
        # name -> the variant (once built) or its tables' loader; shared by all variants of one app
        self._variants: dict[str, "AppState | Callable[[], Sequence[tuple[str, str, Scores]]]"] = {}
        self._variant_lock = threading.Lock()

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def create(cls, dataset, tables: Sequence[tuple[str, str, Scores]] = (), *,
               cache_root: Path | None = None, fetch_images: bool = True,
               access: Access | None = None) -> "AppState":
        """An AppState of a dataset and its operator's tables.

        Parameters
        ----------
        dataset : ts2viz.dataset.Dataset
            The dataset.
        tables : sequence of (str, str, Scores), default ()
            ``(name, kind, scores)`` of each table (kind ``published``).
        cache_root : pathlib.Path or None, default None
            The cache folder (made if missing); ``None``: :func:`ts2viz.paths.cache_dir`.
        fetch_images : bool, default True
            Fetch images of a hub dataset for the thumbnails.
        access : Access or None, default None
            The trust level (``None``: operator mode).

        Returns
        -------
        AppState
            The state, tables added.

        Raises
        ------
        InputError
            When a table names an image the dataset lacks, or a metric twice.
        """
        root = Path(cache_root) if cache_root is not None else cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        dkey = hashlib.sha1(f"{dataset.name}|{dataset.root}|{dataset.hf_id}".encode()).hexdigest()[:12]
        thumbs = Thumbs(dataset, root / "thumbs" / dkey, fetch=fetch_images)
        st = cls(dataset, root, thumbs, access)
        for name, kind, sc in tables:
            st.add_table(sc, kind=kind, name=name)
        return st

    def add_table(self, scores: Scores, *, kind: str = "published", name: str) -> None:
        """Add an operator's scores table.

        Parameters
        ----------
        scores : ts2viz.scores.Scores
            The scores (every image one of the dataset's).
        kind : str, default "published"
            The table's kind (one of :data:`KINDS`).
        name : str
            The table's name (for messages).

        Raises
        ------
        ValueError
            For an unknown kind.
        InputError
            When the scores name an image the dataset lacks, or a metric already loaded.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown table kind {kind!r}")
        self._check_names(scores, name)
        with self._lock:
            clash = [m for m in scores.metrics if self.has(m)]
            if clash:
                raise InputError(f"metric {clash[0]!r} is already loaded; rename the column to add it again",
                                 file=name)
            if scores.metrics:
                self._append(Table(name, kind, scores))
                self.memo.clear()

    def view(self, workspace: "Workspace | None" = None) -> "AppView":
        """The app as one session sees it.

        Parameters
        ----------
        workspace : Workspace or None, default None
            The session's workspace; ``None``: a fresh private one.

        Returns
        -------
        AppView
            The view.
        """
        return AppView(self, workspace if workspace is not None else Workspace(self))

    # -- variants of the shared data ----------------------------------------------------------------
    def add_variant(self, name: str, tables: Callable[[], Sequence[tuple[str, str, Scores]]], *,
                    this: str | None = None) -> None:
        """Offer another version of the shared tables, loaded when first asked for.

        Parameters
        ----------
        name : str
            The version's name.
        tables : callable
            ``tables()`` gives its ``(name, kind, scores)`` triples, as for :meth:`create`.
        this : str or None, default None
            The name of the version this AppState holds (set once, with the first variant).

        Raises
        ------
        ValueError
            When this AppState's own version has not been named yet.
        """
        with self._variant_lock:
            if this is not None:
                self.variant_name = this
                self._variants[this] = self
            if not self.variant_name:
                raise ValueError("name this AppState's own variant (this=...) before adding others")
            self._variants[name] = tables

    @property
    def variant_names(self) -> list[str]:
        """The names of the shared data's versions (empty when there is only one)."""
        return list(self._variants)

    def variant(self, name: str | None) -> "AppState":
        """The version of the shared data with this name, built once.

        A variant shares this app's dataset, thumbnails, cache folder, trust level and view memo (its keys
        carry the variant's name, :meth:`AppView.memo`).

        Parameters
        ----------
        name : str or None
            A name of :attr:`variant_names`; ``None`` or ``""``: this one.

        Returns
        -------
        AppState
            The variant.

        Raises
        ------
        InputError
            For an unknown name.
        """
        if name in (None, "", self.variant_name):
            return self
        with self._variant_lock:
            hit = self._variants.get(name)
            if hit is None:
                raise InputError(f"unknown data variant {str(name)[:40]!r} (have: {', '.join(self._variants) or 'none'})")
            if not isinstance(hit, AppState):
                v = AppState(self.dataset, self.cache_root, self.thumbs, self.access)
                for tname, kind, sc in hit():
                    v.add_table(sc, kind=kind, name=tname)
                v.variant_name = name
                v._variants = self._variants
                v._variant_lock = self._variant_lock
                v.memo = self.memo
                self._variants[name] = hit = v
        hit.access = self.access   # the app sets its upload folder after start
        return hit

    # -- meta-metrics: published tables are also kept on disk -----------------------------------------
    def _table_mm(self, t: Table, mode: str) -> MetaMetrics:
        hit = t.results.get(mode)
        if hit is not None:
            return hit
        res = None
        disk = self._disk_path(t, mode) if t.kind == "published" else None
        if disk is not None and disk.is_file():
            try:
                res = MetaMetrics.load(disk, self.dataset)
            except (OSError, ValueError, KeyError):
                res = None   # another format version or a damaged file: recompute below
        if res is None:
            res = compute(self.dataset, t.scores, policy=mode)
            if disk is not None:
                try:
                    res.save(disk)
                except OSError:
                    pass     # a read-only cache only costs the recomputation next start
        t.results[mode] = res
        return res

    def _disk_path(self, t: Table, mode: str) -> Path:
        """Where a published table's results are kept: keyed by format version, policy, dataset and scores."""
        h = hashlib.sha1()
        h.update(f"v{FORMAT_VERSION}|{resolve_policy(mode)}".encode())
        h.update(self.dataset.fingerprint().encode())
        for sid, seg in self.dataset.segs.items():
            h.update(f"{sid}|{seg.edges}".encode())
        h.update("\n".join(t.scores.file_names).encode())
        h.update("|".join(t.scores.metrics).encode())
        h.update(",".join(sorted(t.scores.lower_is_better)).encode())
        h.update(np.ascontiguousarray(t.scores.values).tobytes())
        return self.cache_root / "metametrics" / f"{h.hexdigest()[:24]}.npz"

    def warm(self, modes: Sequence[str] = MODES) -> None:
        """Compute the meta-metrics of every mode (and of every variant) ahead of the first request.

        Parameters
        ----------
        modes : sequence of str, default MODES
            The modes.
        """
        for name in [self.variant_name] + [n for n in self.variant_names if n != self.variant_name]:
            v = self.variant(name)
            for m in modes:
                v.mm(m)

    def metric_object(self, spec: str, device=None):
        """A loaded metric from the library (:func:`ts2viz.engine.get_metric` keeps a few for reuse).

        Parameters
        ----------
        spec : str
            A metric spec (checked by the caller against the trust level).
        device : str or None, default None
            Where it runs (``None``: the engine's choice).

        Returns
        -------
        ts2viz.metrics.Metric
            The metric.
        """
        from ...engine import get_metric

        return get_metric(spec, device)


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
        config = getattr(metric, "config", None) or {}
        info = {"config_hash": metric.config_hash, "family": str(config.get("family", getattr(metric, "name", ""))),
                "has_details": bool(getattr(metric, "has_details", False)),
                "accumulation": getattr(metric, "accumulation", None) if config.get("family") == "dsg" else None,
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

        No tables, downloads or loaded metrics, and nothing in the stores registered in :data:`HOLD_CHECKS`
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

        The :data:`CLOSE_HOOKS` are called; an uploaded file is deleted only when no other upload of the same
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


class AppView:
    """The app as one session sees it: the operator's shared tables, then the session's own.

    Every callback takes one (as its first argument, named ``app``). Reads go to whichever side holds a
    metric; writes go to the session's :class:`Workspace`. Meta-metrics of the two are computed
    separately and joined metric-wise, so a visitor's upload computes only its own metrics.

    Parameters
    ----------
    app : AppState
        The shared data (the variant the session picked).
    workspace : Workspace
        The session's own data.
    """

    def __init__(self, app: AppState, workspace: Workspace) -> None:
        self.app = app
        self.workspace = workspace

    # -- what both sides share ----------------------------------------------------------------------
    @property
    def dataset(self):
        """The dataset."""
        return self.app.dataset

    @property
    def thumbs(self) -> Thumbs:
        """The thumbnail store."""
        return self.app.thumbs

    @property
    def cache_root(self) -> Path:
        """The app's cache folder."""
        return self.app.cache_root

    @property
    def access(self) -> Access:
        """The app's trust level."""
        return self.app.access

    @property
    def limits(self) -> Limits:
        """The session's caps."""
        return self.workspace.limits

    # -- metrics --------------------------------------------------------------------------------------
    @property
    def metrics(self) -> list[str]:
        """Every metric the session sees: the shared ones, then its own."""
        return self.app.metrics + self.workspace.metrics

    def _side(self, metric: str) -> TableSet:
        return self.workspace if self.workspace.has(metric) else self.app

    def kind_of(self, metric: str) -> str:
        """The kind of the table that holds a metric.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        str
            ``published``, ``uploaded`` or ``live``.

        Raises
        ------
        KeyError
            If no table holds it.
        """
        return self._side(metric).kind_of(metric)

    def lower_is_better(self, metric: str) -> bool:
        """Whether a metric's smaller values mean more faithful.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        bool
            True if its table declares it lower-is-better.
        """
        return self._side(metric).lower_is_better(metric)

    def mm(self, mode: str) -> MetaMetrics:
        """Meta-metrics of every metric this session sees, in a mode.

        Parameters
        ----------
        mode : str
            A meta-metric policy preset (``paper`` or ``spec``).

        Returns
        -------
        ts2viz.metametrics.results.MetaMetrics
            Shared and own, joined.

        Raises
        ------
        InputError
            For an unknown mode, or when no scores are loaded.
        """
        if self.workspace.tables:
            return self.workspace.joined_mm(mode, self.app)
        if not self.app.tables:
            if mode not in MODES:
                raise InputError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
            raise InputError("no scores loaded")
        return self.app.mm(mode)

    def scores(self) -> Scores:
        """Shared and own scores merged (for tests and exports; views read per metric).

        Returns
        -------
        ts2viz.scores.Scores
            The merged scores.

        Raises
        ------
        InputError
            When no scores are loaded.
        """
        parts = [s for s in (self.app, self.workspace) if s.tables]
        if not parts:
            raise InputError("no scores loaded")
        return parts[0].scores() if len(parts) == 1 else merge([p.scores() for p in parts])

    def node_scores(self, seg_id: int, metric: str) -> dict[str, np.ndarray]:
        """Raw (not oriented) scores of a metric per node of a SEG, NaN where unscored.

        Memoised: every figure and table of a SEG view reads them.

        Parameters
        ----------
        seg_id : int
            The SEG.
        metric : str
            A metric name.

        Returns
        -------
        dict of str to numpy.ndarray
            Read-only scores of each node's images, by node label.
        """
        seg = self.dataset[seg_id]
        side = self._side(metric)

        def build() -> dict[str, np.ndarray]:
            out = {}
            for node in seg.nodes:
                col = side.column([im.file_name for im in node.images], metric)
                col.setflags(write=False)
                out[node.label] = col
            return out

        return self.memo(("node_scores", seg.id, metric), [metric], build)

    def image_scores(self, file_names: Sequence[str], metrics: Sequence[str]) -> np.ndarray:
        """Raw scores of some images for some metrics, NaN where unscored.

        Parameters
        ----------
        file_names : sequence of str
            The images.
        metrics : sequence of str
            The metrics.

        Returns
        -------
        numpy.ndarray
            (images, metrics) scores.
        """
        out = np.full((len(file_names), len(metrics)), np.nan)
        for j, m in enumerate(metrics):
            out[:, j] = self._side(m).column(file_names, m)
        return out

    def add_table(self, scores: Scores, *, kind: str, name: str) -> None:
        """Add a table to the session's workspace (:meth:`Workspace.add_table`).

        Parameters
        ----------
        scores : ts2viz.scores.Scores
            The scores.
        kind : str
            ``uploaded`` or ``live``.
        name : str
            The table's name.
        """
        self.workspace.add_table(scores, kind=kind, name=name)

    def metric_object(self, spec: str, device=None):
        """A loaded metric; the session notes what it is (:meth:`Workspace.remember_metric`).

        In public mode the metric is named by its display name (:meth:`Access.display_name`): its scores'
        column, progress and messages never show the operator's folder paths. The model is shared with the
        cached metric (a shallow copy carries the name).

        Parameters
        ----------
        spec : str
            The metric spec (already checked against the trust level).
        device : str or None, default None
            Where it runs.

        Returns
        -------
        ts2viz.metrics.Metric
            The metric.
        """
        metric = self.app.metric_object(spec, device)
        name = self.access.display_name(spec)
        if isinstance(getattr(metric, "spec", None), str) and metric.spec != name:
            import copy

            metric = copy.copy(metric)
            metric.spec = name
        try:
            self.workspace.remember_metric(metric)
        except AttributeError:  # not a library metric (no spec or config hash): nothing to note
            pass
        return metric

    # -- caching and files -------------------------------------------------------------------------------
    def memo(self, key: tuple, metrics: Sequence[str | None], build: Callable[[], Any]) -> Any:
        """A view part built once and reused.

        Shared by all sessions when ``metrics`` are all shared ones, else kept in this session's own memo;
        the keys carry the data's version and variant.

        Parameters
        ----------
        key : tuple
            Names everything the result depends on besides the metrics' data.
        metrics : sequence of str or None
            The metrics it reads (``None`` entries ignored).
        build : callable
            ``build()`` makes it.

        Returns
        -------
        object
            The result.
        """
        own = [m for m in metrics if m and self.workspace.has(m)]
        # the shared data's variant is part of every key: sessions seeing another variant build their own
        if own:
            return self.workspace.memo.get((self.workspace.version, self.app.variant_name, *key), build)
        return self.app.memo.get((self.app.version, self.app.variant_name, *key), build)

    def new_download(self, name: str) -> Path:
        """A path for a new download in the session's folder (:meth:`Workspace.new_download`).

        Parameters
        ----------
        name : str
            The file's name.

        Returns
        -------
        pathlib.Path
            The path.
        """
        return self.workspace.new_download(name)


__all__ = ["AppState", "Workspace", "AppView", "Table", "TableSet", "KINDS", "metric_family"]
