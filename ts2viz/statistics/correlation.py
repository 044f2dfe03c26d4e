"""Correlation coefficients in pure numpy (no scipy at run time), equal to scipy.stats' defaults.

- :func:`rankdata`: average ranks (``scipy.stats.rankdata``);
- :func:`pearson`: Pearson's r (``scipy.stats.pearsonr``), and :func:`pearson_rows` of many rows with one vector,
  the kernel every Pearson-based statistic of ts2viz uses;
- :func:`spearman`: Spearman's rho, Pearson's r of average ranks (``scipy.stats.spearmanr``);
- :func:`kendall`: Kendall's tau-b (``scipy.stats.kendalltau``, its default) or tau-c
  (``variant='c'``, Stuart's tau-c), O(n log n) by counting inversions with a vectorised bottom-up
  merge, so 100,000 items take milliseconds.

NaN policy (all three): a pair with NaN on either side is left out; fewer than two pairs left, or
a side without variation, gives NaN (as scipy, which warns).
"""
from __future__ import annotations

import numpy as np


def rankdata(x) -> np.ndarray:
    """Average ranks of the values of ``x`` along its last axis (1-based; ties share the mean of their positions).

    Parameters
    ----------
    x : array_like
        Values to rank: one vector, or rows (any shape; ranked along the last axis).

    Returns
    -------
    numpy.ndarray
        float64 array of the same shape: the rank of each value, as ``scipy.stats.rankdata`` with its
        default ``method='average'`` (and ``axis=-1``).

    Notes
    -----
    NaN policy: NaN is not handled (callers drop NaNs first): NaNs sort last and get the highest ranks.

    Examples
    --------
    >>> from ts2viz.statistics.correlation import rankdata
    >>> rankdata([3, 1, 3, 2]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    >>> rankdata([[3, 1, 3, 2], [1, 1, 1, 0]]).tolist()
    [[3.5, 1.0, 3.5, 2.0], [3.0, 3.0, 3.0, 1.0]]
    """
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, axis=-1, kind="stable")
    srt = np.take_along_axis(x, order, axis=-1)
    n = x.shape[-1] if x.ndim else 0
    if x.size == 0:
        return srt
    new = np.ones(srt.shape, bool)
    new[..., 1:] = srt[..., 1:] != srt[..., :-1]
    last = np.ones(srt.shape, bool)
    last[..., :-1] = new[..., 1:]
    pos = np.broadcast_to(np.arange(n), srt.shape)
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    end = np.minimum.accumulate(np.where(last, pos, n - 1)[..., ::-1], axis=-1)[..., ::-1]
    ranks = np.empty_like(srt)
    np.put_along_axis(ranks, order, (start + end) / 2.0 + 1.0, axis=-1)
    return ranks


def _pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in length ({x.size} vs {y.size})")
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]


