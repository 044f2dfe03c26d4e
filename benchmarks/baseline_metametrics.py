"""BASELINE for benchmarks/bench_scale.py only: the meta-metric engine as it was before SEGs of the same
shape were batched and walks chunked (ts2viz commit c72d7b9), one SEG at a time. Not used by ts2viz.

The TS2 meta-metrics (ord, sep, delta, kendall) for every walk, SEG, partition and metric at once.

How they are computed is set by a :class:`ts2viz.metametrics.policy.Policy`: ``paper`` reproduces the published
numbers, ``spec`` follows the paper's text, and any rule can be changed (see :mod:`ts2viz.metametrics.policy`).

Per walk, ``ord`` is minus Spearman's rho between error count and score (1 = perfect ordering, 0 when
either side is constant), ``kendall`` the same with Kendall's tau-b, ``sep`` the mean two-sample KS
statistic over the population pairs the policy's ``sep_pairs`` names, and ``delta`` the mean score gap
(less-erroneous minus more-erroneous population, so positive is good) over its ``delta_pairs``.
``signed_sep`` is sep with each pair's KS statistic signed by the direction of its mean gap: KS is
unsigned, so a metric that orders two populations exactly backwards still gets sep 1 (a limitation the
TS2 paper states); signed_sep is then -1. A walk with fewer than two scored images is skipped.

The implementation is vectorised: for one SEG, all walks and all metrics are handled by a few numpy
operations on (metric, walk, image) weight arrays, where a weight is the image's multiplicity in the walk
(0 if its score is NaN). Ranks, CDFs and pair counts of a multiset follow from cumulative sums of
these weights over the images sorted by score.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ts2viz.errors import InputError
from ts2viz.metametrics.policy import Policy, resolve_policy
from ts2viz.seg import SEG
from ts2viz.metametrics.definitions import CONSTANT_RANK_TOL

#: the per-walk and per-SEG statistics, in column order
STATS = ("ord", "sep", "delta", "kendall", "signed_sep")
#: version of the on-disk format of :meth:`MetaMetrics.save`; bump it when the format or the numbers change
FORMAT_VERSION = 3


# -- structure of one SEG under one policy (independent of the metrics) -----------------------------

@dataclass
class SegStructure:
    """Precomputed walk layout of one SEG under the structural rules of a policy."""

    seg: SEG
    file_names: list[str]          # images in node order
    levels: np.ndarray             # (n,) error count per image
    node_of: np.ndarray            # (n,) node index per image
    walks: list[tuple[str, ...]]   # node labels per walk
    node_counts: np.ndarray        # (K, N) multiplicity of each node in each walk
    member: np.ndarray             # (N, n) one-hot: image i belongs to node
    level_values: np.ndarray       # (L,) distinct levels present
    pairs: list[tuple[int, int]]   # candidate level pairs (indices into level_values), a < b
    all_pairs: np.ndarray          # (K, P) bool: both levels of pair p occur in walk w
    step_pairs: np.ndarray         # (K, P) bool: pair p is the level pair of a step of walk w
    node_level: np.ndarray         # (N, L) one-hot: node j is at level l
    edges: list[tuple[str, str]]   # distinct adjacent node pairs
    edge_counts: np.ndarray        # (E, N): the two nodes of each edge
    edge_use: np.ndarray           # (E, P) bool: the level pair of each edge
    layouts: dict = field(default_factory=dict, repr=False)   # population layouts per unit kind


def _walk_pair_masks(walks_lv: list[list[int]], pair_index: dict) -> tuple[np.ndarray, np.ndarray]:
    """(K, P) masks: level pairs that occur in each walk, and level pairs of each walk's steps."""
    both = np.zeros((len(walks_lv), len(pair_index)), dtype=bool)
    step = np.zeros_like(both)
    for w, lv in enumerate(walks_lv):
        for p in itertools.combinations(sorted(set(lv)), 2):
            both[w, pair_index[p]] = True
        for a, b in zip(lv, lv[1:]):
            if a != b:
                step[w, pair_index[(min(a, b), max(a, b))]] = True
    return both, step


def seg_structure(seg: SEG, policy: "Policy | str" = "paper") -> SegStructure:
    """Walk layout of ``seg`` under ``policy`` (built once per SEG and structural rules, kept with the SEG)."""
    pol = resolve_policy(policy)
    key = ("baseline-walk-layout", pol.repeat_root)
    return seg.memo(key, lambda: _build_structure(seg, pol))


