"""Paired comparisons of metrics on the leaderboard.

Differences with paired bootstrap intervals and Wilcoxon p-values, for one pair (:func:`compare`) or
all pairs with Holm's correction (:func:`pairwise`).

The intervals come from one :func:`ts2viz.metametrics.intervals.bootstrap` (the same resamples for both
metrics), the tests from :func:`ts2viz.statistics.wilcoxon.wilcoxon` on the per-SEG values.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..statistics.bootstrap import BootstrapSettings, frozen, quantiles
from ..statistics.wilcoxon import holm, wilcoxon
from .intervals import (
    LeaderboardBootstrap,
    bootstrap_for,
    cell_values,
    check_cell,
    seg_groups,
)
from .results import MetaMetrics

# -- paired comparisons -----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)    # holds arrays: compared by identity
class PairedComparison:
    """Metric ``a`` against metric ``b`` in every leaderboard cell (see :func:`compare`).

    Attributes
    ----------
    a, b : str
        The two metrics.
    settings : BootstrapSettings
        The bootstrap's settings.
    mode : str
        The meta-metric mode (policy name).
    cells : tuple of str
        The leaderboard cells, in the order of the arrays.
    estimate_a, estimate_b : numpy.ndarray
        Per cell, the two leaderboard values.
    difference : numpy.ndarray
        Per cell, a - b of the leaderboard values.
    low, high : numpy.ndarray
        Per cell, the paired bootstrap interval of the difference.
    n : numpy.ndarray
        Per cell, SEGs with both values (the pairs the test uses).
    statistic, pvalue : numpy.ndarray
        Per cell, the Wilcoxon signed-rank statistic and p-value on the per-SEG values.
    """

    a: str
    b: str
    settings: BootstrapSettings
    mode: str
    cells: tuple[str, ...]
    estimate_a: np.ndarray
    estimate_b: np.ndarray
    difference: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray

    def frame(self):
        """The comparison as a table.

        Returns
        -------
        pandas.DataFrame
            One row per cell: ``cell``, a column named after ``a``, one after ``b``, ``difference``,
            ``low``, ``high``, ``n``, ``statistic``, ``pvalue``.
        """
        import pandas as pd

        return pd.DataFrame({"cell": self.cells, self.a: self.estimate_a, self.b: self.estimate_b,
                             "difference": self.difference, "low": self.low, "high": self.high,
                             "n": self.n.astype(int), "statistic": self.statistic, "pvalue": self.pvalue})


def _difference_intervals(boot: LeaderboardBootstrap, cell_idx, i, j) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals of resampled (metric i - metric j) for the given cells: arrays (..)."""
    alpha = 1.0 - boot.settings.confidence
    diff = boot.resampled[cell_idx, i] - boot.resampled[cell_idx, j]
    low, high = quantiles(diff, [alpha / 2, 1 - alpha / 2])
    est = boot.estimate[cell_idx, i] - boot.estimate[cell_idx, j]
    nan = np.isnan(est)
    low[nan] = high[nan] = np.nan
    return low, high


