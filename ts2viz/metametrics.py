"""The TS2 meta-metrics (ord, sep, delta, kendall) for every walk, SEG, partition and metric at once.

How they are computed is set by a :class:`ts2viz.policy.Policy`: ``paper`` reproduces the published
numbers, ``spec`` follows the paper's text, and any rule can be changed (see :mod:`ts2viz.policy`).

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

import copy
import dataclasses
import itertools
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import InputError
from .policy import Policy, resolve_policy
from .seg import SEG
from .statistics.ord_sep import CONSTANT_RANK_TOL

#: the per-walk and per-SEG statistics, in column order
STATS = ("ord", "sep", "delta", "kendall", "signed_sep")
#: version of the on-disk format of :meth:`MetaMetrics.save`; bump it when the format or the numbers change
FORMAT_VERSION = 3


# -- structure of one SEG under one policy (independent of the metrics) -----------------------------

@dataclass
class SegStructure:
    """Precomputed walk layout of one SEG under the structural rules of a policy.

    Everything but ``seg`` and ``file_names`` depends only on the SEG's shape (:func:`shape_key`), so
    SEGs of the same shape share these arrays (:meth:`rebind`); treat them as read-only. With K walks, N
    nodes, n images, L levels, P level pairs and E edges:

    Attributes
    ----------
    seg : SEG
        The SEG.
    file_names : list of str
        Its images in node order.
    levels : numpy.ndarray
        (n,) error count per image.
    node_of : numpy.ndarray
        (n,) node index per image.
    walk_nodes : list of tuple of int
        Node indices (into ``seg.nodes``) per walk.
    node_counts : numpy.ndarray
        (K, N) multiplicity of each node in each walk.
    member : numpy.ndarray
        (N, n) one-hot: image i belongs to node.
    level_values : numpy.ndarray
        (L,) distinct levels present.
    pairs : list of (int, int)
        Candidate level pairs (indices into ``level_values``), a < b.
    all_pairs : numpy.ndarray
        (K, P) bool: both levels of pair p occur in walk w.
    step_pairs : numpy.ndarray
        (K, P) bool: pair p is the level pair of a step of walk w.
    node_level : numpy.ndarray
        (N, L) one-hot: node j is at level l.
    node_starts : numpy.ndarray
        (N,) index of each node's first image (images are in node order).
    image_weights : numpy.ndarray
        (K, n) multiplicity of each image in each walk.
    edge_nodes : list of (int, int)
        Distinct adjacent node pairs (node indices).
    edge_counts : numpy.ndarray
        (E, N): the two nodes of each edge.
    edge_use : numpy.ndarray
        (E, P) bool: the level pair of each edge.
    layouts : dict
        Population layouts per unit kind (built on demand).
    """

    seg: SEG
    file_names: list[str]          # images in node order
    levels: np.ndarray             # (n,) error count per image
    node_of: np.ndarray            # (n,) node index per image
    walk_nodes: list[tuple[int, ...]]   # node indices (into seg.nodes) per walk
    node_counts: np.ndarray        # (K, N) multiplicity of each node in each walk
    member: np.ndarray             # (N, n) one-hot: image i belongs to node
    level_values: np.ndarray       # (L,) distinct levels present
    pairs: list[tuple[int, int]]   # candidate level pairs (indices into level_values), a < b
    all_pairs: np.ndarray          # (K, P) bool: both levels of pair p occur in walk w
    step_pairs: np.ndarray         # (K, P) bool: pair p is the level pair of a step of walk w
    node_level: np.ndarray         # (N, L) one-hot: node j is at level l
    node_starts: np.ndarray        # (N,) index of each node's first image (images are in node order)
    image_weights: np.ndarray      # (K, n) multiplicity of each image in each walk
    edge_nodes: list[tuple[int, int]]   # distinct adjacent node pairs (node indices)
    edge_counts: np.ndarray        # (E, N): the two nodes of each edge
    edge_use: np.ndarray           # (E, P) bool: the level pair of each edge
    layouts: dict = field(default_factory=dict, repr=False)   # population layouts per unit kind

    @property
    def walks(self) -> list[tuple[str, ...]]:
        """Node labels per walk."""
        labels = self.seg.labels
        return [tuple(labels[i] for i in w) for w in self.walk_nodes]

    @property
    def edges(self) -> list[tuple[str, str]]:
        """Distinct adjacent node pairs (node labels)."""
        labels = self.seg.labels
        return [(labels[a], labels[b]) for a, b in self.edge_nodes]

    def rebind(self, seg: SEG) -> "SegStructure":
        """The same layout for another SEG of the same shape.

        Shares every array; cheap: one copy of the object and the SEG's file names.

        Parameters
        ----------
        seg : SEG
            A SEG with the same :func:`shape_key`.

        Returns
        -------
        SegStructure
            The layout bound to ``seg``.
        """
        out = copy.copy(self)
        out.seg = seg
        out.file_names = [im.file_name for n in seg.nodes for im in n.images]
        return out


def shape_key(seg: SEG) -> tuple:
    """What a SEG's walk layout depends on; SEGs with equal keys have equal layouts.

    Parameters
    ----------
    seg : SEG
        The SEG.

    Returns
    -------
    tuple
        Node levels and sizes in node order, and the edges between node positions (``None`` for
        implied edges).

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> from ts2viz.metametrics import shape_key
    >>> shape_key(load_dataset("ts2")[0])
    (((0, 1), (1, 5), (1, 3), (2, 3)), None)
    """
    nodes = tuple((n.level, len(n.images)) for n in seg.nodes)
    if seg.edges is None:
        return nodes, None
    index = {lbl: i for i, lbl in enumerate(seg.labels)}
    return nodes, tuple(sorted((index[a], index[b]) for a, b in seg.edges))


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
    """Walk layout of ``seg`` under ``policy`` (built once per SEG and structural rules, kept with the SEG).

    Parameters
    ----------
    seg : SEG
        The SEG.
    policy : Policy or str, default "paper"
        The policy (only ``repeat_root`` matters here).

    Returns
    -------
    SegStructure
        The layout.

    Raises
    ------
    InputError
        For an unknown policy.
    """
    pol = resolve_policy(policy)
    key = ("walk-layout", pol.repeat_root)
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
    edges = [(node_index[a], node_index[b]) for a, b in seg.adjacent_pairs()]
    edge_counts = np.zeros((len(edges), n_nodes))
    edge_use = np.zeros((len(edges), len(pairs)), dtype=bool)
    for e, (a, b) in enumerate(edges):
        edge_counts[e, a] += 1
        edge_counts[e, b] += 1
        la, lb = lv_index[float(seg.nodes[a].level)], lv_index[float(seg.nodes[b].level)]
        if la != lb:
            edge_use[e, pair_index[(min(la, lb), max(la, lb))]] = True
    node_level = np.array([[float(n.level) == v for v in level_values] for n in seg.nodes], dtype=np.float64)
    walk_nodes = [tuple(node_index[lbl] for lbl in walk) for walk in walks]
    node_starts = np.flatnonzero(np.r_[True, node_of_a[1:] != node_of_a[:-1]])
    return SegStructure(seg, file_names, levels_a, node_of_a, walk_nodes, counts, member, level_values, pairs,
                        *_walk_pair_masks(walks_lv, pair_index), node_level, node_starts, counts @ member,
                        edges, edge_counts, edge_use)


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

    def __init__(self, keys: np.ndarray, node_valid: np.ndarray, node_of: np.ndarray):
        k = np.where(np.isnan(keys), np.inf, keys)                 # NaN keys carry no weight anyway
        M, N, n = node_valid.shape
        order = np.argsort(k, axis=1, kind="stable")
        rank = np.empty_like(order)                                 # where each image sits in the order
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(n), order.shape), axis=1)
        start, end = _group_bounds(np.take_along_axis(k, order, axis=1))
        # one-hot of each sorted image's node, weighted by whether it is scored: (M, N, n)
        valid = ~np.isnan(keys)
        srt = (node_of[order][:, None, :] == np.arange(N)[None, :, None]) & \
            np.take_along_axis(valid, order, axis=1)[:, None, :]
        cum = np.cumsum(srt, axis=2, dtype=np.float64)
        # back in image order: image i's tie group ends at end[rank[i]] and starts at start[rank[i]]
        at_end = np.take_along_axis(end, rank, axis=1)[:, None, :]
        at_start = np.take_along_axis(start, rank, axis=1)[:, None, :]
        self.upto = np.take_along_axis(cum, np.broadcast_to(at_end, cum.shape), axis=2)
        below = cum - srt
        self.below = np.take_along_axis(below, np.broadcast_to(at_start, cum.shape), axis=2)


def _spearman(st: "SegStructure", by_score: _NodeCumulative, valid: np.ndarray, n_scored: np.ndarray,
              sw: np.ndarray) -> np.ndarray:
    """Weighted Spearman correlation between error level and score, per row and walk: (R, K).

    Pearson's r of centred mid-ranks. The level side needs no per-image work: a walk's images at one
    level are one tie group, so their centred mid-rank, the level variance and (through node sums of
    the score side) the covariance follow from per-level counts. Only the score ranks' variance needs
    the (walk x image) ranks, computed in chunks of walks.
    """
    C = st.node_counts                                                        # (K, N)
    K = C.shape[0]
    R, N, n = by_score.below.shape
    # level side: t[r, w, l] scored images of level l in walk w; centred mid-rank of each level
    t = np.einsum("wa,ra,al->rwl", C, n_scored, st.node_level, optimize=True)   # (R, K, L)
    dy = np.cumsum(t, -1) - t / 2 - sw[..., None] / 2                         # (R, K, L)
    vy = (t * dy * dy).sum(-1)
    # score side: centred mid-ranks are linear in the walk's node counts (see centered_ranks)
    d = ((by_score.below + by_score.upto) - n_scored[:, :, None]) * (0.5 * valid[:, None, :])   # (R, N, n)
    q = np.add.reduceat(d, st.node_starts, axis=-1)                          # (R, b, a): node b's part in a
    u = (q.transpose(0, 2, 1).reshape(R * N, N) @ C.T).reshape(R, N, K)      # (R, a, K)
    dy_node = dy @ st.node_level.T                                           # (R, K, N): dy of each node's level
    cov = np.einsum("wa,rwa,raw->rw", C, dy_node, u, optimize=False)
    vx = np.empty((R, K))
    dT = d.transpose(1, 0, 2).reshape(N, R * n)
    step = max(1, CHUNK_ELEMENTS // max(1, R * n))
    for a in range(0, K, step):
        x = (C[a:a + step] @ dT).reshape(-1, R, n)                            # (k, R, n)
        vx[:, a:a + step] = np.einsum("kn,krn,krn->rk", st.image_weights[a:a + step], x, x, optimize=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        # Ranks of an all-tied side are exactly equal, so its variance is 0 up to rounding.
        tol = CONSTANT_RANK_TOL * np.maximum(sw, 1.0) ** 3
        r = np.where((vx > tol) & (vy > tol), cov / np.sqrt(vx * vy), 0.0)
    return np.clip(r, -1.0, 1.0)


def _kendall(st: "SegStructure", by_score: _NodeCumulative, valid: np.ndarray, n_scored: np.ndarray,
             sw: np.ndarray) -> np.ndarray:
    """Weighted Kendall tau-b between error level and score, per row and walk: (R, K).

    Every pair count is a quadratic form in the walk's node counts over a node x node matrix. Those
    matrices come from the per-node cumulative counts: the number of images of node b scoring below
    image i, summed over the images i of node a, so no image x image matrix is ever formed.
    """
    v = valid.astype(np.float64)[:, None, :]
    lt = np.add.reduceat(by_score.below * v, st.node_starts, axis=-1)       # (R, b, a): b's below a's
    le = np.add.reduceat(by_score.upto * v, st.node_starts, axis=-1)
    lt, le = lt.transpose(0, 2, 1), le.transpose(0, 2, 1)                    # (R, a, b)
    nn = n_scored[:, :, None] * n_scored[:, None, :]                        # (R, a, b) scored pairs
    node_lv = st.node_level @ np.arange(st.node_level.shape[1])            # (N,) level index per node
    de = np.sign(node_lv[:, None] - node_lv[None, :])                       # (a, b)
    C = st.node_counts

    def form(x: np.ndarray) -> np.ndarray:                                  # sum_ab C[w,a] x[a,b] C[w,b]
        R, N, _ = x.shape
        y = (x.reshape(R * N, N) @ C.T).reshape(R, N, len(C))               # (R, a, K)
        return np.einsum("rak,ka->rk", y, C, optimize=False)

    conc = 0.5 * form(de[None] * (lt + le - nn))            # sum over pairs of sign(level) * sign(score)
    tie_l = 0.5 * form((de == 0)[None] * nn)
    tie_s = 0.5 * form(le - lt)
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
    K, N = st.node_counts.shape
    L = st.node_level.shape[1]
    scored = (node_valid.sum(-1) > 0).astype(np.float64)                          # (M, N)
    walk_level = (st.node_counts.T[:, :, None] * st.node_level[:, None, :]).reshape(N, K * L)
    present = (scored @ walk_level).reshape(-1, K, L) > 0                          # (M, K, L)
    before = np.concatenate([np.zeros(present.shape[:2] + (1,)), np.cumsum(present, -1)], -1)
    use = np.zeros(present.shape[:2] + (len(st.pairs),), dtype=bool)
    for p, (a, b) in enumerate(st.pairs):
        between = before[..., b] - before[..., a + 1]      # present levels strictly between a and b
        use[..., p] = present[..., a] & present[..., b] & (between == 0)
    return use


def _mean_over_pairs(vals: np.ndarray, use: np.ndarray, empty: float, ok: np.ndarray | None = None) -> np.ndarray:
    """Mean of ``vals`` (M, K, P) over the pairs ``use`` ((K, P) or (M, K, P)) marks.

    ``empty`` where none is defined. ``ok``: the defined pairs (``use`` and not NaN), when the caller has
    them.
    """
    if ok is None:
        ok = ~np.isnan(vals) & use
    n_ok = ok.sum(-1)
    total = np.where(ok, vals, 0.0).sum(-1)
    with np.errstate(invalid="ignore"):
        return np.where(n_ok > 0, total / np.maximum(n_ok, 1), empty)


@dataclass
class WalkStats:
    """Per-walk results of one SEG: arrays of shape (metrics, walks).

    Attributes
    ----------
    ord, sep, delta, kendall, signed_sep : numpy.ndarray
        The statistics of :data:`STATS` per walk (NaN for a walk with fewer than two scored images).
    n_images : numpy.ndarray
        Scored images in the walk, counted with multiplicity.
    """

    ord: np.ndarray
    sep: np.ndarray
    delta: np.ndarray
    kendall: np.ndarray
    signed_sep: np.ndarray
    n_images: np.ndarray   # scored images in the walk, counted with multiplicity


WALK_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(WalkStats))


def signed(seps: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """KS statistics signed by the direction of the mean gap.

    Parameters
    ----------
    seps : numpy.ndarray
        KS statistics.
    gaps : numpy.ndarray
        Mean gaps (less-erroneous minus more-erroneous population), same shape.

    Returns
    -------
    numpy.ndarray
        ``seps * sign(gaps)``: + when the less-erroneous side scores higher, 0 for equal means.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.metametrics import signed
    >>> signed(np.array([0.5, 0.5, 0.5]), np.array([0.1, -0.2, 0.0])).tolist()
    [0.5, -0.5, 0.0]
    """
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
    return _Prepared(scores, valid, node_valid, _NodeCumulative(scores, node_valid, st.node_of))


#: elements of one (rows x walks x images) temporary array: walk statistics are computed in chunks of
#: walks that keep each such array under this size (about 32 MB), whatever the number of walks
CHUNK_ELEMENTS = 4_000_000


def walk_stats(st: SegStructure, scores: np.ndarray, policy: "Policy | str" = "paper",
               _prep: _Prepared | None = None) -> WalkStats:
    """Per-walk ord, sep, delta, kendall, signed_sep of one SEG.

    Rows of ``scores`` may be metrics or metrics of several SEGs of the same shape; the ranks are
    computed in chunks of walks, so memory stays bounded on SEGs with thousands of walks.

    Parameters
    ----------
    st : SegStructure
        The SEG's walk layout.
    scores : numpy.ndarray
        (M, n) scores aligned to ``st.file_names``, oriented (higher = more faithful).
    policy : Policy or str, default "paper"
        The policy.
    _prep : optional
        Arrays shared with :func:`seg_stats` (internal).

    Returns
    -------
    WalkStats
        (M, walks) arrays.

    Notes
    -----
    Per walk, ord is -rho(error count, score) (Spearman, with the images' multiplicities in the walk),
    kendall is -tau_b likewise, sep the mean KS statistic over the level pairs the policy's
    ``sep_pairs`` names, delta the mean score gap over its ``delta_pairs`` and signed_sep sep with each
    pair's KS signed by its mean gap. A side counts as constant (correlation 0) when its rank variance
    is at most :data:`~ts2viz.statistics.ord_sep.CONSTANT_RANK_TOL` times n**3.

    NaN policy: an unscored image carries no weight; a walk with fewer than two scored images gets NaN.
    """
    pol = resolve_policy(policy)
    pr = _prep or _prepare(st, scores)
    C = st.node_counts
    n_scored = pr.node_valid.sum(-1)                                      # (M, N)
    sw = n_scored @ C.T                                                   # (M, K) scored images per walk
    rho = _spearman(st, pr.by_score, pr.valid, n_scored, sw)
    tau = _kendall(st, pr.by_score, pr.valid, n_scored, sw)
    empty = 0.0 if pol.no_pairs == "zero" else np.nan
    sep_use = _walk_pair_use(st, pol.sep_pairs, pr.node_valid)
    delta_use = _walk_pair_use(st, pol.delta_pairs, pr.node_valid)
    both = sep_use | delta_use
    need = both.any(0) if both.ndim == 3 else both                       # (K, P): any metric needs it
    seps, gaps = _pair_values(st, "walks", pr.by_score, pr.scores, pr.node_valid, need)
    sep_ok = ~np.isnan(seps) & sep_use                 # signed seps are defined exactly where seps are
    sep = _mean_over_pairs(seps, sep_use, empty, sep_ok)
    delta = _mean_over_pairs(gaps, delta_use, empty)
    ssep = _mean_over_pairs(signed(seps, gaps), sep_use, empty, sep_ok)
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
    """SEG-level statistics from the per-walk ones and the policy.

    Parameters
    ----------
    st : SegStructure
        The SEG's walk layout.
    scores : numpy.ndarray
        (M, n) oriented scores aligned to ``st.file_names``.
    ws : WalkStats, optional
        The per-walk statistics (computed when not given).
    policy : Policy or str, default "paper"
        The policy.
    _prep : optional
        Arrays shared with :func:`walk_stats` (internal).

    Returns
    -------
    dict[str, numpy.ndarray]
        :data:`STATS` (each (M,)) and ``n_walks`` (walks with at least two scored images).

    Notes
    -----
    A SEG's ord and kendall are the means over its walks, weighted by each walk's scored images or
    uniform (``walk_weights``); sep, signed_sep and delta likewise, except under ``adjacent-nodes``,
    where each distinct edge counts once at the SEG level.

    NaN policy: walks with fewer than two scored images are left out; a SEG without any such walk is
    NaN; no pair to compare gives 0 or NaN by the policy's ``no_pairs``.
    """
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
        if len(st.edge_nodes):
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


def seg_ord(st: SegStructure, scores: np.ndarray, policy: "Policy | str" = "paper") -> np.ndarray:
    """A SEG's Ord for many score rows at once: equal to ``seg_stats(st, scores, policy=policy)["ord"]``.

    The fast path of the permutation tests (PERM-BOTH), which need only Ord, for thousands of permuted
    score rows per SEG. It computes no other statistic and no per-(walk, image) array.

    Parameters
    ----------
    st : SegStructure
        The SEG's walk layout.
    scores : numpy.ndarray
        (R, n) oriented scores aligned to ``st.file_names``; NaN = not scored.
    policy : Policy or str, default "paper"
        The policy (its ``walk_weights`` rule is used here; its structural rules are in ``st``).

    Returns
    -------
    numpy.ndarray
        (R,) the SEG's Ord per row; NaN where no walk has two scored images.

    Notes
    -----
    Per walk, Spearman's rho is Pearson's r of centred mid-ranks (an image counted as often as its node
    occurs in the walk). The level side follows from per-node counts as in :func:`walk_stats`. On the
    score side, node b's part of an image's centred mid-rank is half the signed count of b's images below
    and above it; summed per node these make a (node x node) table per row, and every walk's covariance is
    one matrix product of those tables with a (walk, node x node) table when every row scores the same
    images. The variance of the mid-ranks of a multiset of S values with tie groups of sizes t_g is
    (S**3 - sum t_g**3) / 12: each scored image is a group of its node's multiplicity unless it ties
    another image's value, and only rows with ties need a (row, group, node) count. The counts are
    integers, so the result equals :func:`seg_stats`' up to the rounding of the last divisions (1e-15;
    ``tests/statistics/test_perm_both.py`` checks every TS2 SEG).

    NaN policy: as :func:`walk_stats`: an unscored image carries no weight; walks with fewer than two
    scored images are left out.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz import load_dataset
    >>> from ts2viz.metametrics import seg_ord, seg_stats, seg_structure
    >>> st = seg_structure(load_dataset("ts2")[0])
    >>> rows = np.random.default_rng(0).normal(size=(3, len(st.file_names)))
    >>> bool(np.allclose(seg_ord(st, rows), seg_stats(st, rows)["ord"], rtol=0, atol=1e-15))
    True
    """
    pol = resolve_policy(policy)
    rows = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    R, n = rows.shape
    C = st.node_counts                                                     # (K, N)
    K, N = C.shape
    valid = ~np.isnan(rows)
    shared = bool(valid.all(0).all() or (valid == valid[:1]).all())      # every row scores the same images
    keys = np.where(valid, rows, np.inf)
    order = np.argsort(keys, axis=1, kind="stable")
    sk = np.take_along_axis(keys, order, axis=1)
    vs = np.take_along_axis(valid, order, axis=1)
    node_s = st.node_of[order]                                             # (R, n) node of each sorted image
    # level side (as in _spearman), once when every row scores the same images
    n_scored = (valid[:1] if shared else valid).astype(np.float64) @ st.member.T   # (R or 1, N)
    sw = n_scored @ C.T                                                    # (R or 1, K)
    t = np.einsum("wa,ra,al->rwl", C, n_scored, st.node_level, optimize=True)
    dy = np.cumsum(t, -1) - t / 2 - sw[..., None] / 2
    vy = (t * dy * dy).sum(-1)
    dyn = dy @ st.node_level.T                                             # (R or 1, K, N)
    # score side: twice node b's part of each image's centred mid-rank, from cumulative counts of each
    # node's scored images in score order (small integers: exact in float32), gathered per image in image
    # (= node) order, laid out (image, row, node) so that one matrix product sums them per node
    cum = np.zeros((R, n + 1, N), dtype=np.float32)
    cum[np.repeat(np.arange(R), n), np.tile(np.arange(1, n + 1), R), node_s.ravel()] = vs.ravel()
    np.cumsum(cum, axis=1, out=cum)
    start, end = _group_bounds(sk)                                         # tie groups, in score order
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(n), order.shape), axis=1)
    base = (np.arange(R) * (n + 1))[:, None]
    flat = cum.reshape(R * (n + 1), N)
    two_h = np.take(flat, (base + np.take_along_axis(start, rank, axis=1)).T.ravel(), axis=0)
    two_h += np.take(flat, (base + np.take_along_axis(end, rank, axis=1) + 1).T.ravel(), axis=0)
    two_h = two_h.reshape(n, R, N)
    two_h -= cum[None, :, -1, :]
    two_h *= valid.T[:, :, None]
    q = (st.member.astype(np.float32) @ two_h.reshape(n, R * N)).reshape(N, R, N)   # (a, R, b)
    q = q.transpose(1, 0, 2).astype(np.float64) * 0.5                      # (R, a, b): node b's part in node a
    if shared:
        table = ((C * dyn[0])[:, :, None] * C[:, None, :]).reshape(K, N * N)
        cov = q.reshape(R, N * N) @ table.T
    else:
        X = (q.reshape(R * N, N) @ C.T).reshape(R, N, K)
        cov = np.einsum("wa,rwa,raw->rw", C, dyn, X, optimize=False)
    # the score side's variance from the tie groups' sizes: (S**3 - sum of cubed group sizes) / 12, each
    # scored image its own group (of its node's multiplicity) but where rows tie values
    c3 = C ** 3
    vx = (sw ** 3 - n_scored @ c3.T) / 12.0                                 # (R or 1, K) with no ties
    is_start = np.concatenate([np.ones((R, 1), bool), sk[:, 1:] != sk[:, :-1]], axis=1)
    tied = (~is_start & vs).any(1)                                          # rows where scored values tie
    if tied.any():
        tr = np.flatnonzero(tied)
        T = tr.size
        s_t, v_t, nd_t = is_start[tr], vs[tr], node_s[tr]
        gid = np.cumsum(s_t, axis=1) - 1                                   # tie group of each sorted image
        cnt = np.bincount((np.arange(T)[:, None] * n + gid).ravel(), weights=v_t.ravel(),
                          minlength=T * n).reshape(T, n)
        gm = cnt >= 2
        G = int(gm.sum(1).max())
        multi = v_t & np.take_along_axis(gm, gid, axis=1)
        mg = np.take_along_axis(np.cumsum(gm, axis=1) - 1, gid, axis=1)
        rr = np.broadcast_to(np.arange(T)[:, None], (T, n))
        Mg = np.bincount(((rr[multi] * G + mg[multi]) * N + nd_t[multi]), minlength=T * G * N).reshape(T, G, N)
        Mg = Mg.astype(np.float64)
        # a tied group of t copies counts t**3 instead of the sum of its members' cubes
        corr = ((Mg.reshape(T * G, N) @ C.T) ** 3).reshape(T, G, K).sum(1) - Mg.sum(1) @ c3.T
        vx = np.array(np.broadcast_to(vx, (R, K)))
        vx[tr] -= corr / 12.0
    with np.errstate(invalid="ignore", divide="ignore"):
        tol = CONSTANT_RANK_TOL * np.maximum(sw, 1.0) ** 3
        rho = np.divide(cov, np.sqrt(vx * vy), out=cov)
        np.copyto(rho, 0.0, where=~((vx > tol) & (vy > tol)))
        np.clip(rho, -1.0, 1.0, out=rho)
    used = sw >= 2                                                         # (R or 1, K)
    wt = np.where(used, sw, 0.0) if pol.walk_weights == "scored-images" else used.astype(np.float64)
    den = wt.sum(-1)
    num = -(rho @ wt[0]) if shared else -(rho * wt).sum(-1)              # unused walks have weight 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


@dataclass
class MetaMetrics:
    """Meta-metric results for a dataset, a set of metrics and a policy.

    Use :meth:`segs`, :meth:`walks` and :meth:`leaderboard` for tables, :meth:`walk_stats` for the arrays
    of one SEG, :meth:`join` to put results for other metrics beside these, and :meth:`save`/:meth:`load`
    to keep them on disk.

    Attributes
    ----------
    policy : Policy
        The :class:`~ts2viz.policy.Policy` that made the numbers.
    metrics : list of str
        The metrics.
    seg_ids : list of int
        The SEGs.
    partitions : list of str
        Each SEG's partition.
    seg_values : dict[str, numpy.ndarray]
        ``seg_values[stat]`` is an array (SEGs, metrics) in the order of ``seg_ids`` x ``metrics``.
    n_walks : numpy.ndarray
        (SEGs, metrics) walks with at least two scored images.
    excluded : list of int
        SEG ids left out of the overall and partition averages (the policy's ``leave_out``).
    walk_results : dict
        SEG id -> (SegStructure, WalkStats).

    See Also
    --------
    compute : how these are made.
    ts2viz.statistics.bootstrap.bootstrap : intervals for every leaderboard cell.
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
        """The per-SEG values as a table.

        Returns
        -------
        pandas.DataFrame
            One row per (SEG, metric): ``seg_id``, ``partition``, ``metric``, ``ord``, ``sep``, ``delta``,
            ``kendall``, ``signed_sep``, ``n_walks``.

        Examples
        --------
        >>> from ts2viz import load_dataset, bundled_scores, compute
        >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "DSG-mPLUG"], seg_ids=[0, 1])
        >>> segs = mm.segs()
        >>> segs.columns.tolist()
        ['seg_id', 'partition', 'metric', 'ord', 'sep', 'delta', 'kendall', 'signed_sep', 'n_walks']
        >>> segs[["seg_id", "metric", "ord", "sep", "n_walks"]].round(3)
           seg_id     metric    ord    sep  n_walks
        0       0  CLIPScore  0.885  0.951        2
        1       0  DSG-mPLUG  0.802  0.790        2
        2       1  CLIPScore  0.798  1.000        2
        3       1  DSG-mPLUG -0.265  0.500        2
        """
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
        """The per-walk values as a table.

        Parameters
        ----------
        seg_id : int, optional
            One SEG (default: all).

        Returns
        -------
        pandas.DataFrame
            One row per (SEG, walk, metric): ``seg_id``, ``walk``, ``path`` (node labels joined by ``>``),
            ``metric``, then :data:`STATS` and ``n_images``.

        Raises
        ------
        InputError
            If there are no results for ``seg_id``.

        Examples
        --------
        Under the paper's policy each walk takes the error-0 node twice:

        >>> from ts2viz import load_dataset, bundled_scores, compute
        >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore"], policy="paper", seg_ids=[0])
        >>> mm.walks(0)[["walk", "path", "ord", "n_images"]].round(3)
           walk      path    ord  n_images
        0     0  0>0>1a>2  0.930      10.0
        1     1  0>0>1b>2  0.829       8.0
        """
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
        """The walk layout and per-walk statistics (metrics x walks) of one SEG.

        Parameters
        ----------
        seg_id : int
            A SEG of the results.

        Returns
        -------
        tuple of (SegStructure, WalkStats)
            The layout and the statistics.

        Raises
        ------
        InputError
            If there are no results for the SEG.
        """
        try:
            return self.walk_results[seg_id]
        except KeyError:
            raise InputError(f"no results for SEG {seg_id} (evaluated: {len(self.seg_ids)} SEGs)") from None

    def averages(self) -> dict[str, np.ndarray]:
        """Per-metric means of each stat over all (non-excluded) SEGs and per partition.

        Returns
        -------
        dict[str, numpy.ndarray]
            Keys ``{stat}_avg`` and ``{stat}_{partition lower-case}``, partitions in display order
            (:func:`ordered_partitions`); each (metrics,).

        Notes
        -----
        NaN policy: NaN SEG values are skipped; a group without any value is NaN.
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
        """The leaderboard: one row per metric, averages over SEGs.

        Parameters
        ----------
        stats : sequence of str, default ("ord", "sep")
            The statistics to show (of :data:`STATS`).

        Returns
        -------
        pandas.DataFrame
            ``metric``, then ``{stat}_avg`` and ``{stat}_{partition}`` for ``stats`` (fractions; delta in
            score units).

        Raises
        ------
        KeyError
            For an unknown statistic.

        See Also
        --------
        ts2viz.statistics.bootstrap.leaderboard_table : the same with intervals and rank columns.

        Examples
        --------
        The published TS2 numbers (the paper's Table: CLIPScore's average Ord 71.4 and Sep 90.7):

        >>> from ts2viz import load_dataset, bundled_scores, compute
        >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "DSG-mPLUG"], policy="paper")
        >>> board = mm.leaderboard().set_index("metric")
        >>> (100 * board[["ord_avg", "sep_avg", "ord_real", "sep_real"]]).round(1)
                   ord_avg  sep_avg  ord_real  sep_real
        metric
        CLIPScore     71.4     90.7      69.3      90.3
        DSG-mPLUG     68.8     75.5      56.4      73.1
        """
        import pandas as pd

        av = self.averages()
        cols = [f"{k}_avg" for k in stats]
        for p in ordered_partitions(self.partitions):
            cols += [f"{k}_{p.lower()}" for k in stats]
        return pd.DataFrame({"metric": self.metrics, **{c: av[c] for c in cols}})

    # -- combining and keeping results -------------------------------------------------------------
    @classmethod
    def join(cls, parts: Sequence["MetaMetrics"]) -> "MetaMetrics":
        """Results for disjoint metric sets over the same SEGs and policy, side by side (metrics in order).

        Parameters
        ----------
        parts : sequence of MetaMetrics
            The results to join.

        Returns
        -------
        MetaMetrics
            One result holding every part's metrics (a single part is returned as it is).

        Raises
        ------
        InputError
            If there is no part.
        ValueError
            If the parts differ in SEGs or policy, or share a metric.
        """
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

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        """
        from .atomic import atomic_path

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

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        dataset : Dataset
            The dataset the results are of.

        Returns
        -------
        MetaMetrics
            The results.

        Raises
        ------
        ValueError
            When the file is of another format version or does not fit the dataset (the caller then
            recomputes).
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
    """Distinct partitions in display order: TS2's Synth, Nat, Real first, then any others as they come.

    Parameters
    ----------
    parts : sequence of str
        Partition names (repeats allowed).

    Returns
    -------
    list of str
        The distinct names.

    Examples
    --------
    >>> from ts2viz.metametrics import ordered_partitions
    >>> ordered_partitions(["Real", "Custom", "Synth", "Real"])
    ['Synth', 'Real', 'Custom']
    """
    seen = list(dict.fromkeys(parts))
    known = [p for p in ("Synth", "Nat", "Real") if p in seen]
    return known + [p for p in seen if p not in known]


