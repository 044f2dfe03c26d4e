"""Pairwise accuracy of a metric against a gold ordering, with tie calibration.

A *pair* is two items (images) whose gold values (human ratings, or minus the error count of a SEG
node) and metric scores are compared. Each pair falls in one of five outcomes:

=================  ===========================  ===========================
                   metric orders the pair       metric ties the pair
=================  ===========================  ===========================
gold orders it     concordant ``C`` / discordant ``D``   ``T_metric``
gold ties it       ``T_gold``                   ``T_both``
=================  ===========================  ===========================

A metric *ties* a pair when its scores differ by at most ``epsilon`` (``epsilon = 0``: exact ties only).

**Pairwise accuracy with ties** (``acc_eq``, Deutsch, Foster & Freitag 2023, "Ties Matter: Meta-
Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration")::

    acc_eq = (C + T_both) / (C + D + T_metric + T_gold + T_both)

a gold tie is predicted correctly only by a metric tie, and a metric tie of a pair the gold orders is
wrong. **Tie calibration** picks the ``epsilon`` that maximises ``acc_eq``: it gives metrics with few
exact ties (continuous scores) the same chance to predict ties as metrics with many (TIFA, DSG: means
of a few yes/no answers). The fitted ``epsilon`` is optimistic on the data it was fitted on; fit it on
held-out items (:func:`tie_calibration` on one part, :func:`pairwise_accuracy` on the other) when the
accuracy is reported.

With ``gold_ties="exclude"`` only the pairs the gold orders count (the pair-wise task of Gecko: pairs of
images that the raters rate differently); a metric tie then counts as wrong (``metric_ties="wrong"``,
``acc_eq``'s rule) or as half right (``metric_ties="half"``, the expected accuracy of breaking the
tie at random).

All functions are pure numpy, vectorised over metrics: ``metric`` may be one score vector ``(n,)`` or a
matrix ``(k, n)`` of ``k`` metrics' scores for the same ``n`` items; results then have shape ``(k,)``.
NaN policy: a pair with a NaN gold value or a NaN metric score is left out (for that metric only).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GOLD_TIES = ("include", "exclude")
METRIC_TIES = ("wrong", "half")


@dataclass(frozen=True)
class PairIndex:
    """The two items of each pair: ``first[p]`` and ``second[p]`` (integer positions).

    Attributes
    ----------
    first, second : numpy.ndarray
        int64 positions of the pairs' items, same length.
    """

    first: np.ndarray
    second: np.ndarray

    def __len__(self) -> int:
        """The number of pairs."""
        return int(self.first.size)


def pairs_within(groups, *, require_distinct=None) -> PairIndex:
    """Every unordered pair of items that share a group label (e.g. the images of one prompt).

    Parameters
    ----------
    groups : array_like, shape (n,)
        Group label of each item (any hashable dtype numpy can sort).
    require_distinct : array_like, shape (n,), optional
        If given, only pairs whose values here differ are kept (e.g. pairs of different T2I models,
        or of different SEG error levels). NaN never differs from anything.

    Returns
    -------
    PairIndex
        Pairs with ``first < second``, ordered by group then position.

    Examples
    --------
    >>> from ts2viz.metaeval.pairwise import pairs_within
    >>> pairs = pairs_within(["a", "a", "a", "b", "b"])
    >>> pairs.first.tolist(), pairs.second.tolist()
    ([0, 0, 1, 3], [1, 2, 2, 4])
    """
    g = np.asarray(groups)
    order = np.argsort(g, kind="mergesort")
    gs = g[order]
    n = gs.size
    if n < 2:
        empty = np.zeros(0, dtype=np.int64)
        return PairIndex(empty, empty.copy())
    start = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    sizes = np.diff(np.r_[start, n])
    firsts, seconds = [], []
    for size in np.unique(sizes[sizes >= 2]):
        a, b = np.triu_indices(int(size), k=1)
        starts = start[sizes == size]
        firsts.append((starts[:, None] + a[None, :]).ravel())
        seconds.append((starts[:, None] + b[None, :]).ravel())
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return PairIndex(empty, empty.copy())
    i = order[np.concatenate(firsts)]
    j = order[np.concatenate(seconds)]
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    if require_distinct is not None:
        d = np.asarray(require_distinct)
        keep = d[lo] != d[hi]
        lo, hi = lo[keep], hi[keep]
    srt = np.lexsort((hi, lo, g[lo]))
    return PairIndex(lo[srt].astype(np.int64), hi[srt].astype(np.int64))


@dataclass(frozen=True)
class PairCounts:
    """Counts of the five pair outcomes (arrays of shape ``(k,)``, or floats for one metric).

    Attributes
    ----------
    concordant, discordant : numpy.ndarray or float
        Pairs both order, the same way or the opposite way.
    ties_metric : numpy.ndarray or float
        The gold orders the pair, the metric ties it.
    ties_gold : numpy.ndarray or float
        The gold ties the pair, the metric orders it.
    ties_both : numpy.ndarray or float
        Both tie the pair.
    """

    concordant: np.ndarray
    discordant: np.ndarray
    ties_metric: np.ndarray   # gold orders the pair, the metric ties it
    ties_gold: np.ndarray     # gold ties the pair, the metric orders it
    ties_both: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """All counted pairs (the sum of the five outcomes)."""
        return self.concordant + self.discordant + self.ties_metric + self.ties_gold + self.ties_both


def _as_matrix(metric) -> tuple[np.ndarray, bool]:
    m = np.asarray(metric, dtype=np.float64)
    if m.ndim == 1:
        return m[None, :], True
    if m.ndim != 2:
        raise ValueError(f"metric must be a vector (n,) or a matrix (k, n); got shape {m.shape}")
    return m, False


def _differences(metric, gold, pairs: PairIndex) -> tuple[np.ndarray, np.ndarray, bool]:
    m, single = _as_matrix(metric)
    g = np.asarray(gold, dtype=np.float64).ravel()
    if m.shape[1] != g.size:
        raise ValueError(f"metric has {m.shape[1]} items but gold has {g.size}")
    i, j = np.asarray(pairs.first), np.asarray(pairs.second)
    if i.size and (min(i.min(), j.min()) < 0 or max(i.max(), j.max()) >= g.size):
        raise ValueError("pair index out of range")
    return m[:, i] - m[:, j], g[i] - g[j], single


def _check(gold_ties: str, metric_ties: str) -> None:
    if gold_ties not in GOLD_TIES:
        raise ValueError(f"gold_ties must be one of {GOLD_TIES}, not {gold_ties!r}")
    if metric_ties not in METRIC_TIES:
        raise ValueError(f"metric_ties must be one of {METRIC_TIES}, not {metric_ties!r}")


def pair_counts(metric, gold, pairs: PairIndex, epsilon=0.0) -> PairCounts:
    """Count the five outcomes of ``pairs`` for each metric.

    Parameters
    ----------
    metric : array_like, shape (n,) or (k, n)
        Scores, higher = better.
    gold : array_like, shape (n,)
        Gold values, higher = better (use minus the error count for SEGs).
    pairs : PairIndex
        The pairs to count.
    epsilon : float or array_like of shape (k,), default 0.0
        A metric ties a pair when ``|score difference| <= epsilon``. Gold ties are exact.

    Returns
    -------
    PairCounts
        Floats for a vector ``metric``, arrays of shape ``(k,)`` for a matrix.

    Raises
    ------
    ValueError
        If the shapes do not agree or a pair index is out of range.

    Notes
    -----
    NaN policy: a pair with a NaN gold value or a NaN score is not counted (for that metric only).

    Examples
    --------
    >>> from ts2viz.metaeval.pairwise import pair_counts, pairs_within
    >>> pairs = pairs_within(["a", "a", "a", "b", "b"])
    >>> pair_counts([0.9, 0.5, 0.52, 0.3, 0.35], [3.0, 2.0, 2.0, 1.0, 4.0], pairs)
    PairCounts(concordant=3.0, discordant=0.0, ties_metric=0.0, ties_gold=1.0, ties_both=0.0)
    """
    dm, dg, single = _differences(metric, gold, pairs)
    eps = np.asarray(epsilon, dtype=np.float64).reshape(-1, 1)
    ok = ~np.isnan(dm) & ~np.isnan(dg)[None, :]
    mtie = (np.abs(dm) <= eps) & ok
    gtie = (dg == 0)[None, :] & ok
    agree = (np.sign(dm) == np.sign(dg)[None, :]) & ok
    both = (mtie & gtie).sum(1)
    out = PairCounts(
        concordant=(agree & ~mtie & ~gtie).sum(1).astype(np.float64),
        discordant=(~agree & ok & ~mtie & ~gtie).sum(1).astype(np.float64),
        ties_metric=(mtie & ~gtie).sum(1).astype(np.float64),
        ties_gold=(gtie & ~mtie).sum(1).astype(np.float64),
        ties_both=both.astype(np.float64),
    )
    if single:
        return PairCounts(*(float(getattr(out, f)[0]) for f in
                            ("concordant", "discordant", "ties_metric", "ties_gold", "ties_both")))
    return out


def accuracy_from_counts(c: PairCounts, *, gold_ties: str = "include", metric_ties: str = "wrong"):
    """Pairwise accuracy from outcome counts (see the module docstring for the two options).

    Parameters
    ----------
    c : PairCounts
        The outcome counts.
    gold_ties : {'include', 'exclude'}, default 'include'
        Count the pairs the gold ties (right only when the metric ties them too), or leave them out.
    metric_ties : {'wrong', 'half'}, default 'wrong'
        A metric tie on a pair the gold orders counts wrong or half right.

    Returns
    -------
    float or numpy.ndarray
        The accuracy, NaN where no pair counts.

    Raises
    ------
    ValueError
        If an option is unknown.

    Notes
    -----
    ``"include"``: (C + T_both + h T_metric) / (C + D + T_metric + T_gold + T_both); ``"exclude"``:
    (C + h T_metric) / (C + D + T_metric), with h = 0.5 for ``metric_ties="half"`` and 0 otherwise.
    """
    _check(gold_ties, metric_ties)
    tie_credit = 0.5 if metric_ties == "half" else 0.0
    num = np.asarray(c.concordant) + tie_credit * np.asarray(c.ties_metric)
    den = np.asarray(c.concordant) + np.asarray(c.discordant) + np.asarray(c.ties_metric)
    if gold_ties == "include":
        num = num + np.asarray(c.ties_both)
        den = den + np.asarray(c.ties_gold) + np.asarray(c.ties_both)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return float(acc) if acc.ndim == 0 else acc


def pairwise_accuracy(metric, gold, pairs: PairIndex, epsilon=0.0, *, gold_ties: str = "include",
                      metric_ties: str = "wrong"):
    """Pairwise accuracy of each metric on ``pairs`` at tie threshold ``epsilon``.

    Parameters
    ----------
    metric : array_like, shape (n,) or (k, n)
        Scores, higher = better.
    gold : array_like, shape (n,)
        Gold values, higher = better.
    pairs : PairIndex
        The pairs.
    epsilon : float or array_like of shape (k,), default 0.0
        The metric's tie threshold.
    gold_ties : {'include', 'exclude'}, default 'include'
        ``"include"`` with ``metric_ties="wrong"`` is Deutsch et al. (2023)'s ``acc_eq``; ``"exclude"``
        counts only the pairs the gold orders (Gecko's pair-wise task).
    metric_ties : {'wrong', 'half'}, default 'wrong'
        A metric tie on a pair the gold orders counts wrong or half right.

    Returns
    -------
    float or numpy.ndarray
        A float for a vector ``metric`` and an array ``(k,)`` for a matrix; NaN when no pair counts.

    Raises
    ------
    ValueError
        If an option is unknown or the shapes do not agree.

    Notes
    -----
    NaN policy: a pair with a NaN gold value or score is left out (for that metric only).

    Examples
    --------
    Two prompts; the raters tie images 1 and 2. The metric orders every other pair right, so its
    accuracy is 3/4 with exact ties and 1 once a difference of 0.03 counts as a tie:

    >>> from ts2viz.metaeval.pairwise import pairs_within, pairwise_accuracy
    >>> pairs = pairs_within(["a", "a", "a", "b", "b"])
    >>> metric, human = [0.9, 0.5, 0.52, 0.3, 0.35], [3.0, 2.0, 2.0, 1.0, 4.0]
    >>> pairwise_accuracy(metric, human, pairs), pairwise_accuracy(metric, human, pairs, 0.03)
    (0.75, 1.0)
    >>> pairwise_accuracy(metric, human, pairs, gold_ties="exclude")
    1.0
    """
    _check(gold_ties, metric_ties)
    return accuracy_from_counts(pair_counts(metric, gold, pairs, epsilon),
                                gold_ties=gold_ties, metric_ties=metric_ties)


@dataclass(frozen=True)
class TieCalibration:
    """The fitted tie threshold and the accuracy it gives on the pairs it was fitted on.

    Attributes
    ----------
    epsilon : numpy.ndarray or float
        (k,) the thresholds (a float for one metric).
    accuracy : numpy.ndarray or float
        (k,) the accuracies at them: optimistic (fitted on the same pairs).
    """

    epsilon: np.ndarray    # (k,) or float
    accuracy: np.ndarray   # (k,) or float: optimistic (fitted on the same pairs)


def tie_calibration(metric, gold, pairs: PairIndex, *, gold_ties: str = "include",
                    metric_ties: str = "wrong") -> TieCalibration:
    """The tie threshold ``epsilon >= 0`` that maximises pairwise accuracy on ``pairs``.

    Parameters
    ----------
    metric : array_like, shape (n,) or (k, n)
        Scores, higher = better.
    gold : array_like, shape (n,)
        Gold values, higher = better.
    pairs : PairIndex
        The pairs.
    gold_ties, metric_ties : str
        As in :func:`pairwise_accuracy`.

    Returns
    -------
    TieCalibration
        ``epsilon`` and the (in-sample) accuracy; floats for a vector ``metric``, arrays for a matrix.
        A metric with no valid pair gets ``epsilon = 0`` and accuracy NaN.

    Raises
    ------
    ValueError
        If an option is unknown or the shapes do not agree.

    Notes
    -----
    Candidates are 0 and every absolute score difference of a pair (accuracy only changes there), as in
    Deutsch et al. (2023); among equally good thresholds the smallest is taken. Exact, O(P log P) per
    metric (one sort of the pairs' differences), no grid.

    Examples
    --------
    >>> from ts2viz.metaeval.pairwise import pairs_within, tie_calibration
    >>> pairs = pairs_within(["a", "a", "a", "b", "b"])
    >>> cal = tie_calibration([0.9, 0.5, 0.52, 0.3, 0.35], [3.0, 2.0, 2.0, 1.0, 4.0], pairs)
    >>> round(cal.epsilon, 4), cal.accuracy
    (0.02, 1.0)
    """
    _check(gold_ties, metric_ties)
    dm, dg, single = _differences(metric, gold, pairs)
    k = dm.shape[0]
    eps_out = np.zeros(k)
    acc_out = np.full(k, np.nan)
    tie_credit = 0.5 if metric_ties == "half" else 0.0
    for r in range(k):
        ok = ~np.isnan(dm[r]) & ~np.isnan(dg)
        d = np.abs(dm[r][ok])
        g = dg[ok]
        if gold_ties == "exclude":
            keep = g != 0
            d, g, s = d[keep], g[keep], np.sign(dm[r][ok][keep])
        else:
            s = np.sign(dm[r][ok])
        if d.size == 0:
            continue
        gtie = g == 0
        agree = (s == np.sign(g)) & ~gtie & (d > 0)
        order = np.argsort(d, kind="mergesort")
        ds = d[order]
        # Moving a pair from "metric orders it" to "metric ties it" changes the numerator by:
        # +1 for a gold tie, -1 (+tie_credit) for a pair it ordered correctly, +tie_credit otherwise.
        gain = np.where(gtie, 1.0, np.where(agree, tie_credit - 1.0, tie_credit))[order]
        base = float(agree.sum())           # numerator with no metric tie at all
        cum = np.cumsum(gain)
        last = np.r_[ds[1:] != ds[:-1], True]       # last pair of each distinct difference
        cand_eps = np.r_[0.0, ds[last]]
        # at epsilon = 0 the exact ties (d == 0) are ties already
        n_zero = int(np.searchsorted(ds, 0.0, side="right"))
        at_zero = base + (cum[n_zero - 1] if n_zero else 0.0)
        cand_num = np.r_[at_zero, base + cum[last]]
        best = int(np.argmax(cand_num))     # first maximum = smallest epsilon
        eps_out[r] = cand_eps[best]
        acc_out[r] = cand_num[best] / d.size
    if single:
        return TieCalibration(float(eps_out[0]), float(acc_out[0]))
    return TieCalibration(eps_out, acc_out)
