"""Rank correlations of bootstrap resamples of prompts: exact (re-ranked per resample) and first-order.

A bootstrap resample of prompts gives every image a weight ``w_i = c_p`` (how often its prompt ``p``
was drawn). The resample's Spearman rho and Kendall tau are those of the resampled data, i.e. of the
images repeated ``w_i`` times (copies of one image are ties of each other). With
``H_ij = 1 if x_j < x_i, 1/2 if x_j == x_i (i = j included), 0 otherwise``, image i's average rank
in the resample is ``R_i = sum_j w_j H_ij + 1/2``: linear in the counts, so a resample needs no sort,
only cumulative sums of weights in the full set's order (:func:`weighted_spearman_rows`, O(n) per
resample; what :func:`ts2viz.metaeval.humaneval.evaluate` computes exactly on small sets).

Spearman is then cubic and Kendall quadratic in the counts, too costly for every resample of a large
set (100,000 images x 10,000 resamples). There the resample's statistic is replaced by its first-order
expansion in the counts ``c`` around ``c = 1`` (the full set): ``stat(c) ~ stat + sum_p (c_p - 1) psi_p``,
with ``psi_p = d stat / d c_p`` the prompt's *influence* (the sum of its images' ``psi_i``; the
infinitesimal jackknife). :func:`spearman_influence` and :func:`kendall_influence` compute ``psi`` in
O(n log n) for every image at once; then a resample is one column of a matrix product. The remainder
is of second order (relative size ~ 1 / sqrt(prompts) of the bootstrap spread: tests measure it);
the percentile interval loses the skewness of the exact bootstrap distribution.

Why not "the full set's ranks, weighted": the weighted Pearson r of fixed ranks has a different
influence (it misses the terms by which an image moves every other image's rank), so its intervals are
wrong to first order, not only approximately (``tests/test_rank_bootstrap.py`` shows the spread).

Pure numpy.
"""
from __future__ import annotations

import numpy as np

from .correlation import ranks_codes


def _dense_codes(v: np.ndarray) -> tuple[np.ndarray, int]:
    u, inv = np.unique(v, return_inverse=True)
    return inv.astype(np.int64).ravel(), int(u.size)


