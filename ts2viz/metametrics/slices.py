"""The leaderboard per slice of SEGs (TS2's partitions, any SEG tag): the same rows, intervals and stability.

"One slice is not enough" (Gecko, Wiles et al.) holds for TS2's leaderboard too: a metric's Ord and Sep
change with the SEGs it is judged on (TS2's Synth, Nat and Real subsets, a tag of the user's).
:func:`board_slices` computes, for every slice, exactly the leaderboard's rows on the slice's SEGs:
:func:`~ts2viz.metametrics.results.compute` with ``seg_ids`` the slice's SEGs (what ``ts2viz leaderboard
--seg`` computes, so the policy's left-out SEG stays out), the bootstrap intervals of
:func:`~ts2viz.metametrics.intervals.bootstrap` (SEGs resampled within partitions, the leaderboard's seed
on every slice) and the rank intervals of :func:`~ts2viz.metametrics.ranks.rank_intervals`, laid out by
:func:`~ts2viz.metametrics.table.leaderboard_table`.

Beside the rows, each slice's averaged cells get a two-sided bootstrap p-value of no association (Ord,
Kendall, delta and signed Sep against 0; Sep, a KS distance, has no null value and no p-value), and
:meth:`BoardSlices.stability` the rank correlation of the metrics between slices and the significant
reversals, both from :mod:`ts2viz.statistics.slice_table` (shared with the rated sets' slices,
:mod:`ts2viz.metaeval.slices`).

Small slices say so in a ``note``: no SEG (no number), one SEG (its values, no interval: a single SEG's
resamples have no spread), fewer than :data:`FEW_SEGS` SEGs (intervals rest on few SEGs), a partition with a
single SEG in the slice (the stratified resamples keep it fixed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..display import plural
from ..errors import InputError
from ..statistics.bootstrap import DEFAULTS, BootstrapSettings
from ..statistics.slice_table import bootstrap_pvalue, percentile_interval, slice_stability
from .walks import STATS

#: a slice with fewer averaged SEGs than this says its intervals rest on few SEGs
FEW_SEGS = 10
#: the value of an averaged cell's statistic with no association (None: no p-value)
NULL_VALUE = {"ord": 0.0, "sep": None, "delta": 0.0, "kendall": 0.0, "signed_sep": 0.0}


@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class BoardSlices:
    """Result of :func:`board_slices`: the leaderboard's rows per slice of SEGs.

    Attributes
    ----------
    family : str
        The SEG tag family the slices are tags of.
    slices : tuple of str
        The slices.
    metrics : tuple of str
        The metrics.
    n_segs : numpy.ndarray
        (slices,) SEGs each slice averages (the policy's left-out SEG not counted).
    tables : tuple of pandas.DataFrame
        Per slice, :func:`~ts2viz.metametrics.table.leaderboard_table` on its SEGs (every slice with the
        same columns; NaN where there is no number).
    point : dict
        Averaged cell (``ord_avg``, ``sep_avg``, ...) -> (slices, metrics) values.
    samples : dict
        Averaged cell -> (slices, metrics, B) resampled values (NaN for a slice without resamples); empty
        without a bootstrap.
    bootstrap : BootstrapSettings or None
        The resampling settings.
    stats : tuple of str
        The leaderboard's statistics shown.
    mode : str
        The meta-metric policy's name.
    notes : tuple of str
        Per slice, why it has no number or why its interval is weak (empty when neither).
    """

    family: str
    slices: tuple
    metrics: tuple
    n_segs: np.ndarray
    tables: tuple
    point: dict
    samples: dict = field(default_factory=dict)
    bootstrap: BootstrapSettings | None = None
    stats: tuple = ("ord", "sep")
    mode: str = "paper"
    notes: tuple = ()

    @property
    def column_labels(self) -> list[str]:
        """Each slice's name with its SEGs, for a figure's columns."""
        return [f"{s}<br>{plural(int(n), 'SEG')}" for s, n in zip(self.slices, self.n_segs)]

    def cell_of(self, stat: str) -> str:
        """The averaged cell of a statistic (``ord`` -> ``ord_avg``; a cell name is kept).

        Parameters
        ----------
        stat : str
            A statistic of :attr:`stats` or its averaged cell.

        Returns
        -------
        str
            The cell, a key of :attr:`point`.

        Raises
        ------
        InputError
            If the board has no such statistic.
        """
        cell = stat if stat.endswith("_avg") else f"{stat}_avg"
        if cell not in self.point:
            raise InputError(f"no statistic {stat!r} in the board's slices (have: "
                             f"{', '.join(c[:-4] for c in self.point)})")
        return cell

    def interval(self, stat: str) -> tuple[np.ndarray, np.ndarray]:
        """The leaderboard's interval of one averaged cell on every slice and metric.

        Parameters
        ----------
        stat : str
            A statistic (``ord``) or its averaged cell (``ord_avg``).

        Returns
        -------
        low, high : numpy.ndarray
            (slices, metrics); NaN without resamples.
        """
        cell = self.cell_of(stat)
        shape = (len(self.slices), len(self.metrics))
        if cell not in self.samples or self.bootstrap is None:
            return np.full(shape, np.nan), np.full(shape, np.nan)
        return percentile_interval(self.samples[cell], self.bootstrap.confidence)

    def pvalue(self, stat: str) -> np.ndarray:
        """Two-sided bootstrap p-value of no association of one averaged cell (see the module docstring).

        Parameters
        ----------
        stat : str
            A statistic (``ord``) or its averaged cell (``ord_avg``).

        Returns
        -------
        numpy.ndarray
            (slices, metrics); NaN without resamples or a null value (Sep).
        """
        cell = self.cell_of(stat)
        null = NULL_VALUE.get(cell[:-4])
        if null is None or cell not in self.samples or self.bootstrap is None:
            return np.full((len(self.slices), len(self.metrics)), np.nan)
        return bootstrap_pvalue(self.samples[cell], null)

    def frame(self):
        """One row per slice x metric: ``family``, ``slice``, ``n_segs``, the leaderboard's row, p-values, note.

        Returns
        -------
        pandas.DataFrame
            ``family``, ``slice``, ``n_segs``, then the columns of
            :func:`~ts2viz.metametrics.table.leaderboard_table` (``metric``, ``ord_avg``, ``ord_avg_lo``,
            ..., ``rank_hi``), ``{cell}_p`` for each averaged cell with a null value (with a bootstrap),
            ``note`` and ``mode``.
        """
        import pandas as pd

        parts = []
        for s, (name, table) in enumerate(zip(self.slices, self.tables)):
            t = table.copy()
            t.insert(0, "family", self.family)
            t.insert(1, "slice", name)
            t.insert(2, "n_segs", int(self.n_segs[s]))
            if self.bootstrap is not None:
                for cell in self.point:
                    if NULL_VALUE.get(cell[:-4]) is not None:
                        t[f"{cell}_p"] = self.pvalue(cell)[s]
            t["note"] = self.notes[s] if self.notes else ""
            t["mode"] = self.mode
            parts.append(t)
        return pd.concat(parts, ignore_index=True)

    def stability(self, stat: str = "ord"):
        """How stable the ranking of the metrics is across slices (:func:`~ts2viz.statistics.slice_table.slice_stability`).

        Parameters
        ----------
        stat : str, default "ord"
            The statistic (or averaged cell) the metrics are ranked by.

        Returns
        -------
        rank_corr : pandas.DataFrame
            (slices x slices) Kendall's tau-b between the slices' values over the metrics.
        reversals : pandas.DataFrame
            The significant reversals (``metric_a``, ``metric_b``, ``slice_a``, ``slice_b``, ``diff_a``,
            ``diff_b``); empty without resamples.
        """
        cell = self.cell_of(stat)
        has = cell in self.samples and self.bootstrap is not None
        return slice_stability(self.point[cell], self.samples[cell] if has else None,
                               self.bootstrap.confidence if has else 0.95, self.slices, self.metrics)


def _note(n_segs: int, ids: Sequence[int], mm) -> str:
    if n_segs == 0:
        return "no SEG: no statistic"
    parts = []
    if n_segs == 1:
        parts.append("1 SEG: no interval (its resamples have no spread)")
    elif n_segs < FEW_SEGS:
        parts.append(f"only {plural(n_segs, 'SEG')}: intervals rest on few SEGs")
    if n_segs >= 2:
        kept = [p for s, p in zip(mm.seg_ids, mm.partitions) if s not in set(mm.excluded)]
        single = [p for p in dict.fromkeys(kept) if kept.count(p) == 1]
        if single:
            parts.append(f"{plural(len(single), 'partition')} ({', '.join(single)}) with 1 SEG here: the resamples "
                         "keep it fixed")
    if mm.excluded:
        parts.append(f"SEG {', '.join(map(str, mm.excluded))} left out, as in the published numbers")
    return "; ".join(parts)


def board_slices(dataset, scores, slices: dict, *, family: str = "slices", metrics: Sequence[str] | None = None,
                 policy="paper", stats: Sequence[str] = ("ord", "sep"),
                 bootstrap: BootstrapSettings | None = DEFAULTS) -> BoardSlices:
    """The leaderboard's rows on each slice of SEGs (see the module docstring).

    Parameters
    ----------
    dataset : Dataset
        The dataset.
    scores : Scores
        The scores (:class:`ts2viz.scores.Scores`).
    slices : dict
        Slice name -> SEG ids (:func:`ts2viz.dataset.tags.seg_slices`).
    family : str, default "slices"
        The tag family (for the table).
    metrics : sequence of str, optional
        The metrics (default: all of ``scores``).
    policy : Policy or str, default "paper"
        The meta-metric policy (:func:`~ts2viz.metametrics.results.compute`).
    stats : sequence of str, default ("ord", "sep")
        The leaderboard's statistics (some of ord, sep, delta, kendall, signed_sep).
    bootstrap : BootstrapSettings or None, default DEFAULTS
        The leaderboard's bootstrap (its ``image_resamples`` must be 0), or None for no intervals.

    Returns
    -------
    BoardSlices
        The rows, resamples and notes per slice.

    Raises
    ------
    InputError
        For an unknown SEG, metric, statistic or policy, no slice, or a two-level bootstrap.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores
    >>> from ts2viz.dataset.tags import seg_slices
    >>> from ts2viz.metametrics.slices import board_slices
    >>> ds = load_dataset("ts2")
    >>> res = board_slices(ds, bundled_scores(), seg_slices(ds, "partition"), family="partition",
    ...                    metrics=["CLIPScore"], bootstrap=None)
    >>> res.frame()[["slice", "n_segs", "metric", "ord_avg"]].round(3)
       slice  n_segs     metric  ord_avg
    0    all     164  CLIPScore    0.714
    1  Synth     111  CLIPScore    0.750
    2    Nat      25  CLIPScore    0.580
    3   Real      28  CLIPScore    0.693
    """
    import pandas as pd

    from .intervals import bootstrap as draw
    from .policy import resolve_policy
    from .ranks import rank_intervals
    from .results import compute
    from .table import leaderboard_groups, leaderboard_table

    if not slices:
        raise InputError("no slice of SEGs to evaluate")
    if bootstrap is not None and bootstrap.image_resamples:
        raise InputError("the board's slices resample SEGs only (no two-level bootstrap)")
    pol = resolve_policy(policy)
    unknown = [s for s in stats if s not in STATS]
    if unknown or not stats:
        raise InputError(f"statistics: expected some of {', '.join(STATS)}, got {', '.join(stats) or 'none'}")
    stats = [s for s in STATS if s in stats]
    names = list(scores.metrics if metrics is None else metrics)
    groups = leaderboard_groups(seg.partition for seg in dataset)
    columns = ["metric"]
    for g in groups:
        for s in stats:
            columns += [f"{s}_{g}"] + ([f"{s}_{g}_lo", f"{s}_{g}_hi"] if bootstrap is not None else [])
    if bootstrap is not None:
        columns += ["rank", "rank_median", "rank_lo", "rank_hi"]
    S, k = len(slices), len(names)
    B = bootstrap.n_resamples if bootstrap is not None else 0
    point = {f"{s}_avg": np.full((S, k), np.nan) for s in stats}
    samples = {f"{s}_avg": np.full((S, k, B), np.nan, dtype=np.float32) for s in stats} if bootstrap else {}
    n_segs = np.zeros(S, dtype=np.int64)
    tables, notes = [], []
    for i, (name, ids) in enumerate(slices.items()):
        ids = [int(s) for s in ids]
        if not ids:
            tables.append(pd.DataFrame({"metric": names}).reindex(columns=columns))
            notes.append(_note(0, ids, None))
            continue
        mm = compute(dataset, scores, names, policy=pol, seg_ids=ids)
        n = len(ids) - len(mm.excluded)
        n_segs[i] = n
        boot = ranks = None
        if bootstrap is not None and n >= 2:
            boot = draw(mm, n_resamples=bootstrap.n_resamples, confidence=bootstrap.confidence, seed=bootstrap.seed)
            ranks = rank_intervals(mm, "ord_avg", boot=boot)
        table = leaderboard_table(mm, stats, groups=groups, boot=boot, ranks=ranks).reindex(columns=columns)
        tables.append(table)
        notes.append(_note(n, ids, mm))
        for cell in point:
            point[cell][i] = table[cell].to_numpy(dtype=float)
            if boot is not None:
                samples[cell][i] = boot.resampled[boot.cells.index(cell)]
    return BoardSlices(family, tuple(slices), tuple(names), n_segs, tuple(tables), point, samples, bootstrap,
                       tuple(stats), pol.name, tuple(notes))