def compare(mm: MetaMetrics, a: str, b: str, *, boot: LeaderboardBootstrap | None = None,
            n_resamples: int | None = None, confidence: float | None = None,
            seed: int | None = None) -> PairedComparison:
    """Paired comparison of metrics ``a`` and ``b`` over the same SEGs, in every leaderboard cell.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results holding both metrics.
    a, b : str
        Metric names.
    boot : LeaderboardBootstrap, optional
        A :func:`~ts2viz.metametrics.intervals.bootstrap` of ``mm`` to reuse; otherwise one is drawn
        with the settings below. Passing both is an error.
    n_resamples : int, optional
        Resamples of a new bootstrap (default :data:`~ts2viz.statistics.bootstrap.DEFAULTS`).
    confidence : float, optional
        Its confidence level.
    seed : int, optional
        Its seed.

    Returns
    -------
    PairedComparison
        Per cell, the difference a - b of the leaderboard values, its paired bootstrap percentile
        interval (the same resamples for both metrics: the interval of resampled(a) - resampled(b)),
        and the Wilcoxon signed-rank p-value (:func:`~ts2viz.statistics.wilcoxon.wilcoxon`) on the
        per-SEG values of the cell's SEGs.

    Raises
    ------
    InputError
        If ``a`` equals ``b`` or a metric is not in ``mm``.
    ValueError
        If both ``boot`` and settings are given, or ``boot`` comes from other results.

    See Also
    --------
    pairwise : every pair in one cell, Holm-corrected.
    ts2viz.metametrics.permutation.pairwise_permutation : permutation tests instead.

    Notes
    -----
    NaN policy: the difference and its interval use each metric's own non-NaN SEGs (as the
    leaderboard does); the Wilcoxon test drops SEGs where either value is NaN (``n`` counts the rest).

    Examples
    --------
    ALIGNScore separates the nodes of TS2's SEGs better than DSG with mPLUG (Sep, average):

    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metametrics.comparison import compare
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["ALIGNScore", "DSG-mPLUG"], policy="paper")
    >>> res = compare(mm, "ALIGNScore", "DSG-mPLUG", n_resamples=1000)
    >>> row = res.frame().set_index("cell").loc["sep_avg"]
    >>> round(float(100 * row["difference"]), 1), round(100 * row["low"]), round(100 * row["high"])
    (17.4, 14, 21)
    >>> int(row["n"]), bool(row["pvalue"] < 1e-10)
    (164, True)
    """
    if a == b:
        raise InputError(f"compare needs two different metrics, got {a!r} twice")
    boot = bootstrap_for(mm, boot, [a, b], n_resamples, confidence, seed)
    i, _ = boot.index(metric=a)
    j, _ = boot.index(metric=b)
    cells = boot.cells
    idx = np.arange(len(cells))
    low, high = _difference_intervals(boot, idx, i, j)
    ia, ib = mm.metrics.index(a), mm.metrics.index(b)
    g = seg_groups(mm)
    per_cell = [cell_values(mm, c, g) for c in cells]
    xs, ys = [], []
    width = max(len(v) for v in per_cell)
    for v in per_cell:
        pad = np.full((width - len(v), 2), np.nan)
        xs.append(np.concatenate([v[:, ia], pad[:, 0]]))
        ys.append(np.concatenate([v[:, ib], pad[:, 1]]))
    w = wilcoxon(np.array(xs), np.array(ys))
    return PairedComparison(a, b, boot.settings, boot.mode, cells, frozen(boot.estimate[:, i]),
                            frozen(boot.estimate[:, j]), frozen(boot.estimate[:, i] - boot.estimate[:, j]),
                            frozen(low), frozen(high), frozen(w.n), frozen(w.statistic), frozen(w.pvalue))


@dataclass(frozen=True, eq=False)    # holds arrays: compared by identity
class PairwiseComparison:
    """All pairs of metrics in one leaderboard cell (see :func:`pairwise`).

    Matrices are (metrics, metrics), entry [i, j] comparing row metric i with column metric j.
    Diagonals are NaN (0 for ``n``); p-value matrices are symmetric, differences and intervals
    antisymmetric.

    Attributes
    ----------
    cell : str
        The leaderboard cell.
    metrics : tuple of str
        Metric names (rows and columns).
    settings : BootstrapSettings
        The bootstrap's settings.
    mode : str
        The meta-metric mode (policy name).
    estimate : numpy.ndarray
        (metrics,) the leaderboard values.
    difference : numpy.ndarray
        estimate_i - estimate_j.
    low, high : numpy.ndarray
        The paired bootstrap interval of the difference.
    pvalue : numpy.ndarray
        The raw Wilcoxon p-value.
    pvalue_holm : numpy.ndarray
        Holm-corrected over the M(M-1)/2 pairs.
    n : numpy.ndarray
        The SEGs both metrics have values on.
    """

    cell: str
    metrics: tuple[str, ...]
    settings: BootstrapSettings
    mode: str
    estimate: np.ndarray
    difference: np.ndarray
    low: np.ndarray
    high: np.ndarray
    pvalue: np.ndarray
    pvalue_holm: np.ndarray
    n: np.ndarray

    def significant(self, alpha: float = 0.05) -> np.ndarray:
        """Which pairs differ significantly after Holm's correction.

        Parameters
        ----------
        alpha : float, default 0.05
            The family-wise level.

        Returns
        -------
        numpy.ndarray
            Boolean matrix: Holm-corrected p < ``alpha`` (False on the diagonal and for NaN).
        """
        with np.errstate(invalid="ignore"):
            return np.nan_to_num(self.pvalue_holm, nan=1.0) < alpha

    def frame(self):
        """The pairs as a table, one row per unordered pair (i < j in ``metrics`` order).

        Returns
        -------
        pandas.DataFrame
            Columns ``a``, ``b``, ``difference``, ``low``, ``high``, ``n``, ``pvalue``, ``pvalue_holm``.
        """
        import pandas as pd

        I, J = np.triu_indices(len(self.metrics), 1)
        names = np.asarray(self.metrics, dtype=object)
        return pd.DataFrame({"a": names[I], "b": names[J], "difference": self.difference[I, J],
                             "low": self.low[I, J], "high": self.high[I, J], "n": self.n[I, J].astype(int),
                             "pvalue": self.pvalue[I, J], "pvalue_holm": self.pvalue_holm[I, J]})


