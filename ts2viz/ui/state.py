"""The app's state: one dataset, the scores tables loaded into it, and cached meta-metrics.

Tables come from three places: the bundled published scores (or files given on the command line),
score files uploaded in the app, and metrics scored live. Meta-metrics are computed once per table
and mode through :func:`ts2viz.metametrics.compute` and joined metric-wise, so adding a metric only
computes that metric. The published table's results are also cached on disk, which keeps app start
fast.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import pickle
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .. import metametrics
from ..errors import InputError
from ..paths import cache_dir
from ..scores import Scores
from ..seg import MODES
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
    name: str
    kind: str
    scores: Scores


@dataclass
class AppState:
    """Everything the callbacks read. Shared by all sessions of one app process; thread-safe."""

    dataset: object
    tables: list[Table]
    cache_root: Path
    thumbs: Thumbs
    version: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _mm_table: dict = field(default_factory=dict, repr=False)
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
        unknown = [f for f in scores.file_names if f not in self.dataset]
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
            self._mm_table = {k: v for k, v in self._mm_table.items() if k[0] != id(t.scores)}
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
    def mm(self, mode: str) -> "metametrics.MetaMetrics":
        """Meta-metrics of every loaded metric in ``mode`` (cached)."""
        if mode not in MODES:
            raise InputError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
        with self._lock:
            hit = self._mm.get(mode)
            if hit is not None and hit[0] == self.version:
                return hit[1]
            parts = [self._table_mm(t, mode) for t in self.tables]
            out = combine(parts)
            self._mm[mode] = (self.version, out)
            return out

    def _table_mm(self, t: Table, mode: str):
        key = (id(t.scores), mode)
        hit = self._mm_table.get(key)
        if hit is not None:
            return hit
        res = None
        disk = self._disk_key(t, mode) if t.kind == "published" else None
        if disk is not None and disk.is_file():
            try:
                with open(disk, "rb") as f:
                    res = pickle.load(f)
                self._relink(res, mode)
            except Exception:
                res = None
        if res is None:
            res = metametrics.compute(self.dataset, t.scores, mode=mode)
            if disk is not None:
                try:
                    disk.parent.mkdir(parents=True, exist_ok=True)
                    tmp = disk.with_suffix(f".{threading.get_ident()}.tmp")
                    with open(tmp, "wb") as f:
                        pickle.dump(res, f, protocol=pickle.HIGHEST_PROTOCOL)
                    tmp.replace(disk)
                except OSError:
                    pass
        self._mm_table[key] = res
        return res

    def _relink(self, res, mode: str) -> None:
        """Point a cached result's walk layouts at this process's SEG objects."""
        for sid, (st, ws) in list(res._walks.items()):
            res._walks[sid] = (metametrics.seg_structure(self.dataset[sid], mode), ws)

    def _disk_key(self, t: Table, mode: str) -> Path:
        h = hashlib.sha1()
        h.update(mode.encode())
        h.update(inspect.getsource(metametrics).encode())
        h.update(inspect.getsource(__import__("ts2viz.seg", fromlist=["x"])).encode())
        h.update("\n".join(self.dataset.file_names).encode())
        for sid, seg in self.dataset.segs.items():
            h.update(f"{sid}|{seg.labels}|{seg.edges}".encode())
        h.update("\n".join(t.scores.file_names).encode())
        h.update("|".join(t.scores.metrics).encode())
        h.update(",".join(sorted(t.scores.lower_is_better)).encode())
        h.update(np.ascontiguousarray(t.scores.values).tobytes())
        return self.cache_root / "metametrics" / f"{h.hexdigest()[:24]}.pkl"

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


def combine(parts: list) -> "metametrics.MetaMetrics":
    """Join MetaMetrics results computed over the same SEGs for disjoint metric sets."""
    if not parts:
        raise InputError("no scores loaded")
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    for p in parts[1:]:
        if p.seg_ids != first.seg_ids or p.mode != first.mode:
            raise ValueError("meta-metric results over different SEGs or modes cannot be joined")
    seg_values = {k: np.concatenate([p.seg_values[k] for p in parts], axis=1) for k in first.seg_values}
    n_walks = np.concatenate([p.n_walks for p in parts], axis=1)
    walks = {}
    for sid in first.seg_ids:
        st = first._walks[sid][0]
        wss = [p._walks[sid][1] for p in parts]
        fields = {f.name: np.concatenate([getattr(w, f.name) for w in wss], axis=0)
                  for f in dataclasses.fields(wss[0])}
        walks[sid] = (st, type(wss[0])(**fields))
    return dataclasses.replace(first, metrics=[m for p in parts for m in p.metrics],
                               seg_values=seg_values, n_walks=n_walks, _walks=walks)