def pearson_rows(x, y, *, tol: float = 0.0) -> np.ndarray:
    """Pearson's r of every row of ``x`` with the vector ``y``: the one Pearson kernel of ts2viz.

    Parameters
    ----------
    x : array_like
        (..., n) rows of values, NaN-free.
    y : array_like
        (n,) values, NaN-free.
    tol : float, default 0.0
        A side counts as constant when its centred sum of squares is at most ``tol`` (by default: exactly 0).
        Callers that must not read rounding noise as variation pass a cutoff (e.g. ``1e-24 * n**2``).

    Returns
    -------
    numpy.ndarray
        (...,) r of each row, clipped to [-1, 1]; NaN where a row or ``y`` is constant (see ``tol``).

    See Also
    --------
    pearson : of two vectors with NaN pairs left out.

    Notes
    -----
    r = sum((x - mean x)(y - mean y)) / sqrt(sum((x - mean x)**2) sum((y - mean y)**2)), with elementwise
    sums (not a BLAS dot: a 1-D dot can stall on a busy machine's BLAS threads, and a row's sum does not
    depend on the other rows). Rounding can put |r| a hair above 1; it is clipped.

    NaN policy: NaN is not handled (callers drop NaNs first); fewer than two values give a constant side.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.correlation import pearson_rows
    >>> rows = np.array([[1.0, 2, 3, 4, 5], [5, 4, 3, 2, 1], [2, 2, 2, 2, 2]])
    >>> pearson_rows(rows, [2, 1, 4, 3, 5]).round(4).tolist()
    [0.8, -0.8, nan]
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    xc = x - x.mean(-1, keepdims=True)
    yc = y - y.mean()
    vx = (xc * xc).sum(-1)
    vy = float((yc * yc).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(-1) / np.sqrt(vx * vy)
    return np.where((vx > tol) & (vy > tol), np.clip(r, -1.0, 1.0), np.nan)


def pearson(x, y) -> float:
    """Pearson's correlation coefficient r of the non-NaN pairs.

    Parameters
    ----------
    x, y : array_like
        Paired values, same length (flattened to 1-D).

    Returns
    -------
    float
        r in [-1, 1]; NaN if fewer than two pairs remain or a side is constant.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in length.

    See Also
    --------
    spearman, kendall

    Notes
    -----
    r = sum((x - mean x)(y - mean y)) / sqrt(sum((x - mean x)**2) sum((y - mean y)**2)), as
    ``scipy.stats.pearsonr``.

    NaN policy: a pair with NaN on either side is left out.

    Examples
    --------
    >>> from ts2viz.statistics.correlation import pearson
    >>> round(pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]), 4)
    0.8
    """
    x, y = _pairs(x, y)
    return float(pearson_rows(x, y)) if x.size >= 2 else float("nan")


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's r of the average ranks of the non-NaN pairs.

    Parameters
    ----------
    x, y : array_like
        Paired values, same length (flattened to 1-D).

    Returns
    -------
    float
        rho in [-1, 1]; NaN if fewer than two pairs remain or a side is constant.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in length.

    See Also
    --------
    pearson, kendall
    ts2viz.metametrics.definitions.spearman_ord : TS2's Ord (0, not NaN, for a constant side).

    Notes
    -----
    rho = r(rank(x), rank(y)), ranks averaged over ties, as ``scipy.stats.spearmanr``.

    NaN policy: a pair with NaN on either side is left out.

    Examples
    --------
    >>> from ts2viz.statistics.correlation import spearman
    >>> round(spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]), 4)
    0.8
    >>> spearman([1, 2, 3], [5, 5, 5])
    nan
    """
    x, y = _pairs(x, y)
    return float(pearson_rows(rankdata(x), rankdata(y))) if x.size >= 2 else float("nan")


def _dense(v: np.ndarray) -> np.ndarray:
    return np.unique(v, return_inverse=True)[1].astype(np.int64)


def _tie_pairs(codes: np.ndarray) -> float:
    c = np.bincount(codes).astype(np.float64) if codes.size and codes.max() < 4 * codes.size + 1024 \
        else np.unique(codes, return_counts=True)[1].astype(np.float64)
    return float((c * (c - 1) / 2).sum())


#: below this many distinct values :func:`count_inversions` counts value by value (O(n V))
FEW_VALUES = 64


def _inversions_few_values(a: np.ndarray, n_values: int) -> int:
    """Inversions of ``a`` (integers 0 .. n_values - 1), counted value by value.

    For each value v, every element equal to v counts the elements above v before it = its position -
    elements <= v before it.
    """
    n = a.size
    pos = np.arange(n, dtype=np.int64)
    total = 0
    below = np.zeros(n, dtype=np.int64)          # elements < v up to each position (inclusive)
    for v in range(n_values):
        at = a == v
        same_before = np.cumsum(at) - 1           # elements == v before each position
        total += int((pos[at] - below[at] - same_before[at]).sum())
        below += np.cumsum(at)
    return total


