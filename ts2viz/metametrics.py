"""The TS2 meta-metrics (ord, sep, delta, kendall) for every walk, SEG, partition and metric at once.

Two modes:

``paper`` (default) reproduces how the published TS2 numbers were computed:
  walks repeat the level-0 step (root images enter each walk twice); a walk's sep is the mean KS
  statistic over every pair of distinct error levels in it; a SEG's value is the mean over its walks
  weighted by each walk's number of scored images; averages leave out the dataset's last SEG.
``spec`` follows the paper's text: each node once per walk; a SEG's ord is the plain mean over walks;
  its sep is the mean KS statistic over the distinct adjacent node pairs (edges); averages use every SEG.

Per walk, ``ord`` is minus Spearman's rho between error count and score (1 = perfect ordering, 0 when
either side is constant), ``kendall`` the same with Kendall's tau-b, ``sep`` the mean two-sample KS
statistic over the walk's level pairs and ``delta`` the mean score gap (less-erroneous minus
more-erroneous population, so positive is good) over the same pairs. NaN scores are dropped
everywhere; a walk with fewer than two scored images is skipped.

The implementation is vectorised: for one SEG, all walks and all metrics are handled by a few numpy
operations on (metric, walk, image) weight arrays, where a weight is the image's multiplicity in the walk
(0 if its score is NaN). Ranks, CDFs and pair counts of a multiset follow from cumulative sums of
these weights over the images sorted by score.
"""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .seg import MODES, SEG, Mode

STATS = ("ord", "sep", "delta", "kendall")


# -- structure of one SEG (independent of the metrics) ----------------------------------------------

@dataclass
class SegStructure:
    """Precomputed walk layout of one SEG in one mode."""

    seg: SEG
    mode: str
    file_names: list[str]          # images in node order
    levels: np.ndarray             # (n,) error count per image
    node_of: np.ndarray            # (n,) node index per image
    walks: list[tuple[str, ...]]   # node labels per walk
    weights: np.ndarray            # (k, n) multiplicity of each image in each walk
    node_counts: np.ndarray        # (k, nodes) multiplicity of each node in each walk
    member: np.ndarray             # (nodes, n) one-hot: image i belongs to node
    level_values: np.ndarray       # (L,) distinct levels present
    pairs: list[tuple[int, int]]   # candidate level pairs (indices into level_values), a < b
    walk_pairs: np.ndarray         # (k, P) bool: pair p counts for walk w
    # spec mode: SEG-level sep/delta over distinct adjacent node pairs
    edge_counts: np.ndarray | None = None    # (e, nodes): the two nodes of each edge
    edge_pairs: np.ndarray | None = None     # (e, P) bool
    edges: list[tuple[str, str]] = field(default_factory=list)
    _layouts: dict = field(default_factory=dict, repr=False)


