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

    metrics : names in the input order. order : indices, best first. cluster : (M,) cluster number
    (1 = top) per metric in the input order, 0 for a metric without an estimate. pvalue_used : (M,) the
    (corrected) p-value that decided each metric's placement (vs. the best of the cluster it was tested
    against; NaN for the very first metric).
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
        """Metric names per cluster, best first."""
        out: dict[int, list[str]] = {}
        for i in self.order:
            if self.cluster[i] > 0:
                out.setdefault(int(self.cluster[i]), []).append(self.metrics[i])
        return [out[k] for k in sorted(out)]


def holm_upper(pvalue: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Holm-corrected copy of a one-sided p matrix over the pairs (higher-ranked i, lower-ranked j)."""
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
    metrics : names (M,).
    estimate : (M,) meta-metric values, higher = better; NaN metrics get cluster 0 and are not placed.
    pvalue : (M, M) one-sided p-values, ``pvalue[i, j]`` = p of "i better than j" (only entries with i
        above j in the ranking are read).
    alpha : significance level (default 0.05).
    correction : ``"none"`` or ``"holm"`` (see the module docstring).
    against : ``"best"`` (a metric is tested against the best of the current cluster) or ``"any"``
        (against every member of the current cluster, as mt-metrics-eval's AssignRanks).

    Returns
    -------
    :class:`Clusters`. Ties in ``estimate`` keep the input order.
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