def count_inversions(a: np.ndarray) -> int:
    """Number of pairs i < j with a[i] > a[j] (strictly), for an integer array; O(n log n).

    Parameters
    ----------
    a : array_like of int
        The sequence (any integers).

    Returns
    -------
    int
        The number of inversions; 0 for fewer than two elements.

    Notes
    -----
    Bottom-up merge sort, vectorised per level: blocks of width w are sorted; for each pair of
    neighbouring blocks, global ``searchsorted`` calls over row-offset keys count, for every element
    of the right block, the left block's elements above it, and give every element its place in the
    merged block (a scatter, no sort). Arrays of fewer than :data:`FEW_VALUES` distinct non-negative
    values are counted value by value (O(n V)).

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.correlation import count_inversions
    >>> count_inversions(np.array([3, 1, 2, 0]))
    5
    """
    a = np.asarray(a, dtype=np.int64)
    n = a.size
    if n < 2:
        return 0
    if a.min() >= 0 and a.max() < FEW_VALUES:
        return _inversions_few_values(a, int(a.max()) + 1)
    size = 1 << int(np.ceil(np.log2(n)))
    big = int(a.max()) + 2                      # padding sorts last and is never above anything
    cur = np.full(size, big, dtype=np.int64)
    cur[:n] = a
    total = 0
    w = 1
    span = big + 1
    while w < size:
        nb = size // (2 * w)
        rows = cur.reshape(nb, 2 * w)
        off = (np.arange(nb, dtype=np.int64) * span)[:, None]
        lk = (rows[:, :w] + off).ravel()        # sorted globally: rows are sorted, offsets increase
        rk = (rows[:, w:] + off).ravel()
        start = np.repeat(np.arange(nb, dtype=np.int64) * w, w)
        # per right element: left elements <= it; per left element: right elements < it
        le = np.searchsorted(lk, rk, side="right") - start
        lt = np.searchsorted(rk, lk, side="left") - start
        total += int(w * nb * w - le.sum())
        # merge by scatter: each element's place in its merged block is its own index plus the count
        # of the other half before it (ties: left first, as a stable merge)
        idx = np.tile(np.arange(w, dtype=np.int64), nb)
        base = np.repeat(np.arange(nb, dtype=np.int64) * 2 * w, w)
        merged = np.empty_like(cur)
        merged[base + idx + lt] = rows[:, :w].ravel()
        merged[base + idx + le] = rows[:, w:].ravel()
        cur = merged
        w *= 2
    return total


def _taus(cx: np.ndarray, cy: np.ndarray, vx: int, vy: int, disc: float) -> tuple[float, float]:
    """Tau-b and tau-c from dense codes (``vx``, ``vy`` distinct values) and the discordant pair count.

    Concordant = all pairs - pairs tied in x - tied in y + tied in both - discordant.
    """
    n = cx.size
    n0 = n * (n - 1) / 2
    n1, n2 = _tie_pairs(cx), _tie_pairs(cy)
    n3 = _tie_pairs(cx * vy + cy)
    s = (n0 - n1 - n2 + n3 - disc) - disc
    den = np.sqrt((n0 - n1) * (n0 - n2))
    tau_b = float("nan") if den == 0 else float(np.clip(s / den, -1.0, 1.0))
    m = min(vx, vy)
    tau_c = float("nan") if m < 2 else float(np.clip(2.0 * s / (n * n * (m - 1) / m), -1.0, 1.0))
    return tau_b, tau_c


def kendall_both(x, y) -> tuple[float, float]:
    """Kendall's tau-b and tau-c of the non-NaN pairs, from one count of the pairs.

    Parameters
    ----------
    x, y : array_like
        Paired values, same length (flattened to 1-D).

    Returns
    -------
    tuple of float
        ``(tau_b, tau_c)``, each NaN where undefined (see :func:`kendall`).

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in length.

    Notes
    -----
    NaN policy: a pair with NaN on either side is left out.
    """
    x, y = _pairs(x, y)
    n = x.size
    if n < 2:
        return float("nan"), float("nan")
    cx, cy = _dense(x), _dense(y)
    vx, vy = int(cx.max()) + 1, int(cy.max()) + 1
    # sort by one side (ties broken by the other, so they are never inversions) and count the
    # inversions of the other; the side with fewer distinct values is counted (cheaper)
    if vy <= vx:
        disc = count_inversions(cy[np.lexsort((cy, cx))])
    else:
        disc = count_inversions(cx[np.lexsort((cx, cy))])
    return _taus(cx, cy, vx, vy, disc)


