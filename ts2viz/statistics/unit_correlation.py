"""Per-unit correlation with a gold standard as a permutation-test statistic (vectorised over score rows).

For human-gold meta-evaluation (the metric's correlation with human ratings, per prompt or per item
group, averaged over units): ``correlation_statistic(gold_units, "pearson")`` is a callable
``f(u, rows)`` for :func:`ts2viz.statistics.permutation_tests.permutation_test`, returning each score row's
correlation with unit ``u``'s gold values. One call scores every permuted row of a unit at once.

NaN policy: items with a NaN gold value are dropped from the unit; a row with a NaN score at a kept item,
or with a constant side, gets NaN (that unit is then skipped in that permutation's mean).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import InputError

METHODS = ("pearson", "spearman", "kendall")


def rank_rows(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties share their mean rank) along the last axis of a NaN-free array.

    Parameters
    ----------
    x : array_like
        Values, any shape; ranked along the last axis.

    Returns
    -------
    numpy.ndarray
        float64 ranks of the same shape.

    Examples
    --------
    >>> from ts2viz.statistics.unit_correlation import rank_rows
    >>> rank_rows([[3, 1, 3, 2]]).tolist()
    [[3.5, 1.0, 3.5, 2.0]]
    """
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, axis=-1, kind="stable")
    srt = np.take_along_axis(x, order, axis=-1)
    n = x.shape[-1]
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


def _pearson_rows(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    xc = x - x.mean(-1, keepdims=True)
    gc = g - g.mean()
    vx = (xc * xc).sum(-1)
    vg = float((gc * gc).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        tol = 1e-24 * max(1.0, x.shape[-1]) ** 2
        return np.where((vx > tol) & (vg > tol), (xc @ gc) / np.sqrt(vx * vg), np.nan)


def _kendall_b_rows(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(x.shape[-1], 1)
    sx = np.sign(x[:, i] - x[:, j])
    sg = np.sign(g[i] - g[j])
    num = (sx * sg).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt(np.abs(sx).sum(-1) * np.abs(sg).sum())
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def correlation_statistic(gold_units: Sequence[np.ndarray], method: str = "pearson"
                          ) -> Callable[[int, np.ndarray], np.ndarray]:
    """A unit statistic: each score row's correlation with the unit's gold values (higher gold = better).

    Parameters
    ----------
    gold_units : sequence of array_like
        Per unit, the gold value of each item.
    method : {'pearson', 'spearman', 'kendall'}, default 'pearson'
        Pearson's r, Spearman's rho (average ranks) or Kendall's tau-b.

    Returns
    -------
    callable
        ``f(u, rows)`` -> (R,) the correlation of each row of ``rows`` (R, items of unit ``u``) with
        unit ``u``'s gold values, for :func:`ts2viz.statistics.permutation_tests.permutation_test`. It
        raises :class:`InputError` when a row's length differs from the unit's gold values.

    Raises
    ------
    InputError
        If ``method`` is unknown.

    Notes
    -----
    NaN policy: items with a NaN gold value are dropped from the unit; a row with a NaN score at a kept
    item, or with a constant side, gets NaN (that unit is then skipped in that permutation's mean).

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.unit_correlation import correlation_statistic
    >>> f = correlation_statistic([[1.0, 2.0, 3.0, np.nan]], "spearman")
    >>> f(0, np.array([[0.1, 0.2, 0.3, 0.9], [0.3, 0.2, 0.1, 0.0], [0.1, np.nan, 0.3, 0.0]])).tolist()
    [1.0, -1.0, nan]
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    golds = [np.asarray(g, dtype=np.float64).ravel() for g in gold_units]

    def statistic(u: int, rows: np.ndarray) -> np.ndarray:
        g = golds[u]
        x = np.asarray(rows, dtype=np.float64)
        if x.shape[-1] != g.size:
            raise InputError(f"unit {u}: {x.shape[-1]} scores but {g.size} gold values")
        keep = ~np.isnan(g)
        x, g = x[:, keep], g[keep]
        out = np.full(x.shape[0], np.nan)
        ok = ~np.isnan(x).any(-1)
        if g.size < 2 or not ok.any():
            return out
        xs = x[ok]
        if method == "pearson":
            out[ok] = _pearson_rows(xs, g)
        elif method == "spearman":
            out[ok] = _pearson_rows(rank_rows(xs), rank_rows(g))
        else:
            out[ok] = _kendall_b_rows(xs, g)
        return out

    return statistic
