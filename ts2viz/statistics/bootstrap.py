"""Bootstrap machinery: settings, stratified resample counts and fast quantiles of resampled statistics.

Generic kernels, in pure numpy (no scipy, torch or gradio), for every bootstrap of ts2viz: the leaderboard's
intervals over SEGs (:mod:`ts2viz.metametrics.intervals`) and the human-gold meta-evaluation's intervals over
prompts (:mod:`ts2viz.metaeval`).

- :class:`BootstrapSettings` (and :data:`DEFAULTS`): resamples, interval level, seed, and the options of the
  bootstraps built on them.
- :func:`stratified_counts`: multinomial count matrices (resamples x units) that keep every stratum's size.
- :func:`quantiles`: percentile-interval quantiles of many resampled statistics at once, by partial
  selection (as ``numpy.quantile``'s default linear interpolation).
- :func:`frozen`: read-only float64 arrays for result objects.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError

# -- settings ---------------------------------------------------------------------------------------

#: upper bound on resamples: 19 metrics x 16 cells x 10**6 resamples is already 2.4 GB of float64
MAX_RESAMPLES = 1_000_000


@dataclass(frozen=True)
class BootstrapSettings:
    """Everything that changes a bootstrap result besides the data.

    Parameters
    ----------
    n_resamples : int, default 10,000
        Number of bootstrap resamples, from 1 to :data:`MAX_RESAMPLES` (memory grows with resamples x
        cells x metrics).
    confidence : float, default 0.95
        Two-sided level of the percentile intervals, strictly between 0 and 1.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` that draws the resamples (non-negative). The draws depend
        only on the seed, the number of resamples and the partition sizes, never on the metrics, so a
        metric's interval does not change when other metrics are added.
    image_resamples : int, default 0
        0 resamples SEGs only. A positive number (at most 10,000) asks for the two-level bootstrap
        (:func:`ts2viz.metametrics.two_level.two_level_bootstrap`, which needs the scores): SEGs
        are resampled, then the images within each node of each drawn SEG, from a pool of this many
        image resamples per SEG.

    Raises
    ------
    InputError
        If a setting is out of its range or of the wrong type (a bool is not an integer here).

    Examples
    --------
    >>> from ts2viz.statistics.bootstrap import BootstrapSettings
    >>> BootstrapSettings(n_resamples=2000).confidence
    0.95
    """

    n_resamples: int = 10_000
    confidence: float = 0.95
    seed: int = 0
    image_resamples: int = 0

    def __post_init__(self) -> None:
        """Check every setting (see the class's Raises)."""
        n = self.n_resamples
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_RESAMPLES:
            raise InputError(f"the number of resamples must be an integer from 1 to {MAX_RESAMPLES:,}, got {n!r}")
        c = self.confidence
        if not isinstance(c, (int, float, np.floating)) or not (0.0 < float(c) < 1.0):
            raise InputError(f"the confidence level must be strictly between 0 and 1, got {c!r}")
        s = self.seed
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise InputError(f"the seed must be a non-negative integer, got {s!r}")
        r = self.image_resamples
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 0 <= r <= 10_000:
            raise InputError(f"the number of image resamples must be an integer from 0 to 10,000, got {r!r}")


#: The defaults every function here uses unless told otherwise.
DEFAULTS = BootstrapSettings()


def frozen(a) -> np.ndarray:
    """``a`` as a float64 array that cannot be written to (the arrays of the result objects here).

    Parameters
    ----------
    a : array_like
        The values (an array of this module's own: it is not copied when already float64).

    Returns
    -------
    numpy.ndarray
        A read-only float64 array.
    """
    a = np.asarray(a, dtype=np.float64)      # the arrays passed in are this module's own
    a.setflags(write=False)
    return a


# -- resampling -------------------------------------------------------------------------------------

def stratified_counts(strata: Sequence[int] | np.ndarray, n_resamples: int,
                      rng: np.random.Generator) -> np.ndarray:
    """Bootstrap resamples as count matrices, resampling within strata.

    Parameters
    ----------
    strata : array_like of int
        Stratum of each item (an integer; negative = never resampled).
    n_resamples : int
        Number of resamples B.
    rng : numpy.random.Generator
        The generator. Strata are drawn in increasing order of their label.

    Returns
    -------
    numpy.ndarray
        int64 array (B, items): how often each item appears in each resample. Every row puts exactly
        ``n_k`` draws on the ``n_k`` items of stratum k, and 0 on items with a negative stratum.

    Notes
    -----
    For a stratum of ``n_k`` items, ``rng.integers(0, n_k, size=(B, n_k))`` picks the draws and their
    counts form the stratum's columns. Each row is thus a Multinomial(n_k, [1/n_k] * n_k) count vector
    (the same distribution as ``rng.multinomial``, several times faster to draw).

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.bootstrap import stratified_counts
    >>> counts = stratified_counts([0, 0, 1, 1, 1, -1], 4, np.random.default_rng(0))
    >>> counts[:, :2].sum(axis=1).tolist(), counts[:, 2:5].sum(axis=1).tolist(), counts[:, 5].tolist()
    ([2, 2, 2, 2], [3, 3, 3, 3], [0, 0, 0, 0])
    """
    strata = np.asarray(strata, dtype=np.int64)
    counts = np.zeros((n_resamples, strata.size), dtype=np.int64)
    rows = np.arange(n_resamples, dtype=np.int64)[:, None]
    for k in np.unique(strata[strata >= 0]):
        idx = np.flatnonzero(strata == k)
        n = idx.size
        draws = rng.integers(0, n, size=(n_resamples, n)) + rows * n
        counts[:, idx] = np.bincount(draws.ravel(), minlength=n_resamples * n).reshape(n_resamples, n)
    return counts


def _lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """numpy.quantile's linear interpolation, written the same way so results agree to the bit."""
    diff = b - a
    out = a + diff * t
    return np.where(t >= 0.5, b - diff * (1 - t), out)


def _smallest(x: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """The ks-th smallest values (0-based) of every row of ``x`` (no NaN), for small ks: (rows, len(ks)).

    Why not ``np.partition``: an interval needs order statistics deep in the tails (the 250th of
    10,000), and a full selection pass per row and tail dominated the whole pairwise matrix. Here a
    strided subsample gives each row a threshold safely above its kmax-th value, one comparison pass
    keeps the few hundred values below it, and sorting those gives exact order statistics. A row
    whose threshold keeps too few values (unlucky subsample) falls back to ``np.partition``.
    """
    x = np.ascontiguousarray(x)
    R, B = x.shape
    kmax = int(ks.max())
    step = max(1, B // 1024)
    sample = x[:, ::step]
    r = min(sample.shape[1] - 1, int(1.5 * (kmax + 1) / step) + 8)
    t = np.partition(sample, r, axis=1)[:, r]
    mask = x <= t[:, None]
    cnt = mask.sum(1)
    out = np.empty((R, ks.size))
    short = cnt <= kmax
    if short.any():
        out[short] = np.partition(x[short], ks, axis=1)[:, ks]
        mask[short] = False
        cnt[short] = 0
    # the kept values, one padded row each (+inf fill sorts last), sorted along the row
    idx = np.flatnonzero(mask)
    rows = idx // B
    start = np.concatenate([[0], np.cumsum(cnt)[:-1]])
    kept = np.full((R, max(int(cnt.max()), kmax + 1)), np.inf)
    kept[rows, np.arange(idx.size) - start[rows]] = x.ravel()[idx]
    kept.sort(axis=1)
    out[~short] = kept[~short][:, ks]
    return out


def _order_statistics(x: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Exact order statistics ``np.sort(x, axis=1)[:, ks]`` of a NaN-free (rows, B) array."""
    ks = np.asarray(ks, dtype=np.int64)
    R, B = x.shape
    if B < 4096 or R == 0:
        return np.partition(x, np.unique(ks), axis=1)[:, ks]
    out = np.empty((R, ks.size))
    low = ks < B // 2
    if low.any():
        out[:, low] = _smallest(x, ks[low])
    if (~low).any():
        out[:, ~low] = -_smallest(-x, B - 1 - ks[~low])      # k-th smallest = -(B-1-k)-th smallest of -x
    return out


def quantiles(samples: np.ndarray, qs: Sequence[float]) -> np.ndarray:
    """Quantiles along the last axis, equal to ``np.nanquantile(samples, qs, axis=-1)`` (linear method).

    Faster for the tail quantiles of intervals over many resamples: the order statistics come from a
    partial selection instead of a full selection per row.

    Parameters
    ----------
    samples : numpy.ndarray
        Array (..., B) of resampled values.
    qs : sequence of float
        Quantile levels in [0, 1].

    Returns
    -------
    numpy.ndarray
        Array ``(len(qs),) + samples.shape[:-1]``.

    Notes
    -----
    NaN policy: a row's NaN values are skipped (that row goes through ``np.nanquantile``); an all-NaN
    row gives NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.statistics.bootstrap import quantiles
    >>> quantiles(np.arange(11.0)[None], [0.025, 0.975]).round(3).tolist()
    [[0.25], [9.75]]
    """
    B = samples.shape[-1]
    flat = samples.reshape(-1, B)
    h = (B - 1) * np.asarray(qs, dtype=np.float64)
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, B - 1)
    out = np.empty((len(qs), flat.shape[0]))
    bad = np.isnan(flat).any(axis=1)
    good = flat[~bad] if bad.any() else flat
    if good.shape[0]:
        ks = np.unique(np.concatenate([lo, hi]))
        stats_ = _order_statistics(good, ks)
        at = {int(k): i for i, k in enumerate(ks)}
        a = stats_[:, [at[int(k)] for k in lo]]
        b = stats_[:, [at[int(k)] for k in hi]]
        out[:, ~bad] = _lerp(a, b, h - lo).T
    if bad.any():
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)      # all-NaN rows give NaN
            out[:, bad] = np.nanquantile(flat[bad], qs, axis=1)
    return out.reshape((len(qs),) + samples.shape[:-1])
