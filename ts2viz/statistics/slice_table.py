"""Per-slice bootstrap summaries: percentile intervals, p-values of no association, stability across slices.

One statistic of several metrics on several slices is a (slices, metrics) array of point values with a
(slices, metrics, B) array of bootstrap resamples, the resamples paired between the metrics of a slice.
This module holds what every per-slice view computes from such arrays, whatever the statistic and the
unit resampled: the rated sets' slices of prompts (:class:`ts2viz.metaeval.slices.SliceEval`, prompts
resampled) and the leaderboard's slices of SEGs (:class:`ts2viz.metametrics.slices.BoardSlices`, SEGs
resampled within partitions):

- :func:`percentile_interval`: the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles;
- :func:`bootstrap_pvalue`: the two-sided bootstrap p-value of "no association": the fraction of
  resamples on the far side of the null value, doubled and capped at 1 (the smallest is 2 / resamples);
- :func:`slice_stability`: Kendall's tau-b between every two slices' orderings of the metrics, and the
  *significant reversals*: a pair of metrics whose paired interval of the difference excludes 0 in
  opposite directions on two slices.

Pure numpy (pandas for the tables): no scipy, torch or gradio.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .bootstrap import quantiles
from .correlation import kendall

#: the columns of :func:`slice_stability`'s reversals
REVERSAL_COLUMNS = ("metric_a", "metric_b", "slice_a", "slice_b", "diff_a", "diff_b")


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval along the last axis (NaN resamples skipped).

    Parameters
    ----------
    samples : numpy.ndarray
        (..., B) resampled values.
    confidence : float
        Two-sided level, in (0, 1).

    Returns
    -------
    low, high : numpy.ndarray
        Arrays of ``samples.shape[:-1]``; NaN where every resample is NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.slice_table import percentile_interval
    >>> lo, hi = percentile_interval(np.arange(11.0)[None], 0.95)
    >>> lo.round(3).tolist(), hi.round(3).tolist()
    ([0.25], [9.75])
    """
    a = (1.0 - confidence) / 2.0
    q = quantiles(np.asarray(samples), (a, 1.0 - a))
    return q[0], q[1]


def bootstrap_pvalue(samples: np.ndarray, null: float) -> np.ndarray:
    """Two-sided bootstrap p-value of the null value along the last axis.

    ``min(1, 2 * min(share <= null, share >= null))`` over the non-NaN resamples.

    Parameters
    ----------
    samples : numpy.ndarray
        (..., B) resampled values.
    null : float
        The statistic's value under no association (0 for a correlation, 0.5 for a pair-wise accuracy).

    Returns
    -------
    numpy.ndarray
        ``samples.shape[:-1]``; NaN where every resample is NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.slice_table import bootstrap_pvalue
    >>> bootstrap_pvalue(np.array([[0.1, 0.2, 0.3, -0.1], [1.0, 2.0, 3.0, 4.0]]), 0.0).tolist()
    [0.5, 0.0]
    """
    s = np.asarray(samples)
    ok = ~np.isnan(s)
    n = ok.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(ok, s <= null, False).sum(-1) / n
        hi = np.where(ok, s >= null, False).sum(-1) / n
        p = np.minimum(1.0, 2.0 * np.minimum(lo, hi))
    return np.where(n > 0, p, np.nan)


def slice_stability(point: np.ndarray, samples: np.ndarray | None, confidence: float,
                    slices: Sequence[str], metrics: Sequence[str]):
    """How stable the ranking of the metrics is across slices.

    Parameters
    ----------
    point : numpy.ndarray
        (slices, metrics) point values of one statistic (NaN: no number).
    samples : numpy.ndarray or None
        (slices, metrics, B) resampled values, paired between the metrics of a slice; None: no reversals.
    confidence : float
        Level of the paired intervals of the differences.
    slices, metrics : sequence of str
        The names of the rows and columns of ``point``.

    Returns
    -------
    rank_corr : pandas.DataFrame
        (slices x slices) Kendall's tau-b between the slices' point values over the metrics (NaN where
        fewer than 2 metrics have a number on both).
    reversals : pandas.DataFrame
        One row per significant reversal: ``metric_a``, ``metric_b``, ``slice_a`` (where a is
        significantly better: the paired interval of a - b excludes 0), ``slice_b`` (where b is),
        ``diff_a``, ``diff_b`` (a - b on each); empty without resamples.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.slice_table import slice_stability
    >>> rng = np.random.default_rng(0)
    >>> point = np.array([[0.5, 0.1], [0.1, 0.5]])
    >>> samples = point[..., None] + 0.01 * rng.normal(size=(2, 2, 200))
    >>> rank_corr, rev = slice_stability(point, samples, 0.95, ["s1", "s2"], ["m1", "m2"])
    >>> float(rank_corr.loc["s1", "s2"]), rev[["metric_a", "slice_a", "slice_b"]].values.tolist()
    (-1.0, [['m1', 's1', 's2']])
    """
    import pandas as pd

    v = np.asarray(point, dtype=np.float64)
    S, k = v.shape
    tau = np.full((S, S), np.nan)
    for s in range(S):
        for t in range(S):
            ok = ~np.isnan(v[s]) & ~np.isnan(v[t])
            if ok.sum() >= 2:
                tau[s, t] = kendall(v[s][ok], v[t][ok])
    rank_corr = pd.DataFrame(tau, index=list(slices), columns=list(slices))
    rows = []
    if samples is not None:
        for i in range(k):
            for j in range(i + 1, k):
                d = (samples[:, i] - samples[:, j]).astype(np.float64)            # (S, B) paired differences
                lo, hi = percentile_interval(d, confidence)
                pos, neg = np.flatnonzero(lo > 0), np.flatnonzero(hi < 0)
                for s in pos:
                    for t in neg:
                        rows.append({"metric_a": metrics[i], "metric_b": metrics[j], "slice_a": slices[s],
                                     "slice_b": slices[t], "diff_a": float(v[s, i] - v[s, j]),
                                     "diff_b": float(v[t, i] - v[t, j])})
    return rank_corr, pd.DataFrame(rows, columns=list(REVERSAL_COLUMNS))
