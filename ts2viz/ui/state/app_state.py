"""The app's state, split by who owns it.

- :class:`AppState`: what the operator loaded at start (the dataset; the bundled published scores or
  the files given on the command line). Shared by every session and never changed by a visitor. Its
  meta-metrics are computed once per mode (and kept on disk, keyed by the data and the format
  version, which keeps app start fast), and view parts that depend only on shared data are kept in a
  bounded :class:`~ts2viz.ui.state.memo.Memo` for every session to reuse.
- :class:`~ts2viz.ui.state.workspace.Workspace`: one browser session's own data: score files it uploaded and
  metrics it scored live, their meta-metrics, and the folder its downloads are written to, within the caps of
  :class:`~ts2viz.ui.serving.access.Limits`. :class:`~ts2viz.ui.state.sessions.Workspaces` holds one per session and
  drops it when the session ends.
- :class:`AppView`: the app as one session sees it, the shared tables followed by its own. Every
  callback takes one. Meta-metrics of the two are computed separately and joined metric-wise
  (:meth:`~ts2viz.metametrics.results.MetaMetrics.join`), so a visitor's upload computes only its own metrics.
"""
from __future__ import annotations

import hashlib
import threading
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
from .tables import KINDS, Table, TableSet
from .workspace import Workspace


#: bytes of view parts (figure JSON, tables, graph HTML) kept for all sessions
SHARED_MEMO_BYTES = 32 * 1024 * 1024


class AppState(TableSet):
    """What the operator loaded: shared by every session of one app process; thread-safe.

    Made by :func:`ts2viz.ui.load_state` (or :meth:`create`). Tables are added while the app starts
    (:meth:`add_table`); visitors add theirs to a :class:`~ts2viz.ui.state.workspace.Workspace`. Meta-metrics of
    published tables
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
            The table's kind (one of :data:`~ts2viz.ui.state.tables.KINDS`).
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


class AppView:
    """The app as one session sees it: the operator's shared tables, then the session's own.

    Every callback takes one (as its first argument, named ``app``). Reads go to whichever side holds a
    metric; writes go to the session's :class:`~ts2viz.ui.state.workspace.Workspace`. Meta-metrics of the two are
    computed
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
        """Add a table to the session's workspace (:meth:`~ts2viz.ui.state.workspace.Workspace.add_table`).

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
        """A loaded metric; the session notes what it is (:meth:`~ts2viz.ui.state.workspace.Workspace.remember_metric`).

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
        """A path for a new download in the session's folder (the workspace's ``new_download``).

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


__all__ = ["AppState", "AppView"]