def left_out(dataset, seg_ids: Sequence[int], policy: Policy) -> list[int]:
    """SEG ids the policy leaves out of averages: TS2's last SEG under ``leave_out='ts2-last'``.

    Parameters
    ----------
    dataset : Dataset
        The dataset.
    seg_ids : sequence of int
        The SEGs evaluated.
    policy : Policy
        The policy.

    Returns
    -------
    list of int
        ``[164]`` for TS2 under the paper's policy (when evaluated), else empty.
    """
    if policy.leave_out == "ts2-last" and dataset.is_ts2:
        last = max(dataset.segs)
        return [last] if last in seg_ids else []
    return []


def compute(dataset, scores, metrics: Sequence[str] | None = None, policy: "Policy | str" = "paper",
            seg_ids: Sequence[int] | None = None, *, mode: "Policy | str | None" = None) -> MetaMetrics:
    """Meta-metrics of ``metrics`` (default: all in ``scores``) over ``dataset`` under ``policy``.

    Parameters
    ----------
    dataset : Dataset
        The SEGs (:func:`ts2viz.dataset.load_dataset`).
    scores : Scores
        :class:`ts2viz.scores.Scores`; images without a score count as NaN.
    metrics : sequence of str, optional
        Metric names to evaluate; each must be in ``scores``.
    policy : Policy or str, default "paper"
        A :class:`~ts2viz.policy.Policy`, a preset name (``"paper"``, ``"spec"``) or preset text with
        overrides (``"paper:walk_weights=uniform"``).
    seg_ids : sequence of int, optional
        Restrict to these SEGs (default: all).
    mode : Policy or str, optional
        Another name for ``policy`` (it wins when given).

    Returns
    -------
    MetaMetrics
        Per-walk, per-SEG and averaged results, recording the policy.

    Raises
    ------
    InputError
        For an unknown SEG, metric or policy, or an unscored image under ``nan_policy=raise`` (naming
        the metric and the image).

    See Also
    --------
    MetaMetrics.leaderboard : the averages as a table.
    ts2viz.statistics.bootstrap.bootstrap : intervals.
    ts2viz.statistics.ord_sep.spearman_ord : Ord of one walk, the readable definition.

    Notes
    -----
    Per walk, Ord = -rho(error count, score) (Spearman), Sep = the mean two-sample KS statistic over the
    population pairs the policy names, delta the mean score gap; a SEG averages its walks, the
    leaderboard averages the SEGs (see the module docstring and :mod:`ts2viz.policy`). SEGs of one shape
    share a walk layout and are computed together, as if they were more metrics.

    NaN policy: by the policy's ``nan_policy`` (``omit``: an unscored image is left out of every walk and
    population; ``raise``: :class:`InputError` naming the metric and an unscored image).

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore"], policy="paper")
    >>> mm.mode, len(mm.seg_ids), mm.excluded
    ('paper', 165, [164])
    >>> round(100 * float(mm.averages()["ord_avg"][0]), 1)
    71.4
    """
    pol = resolve_policy(mode if mode is not None else policy)
    metrics = list(scores.metrics if metrics is None else metrics)
    ids = list(dataset.segs) if seg_ids is None else [int(s) for s in seg_ids]
    missing = [s for s in ids if s not in dataset.segs]
    if missing:
        raise InputError(f"no SEG with id {missing[0]} in dataset {dataset.name}")
    # SEGs of the same shape share one walk layout and are computed together: their score rows are
    # stacked as if they were more metrics, which removes the per-SEG cost of many small numpy calls.
    groups: dict[tuple, list[int]] = {}
    for i, sid in enumerate(ids):
        groups.setdefault(shape_key(dataset[sid]), []).append(i)
    structures: list[SegStructure] = [None] * len(ids)  # type: ignore[list-item]
    for members in groups.values():
        first = seg_structure(dataset[ids[members[0]]], pol)
        structures[members[0]] = first
        for i in members[1:]:
            seg = dataset[ids[i]]
            structures[i] = seg.memo(("walk-layout", pol.repeat_root), lambda seg=seg: first.rebind(seg))
    offsets = np.cumsum([0] + [len(st.file_names) for st in structures])
    all_fn = [fn for st in structures for fn in st.file_names]
    mat = scores.aligned(all_fn, metrics).T                              # (M, N)
    if pol.nan_policy == "raise" and np.isnan(mat).any():
        m, i = np.argwhere(np.isnan(mat))[0]
        raise InputError(f"metric {metrics[m]!r} has no score for {int(np.isnan(mat[m]).sum())} image(s), e.g. "
                         f"{all_fn[i]!r} (policy nan_policy=raise)")
    M = len(metrics)
    vals = {k: np.full((len(ids), M), np.nan) for k in STATS}
    n_walks = np.zeros((len(ids), M), dtype=np.int64)
    walk_parts: list = [None] * len(ids)
    for members in groups.values():
        st = structures[members[0]]
        n, K = len(st.file_names), len(st.walk_nodes)
        # rows per batch: keep the (rows x images x images) and (rows x walks) temporaries bounded
        per_row = max(n * n, K * len(st.pairs), K, 1)
        segs_per_batch = max(1, CHUNK_ELEMENTS // (per_row * max(M, 1)))
        for b in range(0, len(members), segs_per_batch):
            batch = members[b:b + segs_per_batch]
            block = np.concatenate([mat[:, offsets[i]:offsets[i + 1]] for i in batch], axis=0)   # (B*M, n)
            prep = _prepare(st, block)
            ws = walk_stats(st, prep.scores, pol, prep)
            res = seg_stats(st, prep.scores, ws, pol, prep)
            for j, i in enumerate(batch):
                rows = slice(j * M, (j + 1) * M)
                for k in STATS:
                    vals[k][i] = res[k][rows]
                n_walks[i] = res["n_walks"][rows]
                walk_parts[i] = WalkStats(**{f: getattr(ws, f)[rows] for f in WALK_FIELDS})
    results = {sid: (structures[i], walk_parts[i]) for i, sid in enumerate(ids)}
    parts = [dataset[s].partition for s in ids]
    return MetaMetrics(pol, metrics, ids, parts, vals, n_walks, left_out(dataset, ids, pol), results)