def _build_structure(seg: SEG, pol: Policy) -> SegStructure:
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
    member = (node_of_a[None, :] == np.arange(n_nodes)[:, None]).astype(np.float64)
    walks = seg.walks(repeat_root=pol.repeat_root)
    counts = np.zeros((len(walks), n_nodes))
    for w, walk in enumerate(walks):
        for lbl in walk:
            counts[w, node_index[lbl]] += 1
    level_values = np.unique(levels_a)
    lv_index = {float(v): i for i, v in enumerate(level_values)}
    pairs = list(itertools.combinations(range(len(level_values)), 2))
    pair_index = {p: i for i, p in enumerate(pairs)}
    walks_lv = [[lv_index[float(seg.node(lbl).level)] for lbl in walk] for walk in walks]
    edges = list(seg.adjacent_pairs())
    edge_counts = np.zeros((len(edges), n_nodes))
    edge_use = np.zeros((len(edges), len(pairs)), dtype=bool)
    for e, (a, b) in enumerate(edges):
        edge_counts[e, node_index[a]] += 1
        edge_counts[e, node_index[b]] += 1
        la, lb = lv_index[float(seg.node(a).level)], lv_index[float(seg.node(b).level)]
        if la != lb:
            edge_use[e, pair_index[(min(la, lb), max(la, lb))]] = True
    node_level = np.array([[float(n.level) == v for v in level_values] for n in seg.nodes], dtype=np.float64)
    return SegStructure(seg, file_names, levels_a, node_of_a, walks, counts, member, level_values, pairs,
                        *_walk_pair_masks(walks_lv, pair_index), node_level, edges, edge_counts, edge_use)


def _population_layout(st: SegStructure, unit: str):
    """Distinct level populations among the units (``"walks"`` or ``"edges"``) and distinct pairs of them.

    A level's population in a walk is fixed by the walk's node counts at that level, and walks share
    few distinct populations, so CDFs are built once per distinct population and KS statistics once
    per distinct pair. Structural, so kept on ``st`` per unit kind.
    """
    hit = st.layouts.get(unit)
    if hit is not None:
        return hit
    counts = st.node_counts if unit == "walks" else st.edge_counts
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
    st.layouts[unit] = (levels, pairs)
    return levels, pairs


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
        tol = CONSTANT_RANK_TOL * np.maximum(sw, 1.0) ** 3
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
        tau = np.where(den > CONSTANT_RANK_TOL, conc / den, 0.0)
    return np.clip(tau, -1.0, 1.0)


