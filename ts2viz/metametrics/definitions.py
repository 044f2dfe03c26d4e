"""Scalar meta-metric statistics on one walk or one pair of node populations.

Pure functions on numpy arrays, in the style of ``scipy.stats``: each documents its NaN policy and
returns a float or a small result object. The vectorised engine in :mod:`ts2viz.metametrics` computes
the same quantities for every walk at once; these are the readable definitions (and what the app uses
to annotate one walk or one pair).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..statistics.correlation import pearson_rows, rankdata

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


def _rank_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r of two rank vectors; 0 (TS2's convention) when a side is constant.

    A side counts as constant when its rank variance is at most :data:`CONSTANT_RANK_TOL` times n**3.
    """
    r = float(pearson_rows(x, y, tol=CONSTANT_RANK_TOL * max(x.size, 1) ** 3))
    return 0.0 if np.isnan(r) else r


def spearman_ord(errors, scores) -> float:
    """Ordering score (Ord) of one walk: minus Spearman's rho between error count and score.

    Parameters
    ----------
    errors : array_like
        Error count of each image in the walk (repeats allowed: an image listed twice counts twice).
    scores : array_like
        The metric's score of each image, oriented so that higher means more faithful; same length as
        ``errors``.

    Returns
    -------
    float
        In [-1, 1]; 1 when scores fall strictly as errors rise. 0 when either side is constant (the TS2
        convention for an undefined correlation). NaN when fewer than two scored images remain.

    Raises
    ------
    ValueError
        If ``errors`` and ``scores`` differ in length.

    See Also
    --------
    kendall_ord : the same with Kendall's tau-b.
    ts2viz.metametrics.results.compute : Ord of every walk of every SEG at once.

    Notes
    -----
    Ord = -rho(rank(errors), rank(scores)), with rho Pearson's r of the average ranks
    (:func:`rankdata`). A side counts as constant when its rank variance is at most
    :data:`CONSTANT_RANK_TOL` times n**3.

    NaN policy: pairs whose score (or error count) is NaN are dropped.

    Examples
    --------
    A walk whose scores fall as errors rise, with one inversion between the two 1-error images:

    >>> from ts2viz.metametrics.definitions import spearman_ord
    >>> round(spearman_ord([0, 0, 1, 1, 2], [0.9, 0.8, 0.7, 0.75, 0.3]), 4)
    0.9487
    >>> spearman_ord([0, 1, 2], [0.9, float("nan"), 0.3])
    1.0
    """
    e, s = _clean_pairs(errors, scores)
    if e.size < 2:
        return float("nan")
    return -_rank_correlation(rankdata(e), rankdata(s))


def kendall_ord(errors, scores) -> float:
    """Ordering score of one walk with Kendall's tau-b: minus tau-b between error count and score.

    Parameters
    ----------
    errors : array_like
        Error count of each image in the walk (repeats allowed).
    scores : array_like
        The metric's score of each image, higher meaning more faithful; same length as ``errors``.

    Returns
    -------
    float
        In [-1, 1]; 0 when either side is constant; NaN when fewer than two scored images remain.

    Raises
    ------
    ValueError
        If ``errors`` and ``scores`` differ in length.

    See Also
    --------
    spearman_ord : the same with Spearman's rho (TS2's Ord).

    Notes
    -----
    -tau_b = -(C - D) / sqrt((n0 - n1)(n0 - n2)), with C and D the concordant and discordant pairs,
    n0 = n(n-1)/2 and n1, n2 the pairs tied in errors and in scores. O(n**2) pairs: meant for one walk.

    NaN policy: pairs whose score (or error count) is NaN are dropped.

    Examples
    --------
    >>> from ts2viz.metametrics.definitions import kendall_ord
    >>> round(kendall_ord([0, 0, 1, 1, 2], [0.9, 0.8, 0.7, 0.75, 0.3]), 4)
    0.8944
    """
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
    """Two-sample Kolmogorov-Smirnov statistic and where it is attained (:func:`ks_separation`).

    Attributes
    ----------
    statistic : float
        sup_x |F_a(x) - F_b(x)|, in [0, 1].
    location : float
        The smallest score x at which the supremum is attained.
    cdf_a, cdf_b : float
        The two empirical CDFs at ``location``.
    """

    statistic: float
    location: float
    cdf_a: float
    cdf_b: float


def ks_separation(a, b) -> KSResult:
    """Two-sample Kolmogorov-Smirnov statistic between two score populations (TS2's Sep of a node pair).

    Parameters
    ----------
    a, b : array_like
        The scores of the two populations (e.g. the images of two nodes), any lengths.

    Returns
    -------
    KSResult
        The statistic, in [0, 1] (0 for identical empirical distributions, 1 for disjoint ones), where it
        is attained and the two CDFs there; all fields NaN when either population is empty after dropping
        NaNs.

    Notes
    -----
    D = max over x of |F_a(x) - F_b(x)|, with F the empirical CDFs, evaluated at every observed score;
    the same statistic as ``scipy.stats.ks_2samp``.

    NaN policy: NaN scores are dropped from each population.

    Examples
    --------
    >>> from ts2viz.metametrics.definitions import ks_separation
    >>> res = ks_separation([0.9, 0.8, 0.85], [0.7, 0.82, 0.6])
    >>> round(res.statistic, 4), res.location
    (0.6667, 0.82)
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
    """Mean score of population ``a`` minus that of ``b``.

    Parameters
    ----------
    a, b : array_like
        The scores of the two populations.

    Returns
    -------
    float
        mean(a) - mean(b); NaN if either population is empty after dropping NaNs.

    Notes
    -----
    NaN policy: NaN scores are dropped from each population.

    Examples
    --------
    >>> from ts2viz.metametrics.definitions import mean_gap
    >>> round(mean_gap([0.9, 0.8, float("nan")], [0.7, 0.6]), 4)
    0.2
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        return float("nan")
    return float(a.mean() - b.mean())


def node_means(node_scores) -> dict[str, float]:
    """Mean score of each node.

    The one definition of a node mean, used by the app's graph colours, the walk figure and the upload
    comparison.

    Parameters
    ----------
    node_scores : Mapping[str, array_like]
        Node label -> its images' scores.

    Returns
    -------
    dict[str, float]
        Node label -> mean score; NaN for a node without a scored image.

    Notes
    -----
    NaN policy: NaN scores are dropped from each node.

    Examples
    --------
    >>> from ts2viz.metametrics.definitions import node_means
    >>> node_means({"0_0": [0.9, 0.7], "1_0": [float("nan")]})
    {'0_0': 0.8, '1_0': nan}
    """
    out = {}
    for label, v in node_scores.items():
        v = np.asarray(v, dtype=np.float64)
        v = v[~np.isnan(v)]
        out[label] = float(v.mean()) if v.size else float("nan")
    return out