def pairwise(mm: MetaMetrics, cell: str = "ord_avg", *, boot: LeaderboardBootstrap | None = None,
             n_resamples: int | None = None, confidence: float | None = None,
             seed: int | None = None) -> PairwiseComparison:
    """Every pair of metrics compared in one leaderboard cell, with Holm-corrected p-values.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    cell : str, default "ord_avg"
        A leaderboard cell, e.g. ``"ord_avg"``, ``"sep_nat"``
        (:func:`~ts2viz.metametrics.intervals.cell_names`).
    boot : LeaderboardBootstrap, optional
        A bootstrap of ``mm`` covering ``mm.metrics``, to reuse; otherwise one is drawn.
    n_resamples : int, optional
        Resamples of a new bootstrap, as in :func:`compare`.
    confidence : float, optional
        Its confidence level.
    seed : int, optional
        Its seed.

    Returns
    -------
    PairwiseComparison
        Over ``mm.metrics``: differences, paired bootstrap intervals, Wilcoxon p-values
        (:func:`~ts2viz.statistics.wilcoxon.wilcoxon`) and their Holm correction
        (:func:`~ts2viz.statistics.wilcoxon.holm`) over all M(M-1)/2 unordered pairs. A pair is
        "significantly ordered" when its Holm p-value is below the chosen level.

    Raises
    ------
    InputError
        If the cell is unknown.
    ValueError
        If both ``boot`` and settings are given, or ``boot`` comes from other results.

    Notes
    -----
    NaN policy: as :func:`compare`; a pair without any SEG with both values has NaN p-values and is
    left out of the Holm family.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metametrics.comparison import pairwise
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "ALIGNScore", "DSG-mPLUG"], policy="paper")
    >>> pw = pairwise(mm, "sep_avg", n_resamples=1000)
    >>> table = pw.frame()
    >>> table["difference"] = (100 * table["difference"]).round(1)
    >>> table[["a", "b", "difference", "pvalue_holm"]].round(3)
                a           b  difference  pvalue_holm
    0   CLIPScore  ALIGNScore        -2.2        0.016
    1   CLIPScore   DSG-mPLUG        15.2        0.000
    2  ALIGNScore   DSG-mPLUG        17.4        0.000
    >>> int(pw.significant(0.05).sum()) // 2
    3
    """
    g = seg_groups(mm)
    check_cell(cell, g)
    boot = bootstrap_for(mm, boot, list(mm.metrics), n_resamples, confidence, seed)
    _, c = boot.index(cell=cell)
    cols = [boot.metrics.index(m) for m in mm.metrics]
    M = len(cols)
    I, J = np.triu_indices(M, 1)
    bi, bj = np.asarray(cols)[I], np.asarray(cols)[J]
    est = boot.estimate[c, cols]
    alpha = 1.0 - boot.settings.confidence
    diff_samples = boot.resampled[c, bi] - boot.resampled[c, bj]                      # (P, B)
    low_u, high_u = quantiles(diff_samples, [alpha / 2, 1 - alpha / 2])
    v = cell_values(mm, cell, g)                                                       # (S, M)
    w = wilcoxon(v[:, I].T, v[:, J].T)
    p_h = holm(w.pvalue)

    def square(upper, anti=False, diag=np.nan):
        out = np.full((M, M), diag, dtype=np.float64)
        out[I, J] = upper
        out[J, I] = -upper if anti else upper
        return out

    diff_u = est[I] - est[J]
    nan = np.isnan(diff_u)
    low_u[nan] = high_u[nan] = np.nan
    low = np.full((M, M), np.nan)
    high = np.full((M, M), np.nan)
    low[I, J], high[I, J] = low_u, high_u
    low[J, I], high[J, I] = -high_u, -low_u          # the interval of b - a mirrors that of a - b
    return PairwiseComparison(cell, tuple(mm.metrics), boot.settings, boot.mode, frozen(est),
                              frozen(square(diff_u, anti=True)), frozen(low), frozen(high),
                              frozen(square(w.pvalue)), frozen(square(p_h)), frozen(square(w.n, diag=0)))