def _pair_values(st: SegStructure, unit: str, by_score: _NodeCumulative, scores: np.ndarray,
                 node_valid: np.ndarray, need: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """KS statistic and mean score gap of every level pair each unit (walk or edge) needs.

    Returns ``(seps, gaps)``, each (M, K, P): NaN where the pair is not needed or one of its two
    populations has no scored image.
    """
    counts = st.node_counts if unit == "walks" else st.edge_counts
    M, K, P = scores.shape[0], counts.shape[0], len(st.pairs)
    seps = np.full((M, K, P), np.nan)
    gaps = np.full((M, K, P), np.nan)
    if not P or not need.any():
        return seps, gaps
    n_scored = node_valid.sum(-1)                                                      # (M, N)
    score_sum = (node_valid * np.nan_to_num(scores, nan=0.0)[:, None, :]).sum(-1)      # (M, N)
    levels, pair_layout = _population_layout(st, unit)
    pops = []
    for at, rows, inv in levels:
        tot = n_scored[:, at] @ rows.T                                                 # (M, U)
        with np.errstate(invalid="ignore", divide="ignore"):
            # CDF of each distinct population at every image's score; images with NaN scores sit
            # at +inf in the sort, where every CDF is 1.
            cdf = np.matmul(rows, by_score.upto[:, at, :]) / tot[..., None]            # (M, U, n)
            mean = (score_sum[:, at] @ rows.T) / tot
        pops.append((inv, cdf, tot, mean))
    for p, (a, b) in enumerate(st.pairs):
        if not need[:, p].any():
            continue
        inv_a, cdf_a, tot_a, mean_a = pops[a]
        inv_b, cdf_b, tot_b, mean_b = pops[b]
        ia, ib, unit_combo = pair_layout[p]
        d = np.abs(cdf_a[:, ia] - cdf_b[:, ib]).max(-1)[:, unit_combo]                 # (M, K)
        ok = (tot_a[:, inv_a] > 0) & (tot_b[:, inv_b] > 0) & need[None, :, p]
        seps[:, :, p] = np.where(ok, d, np.nan)
        gaps[:, :, p] = np.where(ok, mean_a[:, inv_a] - mean_b[:, inv_b], np.nan)
    return seps, gaps


def _walk_pair_use(st: SegStructure, rule: str, node_valid: np.ndarray) -> np.ndarray:
    """(M, K, P) or (K, P) mask of the level pairs a walk's sep or delta averages under ``rule``.

    ``adjacent-levels`` pairs each level of the walk with the next level *that has a scored image*
    (an unscored level is not there), so it depends on the metric; the other rules do not.
    """
    if rule == "all-levels":
        return st.all_pairs
    if rule == "adjacent-nodes":
        return st.step_pairs
    n_scored = node_valid.sum(-1)                                                 # (M, N)
    present = np.einsum("kn,mn,nl->mkl", st.node_counts, n_scored, st.node_level) > 0   # (M, K, L)
    before = np.concatenate([np.zeros(present.shape[:2] + (1,)), np.cumsum(present, -1)], -1)
    use = np.zeros(present.shape[:2] + (len(st.pairs),), dtype=bool)
    for p, (a, b) in enumerate(st.pairs):
        between = before[..., b] - before[..., a + 1]      # present levels strictly between a and b
        use[..., p] = present[..., a] & present[..., b] & (between == 0)
    return use


def _mean_over_pairs(vals: np.ndarray, use: np.ndarray, empty: float) -> np.ndarray:
    """Mean of ``vals`` (M, K, P) over the pairs ``use`` ((K, P) or (M, K, P)) marks; ``empty`` where
    none is defined."""
    v = np.where(np.broadcast_to(use, vals.shape), vals, np.nan)
    n_ok = (~np.isnan(v)).sum(-1)
    with np.errstate(invalid="ignore"):
        return np.where(n_ok > 0, np.nansum(v, -1) / np.maximum(n_ok, 1), empty)


@dataclass
class WalkStats:
    """Per-walk results of one SEG: arrays of shape (metrics, walks)."""

    ord: np.ndarray
    sep: np.ndarray
    delta: np.ndarray
    kendall: np.ndarray
    signed_sep: np.ndarray
    n_images: np.ndarray   # scored images in the walk, counted with multiplicity


WALK_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(WalkStats))


