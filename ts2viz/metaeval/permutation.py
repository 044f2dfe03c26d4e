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
(:func:`ts2viz.statistics.permutation_tests.permutation_test`, with the whole set as its one unit: a pooled
statistic is not a mean over prompts). Before swapping, each metric's scores are z-scored over the
images of the test (an affine map per metric: every pooled statistic above is unchanged by it, so the
observed difference is the table's, while a swap no longer mixes two scales such as CLIPScore's 20-40
with TIFA's 0-1). Z-scoring within each prompt instead would change each metric's own pooled
correlation (the prompts' levels would be removed), so it is not offered.

Speed: :func:`pairwise_gold_permutation` tests Pearson and pair-wise accuracy for every pair at once
(their sums are linear or quadratic in the swap pattern: a few matrix products per block of
permutations, the very draws and p-values of the pair-by-pair loop); Spearman and Kendall pair by pair,
each vectorised over a block of permutations (ranks by one row-wise sort; Kendall by a merge sort of
all rows at once, :func:`inversions_rows`).

Images: those with a human rating and a score from both metrics (an image one metric did not score is
left out of that pair's test; on the bundled sets every metric scores every image).

Pure numpy: no scipy, torch or gradio.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError
from ..statistics.clusters import Clusters, significance_clusters
from ..statistics.permutation_tests import (
    DEFAULT_SETTINGS,
    PairwisePermutation,
    PermutationResult,
    PermutationSettings,
    permutation_test,
    sampled_swap_pvalues,
    standardise,
)
from ..statistics.correlation import pearson_rows, rankdata
from .pairwise import pairs_within, pairwise_accuracy

#: the statistics a test can compare (columns of ``ts2viz humaneval``'s table)
STATISTICS = ("spearman", "kendall", "pearson", "pairwise_acc")


@dataclass(frozen=True)
class GoldStatistic:
    """Which pooled statistic, and the humaneval settings that change it.

    Parameters
    ----------
    stat : {'spearman', 'kendall', 'pearson', 'pairwise_acc'}, default 'spearman'
        One of :data:`STATISTICS`.
    kendall : {'b', 'c'}, default 'b'
        The tau variant.
    spearman : {'textbook', 'np-corrcoef'}, default 'textbook'
        ``"np-corrcoef"`` is Pearson's r, what TIFA's notebook labels Spearman.
    metric_ties : {'wrong', 'half'}, default 'wrong'
        Pair-wise accuracy: a metric tie on a pair the raters order counts wrong or half right.

    Raises
    ------
    InputError
        If a setting is not one of its allowed values.
    """

    stat: str = "spearman"
    kendall: str = "b"
    spearman: str = "textbook"
    metric_ties: str = "wrong"

    def __post_init__(self) -> None:
        """Check every setting (see the class's Raises)."""
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
        """The statistic ``stat`` with the Kendall, Spearman and ties choices of humaneval settings.

        Parameters
        ----------
        stat : str
            One of :data:`STATISTICS`.
        settings : HumanEvalSettings
            A :class:`ts2viz.metaeval.HumanEvalSettings`.

        Returns
        -------
        GoldStatistic
            The statistic with those choices.
        """
        return cls(stat, settings.kendall, settings.spearman, settings.metric_ties)

    def label(self) -> str:
        """A readable name of the statistic, e.g. ``"Kendall tau-c"``.

        Returns
        -------
        str
            The label used in tables and figures.

        Examples
        --------
        >>> from ts2viz.metaeval.permutation import GoldStatistic
        >>> GoldStatistic("kendall", kendall="c").label()
        'Kendall tau-c'
        """
        if self.stat == "kendall":
            return f"Kendall tau-{self.kendall}"
        if self.stat == "spearman":
            return "Spearman" if self.spearman == "textbook" else "Spearman (np-corrcoef: Pearson's r)"
        return "Pearson" if self.stat == "pearson" else f"pair-wise accuracy (metric ties {self.metric_ties})"


def _tie_pairs_rows(srt: np.ndarray) -> np.ndarray:
    """Pairs tied within each row of a row-sorted array: (R,)."""
    R, n = srt.shape
    new = np.ones(srt.shape, bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    gid = np.cumsum(new, axis=1) - 1 + (np.arange(R, dtype=np.int64) * n)[:, None]
    c = np.bincount(gid.ravel(), minlength=R * n).astype(np.float64)
    return (c * (c - 1) / 2).reshape(R, n).sum(1)


def inversions_rows(a: np.ndarray) -> np.ndarray:
    """Inversions (pairs i < j with a[i] > a[j], strictly) of every row of a non-negative integer array.

    Parameters
    ----------
    a : array_like of int
        (R, n) non-negative integers.

    Returns
    -------
    numpy.ndarray
        (R,) float64 inversion counts.

    Notes
    -----
    A bottom-up merge sort over all rows at once: at each level, two global ``searchsorted`` calls over
    (row, block)-offset keys count, per element, the other half's elements before it.

    Examples
    --------
    >>> from ts2viz.metaeval.permutation import inversions_rows
    >>> inversions_rows([[3, 1, 2, 0], [0, 1, 2, 3]]).tolist()
    [5.0, 0.0]
    """
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
    """Kendall's tau-b (or tau-c) of each row of a NaN-free (R, n) array with ``g``.

    Parameters
    ----------
    x : array_like
        (R, n) scores, NaN-free.
    g : array_like
        (n,) gold values.
    variant : {'b', 'c'}, default 'b'
        The tau variant.

    Returns
    -------
    numpy.ndarray
        (R,) tau per row, NaN when undefined.

    Notes
    -----
    O(R n log n); the formulas of :func:`ts2viz.statistics.correlation.kendall`.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.metaeval.permutation import kendall_rows
    >>> kendall_rows(np.array([[1.0, 2, 3, 4], [4, 3, 2, 1]]), np.array([1.0, 2, 3, 3])).round(4).tolist()
    [0.9129, -0.9129]
    """
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
    """The pooled statistic ``spec`` as a one-unit statistic for :func:`permutation_test`.

    Parameters
    ----------
    human : array_like
        (n,) the mean human rating per image, NaN-free.
    prompts : array_like
        (n,) prompt label per image (pair-wise accuracy pairs images of one prompt).
    spec : GoldStatistic
        Which statistic.

    Returns
    -------
    callable
        ``f(0, rows)`` -> (R,) the statistic of each score row (R, n) against ``human`` (NaN-free rows).
    """
    y = np.asarray(human, dtype=np.float64).ravel()
    pairs = pairs_within(np.asarray(prompts)) if spec.stat == "pairwise_acc" else None
    ry = rankdata(y)

    def statistic(u: int, rows: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(rows, dtype=np.float64))
        if spec.stat == "pearson" or (spec.stat == "spearman" and spec.spearman == "np-corrcoef"):
            return pearson_rows(x, y)
        if spec.stat == "spearman":
            return pearson_rows(rankdata(x), ry)
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
    scores_a, scores_b : array_like
        (n,) the two metrics' per-image scores (higher = better; NaN = not scored).
    human : array_like
        (n,) mean human rating per image (NaN = not rated).
    prompts : array_like
        (n,) prompt label per image.
    spec : GoldStatistic, default GoldStatistic()
        The pooled statistic (Spearman by default).
    alternative : {'greater', 'two-sided'}, default 'greater'
        ``"greater"`` (A > B) or ``"two-sided"``.
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    exact : bool, default False
        Enumerate all 2**n swap patterns (n <= 20 images).

    Returns
    -------
    PermutationResult
        Over the images with a rating and both scores (see the module docstring); the estimates are the
        two statistics on those images.

    Raises
    ------
    InputError
        If the arrays differ in length, or an exact test has too many images.

    Notes
    -----
    NaN policy: an image without a rating or without a score from either metric is left out.

    Examples
    --------
    TIFA with mPLUG against CLIPScore on TIFA160 (Spearman with the DSG raters' mean rating):

    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.permutation import GoldStatistic, gold_permutation_test
    >>> gold = load_gold("tifa160", answers=False)
    >>> x = gold.score_matrix(["tifa_mplug-large", "clipscore_vitb32"])
    >>> res = gold_permutation_test(x[0], x[1], gold.human(), gold.prompt_codes(), GoldStatistic("spearman"))
    >>> round(float(res.estimate_a), 3), round(float(res.estimate_b), 3), round(res.pvalue, 4), res.n_used
    (0.608, 0.276, 0.0099, 100)
    """
    ok = _common(scores_a, scores_b, human)
    a = np.asarray(scores_a, dtype=np.float64).ravel()[ok]
    b = np.asarray(scores_b, dtype=np.float64).ravel()[ok]
    stat = pooled_statistic(np.asarray(human, dtype=np.float64).ravel()[ok], np.asarray(prompts)[ok], spec)
    return permutation_test([a], [b], stat, swap="items", alternative=alternative, settings=settings,
                            standardise_scores=True, exact=exact)


def metric_estimates(scores, human, prompts, spec: GoldStatistic) -> np.ndarray:
    """Each metric's pooled statistic over the images it scored (the ``ts2viz humaneval`` value).

    Parameters
    ----------
    scores : array_like
        (k, n) per-image scores of k metrics.
    human : array_like
        (n,) mean human rating per image.
    prompts : array_like
        (n,) prompt label per image.
    spec : GoldStatistic
        The pooled statistic.

    Returns
    -------
    numpy.ndarray
        (k,) the statistic of each metric; NaN for a metric with fewer than two rated, scored images.

    Notes
    -----
    NaN policy: each metric uses the images it scored that have a rating.
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    h = np.asarray(human, dtype=np.float64).ravel()
    p = np.asarray(prompts)
    out = np.full(x.shape[0], np.nan)
    for i in range(x.shape[0]):
        ok = ~(np.isnan(x[i]) | np.isnan(h))
        if ok.sum() >= 2:
            out[i] = pooled_statistic(h[ok], p[ok], spec)(0, x[i][ok][None, :])[0]
    return out


#: statistics with an all-pairs-at-once path; Spearman (ranks of every permuted row) and Kendall are
#: tested pair by pair, each with the statistic vectorised over a block of permutations. (An all-pairs
#: Spearman that reads ranks off the sorted union of both metrics' values, with no sort per
#: permutation, was measured 1.3x slower than that loop on TIFA160 and left out.)
VECTORISED = ("pearson", "pairwise_acc")


def _vectorised(spec: GoldStatistic) -> bool:
    return spec.stat in VECTORISED or (spec.stat == "spearman" and spec.spearman == "np-corrcoef")


def _all_pairs_at_once(x, y, prompts, spec: GoldStatistic, I, J, alternative: str, settings: PermutationSettings):
    """p-values, permutations used and observed differences of the pairs (I[p], J[p]) at once.

    For a statistic that is a function of sums linear (Pearson) or quadratic (pair-wise accuracy over
    pairs of images) in the swap pattern: one block of swap patterns (the draws :func:`permutation_test`
    makes) serves every pair through a few matrix products. ``x`` (k, n) and ``y`` NaN-free.
    """
    Z = np.stack([standardise(r) for r in x])              # z-scores per metric, as permutation_test
    n = y.size
    za, zb = Z[I].T, Z[J].T                                 # (n, P)
    dz = zb - za
    if spec.stat == "pairwise_acc":
        pr = pairs_within(np.asarray(prompts))
        gs = np.sign(y[pr.first] - y[pr.second])
        keep = gs != 0                                      # pairs the raters order
        f, t, gs = pr.first[keep], pr.second[keep], gs[keep][:, None]
        credit = 0.5 if spec.metric_ties == "half" else 0.0

        def c(u, v):                                        # credit of each (image pair, metric pair)
            return np.where(u == v, credit, (np.sign(u - v) == gs).astype(np.float64))

        tables = {}
        for name, (first, second) in {"A": (za, zb), "B": (zb, za)}.items():
            c00, c01, c10, c11 = c(first[f], first[t]), c(first[f], second[t]), c(second[f], first[t]), \
                c(second[f], second[t])
            tables[name] = (c00.sum(0), c10 - c00, c01 - c00, c00 - c01 - c10 + c11)
        den = max(int(keep.sum()), 0)

        def values(bits, cols, name):
            const, lin_f, lin_t, quad = tables[name]
            tot = const[cols] + bits[:, f] @ lin_f[:, cols] + bits[:, t] @ lin_t[:, cols] \
                + (bits[:, f] * bits[:, t]) @ quad[:, cols]
            return tot / den if den else np.full(tot.shape, np.nan)
    else:
        yc = y - y.mean()
        syy = float((yc * yc).sum())
        sums = {}
        for name, (base, step) in {"A": (za, dz), "B": (zb, -dz)}.items():   # a row: base + bits * step
            # the sums behind Pearson's r, each: (sum at no swap, change per swapped image)
            sums[name] = ((yc @ base, step * yc[:, None]), (base.sum(0), step),
                          ((base * base).sum(0), (base + step) ** 2 - base * base))

        def values(bits, cols, name):
            sxy, sx, sxx = (c0[cols] + bits @ d[:, cols] for c0, d in sums[name])
            vx = sxx - sx * sx / n
            with np.errstate(invalid="ignore", divide="ignore"):
                r = (sxy - sx * yc.sum() / n) / np.sqrt(vx * syy)
            return np.where((vx > 1e-12 * n) & (syy > 0), np.clip(r, -1.0, 1.0), np.nan)

    def diffs(bits, cols):
        return values(bits, cols, "A") - values(bits, cols, "B")

    observed = diffs(np.zeros((1, n)), np.arange(I.size))[0]
    p, used = sampled_swap_pvalues(diffs, observed, n, settings, alternative)
    return p, used, observed


def pairwise_gold_permutation(scores, human, prompts, spec: GoldStatistic = GoldStatistic(), *,
                              alternative: str = "greater", settings: PermutationSettings = DEFAULT_SETTINGS,
                              pairs: Sequence[tuple[int, int]] | None = None,
                              progress: bool = False, vectorise: bool = True) -> PairwisePermutation:
    """:func:`gold_permutation_test` for pairs of rows of ``scores``.

    Parameters
    ----------
    scores : array_like
        (k, n) per-image scores of k metrics.
    human : array_like
        (n,) mean human rating per image.
    prompts : array_like
        (n,) prompt label per image.
    spec : GoldStatistic, default GoldStatistic()
        The pooled statistic.
    alternative : {'greater', 'two-sided'}, default 'greater'
        ``"two-sided"`` tests each unordered pair once and fills the matrix in symmetrically.
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    pairs : sequence of (int, int), optional
        The pairs (i, j) to test (default: every ordered pair).
    progress : bool, default False
        Show a tqdm bar on stderr.
    vectorise : bool, default True
        Pearson and pair-wise accuracy test every pair at once (one block of swap patterns, a few matrix
        products for all pairs; the same draws and p-values as the pair-by-pair loop, which
        ``vectorise=False`` runs, and which is used anyway when a metric left a rated image unscored).

    Returns
    -------
    PairwisePermutation
        p-values of the tested pairs (NaN elsewhere); ``estimate`` from :func:`metric_estimates`.

    Notes
    -----
    Each pair uses the same random swap patterns (the same ``settings.seed``), so a pair's p-value does
    not depend on which other pairs are tested.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.permutation import GoldStatistic, pairwise_gold_permutation
    >>> gold = load_gold("tifa160", answers=False)
    >>> x = gold.score_matrix(["clipscore_vitb32", "tifa_mplug-large", "bleu"])
    >>> res = pairwise_gold_permutation(x, gold.human(), gold.prompt_codes(), GoldStatistic("pearson"))
    >>> res.estimate.round(3).tolist()
    [0.287, 0.59, 0.183]
    >>> res.pvalue.round(2).tolist()
    [[nan, 1.0, 0.02], [0.01, nan, 0.01], [0.99, 1.0, nan]]
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    k = x.shape[0]
    est = metric_estimates(x, human, prompts, spec)
    if pairs is None:
        pairs = [(i, j) for i in range(k) for j in range(k) if i != j and (alternative == "greater" or i < j)]
    pm = np.full((k, k), np.nan)
    nm = np.zeros((k, k), dtype=np.int64)
    dm = np.full((k, k), np.nan)
    h = np.asarray(human, dtype=np.float64).ravel()
    rated = ~np.isnan(h)
    if vectorise and _vectorised(spec) and not np.isnan(x[:, rated]).any() and rated.sum() >= 2:
        keys = sorted({(min(i, j), max(i, j)) if alternative == "two-sided" else (int(i), int(j)) for i, j in pairs})
        I = np.array([a for a, _ in keys], dtype=np.int64)
        J = np.array([b for _, b in keys], dtype=np.int64)
        p, used, obs = _all_pairs_at_once(x[:, rated], h[rated], np.asarray(prompts)[rated], spec, I, J,
                                          alternative, settings)
        pm[I, J], nm[I, J], dm[I, J] = p, used, obs
        if alternative == "two-sided":
            pm[J, I], nm[J, I], dm[J, I] = p, used, -obs
        return PairwisePermutation(est, dm, pm, nm, alternative, False, settings)
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
    """Significance clusters of the rows of ``scores`` on a pooled statistic, from one-sided permutation tests.

    Parameters
    ----------
    metrics : sequence of str
        The names of the k rows of ``scores``.
    scores : array_like
        (k, n) per-image scores.
    human : array_like
        (n,) mean human rating per image.
    prompts : array_like
        (n,) prompt label per image.
    spec : GoldStatistic, default GoldStatistic()
        The pooled statistic.
    alpha : float, default 0.05
        Significance level.
    correction : {'none', 'holm'}, default 'none'
        With ``"none"`` only the tests the greedy walk reads are run (at most k - 1: each metric against
        its cluster's best); with ``"holm"`` every higher-ranked metric is tested against every
        lower-ranked one (k (k - 1) / 2 tests).
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    progress : bool, default False
        Show a tqdm bar (``correction="holm"``).

    Returns
    -------
    clusters : Clusters
        The clusters (:func:`ts2viz.statistics.clusters.significance_clusters`, against the best of the
        current cluster); metrics ordered by :func:`metric_estimates`.
    tests : PairwisePermutation
        The tests that were run (untested pairs: NaN).

    Raises
    ------
    InputError
        If the number of names differs from the number of score rows.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.permutation import gold_clusters
    >>> from ts2viz.statistics.permutation_tests import PermutationSettings
    >>> gold = load_gold("tifa160", answers=False)
    >>> names = ["clipscore_vitb32", "tifa_mplug-large", "tifa_blip2-flant5xl", "bleu"]
    >>> clusters, tests = gold_clusters(names, gold.score_matrix(names), gold.human(), gold.prompt_codes(),
    ...                                 settings=PermutationSettings(n_permutations=200))
    >>> clusters.members()
    [['tifa_mplug-large', 'tifa_blip2-flant5xl'], ['clipscore_vitb32', 'bleu']]
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
