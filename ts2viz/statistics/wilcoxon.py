"""The Wilcoxon signed-rank test and Holm's step-down correction, vectorised, in pure numpy.

:func:`wilcoxon` matches ``scipy.stats.wilcoxon``'s defaults on every 1-D slice at once (the leaderboard's
paired tests, :mod:`ts2viz.metametrics.comparison`); :func:`holm` adjusts a family of p-values.
Only numpy is imported (no scipy, torch or gradio).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

# -- Wilcoxon signed-rank test --------------------------------------------------------------------

@dataclass(frozen=True, eq=False)    # holds arrays: compared by identity
class WilcoxonResult:
    """Result of :func:`wilcoxon`; arrays of the broadcast leading shape.

    Attributes
    ----------
    statistic : numpy.ndarray
        min(R+, R-), the smaller of the signed rank sums (as scipy's two-sided result).
    pvalue : numpy.ndarray
        Two-sided p-value.
    n : numpy.ndarray
        Pairs left after dropping NaN pairs (zeros included).
    method : numpy.ndarray
        Per test, ``"exact"``, ``"permutation"`` (exact enumeration of sign flips) or ``"asymptotic"``.
    """

    statistic: np.ndarray
    pvalue: np.ndarray
    n: np.ndarray
    method: np.ndarray


#: scipy's method='auto' uses the normal approximation above this many pairs
EXACT_MAX_N = 50
#: with ties or zeros, scipy enumerates all 2**n sign flips up to this many pairs
PERMUTATION_MAX_N = 13


@functools.lru_cache(maxsize=None)
def _signed_rank_tails(n: int) -> tuple[np.ndarray, np.ndarray]:
    """P(R+ <= k) and P(R+ >= k), k = 0 .. n(n+1)/2, for R+ the sum of a random subset of 1..n.

    Counts of subsets per sum are integers below 2**53 for n <= 50, so the probabilities (multiples
    of 2**-n) and their partial sums are exact in float64.
    """
    c = np.zeros(n * (n + 1) // 2 + 1)
    c[0] = 1.0
    top = 0
    for k in range(1, n + 1):
        c[k:top + k + 1] += c[:top + 1].copy()
        top += k
    p = c / 2.0 ** n
    return np.cumsum(p), np.cumsum(p[::-1])[::-1]


def _subset_sum_tails(doubled_ranks: np.ndarray, observed2: int) -> tuple[float, float]:
    """Fractions of the 2**k sign assignments whose R+ (in half-units) is <= and >= observed."""
    total = int(doubled_ranks.sum())
    c = np.zeros(total + 1)
    c[0] = 1.0
    top = 0
    for r in doubled_ranks.astype(np.int64):
        c[r:top + r + 1] += c[:top + 1].copy()
        top += int(r)
    p = c / 2.0 ** doubled_ranks.size
    return float(p[:observed2 + 1].sum()), float(p[observed2:].sum())


def _two_sided_normal(z: np.ndarray) -> np.ndarray:
    """2 * Phi(-|z|), with scipy.special.ndtr's split between erf and erfc."""
    out = np.full(z.shape, np.nan)
    for i, zi in np.ndenumerate(z):
        if not np.isnan(zi):
            x = -abs(float(zi)) / math.sqrt(2.0)
            y = 0.5 + 0.5 * math.erf(x) if abs(x) < math.sqrt(0.5) else 0.5 * math.erfc(-x)
            out[i] = 2.0 * y
    return out


def wilcoxon(x, y) -> WilcoxonResult:
    """Wilcoxon signed-rank test of paired samples, vectorised over leading axes.

    Matches ``scipy.stats.wilcoxon(x, y)`` with its defaults (zero_method='wilcox', correction=False,
    alternative='two-sided', method='auto') on each 1-D slice after dropping NaN pairs, i.e.
    ``scipy.stats.wilcoxon(x[ok], y[ok])``.

    Parameters
    ----------
    x, y : array_like
        Paired samples of the same (or broadcastable) shape (..., n); the test runs along the last axis.

    Returns
    -------
    WilcoxonResult
        Statistic, p-value, pair count and method, arrays of shape ``x.shape[:-1]``.

    Raises
    ------
    ValueError
        If the samples are scalars (0-D).

    See Also
    --------
    holm : adjust a family of the p-values.
    ts2viz.metametrics.comparison.compare : the test on two metrics' per-SEG values.

    Notes
    -----
    - d = x - y; zero differences are dropped from the ranks (but count in n for the choice of method);
      |d| is ranked with average ranks for ties; R+ = sum of the ranks of d > 0.
    - n > 50 (:data:`EXACT_MAX_N`): normal approximation,
      z = (R+ - m(m+1)/4) / sqrt((m(m+1)(2m+1) - sum(t**3 - t)/2) / 24), m the non-zero count, t the
      tie group sizes; p = 2 Phi(-|z|), no continuity correction.
    - n <= 50 without ties or zeros: the exact null distribution of R+,
      p = 2 min(P(R+ >= r), P(R+ <= r)), capped at 1.
    - n <= 13 (:data:`PERMUTATION_MAX_N`) with ties or zeros: the exact permutation distribution (all
      2**n sign flips of d).
    - otherwise (14 <= n <= 50 with ties or zeros): the normal approximation above.

    NaN policy: a pair with a NaN in either sample is dropped. A slice with no pair left gets NaN
    statistic and p-value; with only zero differences, p is 1 for n <= 13 and NaN above (as scipy, where
    the normal approximation divides 0 by 0; for a single zero difference, where scipy raises, p is 1).

    Examples
    --------
    The same numbers as ``scipy.stats.wilcoxon(x, y)`` (statistic 8.0, p-value 0.1953125):

    >>> from ts2viz.statistics.wilcoxon import wilcoxon
    >>> x = [12, 15, 9, 20, 17, 11, 14, 18]
    >>> y = [11, 17, 6, 16, 12, 17, 7, 10]
    >>> res = wilcoxon(x, y)
    >>> float(res.statistic), float(res.pvalue), str(res.method)
    (8.0, 0.1953125, 'exact')

    Several tests at once, one per row (the second pair has only zero differences):

    >>> res = wilcoxon([x, x], [y, x])
    >>> res.pvalue.tolist(), res.method.tolist()
    ([0.1953125, 1.0], ['exact', 'permutation'])
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    x, y = np.broadcast_arrays(x, y)
    if x.ndim == 0:
        raise ValueError("wilcoxon needs 1-D samples (or stacks of them along the last axis)")
    lead = x.shape[:-1]
    d = (x - y).reshape(math.prod(lead), x.shape[-1])
    valid = ~np.isnan(d)
    n = valid.sum(-1)
    nz = valid & (d != 0)
    count = nz.sum(-1).astype(np.float64)
    a = np.where(nz, np.abs(d), np.inf)
    order = np.argsort(a, axis=-1, kind="stable")
    srt = np.take_along_axis(a, order, axis=-1)
    # tie groups among the sorted |d| (the inf fill sits at the end and is masked below)
    T, N = srt.shape
    new = np.ones((T, N), bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    last = np.ones((T, N), bool)
    last[:, :-1] = new[:, 1:]
    pos = np.broadcast_to(np.arange(N), (T, N))
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    end = np.minimum.accumulate(np.where(last, pos, N - 1)[:, ::-1], axis=-1)[:, ::-1]
    finite = np.isfinite(srt)
    rank_sorted = (start + end) / 2.0 + 1.0
    size = (end - start + 1).astype(np.float64)
    ranks = np.empty_like(rank_sorted)
    np.put_along_axis(ranks, order, rank_sorted, axis=-1)
    positive = nz & (d > 0)
    r_plus = np.where(positive, ranks, 0.0).sum(-1)
    r_minus = np.where(nz & (d < 0), ranks, 0.0).sum(-1)
    tie_term = np.where(finite, size * size - 1.0, 0.0).sum(-1)     # = sum over groups of t^3 - t
    has_ties = (finite & (size > 1)).any(-1)
    mn = count * (count + 1.0) * 0.25
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt((count * (count + 1.0) * (2.0 * count + 1.0) - tie_term / 2.0) / 24.0)
        z = (r_plus - mn) / se
    p = _two_sided_normal(z)
    method = np.full(T, "asymptotic", dtype=object)
    small = n <= EXACT_MAX_N
    exact = small & ~has_ties & (count == n) & (n > 0)
    perm = small & ~exact & (n <= PERMUTATION_MAX_N) & (n > 0)
    for t in np.flatnonzero(exact):
        cdf, sf = _signed_rank_tails(int(count[t]))
        r = r_plus[t]
        p[t] = min(1.0, 2.0 * min(sf[int(math.floor(r))], cdf[int(math.ceil(r))]))
        method[t] = "exact"
    for t in np.flatnonzero(perm):
        less, greater = _subset_sum_tails(np.rint(2 * ranks[t][nz[t]]).astype(np.int64), int(round(2 * r_plus[t])))
        p[t] = min(1.0, 2.0 * min(less, greater))
        method[t] = "permutation"
    empty = n == 0
    p[empty] = np.nan
    stat = np.where(empty, np.nan, np.minimum(r_plus, r_minus))
    return WilcoxonResult(stat.reshape(lead), p.reshape(lead), n.reshape(lead), method.reshape(lead))


# -- multiple comparisons -----------------------------------------------------------------------------

def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (step-down, family-wise error control).

    Parameters
    ----------
    pvalues : array_like
        Raw p-values, any shape; the family is every non-NaN entry.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, of the same shape.

    Notes
    -----
    With the m p-values sorted ascending, the i-th smallest (i = 1..m) becomes
    max over j <= i of min(1, (m - j + 1) p_(j)). Ties keep their input order.

    NaN policy: NaN entries are not part of the family (m counts the others) and stay NaN.

    Examples
    --------
    >>> from ts2viz.statistics.wilcoxon import holm
    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(3).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    flat = p.ravel()
    out = np.full(flat.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(flat))
    m = ok.size
    if m:
        order = np.argsort(flat[ok], kind="stable")
        adj = np.maximum.accumulate((m - np.arange(m)) * flat[ok][order])
        out[ok[order]] = np.minimum(adj, 1.0)
    return out.reshape(p.shape)
