"""Leaderboard ranks with their bootstrap uncertainty.

Each metric's rank over the resamples of :func:`ts2viz.metametrics.intervals.bootstrap` (median and
interval, and the distribution of ranks).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..statistics.bootstrap import BootstrapSettings, frozen
from .intervals import LeaderboardBootstrap, bootstrap_for, check_cell, seg_groups
from .results import MetaMetrics

# -- ranks -------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)    # holds arrays: compared by identity
class RankIntervals:
    """Leaderboard ranks with their bootstrap uncertainty (see :func:`rank_intervals`).

    Attributes
    ----------
    by : str
        The leaderboard cell that orders the metrics.
    metrics : tuple of str
        Metric names, in the order of the arrays.
    settings : BootstrapSettings
        The bootstrap's settings.
    mode : str
        The meta-metric mode (policy name).
    rank : numpy.ndarray
        (metrics,) rank on the leaderboard values (1 = best).
    median, low, high : numpy.ndarray
        (metrics,) median and interval bounds of the rank over the resamples.
    distribution : numpy.ndarray
        (metrics, metrics): ``distribution[i, r - 1]`` is the fraction of resamples where metric i has
        rank r.
    """

    by: str
    metrics: tuple[str, ...]
    settings: BootstrapSettings
    mode: str
    rank: np.ndarray
    median: np.ndarray
    low: np.ndarray
    high: np.ndarray
    distribution: np.ndarray

    def frame(self):
        """The ranks as a table.

        Returns
        -------
        pandas.DataFrame
            One row per metric: ``metric``, ``rank``, ``median``, ``low``, ``high``.
        """
        import pandas as pd

        return pd.DataFrame({"metric": self.metrics, "rank": self.rank, "median": self.median,
                             "low": self.low, "high": self.high})


def _ranks(values: np.ndarray) -> np.ndarray:
    """Competition ranks along the last axis, 1 = largest; tied values share the best rank.

    NaN values get NaN and are not counted as better than anything.
    """
    v = np.where(np.isnan(values), -np.inf, values)
    better = (v[..., None, :] > v[..., :, None]).sum(-1)
    return np.where(np.isnan(values), np.nan, 1.0 + better)


def rank_intervals(mm: MetaMetrics, by: str = "ord_avg", *, boot: LeaderboardBootstrap | None = None,
                   n_resamples: int | None = None, confidence: float | None = None,
                   seed: int | None = None) -> RankIntervals:
    """Each metric's leaderboard rank by cell ``by`` over the bootstrap resamples.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results; the ranks are among ``mm.metrics``.
    by : str, default "ord_avg"
        The leaderboard cell that orders the table (higher is better).
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
    RankIntervals
        Rank, median, interval and distribution of ranks per metric.

    Raises
    ------
    InputError
        If the cell is unknown.
    ValueError
        If both ``boot`` and settings are given, or ``boot`` comes from other results.

    Notes
    -----
    Rank 1 = best; tied values share the best of their ranks (1, 2, 2, 4). The median and the interval
    bounds are quantiles of the resampled ranks by the inverted CDF (the smallest rank r with
    P(rank <= r) >= q), so they are whole ranks: q = 0.5, (1 - confidence) / 2 and (1 + confidence) / 2.

    NaN policy: a metric whose value is NaN in a resample has no rank there (and does not push others
    down); its quantiles use the resamples where it has one.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metametrics.ranks import rank_intervals
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "ALIGNScore", "DSG-mPLUG"], policy="paper")
    >>> rank_intervals(mm, "ord_avg", n_resamples=1000).frame()
           metric  rank  median  low  high
    0   CLIPScore   2.0     2.0  1.0   3.0
    1  ALIGNScore   1.0     1.0  1.0   2.0
    2   DSG-mPLUG   3.0     3.0  2.0   3.0
    """
    check_cell(by, seg_groups(mm))
    boot = bootstrap_for(mm, boot, list(mm.metrics), n_resamples, confidence, seed)
    _, c = boot.index(cell=by)
    cols = [boot.metrics.index(m) for m in mm.metrics]
    r = _ranks(boot.resampled[c, cols].T)                                             # (B, M)
    point = _ranks(boot.estimate[c, cols])
    alpha = 1.0 - boot.settings.confidence
    M = len(cols)
    qs = np.full((3, M), np.nan)
    dist = np.zeros((M, M))
    for k in range(M):       # over metrics, not resamples
        rk = r[:, k][~np.isnan(r[:, k])]
        if rk.size:
            qs[:, k] = np.quantile(rk, [alpha / 2, 0.5, 1 - alpha / 2], method="inverted_cdf")
            dist[k] = np.bincount(rk.astype(np.int64) - 1, minlength=M)[:M] / rk.size
    return RankIntervals(by, tuple(mm.metrics), boot.settings, boot.mode, frozen(point), frozen(qs[1]),
                         frozen(qs[0]), frozen(qs[2]), frozen(dist))
