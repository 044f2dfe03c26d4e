"""Permutation tests and significance clusters for TS2 leaderboard cells (SEGs are the units).

A leaderboard cell (``ord_avg``, ``sep_nat``, ...) is the mean of per-SEG values over the SEGs of a
group (:func:`ts2viz.metametrics.intervals.seg_values`), so the SEG is the unit of the permutation tests:

- :func:`pairwise_permutation` swaps whole SEGs (``swap="units"``): every pair of metrics at once, from
  the per-SEG values alone (exact for per-SEG statistics: a swapped SEG's values are the two metrics'
  values exchanged). Ord, Sep, signed Sep and Kendall are rank statistics, unchanged by the per-SEG
  standardisation; delta is a score gap, so it is divided by each metric's score SD within the SEG (it
  then compares gaps in SD units, not in two metrics' different score units: pass ``scores``).
- :func:`perm_both` swaps single images' standardised scores within SEGs (PERM-BOTH) and recomputes the
  SEG's meta-metric for every permutation: the more powerful test of Deutsch et al. (2021);
  :func:`perm_both_pairs` runs it for many pairs at once (Ord: per SEG, one
  :class:`ts2viz.metametrics.swap_ord.SwapOrd` kernel scores every pair's swapped rows of a block of swap
  patterns with a few matrix products; other statistics through :func:`ts2viz.metametrics.walks.seg_stats`).
- :func:`leaderboard_clusters`: significance clusters (:mod:`.clusters`) on a cell.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..statistics.clusters import Clusters, significance_clusters
from ..statistics.permutation_tests import (
    DEFAULT_SETTINGS,
    PairwisePermutation,
    PermutationResult,
    PermutationSettings,
    mean_diffs,
    pairwise_unit_permutation,
    permutation_test,
    sampled_swap_pvalues,
    standardise,
)
from .intervals import averaged_segs, seg_values, split_cell
from .results import MetaMetrics
from ..parallel import one_blas_thread, thread_map
from .swap_ord import SwapOrd
from .walks import CHUNK_ELEMENTS, seg_ord, seg_stats


def seg_sds(mm: MetaMetrics, scores, seg_index: Sequence[int]) -> np.ndarray:
    """Each metric's score SD (population, NaN skipped) within each SEG.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    scores : Scores
        The scores ``mm`` was computed from.
    seg_index : sequence of int
        Indices into ``mm.seg_ids``.

    Returns
    -------
    numpy.ndarray
        Array (len(seg_index), metrics); NaN where a metric has no score in the SEG.

    Notes
    -----
    NaN policy: NaN scores are skipped.
    """
    out = np.full((len(seg_index), len(mm.metrics)), np.nan)
    for r, i in enumerate(seg_index):
        st = mm.walk_stats(mm.seg_ids[i])[0]
        x = scores.aligned(st.file_names, mm.metrics)
        with np.errstate(invalid="ignore"):
            ok = ~np.isnan(x)
            n = ok.sum(0)
            mu = np.where(ok, x, 0).sum(0) / np.maximum(n, 1)
            out[r] = np.where(n > 0, np.sqrt((np.where(ok, x - mu, 0) ** 2).sum(0) / np.maximum(n, 1)), np.nan)
    return out


def cell_unit_values(mm: MetaMetrics, cell: str, scores=None) -> np.ndarray:
    """Per-SEG values that the unit-swap test uses for ``cell``.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    cell : str
        A leaderboard cell, e.g. ``"ord_avg"``.
    scores : Scores, optional
        The scores ``mm`` was computed from; needed for a delta cell.

    Returns
    -------
    numpy.ndarray
        (SEGs of the cell's group, metrics): the leaderboard's per-SEG values; for delta, divided by the
        metric's score SD in the SEG (a SEG where a metric is constant gives NaN).

    Raises
    ------
    InputError
        If the cell is unknown, or it is a delta cell and ``scores`` is None.
    """
    vals = seg_values(mm, cell)
    stat, group = split_cell(cell)
    if stat == "delta":
        if scores is None:
            raise InputError("a permutation test on delta needs the scores (delta is standardised per SEG)")
        idx = averaged_segs(mm)[group]
        with np.errstate(invalid="ignore", divide="ignore"):
            sd = seg_sds(mm, scores, idx)
            vals = np.where(sd > 0, vals / np.where(sd > 0, sd, 1.0), np.nan)
    return vals


def pairwise_permutation(mm: MetaMetrics, cell: str = "ord_avg", *, alternative: str = "greater",
                         settings: PermutationSettings = DEFAULT_SETTINGS, scores=None) -> PairwisePermutation:
    """SEG-swap permutation tests of every ordered pair of ``mm.metrics`` on one leaderboard cell.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    cell : str, default "ord_avg"
        The leaderboard cell.
    alternative : {'greater', 'two-sided'}, default 'greater'
        ``pvalue[i, j]`` is the p-value of "metric i's cell value > metric j's" (``"greater"``) or of a
        difference either way (``"two-sided"``).
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    scores : Scores, optional
        The scores ``mm`` was computed from (needed for delta cells, see :func:`cell_unit_values`).

    Returns
    -------
    PairwisePermutation
        Estimates, differences and the p-value matrix
        (:func:`~ts2viz.statistics.permutation_tests.pairwise_unit_permutation`).

    Raises
    ------
    InputError
        If the cell or the alternative is unknown, or a delta cell comes without ``scores``.

    Notes
    -----
    NaN policy: NaN per-SEG values are skipped in each metric's mean, as in the leaderboard.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metametrics.permutation import pairwise_permutation
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "ALIGNScore", "DSG-mPLUG"], policy="paper")
    >>> pairwise_permutation(mm, "sep_avg").pvalue.round(2).tolist()
    [[nan, 0.99, 0.01], [0.02, nan, 0.01], [1.0, 1.0, nan]]
    """
    return pairwise_unit_permutation(cell_unit_values(mm, cell, scores), alternative=alternative,
                                     settings=settings)


def leaderboard_clusters(mm: MetaMetrics, cell: str = "ord_avg", *, alpha: float = 0.05,
                         correction: str = "none", against: str = "best",
                         settings: PermutationSettings = DEFAULT_SETTINGS, scores=None,
                         tests: PairwisePermutation | None = None) -> Clusters:
    """Significance clusters of ``mm.metrics`` on ``cell`` from one-sided SEG-swap permutation tests.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    cell : str, default "ord_avg"
        The leaderboard cell.
    alpha : float, default 0.05
        Significance level.
    correction : {'none', 'holm'}, default 'none'
        ``"none"`` as WMT, or ``"holm"`` (:func:`~ts2viz.statistics.clusters.significance_clusters`).
    against : {'best', 'any'}, default 'best'
        Test a metric against the best of the current cluster, or against every member.
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    scores : Scores, optional
        The scores (needed for delta cells).
    tests : PairwisePermutation, optional
        A :func:`pairwise_permutation` result (``"greater"``) to reuse.

    Returns
    -------
    Clusters
        The ranking and each metric's cluster.

    Raises
    ------
    ValueError
        If ``tests`` is not one-sided.
    InputError
        If the cell or a setting is invalid.

    Notes
    -----
    The ordering is the leaderboard's (the cell's values; for delta, the per-SEG standardised gaps the
    tests compare); a metric starts a new cluster when the best of the current cluster beats it with
    one-sided permutation p <= ``alpha``.

    Examples
    --------
    On average Ord, ALIGNScore and CLIPScore share the top cluster:

    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metametrics.permutation import leaderboard_clusters
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "ALIGNScore", "DSG-mPLUG"], policy="paper")
    >>> leaderboard_clusters(mm, "ord_avg").members()
    [['ALIGNScore', 'CLIPScore'], ['DSG-mPLUG']]
    >>> leaderboard_clusters(mm, "sep_avg").members()
    [['ALIGNScore'], ['CLIPScore'], ['DSG-mPLUG']]
    """
    if tests is None:
        tests = pairwise_permutation(mm, cell, alternative="greater", settings=settings, scores=scores)
    elif tests.alternative != "greater":
        raise ValueError("clusters need one-sided ('greater') tests")
    # the order is that of the values the tests compare: the leaderboard's, but for delta (standardised
    # per SEG, so that metrics on different scales are comparable) the mean standardised gap
    return significance_clusters(mm.metrics, tests.estimate, tests.pvalue, alpha=alpha, correction=correction,
                                 against=against)


def seg_statistic(mm: MetaMetrics, stat: str, seg_index: Sequence[int]):
    """The per-SEG meta-metric ``stat`` as a unit statistic for a permutation test.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results (their walk layouts and policy are used).
    stat : str
        One of :data:`ts2viz.metametrics.walks.STATS`.
    seg_index : sequence of int
        Indices into ``mm.seg_ids``; unit ``u`` is SEG ``mm.seg_ids[seg_index[u]]``.

    Returns
    -------
    callable
        ``f(u, rows)`` -> (R,) values of the SEG for each score row (rows in the SEG's image order), as
        :func:`~ts2viz.statistics.permutation_tests.permutation_test` expects.
    """
    structures = [mm.walk_stats(mm.seg_ids[i])[0] for i in seg_index]
    if stat == "ord":
        def statistic(u: int, rows: np.ndarray) -> np.ndarray:
            return seg_ord(structures[u], rows, mm.policy)
    else:
        def statistic(u: int, rows: np.ndarray) -> np.ndarray:
            return seg_stats(structures[u], rows, policy=mm.policy)[stat]

    return statistic


def perm_both(mm: MetaMetrics, scores, a: str, b: str, cell: str = "ord_avg", *, alternative: str = "greater",
              settings: PermutationSettings = DEFAULT_SETTINGS, exact: bool = False) -> PermutationResult:
    """PERM-BOTH test of "metric ``a`` > metric ``b``" on one leaderboard cell.

    Within every SEG of the cell's group, each image's two standardised scores are swapped with
    probability 1/2 and the SEG's meta-metric is recomputed (:func:`seg_statistic`: the leaderboard's
    own definitions under ``mm.policy``). More powerful than the SEG-swap test, and slower;
    :func:`perm_both_pairs` tests many pairs at once.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    scores : Scores
        The scores ``mm`` was computed from.
    a, b : str
        The two metrics.
    cell : str, default "ord_avg"
        The leaderboard cell.
    alternative : {'greater', 'two-sided'}, default 'greater'
        The alternative.
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    exact : bool, default False
        Enumerate every swap pattern (tiny inputs only).

    Returns
    -------
    PermutationResult
        The two cell values, their difference and the p-value.

    Raises
    ------
    InputError
        If a metric or the cell is unknown.
    """
    stat, group = split_cell(cell)
    idx = averaged_segs(mm)[group]
    for m in (a, b):
        if m not in mm.metrics:
            raise InputError(f"no metric {m!r} in the meta-metrics (have: {', '.join(mm.metrics)})")
    a_units, b_units = [], []
    for i in idx:
        st = mm.walk_stats(mm.seg_ids[i])[0]
        x = scores.aligned(st.file_names, [a, b])
        a_units.append(x[:, 0])
        b_units.append(x[:, 1])
    return permutation_test(a_units, b_units, seg_statistic(mm, stat, idx), swap="items",
                            alternative=alternative, settings=settings, exact=exact)


def perm_both_pairs(mm: MetaMetrics, scores, cell: str = "ord_avg", *,
                    pairs: Sequence[tuple[str, str]] | None = None, alternative: str = "greater",
                    settings: PermutationSettings = DEFAULT_SETTINGS) -> PairwisePermutation:
    """PERM-BOTH tests of many pairs of metrics on one leaderboard cell, vectorised across pairs.

    The same test as :func:`perm_both` for every pair: within every SEG of the cell's group, each image's
    two standardised scores are swapped with probability 1/2 and the SEG's meta-metric is recomputed.
    Every block of swap patterns is drawn once for all pairs (from ``settings.seed``, as
    :func:`perm_both` draws them for one pair), so each pair's p-value and permutation count equal
    :func:`perm_both`'s for that pair.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    scores : Scores
        The scores ``mm`` was computed from.
    cell : str, default "ord_avg"
        The leaderboard cell (Ord cells use the kernel :class:`ts2viz.metametrics.swap_ord.SwapOrd`).
    pairs : sequence of (str, str), optional
        The (a, b) pairs to test, "a > b" (default: every ordered pair of ``mm.metrics``).
    alternative : {'greater', 'two-sided'}, default 'greater'
        The alternative.
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping (per pair), seed.

    Returns
    -------
    PairwisePermutation
        Estimates (the cell per metric, over the SEGs where it is defined), differences, the (M, M)
        p-value matrix (NaN where not tested) and the permutations each test used.

    Raises
    ------
    InputError
        If a metric, the cell or the alternative is unknown.

    Notes
    -----
    Ord: per SEG, the pairs whose two metrics leave out the same images share one
    :class:`~ts2viz.metametrics.swap_ord.SwapOrd` kernel, which scores rows A and B of every still active
    pair for a block of swap patterns at once (a pair and its reverse share one kernel: their rows are
    each other's); a pair whose metrics leave out different images is scored row by row through
    :func:`ts2viz.metametrics.walks.seg_ord`, as are other statistics through ``seg_stats``. The SEGs
    run on :func:`ts2viz.parallel.thread_map` in 8 fixed shares, one BLAS thread each, so the sums do not
    depend on the number of threads. ``benchmarks/bench_significance.py`` times it against the
    per-permutation path.

    NaN policy: as :func:`perm_both`: NaN scores carry no weight; a SEG whose value is NaN is skipped in
    that metric's mean.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.statistics.permutation_tests import PermutationSettings
    >>> from ts2viz.metametrics.permutation import perm_both, perm_both_pairs
    >>> scores = bundled_scores()
    >>> mm = compute(load_dataset("ts2"), scores, ["CLIPScore", "ALIGNScore", "DSG-mPLUG"], policy="paper")
    >>> st = PermutationSettings(n_permutations=100)
    >>> res = perm_both_pairs(mm, scores, pairs=[("ALIGNScore", "DSG-mPLUG")], settings=st)
    >>> one = perm_both(mm, scores, "ALIGNScore", "DSG-mPLUG", settings=st)
    >>> bool(res.pvalue[1, 2] == one.pvalue), int(res.n_used[1, 2]) == one.n_used
    (True, True)
    """
    if alternative not in ("greater", "two-sided"):
        raise InputError(f"alternative must be 'greater' or 'two-sided', got {alternative!r}")
    stat, group = split_cell(cell)
    idx = averaged_segs(mm)[group]
    M = len(mm.metrics)
    col = {m: k for k, m in enumerate(mm.metrics)}
    if pairs is None:
        I, J = np.nonzero(~np.eye(M, dtype=bool))
    else:
        for a, b in pairs:
            for m in (a, b):
                if m not in col:
                    raise InputError(f"no metric {m!r} in the meta-metrics (have: {', '.join(mm.metrics)})")
        I = np.array([col[a] for a, _ in pairs], dtype=np.int64)
        J = np.array([col[b] for _, b in pairs], dtype=np.int64)
    statistic = seg_statistic(mm, stat, idx)
    units, nodes, structures = [], [], []
    for i in idx:
        st = mm.walk_stats(mm.seg_ids[i])[0]
        x = scores.aligned(st.file_names, mm.metrics)
        units.append(np.stack([standardise(x[:, k]) for k in range(M)]))     # (M, n)
        nodes.append(st.node_counts.shape[1])
        structures.append(st)
    vals = np.array([statistic(u, z) for u, z in enumerate(units)]).reshape(len(units), M)
    ok = ~np.isnan(vals)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(ok.any(0), np.where(ok, vals, 0.0).sum(0) / np.maximum(ok.sum(0), 1), np.nan)
    observed = est[I] - est[J]
    sizes = np.array([z.shape[1] for z in units])
    offsets = np.r_[0, np.cumsum(sizes)]
    observed_ok = ~np.isnan(observed)
    # Ord: per SEG, the pairs whose two metrics leave out the same images share one SwapOrd kernel (a group
    # per pattern of left-out images); the others go through the statistic row by row
    kernels = [_swap_kernels(structures[u], zu, I, J, observed_ok, mm.policy) if stat == "ord"
               else ([], np.ones(len(I), bool)) for u, zu in enumerate(units)]

    def seg_values(u: int, z: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """(2, k, len(cols)): SEG u's value for rows A and B of the tests ``cols``."""
        zu = units[u]
        bits = z[:, offsets[u]:offsets[u + 1]] > 0.5                             # (k, n)
        k, P = bits.shape[0], cols.size
        v = np.full((2, k, P), np.nan)
        where = np.full(len(I), -1)
        where[cols] = np.arange(P)
        groups, slow = kernels[u]
        for members, which, flipped, kernel in groups:
            on = where[members] >= 0
            if on.any():
                need = np.zeros(kernel.n_pairs, bool)
                need[which[on]] = True
                res = kernel(bits, need)                                          # (2, k, unordered pairs)
                m, w, f = members[on], which[on], flipped[on]
                v[:, :, where[m[~f]]] = res[:, :, w[~f]]
                v[:, :, where[m[f]]] = res[::-1][:, :, w[f]]
        rest = cols[slow[cols]]
        if rest.size:
            n = zu.shape[1]
            za, zb = zu[I[rest]][:, None, :], zu[J[rest]][:, None, :]          # (p, 1, n)
            rows = np.concatenate([np.where(bits, zb, za), np.where(bits, za, zb)]).reshape(2 * rest.size * k, n)
            step = max(1, CHUNK_ELEMENTS // max(1, n * nodes[u]))
            w = np.concatenate([statistic(u, rows[s:s + step]) for s in range(0, rows.shape[0], step)])
            v[:, :, where[rest]] = w.reshape(2, rest.size, k).transpose(0, 2, 1)
        return v

    # SEGs in a fixed number of interleaved shares (largest first), each summed on one thread: the sums do
    # not depend on the number of threads
    by_size = np.argsort([-st.node_counts.size * z.shape[1] for st, z in zip(structures, units)], kind="stable")
    shares = [np.sort(by_size[s::8]) for s in range(min(8, len(units)))]

    def share_sums(share: np.ndarray, z: np.ndarray, cols: np.ndarray) -> np.ndarray:
        out = np.zeros((2, 2, z.shape[0], cols.size))                              # sums, counts
        for u in share:
            v = seg_values(u, z, cols)
            good = ~np.isnan(v)
            out[0] += np.where(good, v, 0.0)
            out[1] += good
        return out

    def diffs(z: np.ndarray, cols: np.ndarray) -> np.ndarray:
        with one_blas_thread():
            total = sum(thread_map(lambda share: share_sums(share, z, cols), shares))
        return mean_diffs(total[0, 0], total[1, 0], total[0, 1], total[1, 1])

    p, used = sampled_swap_pvalues(diffs, observed, int(offsets[-1]), settings, alternative)
    pm = np.full((M, M), np.nan)
    nm = np.zeros((M, M), dtype=np.int64)
    pm[I, J] = p
    nm[I, J] = used
    diff = est[:, None] - est[None, :]
    np.fill_diagonal(diff, np.nan)
    return PairwisePermutation(est, diff, pm, nm, alternative, False, settings)


def _swap_kernels(st, units: np.ndarray, I: np.ndarray, J: np.ndarray, tested: np.ndarray, policy):
    """The SwapOrd kernels of one SEG and which pairs they score.

    Returns ``(groups, slow)``: per pattern of left-out images that both metrics of some tested pairs share,
    ``(pairs, flipped, kernel)``: the tested pairs (indices into I, J), whether each is the reverse of
    the kernel's unordered pair (a reversed pair's rows A and B are the other's rows B and A), and a
    :class:`~ts2viz.metametrics.swap_ord.SwapOrd` of the unordered pairs; ``slow`` marks the pairs whose two
    metrics leave out different images (scored row by row).
    """
    nan = np.isnan(units)                                                        # (M, n)
    same = (nan[I] == nan[J]).all(1)
    groups = []
    todo = np.flatnonzero(same & tested)
    if todo.size:
        lo, hi = np.minimum(I[todo], J[todo]), np.maximum(I[todo], J[todo])
        keys = np.unique(nan[lo], axis=0, return_inverse=True)[1].ravel()
        for g in range(keys.max() + 1):
            members = todo[keys == g]
            pair_lo, pair_hi = lo[keys == g], hi[keys == g]
            uniq, which = np.unique(pair_lo * len(units) + pair_hi, return_inverse=True)
            ua, ub = uniq // len(units), uniq % len(units)
            groups.append((members, which.ravel(), I[members] != ua[which.ravel()],
                           SwapOrd(st, units[ua], units[ub], policy)))
    return groups, ~same


__all__ = ["cell_unit_values", "leaderboard_clusters", "pairwise_permutation", "perm_both", "perm_both_pairs",
           "seg_sds", "seg_statistic", "standardise"]
