"""Rank correlations of bootstrap resamples of prompts: exact (re-ranked per resample) and first-order.

A bootstrap resample of prompts gives every image a weight ``w_i = c_p`` (how often its prompt ``p``
was drawn). The resample's Spearman rho and Kendall tau are those of the resampled data, i.e. of the
images repeated ``w_i`` times (copies of one image are ties of each other). With
``H_ij = 1 if x_j < x_i, 1/2 if x_j == x_i (i = j included), 0 otherwise``, image i's average rank
in the resample is ``R_i = sum_j w_j H_ij + 1/2``: linear in the counts, so a resample needs no sort
(:class:`ResampledSpearman` gathers the items into cells of equal (x, y) and writes it as
matrix products; what :func:`ts2viz.metaeval.humaneval.evaluate` computes exactly on small sets).

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
wrong to first order, not only approximately (``tests/statistics/test_rank_bootstrap.py`` shows the spread).

Pure numpy.
"""
from __future__ import annotations

import numpy as np

from .correlation import ranks_codes


def _above(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each item j, ``sum_i H_ij values_i``.

    That is the values of items with a larger code, plus half those of items with the same code (j
    itself included).
    """
    gs = np.bincount(codes, weights=values)
    after = gs.sum() - np.cumsum(gs)
    return after[codes] + gs[codes] / 2.0


def spearman_influence(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Spearman's rho of ``x``, ``y`` and each item's influence on it.

    The influence is ``psi_i = d rho / d w_i`` at unit weights (weights: copies of the item, ties among
    themselves; see the module docstring).

    Parameters
    ----------
    x, y : array_like
        (n,) NaN-free paired values.

    Returns
    -------
    rho : float
        Spearman's rho; NaN when undefined (fewer than two items, a constant side).
    psi : numpy.ndarray
        (n,) the influences; they sum to 0 (rho does not change when every weight is scaled). NaNs when
        rho is undefined.

    Notes
    -----
    With centred ranks ``a = R - (n + 1) / 2``, ``C_uv = sum a^u a^v`` and ``U^x_j = sum_i H^x_ij a^y_i``
    (``V^x`` likewise with ``a^x``)::

        psi_j = (a^x_j a^y_j + U^x_j + U^y_j) / sqrt(C_xx C_yy)
                - rho / 2 ((a^x_j^2 + 2 V^x_j) / C_xx + (a^y_j^2 + 2 V^y_j) / C_yy)

    Examples
    --------
    >>> from ts2viz.statistics.rank_bootstrap import spearman_influence
    >>> rho, psi = spearman_influence([1.0, 2, 3, 4, 5], [2.0, 1, 4, 3, 5])
    >>> round(rho, 4), psi.round(3).tolist()
    (0.8, [-0.03, -0.03, -0.03, -0.03, 0.12])
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.size < 2:
        return float("nan"), np.full(x.size, np.nan)
    rx, cx = ranks_codes(x, np.argsort(x, kind="stable"))
    ry, cy = ranks_codes(y, np.argsort(y, kind="stable"))
    return spearman_influence_from_ranks(rx, cx, ry, cy)


def spearman_influence_from_ranks(rx: np.ndarray, cx: np.ndarray, ry: np.ndarray,
                                  cy: np.ndarray) -> tuple[float, np.ndarray]:
    """:func:`spearman_influence` from average ranks and dense codes.

    Parameters
    ----------
    rx, ry : numpy.ndarray
        (n,) average ranks of x and y (:func:`~ts2viz.statistics.correlation.ranks_codes`).
    cx, cy : numpy.ndarray
        (n,) dense codes of x and y.

    Returns
    -------
    rho : float
        Spearman's rho (NaN when a side is constant).
    psi : numpy.ndarray
        (n,) the influences (NaNs when rho is undefined).
    """
    n = rx.size
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
    """For each position of a non-negative integer array, the earlier elements ``<=`` and ``<`` it.

    Parameters
    ----------
    a : array_like of int
        (n,) non-negative integers.

    Returns
    -------
    le : numpy.ndarray
        (n,) int64, how many earlier elements are ``<= a[p]``.
    lt : numpy.ndarray
        (n,) int64, how many earlier elements are ``< a[p]``.

    Notes
    -----
    O(n log n): a bottom-up merge sort whose levels are vectorised (``searchsorted`` over block-offset
    keys), carrying each element's position; arrays of at most 64 distinct values are counted value by
    value.

    Examples
    --------
    >>> from ts2viz.statistics.rank_bootstrap import prefix_counts
    >>> le, lt = prefix_counts([2, 0, 2, 1])
    >>> le.tolist(), lt.tolist()
    ([0, 0, 2, 1], [0, 0, 1, 1])
    """
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
    """Kendall's tau-b (or tau-c) of ``x``, ``y`` and each item's influence ``psi_i = d tau / d w_i``.

    Parameters
    ----------
    x, y : array_like
        (n,) NaN-free paired values.
    variant : {'b', 'c'}, default 'b'
        The tau variant.

    Returns
    -------
    tau : float
        Kendall's tau; NaN when undefined.
    psi : numpy.ndarray
        (n,) the influences at unit weights; NaNs when tau is undefined.

    Notes
    -----
    With ``k_j = sum_i sign(x_i - x_j) sign(y_i - y_j)`` (concordant minus discordant partners of j),
    ``S = sum_j k_j``, ``X = n**2 - sum_g t_g**2`` over the tie groups of x (``t^x_j``: j's group size),
    ``Y`` likewise: tau-b = S / sqrt(X Y) and
    ``psi_j = 2 k_j / sqrt(X Y) - tau_b ((n - t^x_j) / X + (n - t^y_j) / Y)``;
    tau-c = S m / ((m - 1) n**2) (m: the smaller number of distinct values, constant under small weight
    changes) and ``psi_j = 2 k_j m / ((m - 1) n**2) - 2 tau_c / n``. O(n log n) (per-item discordant
    counts from :func:`prefix_counts`).

    Examples
    --------
    >>> from ts2viz.statistics.rank_bootstrap import kendall_influence
    >>> tau, psi = kendall_influence([1.0, 2, 3, 4, 5], [2.0, 1, 4, 3, 5])
    >>> round(tau, 4), psi.round(3).tolist()
    (0.6, [-0.04, -0.04, -0.04, -0.04, 0.16])
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.size < 2:
        return float("nan"), np.full(x.size, np.nan)
    ox = np.argsort(x, kind="stable")
    return kendall_influence_from_codes(ranks_codes(x, ox)[1], ranks_codes(y, np.argsort(y, kind="stable"))[1],
                                        ox, variant)


def kendall_influence_from_codes(cx: np.ndarray, cy: np.ndarray, order_x: np.ndarray,
                                 variant: str = "b") -> tuple[float, np.ndarray]:
    """:func:`kendall_influence` from dense codes and a stable argsort of x.

    Parameters
    ----------
    cx, cy : numpy.ndarray
        (n,) dense codes 0 .. V - 1 of x and y (every value used).
    order_x : numpy.ndarray
        A stable argsort of x.
    variant : {'b', 'c'}, default 'b'
        The tau variant.

    Returns
    -------
    tau : float
        Kendall's tau; NaN when undefined.
    psi : numpy.ndarray
        (n,) the influences; NaNs when tau is undefined.
    """
    n = cx.size
    nan = (float("nan"), np.full(n, np.nan))
    if n < 2:
        return nan
    vx, vy = int(cx.max()) + 1, int(cy.max()) + 1
    key = cx * vy + cy
    order = order_x[np.argsort(key[order_x], kind="stable")]   # by x, ties by y (nearly sorted: cheap)
    a = cy[order]
    le, lt = prefix_counts(a)
    below_total = np.concatenate([[0], np.cumsum(np.bincount(cy, minlength=vy))])[a]   # all items with y < a
    p = np.arange(n, dtype=np.int64)
    disc = np.empty(n, dtype=np.float64)
    disc[order] = (p - le) + (below_total - lt)   # earlier with larger y + later with smaller y
    tx = np.bincount(cx, minlength=vx).astype(np.float64)
    ty = np.bincount(cy, minlength=vy).astype(np.float64)
    ks = key[order]                               # sorted: runs are the joint tie groups
    new = np.r_[True, ks[1:] != ks[:-1]]
    starts = np.flatnonzero(new)
    run = np.diff(np.r_[starts, n])
    joint = np.empty(n, dtype=np.float64)
    joint[order] = run[np.cumsum(new) - 1]
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


def _below_half(codes: np.ndarray, prompts: np.ndarray, n_codes: int, n_prompts: int) -> np.ndarray:
    """(prompts, codes): per prompt, its items below each value plus half those at it.

    A resample's rank of value v is ``counts @ F[:, v] + 1/2``.
    """
    cnt = np.bincount(prompts * n_codes + codes, minlength=n_prompts * n_codes).reshape(n_prompts, n_codes)
    F = np.cumsum(cnt, axis=1, dtype=np.float64)
    F -= cnt / 2.0
    return F


class ResampledSpearman:
    """Spearman's rho of every resample of prompts, exactly (re-ranked), for one metric.

    Items with equal x and equal y (a *cell*) are interchangeable, so a resample needs only: the
    centred rank of each x value and of each y value (``counts @ F - N / 2``, one matrix product each;
    the products are of half-integers below 2**23, exact in float32), the weight of each cell (a product
    with the cells' prompt counts, or a gather when every cell is one item), and then
    ``C_xy = sum_cells w a^x a^y``, ``C_xx``, ``C_yy`` (float64). Work per resample:
    O(prompts x (x values + y values + cells)) multiply-adds plus O(cells).

    Parameters
    ----------
    x, y : numpy.ndarray
        (n,) NaN-free values.
    prompts : numpy.ndarray
        (n,) prompt index (0 .. n_prompts - 1) of each item.
    n_prompts : int
        Number of prompts.

    Examples
    --------
    Drawing prompts 0 and 2 once each reproduces the full set's rho; drawing prompt 0 twice and
    prompt 1 never is the rho of the repeated items:

    >>> import numpy as np
    >>> from ts2viz.statistics.rank_bootstrap import ResampledSpearman
    >>> rs = ResampledSpearman(np.array([1.0, 2, 3, 4, 5]), np.array([2.0, 1, 4, 3, 5]), np.array([0, 0, 1, 1, 2]), 3)
    >>> rs(np.array([[1, 1, 1], [2, 0, 1]])).round(4).tolist()
    [0.8, 0.1111]
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, prompts: np.ndarray, n_prompts: int):
        cx, vx = _codes(x)
        cy, vy = _codes(y)
        g = np.asarray(prompts, dtype=np.int64).ravel()
        self.Fx = _below_half(cx, g, vx, n_prompts).astype(np.float32)
        self.Fy = _below_half(cy, g, vy, n_prompts).astype(np.float32)
        cells, first, inv = np.unique(cx * vy + cy, return_index=True, return_inverse=True)
        inv = inv.ravel()
        self.cell_x, self.cell_y = cx[first], cy[first]
        if cells.size == cx.size:                  # one item per cell: the cell's weight is its prompt's count
            self.cell_prompt, self.J = g[first], None
        else:
            J = np.zeros((n_prompts, cells.size), dtype=np.float32)
            np.add.at(J, (g, inv), 1.0)
            self.cell_prompt, self.J = None, J
        self.sizes = np.bincount(g, minlength=n_prompts).astype(np.float64)

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        """Spearman's rho of each resample.

        Parameters
        ----------
        counts : array_like
            (b, n_prompts) how often each prompt is drawn in each resample.

        Returns
        -------
        numpy.ndarray
            (b,) rho per resample, NaN where undefined.
        """
        counts = np.asarray(counts)
        out = np.empty(counts.shape[0])
        rows = max(1, 250_000 // max(self.cell_x.size, 1))     # work arrays of ~2 MB: they stay in the cache
        for r in range(0, counts.shape[0], rows):
            out[r:r + rows] = self._rows(counts[r:r + rows])
        return out

    def _rows(self, counts: np.ndarray) -> np.ndarray:
        c32 = counts.astype(np.float32)
        half = (counts.astype(np.float64) @ self.sizes)[:, None] / 2.0
        ax = (c32 @ self.Fx).astype(np.float64)
        ax -= half
        ay = (c32 @ self.Fy).astype(np.float64)
        ay -= half
        w = (c32[:, self.cell_prompt] if self.J is None else c32 @ self.J).astype(np.float64)
        axc, ayc = ax[:, self.cell_x], ay[:, self.cell_y]
        wx = w * axc
        cxy = np.einsum("ij,ij->i", wx, ayc)
        cxx = np.einsum("ij,ij->i", wx, axc)
        w *= ayc
        cyy = np.einsum("ij,ij->i", w, ayc)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = cxy / np.sqrt(cxx * cyy)
        return np.where((cxx > 1e-9) & (cyy > 1e-9), np.clip(r, -1.0, 1.0), np.nan)


def _codes(v: np.ndarray) -> tuple[np.ndarray, int]:
    u, inv = np.unique(np.asarray(v, dtype=np.float64).ravel(), return_inverse=True)
    return inv.astype(np.int64).ravel(), int(u.size)


__all__ = ["ResampledSpearman", "kendall_influence", "kendall_influence_from_codes", "prefix_counts",
           "spearman_influence", "spearman_influence_from_ranks"]
