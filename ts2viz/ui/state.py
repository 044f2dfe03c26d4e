"""The app's state: one dataset, the scores tables loaded into it, and cached meta-metrics.

Tables come from three places: the bundled published scores (or files given on the command line),
score files uploaded in the app, and metrics scored live. Meta-metrics are computed once per table
and mode through :func:`ts2viz.metametrics.compute` and joined metric-wise
(:meth:`~ts2viz.metametrics.MetaMetrics.join`), so adding a metric only computes that metric. The
published table's results are also kept on disk (:meth:`~ts2viz.metametrics.MetaMetrics.save`, keyed
by the data and the format version), which keeps app start fast.
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..metametrics import FORMAT_VERSION, MetaMetrics, compute
from ..paths import cache_dir
from ..policy import MODES, resolve_policy
from ..scores import Scores
from .thumbs import Thumbs

KINDS = ("published", "uploaded", "live")


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


@dataclass
class AppState:
    """Everything the callbacks read. Shared by all sessions of one app process; thread-safe."""

    dataset: object
    tables: list[Table]
    cache_root: Path
    thumbs: Thumbs
    version: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _mm: dict = field(default_factory=dict, repr=False)
    _merged: tuple | None = field(default=None, repr=False)

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def create(cls, dataset, tables: Sequence[tuple[str, str, Scores]] = (), *,
               cache_root: Path | None = None, fetch_images: bool = True) -> "AppState":
        root = Path(cache_root) if cache_root is not None else cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        dkey = hashlib.sha1(f"{dataset.name}|{dataset.root}|{dataset.hf_id}".encode()).hexdigest()[:12]
        thumbs = Thumbs(dataset, root / "thumbs" / dkey, fetch=fetch_images)
        st = cls(dataset, [], root, thumbs)
        for name, kind, sc in tables:
            st.add_table(sc, kind=kind, name=name)
        return st

    # -- tables ----------------------------------------------------------------------------------
    @property
    def metrics(self) -> list[str]:
        return [m for t in self.tables for m in t.scores.metrics]

    def kind_of(self, metric: str) -> str:
        for t in self.tables:
            if metric in t.scores.metrics:
                return t.kind
        raise KeyError(metric)

    def lower_is_better(self, metric: str) -> bool:
        return any(metric in t.scores.lower_is_better for t in self.tables)

    def add_table(self, scores: Scores, *, kind: str, name: str) -> None:
        """Add a scores table. A metric already loaded is an error, except that a live table's
        metric is updated in place (new scores fill in or replace old ones)."""
        if kind not in KINDS:
            raise ValueError(f"unknown table kind {kind!r}")
        unknown = [f for f in scores.file_names if not self.dataset.has_image(f)]
        if unknown:
            raise InputError(f"unknown file_name {unknown[0]!r}: not an image of dataset {self.dataset.name}",
                             file=name)
        with self._lock:
            if kind == "live":
                scores = self._update_live(scores)
            have = set(self.metrics)
            clash = [m for m in scores.metrics if m in have]
            if clash:
                raise InputError(f"metric {clash[0]!r} is already loaded; rename the column to add it again",
                                 file=name)
            if not scores.metrics:
                return
            self.tables.append(Table(name, kind, scores))
            self.version += 1
            self._mm.clear()
            self._merged = None

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
                from ..scores import merge
                merged = merge([merged, new.select(others)])
            new = merged
        return new

    def scores(self) -> Scores:
        """All tables merged (cached until a table is added)."""
        with self._lock:
            if self._merged is None or self._merged[0] != self.version:
                from ..scores import merge
                self._merged = (self.version, merge([t.scores for t in self.tables]))
            return self._merged[1]

    # -- meta-metrics ---------------------------------------------------------------------------
    def mm(self, mode: str) -> MetaMetrics:
        """Meta-metrics of every loaded metric in ``mode`` (cached)."""
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
        for m in modes:
            self.mm(m)

    # -- per-SEG data -----------------------------------------------------------------------------
    def node_scores(self, seg_id: int, metric: str) -> dict[str, np.ndarray]:
        """Raw (not oriented) scores of ``metric`` per node label of a SEG, NaN where unscored."""
        seg = self.dataset[seg_id]
        sc = self.scores()
        out = {}
        for node in seg.nodes:
            fns = [im.file_name for im in node.images]
            out[node.label] = sc.aligned(fns, [metric], oriented=False)[:, 0]
        return out

    def image_scores(self, file_names: Sequence[str], metrics: Sequence[str]) -> np.ndarray:
        return self.scores().aligned(list(file_names), list(metrics), oriented=False)

    # -- metric objects for live scoring -----------------------------------------------------------
    def metric_object(self, spec: str, device=None):
        """A loaded metric from the library (:func:`ts2viz.engine.get_metric` keeps it for reuse)."""
        from ..engine import get_metric

        return get_metric(spec, device)
