"""Two-level bootstrap: how much of a metric's uncertainty comes from which images happened to be in a node.

The one-level bootstrap (:func:`ts2viz.metametrics.intervals.bootstrap`) resamples SEGs and keeps each SEG's
per-SEG values fixed. The two-level bootstrap resamples SEGs (within partitions, as the one-level one),
then, inside every drawn SEG, the images of each node with replacement (a node keeps its size; its
images may repeat), and recomputes the SEG's meta-metrics on the resampled images with the leaderboard's
own code (:func:`ts2viz.metametrics.walks.seg_stats`, under the results' policy). The difference between the
two intervals' widths is the share of the uncertainty due to the images within nodes.

Cost: recomputing meta-metrics for every (resample, SEG) is too slow, so each SEG gets a pool of
``settings.image_resamples`` image resamples (computed once, every metric at once), and every draw of a
SEG in an outer resample picks one of its pool at random (independently for repeated draws of one SEG).
With a pool of P the inner distribution is the empirical one over P draws; P = 20-50 is enough for
interval widths (the outer level has 10,000 resamples). Pure numpy.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import InputError
from ..statistics.bootstrap import BootstrapSettings, quantiles
from .intervals import LeaderboardBootstrap, averaged_segs
from .results import MetaMetrics
from .walks import STATS, seg_stats

#: outer resamples handled at once (bounds the (resamples x SEGs x columns) gather)
CHUNK = 256


def node_resample_index(node_of: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` image resamples of one SEG, each node resampled with replacement within itself.

    Parameters
    ----------
    node_of : array_like of int
        The node of each image (images in node order).
    rng : numpy.random.Generator
        The generator.
    n : int
        Number of resamples.

    Returns
    -------
    numpy.ndarray
        int64 array (n, images): position i draws, with replacement, an image of the node of image i
        (so every node keeps its positions and size).

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.metametrics.two_level import node_resample_index
    >>> idx = node_resample_index([0, 0, 1, 1, 1], np.random.default_rng(0), 2)
    >>> bool((idx[:, :2] < 2).all() and (idx[:, 2:] >= 2).all())
    True
    """
    node_of = np.asarray(node_of)
    out = np.empty((n, node_of.size), dtype=np.int64)
    for node in np.unique(node_of):
        pos = np.flatnonzero(node_of == node)
        out[:, pos] = pos[rng.integers(0, pos.size, size=(n, pos.size))]
    return out


def image_pools(mm: MetaMetrics, scores, n: int, seed: int,
                progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Per SEG of ``mm``, ``n`` image resamples' SEG-level statistics.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    scores : Scores
        The scores ``mm`` was computed from.
    n : int
        Image resamples per SEG (the pool size).
    seed : int
        The draws of SEG ``k`` come from ``default_rng([seed, k])`` (independent of the metrics).
    progress : callable, optional
        Called as ``progress(done, total)`` after each SEG.

    Returns
    -------
    numpy.ndarray
        (SEGs, n, stats x metrics), the columns stat-major (:data:`~ts2viz.metametrics.walks.STATS` order) as
        in :func:`ts2viz.metametrics.intervals.bootstrap`.
    """
    M = len(mm.metrics)
    out = np.full((len(mm.seg_ids), n, len(STATS) * M), np.nan)
    for k, sid in enumerate(mm.seg_ids):
        st = mm.walk_stats(sid)[0]
        x = scores.aligned(st.file_names, mm.metrics).T                           # (M, images)
        idx = node_resample_index(st.node_of, np.random.default_rng([seed, k]), n)  # (n, images)
        rows = x[:, idx].transpose(1, 0, 2).reshape(n * M, -1)                     # (n*M, images), draw-major
        res = seg_stats(st, rows, policy=mm.policy)
        out[k] = np.concatenate([res[s].reshape(n, M) for s in STATS], axis=1)
        if progress is not None:
            progress(k + 1, len(mm.seg_ids))
    return out


def two_level_bootstrap(mm: MetaMetrics, scores, settings: BootstrapSettings,
                        progress: Callable[[int, int], None] | None = None) -> LeaderboardBootstrap:
    """Two-level percentile bootstrap of every leaderboard cell (see the module docstring).

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    scores : Scores
        The :class:`ts2viz.scores.Scores` they were computed from.
    settings : BootstrapSettings
        With ``image_resamples`` > 0 (the pool size per SEG).
    progress : callable, optional
        Called as ``progress(done, total)`` after each SEG's pool.

    Returns
    -------
    LeaderboardBootstrap
        So every function taking ``boot=`` accepts it: ``estimate`` is the leaderboard value (the
        original images), ``resampled``/``low``/``high`` the two-level distribution and its percentile
        interval.

    Raises
    ------
    InputError
        If ``settings.image_resamples`` is 0.

    Notes
    -----
    NaN policy: as the one-level bootstrap (NaN per-SEG values skipped in every mean).
    """
    if settings.image_resamples < 1:
        raise InputError("the two-level bootstrap needs image_resamples >= 1 (the pool of image resamples per SEG)")
    groups = averaged_segs(mm)
    names = list(groups)
    M, C = len(mm.metrics), len(STATS) * len(mm.metrics)
    P = settings.image_resamples
    pools = image_pools(mm, scores, P, settings.seed, progress)                  # (S, P, C)
    B = settings.n_resamples
    rng = np.random.default_rng(settings.seed)
    # draws per partition: which SEG (uniform over the partition's averaged SEGs) and which pool entry
    parts = [(g, idx) for g, idx in groups.items() if g != "avg"]
    draws = [(idx[rng.integers(0, idx.size, size=(B, idx.size))], rng.integers(0, P, size=(B, idx.size)))
             for _, idx in parts]
    sums = np.zeros((len(names), C, B))
    cnts = np.zeros((len(names), C, B))
    for b0 in range(0, B, CHUNK):
        b1 = min(B, b0 + CHUNK)
        for k, (segs, pick) in enumerate(draws):
            v = pools[segs[b0:b1], pick[b0:b1]]                                   # (chunk, n_k, C)
            ok = ~np.isnan(v)
            sums[k + 1, :, b0:b1] = np.where(ok, v, 0.0).sum(1).T
            cnts[k + 1, :, b0:b1] = ok.sum(1).T
    sums[0], cnts[0] = sums[1:].sum(0), cnts[1:].sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = np.where(cnts > 0, sums / np.maximum(cnts, 1), np.nan)              # (G, C, B)
    res = res.reshape(len(names) * len(STATS), M, B)
    av = mm.averages()
    cells = tuple(f"{s}_{g}" for g in names for s in STATS)
    est = np.array([av[c] for c in cells])
    alpha = 1.0 - settings.confidence
    low, high = quantiles(res, [alpha / 2, 1 - alpha / 2])
    nan = np.isnan(est)
    low[nan] = high[nan] = np.nan
    frozen = []
    for a in (est, low, high, res):
        a = np.asarray(a, dtype=np.float64)
        a.setflags(write=False)
        frozen.append(a)
    sizes = tuple((g, int(idx.size)) for g, idx in groups.items())
    return LeaderboardBootstrap(settings, mm.mode, tuple(mm.metrics), cells,
                                tuple(int(mm.seg_ids[i]) for i in groups["avg"]), sizes, *frozen)
