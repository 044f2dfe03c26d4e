"""The TS2 meta-metrics (ord, sep, delta, kendall) for every walk, SEG, partition and metric at once.

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
from dataclasses import dataclass

import numpy as np

from .definitions import CONSTANT_RANK_TOL
from .policy import Policy, resolve_policy
from .structure import SegStructure

#: the per-walk and per-SEG statistics, in column order
STATS = ("ord", "sep", "delta", "kendall", "signed_sep")


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
    >>> from ts2viz.metametrics.walks import signed
    >>> signed(np.array([0.5, 0.5, 0.5]), np.array([0.1, -0.2, 0.0])).tolist()
    [0.5, -0.5, 0.0]
    """
    return seps * np.sign(gaps)


@dataclass
class Prepared:
    """The per-SEG, per-score-matrix arrays that walk and SEG statistics share."""

    scores: np.ndarray
    valid: np.ndarray
    node_valid: np.ndarray
    by_score: _NodeCumulative


def prepare(st: SegStructure, scores: np.ndarray) -> Prepared:
    """The arrays that walk and SEG statistics share, for one SEG and one score matrix.

    Parameters
    ----------
    st : SegStructure
        The SEG's walk layout.
    scores : numpy.ndarray
        Scores, shape (metrics, images) or (images,); NaN = unscored.

    Returns
    -------
    Prepared
        The scores as a 2-D float array, their validity masks and the per-node cumulative counts.
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    valid = ~np.isnan(scores)                                            # (M, n)
    node_valid = st.member[None, :, :] * valid[:, None, :]               # (M, N, n)
    return Prepared(scores, valid, node_valid, _NodeCumulative(scores, node_valid, st.node_of))


#: elements of one (rows x walks x images) temporary array: walk statistics are computed in chunks of
#: walks that keep each such array under this size (about 32 MB), whatever the number of walks
CHUNK_ELEMENTS = 4_000_000


def walk_stats(st: SegStructure, scores: np.ndarray, policy: "Policy | str" = "paper") -> WalkStats:
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
        The policy (:func:`~ts2viz.metametrics.policy.resolve_policy` reads it).

    Returns
    -------
    WalkStats
        (M, walks) arrays.

    Raises
    ------
    InputError
        For an unknown policy.

    See Also
    --------
    walk_arrays : the same on prepared arrays and a resolved policy (what :func:`seg_stats` and
        :func:`~ts2viz.metametrics.results.compute` share).

    Notes
    -----
    Per walk, ord is -rho(error count, score) (Spearman, with the images' multiplicities in the walk),
    kendall is -tau_b likewise, sep the mean KS statistic over the level pairs the policy's
    ``sep_pairs`` names, delta the mean score gap over its ``delta_pairs`` and signed_sep sep with each
    pair's KS signed by its mean gap. A side counts as constant (correlation 0) when its rank variance
    is at most :data:`~ts2viz.metametrics.definitions.CONSTANT_RANK_TOL` times n**3.

    NaN policy: an unscored image carries no weight; a walk with fewer than two scored images gets NaN.
    """
    return walk_arrays(st, prepare(st, scores), resolve_policy(policy))


def walk_arrays(st: SegStructure, pr: Prepared, pol: Policy) -> WalkStats:
    """:func:`walk_stats` on arrays from :func:`prepare` under a resolved policy (nothing is validated).

    Parameters
    ----------
    st : SegStructure
        The SEG's walk layout.
    pr : Prepared
        ``prepare(st, scores)``.
    pol : Policy
        The resolved policy.

    Returns
    -------
    WalkStats
        (M, walks) arrays.
    """
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
              policy: "Policy | str" = "paper") -> dict[str, np.ndarray]:
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
        The policy (:func:`~ts2viz.metametrics.policy.resolve_policy` reads it).

    Returns
    -------
    dict[str, numpy.ndarray]
        :data:`STATS` (each (M,)) and ``n_walks`` (walks with at least two scored images).

    Raises
    ------
    InputError
        For an unknown policy.

    See Also
    --------
    seg_arrays : the same on prepared arrays and a resolved policy.

    Notes
    -----
    A SEG's ord and kendall are the means over its walks, weighted by each walk's scored images or
    uniform (``walk_weights``); sep, signed_sep and delta likewise, except under ``adjacent-nodes``,
    where each distinct edge counts once at the SEG level.

    NaN policy: walks with fewer than two scored images are left out; a SEG without any such walk is
    NaN; no pair to compare gives 0 or NaN by the policy's ``no_pairs``.
    """
    return seg_arrays(st, prepare(st, scores), ws, resolve_policy(policy))


def seg_arrays(st: SegStructure, pr: Prepared, ws: WalkStats | None, pol: Policy) -> dict[str, np.ndarray]:
    """:func:`seg_stats` on arrays from :func:`prepare` under a resolved policy (nothing is validated).

    Parameters
    ----------
    st : SegStructure
        The SEG's walk layout.
    pr : Prepared
        ``prepare(st, scores)``.
    ws : WalkStats or None
        The per-walk statistics (computed by :func:`walk_arrays` when None).
    pol : Policy
        The resolved policy.

    Returns
    -------
    dict[str, numpy.ndarray]
        As :func:`seg_stats`.
    """
    ws = ws or walk_arrays(st, pr, pol)
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

    The fast path of the one-pair permutation test (:func:`ts2viz.metametrics.permutation.perm_both`), which
    needs only Ord, for thousands of permuted score rows per SEG (the all-pairs test uses
    :class:`ts2viz.metametrics.swap_ord.SwapOrd`). It computes no other statistic and no per-(walk, image)
    array.

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
    >>> from ts2viz.metametrics.walks import seg_ord, seg_stats
    >>> from ts2viz.metametrics.structure import seg_structure
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
