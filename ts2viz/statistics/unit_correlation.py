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
from .correlation import pearson_rows, rankdata

METHODS = ("pearson", "spearman", "kendall")


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
        constant_tol = 1e-24 * max(1.0, g.size) ** 2     # rounding noise of a constant side is not variation
        if method == "pearson":
            out[ok] = pearson_rows(xs, g, tol=constant_tol)
        elif method == "spearman":
            out[ok] = pearson_rows(rankdata(xs), rankdata(g), tol=constant_tol)
        else:
            out[ok] = _kendall_b_rows(xs, g)
        return out

    return statistic