def signed(seps: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """KS statistics signed by the direction of the mean gap (+ when the less-erroneous side scores higher;
    0 for equal means)."""
    return seps * np.sign(gaps)


@dataclass
class _Prepared:
    """The per-SEG, per-score-matrix arrays that walk and SEG statistics share."""

    scores: np.ndarray
    valid: np.ndarray
    node_valid: np.ndarray
    by_score: _NodeCumulative


def _prepare(st: SegStructure, scores: np.ndarray) -> _Prepared:
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    valid = ~np.isnan(scores)                                            # (M, n)
    node_valid = st.member[None, :, :] * valid[:, None, :]               # (M, N, n)
    return _Prepared(scores, valid, node_valid, _NodeCumulative(scores, node_valid))


def walk_stats(st: SegStructure, scores: np.ndarray, policy: "Policy | str" = "paper",
               _prep: _Prepared | None = None) -> WalkStats:
    """Per-walk ord, sep, delta, kendall for scores (M, n) aligned to ``st.file_names`` (oriented)."""
    pol = resolve_policy(policy)
    pr = _prep or _prepare(st, scores)
    C = st.node_counts
    w = np.matmul(C, pr.node_valid)                                      # (M, K, n)
    sw = w.sum(-1)
    by_level = _NodeCumulative(np.broadcast_to(st.levels, pr.scores.shape), pr.node_valid)
    rho = _weighted_pearson(by_level.ranks(C), pr.by_score.ranks(C), w, sw)
    tau = _kendall(st, pr.scores, pr.valid, sw)
    empty = 0.0 if pol.no_pairs == "zero" else np.nan
    sep_use = _walk_pair_use(st, pol.sep_pairs, pr.node_valid)
    delta_use = _walk_pair_use(st, pol.delta_pairs, pr.node_valid)
    both = sep_use | delta_use
    need = both.any(0) if both.ndim == 3 else both                       # (K, P): any metric needs it
    seps, gaps = _pair_values(st, "walks", pr.by_score, pr.scores, pr.node_valid, need)
    sep = _mean_over_pairs(seps, sep_use, empty)
    delta = _mean_over_pairs(gaps, delta_use, empty)
    ssep = _mean_over_pairs(signed(seps, gaps), sep_use, empty)
    skip = sw < 2
    out = {"ord": -rho, "sep": sep, "delta": delta, "kendall": -tau, "signed_sep": ssep}
    return WalkStats(**{k: np.where(skip, np.nan, v) for k, v in out.items()}, n_images=sw)


def _weighted_mean(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x) & (wt > 0)
    num = np.where(ok, x * wt, 0.0).sum(-1)
    den = np.where(ok, wt, 0.0).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def seg_stats(st: SegStructure, scores: np.ndarray, ws: WalkStats | None = None,
              policy: "Policy | str" = "paper", _prep: _Prepared | None = None) -> dict[str, np.ndarray]:
    """SEG-level :data:`STATS` (each (M,)) and n_walks, from the per-walk stats and the policy."""
    pol = resolve_policy(policy)
    pr = _prep or _prepare(st, scores)
    ws = ws or walk_stats(st, pr.scores, pol, pr)
    used = ws.n_images >= 2
    wt = np.where(used, ws.n_images, 0.0) if pol.walk_weights == "scored-images" else used.astype(np.float64)
    out = {k: _weighted_mean(getattr(ws, k), wt) for k in ("ord", "kendall")}
    empty = 0.0 if pol.no_pairs == "zero" else np.nan
    rules = {"sep": pol.sep_pairs, "signed_sep": pol.sep_pairs, "delta": pol.delta_pairs}
    by_edges = [k for k, rule in rules.items() if rule == "adjacent-nodes"]
    for k in rules:
        if k not in by_edges:
            out[k] = _weighted_mean(getattr(ws, k), wt)
    if by_edges:
        # Each distinct adjacent node pair once, at the SEG level (not once per walk through it).
        M = pr.scores.shape[0]
        if len(st.edges):
            seps, gaps = _pair_values(st, "edges", pr.by_score, pr.scores, pr.node_valid, st.edge_use)
            per_edge = {"sep": _mean_over_pairs(seps, st.edge_use, np.nan),
                        "delta": _mean_over_pairs(gaps, st.edge_use, np.nan),
                        "signed_sep": _mean_over_pairs(signed(seps, gaps), st.edge_use, np.nan)}
            for k in by_edges:
                out[k] = _weighted_mean(per_edge[k], np.ones(per_edge[k].shape[-1]))
        else:
            for k in by_edges:
                out[k] = np.where(used.any(-1), empty, np.nan) if pol.no_pairs == "zero" else np.full(M, np.nan)
    out["n_walks"] = used.sum(-1)
    return out


@dataclass
class MetaMetrics:
    """Meta-metric results for a dataset, a set of metrics and a policy.

    ``seg_values[stat]`` is an array (SEGs, metrics) in the order of ``seg_ids`` x ``metrics``.
    ``excluded`` lists SEG ids left out of the overall and partition averages (the policy's
    ``leave_out``). ``policy`` is the :class:`~ts2viz.metametrics.policy.Policy` that made the numbers.
    Use :meth:`segs`, :meth:`walks` and :meth:`leaderboard` for tables, :meth:`walk_stats` for the
    arrays of one SEG, :meth:`join` to put results for other metrics beside these, and
    :meth:`save`/:meth:`load` to keep them on disk.
    """

    policy: Policy
    metrics: list[str]
    seg_ids: list[int]
    partitions: list[str]
    seg_values: dict[str, np.ndarray]
    n_walks: np.ndarray
    excluded: list[int]
    walk_results: dict[int, tuple[SegStructure, WalkStats]] = field(default_factory=dict, repr=False)

    @property
    def mode(self) -> str:
        """The policy's name (``paper``, ``spec``, or a preset with overrides)."""
        return self.policy.name

    def segs(self):
        """One row per (SEG, metric): seg_id, partition, metric, ord, sep, delta, kendall, signed_sep, n_walks."""
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
        """One row per (SEG, walk, metric): seg_id, walk, path, metric, then :data:`STATS` and n_images."""
        import pandas as pd

        frames = []
        for sid in ([seg_id] if seg_id is not None else self.seg_ids):
            st, ws = self.walk_stats(sid)
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
        """The walk layout and per-walk statistics (metrics x walks) of one SEG."""
        try:
            return self.walk_results[seg_id]
        except KeyError:
            raise InputError(f"no results for SEG {seg_id} (evaluated: {len(self.seg_ids)} SEGs)") from None

    def averages(self) -> dict[str, np.ndarray]:
        """Per-metric means of each stat over all (non-excluded) SEGs and per partition.

        Keys ``{stat}_avg`` and ``{stat}_{partition lower-case}``; NaN SEG values are skipped.
        """
        keep = np.array([s not in set(self.excluded) for s in self.seg_ids])
        parts = np.asarray(self.partitions)
        out = {}
        groups = [("avg", keep)] + [(p.lower(), keep & (parts == p)) for p in ordered_partitions(self.partitions)]
        for name, mask in groups:
            for k in STATS:
                vals = self.seg_values[k][mask]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)   # nanmean of an all-NaN column
                    out[f"{k}_{name}"] = np.nanmean(vals, axis=0) if len(vals) else np.full(len(self.metrics), np.nan)
        return out

    def leaderboard(self, stats: Sequence[str] = ("ord", "sep")):
        """One row per metric: metric, then ``{stat}_avg`` and ``{stat}_{partition}`` for ``stats`` (fractions)."""
        import pandas as pd

        av = self.averages()
        cols = [f"{k}_avg" for k in stats]
        for p in ordered_partitions(self.partitions):
            cols += [f"{k}_{p.lower()}" for k in stats]
        return pd.DataFrame({"metric": self.metrics, **{c: av[c] for c in cols}})

    # -- combining and keeping results -------------------------------------------------------------
    @classmethod
    def join(cls, parts: Sequence["MetaMetrics"]) -> "MetaMetrics":
        """Results for disjoint metric sets over the same SEGs and policy, side by side (metrics in order)."""
        parts = list(parts)
        if not parts:
            raise InputError("no meta-metric results to join")
        if len(parts) == 1:
            return parts[0]
        first = parts[0]
        for p in parts[1:]:
            if p.seg_ids != first.seg_ids or p.policy != first.policy:
                raise ValueError("meta-metric results over different SEGs or policies cannot be joined")
        names = [m for p in parts for m in p.metrics]
        if len(set(names)) != len(names):
            raise ValueError("meta-metric results to join share a metric")
        walks = {}
        for sid in first.seg_ids:
            st = first.walk_results[sid][0]
            wss = [p.walk_results[sid][1] for p in parts]
            walks[sid] = (st, WalkStats(**{f: np.concatenate([getattr(w, f) for w in wss], axis=0)
                                           for f in WALK_FIELDS}))
        return cls(first.policy, names, list(first.seg_ids), list(first.partitions),
                   {k: np.concatenate([p.seg_values[k] for p in parts], axis=1) for k in STATS},
                   np.concatenate([p.n_walks for p in parts], axis=1), list(first.excluded), walks)

    def save(self, path: str | os.PathLike) -> None:
        """Write the results to one ``.npz`` file (atomically), with :data:`FORMAT_VERSION`.

        Walk layouts are not stored: they are structural, and :meth:`load` rebuilds them from the dataset.
        """
        from ts2viz.atomic import atomic_path

        meta = {"format": FORMAT_VERSION, "policy": {"name": self.policy.name, **self.policy.rules()},
                "metrics": self.metrics, "seg_ids": self.seg_ids, "partitions": self.partitions,
                "excluded": self.excluded}
        arrays = {f"seg_{k}": self.seg_values[k] for k in STATS}
        arrays["n_walks"] = self.n_walks
        for f in WALK_FIELDS:
            arrays[f"walk_{f}"] = np.concatenate([getattr(self.walk_results[s][1], f) for s in self.seg_ids], axis=1)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)

    @classmethod
    def load(cls, path: str | os.PathLike, dataset) -> "MetaMetrics":
        """Read results written by :meth:`save`, bound to ``dataset``'s SEGs.

        Raises ``ValueError`` when the file is of another format version or does not fit the dataset
        (the caller then recomputes).
        """
        with np.load(Path(path), allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != FORMAT_VERSION:
                raise ValueError(f"meta-metric file format {meta.get('format')}, expected {FORMAT_VERSION}")
            arrays = {k: z[k] for k in z.files if k != "meta"}
        rules = dict(meta["policy"])
        name = rules.pop("name")
        policy = Policy(name, **rules)
        seg_ids = [int(s) for s in meta["seg_ids"]]
        walks, pos = {}, 0
        for sid in seg_ids:
            if sid not in dataset.segs:
                raise ValueError(f"SEG {sid} is not in dataset {dataset.name}")
            st = seg_structure(dataset[sid], policy)
            k = len(st.walks)
            walks[sid] = (st, WalkStats(**{f: arrays[f"walk_{f}"][:, pos:pos + k] for f in WALK_FIELDS}))
            pos += k
        if pos != arrays["walk_ord"].shape[1]:
            raise ValueError("meta-metric file does not fit the dataset's walks")
        return cls(policy, list(meta["metrics"]), seg_ids, list(meta["partitions"]),
                   {k: arrays[f"seg_{k}"] for k in STATS}, arrays["n_walks"], [int(s) for s in meta["excluded"]],
                   walks)


def ordered_partitions(parts: Sequence[str]) -> list[str]:
    """Distinct partitions in display order: TS2's Synth, Nat, Real first, then any others as they come."""
    seen = list(dict.fromkeys(parts))
    known = [p for p in ("Synth", "Nat", "Real") if p in seen]
    return known + [p for p in seen if p not in known]


def left_out(dataset, seg_ids: Sequence[int], policy: Policy) -> list[int]:
    """SEG ids the policy leaves out of averages: TS2's last SEG under ``leave_out='ts2-last'``."""
    if policy.leave_out == "ts2-last" and dataset.is_ts2:
        last = max(dataset.segs)
        return [last] if last in seg_ids else []
    return []


def compute(dataset, scores, metrics: Sequence[str] | None = None, policy: "Policy | str" = "paper",
            seg_ids: Sequence[int] | None = None, *, mode: "Policy | str | None" = None) -> MetaMetrics:
    """Meta-metrics of ``metrics`` (default: all in ``scores``) over ``dataset`` under ``policy``.

    Parameters
    ----------
    dataset : :class:`ts2viz.dataset.Dataset`.
    scores : :class:`ts2viz.scores.Scores`; images without a score count as NaN.
    metrics : metric names to evaluate; each must be in ``scores``.
    policy : a :class:`~ts2viz.metametrics.policy.Policy`, a preset name (``"paper"``, ``"spec"``) or preset text with
        overrides (``"paper:walk_weights=uniform"``). ``mode`` is accepted as another name for it.
    seg_ids : restrict to these SEGs (default: all).

    Returns
    -------
    :class:`MetaMetrics` with per-walk, per-SEG and averaged results, recording the policy.

    NaN policy: by the policy's ``nan_policy`` (``omit``: an unscored image is left out of every walk
    and population; ``raise``: :class:`InputError` naming the metric and an unscored image).
    """
    pol = resolve_policy(mode if mode is not None else policy)
    metrics = list(scores.metrics if metrics is None else metrics)
    ids = list(dataset.segs) if seg_ids is None else [int(s) for s in seg_ids]
    missing = [s for s in ids if s not in dataset.segs]
    if missing:
        raise InputError(f"no SEG with id {missing[0]} in dataset {dataset.name}")
    structures = [seg_structure(dataset[sid], pol) for sid in ids]
    all_fn = [fn for st in structures for fn in st.file_names]
    mat = scores.aligned(all_fn, metrics).T                              # (M, N)
    if pol.nan_policy == "raise" and np.isnan(mat).any():
        m, i = np.argwhere(np.isnan(mat))[0]
        raise InputError(f"metric {metrics[m]!r} has no score for {int(np.isnan(mat[m]).sum())} image(s), e.g. "
                         f"{all_fn[i]!r} (policy nan_policy=raise)")
    vals = {k: np.full((len(ids), len(metrics)), np.nan) for k in STATS}
    n_walks = np.zeros((len(ids), len(metrics)), dtype=np.int64)
    results: dict[int, tuple[SegStructure, WalkStats]] = {}
    pos = 0
    for i, (sid, st) in enumerate(zip(ids, structures)):
        n = len(st.file_names)
        prep = _prepare(st, mat[:, pos:pos + n])
        pos += n
        ws = walk_stats(st, prep.scores, pol, prep)
        res = seg_stats(st, prep.scores, ws, pol, prep)
        for k in STATS:
            vals[k][i] = res[k]
        n_walks[i] = res["n_walks"]
        results[sid] = (st, ws)
    parts = [dataset[s].partition for s in ids]
    return MetaMetrics(pol, metrics, ids, parts, vals, n_walks, left_out(dataset, ids, pol), results)
