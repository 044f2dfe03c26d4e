"""The leaderboard table: chosen cells of every metric, with bootstrap intervals and rank intervals.

:func:`leaderboard_table` lays out a :class:`~ts2viz.metametrics.results.MetaMetrics` result as the table
that ``ts2viz leaderboard`` prints and writes, with the intervals of
:func:`~ts2viz.metametrics.intervals.bootstrap` and the ranks of :func:`~ts2viz.metametrics.ranks.rank_intervals`
when given; :func:`leaderboard_groups` names its groups (the average, TS2's partitions, any others).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from .intervals import LeaderboardBootstrap, seg_groups
from .ranks import RankIntervals
from .results import MetaMetrics, ordered_partitions
from .walks import STATS

GROUPS = ("avg", "synth", "nat", "real")   # the CSV always has these columns (NaN if absent)


def leaderboard_groups(partitions) -> list[str]:
    """The leaderboard's groups: the average and TS2's three partitions always, then any others.

    Parameters
    ----------
    partitions : iterable of str
        The dataset's partitions.

    Returns
    -------
    list of str
        ``["avg", "synth", "nat", "real", ...]``, lower case.

    Examples
    --------
    >>> from ts2viz.metametrics.table import leaderboard_groups
    >>> leaderboard_groups(["Nat", "Custom", "Synth"])
    ['avg', 'synth', 'nat', 'real', 'custom']
    """
    return list(GROUPS) + [p.lower() for p in ordered_partitions(partitions) if p not in ("Synth", "Nat", "Real")]


def leaderboard_table(mm: MetaMetrics, stats: Sequence[str] = ("ord", "sep"), *,
                      groups: Sequence[str] | None = None, boot: LeaderboardBootstrap | None = None,
                      ranks: RankIntervals | None = None):
    """The leaderboard as a DataFrame with a chosen set of statistics and optional intervals.

    Parameters
    ----------
    mm : MetaMetrics
        Meta-metric results.
    stats : sequence of str, default ("ord", "sep")
        Which of ord, sep, delta, kendall, signed_sep to show (in that canonical order whatever the
        input).
    groups : sequence of str, optional
        The groups to show ("avg" and lower-cased partitions; default: those of ``mm``). A group absent
        from ``mm`` gets NaN columns (so a fixed CSV layout survives a dataset with fewer partitions).
    boot : LeaderboardBootstrap, optional
        A :func:`bootstrap` of ``mm``: adds ``{cell}_lo`` and ``{cell}_hi`` after each cell.
    ranks : RankIntervals, optional
        A :func:`~ts2viz.metametrics.ranks.rank_intervals` result: adds ``rank``,
        ``rank_median``, ``rank_lo``, ``rank_hi``.

    Returns
    -------
    pandas.DataFrame
        One row per metric (``mm.metrics`` order): ``metric``, then per group per stat the cell
        ``{stat}_{group}`` (fractions; delta in score units), [its interval], [rank columns].

    Raises
    ------
    InputError
        If a statistic is unknown.

    Examples
    --------
    >>> from ts2viz import load_dataset, bundled_scores, compute
    >>> from ts2viz.metametrics.intervals import bootstrap
    >>> from ts2viz.metametrics.table import leaderboard_table
    >>> mm = compute(load_dataset("ts2"), bundled_scores(), ["CLIPScore"], seg_ids=range(30))
    >>> table = leaderboard_table(mm, ["ord"], groups=["avg"], boot=bootstrap(mm, n_resamples=1000))
    >>> table.columns.tolist()
    ['metric', 'ord_avg', 'ord_avg_lo', 'ord_avg_hi']
    """
    import pandas as pd

    unknown = [s for s in stats if s not in STATS]
    if unknown:
        raise InputError(f"unknown statistic {unknown[0]!r}: expected some of {', '.join(STATS)}")
    chosen = [s for s in STATS if s in stats]
    av = mm.averages()
    groups = list(seg_groups(mm).names if groups is None else groups)
    cols: dict[str, np.ndarray] = {"metric": np.asarray(mm.metrics, dtype=object)}
    nan = np.full(len(mm.metrics), np.nan)
    for g in groups:
        for s in chosen:
            cell = f"{s}_{g}"
            cols[cell] = av.get(cell, nan)
            if boot is not None:
                lo = hi = nan
                if cell in boot.cells:
                    j = boot.cells.index(cell)
                    idx = [boot.metrics.index(m) for m in mm.metrics]
                    lo, hi = boot.low[j, idx], boot.high[j, idx]
                cols[f"{cell}_lo"], cols[f"{cell}_hi"] = lo, hi
    if ranks is not None:
        cols["rank"], cols["rank_median"] = ranks.rank, ranks.median
        cols["rank_lo"], cols["rank_hi"] = ranks.low, ranks.high
    return pd.DataFrame(cols)
