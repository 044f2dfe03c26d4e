"""Scalar meta-metric statistics on one walk or one pair of node populations.

Pure functions on numpy arrays, in the style of ``scipy.stats``: each documents its NaN policy and
returns a float or a small result object. The vectorised engine in :mod:`ts2viz.metametrics` computes
the same quantities for every walk at once; these are the readable definitions (and what the app uses
to annotate one walk or one pair).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: A side of a rank correlation counts as constant (correlation 0, the TS2 convention) when its rank
#: variance is at most this times n**3; exact ties give 0 up to rounding. One cutoff for the scalar
#: definitions here and the vectorised engine in :mod:`ts2viz.metametrics`.
CONSTANT_RANK_TOL = 1e-9


def _clean_pairs(errors, scores) -> tuple[np.ndarray, np.ndarray]:
    e = np.asarray(errors, dtype=np.float64).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if e.shape != s.shape:
        raise ValueError(f"errors and scores differ in length ({e.size} vs {s.size})")
    ok = ~np.isnan(s) & ~np.isnan(e)
    return e[ok], s[ok]


def rankdata(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based; ties share the mean of their positions)."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    n = xs.size
    if n == 0:
        return xs
    start = np.r_[True, xs[1:] != xs[:-1]]
    gid = np.cumsum(start) - 1
    starts = np.flatnonzero(start)
    ends = np.r_[starts[1:], n]
    avg = (starts + ends + 1) / 2.0
    out = np.empty(n)
    out[order] = avg[gid]
    return out


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    x = x - x.mean()
    y = y - y.mean()
    vx, vy = float(x @ x), float(y @ y)
    tol = CONSTANT_RANK_TOL * max(x.size, 1) ** 3
    if vx <= tol or vy <= tol:
        return 0.0
    return float(np.clip((x @ y) / np.sqrt(vx * vy), -1.0, 1.0))


def spearman_ord(errors, scores) -> float:
    """Ordering score of one walk: minus Spearman's rho between error count and score.

    Parameters
    ----------
    errors : error count of each image in the walk (repeats allowed: an image listed twice counts twice).
    scores : the metric's score of each image, oriented so that higher means more faithful.

    Returns
    -------
    float in [-1, 1]; 1 when scores fall strictly as errors rise. 0 when either side is constant
    (the TS2 convention for an undefined correlation). NaN when fewer than two scored images remain.

    NaN policy: pairs whose score is NaN are dropped.
    """
    e, s = _clean_pairs(errors, scores)
    if e.size < 2:
        return float("nan")
    return -_pearson(rankdata(e), rankdata(s))


def kendall_ord(errors, scores) -> float:
    """Like :func:`spearman_ord` with Kendall's tau-b in place of Spearman's rho. NaN scores dropped."""
    e, s = _clean_pairs(errors, scores)
    n = e.size
    if n < 2:
        return float("nan")
    de = np.sign(e[:, None] - e[None, :])
    ds = np.sign(s[:, None] - s[None, :])
    iu = np.triu_indices(n, 1)
    p = float((de * ds)[iu].sum())
    n0 = n * (n - 1) / 2
    t1 = float((de[iu] == 0).sum())
    t2 = float((ds[iu] == 0).sum())
    den = np.sqrt((n0 - t1) * (n0 - t2))
    return 0.0 if den == 0 else float(np.clip(-p / den, -1, 1))


@dataclass(frozen=True)
class KSResult:
    """Two-sample Kolmogorov-Smirnov statistic and where it is attained.

    ``statistic`` = sup_x |F_a(x) - F_b(x)|; ``location`` = the smallest score x at which the sup is
    attained; ``cdf_a``/``cdf_b`` = the two empirical CDFs at ``location``.
    """

    statistic: float
    location: float
    cdf_a: float
    cdf_b: float


def ks_separation(a, b) -> KSResult:
    """Two-sample KS statistic between two score populations (NaNs dropped from each).

    Returns a :class:`KSResult`; all fields NaN when either population is empty after dropping NaNs.
    The statistic is in [0, 1]: 0 for identical empirical distributions, 1 for disjoint ones.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    a = np.sort(a[~np.isnan(a)])
    b = np.sort(b[~np.isnan(b)])
    if a.size == 0 or b.size == 0:
        nan = float("nan")
        return KSResult(nan, nan, nan, nan)
    grid = np.union1d(a, b)
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    d = np.abs(fa - fb)
    i = int(np.argmax(d))
    return KSResult(float(d[i]), float(grid[i]), float(fa[i]), float(fb[i]))


def mean_gap(a, b) -> float:
    """Mean score of population ``a`` minus that of ``b`` (NaNs dropped); NaN if either is empty."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        return float("nan")
    return float(a.mean() - b.mean())


def node_means(node_scores) -> dict[str, float]:
    """Mean score of each node (NaNs dropped; NaN for a node without a scored image).

    ``node_scores`` maps a node label to its images' scores. The one definition of a node mean, used
    by the app's graph colours, the walk figure and the upload comparison.
    """
    out = {}
    for label, v in node_scores.items():
        v = np.asarray(v, dtype=np.float64)
        v = v[~np.isnan(v)]
        out[label] = float(v.mean()) if v.size else float("nan")
    return out
