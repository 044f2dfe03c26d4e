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
  (:meth:`~ts2viz.metametrics.MetaMetrics.join`), so a visitor's upload computes only its own metrics.
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
from ...metametrics import FORMAT_VERSION, MetaMetrics, compute
from ...paths import cache_dir
from ...policy import MODES, resolve_policy
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
    """A display family for a metric name: ``clipscore:...`` -> ``Embedding``, ``TIFA-mPLUG`` -> ``TIFA``."""
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
    """A scores table loaded into the app, with its meta-metrics per mode once computed."""

    name: str
    kind: str
    scores: Scores
    results: dict[str, MetaMetrics] = field(default_factory=dict, repr=False)


class TableSet:
    """Scores tables over one dataset, with merged scores and meta-metrics per mode (cached)."""

    def __init__(self, dataset) -> None:
        self.dataset = dataset
        self.tables: list[Table] = []
        self.version = 0
        self._lock = threading.RLock()
        self._mm: dict[str, tuple[int, MetaMetrics]] = {}
        self._merged: tuple[int, Scores] | None = None

    @property
    def metrics(self) -> list[str]:
        return [m for t in self.tables for m in t.scores.metrics]

    def has(self, metric: str) -> bool:
        return any(metric in t.scores.metrics for t in self.tables)

    def kind_of(self, metric: str) -> str:
        for t in self.tables:
            if metric in t.scores.metrics:
                return t.kind
        raise KeyError(metric)

    def lower_is_better(self, metric: str) -> bool:
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
        """All tables merged (cached until a table is added)."""
        with self._lock:
            if self._merged is None or self._merged[0] != self.version:
                self._merged = (self.version, merge([t.scores for t in self.tables]))
            return self._merged[1]

    def mm(self, mode: str) -> MetaMetrics:
        """Meta-metrics of every metric of these tables in ``mode`` (cached)."""
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
        """Raw (not oriented) scores of one metric for ``file_names``, NaN where unscored."""
        return self._owner(metric).scores.aligned(list(file_names), [metric], oriented=False)[:, 0]


