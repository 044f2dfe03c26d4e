"""Paired permutation tests for the difference between two metrics' meta-metric values.

The question a test answers: *is metric A's meta-metric (Ord, Sep, a correlation with human ratings,
...) higher than metric B's by more than chance would give if the two metrics were interchangeable?*
Under that null hypothesis the two metrics' scores are exchangeable, so each permutation swaps them at
random and recomputes both meta-metrics; the p-value is the share of permutations whose difference
A - B is at least the observed one (Deutsch, Brantley-Koch & Roth 2021; the PERM-BOTH test of
google-research/mt-metrics-eval, whose ideas, not code, this follows).

Data model: the meta-metric is the mean over *units* (SEGs, or items/prompts of a human gold
standard; NaN unit values skipped) of a per-unit statistic of the unit's scores. Two swap schemes:

- ``swap="items"`` (PERM-BOTH): inside every unit, each item's (image's) two scores are swapped with
  probability 1/2, independently; the per-unit statistic is recomputed for every permutation by a
  user callable ``statistic(unit, rows) -> values`` (rows: a (R, n_unit) score matrix, one score
  vector per row; returns (R,)). The scores are standardised per unit and metric first (z-scores),
  so that a swap does not mix two scales (CLIPScore's 0.2-0.4 with TIFA's 0-1).
- ``swap="units"`` (PERM-INPUTS): each unit's whole score vectors are swapped with probability 1/2.
  For a statistic computed per unit, a swapped unit's values are then exactly the two metrics'
  values exchanged, so no recomputation is needed: the test runs on the (units x metrics) table of
  per-unit values, and all pairs of metrics at once (:func:`pairwise_unit_permutation`).

p-values: ``alternative="greater"`` (A > B) counts permuted differences ``>= observed``;
``"two-sided"`` counts ``|permuted| >= |observed|``. With ``k`` permutations of which ``c`` count,
p = (c + 1) / (k + 1) (the permutation that swaps nothing is one of the arrangements, so a p-value
is never 0; mt-metrics-eval reports c / k). ``exact=True`` enumerates all 2**n swap patterns instead
(tiny inputs): p = c / 2**n.

Early stopping (as mt-metrics-eval): permutations are drawn in blocks of ``block_size``; after each
block, a test whose running p-value is below ``early_min`` or above ``early_max`` stops (it is
clearly significant or clearly not); ``n_used`` says how many permutations a test used.

Random draws: block b of every test is ``rng.random((block_size, n)) < 0.5`` from
``numpy.random.default_rng(seed)`` (n = units or items), drawn for every block whether or not the test
is still running, so that a pair's result does not depend on which other pairs are tested.
Pure numpy.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import InputError

ALTERNATIVES = ("greater", "two-sided")
SWAPS = ("items", "units")
#: the most items (or units) an exact enumeration runs over (2**20 arrangements)
EXACT_MAX = 20
#: relative tolerance when comparing a permuted difference with the observed one (float rounding
#: must not turn the identity permutation into one that "does not count")
_TIE_TOL = 1e-12


@dataclass(frozen=True)
class PermutationSettings:
    """Everything that changes a permutation test's result besides the data.

    Parameters
    ----------
    n_permutations : int, default 1000
        Permutations per test at most (as mt-metrics-eval), from 1 to 10,000,000.
    block_size : int, default 100
        Early stopping is checked after every block of this many permutations (``n_permutations`` turns
        early stopping off).
    early_min : float, default 0.02
        A test stops early when its running p-value is below ``early_min`` (as mt-metrics-eval).
    early_max : float, default 0.5
        A test also stops early when its running p-value is above ``early_max``;
        0 <= early_min <= early_max <= 1.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` (non-negative).

    Raises
    ------
    InputError
        If a setting is out of its range.
    """

    n_permutations: int = 1000
    block_size: int = 100
    early_min: float = 0.02
    early_max: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        """Check every setting (see the class's Raises)."""
        for name in ("n_permutations", "block_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= 10_000_000:
                raise InputError(f"{name} must be an integer from 1 to 10,000,000, got {v!r}")
        if not 0.0 <= self.early_min <= self.early_max <= 1.0:
            raise InputError(f"need 0 <= early_min <= early_max <= 1, got {self.early_min}, {self.early_max}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise InputError(f"the seed must be a non-negative integer, got {self.seed!r}")


DEFAULT_SETTINGS = PermutationSettings()


@dataclass(frozen=True)
class PermutationResult:
    """One paired permutation test (see :func:`permutation_test`).

    Attributes
    ----------
    estimate_a, estimate_b : float
        The two meta-metric values (mean over units, NaN units skipped).
    difference : float
        estimate_a - estimate_b.
    pvalue : float
        The p-value for ``alternative`` (see the module docstring).
    n_used : int
        Permutations drawn (fewer than asked when the test stopped early); 2**n when exact.
    exact : bool
        Whether the p-value is an exact enumeration.
    swap : str
        The swap scheme, ``"items"`` or ``"units"``.
    alternative : str
        The alternative tested, ``"greater"`` or ``"two-sided"``.
    """

    estimate_a: float
    estimate_b: float
    difference: float
    pvalue: float
    n_used: int
    exact: bool
    swap: str
    alternative: str


def _check(alternative: str, swap: str) -> None:
    if alternative not in ALTERNATIVES:
        raise InputError(f"alternative must be one of {', '.join(ALTERNATIVES)}, got {alternative!r}")
    if swap not in SWAPS:
        raise InputError(f"swap must be one of {', '.join(SWAPS)}, got {swap!r}")


def standardise(scores: np.ndarray) -> np.ndarray:
    """z-scores of a score vector (population SD), NaN kept; a constant vector gives 0s.

    Parameters
    ----------
    scores : array_like
        The scores of one metric on one unit.

    Returns
    -------
    numpy.ndarray
        (x - mean) / sd over the non-NaN entries; NaN where the input is NaN.

    Notes
    -----
    NaN policy: NaN entries are ignored in the mean and SD and stay NaN; an all-NaN vector is returned
    as a copy.

    Examples
    --------
    >>> from ts2viz.statistics.permutation_tests import standardise
    >>> standardise([1.0, 2.0, 3.0, float("nan")]).round(4).tolist()
    [-1.2247, 0.0, 1.2247, nan]
    """
    x = np.asarray(scores, dtype=np.float64)
    ok = ~np.isnan(x)
    if not ok.any():
        return x.copy()
    mu = x[ok].mean()
    sd = x[ok].std()
    return np.where(ok, (x - mu) / sd, np.nan) if sd > 0 else np.where(ok, 0.0, np.nan)


def mean_diffs(sum_a, cnt_a, sum_b, cnt_b) -> np.ndarray:
    """Differences of two means from their sums and counts: NaN where a count is 0.

    Parameters
    ----------
    sum_a, cnt_a, sum_b, cnt_b : numpy.ndarray
        Sums and counts of the values of A and of B (broadcastable).

    Returns
    -------
    numpy.ndarray
        ``sum_a / cnt_a - sum_b / cnt_b``, NaN where either count is 0.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt_a > 0, sum_a / np.where(cnt_a > 0, cnt_a, 1), np.nan) - \
            np.where(cnt_b > 0, sum_b / np.where(cnt_b > 0, cnt_b, 1), np.nan)


def exceeds(perm: np.ndarray, observed, alternative: str) -> np.ndarray:
    """Which permuted differences count as at least as extreme as the observed one.

    Parameters
    ----------
    perm : numpy.ndarray
        Permuted differences.
    observed : float or numpy.ndarray
        The observed difference(s), broadcast against ``perm``.
    alternative : {'greater', 'two-sided'}
        ``perm >= observed`` or ``|perm| >= |observed|``.

    Returns
    -------
    numpy.ndarray
        Boolean array; NaN never counts.

    Notes
    -----
    The comparison allows a relative tolerance of 1e-12, so that float rounding does not drop a
    permutation that equals the observed one (the identity permutation always counts).
    """
    if alternative == "two-sided":
        perm, observed = np.abs(perm), np.abs(observed)
    tol = _TIE_TOL * np.maximum(1.0, np.abs(observed))
    with np.errstate(invalid="ignore"):
        return perm >= observed - tol


# -- generic test over per-unit statistics --------------------------------------------------------------

def _unit_values(statistic, u: int, a: np.ndarray, b: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-permutation statistic of the swapped A and B score vectors of unit ``u``: two (R,) arrays."""
    swapped_a = np.where(bits, b[None, :], a[None, :])
    swapped_b = np.where(bits, a[None, :], b[None, :])
    vals = np.asarray(statistic(u, np.concatenate([swapped_a, swapped_b], axis=0)), dtype=np.float64)
    if vals.shape != (2 * bits.shape[0],):
        raise ValueError(f"statistic returned shape {vals.shape} for {2 * bits.shape[0]} score rows of unit {u}")
    return vals[:bits.shape[0]], vals[bits.shape[0]:]


def permutation_test(a_units: Sequence[np.ndarray], b_units: Sequence[np.ndarray],
                     statistic: Callable[[int, np.ndarray], np.ndarray], *, swap: str = "items",
                     alternative: str = "greater", settings: PermutationSettings = DEFAULT_SETTINGS,
                     standardise_scores: bool = True, exact: bool = False) -> PermutationResult:
    """Paired permutation test of "metric A's meta-metric > metric B's" (or two-sided).

    Parameters
    ----------
    a_units, b_units : sequence of array_like
        Per unit, the two metrics' scores of the unit's items (same length per unit; NaN = not scored,
        passed on to ``statistic``).
    statistic : callable
        ``statistic(u, rows)`` -> (R,) values of the per-unit meta-metric of unit ``u`` for each of the
        R score vectors in ``rows`` (R, n_u); NaN for a row it cannot score. It is called on stacks of
        permuted rows, so a vectorised callable makes the test fast.
    swap : {'items', 'units'}, default 'items'
        ``"items"`` (PERM-BOTH: swap each item's two scores) or ``"units"`` (PERM-INPUTS: swap whole
        units).
    alternative : {'greater', 'two-sided'}, default 'greater'
        ``"greater"`` (A > B) or ``"two-sided"``.
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    standardise_scores : bool, default True
        z-score each metric's scores within each unit first (rank-based statistics do not change,
        scale-dependent ones become comparable across metrics).
    exact : bool, default False
        Enumerate every swap pattern (at most 2 ** :data:`EXACT_MAX`) instead of sampling.

    Returns
    -------
    PermutationResult
        The two estimates, their difference, the p-value and how many permutations it used. The
        meta-metric is the mean of the per-unit values over the units where it is not NaN (for each
        metric separately).

    Raises
    ------
    InputError
        If ``swap`` or ``alternative`` is unknown, the units do not pair up, or an exact enumeration
        would exceed 2 ** :data:`EXACT_MAX` arrangements.
    ValueError
        If ``statistic`` returns an array of the wrong shape.

    See Also
    --------
    pairwise_unit_permutation : all pairs at once when whole units are swapped.
    ts2viz.metametrics.permutation.pairwise_permutation : the test on TS2's leaderboard.
    ts2viz.metaeval.permutation.gold_permutation_test : the test on a human-rated set.

    Notes
    -----
    With k permutations of which c count (:func:`exceeds`), p = (c + 1) / (k + 1); with ``exact=True``,
    p = c / 2**n over all n items' swap patterns. See the module docstring for the schemes and the
    early stopping.

    NaN policy: NaN scores are passed to ``statistic``; a unit whose value is NaN is skipped in that
    metric's mean; a NaN observed difference gives a NaN p-value (no permutation drawn).

    Examples
    --------
    Ten walks of four images (0 to 3 errors); metric A's scores fall with the errors, metric B's are
    noisy. The per-unit statistic is Ord with Pearson's r, vectorised over rows:

    >>> import numpy as np
    >>> from ts2viz.statistics.permutation_tests import permutation_test
    >>> errors = np.array([0.0, 1, 2, 3])
    >>> def ord_of(u, rows):
    ...     r = rows - rows.mean(axis=1, keepdims=True)
    ...     e = errors - errors.mean()
    ...     return -(r @ e) / np.sqrt((r * r).sum(axis=1) * (e @ e))
    >>> rng = np.random.default_rng(0)
    >>> a = [3 - errors + rng.normal(0, 0.5, 4) for _ in range(10)]
    >>> b = [3 - errors + rng.normal(0, 3, 4) for _ in range(10)]
    >>> res = permutation_test(a, b, ord_of)
    >>> round(float(res.difference), 2), round(res.pvalue, 4), res.n_used
    (0.85, 0.0099, 100)

    The test stopped after the first block of 100 permutations: none of them reached the observed
    difference, so p = 1/101. On three walks (12 items) every swap pattern can be enumerated:

    >>> res = permutation_test(a[:3], b[:3], ord_of, exact=True)
    >>> round(res.pvalue, 4), res.n_used
    (0.0229, 4096)
    """
    _check(alternative, swap)
    if len(a_units) != len(b_units):
        raise InputError(f"A has {len(a_units)} units, B {len(b_units)}")
    A = [np.asarray(x, dtype=np.float64).ravel() for x in a_units]
    B = [np.asarray(x, dtype=np.float64).ravel() for x in b_units]
    for u, (x, y) in enumerate(zip(A, B)):
        if x.shape != y.shape:
            raise InputError(f"unit {u}: A has {x.size} scores, B {y.size}")
    if standardise_scores:
        A = [standardise(x) for x in A]
        B = [standardise(y) for y in B]
    S = len(A)
    # observed values: one call per unit with the two unswapped rows
    obs = np.array([_unit_values(statistic, u, A[u], B[u], np.zeros((1, A[u].size), bool)) for u in range(S)])
    va, vb = obs[:, 0, 0], obs[:, 1, 0]
    if swap == "units":
        # the per-unit values are all the test needs: swapping a unit exchanges them
        res = pairwise_unit_permutation(np.stack([va, vb], axis=1), alternative=alternative,
                                        settings=settings, exact=exact)
        return PermutationResult(float(res.estimate[0]), float(res.estimate[1]), float(res.difference[0, 1]),
                                 float(res.pvalue[0, 1]), int(res.n_used[0, 1]), exact, swap, alternative)
    ea, eb = np.nanmean(va) if (~np.isnan(va)).any() else np.nan, np.nanmean(vb) if (~np.isnan(vb)).any() else np.nan
    observed = ea - eb
    sizes = np.array([x.size for x in A])
    offsets = np.r_[0, np.cumsum(sizes)]
    n_items = int(offsets[-1])
    if np.isnan(observed):
        return PermutationResult(ea, eb, observed, np.nan, 0, exact, swap, alternative)

    def block_diffs(bits: np.ndarray) -> np.ndarray:
        R = bits.shape[0]
        sa = np.zeros(R); ca = np.zeros(R); sb = np.zeros(R); cb = np.zeros(R)   # noqa: E702
        for u in range(S):
            x, y = _unit_values(statistic, u, A[u], B[u], bits[:, offsets[u]:offsets[u + 1]])
            okx, oky = ~np.isnan(x), ~np.isnan(y)
            sa += np.where(okx, x, 0.0); ca += okx                                # noqa: E702
            sb += np.where(oky, y, 0.0); cb += oky                                # noqa: E702
        return mean_diffs(sa, ca, sb, cb)

    if exact:
        if n_items > EXACT_MAX:
            raise InputError(f"exact enumeration over {n_items} items would take 2**{n_items} arrangements "
                             f"(at most 2**{EXACT_MAX})")
        bits = np.array(list(itertools.product([False, True], repeat=n_items)), dtype=bool).reshape(-1, n_items)
        hits = exceeds(block_diffs(bits), observed, alternative).sum()
        return PermutationResult(ea, eb, observed, float(hits) / bits.shape[0], bits.shape[0], True, swap, alternative)
    rng = np.random.default_rng(settings.seed)
    hits = used = 0
    while used < settings.n_permutations:
        k = min(settings.block_size, settings.n_permutations - used)
        bits = rng.random((k, n_items)) < 0.5
        hits += int(exceeds(block_diffs(bits), observed, alternative).sum())
        used += k
        p = (hits + 1) / (used + 1)
        if p < settings.early_min or p > settings.early_max:
            break
    return PermutationResult(ea, eb, observed, (hits + 1) / (used + 1), used, False, swap, alternative)


# -- all pairs at once on per-unit values (swap="units") -------------------------------------------------

@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class PairwisePermutation:
    """Permutation tests of every ordered pair of metrics (see :func:`pairwise_unit_permutation`).

    Attributes
    ----------
    estimate : numpy.ndarray
        (M,) each metric's mean over its non-NaN units.
    difference : numpy.ndarray
        (M, M) estimate[i] - estimate[j]; NaN on the diagonal.
    pvalue : numpy.ndarray
        (M, M) p-value of "row metric i > column metric j" (``"greater"``), or of i != j
        (``"two-sided"``, symmetric); NaN on the diagonal and where either metric has no value.
    n_used : numpy.ndarray
        (M, M) permutations each test used (early stopping), 2**units when exact.
    alternative : str
        The alternative tested.
    exact : bool
        Whether the p-values are exact enumerations.
    settings : PermutationSettings
        The settings used.
    """

    estimate: np.ndarray
    difference: np.ndarray
    pvalue: np.ndarray
    n_used: np.ndarray
    alternative: str
    exact: bool
    settings: PermutationSettings


def sampled_swap_pvalues(diffs: Callable[[np.ndarray, np.ndarray], np.ndarray], observed: np.ndarray,
                         n_swappable: int, settings: PermutationSettings, alternative: str,
                         active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Monte-Carlo p-values of many paired tests at once, with mt-metrics-eval's early stopping.

    Parameters
    ----------
    diffs : callable
        ``diffs(z, cols)`` gives, for each row of swap patterns ``z`` ((k, n_swappable) floats, 1 =
        swap), the statistic's differences of the tests ``cols``: an array (k, len(cols)).
    observed : numpy.ndarray
        (P,) the tests' differences with no swap.
    n_swappable : int
        Number of swappable units (or items).
    settings : PermutationSettings
        Permutations, block size, early stopping, seed.
    alternative : {'greater', 'two-sided'}
        The alternative (:func:`exceeds`).
    active : numpy.ndarray, optional
        (P,) bool, the tests to run (default: those whose observed difference is not NaN).

    Returns
    -------
    p : numpy.ndarray
        (P,) ``(hits + 1) / (used + 1)`` per test; NaN where nothing was drawn (inactive tests).
    used : numpy.ndarray
        (P,) int64, the draws each test used.

    Notes
    -----
    Blocks of ``settings.block_size`` patterns are drawn from ``settings.seed``, every block for all
    tests; a test stops counting once its running p-value is below ``early_min`` or above
    ``early_max``.
    """
    P = observed.size
    hits = np.zeros(P)
    used = np.zeros(P, dtype=np.int64)
    active = (~np.isnan(observed) if active is None else active).copy()
    rng = np.random.default_rng(settings.seed)
    done = 0
    while done < settings.n_permutations and active.any():
        k = min(settings.block_size, settings.n_permutations - done)
        z = (rng.random((k, n_swappable)) < 0.5).astype(np.float64)
        cols = np.flatnonzero(active)
        hits[cols] += exceeds(diffs(z, cols), observed[cols], alternative).sum(0)
        used[cols] += k
        done += k
        running = (hits[cols] + 1) / (used[cols] + 1)
        active[cols[(running < settings.early_min) | (running > settings.early_max)]] = False
    return np.where(used > 0, (hits + 1) / (used + 1), np.nan), used


def pairwise_unit_permutation(values: np.ndarray, *, alternative: str = "greater",
                              settings: PermutationSettings = DEFAULT_SETTINGS, exact: bool = False,
                              pairs: Sequence[tuple[int, int]] | None = None) -> PairwisePermutation:
    """Unit-swap permutation tests for all pairs of columns of a (units x metrics) table.

    Each permutation swaps the two metrics' values in a random half of the units (each unit
    independently with probability 1/2); the statistic is the difference of the two column means.

    Parameters
    ----------
    values : array_like
        (units, metrics) per-unit meta-metric values.
    alternative : {'greater', 'two-sided'}, default 'greater'
        The alternative of each test (row metric better than column metric, or different).
    settings : PermutationSettings, default DEFAULT_SETTINGS
        Permutations, early stopping, seed.
    exact : bool, default False
        Enumerate all 2**units swap patterns (at most 2 ** :data:`EXACT_MAX`).
    pairs : sequence of (int, int), optional
        Limit the tests to these (i, j) (default: every i != j).

    Returns
    -------
    PairwisePermutation
        Estimates, differences, p-value matrix and permutations used.

    Raises
    ------
    InputError
        If ``values`` is not 2-D, ``alternative`` is unknown, or an exact enumeration has too many units.

    Notes
    -----
    Vectorised: per block of permutations, one (permutations x units) @ (units x pairs) product for the
    sums and one for the NaN counts.

    NaN policy: NaN values are skipped in each metric's mean (a swapped NaN moves with its unit); a
    metric without any value has NaN p-values.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.permutation_tests import pairwise_unit_permutation
    >>> values = np.array([[0.9, 0.7, 0.5], [0.8, 0.75, 0.4], [0.85, 0.6, 0.55], [0.7, 0.72, 0.3],
    ...                    [0.95, 0.8, 0.5], [0.9, 0.85, 0.45], [0.75, 0.7, 0.6], [0.88, 0.66, 0.35]])
    >>> res = pairwise_unit_permutation(values, exact=True)
    >>> res.estimate.round(3).tolist()
    [0.841, 0.722, 0.456]
    >>> res.pvalue.round(4).tolist()
    [[nan, 0.0078, 0.0039], [0.9961, nan, 0.0039], [1.0, 1.0, nan]]
    """
    _check(alternative, "units")
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2:
        raise InputError(f"values must be a (units, metrics) table, got shape {v.shape}")
    S, M = v.shape
    ok = ~np.isnan(v)
    x = np.where(ok, v, 0.0)
    c = ok.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(c.sum(0) > 0, x.sum(0) / np.maximum(c.sum(0), 1), np.nan)
    if pairs is None:
        I, J = np.nonzero(~np.eye(M, dtype=bool))
    else:
        I = np.array([p[0] for p in pairs], dtype=np.int64)
        J = np.array([p[1] for p in pairs], dtype=np.int64)
    observed = est[I] - est[J]
    dx = x[:, J] - x[:, I]                  # swapping unit s moves dx[s] into A's sum (and out of B's)
    dc = c[:, J] - c[:, I]
    sa0, ca0, sb0, cb0 = x.sum(0)[I], c.sum(0)[I], x.sum(0)[J], c.sum(0)[J]

    def diffs(z: np.ndarray, cols) -> np.ndarray:
        zx = z @ dx[:, cols]
        zc = z @ dc[:, cols]
        return mean_diffs(sa0[cols] + zx, ca0[cols] + zc, sb0[cols] - zx, cb0[cols] - zc)

    P = I.size
    active = ~np.isnan(observed)
    if exact:
        hits = np.zeros(P)
        used = np.zeros(P, dtype=np.int64)
        if S > EXACT_MAX:
            raise InputError(f"exact enumeration over {S} units would take 2**{S} arrangements (at most 2**{EXACT_MAX})")
        z = np.array(list(itertools.product([0.0, 1.0], repeat=S))).reshape(-1, S)
        cols = np.flatnonzero(active)
        hits[cols] = exceeds(diffs(z, cols), observed[cols], alternative).sum(0)
        used[cols] = z.shape[0]
        p = np.where(active, hits / max(z.shape[0], 1), np.nan)
    else:
        p, used = sampled_swap_pvalues(diffs, observed, S, settings, alternative, active)
    pm = np.full((M, M), np.nan)
    nm = np.zeros((M, M), dtype=np.int64)
    pm[I, J] = p
    nm[I, J] = used
    diff = est[:, None] - est[None, :]
    np.fill_diagonal(diff, np.nan)
    return PairwisePermutation(est, diff, pm, nm, alternative, exact, settings)
