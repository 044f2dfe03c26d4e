"""Pairwise accuracy on SEGs: a TS2 meta-metric that counts ties the way Deutsch et al. (2023) do.

The pairs of one SEG are its pairs of images that lie on a common walk (the images Ord correlates).
Gold: fewer errors is better (gold value = minus the node's error count). A pair at different error
levels is one the gold orders; a pair at the same level (two images of one node) is a gold tie. Each
metric's outcome counts per pair (:func:`ts2viz.metaeval.pairwise.pair_counts`) give, per SEG:

    acc_eq = (C + T_both) / (C + D + T_metric + T_gold + T_both)        (gold_ties="include", default)

so ordering two images of one node is as wrong as tying two images at different levels, and a metric
whose scores are a few discrete values (TIFA, DSG) is not treated unfairly against continuous ones: each
metric gets a **tie threshold** epsilon (scores closer than epsilon count as a tie) chosen by tie
calibration (:func:`ts2viz.metaeval.pairwise.tie_calibration`: the epsilon maximising acc_eq). The
threshold is **cross-validated over SEGs**: the averaged SEGs are split into ``folds`` folds (stratified
by partition, seeded), and a SEG's accuracy uses the epsilon fitted on the pooled pairs of the other folds'
SEGs, never on its own. ``gold_ties="exclude"`` scores the pairs at different levels only (a metric tie
then counts as wrong, or as half right with ``metric_ties="half"``).

A metric's leaderboard value is the mean of its per-SEG accuracies (NaN SEGs skipped), overall and per
partition, like Ord. Chance baselines per SEG, in expectation:

- ``chance_random``: continuous random scores (no ties): every ordered pair right with probability 1/2,
  every gold tie wrong: ``0.5 * n_ordered / n_pairs`` (``"exclude"``: 0.5);
- ``chance_ties``: random scores with the metric's own tie rate ``t`` on that SEG (each pair tied with
  probability ``t``, otherwise ordered at random): ``((1 - t) * 0.5 * n_ordered + t * n_gold_ties) /
  n_pairs`` (``"exclude"``: ``(1 - t) * 0.5``, or 0.5 with ``metric_ties="half"``).

Pure numpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError
from .pairwise import PairIndex, accuracy_from_counts, pair_counts, tie_calibration

#: default number of cross-validation folds over SEGs
FOLDS = 5


def walk_pairs(structure) -> tuple[PairIndex, np.ndarray]:
    """Pairs of images of one SEG that share a walk, and each image's gold value (minus its level).

    Parameters
    ----------
    structure : SegStructure
        The walk layout of the SEG (:class:`ts2viz.metametrics.structure.SegStructure`; images in its
        ``file_names`` order).

    Returns
    -------
    pairs : PairIndex
        The image pairs on a common walk.
    gold : numpy.ndarray
        Minus each image's error count.
    """
    on = structure.image_weights > 0                                  # (walks, images)
    co = (on.T.astype(np.int64) @ on.astype(np.int64)) > 0
    i, j = np.nonzero(np.triu(co, k=1))
    return PairIndex(i.astype(np.int64), j.astype(np.int64)), -np.asarray(structure.levels, dtype=np.float64)


def fold_assignment(partitions: Sequence[str], folds: int, seed: int) -> np.ndarray:
    """Fold of each SEG: within each partition, a seeded shuffle dealt round-robin into ``folds`` folds.

    Parameters
    ----------
    partitions : sequence of str
        Partition of each SEG.
    folds : int
        Number of folds.
    seed : int
        Seed of the shuffle.

    Returns
    -------
    numpy.ndarray
        int64 fold of each SEG (0 .. folds - 1).
    """
    parts = np.asarray(partitions)
    rng = np.random.default_rng(seed)
    out = np.zeros(parts.size, dtype=np.int64)
    start = 0
    for p in dict.fromkeys(parts.tolist()):
        idx = np.flatnonzero(parts == p)
        perm = rng.permutation(idx.size)
        out[idx[perm]] = (np.arange(idx.size) + start) % folds
        start += idx.size
    return out


@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class SegPairwise:
    """Pairwise accuracy of every metric on every SEG (see :func:`seg_pairwise`).

    Attributes
    ----------
    metrics : tuple of str
        Metric names.
    seg_ids : tuple of int
        The SEGs.
    partitions : tuple of str
        Partition of each SEG.
    excluded : tuple of int
        SEGs left out of the averages.
    accuracy : numpy.ndarray
        (SEGs, metrics) pairwise accuracy.
    tie_rate : numpy.ndarray
        (SEGs, metrics) share of the SEG's counted pairs the metric ties at its epsilon.
    chance_random : numpy.ndarray
        (SEGs,) expected accuracy of continuous random scores.
    chance_ties : numpy.ndarray
        (SEGs, metrics) expected accuracy of random scores with the metric's tie rate.
    epsilon : numpy.ndarray
        (SEGs, metrics) the threshold used on each SEG.
    epsilon_all : numpy.ndarray
        (metrics,) the threshold fitted on every averaged SEG (for reporting; never used to score an
        averaged SEG).
    n_pairs, n_gold_ties : numpy.ndarray
        (SEGs,) pairs and gold-tied pairs of each SEG.
    fold : numpy.ndarray
        (SEGs,) fold of each SEG; -1 for a SEG left out of the averages (scored with ``epsilon_all``).
    folds : int
        The number of folds used.
    gold_ties, metric_ties : str
        The counting options.
    """

    metrics: tuple[str, ...]
    seg_ids: tuple[int, ...]
    partitions: tuple[str, ...]
    excluded: tuple[int, ...]
    accuracy: np.ndarray
    tie_rate: np.ndarray
    chance_random: np.ndarray
    chance_ties: np.ndarray
    epsilon: np.ndarray
    epsilon_all: np.ndarray
    n_pairs: np.ndarray
    n_gold_ties: np.ndarray
    fold: np.ndarray
    folds: int
    gold_ties: str
    metric_ties: str

    def _groups(self) -> list[tuple[str, np.ndarray]]:
        from ..metametrics.results import ordered_partitions

        keep = np.array([s not in set(self.excluded) for s in self.seg_ids])
        parts = np.asarray(self.partitions)
        return [("avg", np.flatnonzero(keep))] + [(p.lower(), np.flatnonzero(keep & (parts == p)))
                                                  for p in ordered_partitions(self.partitions)]

    def averages(self) -> dict[str, np.ndarray]:
        """Per-metric means over the averaged SEGs, overall and per partition.

        Returns
        -------
        dict[str, numpy.ndarray]
            ``pacc_{group}``, ``pacc_chance_{group}`` (random scores), ``pacc_chance_ties_{group}``,
            ``pacc_tie_rate_{group}``, each (metrics,), groups ``avg`` then the partitions lower-cased.

        Notes
        -----
        NaN policy: NaN SEG values are skipped.
        """
        out = {}
        M = len(self.metrics)
        for name, idx in self._groups():
            for key, v in (("pacc", self.accuracy), ("pacc_chance_ties", self.chance_ties),
                           ("pacc_tie_rate", self.tie_rate),
                           ("pacc_chance", np.repeat(self.chance_random[:, None], M, axis=1))):
                out[f"{key}_{name}"] = _nanmean(v[idx])
        return out


def _nanmean(v: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(v)
    n = ok.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(ok, v, 0.0).sum(0) / np.maximum(n, 1), np.nan)


def seg_pairwise(mm, scores, *, metrics: Sequence[str] | None = None, folds: int = FOLDS, seed: int = 0,
                 gold_ties: str = "include", metric_ties: str = "wrong") -> SegPairwise:
    """Cross-validated, tie-calibrated pairwise accuracy of ``mm.metrics`` on every SEG of ``mm``.

    Parameters
    ----------
    mm : MetaMetrics
        :class:`ts2viz.metametrics.results.MetaMetrics` (its SEGs, walk layouts, partitions, left-out SEGs).
    scores : Scores
        :class:`ts2viz.scores.Scores` (oriented: lower-is-better metrics negated).
    metrics : sequence of str, optional
        Metric names in ``scores`` (default: ``mm.metrics``); ``mm`` gives the SEGs only.
    folds : int, default 5
        Cross-validation folds over the averaged SEGs (2 or more). With fewer averaged SEGs than folds,
        each SEG is its own fold (leave one out); with fewer than two, every threshold is 0 (exact ties
        only: there is no other SEG to fit it on). ``result.folds`` is the number used.
    seed : int, default 0
        Seed of the fold assignment.
    gold_ties, metric_ties : str
        See :func:`ts2viz.metaeval.pairwise.pairwise_accuracy`.

    Returns
    -------
    SegPairwise
        Per-SEG accuracies, tie rates, chance baselines and thresholds.

    Raises
    ------
    InputError
        If ``folds`` is not an integer of at least 2, or a metric is not in ``scores``.

    Notes
    -----
    NaN policy: pairs with an unscored image are left out for that metric; a SEG with no counted pair
    has NaN accuracy (skipped in the means).

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metaeval.seg_pairwise import seg_pairwise
    >>> scores = bundled_scores()
    >>> mm = compute(load_dataset("ts2"), scores, ["CLIPScore", "DSG-mPLUG"], policy="paper")
    >>> av = seg_pairwise(mm, scores).averages()
    >>> av["pacc_avg"].round(3).tolist(), av["pacc_chance_avg"].round(3).tolist()
    ([0.688, 0.673], [0.338, 0.338])
    """
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise InputError(f"the number of folds must be an integer of at least 2, got {folds!r}")
    metrics = list(mm.metrics if metrics is None else metrics)
    M, S = len(metrics), len(mm.seg_ids)
    # every SEG's items side by side: one score matrix, one gold vector, one pair list with offsets
    blocks, golds, firsts, seconds, pair_seg = [], [], [], [], []
    offset = 0
    for s, sid in enumerate(mm.seg_ids):
        st = mm.walk_stats(sid)[0]
        pairs, gold = walk_pairs(st)
        blocks.append(scores.aligned(st.file_names, metrics))
        golds.append(gold)
        firsts.append(pairs.first + offset)
        seconds.append(pairs.second + offset)
        pair_seg.append(np.full(len(pairs), s))
        offset += gold.size
    X = np.concatenate(blocks, axis=0).T                                       # (M, items)
    gold = np.concatenate(golds)
    first, second = np.concatenate(firsts), np.concatenate(seconds)
    pair_seg = np.concatenate(pair_seg)
    excluded = set(mm.excluded)
    averaged = np.array([sid not in excluded for sid in mm.seg_ids])
    fold = np.full(S, -1, dtype=np.int64)
    idx = np.flatnonzero(averaged)
    # fewer SEGs than folds: leave one SEG out; fewer than two: nothing to fit on but the SEG itself, so
    # exact ties only (epsilon 0)
    folds = min(int(folds), int(idx.size))
    if folds >= 2:
        fold[idx] = fold_assignment([mm.partitions[i] for i in idx], folds, seed)

    def fit(seg_mask: np.ndarray) -> np.ndarray:
        keep = seg_mask[pair_seg]
        return np.asarray(tie_calibration(X, gold, PairIndex(first[keep], second[keep]), gold_ties=gold_ties,
                                          metric_ties=metric_ties).epsilon, dtype=np.float64)

    if folds >= 2:
        eps_fold = np.stack([fit(averaged & (fold != f)) for f in range(folds)])    # (folds, M)
        eps_all = fit(averaged)
        epsilon = np.where((fold >= 0)[:, None], eps_fold[np.maximum(fold, 0)], eps_all[None, :])
    else:
        eps_all = np.zeros(M)
        epsilon = np.zeros((S, M))
    acc = np.full((S, M), np.nan)
    tie_rate = np.full((S, M), np.nan)
    chance_ties = np.full((S, M), np.nan)
    chance_random = np.full(S, np.nan)
    n_pairs = np.zeros(S, dtype=np.int64)
    n_gtie = np.zeros(S, dtype=np.int64)
    bounds = np.r_[0, np.cumsum([len(f) for f in firsts])]
    for s in range(S):
        p = PairIndex(first[bounds[s]:bounds[s + 1]], second[bounds[s]:bounds[s + 1]])
        c = pair_counts(X, gold, p, epsilon[s])
        acc[s] = accuracy_from_counts(c, gold_ties=gold_ties, metric_ties=metric_ties)
        g_tie = gold[p.first] == gold[p.second]
        n_pairs[s], n_gtie[s] = len(p), int(g_tie.sum())
        n_ord = len(p) - n_gtie[s]
        counted = c.concordant + c.discordant + c.ties_metric + (c.ties_gold + c.ties_both
                                                                 if gold_ties == "include" else 0.0)
        ties = c.ties_metric + (c.ties_both if gold_ties == "include" else 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(counted > 0, ties / np.maximum(counted, 1), np.nan)
        tie_rate[s] = t
        if gold_ties == "include":
            if len(p):
                chance_random[s] = 0.5 * n_ord / len(p)
                chance_ties[s] = ((1 - t) * 0.5 * n_ord + t * n_gtie[s]) / len(p)
        elif n_ord:
            chance_random[s] = 0.5
            chance_ties[s] = np.where(np.isnan(t), np.nan, 0.5) if metric_ties == "half" else (1 - t) * 0.5
    return SegPairwise(tuple(metrics), tuple(int(s) for s in mm.seg_ids), tuple(mm.partitions),
                       tuple(int(s) for s in mm.excluded), acc, tie_rate, chance_random, chance_ties, epsilon,
                       eps_all, n_pairs, n_gtie, fold, int(folds), gold_ties, metric_ties)


@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class PairwiseIntervals:
    """Bootstrap intervals of the pairwise-accuracy cells.

    Attributes
    ----------
    cells : tuple of str
        ``pacc_{group}``.
    metrics : tuple of str
        Metric names.
    estimate, low, high : numpy.ndarray
        (cells, metrics) the mean accuracy and its percentile interval.
    """

    cells: tuple[str, ...]
    metrics: tuple[str, ...]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray


def pairwise_intervals(res: SegPairwise, counts: np.ndarray, confidence: float = 0.95) -> PairwiseIntervals:
    """Percentile bootstrap intervals of each metric's mean pairwise accuracy per group.

    Parameters
    ----------
    res : SegPairwise
        Per-SEG accuracies.
    counts : numpy.ndarray
        Resamples as (resamples, SEGs) count matrices over ``res.seg_ids`` (e.g.
        :func:`ts2viz.metametrics.intervals.resample_counts` of the same meta-metrics: then the resamples
        are those of the leaderboard's other intervals).
    confidence : float, default 0.95
        Two-sided level.

    Returns
    -------
    PairwiseIntervals
        Estimate and interval per group and metric.

    Notes
    -----
    The tie thresholds are held fixed (the interval is the SEG sampling uncertainty of the accuracy,
    not of the threshold's fit). NaN policy: NaN SEG accuracies are skipped in every resampled mean.
    """
    from ..statistics.bootstrap import quantiles

    v = res.accuracy
    ok = ~np.isnan(v)
    x = np.where(ok, v, 0.0)
    cells, est, lows, highs = [], [], [], []
    alpha = 1.0 - confidence
    for name, idx in res._groups():
        c = counts[:, idx].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (c @ x[idx]) / (c @ ok[idx].astype(np.float64))         # (B, M)
        lo, hi = quantiles(means.T, [alpha / 2, 1 - alpha / 2])
        cells.append(f"pacc_{name}")
        est.append(_nanmean(v[idx]))
        lows.append(lo)
        highs.append(hi)
    return PairwiseIntervals(tuple(cells), res.metrics, np.array(est), np.array(lows), np.array(highs))