class AppState(TableSet):
    """What the operator loaded: shared by every session of one app process; thread-safe.

    Tables are added while the app starts (:meth:`add_table`); visitors add theirs to a
    :class:`Workspace`. ``access`` is the process's trust level (:mod:`ts2viz.ui.serving.access`).

    *Variants* of the shared data (:meth:`add_variant`): the same dataset with other tables, e.g.
    the bundled TS2 scores with the DSG columns accumulated ``gated`` instead of ``mean``. Each is an
    AppState of its own, built once on first use and shared by every session that picks it
    (:meth:`variant`); ``variant_name`` names the one an AppState is (``""`` without variants).
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
        root = Path(cache_root) if cache_root is not None else cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        dkey = hashlib.sha1(f"{dataset.name}|{dataset.root}|{dataset.hf_id}".encode()).hexdigest()[:12]
        thumbs = Thumbs(dataset, root / "thumbs" / dkey, fetch=fetch_images)
        st = cls(dataset, root, thumbs, access)
        for name, kind, sc in tables:
            st.add_table(sc, kind=kind, name=name)
        return st

    def add_table(self, scores: Scores, *, kind: str = "published", name: str) -> None:
        """Add an operator's scores table (a metric already loaded is an error)."""
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
        """The app as one session sees it; without ``workspace``, a fresh private one."""
        return AppView(self, workspace if workspace is not None else Workspace(self))

    # -- variants of the shared data ----------------------------------------------------------------
    def add_variant(self, name: str, tables: Callable[[], Sequence[tuple[str, str, Scores]]], *,
                    this: str | None = None) -> None:
        """Offer another version of the shared tables, named ``name``, loaded by ``tables()`` (``(name,
        kind, scores)`` triples as for :meth:`create`) when first asked for. ``this`` names the version
        this AppState holds (set once, with the first variant)."""
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
        """The version of the shared data named ``name`` (``None`` or ``""``: this one), built once.

        A variant shares this app's dataset, thumbnails, cache folder, trust level and view memo (its
        keys carry the variant's name, :meth:`AppView.memo`). Raises :class:`InputError` for an
        unknown name.
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
        """Compute the meta-metrics of every mode (and of every variant) ahead of the first request."""
        for name in [self.variant_name] + [n for n in self.variant_names if n != self.variant_name]:
            v = self.variant(name)
            for m in modes:
                v.mm(m)

    def metric_object(self, spec: str, device=None):
        """A loaded metric from the library (:func:`ts2viz.engine.get_metric` keeps a few for reuse)."""
        from ...engine import get_metric

        return get_metric(spec, device)


#: functions called with each workspace that closes (stores elsewhere that hold a session's data
#: register here: their entries go with the session, not only when their bound is reached)
CLOSE_HOOKS: list[Callable[["Workspace"], None]] = []
#: stores kept beside a workspace say here whether it holds something of theirs (then it is not empty)
HOLD_CHECKS: list[Callable[["Workspace"], bool]] = []


class Workspace(TableSet):
    """One session's own data: uploaded score files and live-scored metrics, private to it.

    ``limits`` caps what it may hold. ``exports_root`` is where its downloads folder is made
    (default: ``<cache>/sessions``); the folder, the downloads in it and the visitor's uploaded files
    registered with :meth:`own_file` are deleted by :meth:`close`. A ``read_only`` workspace stands
    for a session that holds nothing: adding to it raises ``RuntimeError``.
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
        """:class:`InputError` if adding ``new_metrics`` would pass the session's metric cap."""
        fresh = [m for m in dict.fromkeys(new_metrics) if not self.has(m)]
        if len(self.metrics) + len(fresh) > self.limits.max_metrics:
            raise InputError(f"a session may hold at most {self.limits.max_metrics} metrics of its own "
                             f"(this one has {len(self.metrics)}); reload the page to start a new session")

    def add_table(self, scores: Scores, *, kind: str, name: str) -> None:
        """Add an uploaded or live-scored table. A metric already loaded (shared or own) is an error,
        except that a live metric is updated in place (new scores fill in or replace old ones)."""
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
        ``shared``: the version of the shared data the session sees (default: the app's own)."""
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
        """Note what a loaded metric is (:attr:`metric_info`), under the name its scores get."""
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
        """This session's downloads folder (made on first use, a random name nobody else can guess)."""
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
        """This session's downloads folder if it has one (none is made here)."""
        return self._exports

    def new_download(self, name: str) -> Path:
        """A path for a new download in this session's folder; the oldest beyond :data:`MAX_DOWNLOADS`
        are deleted (only this session's own files)."""
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
        """Whether the session holds nothing of use: no tables, downloads or loaded metrics (the uploads it
        tried are let go with it)."""
        with self._lock:
            if self.tables or self._downloads or self.metric_info:
                return False
        return not any(check(self) for check in list(HOLD_CHECKS))

    def own_file(self, path) -> None:
        """Register a file the visitor uploaded, to be deleted when the session ends."""
        if self.read_only:
            raise RuntimeError("a read-only view owns no files")
        with self._lock:
            p = Path(str(path))
            if p not in self._files:      # once per path: its release is counted once (ts2viz.ui.serving.uploads)
                self._files.append(p)

    def close(self) -> None:
        """Drop everything the session holds: its tables, caches, downloads and uploaded files."""
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

    Every callback takes one (as its first argument, named ``app``). Reads go to whichever side holds
    a metric; writes go to the session's :class:`Workspace`.
    """

    def __init__(self, app: AppState, workspace: Workspace) -> None:
        self.app = app
        self.workspace = workspace

    # -- what both sides share ----------------------------------------------------------------------
    @property
    def dataset(self):
        return self.app.dataset

    @property
    def thumbs(self) -> Thumbs:
        return self.app.thumbs

    @property
    def cache_root(self) -> Path:
        return self.app.cache_root

    @property
    def access(self) -> Access:
        return self.app.access

    @property
    def limits(self) -> Limits:
        return self.workspace.limits

    # -- metrics --------------------------------------------------------------------------------------
    @property
    def metrics(self) -> list[str]:
        return self.app.metrics + self.workspace.metrics

    def _side(self, metric: str) -> TableSet:
        return self.workspace if self.workspace.has(metric) else self.app

    def kind_of(self, metric: str) -> str:
        return self._side(metric).kind_of(metric)

    def lower_is_better(self, metric: str) -> bool:
        return self._side(metric).lower_is_better(metric)

    def mm(self, mode: str) -> MetaMetrics:
        """Meta-metrics of every metric this session sees, in ``mode``."""
        if self.workspace.tables:
            return self.workspace.joined_mm(mode, self.app)
        if not self.app.tables:
            if mode not in MODES:
                raise InputError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
            raise InputError("no scores loaded")
        return self.app.mm(mode)

    def scores(self) -> Scores:
        """Shared and own scores merged (for tests and exports; views read per metric)."""
        parts = [s for s in (self.app, self.workspace) if s.tables]
        if not parts:
            raise InputError("no scores loaded")
        return parts[0].scores() if len(parts) == 1 else merge([p.scores() for p in parts])

    def node_scores(self, seg_id: int, metric: str) -> dict[str, np.ndarray]:
        """Raw (not oriented) scores of ``metric`` per node label of a SEG, NaN where unscored
        (memoised: every figure and table of a SEG view reads them)."""
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
        out = np.full((len(file_names), len(metrics)), np.nan)
        for j, m in enumerate(metrics):
            out[:, j] = self._side(m).column(file_names, m)
        return out

    def add_table(self, scores: Scores, *, kind: str, name: str) -> None:
        self.workspace.add_table(scores, kind=kind, name=name)

    def metric_object(self, spec: str, device=None):
        """A loaded metric; the session notes what it is (:meth:`Workspace.remember_metric`).

        In public mode the metric is named by its display name (:meth:`Access.display_name`): its
        scores' column, progress and messages never show the operator's folder paths. The model is
        shared with the cached metric (a shallow copy carries the name)."""
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
        """``build()``'s result for ``key``, reused: shared by all sessions when ``metrics`` are all
        shared ones, else kept in this session's own memo. ``key`` must name everything the result
        depends on besides the metrics' data."""
        own = [m for m in metrics if m and self.workspace.has(m)]
        # the shared data's variant is part of every key: sessions seeing another variant build their own
        if own:
            return self.workspace.memo.get((self.workspace.version, self.app.variant_name, *key), build)
        return self.app.memo.get((self.app.version, self.app.variant_name, *key), build)

    def new_download(self, name: str) -> Path:
        return self.workspace.new_download(name)


__all__ = ["AppState", "Workspace", "AppView", "Table", "TableSet", "KINDS", "metric_family"]
