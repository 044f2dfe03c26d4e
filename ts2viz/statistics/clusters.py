"""Significance clusters: ranks that only change where a difference is significant.

Metrics are sorted by their meta-metric, best first. Cluster 1 starts with the best metric; walking down
the list, a metric joins the current cluster unless it is *significantly worse than the cluster's best*
(the first metric of the cluster), in which case it starts a new cluster and becomes that cluster's
best. A metric's cluster number is its rank: rank 1 = every metric that the best metric does not
significantly beat, and so on (the WMT metrics task's significance clusters; google-research/
mt-metrics-eval's ``AssignRanks`` starts a new cluster when *any* member of the current cluster beats the
metric: ``against="any"`` here).

"Significantly worse" is decided by a one-sided p-value matrix, ``pvalue[i, j]`` = p of "metric i is
better than metric j", compared with ``alpha`` after the chosen correction:

- ``correction="none"`` (the WMT/mt-metrics-eval practice): each comparison at level ``alpha``;
- ``correction="holm"``: Holm-Bonferroni over the M(M-1)/2 one-sided p-values of every higher-ranked
  metric against every lower-ranked one (family-wise error control over all the comparisons the
  procedure could make; with 1,000 permutations the smallest possible p is 1/1001, so Holm over many
  pairs needs more permutations to reach significance).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError

CORRECTIONS = ("none", "holm")
AGAINST = ("best", "any")


@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class Clusters:
    """Significance clusters (see :func:`significance_clusters`).

    Attributes
    ----------
    metrics : tuple of str
        Names in the input order.
    estimate : numpy.ndarray
        (M,) the meta-metric values.
    order : numpy.ndarray
        Indices of the placed metrics, best first.
    cluster : numpy.ndarray
        (M,) cluster number (1 = top) per metric in the input order, 0 for a metric without an
        estimate.
    pvalue_used : numpy.ndarray
        (M,) the (corrected) p-value that decided each metric's placement (against the best of the
        cluster it was tested against; NaN for the very first metric).
    alpha : float
        The significance level.
    correction : str
        ``"none"`` or ``"holm"``.
    against : str
        ``"best"`` or ``"any"``.
    """

    metrics: tuple[str, ...]
    estimate: np.ndarray
    order: np.ndarray
    cluster: np.ndarray
    pvalue_used: np.ndarray
    alpha: float
    correction: str
    against: str

    def members(self) -> list[list[str]]:
        """Metric names per cluster, best first.

        Returns
        -------
        list of list of str
            One list per cluster, each in ranking order; metrics without an estimate are left out.
        """
        out: dict[int, list[str]] = {}
        for i in self.order:
            if self.cluster[i] > 0:
                out.setdefault(int(self.cluster[i]), []).append(self.metrics[i])
        return [out[k] for k in sorted(out)]


def holm_upper(pvalue: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Holm-corrected copy of a one-sided p matrix over the pairs (higher-ranked i, lower-ranked j).

    Parameters
    ----------
    pvalue : numpy.ndarray
        (M, M) one-sided p-values, ``pvalue[i, j]`` = p of "i better than j".
    order : numpy.ndarray
        The ranking, best first (indices; metrics left out of it are not corrected).

    Returns
    -------
    numpy.ndarray
        (M, M): the Holm-adjusted p-values of the M(M-1)/2 entries with i ranked above j, NaN elsewhere.
    """
    from .wilcoxon import holm

    M = pvalue.shape[0]
    rank = np.empty(M, dtype=np.int64)
    rank[order] = np.arange(M)
    I, J = np.nonzero(rank[:, None] < rank[None, :])
    out = np.full_like(pvalue, np.nan, dtype=np.float64)
    out[I, J] = holm(pvalue[I, J])
    return out


def significance_clusters(metrics: Sequence[str], estimate, pvalue, *, alpha: float = 0.05,
                          correction: str = "none", against: str = "best") -> Clusters:
    """Greedy significance clusters from the top.

    Parameters
    ----------
    metrics : sequence of str
        Names (M,).
    estimate : array_like
        (M,) meta-metric values, higher = better; NaN metrics get cluster 0 and are not placed.
    pvalue : array_like
        (M, M) one-sided p-values, ``pvalue[i, j]`` = p of "i better than j" (only entries with i above
        j in the ranking are read).
    alpha : float, default 0.05
        Significance level, strictly between 0 and 1.
    correction : {'none', 'holm'}, default 'none'
        Each comparison at level ``alpha``, or Holm over all higher-lower pairs (see the module
        docstring).
    against : {'best', 'any'}, default 'best'
        A metric is tested against the best of the current cluster, or against every member of it (as
        mt-metrics-eval's ``AssignRanks``).

    Returns
    -------
    Clusters
        The ranking, each metric's cluster and the p-value that placed it. Ties in ``estimate`` keep
        the input order.

    Raises
    ------
    InputError
        If ``correction``, ``against`` or ``alpha`` is invalid, or the shapes do not agree.

    See Also
    --------
    ts2viz.statistics.permutation_tests.pairwise_unit_permutation : a p-value matrix to cluster.
    ts2viz.metametrics.permutation.leaderboard_clusters : clusters of TS2's leaderboard.

    Notes
    -----
    NaN policy: a metric with a NaN estimate is not placed (cluster 0); a NaN p-value counts as 1
    (not significant).

    Examples
    --------
    A beats B and C significantly; B does not beat C:

    >>> import numpy as np
    >>> from ts2viz.statistics.clusters import significance_clusters
    >>> p = np.array([[np.nan, 0.01, 0.001], [0.99, np.nan, 0.2], [1.0, 0.8, np.nan]])
    >>> cl = significance_clusters(["A", "B", "C"], [0.8, 0.7, 0.65], p)
    >>> cl.members(), cl.cluster.tolist()
    ([['A'], ['B', 'C']], [1, 2, 2])
    >>> significance_clusters(["A", "B", "C"], [0.8, 0.7, 0.65], p, correction="holm").pvalue_used.round(3).tolist()
    [nan, 0.02, 0.2]
    """
    if correction not in CORRECTIONS:
        raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    if against not in AGAINST:
        raise InputError(f"against must be one of {', '.join(AGAINST)}, got {against!r}")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"the significance level must be strictly between 0 and 1, got {alpha}")
    est = np.asarray(estimate, dtype=np.float64)
    p = np.asarray(pvalue, dtype=np.float64)
    M = est.size
    if p.shape != (M, M) or len(metrics) != M:
        raise InputError(f"need {M} names and a ({M}, {M}) p-value matrix, got {len(metrics)} and {p.shape}")
    order = np.argsort(-np.where(np.isnan(est), -np.inf, est), kind="stable")
    order = order[~np.isnan(est[order])]
    if correction == "holm":
        p = holm_upper(p, order)
    cluster = np.zeros(M, dtype=np.int64)
    used = np.full(M, np.nan)
    if order.size:
        current, start = 1, 0
        cluster[order[0]] = 1
        for pos in range(1, order.size):
            i = order[pos]
            tested = order[start:start + 1] if against == "best" else order[start:pos]
            pij = np.nan_to_num(p[tested, i], nan=1.0)
            used[i] = pij.min()
            if (pij <= alpha).any():
                current += 1
                start = pos
            cluster[i] = current
    return Clusters(tuple(metrics), est, order, cluster, used, float(alpha), correction, against)