def _population_layout(st: SegStructure, counts: np.ndarray):
    """Distinct level populations among the units (walks or edges) and distinct pairs of them.

    A level's population in a walk is fixed by the walk's node counts at that level, and walks share
    few distinct populations, so CDFs are built once per distinct population and KS statistics once
    per distinct pair. Structural, so cached on ``st`` per unit matrix.
    """
    key = id(counts)
    hit = st._layouts.get(key)
    if hit is not None:
        return hit
    node_level = np.array([n.level for n in st.seg.nodes], dtype=np.float64)
    levels = []
    for v in st.level_values:
        at = node_level == v
        rows, inv = np.unique(counts[:, at], axis=0, return_inverse=True)
        levels.append((at, rows, inv.ravel()))
    pairs = []
    for a, b in st.pairs:
        n_b = levels[b][1].shape[0]
        combo, walk_combo = np.unique(levels[a][2] * n_b + levels[b][2], return_inverse=True)
        pairs.append((combo // n_b, combo % n_b, walk_combo.ravel()))
    st._layouts[key] = (levels, pairs)
    return levels, pairs


_STRUCT_CACHE: dict[tuple[int, str], SegStructure] = {}


def seg_structure(seg: SEG, mode: Mode = "paper") -> SegStructure:
    """Walk layout of ``seg`` in ``mode`` (cached per SEG object)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
    key = (id(seg), mode)
    hit = _STRUCT_CACHE.get(key)
    if hit is not None and hit.seg is seg:
        return hit
    labels = list(seg.labels)
    node_index = {lbl: i for i, lbl in enumerate(labels)}
    file_names, levels, node_of = [], [], []
    for i, node in enumerate(seg.nodes):
        for img in node.images:
            file_names.append(img.file_name)
            levels.append(node.level)
            node_of.append(i)
    levels_a = np.asarray(levels, dtype=np.float64)
    node_of_a = np.asarray(node_of, dtype=np.int64)
    n_nodes = len(labels)
    # image membership of each node, (nodes, n)
    member = (node_of_a[None, :] == np.arange(n_nodes)[:, None]).astype(np.float64)
    walks = seg.walks(mode)
    counts = np.zeros((len(walks), n_nodes))
    for w, walk in enumerate(walks):
        for lbl in walk:
            counts[w, node_index[lbl]] += 1
    weights = counts @ member
    level_values = np.unique(levels_a)
    lv_index = {float(v): i for i, v in enumerate(level_values)}
    pairs = list(itertools.combinations(range(len(level_values)), 2))
    pair_index = {p: i for i, p in enumerate(pairs)}
    walk_pairs = np.zeros((len(walks), len(pairs)), dtype=bool)
    for w, walk in enumerate(walks):
        lv = [lv_index[float(seg.node(lbl).level)] for lbl in walk]
        if mode == "paper":
            present = sorted(set(lv))
            for a, b in itertools.combinations(present, 2):
                walk_pairs[w, pair_index[(a, b)]] = True
        else:
            for a, b in zip(lv, lv[1:]):
                if a != b:
                    walk_pairs[w, pair_index[(min(a, b), max(a, b))]] = True
    st = SegStructure(seg, mode, file_names, levels_a, node_of_a, walks, weights, counts, member,
                      level_values, pairs, walk_pairs)
    if mode == "spec":
        edges = list(seg.adjacent_pairs())
        ew = np.zeros((len(edges), n_nodes))
        ep = np.zeros((len(edges), len(pairs)), dtype=bool)
        for e, (a, b) in enumerate(edges):
            ew[e, node_index[a]] += 1
            ew[e, node_index[b]] += 1
            la, lb = lv_index[float(seg.node(a).level)], lv_index[float(seg.node(b).level)]
            if la != lb:
                ep[e, pair_index[(min(la, lb), max(la, lb))]] = True
        st.edge_counts, st.edge_pairs, st.edges = ew, ep, edges
    if len(_STRUCT_CACHE) > 4096:
        _STRUCT_CACHE.clear()
    _STRUCT_CACHE[key] = st
    return st


# -- vectorised statistics -------------------------------------------------------------------------

def _group_bounds(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For keys sorted along the last axis: index of the first and last element of each element's tie group."""
    m, n = sorted_keys.shape
    diff = sorted_keys[:, 1:] != sorted_keys[:, :-1]
    is_start = np.concatenate([np.ones((m, 1), bool), diff], axis=1)
    is_end = np.concatenate([diff, np.ones((m, 1), bool)], axis=1)
    idx = np.broadcast_to(np.arange(n), (m, n))
    start = np.maximum.accumulate(np.where(is_start, idx, 0), axis=1)
    end = np.minimum.accumulate(np.where(is_end, idx, n - 1)[:, ::-1], axis=1)[:, ::-1]
    return start, end


class _NodeCumulative:
    """Per-node cumulative counts of scored images, with the images sorted by a key (per metric).

    A walk's weight on image i is (multiplicity of i's node in the walk) x (score of i is not NaN), so
    any cumulative weight of a walk is ``node_counts @ (per-node cumulative count)``. Keeping the
    cumulative counts per node (a handful) instead of per walk (up to hundreds) is what makes the
    whole leaderboard a few milliseconds per SEG.

    ``below[m, node, i]`` = scored images of ``node`` whose key is strictly below image i's key,
    ``upto[m, node, i]`` = the same with ties included; both in the original image order.
    """

    def __init__(self, keys: np.ndarray, node_valid: np.ndarray):
        k = np.where(np.isnan(keys), np.inf, keys)                 # NaN keys carry no weight anyway
        order = np.argsort(k, axis=1, kind="stable")
        start, end = _group_bounds(np.take_along_axis(k, order, axis=1))
        srt = np.take_along_axis(node_valid, order[:, None, :], axis=2)      # (M, N, n) sorted
        cum = np.cumsum(srt, axis=2)
        upto_s = np.take_along_axis(cum, end[:, None, :], axis=2)
        below_s = np.take_along_axis(cum - srt, start[:, None, :], axis=2)
        self.upto = np.empty_like(upto_s)
        self.below = np.empty_like(below_s)
        np.put_along_axis(self.upto, order[:, None, :], upto_s, axis=2)
        np.put_along_axis(self.below, order[:, None, :], below_s, axis=2)

    def ranks(self, counts: np.ndarray) -> np.ndarray:
        """Average (mid) ranks of every image within every walk's weighted multiset: (M, K, n)."""
        below = np.matmul(counts, self.below)
        upto = np.matmul(counts, self.upto)
        return below + (upto - below + 1.0) / 2.0


def _weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray, sw: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (w * x).sum(-1) / sw
        my = (w * y).sum(-1) / sw
        dx = x - mx[..., None]
        dy = y - my[..., None]
        vx = (w * dx * dx).sum(-1)
        vy = (w * dy * dy).sum(-1)
        cov = (w * dx * dy).sum(-1)
        # Ranks of an all-tied side are exactly equal, so its variance is 0 up to rounding.
        tol = 1e-9 * np.maximum(sw, 1.0) ** 3
        r = np.where((vx > tol) & (vy > tol), cov / np.sqrt(vx * vy), 0.0)
    return np.clip(r, -1.0, 1.0)


def _kendall(st: "SegStructure", scores: np.ndarray, valid: np.ndarray, sw: np.ndarray) -> np.ndarray:
    """Weighted Kendall tau-b between error level and score, per metric and walk: (M, K).

    Every pair count is a quadratic form in the walk's node counts over a node x node matrix that is
    aggregated once per metric.
    """
    de = np.sign(st.levels[:, None] - st.levels[None, :])                  # (n, n)
    s = np.nan_to_num(scores, nan=0.0)
    ds = np.sign(s[:, :, None] - s[:, None, :])                           # (M, n, n)
    v = valid.astype(np.float64)
    vv = v[:, :, None] * v[:, None, :]                                    # (M, n, n)
    G = st.member.T                                                       # (n, N)
    C = st.node_counts                                                    # (K, N)

    def form(a: np.ndarray) -> np.ndarray:
        b = np.matmul(np.matmul(G.T, a * vv), G)                          # (M, N, N)
        return (np.matmul(C, b) * C).sum(-1)                              # (M, K)

    conc = 0.5 * form(de[None] * ds)
    tie_l = 0.5 * form(np.broadcast_to((de == 0).astype(np.float64), ds.shape))
    tie_s = 0.5 * form((ds == 0).astype(np.float64))
    n0 = sw * (sw - 1) / 2
    t1 = tie_l - sw / 2          # the quadratic forms count each image with itself once
    t2 = tie_s - sw / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt(np.maximum((n0 - t1) * (n0 - t2), 0.0))
        tau = np.where(den > 1e-12, conc / den, 0.0)
    return np.clip(tau, -1.0, 1.0)


def _pair_stats(st: "SegStructure", by_score: _NodeCumulative, scores: np.ndarray, node_valid: np.ndarray,
                counts: np.ndarray, use: np.ndarray, empty: float = np.nan):
    """Mean KS statistic and mean score gap over the level pairs each unit (walk or edge) uses.

    ``counts`` (K, N) gives each unit's node multiplicities, ``use`` (K, P) which level pairs count.
    Returns (sep, delta), each (M, K); ``empty`` where no pair has two non-empty populations.
    """
    M, K = scores.shape[0], counts.shape[0]
    if not st.pairs:
        return np.full((M, K), empty), np.full((M, K), empty)
    n_scored = node_valid.sum(-1)                                                      # (M, N)
    score_sum = (node_valid * np.nan_to_num(scores, nan=0.0)[:, None, :]).sum(-1)      # (M, N)
    levels, pair_layout = _population_layout(st, counts)
    pops = []
    for at, rows, inv in levels:
        tot = n_scored[:, at] @ rows.T                                                 # (M, U)
        with np.errstate(invalid="ignore", divide="ignore"):
            # CDF of each distinct population at every image's score; images with NaN scores sit
            # at +inf in the sort, where every CDF is 1.
            cdf = np.matmul(rows, by_score.upto[:, at, :]) / tot[..., None]            # (M, U, n)
            mean = (score_sum[:, at] @ rows.T) / tot
        pops.append((inv, cdf, tot, mean))
    seps = np.full((M, K, len(st.pairs)), np.nan)
    gaps = np.full((M, K, len(st.pairs)), np.nan)
    for p, (a, b) in enumerate(st.pairs):
        if not use[:, p].any():
            continue
        inv_a, cdf_a, tot_a, mean_a = pops[a]
        inv_b, cdf_b, tot_b, mean_b = pops[b]
        ia, ib, walk_combo = pair_layout[p]
        d = np.abs(cdf_a[:, ia] - cdf_b[:, ib]).max(-1)[:, walk_combo]                # (M, K)
        ok = (tot_a[:, inv_a] > 0) & (tot_b[:, inv_b] > 0) & use[None, :, p]
        seps[:, :, p] = np.where(ok, d, np.nan)
        gaps[:, :, p] = np.where(ok, mean_a[:, inv_a] - mean_b[:, inv_b], np.nan)
    with np.errstate(invalid="ignore"):
        n_ok = (~np.isnan(seps)).sum(-1)
        sep = np.where(n_ok > 0, np.nansum(seps, -1) / np.maximum(n_ok, 1), empty)
        delta = np.where(n_ok > 0, np.nansum(gaps, -1) / np.maximum(n_ok, 1), empty)
    return sep, delta


@dataclass
class WalkStats:
    """Per-walk results of one SEG: arrays of shape (metrics, walks)."""

    ord: np.ndarray
    sep: np.ndarray
    delta: np.ndarray
    kendall: np.ndarray
    n_images: np.ndarray   # scored images in the walk, counted with multiplicity


def walk_stats(st: SegStructure, scores: np.ndarray) -> WalkStats:
    """Per-walk ord, sep, delta, kendall for scores (M, n) aligned to ``st.file_names`` (oriented)."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    valid = ~np.isnan(scores)                                            # (M, n)
    node_valid = st.member[None, :, :] * valid[:, None, :]               # (M, N, n)
    C = st.node_counts
    w = np.matmul(C, node_valid)                                         # (M, K, n)
    sw = w.sum(-1)
    by_score = _NodeCumulative(scores, node_valid)
    by_level = _NodeCumulative(np.broadcast_to(st.levels, scores.shape), node_valid)
    rho = _weighted_pearson(by_level.ranks(C), by_score.ranks(C), w, sw)
    tau = _kendall(st, scores, valid, sw)
    # Paper mode: a walk with no pair of levels (a single-node SEG) has sep 0, as in the published
    # numbers; spec mode leaves it undefined (NaN).
    empty = 0.0 if st.mode == "paper" else np.nan
    sep, delta = _pair_stats(st, by_score, scores, node_valid, C, st.walk_pairs, empty)
    skip = sw < 2
    return WalkStats(np.where(skip, np.nan, -rho), np.where(skip, np.nan, sep),
                     np.where(skip, np.nan, delta), np.where(skip, np.nan, -tau), sw)


def _weighted_mean(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x) & (wt > 0)
    num = np.where(ok, x * wt, 0.0).sum(-1)
    den = np.where(ok, wt, 0.0).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def seg_stats(st: SegStructure, scores: np.ndarray, ws: WalkStats | None = None) -> dict[str, np.ndarray]:
    """SEG-level ord, sep, delta, kendall (each (M,)) and n_walks from per-walk stats."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    ws = ws or walk_stats(st, scores)
    used = ws.n_images >= 2
    if st.mode == "paper":
        wt = np.where(used, ws.n_images, 0.0)
        out = {k: _weighted_mean(getattr(ws, k), wt) for k in STATS}
    else:
        wt = used.astype(np.float64)
        out = {k: _weighted_mean(getattr(ws, k), wt) for k in ("ord", "kendall")}
        M = scores.shape[0]
        if len(st.edges):
            valid = ~np.isnan(scores)
            node_valid = st.member[None, :, :] * valid[:, None, :]
            esep, edelta = _pair_stats(st, _NodeCumulative(scores, node_valid), scores, node_valid,
                                       st.edge_counts, st.edge_pairs)
            ones = np.ones(esep.shape[-1])
            out["sep"] = _weighted_mean(esep, ones)
            out["delta"] = _weighted_mean(edelta, ones)
        else:
            out["sep"] = np.full(M, np.nan)
            out["delta"] = np.full(M, np.nan)
    out["n_walks"] = used.sum(-1)
    return out


@dataclass
class MetaMetrics:
    """Meta-metric results for a dataset, a set of metrics and a mode.

    ``seg_values[stat]`` is an array (SEGs, metrics) in the order of ``seg_ids`` x ``metrics``.
    ``excluded`` lists SEG ids left out of the overall and partition averages (paper mode: the last SEG).
    Use :meth:`segs`, :meth:`walks` and :meth:`leaderboard` for tables.
    """

    mode: str
    metrics: list[str]
    seg_ids: list[int]
    partitions: list[str]
    seg_values: dict[str, np.ndarray]
    n_walks: np.ndarray
    excluded: list[int]
    _walks: dict[int, tuple[SegStructure, WalkStats]] = field(default_factory=dict, repr=False)

    def segs(self):
        """One row per (SEG, metric): seg_id, partition, metric, ord, sep, delta, kendall, n_walks."""
        import pandas as pd

        S, M = len(self.seg_ids), len(self.metrics)
        df = pd.DataFrame({
            "seg_id": np.repeat(self.seg_ids, M),
            "partition": np.repeat(self.partitions, M),
            "metric": np.tile(self.metrics, S),
        })
        for k in STATS:
            df[k] = self.seg_values[k].ravel()
        df["n_walks"] = self.n_walks.ravel().astype(int)
        return df

    def walks(self, seg_id: int | None = None):
        """One row per (SEG, walk, metric): seg_id, walk, path, metric, ord, sep, delta, kendall, n_images."""
        import pandas as pd

        frames = []
        for sid in ([seg_id] if seg_id is not None else self.seg_ids):
            st, ws = self._walks[sid]
            K, M = len(st.walks), len(self.metrics)
            df = pd.DataFrame({
                "seg_id": sid,
                "walk": np.tile(np.arange(K), M),
                "path": np.tile([">".join(w) for w in st.walks], M),
                "metric": np.repeat(self.metrics, K),
            })
            for k in STATS:
                df[k] = getattr(ws, k).ravel()
            df["n_images"] = ws.n_images.ravel()
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def walk_stats(self, seg_id: int) -> tuple[SegStructure, WalkStats]:
        return self._walks[seg_id]

    def averages(self) -> dict[str, np.ndarray]:
        """Per-metric means of each stat over all (non-excluded) SEGs and per partition.

        Keys ``{stat}_avg`` and ``{stat}_{partition lower-case}``; NaN SEG values are skipped.
        """
        keep = np.array([s not in set(self.excluded) for s in self.seg_ids])
        parts = np.asarray(self.partitions)
        out = {}
        groups = [("avg", keep)] + [(p.lower(), keep & (parts == p)) for p in _ordered_partitions(self.partitions)]
        for name, mask in groups:
            for k in STATS:
                vals = self.seg_values[k][mask]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)   # nanmean of an all-NaN column
                    out[f"{k}_{name}"] = np.nanmean(vals, axis=0) if len(vals) else np.full(len(self.metrics), np.nan)
        return out

    def leaderboard(self):
        """One row per metric: metric, ord_avg, sep_avg, then ord/sep per partition (fractions)."""
        import pandas as pd

        av = self.averages()
        cols = ["ord_avg", "sep_avg"]
        for p in _ordered_partitions(self.partitions):
            cols += [f"ord_{p.lower()}", f"sep_{p.lower()}"]
        df = pd.DataFrame({"metric": self.metrics, **{c: av[c] for c in cols}})
        return df


def _ordered_partitions(parts: Sequence[str]) -> list[str]:
    seen = list(dict.fromkeys(parts))
    known = [p for p in ("Synth", "Nat", "Real") if p in seen]
    return known + [p for p in seen if p not in known]


def compute(dataset, scores, metrics: Sequence[str] | None = None, mode: Mode = "paper",
            seg_ids: Sequence[int] | None = None) -> MetaMetrics:
    """Meta-metrics of ``metrics`` (default: all in ``scores``) over ``dataset`` in ``mode``.

    Parameters
    ----------
    dataset : :class:`ts2viz.dataset.Dataset`.
    scores : :class:`ts2viz.scores.Scores`; images without a score count as NaN (dropped).
    metrics : metric names to evaluate; each must be in ``scores``.
    mode : ``"paper"`` or ``"spec"`` (see module docstring).
    seg_ids : restrict to these SEGs (default: all).

    Returns
    -------
    :class:`MetaMetrics` with per-walk, per-SEG and averaged results.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
    metrics = list(scores.metrics if metrics is None else metrics)
    ids = list(dataset.segs) if seg_ids is None else [int(s) for s in seg_ids]
    missing = [s for s in ids if s not in dataset.segs]
    if missing:
        from .errors import InputError

        raise InputError(f"no SEG with id {missing[0]} in dataset {dataset.name}")
    all_fn = [fn for sid in ids for fn in seg_structure(dataset[sid], mode).file_names]
    mat = scores.aligned(all_fn, metrics).T                              # (M, N)
    vals = {k: np.full((len(ids), len(metrics)), np.nan) for k in STATS}
    n_walks = np.zeros((len(ids), len(metrics)), dtype=np.int64)
    cache: dict[int, tuple[SegStructure, WalkStats]] = {}
    pos = 0
    for i, sid in enumerate(ids):
        st = seg_structure(dataset[sid], mode)
        n = len(st.file_names)
        sc = mat[:, pos:pos + n]
        pos += n
        ws = walk_stats(st, sc)
        res = seg_stats(st, sc, ws)
        for k in STATS:
            vals[k][i] = res[k]
        n_walks[i] = res["n_walks"]
        cache[sid] = (st, ws)
    last = max(dataset.segs)
    excluded = [last] if (mode == "paper" and last in ids and len(dataset.segs) > 1) else []
    parts = [dataset[s].partition for s in ids]
    return MetaMetrics(mode, metrics, ids, parts, vals, n_walks, excluded, cache)