def _above(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each item j: ``sum_i H_ij values_i`` = the values of items with a larger code, plus half
    those of items with the same code (j itself included)."""
    gs = np.bincount(codes, weights=values)
    after = gs.sum() - np.cumsum(gs)
    return after[codes] + gs[codes] / 2.0


def spearman_influence(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Spearman's rho of NaN-free ``x``, ``y`` (n,) and each item's influence ``psi_i = d rho / d w_i`` at
    unit weights (weights: copies of the item, ties among themselves; see the module docstring).

    With centred ranks ``a = R - (n + 1) / 2``, ``C_uv = sum a^u a^v`` and ``U^x_j = sum_i H^x_ij a^y_i``
    (``V^x`` likewise with ``a^x``)::

        psi_j = (a^x_j a^y_j + U^x_j + U^y_j) / sqrt(C_xx C_yy)
                - rho / 2 ((a^x_j^2 + 2 V^x_j) / C_xx + (a^y_j^2 + 2 V^y_j) / C_yy)

    The psi sum to 0 (rho does not change when every weight is scaled). Returns (NaN, NaNs) when rho
    is undefined.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    n = x.size
    if n < 2:
        return float("nan"), np.full(n, np.nan)
    rx, cx = ranks_codes(x, np.argsort(x, kind="stable"))
    ry, cy = ranks_codes(y, np.argsort(y, kind="stable"))
    ax, ay = rx - (n + 1) / 2.0, ry - (n + 1) / 2.0
    cxx, cyy, cxy = float((ax * ax).sum()), float((ay * ay).sum()), float((ax * ay).sum())
    if cxx <= 0 or cyy <= 0:
        return float("nan"), np.full(n, np.nan)
    den = np.sqrt(cxx * cyy)
    rho = cxy / den
    psi = (ax * ay + _above(cx, ay) + _above(cy, ax)) / den \
        - rho / 2.0 * ((ax * ax + 2.0 * _above(cx, ax)) / cxx + (ay * ay + 2.0 * _above(cy, ay)) / cyy)
    return float(rho), psi


def prefix_counts(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each position p of a non-negative integer array: how many earlier elements are ``<= a[p]``
    and how many are ``< a[p]``: two (n,) int arrays. O(n log n): a bottom-up merge sort whose levels
    are vectorised (``searchsorted`` over (block)-offset keys), carrying each element's position."""
    a = np.asarray(a, dtype=np.int64).ravel()
    n = a.size
    le_tot = np.zeros(n, dtype=np.int64)
    lt_tot = np.zeros(n, dtype=np.int64)
    if n < 2:
        return le_tot, lt_tot
    values = int(a.max()) + 1
    if values <= 64:                            # few values: one cumulative count per value, O(n V)
        for v in range(values):
            at = a == v
            below = np.cumsum(a < v)
            le = np.cumsum(a <= v)
            le_tot[at] = le[at] - 1              # earlier elements <= v (not the element itself)
            lt_tot[at] = below[at]
        return le_tot, lt_tot
    size = 1 << int(np.ceil(np.log2(n)))
    big = values                                 # padding sorts last; it is never left of a real element
    cur = np.full(size, big, dtype=np.int64)
    cur[:n] = a
    pos = np.arange(size, dtype=np.int64)
    le_acc = np.zeros(size, dtype=np.int64)
    lt_acc = np.zeros(size, dtype=np.int64)
    span = big + 1
    w = 1
    while w < size:
        nb = size // (2 * w)
        blocks = cur.reshape(nb, 2 * w)
        pb = pos.reshape(nb, 2 * w)
        off = (np.arange(nb, dtype=np.int64) * span)[:, None]
        lk = (blocks[:, :w] + off).ravel()
        rk = (blocks[:, w:] + off).ravel()
        start = np.repeat(np.arange(nb, dtype=np.int64) * w, w)
        le = np.searchsorted(lk, rk, side="right") - start      # left elements <= each right element
        lt = np.searchsorted(lk, rk, side="left") - start       # left elements < each right element
        rpos = pb[:, w:].ravel()
        le_acc[rpos] += le
        lt_acc[rpos] += lt
        gt = np.searchsorted(rk, lk, side="left") - start       # right elements < each left element
        idx = np.tile(np.arange(w, dtype=np.int64), nb)
        base = np.repeat(np.arange(nb, dtype=np.int64) * 2 * w, w)
        merged = np.empty(size, dtype=np.int64)
        mpos = np.empty(size, dtype=np.int64)
        merged[base + idx + gt] = blocks[:, :w].ravel()
        mpos[base + idx + gt] = pb[:, :w].ravel()
        merged[base + idx + le] = blocks[:, w:].ravel()
        mpos[base + idx + le] = rpos
        cur, pos = merged, mpos
        w *= 2
    return le_acc[:n], lt_acc[:n]


def kendall_influence(x: np.ndarray, y: np.ndarray, variant: str = "b") -> tuple[float, np.ndarray]:
    """Kendall's tau-b (or tau-c) of NaN-free ``x``, ``y`` (n,) and each item's influence
    ``psi_i = d tau / d w_i`` at unit weights.

    With ``k_j = sum_i sign(x_i - x_j) sign(y_i - y_j)`` (concordant minus discordant partners of j),
    ``S = sum_j k_j``, ``X = n^2 - sum_g t_g^2`` over the tie groups of x (``t^x_j``: j's group size),
    ``Y`` likewise: tau-b = S / sqrt(X Y) and
    ``psi_j = 2 k_j / sqrt(X Y) - tau-b ((n - t^x_j) / X + (n - t^y_j) / Y)``; tau-c = S m / ((m - 1) n^2)
    (m: the smaller number of distinct values, constant under small weight changes) and
    ``psi_j = 2 k_j m / ((m - 1) n^2) - 2 tau-c / n``. O(n log n) (per-item discordant counts from
    :func:`prefix_counts`). Returns (NaN, NaNs) when tau is undefined.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    n = x.size
    nan = (float("nan"), np.full(n, np.nan))
    if n < 2:
        return nan
    cx, vx = _dense_codes(x)
    cy, vy = _dense_codes(y)
    order = np.lexsort((cy, cx))                  # by x, ties by y: a later smaller y is discordant
    a = cy[order]
    le, lt = prefix_counts(a)
    below_total = np.concatenate([[0], np.cumsum(np.bincount(cy, minlength=vy))])[a]   # all items with y < a
    p = np.arange(n, dtype=np.int64)
    disc = np.empty(n, dtype=np.float64)
    disc[order] = (p - le) + (below_total - lt)   # earlier with larger y + later with smaller y
    tx = np.bincount(cx, minlength=vx).astype(np.float64)
    ty = np.bincount(cy, minlength=vy).astype(np.float64)
    txy = np.unique(cx * vy + cy, return_inverse=True, return_counts=True)
    joint = txy[2][txy[1].ravel()].astype(np.float64)
    k = (n - tx[cx] - ty[cy] + joint) - 2.0 * disc
    s = float(k.sum())
    if variant == "c":
        m = min(vx, vy)
        if m < 2:
            return nan
        scale = m / ((m - 1) * float(n) * n)
        tau = s * scale
        return float(np.clip(tau, -1, 1)), 2.0 * k * scale - 2.0 * tau / n
    X = float(n) * n - float((tx * tx).sum())
    Y = float(n) * n - float((ty * ty).sum())
    if X <= 0 or Y <= 0:
        return nan
    den = np.sqrt(X * Y)
    tau = s / den
    return float(np.clip(tau, -1, 1)), 2.0 * k / den - tau * ((n - tx[cx]) / X + (n - ty[cy]) / Y)


class RankPlan:
    """One variable's order and tie groups, prepared once for :func:`weighted_ranks`.

    ``order``: argsort of the values (stable); ``starts``: first sorted position of each tie group,
    None when there are no ties; ``group``: each sorted position's tie group.
    """

    def __init__(self, values: np.ndarray):
        v = np.asarray(values, dtype=np.float64).ravel()
        self.order = np.argsort(v, kind="stable")
        vs = v[self.order]
        new = np.r_[True, vs[1:] != vs[:-1]] if vs.size else np.zeros(0, bool)
        self.group = np.cumsum(new) - 1
        self.starts = None if new.all() else np.flatnonzero(new)
        self.n_groups = int(new.sum())


def weighted_ranks(W: np.ndarray, plan: RankPlan) -> np.ndarray:
    """Centred average ranks ``R - (N + 1) / 2`` of every item under each row of weights ``W`` (b, n)
    given in ``plan.order`` (sorted) order: (b, n) in that same order. A weight w is w tied copies;
    ``N = W.sum(1)``."""
    cs = np.cumsum(W, axis=1)
    N = cs[:, -1:]
    if plan.starts is None:
        return cs - W / 2.0 + 0.5 - (N + 1.0) / 2.0
    T = np.add.reduceat(W, plan.starts, axis=1)            # weight of each tie group
    g = np.cumsum(T, axis=1) - T / 2.0 + 0.5 - (N + 1.0) / 2.0
    return g[:, plan.group]


def weighted_spearman_rows(W: np.ndarray, px: RankPlan, py: RankPlan, y_in_x: np.ndarray) -> np.ndarray:
    """Spearman's rho of the data with item weights ``W`` (b, n) (original item order), for every row:
    (b,), NaN where undefined. ``px``/``py``: the plans of x and y; ``y_in_x``: for each x-sorted
    position, the y-sorted position of the same item (``argsort(py.order)[px.order]``)."""
    Wx = W[:, px.order]
    ax = weighted_ranks(Wx, px)
    ay_sorted = weighted_ranks(W[:, py.order], py)
    ay = ay_sorted[:, y_in_x]
    wax = Wx * ax
    cxy = np.einsum("ij,ij->i", wax, ay)
    cxx = np.einsum("ij,ij->i", wax, ax)
    cyy = np.einsum("ij,ij->i", Wx * ay, ay)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cxy / np.sqrt(cxx * cyy)
    return np.where((cxx > 1e-9) & (cyy > 1e-9), np.clip(r, -1.0, 1.0), np.nan)


__all__ = ["RankPlan", "kendall_influence", "prefix_counts", "spearman_influence", "weighted_ranks",
           "weighted_spearman_rows"]