def kendall(x, y, variant: str = "b") -> float:
    """Kendall's tau of the non-NaN pairs: tau-b (scipy's default) or tau-c.

    Parameters
    ----------
    x, y : array_like
        Paired values, same length (flattened to 1-D).
    variant : {'b', 'c'}, default 'b'
        Which tau: ``'b'`` (tau-b, ``scipy.stats.kendalltau``'s default) or ``'c'`` (Stuart's tau-c).

    Returns
    -------
    float
        tau in [-1, 1]; NaN if undefined (fewer than two pairs, a constant side).

    Raises
    ------
    ValueError
        If ``variant`` is not ``'b'`` or ``'c'``, or ``x`` and ``y`` differ in length.

    See Also
    --------
    kendall_both : both variants from one count.
    pearson, spearman

    Notes
    -----
    tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2)) and tau_c = 2 (C - D) / (n**2 (m - 1) / m), with C and D
    the concordant and discordant pairs, n0 = n(n-1)/2, n1 and n2 the pairs tied in x and in y, and m
    the smaller number of distinct values. The discordant pairs are counted as inversions
    (:func:`count_inversions`), so 100,000 pairs take milliseconds.

    NaN policy: a pair with NaN on either side is left out.

    Examples
    --------
    scipy's own example gives the same value (-0.4714):

    >>> from ts2viz.statistics.correlation import kendall
    >>> round(kendall([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]), 4)
    -0.4714
    >>> round(kendall([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], variant="c"), 4)
    0.6
    """
    if variant not in ("b", "c"):
        raise ValueError(f"Kendall variant must be 'b' or 'c', not {variant!r}")
    b, c = kendall_both(x, y)
    return b if variant == "b" else c


# -- one sort per variable: ranks, dense codes and Kendall from a known order -----------------------------

def ranks_codes(v: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks and dense codes of ``v`` given its order; O(n).

    Parameters
    ----------
    v : numpy.ndarray
        1-D values (no NaN).
    order : numpy.ndarray
        ``argsort(v)``.

    Returns
    -------
    ranks : numpy.ndarray
        float64 average ranks (1-based, ties share the mean position).
    codes : numpy.ndarray
        int64 dense codes 0 .. V-1 (V distinct values, in increasing order of value).

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.correlation import ranks_codes
    >>> v = np.array([0.3, 0.1, 0.3])
    >>> ranks, codes = ranks_codes(v, np.argsort(v))
    >>> ranks.tolist(), codes.tolist()
    ([2.5, 1.0, 2.5], [1, 0, 1])
    """
    vs = v[order]
    n = vs.size
    if n == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    start = np.r_[True, vs[1:] != vs[:-1]]
    gid = np.cumsum(start) - 1
    starts = np.flatnonzero(start)
    ends = np.r_[starts[1:], n]
    ranks = np.empty(n)
    ranks[order] = ((starts + ends + 1) / 2.0)[gid]
    codes = np.empty(n, dtype=np.int64)
    codes[order] = gid
    return ranks, codes


def subset_order(order: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``argsort(v[mask])`` from ``order = argsort(v)`` (stable), without sorting again.

    Parameters
    ----------
    order : numpy.ndarray
        A stable ``argsort`` of the full vector.
    mask : numpy.ndarray of bool
        Which elements to keep.

    Returns
    -------
    numpy.ndarray
        int64 indices into ``v[mask]`` that sort it (ties in the order of ``order``).
    """
    position = np.cumsum(mask) - 1
    return position[order[mask[order]]]


def kendall_from_codes(cx: np.ndarray, cy: np.ndarray, order_x: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b and tau-c from dense codes and an order of x (as :func:`kendall_both`).

    Parameters
    ----------
    cx, cy : numpy.ndarray
        Dense int64 codes of x and y (:func:`ranks_codes`), no NaN pairs.
    order_x : numpy.ndarray
        An ``argsort`` of x.

    Returns
    -------
    tuple of float
        ``(tau_b, tau_c)``; NaN where undefined (fewer than two pairs, a constant side).
    """
    n = cx.size
    if n < 2:
        return float("nan"), float("nan")
    vx, vy = int(cx.max()) + 1, int(cy.max()) + 1
    key = (cx * vy + cy)[order_x]
    within = order_x[np.argsort(key, kind="stable")]       # nearly sorted already: cheap
    disc = count_inversions(cy[within])
    return _taus(cx, cy, vx, vy, disc)
