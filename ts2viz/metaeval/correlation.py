"""Correlation coefficients in pure numpy (no scipy at run time), equal to scipy.stats' defaults.

- :func:`pearson`: Pearson's r (``scipy.stats.pearsonr``);
- :func:`spearman`: Spearman's rho, Pearson's r of average ranks (``scipy.stats.spearmanr``);
- :func:`kendall`: Kendall's tau-b (``scipy.stats.kendalltau``, its default) or tau-c
  (``variant='c'``, Stuart's tau-c), O(n log n) by counting inversions with a vectorised bottom-up
  merge, so 100,000 items take milliseconds.

NaN policy (all three): a pair with NaN on either side is left out; fewer than two pairs left, or
a side without variation, gives NaN (as scipy, which warns).
"""
from __future__ import annotations

import numpy as np

from ..stats import rankdata


def _pairs(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y differ in length ({x.size} vs {y.size})")
    ok = ~(np.isnan(x) | np.isnan(y))
    return x[ok], y[ok]


def _pearson_clean(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2:
        return float("nan")
    x = x - x.mean()
    y = y - y.mean()
    vx, vy = float(x @ x), float(y @ y)
    if vx == 0.0 or vy == 0.0:
        return float("nan")
    return float(np.clip((x @ y) / np.sqrt(vx * vy), -1.0, 1.0))


def pearson(x, y) -> float:
    """Pearson's correlation coefficient r of the non-NaN pairs (NaN if undefined)."""
    return _pearson_clean(*_pairs(x, y))


def spearman(x, y) -> float:
    """Spearman's rho: Pearson's r of the average ranks of the non-NaN pairs (NaN if undefined)."""
    x, y = _pairs(x, y)
    return _pearson_clean(rankdata(x), rankdata(y))


def _dense(v: np.ndarray) -> np.ndarray:
    return np.unique(v, return_inverse=True)[1].astype(np.int64)


def _tie_pairs(codes: np.ndarray) -> float:
    c = np.unique(codes, return_counts=True)[1].astype(np.float64)
    return float((c * (c - 1) / 2).sum())


def count_inversions(a: np.ndarray) -> int:
    """Number of pairs i < j with a[i] > a[j] (strictly), for an integer array; O(n log n).

    Bottom-up merge sort, vectorised per level: blocks of width w are sorted; for each pair of
    neighbouring blocks, global ``searchsorted`` calls over row-offset keys count, for every element
    of the right block, the left block's elements above it, and give every element its place in the
    merged block (a scatter, no sort).
    """
    a = np.asarray(a, dtype=np.int64)
    n = a.size
    if n < 2:
        return 0
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


def kendall(x, y, variant: str = "b") -> float:
    """Kendall's tau of the non-NaN pairs: ``variant='b'`` (tau-b, scipy's default) or ``'c'``.

    tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)); tau-c = 2 (C - D) / (n^2 (m - 1) / m), with C and D the
    concordant and discordant pairs, n0 = n(n-1)/2, n1 and n2 the pairs tied in x and in y, m the
    smaller number of distinct values. NaN if undefined (fewer than 2 pairs, a constant side).
    """
    if variant not in ("b", "c"):
        raise ValueError(f"Kendall variant must be 'b' or 'c', not {variant!r}")
    x, y = _pairs(x, y)
    n = x.size
    if n < 2:
        return float("nan")
    cx, cy = _dense(x), _dense(y)
    order = np.lexsort((cy, cx))                # by x, then y: x-ties are never inversions
    disc = count_inversions(cy[order])
    n0 = n * (n - 1) / 2
    n1, n2 = _tie_pairs(cx), _tie_pairs(cy)
    n3 = _tie_pairs(cx * (int(cy.max()) + 1) + cy)
    conc = n0 - n1 - n2 + n3 - disc
    s = conc - disc
    if variant == "b":
        den = np.sqrt((n0 - n1) * (n0 - n2))
        return float("nan") if den == 0 else float(np.clip(s / den, -1.0, 1.0))
    m = min(int(cx.max()) + 1, int(cy.max()) + 1)
    if m < 2:
        return float("nan")
    return float(np.clip(2.0 * s / (n * n * (m - 1) / m), -1.0, 1.0))
