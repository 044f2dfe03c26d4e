"""Permutation tests and significance clusters for the human-gold meta-evaluation (rated sets).

The question: *does metric A agree with the human ratings better than metric B, by more than chance?*
The statistics are those of ``ts2viz humaneval`` (:mod:`ts2viz.metaeval.humaneval`), computed over the
whole rated set (**pooled**, Gecko's point-wise task): Spearman's rho, Kendall's tau (b or c), Pearson's
r of the per-image scores with the mean human rating, and the pair-wise accuracy on same-prompt image
pairs the raters order differently (a metric tie wrong or half right).

The test (PERM-BOTH, Deutsch et al. 2021; the ideas of google-research/mt-metrics-eval): under the null
the two metrics are exchangeable, so every image's two scores are swapped with probability 1/2,
independently (images of one prompt too), and both statistics are recomputed; the p-value is the share
of permutations whose difference A - B is at least the observed one
(:func:`ts2viz.significance.permutation.permutation_test`, with the whole set as its one unit: a pooled
statistic is not a mean over prompts). Before swapping, each metric's scores are z-scored over the
images of the test (an affine map per metric: every pooled statistic above is unchanged by it, so the
observed difference is the table's, while a swap no longer mixes two scales such as CLIPScore's 20-40
with TIFA's 0-1). Z-scoring within each prompt instead would change each metric's own pooled
correlation (the prompts' levels would be removed), so it is not offered.

Images: those with a human rating and a score from both metrics (an image one metric did not score is
left out of that pair's test; on the bundled sets every metric scores every image).

Pure numpy: no scipy, torch or gradio.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError
from ..metaeval.pairwise import pairs_within, pairwise_accuracy
from .clusters import Clusters, significance_clusters
from .correlation import rank_rows
from .permutation import (DEFAULT_SETTINGS, PairwisePermutation, PermutationResult, PermutationSettings,
                          permutation_test)

#: the statistics a test can compare (columns of ``ts2viz humaneval``'s table)
STATISTICS = ("spearman", "kendall", "pearson", "pairwise_acc")


@dataclass(frozen=True)
class GoldStatistic:
    """Which pooled statistic, and the humaneval settings that change it.

    stat : one of :data:`STATISTICS`. kendall : ``"b"`` or ``"c"`` (tau variant). spearman :
    ``"textbook"`` or ``"np-corrcoef"`` (Pearson's r, what TIFA's notebook labels Spearman).
    metric_ties : pair-wise accuracy: a metric tie on a pair the raters order counts ``"wrong"`` or
    ``"half"``.
    """

    stat: str = "spearman"
    kendall: str = "b"
    spearman: str = "textbook"
    metric_ties: str = "wrong"

    def __post_init__(self) -> None:
        if self.stat not in STATISTICS:
            raise InputError(f"statistic must be one of {', '.join(STATISTICS)}, got {self.stat!r}")
        if self.kendall not in ("b", "c"):
            raise InputError(f"Kendall variant must be b or c, not {self.kendall!r}")
        if self.spearman not in ("textbook", "np-corrcoef"):
            raise InputError(f"spearman must be textbook or np-corrcoef, not {self.spearman!r}")
        if self.metric_ties not in ("wrong", "half"):
            raise InputError(f"metric ties must count 'wrong' or 'half', not {self.metric_ties!r}")

    @classmethod
    def from_settings(cls, stat: str, settings) -> "GoldStatistic":
        """From a :class:`ts2viz.metaeval.HumanEvalSettings` (its Kendall, Spearman and ties choices)."""
        return cls(stat, settings.kendall, settings.spearman, settings.metric_ties)

    def label(self) -> str:
        if self.stat == "kendall":
            return f"Kendall tau-{self.kendall}"
        if self.stat == "spearman":
            return "Spearman" if self.spearman == "textbook" else "Spearman (np-corrcoef: Pearson's r)"
        return "Pearson" if self.stat == "pearson" else f"pair-wise accuracy (metric ties {self.metric_ties})"


def _pearson_rows(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    xc = x - x.mean(-1, keepdims=True)
    gc = g - g.mean()
    vx = (xc * xc).sum(-1)
    vg = float((gc * gc).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * gc).sum(-1) / np.sqrt(vx * vg)
    return np.where((vx > 0) & (vg > 0), np.clip(r, -1.0, 1.0), np.nan)


def _tie_pairs_rows(srt: np.ndarray) -> np.ndarray:
    """Pairs tied within each row of a row-sorted array: (R,)."""
    R, n = srt.shape
    new = np.ones(srt.shape, bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    gid = np.cumsum(new, axis=1) - 1 + (np.arange(R, dtype=np.int64) * n)[:, None]
    c = np.bincount(gid.ravel(), minlength=R * n).astype(np.float64)
    return (c * (c - 1) / 2).reshape(R, n).sum(1)


def inversions_rows(a: np.ndarray) -> np.ndarray:
    """Inversions (pairs i < j with a[i] > a[j], strictly) of every row of a non-negative integer array
    (R, n): (R,). A bottom-up merge sort over all rows at once (each level: two global ``searchsorted``
    calls over (row, block)-offset keys count, per element, the other half's elements before it)."""
    a = np.asarray(a, dtype=np.int64)
    R, n = a.shape
    total = np.zeros(R)
    if n < 2 or R == 0:
        return total
    size = 1 << int(np.ceil(np.log2(n)))
    big = int(a.max()) + 1                      # padding: last in every row, never above anything
    cur = np.full((R, size), big, dtype=np.int64)
    cur[:, :n] = a
    span = big + 1
    w = 1
    while w < size:
        nb = R * (size // (2 * w))              # blocks of all rows
        blocks = cur.reshape(nb, 2 * w)
        off = (np.arange(nb, dtype=np.int64) * span)[:, None]
        lk = (blocks[:, :w] + off).ravel()      # globally sorted: blocks sorted, offsets increasing
        rk = (blocks[:, w:] + off).ravel()
        start = np.repeat(np.arange(nb, dtype=np.int64) * w, w)
        le = np.searchsorted(lk, rk, side="right") - start      # left elements <= each right element
        lt = np.searchsorted(rk, lk, side="left") - start       # right elements < each left element
        total += (w - le).reshape(R, -1).sum(1)
        idx = np.tile(np.arange(w, dtype=np.int64), nb)
        base = np.repeat(np.arange(nb, dtype=np.int64) * 2 * w, w)
        merged = np.empty(R * size, dtype=np.int64)
        merged[base + idx + lt] = blocks[:, :w].ravel()
        merged[base + idx + le] = blocks[:, w:].ravel()
        cur = merged.reshape(R, size)
        w *= 2
    return total


def kendall_rows(x: np.ndarray, g: np.ndarray, variant: str = "b") -> np.ndarray:
    """Kendall's tau-b (or tau-c) of each row of a NaN-free (R, n) array with ``g`` (n,): (R,), NaN when
    undefined; O(R n log n), the formulas of :func:`ts2viz.metaeval.correlation.kendall`."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    g = np.asarray(g, dtype=np.float64).ravel()
    R, n = x.shape
    if n < 2:
        return np.full(R, np.nan)
    ox = np.argsort(x, axis=1, kind="stable")
    xs = np.take_along_axis(x, ox, 1)
    new = np.ones(xs.shape, bool)
    new[:, 1:] = xs[:, 1:] != xs[:, :-1]
    cx = np.empty((R, n), dtype=np.int64)
    np.put_along_axis(cx, ox, np.cumsum(new, axis=1) - 1, 1)
    vx = new.sum(1)
    cg = np.unique(g, return_inverse=True)[1].astype(np.int64).ravel()
    vg = int(cg.max()) + 1
    key = cg[None, :] * n + cx
    ok = np.argsort(key, axis=1, kind="stable")
    disc = inversions_rows(np.take_along_axis(cx, ok, 1))
    n0 = n * (n - 1) / 2
    n1 = _tie_pairs_rows(xs)
    n2 = float(_tie_pairs_rows(np.sort(g)[None, :])[0])
    n3 = _tie_pairs_rows(np.take_along_axis(key, ok, 1))
    s = (n0 - n1 - n2 + n3 - disc) - disc
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            den = np.sqrt((n0 - n1) * (n0 - n2))
            return np.where(den > 0, np.clip(s / np.where(den > 0, den, 1.0), -1, 1), np.nan)
        m = np.minimum(vx, vg).astype(np.float64)
        return np.where(m >= 2, np.clip(2.0 * s / (n * n * (m - 1) / np.maximum(m, 1)), -1, 1), np.nan)


def pooled_statistic(human, prompts, spec: GoldStatistic) -> Callable[[int, np.ndarray], np.ndarray]:
    """The pooled statistic ``spec`` as a one-unit statistic for :func:`permutation_test`:
    ``f(0, rows)`` -> (R,) the statistic of each score row (R, n) against ``human`` (n,), NaN-free
    inputs. ``prompts`` (n,) labels the images (pair-wise accuracy pairs images of one prompt)."""
    y = np.asarray(human, dtype=np.float64).ravel()
    pairs = pairs_within(np.asarray(prompts)) if spec.stat == "pairwise_acc" else None
    ry = rank_rows(y[None, :])[0]

    def statistic(u: int, rows: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(rows, dtype=np.float64))
        if spec.stat == "pearson" or (spec.stat == "spearman" and spec.spearman == "np-corrcoef"):
            return _pearson_rows(x, y)
        if spec.stat == "spearman":
            return _pearson_rows(rank_rows(x), ry)
        if spec.stat == "pairwise_acc":
            return np.atleast_1d(pairwise_accuracy(x, y, pairs, gold_ties="exclude", metric_ties=spec.metric_ties))
        return kendall_rows(x, y, spec.kendall)

    return statistic


def _common(a, b, human) -> np.ndarray:
    a, b, h = (np.asarray(v, dtype=np.float64).ravel() for v in (a, b, human))
    if not a.size == b.size == h.size:
        raise InputError(f"scores of A ({a.size}), B ({b.size}) and ratings ({h.size}) differ in length")
    return ~(np.isnan(a) | np.isnan(b) | np.isnan(h))


def gold_permutation_test(scores_a, scores_b, human, prompts, spec: GoldStatistic = GoldStatistic(), *,
                          alternative: str = "greater", settings: PermutationSettings = DEFAULT_SETTINGS,
                          exact: bool = False) -> PermutationResult:
    """Paired permutation test of "A's pooled ``spec`` statistic with the human ratings > B's".

    Parameters
    ----------
    scores_a, scores_b : (n,) the two metrics' per-image scores (higher = better; NaN = not scored).
    human : (n,) mean human rating per image (NaN = not rated). prompts : (n,) prompt label per image.
    spec : :class:`GoldStatistic`. alternative : ``"greater"`` (A > B) or ``"two-sided"``.
    settings : permutations, early stopping, seed (:class:`PermutationSettings`).
    exact : enumerate all 2**n swap patterns (n <= 20 images).

    Returns
    -------
    :class:`PermutationResult` over the images with a rating and both scores (see the module
    docstring); estimates are the two statistics on those images.
    """
    ok = _common(scores_a, scores_b, human)
    a = np.asarray(scores_a, dtype=np.float64).ravel()[ok]
    b = np.asarray(scores_b, dtype=np.float64).ravel()[ok]
    stat = pooled_statistic(np.asarray(human, dtype=np.float64).ravel()[ok], np.asarray(prompts)[ok], spec)
    return permutation_test([a], [b], stat, swap="items", alternative=alternative, settings=settings,
                            standardise_scores=True, exact=exact)


def metric_estimates(scores, human, prompts, spec: GoldStatistic) -> np.ndarray:
    """Each metric's pooled statistic over the images it scored (the ``ts2viz humaneval`` value): (k,)."""
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    h = np.asarray(human, dtype=np.float64).ravel()
    p = np.asarray(prompts)
    out = np.full(x.shape[0], np.nan)
    for i in range(x.shape[0]):
        ok = ~(np.isnan(x[i]) | np.isnan(h))
        if ok.sum() >= 2:
            out[i] = pooled_statistic(h[ok], p[ok], spec)(0, x[i][ok][None, :])[0]
    return out


def pairwise_gold_permutation(scores, human, prompts, spec: GoldStatistic = GoldStatistic(), *,
                              alternative: str = "greater", settings: PermutationSettings = DEFAULT_SETTINGS,
                              pairs: Sequence[tuple[int, int]] | None = None,
                              progress: bool = False) -> PairwisePermutation:
    """:func:`gold_permutation_test` for pairs of rows of ``scores`` (k, n): every ordered pair, or
    ``pairs`` (i, j) (``"two-sided"``: each unordered pair once, filled in symmetrically).

    Each pair uses the same random swap patterns (the same ``settings.seed``), so a pair's p-value does
    not depend on which other pairs are tested. ``progress``: a tqdm bar on stderr.
    Returns :class:`PairwisePermutation` (estimate: :func:`metric_estimates`).
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    k = x.shape[0]
    est = metric_estimates(x, human, prompts, spec)
    if pairs is None:
        pairs = [(i, j) for i in range(k) for j in range(k) if i != j and (alternative == "greater" or i < j)]
    pm = np.full((k, k), np.nan)
    nm = np.zeros((k, k), dtype=np.int64)
    dm = np.full((k, k), np.nan)
    done: dict = {}
    todo = [(int(i), int(j)) for i, j in pairs]
    if progress:
        from tqdm.auto import tqdm

        todo = tqdm(todo, desc=f"permutation tests ({spec.stat})", unit="pair")
    for i, j in todo:
        key = (min(i, j), max(i, j)) if alternative == "two-sided" else (i, j)
        if key not in done:
            done[key] = gold_permutation_test(x[key[0]], x[key[1]], human, prompts, spec, alternative=alternative,
                                              settings=settings)
        r = done[key]
        pm[i, j] = r.pvalue
        nm[i, j] = r.n_used
        dm[i, j] = r.difference if (i, j) == key else -r.difference
        if alternative == "two-sided":
            pm[j, i], nm[j, i], dm[j, i] = r.pvalue, r.n_used, -dm[i, j]
    return PairwisePermutation(est, dm, pm, nm, alternative, False, settings)


def gold_clusters(metrics: Sequence[str], scores, human, prompts, spec: GoldStatistic = GoldStatistic(), *,
                  alpha: float = 0.05, correction: str = "none", settings: PermutationSettings = DEFAULT_SETTINGS,
                  progress: bool = False) -> tuple[Clusters, PairwisePermutation]:
    """Significance clusters of the rows of ``scores`` on the pooled statistic ``spec``, from one-sided
    permutation tests (:func:`ts2viz.significance.clusters.significance_clusters`, against the best of
    the current cluster).

    Metrics are ordered by :func:`metric_estimates`. With ``correction="none"`` only the tests the greedy
    walk reads are run (at most k - 1: each metric against its cluster's best); with ``"holm"`` every
    higher-ranked metric is tested against every lower-ranked one (k (k - 1) / 2 tests).
    Returns the clusters and the tests that were run (untested pairs: NaN).
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if len(metrics) != x.shape[0]:
        raise InputError(f"{len(metrics)} metric names for {x.shape[0]} score rows")
    est = metric_estimates(x, human, prompts, spec)
    order = np.argsort(-np.where(np.isnan(est), -np.inf, est), kind="stable")
    order = [int(i) for i in order if not np.isnan(est[i])]
    k = x.shape[0]
    if correction == "holm":
        tests = pairwise_gold_permutation(x, human, prompts, spec, settings=settings, progress=progress,
                                          pairs=[(order[a], order[b]) for a in range(len(order))
                                                 for b in range(a + 1, len(order))])
    else:
        # the greedy walk of significance_clusters(against="best", correction="none"), running each
        # test when it is read
        pm = np.full((k, k), np.nan)
        nm = np.zeros((k, k), dtype=np.int64)
        dm = np.full((k, k), np.nan)
        best = order[0] if order else None
        for i in order[1:]:
            r = gold_permutation_test(x[best], x[i], human, prompts, spec, settings=settings)
            pm[best, i], nm[best, i], dm[best, i] = r.pvalue, r.n_used, r.difference
            if r.pvalue == r.pvalue and r.pvalue <= alpha:
                best = i
        tests = PairwisePermutation(est, dm, pm, nm, "greater", False, settings)
    return significance_clusters(list(metrics), est, tests.pvalue, alpha=alpha, correction=correction), tests


__all__ = ["GoldStatistic", "STATISTICS", "gold_clusters", "gold_permutation_test", "inversions_rows", "kendall_rows",
           "metric_estimates",
           "pairwise_gold_permutation", "pooled_statistic"]
