"""How sure is the leaderboard? Bootstrap intervals over SEGs, and the leaderboard table with them.

A leaderboard cell (``ord_avg``, ``sep_nat``, ``kendall_real``, ...) is a mean of per-SEG values over
the SEGs of a group ("avg" = every SEG the averages use, or one partition), so its sampling
uncertainty is that of a mean over ~25-165 SEGs. These modules answer, from a
:class:`~ts2viz.metametrics.results.MetaMetrics` result and nothing else:

- :func:`bootstrap`: percentile bootstrap intervals for every cell and metric. SEGs are resampled
  with replacement *within partitions* (stratified: each resample keeps every partition's size), SEGs
  the averages leave out (``mm.excluded``) never enter. One set of resamples serves every metric and
  cell, so differences and ranks computed from it are paired.
- :func:`~ts2viz.metametrics.comparison.compare` /
  :func:`~ts2viz.metametrics.comparison.pairwise`: the difference of two metrics' averages with a
  paired bootstrap interval, and a Wilcoxon signed-rank p-value on their per-SEG values; for all pairs,
  a matrix with Holm-corrected p-values.
- :func:`~ts2viz.metametrics.ranks.rank_intervals`: each metric's leaderboard rank over the
  resamples (median and interval).
- :func:`~ts2viz.statistics.wilcoxon.wilcoxon` and :func:`~ts2viz.statistics.wilcoxon.holm`: the two
  tests, vectorised, in pure numpy.
- :func:`~ts2viz.metametrics.table.leaderboard_table`: the leaderboard with a chosen set of cells, intervals and
  rank intervals.

Speed: the resamples are per-partition multinomial count matrices (resamples x SEGs), so every
resampled mean of every metric, stat and cell is one matrix product of the counts with the (SEGs x
metrics) values, divided by the same product with the not-NaN mask. No Python loop runs over
resamples. Only numpy is imported (no scipy, torch or gradio).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..statistics.bootstrap import (
    DEFAULTS,
    BootstrapSettings,
    frozen,
    quantiles,
    stratified_counts,
)
from .results import MetaMetrics
from .walks import STATS


def _settings(n_resamples, confidence, seed) -> BootstrapSettings:
    return BootstrapSettings(DEFAULTS.n_resamples if n_resamples is None else n_resamples,
                             DEFAULTS.confidence if confidence is None else confidence,
                             DEFAULTS.seed if seed is None else seed)


# -- groups of SEGs (the leaderboard's averages) ------------------------------------------------------

@dataclass(frozen=True)
class SegGroups:
    """The SEGs each leaderboard group averages (:func:`seg_groups`).

    Attributes
    ----------
    names : tuple of str
        ``"avg"``, then the partitions lower-cased, in the leaderboard's order.
    partitions : tuple of str
        The partition names as in the data, in that order.
    members : tuple of numpy.ndarray
        Per partition: indices into ``mm.seg_ids`` of its averaged SEGs.
    strata : numpy.ndarray
        Per SEG of ``mm``: the index of its partition, -1 if left out of the averages.
    """

    names: tuple[str, ...]              # "avg", then partitions lower-cased, in the leaderboard's order
    partitions: tuple[str, ...]         # partition names as in the data, in that order
    members: tuple[np.ndarray, ...]     # per partition: indices into mm.seg_ids of its averaged SEGs
    strata: np.ndarray                  # per SEG of mm: index of its partition, -1 if left out


def seg_groups(mm: MetaMetrics) -> SegGroups:
    """The averaged SEGs of each partition, in the order of :meth:`MetaMetrics.averages`'s keys.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results (:func:`ts2viz.metametrics.results.compute`).

    Returns
    -------
    SegGroups
        Group names, partitions, members and per-SEG strata; SEGs in ``mm.excluded`` are in no group.
    """
    by_lower = {p.lower(): p for p in mm.partitions}
    order = [k[len("ord_"):] for k in mm.averages() if k.startswith("ord_") and k != "ord_avg"]
    parts = tuple(by_lower[g] for g in order)
    left_out = set(mm.excluded)
    strata = np.full(len(mm.seg_ids), -1, dtype=np.int64)
    for i, (sid, p) in enumerate(zip(mm.seg_ids, mm.partitions)):
        if sid not in left_out:
            strata[i] = parts.index(p)
    members = tuple(np.flatnonzero(strata == k) for k in range(len(parts)))
    return SegGroups(("avg",) + tuple(order), parts, members, strata)


def averaged_segs(mm: MetaMetrics) -> dict[str, np.ndarray]:
    """Which SEGs each leaderboard group averages.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.

    Returns
    -------
    dict[str, numpy.ndarray]
        ``{"avg": ..., "synth": ..., ...}``, each an index array into ``mm.seg_ids`` (excluded SEGs left
        out), groups in the leaderboard's order.
    """
    g = seg_groups(mm)
    return {"avg": np.flatnonzero(g.strata >= 0), **{n: m for n, m in zip(g.names[1:], g.members)}}


def cell_names(mm: MetaMetrics) -> tuple[str, ...]:
    """The leaderboard cells of ``mm``.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.

    Returns
    -------
    tuple of str
        ``{stat}_{group}`` for group in avg + partitions, stat in ord, sep, delta, kendall, signed_sep
        (the keys of :meth:`MetaMetrics.averages`, in that order).
    """
    return tuple(mm.averages())


def split_cell(cell: str) -> tuple[str, str]:
    """Split a leaderboard cell name into its statistic and group.

    The statistic is the longest name in :data:`ts2viz.metametrics.walks.STATS` the cell starts with.

    Parameters
    ----------
    cell : str
        A cell name such as ``"ord_avg"``.

    Returns
    -------
    tuple of str
        ``(stat, group)``.

    Raises
    ------
    InputError
        If the cell starts with no statistic's name.

    Examples
    --------
    >>> from ts2viz.metametrics.intervals import split_cell
    >>> split_cell("ord_avg"), split_cell("signed_sep_nat")
    (('ord', 'avg'), ('signed_sep', 'nat'))
    """
    for stat in sorted(STATS, key=len, reverse=True):
        if cell.startswith(stat + "_"):
            return stat, cell[len(stat) + 1:]
    raise InputError(f"unknown leaderboard cell {cell!r}: expected {{stat}}_{{group}} with stat one of {', '.join(STATS)}")


def check_cell(cell: str, g: SegGroups) -> tuple[str, str]:
    """``(stat, group)`` of ``cell`` (:func:`split_cell`), checked against the groups of ``g``.

    Parameters
    ----------
    cell : str
        A cell name such as ``"sep_synth"``.
    g : SegGroups
        The groups of the results (:func:`seg_groups`).

    Returns
    -------
    tuple of str
        ``(stat, group)``.

    Raises
    ------
    InputError
        Unless the statistic is known and the group is one of ``g``'s (the message lists the cells).
    """
    stat, group = split_cell(cell) if any(cell.startswith(s + "_") for s in STATS) else ("", "")
    if stat not in STATS or group not in g.names:
        names = [f"{s}_{n}" for n in g.names for s in STATS]
        raise InputError(f"unknown leaderboard cell {cell!r}: expected one of {', '.join(names)}")
    return stat, group


def seg_values(mm: MetaMetrics, cell: str) -> np.ndarray:
    """Per-SEG values that the leaderboard cell ``cell`` averages.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    cell : str
        A cell name such as ``"ord_avg"`` (:func:`cell_names`).

    Returns
    -------
    numpy.ndarray
        Array (SEGs of the group, metrics), SEGs in ``mm.seg_ids`` order.

    Raises
    ------
    InputError
        If the cell is unknown.

    Notes
    -----
    NaN policy: excluded SEGs are left out; NaN values are kept (the averages skip them).
    """
    return cell_values(mm, cell, seg_groups(mm))


def cell_values(mm: MetaMetrics, cell: str, g: SegGroups) -> np.ndarray:
    """:func:`seg_values` with the groups already computed (``g = seg_groups(mm)``).

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    cell : str
        A cell name.
    g : SegGroups
        ``seg_groups(mm)``.

    Returns
    -------
    numpy.ndarray
        Array (SEGs of the group, metrics), NaN values kept.
    """
    stat, group = check_cell(cell, g)
    idx = np.flatnonzero(g.strata >= 0) if group == "avg" else g.members[g.names.index(group) - 1]
    return mm.seg_values[stat][idx]


def resample_counts(mm: MetaMetrics, *, n_resamples: int = DEFAULTS.n_resamples,
                    seed: int = DEFAULTS.seed) -> np.ndarray:
    """The resamples :func:`bootstrap` draws for ``mm``, as counts.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    n_resamples : int, default 10,000
        Number of resamples.
    seed : int, default 0
        Seed of the generator.

    Returns
    -------
    numpy.ndarray
        int64 array (resamples, SEGs of ``mm``), each row drawing every partition's averaged SEGs with
        replacement, partition sizes kept, 0 for excluded SEGs (:func:`stratified_counts` with strata in
        the leaderboard's partition order).

    Raises
    ------
    InputError
        If ``n_resamples`` or ``seed`` is out of range (:class:`BootstrapSettings`).
    """
    st = BootstrapSettings(n_resamples, DEFAULTS.confidence, seed)
    return stratified_counts(seg_groups(mm).strata, st.n_resamples, np.random.default_rng(st.seed))


def _resampled_means(values: np.ndarray, counts: np.ndarray, g: SegGroups) -> np.ndarray:
    """Mean of every column over every group in every resample: (groups, columns, B).

    ``values`` is (SEGs, columns) with NaN; a resample's mean over a group is
    ``values_without_nan.T @ counts.T / not_nan.T @ counts.T`` restricted to the group's SEGs (the
    NaN policy of ``np.nanmean``): one product per partition, values and masks side by side; the
    "avg" group adds up the partitions. A column without NaN needs no mask product: its divisor is
    the group's size, which stratified resampling keeps. NaN where a group draws no value.
    """
    ok = ~np.isnan(values)
    has_nan = ~ok[g.strata >= 0].all(axis=0)
    both = np.concatenate([np.where(ok, values, 0.0), ok[:, has_nan].astype(np.float64)], axis=1)
    c = values.shape[1]
    B = counts.shape[0]
    sums = np.zeros((len(g.names), both.shape[1], B))
    for k, idx in enumerate(g.members):
        sums[k + 1] = both[idx].T @ counts[:, idx].T.astype(np.float64)              # (columns + masks, B)
    sums[0] = sums[1:].sum(axis=0)
    sizes = np.array([float((g.strata >= 0).sum())] + [float(len(m)) for m in g.members])
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums[:, :c] / sizes[:, None, None]
        den = sums[:, c:]
        means[:, has_nan] = np.where(den > 0, sums[:, :c][:, has_nan] / den, np.nan)
    return means


@dataclass(frozen=True, eq=False)    # holds arrays: compared by identity
class LeaderboardBootstrap:
    """Bootstrap distribution of every leaderboard cell of every metric (see :func:`bootstrap`).

    Attributes
    ----------
    settings : BootstrapSettings
        The settings used (resamples, confidence, seed).
    mode : str
        The meta-metric mode (policy name) of the :class:`MetaMetrics` it was drawn from.
    metrics : tuple of str
        Metric names (columns of the arrays).
    cells : tuple of str
        Cell names, ``{stat}_{group}`` (rows of the arrays).
    seg_ids : tuple of int
        The SEGs that can be drawn (every averaged SEG).
    group_sizes : tuple of (str, int)
        Number of SEGs in each group ("avg", partitions), kept in every resample.
    estimate : numpy.ndarray
        (cells, metrics) the leaderboard values (mean over the group's non-NaN SEG values).
    low, high : numpy.ndarray
        (cells, metrics) percentile interval at ``settings.confidence``.
    resampled : numpy.ndarray
        (cells, metrics, resamples) the cell values of every resample; NaN where a resample holds no
        non-NaN value of that metric in that group.
    """

    settings: BootstrapSettings
    mode: str
    metrics: tuple[str, ...]
    cells: tuple[str, ...]
    seg_ids: tuple[int, ...]
    group_sizes: tuple[tuple[str, int], ...]
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    resampled: np.ndarray

    def index(self, metric: str | None = None, cell: str | None = None) -> tuple[int | None, int | None]:
        """Positions of ``metric`` and ``cell`` in the arrays.

        Parameters
        ----------
        metric : str, optional
            A metric name; None skips it.
        cell : str, optional
            A cell name; None skips it.

        Returns
        -------
        tuple
            ``(i, j)``: the metric's column and the cell's row (None for an argument not given).

        Raises
        ------
        InputError
            If the metric or the cell is unknown.
        """
        i = j = None
        if metric is not None:
            if metric not in self.metrics:
                raise InputError(f"no metric {metric!r} (have: {', '.join(self.metrics)})")
            i = self.metrics.index(metric)
        if cell is not None:
            if cell not in self.cells:
                raise InputError(f"unknown leaderboard cell {cell!r}: expected one of {', '.join(self.cells)}")
            j = self.cells.index(cell)
        return i, j

    def interval(self, metric: str, cell: str) -> tuple[float, float, float]:
        """The estimate and interval of one metric's cell.

        Parameters
        ----------
        metric : str
            A metric name of :attr:`metrics`.
        cell : str
            A cell name of :attr:`cells`, e.g. ``"ord_avg"``.

        Returns
        -------
        tuple of float
            ``(estimate, low, high)``, fractions (delta in score units).

        Raises
        ------
        InputError
            If the metric or the cell is unknown.

        Examples
        --------
        CLIPScore's published average Ord (71.4) with its 95 % interval:

        >>> from ts2viz import load_dataset, bundled_scores, compute
        >>> from ts2viz.metametrics.intervals import bootstrap
        >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore"], policy="paper")
        >>> estimate, low, high = bootstrap(mm, n_resamples=1000).interval("CLIPScore", "ord_avg")
        >>> round(100 * estimate, 1), round(100 * low), round(100 * high)
        (71.4, 67, 75)
        """
        i, j = self.index(metric, cell)
        return float(self.estimate[j, i]), float(self.low[j, i]), float(self.high[j, i])

    def frame(self):
        """The intervals as a long table.

        Returns
        -------
        pandas.DataFrame
            One row per (metric, cell): ``metric``, ``cell``, ``estimate``, ``low``, ``high``.
        """
        import pandas as pd

        C, M = len(self.cells), len(self.metrics)
        return pd.DataFrame({"metric": np.tile(self.metrics, C), "cell": np.repeat(self.cells, M),
                             "estimate": self.estimate.ravel(), "low": self.low.ravel(),
                             "high": self.high.ravel()})


def bootstrap(mm: MetaMetrics, *, n_resamples: int = DEFAULTS.n_resamples,
              confidence: float = DEFAULTS.confidence, seed: int = DEFAULTS.seed,
              metrics: Sequence[str] | None = None) -> LeaderboardBootstrap:
    """Stratified percentile-bootstrap intervals for every leaderboard cell.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results (:func:`ts2viz.metametrics.results.compute`).
    n_resamples : int, default 10,000
        Number of resamples (see :class:`BootstrapSettings`).
    confidence : float, default 0.95
        Two-sided level of the intervals.
    seed : int, default 0
        Seed of the resamples.
    metrics : sequence of str, optional
        A subset of ``mm.metrics`` (default: all). The resamples do not depend on it.

    Returns
    -------
    LeaderboardBootstrap
        Estimates, intervals and resampled values of every cell and metric.

    Raises
    ------
    InputError
        If a metric is not in ``mm`` or a setting is out of range.

    See Also
    --------
    ts2viz.metametrics.comparison.compare : two metrics' difference, paired.
    ts2viz.metametrics.ranks.rank_intervals : each metric's rank over the resamples.
    ts2viz.metametrics.two_level.two_level_bootstrap : resampling images too.

    Notes
    -----
    Each resample draws, in every partition, as many SEGs as the partition averages, with replacement,
    from its averaged SEGs (``mm.excluded`` never enter); a cell's resampled value is the mean of the
    drawn SEGs' values, a SEG drawn twice counting twice. Intervals are the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles of the resampled values (linear interpolation, as
    ``numpy.quantile``). The resampled means are one matrix product of the (resamples x SEGs) counts
    with the (SEGs x metrics) values per partition: no Python loop runs over resamples.

    NaN policy: NaN per-SEG values are skipped in every mean, as in :meth:`MetaMetrics.averages`;
    resamples where a cell has no value are left out of that cell's quantiles; a cell whose estimate is
    NaN has a NaN interval.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metametrics.intervals import bootstrap
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore", "DSG-mPLUG"], policy="paper")
    >>> boot = bootstrap(mm, n_resamples=1000)
    >>> boot.group_sizes
    (('avg', 164), ('synth', 111), ('nat', 25), ('real', 28))
    >>> row = boot.frame().query("cell == 'ord_avg'").set_index("metric")
    >>> (100 * row[["estimate", "low", "high"]]).round().astype(int)
               estimate  low  high
    metric
    CLIPScore        71   67    75
    DSG-mPLUG        69   64    74
    """
    st = BootstrapSettings(n_resamples, confidence, seed)
    names = list(mm.metrics) if metrics is None else list(metrics)
    for m in names:
        if m not in mm.metrics:
            raise InputError(f"no metric {m!r} in the meta-metrics (have: {', '.join(mm.metrics)})")
    cols = [mm.metrics.index(m) for m in names]
    g = seg_groups(mm)
    M = len(cols)
    values = np.concatenate([mm.seg_values[s][:, cols] for s in STATS], axis=1)     # (S, stats*M)
    counts = resample_counts(mm, n_resamples=st.n_resamples, seed=st.seed)
    ones = (g.strata >= 0).astype(np.int64)[None, :]
    res = _resampled_means(values, counts, g)                                         # (G, stats*M, B)
    est = _resampled_means(values, ones, g)[..., 0]                                   # (G, stats*M)
    G = res.shape[0]
    # (G, stats*M, B) -> (G*stats, M, B): cells ordered group-major, stat-minor, like averages()
    res = res.reshape(G * len(STATS), M, st.n_resamples)
    est = est.reshape(G * len(STATS), M)
    alpha = 1.0 - st.confidence
    low, high = quantiles(res, [alpha / 2, 1 - alpha / 2])
    nan = np.isnan(est)
    low[nan] = high[nan] = np.nan
    cells = tuple(f"{s}_{gr}" for gr in g.names for s in STATS)
    sizes = (("avg", int((g.strata >= 0).sum())),) + tuple((n, len(m)) for n, m in zip(g.names[1:], g.members))
    return LeaderboardBootstrap(st, mm.mode, tuple(names), cells,
                                tuple(int(mm.seg_ids[i]) for i in np.flatnonzero(g.strata >= 0)), sizes,
                                frozen(est), frozen(low), frozen(high), frozen(res))


def bootstrap_for(mm: MetaMetrics, boot: LeaderboardBootstrap | None, metrics, n_resamples, confidence, seed):
    """``boot`` checked against ``mm`` and ``metrics``, or a new :func:`bootstrap` with the settings given.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    boot : LeaderboardBootstrap or None
        A precomputed bootstrap of ``mm``, or None to draw one.
    metrics : sequence of str or None
        The metrics the caller needs (each must be in ``boot``).
    n_resamples : int or None
        Resamples of a new bootstrap (None: :data:`DEFAULTS`); must be None when ``boot`` is given.
    confidence : float or None
        Its confidence level (the same rule).
    seed : int or None
        Its seed (the same rule).

    Returns
    -------
    LeaderboardBootstrap
        ``boot`` itself, or the new bootstrap.

    Raises
    ------
    ValueError
        If both ``boot`` and settings are given, or ``boot`` was drawn from other results (mode or SEGs
        differ).
    InputError
        If a metric is not in ``boot``.
    """
    if boot is None:
        st = _settings(n_resamples, confidence, seed)
        return bootstrap(mm, n_resamples=st.n_resamples, confidence=st.confidence, seed=st.seed, metrics=metrics)
    if any(v is not None for v in (n_resamples, confidence, seed)):
        raise ValueError("pass either a precomputed bootstrap or bootstrap settings, not both")
    keep = [i for i, s in enumerate(mm.seg_ids) if s not in set(mm.excluded)]
    if boot.mode != mm.mode or boot.seg_ids != tuple(int(mm.seg_ids[i]) for i in keep):
        raise ValueError("the bootstrap was drawn from other meta-metrics (mode or SEGs differ)")
    for m in metrics or ():
        boot.index(metric=m)
    return boot
