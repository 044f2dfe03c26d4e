"""The app's "How sure is the leaderboard?" views: intervals, rank intervals, significance, paired comparisons.

Interval whiskers, intervals and rank intervals in the leaderboard table, the significance heatmap and
the paired comparison of two metrics.

Plain functions of data like :mod:`ts2viz.ui.callbacks` (the session's
:class:`~ts2viz.ui.state.app_state.AppView` first, plain values after; tested without a browser); the
statistics are :mod:`ts2viz.statistics`'s, with its defaults (:data:`SETTINGS`: 10,000 resamples,
95 %, seed 0), so the app shows the numbers ``ts2viz leaderboard --ci``, ``compare`` and
``significance`` print.

One bootstrap serves every view of a mode: it is drawn when a view first needs it (never at start,
never for a view without intervals) and kept whole, since ranks, pairwise tests and paired intervals
all read its resamples. It is drawn over every metric of one side:

- the operator's metrics: one bootstrap per (data version, mode, metrics), shared by all sessions
  (:data:`SHARED_BOOT_BYTES`);
- a session with metrics of its own (uploads, live scores): one over the shared and its own metrics
  together, kept in a store for all such sessions with its own bound (:data:`SESSION_BOOT_BYTES`),
  keyed by a token of that session's workspace, so no session can reach another's.

The resamples depend only on the seed, their number and the partition sizes, never on the metrics
(:func:`ts2viz.statistics.bootstrap.bootstrap`), so a view of shared metrics only (a pair, a family)
reads the shared bootstrap even in a session that has its own. The small results derived from a
bootstrap (tables, figures, captions) go through ``app.memo`` like every other view.
"""
from __future__ import annotations

import itertools
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import figures
from ...statistics import bootstrap as bs, paired_comparison as pcmp, rank_intervals as ri, wilcoxon as wx
from ...display import SCALED_STATS, column_label, fmt_stat, md_text, stat_name
from ...errors import InputError
from ...metametrics import MetaMetrics
from .board import BOARD_STATS, best_cells, leaderboard
from .common import ALL, SEG_STATS, interval_text, mark_columns, metric_choices, shown, table_csv
from ..state.memo import Memo
from ..state.app_state import AppView
from ..state.session_store import CLOSE_HOOKS

#: bootstrap settings of every view (the library's defaults: 10,000 resamples, 95 %, seed 0)
SETTINGS = bs.DEFAULTS
#: significance level of the heatmap's marks and the pair caption's verdict
ALPHA = 0.05
#: bytes of bootstraps kept whole for the operator's metrics (one per mode is ~30 MB for TS2's 19
#: metrics; a bootstrap over a quarter of this is drawn for each view that needs it, not kept)
SHARED_BOOT_BYTES = 192 * 1024 * 1024
#: the same for all sessions with metrics of their own, together (least recently used dropped first)
SESSION_BOOT_BYTES = 192 * 1024 * 1024
#: up to this many metrics the significance heatmap prints each difference in its cell; above, only
#: the significance marks (the colour shows the difference, hover the number)
MAX_NUMBERED = 10
#: the rank columns of the table and the CSV
RANK_COLUMNS = ("rank", "rank_median", "rank_lo", "rank_hi")
#: the header of the table's rank column (what it shows: the median rank and its interval)
RANK_HEADER = "median rank [95%]"


@dataclass(frozen=True, eq=False)
class BoardBootstrap:
    """A bootstrap of one side's meta-metrics.

    Parameters
    ----------
    mm : ts2viz.metametrics.MetaMetrics
        What it was drawn from.
    boot : ts2viz.statistics.bootstrap.LeaderboardBootstrap
        The bootstrap.
    seconds : float
        The seconds it took to draw.
    """

    mm: MetaMetrics
    boot: bs.LeaderboardBootstrap
    seconds: float


def _nbytes(entry: BoardBootstrap) -> int:
    return int(entry.boot.resampled.nbytes + entry.boot.estimate.nbytes * 3) + 4096


_SHARED: "weakref.WeakKeyDictionary[object, Memo]" = weakref.WeakKeyDictionary()
_SESSIONS = Memo(SESSION_BOOT_BYTES, sizer=_nbytes)
_TOKENS: "weakref.WeakKeyDictionary[object, int]" = weakref.WeakKeyDictionary()
_COUNTER = itertools.count(1)
_LOCK = threading.Lock()


def _shared_store(app: AppView) -> Memo:
    with _LOCK:
        store = _SHARED.get(app.app)
        if store is None:
            store = _SHARED[app.app] = Memo(SHARED_BOOT_BYTES, sizer=_nbytes)
        return store


def _token(workspace) -> int:
    """A number no other workspace of this process ever gets (an ``id()`` can be reused)."""
    with _LOCK:
        t = _TOKENS.get(workspace)
        if t is None:
            t = _TOKENS[workspace] = next(_COUNTER)
        return t


def _forget(workspace) -> None:
    """A closed session's bootstraps go with it (the store's bound is for sessions still open)."""
    with _LOCK:
        token = _TOKENS.get(workspace)
    if token is not None:
        _SESSIONS.discard(lambda key: len(key) > 1 and key[1] == token)


CLOSE_HOOKS.append(_forget)


def _draw(mm: MetaMetrics) -> BoardBootstrap:
    t = time.perf_counter()
    boot = bs.bootstrap(mm, n_resamples=SETTINGS.n_resamples, confidence=SETTINGS.confidence, seed=SETTINGS.seed)
    return BoardBootstrap(mm, boot, time.perf_counter() - t)


def board_bootstrap(app: AppView, mode: str, metrics: Sequence[str] | None = None) -> BoardBootstrap:
    """The bootstrap that covers some metrics in a mode, drawn once and kept.

    The shared one when they are all the operator's, else the session's own over the shared and its own
    metrics (see the module's description). Also drawn by :func:`ts2viz.ui.build_app` for both modes
    before the first visitor, and by a scores upload for the session's own metrics.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    metrics : sequence of str or None, default None
        The metrics (``None``: every metric the session sees).

    Returns
    -------
    BoardBootstrap
        The bootstrap.

    Raises
    ------
    InputError
        When no scores are loaded, or for an unknown mode.
    """
    wanted = list(app.metrics if metrics is None else metrics)
    if not app.metrics:
        raise InputError("no scores loaded")
    ws = app.workspace
    own = any(ws.has(m) for m in wanted)
    if not own:
        mm = app.app.mm(mode)
        key = ("boot", app.app.version, mode, tuple(mm.metrics), SETTINGS)
        return _shared_store(app).get(key, lambda: _draw(mm))
    mm = app.mm(mode)
    key = ("boot", _token(ws), app.app.version, ws.version, mode, tuple(mm.metrics), SETTINGS)
    return _SESSIONS.get(key, lambda: _draw(mm))


def cell_name(stat: str, partition: str = ALL) -> str:
    """The leaderboard cell of a per-SEG statistic over a partition.

    Parameters
    ----------
    stat : str
        One of :data:`ts2viz.ui.callbacks.common.SEG_STATS`.
    partition : str, default ALL
        A partition, or all SEGs.

    Returns
    -------
    str
        The cell's name.

    Raises
    ------
    InputError
        For an unknown statistic.

    Examples
    --------
    >>> cell_name("ord"), cell_name("sep", "Nat")
    ('ord_avg', 'sep_nat')
    """
    if stat not in SEG_STATS:
        raise InputError(f"unknown statistic {stat!r}: expected one of {', '.join(SEG_STATS)}")
    group = "avg" if partition in (None, "", ALL) else str(partition).lower()
    return f"{stat}_{group}"


def cell_label(cell: str) -> str:
    """A leaderboard cell as captions name it (``avg`` is the SEGs the leaderboard averages).

    Parameters
    ----------
    cell : str
        A cell name.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> cell_label("ord_avg"), cell_label("signed_sep_nat")
    ('Ord · all SEGs', 'Signed sep · Nat')
    """
    stat, group = bs.split_cell(cell)
    return f"{stat_name(stat).capitalize()} · {'all SEGs' if group == 'avg' else group.capitalize()}"


def _check_cell(entry: BoardBootstrap, cell: str) -> None:
    if cell not in entry.boot.cells:
        groups = sorted({c.split("_")[-1] for c in entry.boot.cells})
        raise InputError(f"no SEGs of partition {cell.split('_')[-1][:40]!r} (have: {', '.join(groups)})")


# -- the leaderboard ----------------------------------------------------------------------------------

def rank_cell(sort_by: str | None, cells: Sequence[str] = BOARD_STATS) -> str:
    """The cell the rank column ranks by: the sort column when it is a stat column among ``cells``, else Ord · Avg.

    A dataset without a Real partition has no ``ord_real``.

    Parameters
    ----------
    sort_by : str or None
        The board's sort column.
    cells : sequence of str, default BOARD_STATS
        The cells the board has.

    Returns
    -------
    str
        The cell.
    """
    return sort_by if sort_by in BOARD_STATS and sort_by in cells else "ord_avg"


def board_intervals(app: AppView, mode: str, board, sort_by: str | None = "ord_avg"):
    """A leaderboard table with its intervals and rank intervals (fractions, like the board).

    ``{cell}_lo``, ``{cell}_hi`` after each stat column and the rank columns ``rank``, ``rank_median``,
    ``rank_lo``, ``rank_hi`` (:func:`ts2viz.statistics.rank_intervals.rank_intervals` by :func:`rank_cell`
    among every metric the session sees) at the end. The intervals and ranks are those of
    :func:`ts2viz.statistics.bootstrap.leaderboard_table` on the session's meta-metrics with the bootstrap of
    :func:`board_bootstrap`. Called by the leaderboard's redraw when its scatter whiskers or table
    intervals are on.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    board : pandas.DataFrame
        A :func:`ts2viz.ui.callbacks.board.leaderboard` table (any rows and order).
    sort_by : str or None, default "ord_avg"
        The board's sort column.

    Returns
    -------
    pandas.DataFrame
        The table with the interval and rank columns (``attrs["rank_by"]`` names the rank's cell);
        ``board`` itself when it has no rows.
    """
    import pandas as pd

    if len(board) == 0:
        return board
    by = rank_cell(sort_by, board.columns)

    def build():
        entry = board_bootstrap(app, mode)
        ranks = ri.rank_intervals(entry.mm, by, boot=entry.boot)
        return bs.leaderboard_table(entry.mm, ("ord", "sep", "signed_sep"), boot=entry.boot,
                                   ranks=ranks).set_index("metric")

    full = app.memo(("board_ci", mode, by, SETTINGS), app.metrics, build)
    cols = []
    for c in board.columns:
        cols.append(c)
        if c in BOARD_STATS:
            cols += [f"{c}_lo", f"{c}_hi"]
    cols = [c for c in cols if c != "segs"] + list(RANK_COLUMNS) + (["segs"] if "segs" in board.columns else [])
    out = pd.DataFrame(board).copy()
    extra = full.loc[list(out["metric"])]
    for c in cols:
        if c not in out.columns:
            out[c] = extra[c].to_numpy()
    out = out[cols]
    out.attrs.update(board.attrs)
    out.attrs["rank_by"] = by
    return out


def rank_text(median, lo, hi) -> str:
    """The median rank over the resamples and its interval.

    Parameters
    ----------
    median : float
        The median rank.
    lo : float
        The interval's low end.
    hi : float
        Its high end.

    Returns
    -------
    str
        ``"2 [1, 5]"``; ``"–"`` if it has none.
    """
    if np.isnan(median):
        return "–"
    return f"{median:.0f} [{lo:.0f}, {hi:.0f}]"


def style_board_intervals(board):
    """The board with intervals (:func:`board_intervals`) as people read it.

    Each stat cell ``71.4 [68.0, 74.9]`` (x100) and a :data:`RANK_HEADER` cell ``2 [1, 5]`` after the
    metric's name; the best value per column marked as in
    :func:`ts2viz.ui.callbacks.board.style_leaderboard`. The data underneath stay numbers (the value; for
    rank the median rank), so sorting by a column sorts by value. What the leaderboard table shows with its
    interval box ticked.

    Parameters
    ----------
    board : pandas.DataFrame
        What :func:`board_intervals` returns.

    Returns
    -------
    pandas.io.formats.style.Styler
        The styled table.
    """
    import pandas as pd

    stats = [c for c in BOARD_STATS if c in board.columns]
    keep = [c for c in board.columns if not c.endswith(("_lo", "_hi")) and c not in RANK_COLUMNS[1:]]
    show = board[[c for c in keep if c != "rank"]].copy()
    show.insert(1, RANK_HEADER, board["rank_median"].to_numpy())
    show = mark_columns(pd.DataFrame(show).reset_index(drop=True), x100=stats)
    styler = shown(show)
    # each cell's text names its interval, so formatters are set row by row (one call per row: a call
    # per cell costs ten times as much)
    for i in range(len(board)):
        texts = {c: interval_text(board[c].iloc[i], board[f"{c}_lo"].iloc[i], board[f"{c}_hi"].iloc[i],
                                  scale=100.0, digits=1) for c in stats}
        texts[RANK_HEADER] = rank_text(board["rank_median"].iloc[i], board["rank_lo"].iloc[i], board["rank_hi"].iloc[i])
        texts = {column_label(c): t for c, t in texts.items()}      # the Styler's headers (see shown)
        styler.format({c: (lambda _, t=t: t) for c, t in texts.items()}, subset=pd.IndexSlice[[i], list(texts)])
    best = best_cells(board)
    by_label = {column_label(c): c for c in stats}

    def mark(col):
        i = best.get(by_label.get(col.name))
        return ["font-weight:700;background-color:#e0e7ff;color:#3730a3" if k == i else "" for k in range(len(col))]

    return styler.apply(mark, subset=list(by_label))


def interval_note(app: AppView, mode: str, board, *, ranks: bool = True) -> str:
    """The line under the table and scatter that says what the intervals (and the rank column) are.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    board : pandas.DataFrame
        What :func:`board_intervals` returns (its ``rank_by``).
    ranks : bool, default True
        Also say what the rank column is.

    Returns
    -------
    str
        The note (Markdown).
    """
    entry = board_bootstrap(app, mode)
    by = board.attrs.get("rank_by", "ord_avg")
    st = entry.boot.settings
    sizes = ", ".join(f"{n} {g.capitalize()}" for g, n in entry.boot.group_sizes if g != "avg")
    n_all = dict(entry.boot.group_sizes).get("avg", 0)
    text = (f"Intervals: {st.confidence:.0%} percentile bootstrap ({st.n_resamples:,} resamples of the {n_all} "
            f"averaged SEGs, drawn within partitions: {sizes}; seed {st.seed}; drawn in {entry.seconds:.2f} s "
            "for this mode, then reused).")
    if ranks:
        text += (f" Median rank [{st.confidence:.0%} interval]: the metric's rank by {cell_label(by)} (the sort "
                 f"column) among all {len(entry.boot.metrics)} metrics, over the resamples.")
    return text + " Which differences are significant: the Correlations tab."


def leaderboard_ci_csv(app: AppView, mode: str = "paper", families_sel=None, sort_by: str = "ord_avg") -> str:
    """The leaderboard CSV with intervals: the "Download CSV" button with the interval box ticked.

    ``metric``, each stat column followed by ``{col}_lo``, ``{col}_hi``, then ``rank``, ``rank_median``,
    ``rank_lo``, ``rank_hi`` (by :func:`rank_cell`) and ``rank_by``. Fractions, like every CSV of the app.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str, default "paper"
        The meta-metric policy preset.
    families_sel : list of str or None, default None
        The family filter's value.
    sort_by : str, default "ord_avg"
        The board's sort column.

    Returns
    -------
    str
        The file's path in the session's downloads folder.
    """
    board = board_intervals(app, mode, leaderboard(app, mode, families_sel), sort_by)
    cols = ["metric"] + [c for c in board.columns if c.startswith(tuple(BOARD_STATS))] + list(RANK_COLUMNS)
    df = board[cols].copy()
    df["rank_by"] = board.attrs.get("rank_by", "ord_avg")
    return table_csv(app, df, f"leaderboard-{mode}-intervals")


# -- which orderings are significant -----------------------------------------------------------------

def significance(app: AppView, mode: str, stat: str = "ord", partition: str = ALL,
                 families_sel=None) -> pcmp.PairwiseComparison:
    """All pairs of the metrics shown compared in one leaderboard cell, best first.

    The metrics are those of the family filter, compared in the cell of ``stat`` over ``partition``
    (:func:`cell_name`) and ordered by it. The comparisons are
    :func:`ts2viz.statistics.paired_comparison.pairwise`'s (difference, paired bootstrap interval, Wilcoxon
    signed-rank p on per-SEG values); the Holm correction runs over the pairs shown (M(M-1)/2 for M
    metrics): with every metric shown it is ``pairwise``'s own. Called by the Correlations tab's redraw.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str, default "ord"
        A per-SEG statistic.
    partition : str, default ALL
        The SEGs.
    families_sel : list of str or None, default None
        The family filter's value.

    Returns
    -------
    ts2viz.statistics.paired_comparison.PairwiseComparison
        The comparisons.

    Raises
    ------
    InputError
        For no metric in the chosen families, an unknown statistic, or a partition without SEGs.
    """
    cell = cell_name(stat, partition)
    shown_metrics = metric_choices(app, families_sel)
    if not shown_metrics:
        raise InputError("no metrics in the chosen families")
    entry = board_bootstrap(app, mode, shown_metrics)
    _check_cell(entry, cell)
    full = pcmp.pairwise(entry.mm, cell, boot=entry.boot)
    idx = [full.metrics.index(m) for m in shown_metrics]
    est = full.estimate[idx]
    order = [idx[k] for k in np.argsort(np.where(np.isnan(est), np.inf, -est), kind="stable")]
    if len(order) == len(full.metrics):
        holm = full.pvalue_holm[np.ix_(order, order)]
    else:
        M = len(order)
        I, J = np.triu_indices(M, 1)
        raw = full.pvalue[np.ix_(order, order)]
        holm = np.full((M, M), np.nan)
        holm[I, J] = holm[J, I] = wx.holm(raw[I, J])
    sub = np.ix_(order, order)
    return pcmp.PairwiseComparison(cell, tuple(full.metrics[i] for i in order), full.settings, full.mode,
                                full.estimate[order], full.difference[sub], full.low[sub], full.high[sub],
                                full.pvalue[sub], holm, full.n[sub])


def significance_figure(app: AppView, mode: str, stat: str = "ord", partition: str = ALL, families_sel=None,
                        pw: pcmp.PairwiseComparison | None = None):
    """The significance heatmap: cell (row, column) = row metric minus column metric, coloured where significant.

    Coloured where the Holm-corrected p < :data:`ALPHA`; differences printed up to :data:`MAX_NUMBERED`
    metrics. The Correlations tab's right heatmap.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str, default "ord"
        A per-SEG statistic.
    partition : str, default ALL
        The SEGs.
    families_sel : list of str or None, default None
        The family filter's value.
    pw : ts2viz.statistics.paired_comparison.PairwiseComparison or None, default None
        :func:`significance`'s result, if already computed.

    Returns
    -------
    plotly.graph_objects.Figure
        The heatmap.
    """
    pw = pw if pw is not None else significance(app, mode, stat, partition, families_sel)
    scaled = stat in SCALED_STATS
    # beside the correlation heatmap a cell is ~20 px wide: numbers from 9 metrics on would not fit
    return figures.significance_heatmap(
        pw.metrics, pw.difference, pw.pvalue_holm, alpha=ALPHA, scale=100.0 if scaled else 1.0,
        cell_text="value" if len(pw.metrics) <= MAX_NUMBERED else "marks",
        title=f"Which orderings are significant: {cell_label(pw.cell)}, row − column"
              f"{' (x100)' if scaled else ''}, Holm p < {ALPHA:g}")


def significance_note(pw: pcmp.PairwiseComparison) -> str:
    """What the significance heatmap shows, with its count of significant pairs (the note under it).

    Parameters
    ----------
    pw : ts2viz.statistics.paired_comparison.PairwiseComparison
        :func:`significance`'s result.

    Returns
    -------
    str
        The note (Markdown).
    """
    M = len(pw.metrics)
    pairs = M * (M - 1) // 2
    I, J = np.triu_indices(M, 1)
    n_sig = int(pw.significant(ALPHA)[I, J].sum())
    segs = int(np.nanmax(pw.n)) if M > 1 else 0
    return (f"**Which orderings are significant** (right): {n_sig} of {pairs} pairs. A cell is row metric − "
            f"column metric in the leaderboard cell {cell_label(pw.cell)}; it is coloured (blue: row "
            f"better, orange: row worse) when a two-sided Wilcoxon signed-rank test on the two metrics' per-SEG values (up to "
            f"{segs} SEGs), Holm-corrected over the {pairs} pairs shown, gives p < {ALPHA:g} "
            f"(* < {ALPHA:g}, ** < 0.01, *** < 0.001); grey cells are not significant; hover a cell for its "
            "difference and p. Metrics are ordered "
            "by that cell, best first. The correlation heatmap (left) asks whether two metrics fail on the "
            "same SEGs; this one asks whether one is better on average.")


# -- two metrics -----------------------------------------------------------------------------------

def pair_comparison(app: AppView, mode: str, stat: str, x, y, partition: str = ALL) -> dict | None:
    """One metric against another in one leaderboard cell, paired over the same SEGs.

    :func:`ts2viz.statistics.paired_comparison.compare`; called by the Correlations tab's redraw for the
    caption under the pair scatter.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str
        The meta-metric policy preset.
    stat : str
        A per-SEG statistic.
    x : str
        The x metric.
    y : str
        The y metric.
    partition : str, default ALL
        The SEGs.

    Returns
    -------
    dict or None
        ``cell``, ``x``, ``y``, ``estimate_x``, ``estimate_y``, ``difference`` (y - x, as the pair table's
        column), ``low``, ``high`` (its paired bootstrap interval), ``n`` (SEGs with both values),
        ``pvalue`` (Wilcoxon signed-rank, two-sided, not corrected) and ``confidence``; ``None`` when x and
        y are the same metric.

    Raises
    ------
    InputError
        For a metric the session does not have, an unknown statistic, or a partition without SEGs.
    """
    for m in (x, y):
        if m not in app.metrics:
            raise InputError(f"no metric {str(m)[:80]!r} loaded; choose one from the list")
    cell = cell_name(stat, partition)
    if x == y:
        return None
    entry = board_bootstrap(app, mode, [x, y])
    _check_cell(entry, cell)
    c = pcmp.compare(entry.mm, y, x, boot=entry.boot)
    k = c.cells.index(cell)
    return {"cell": cell, "x": x, "y": y, "estimate_x": float(c.estimate_b[k]), "estimate_y": float(c.estimate_a[k]),
            "difference": float(c.difference[k]), "low": float(c.low[k]), "high": float(c.high[k]),
            "n": int(c.n[k]), "pvalue": float(c.pvalue[k]), "confidence": c.settings.confidence}


def _p(p: float) -> str:
    return "n/a" if np.isnan(p) else (f"{p:.3f}" if p >= 0.001 else f"{p:.1e}")


def pair_comparison_md(cmp: dict | None, stat: str) -> str:
    """The caption under the pair scatter: the difference, its interval and the Wilcoxon p.

    Parameters
    ----------
    cmp : dict or None
        What :func:`pair_comparison` returns.
    stat : str
        The per-SEG statistic (x100 or score units).

    Returns
    -------
    str
        The caption (Markdown, metric names escaped).
    """
    if cmp is None:
        return "Choose two different metrics to compare them."

    def f(v):
        return fmt_stat(stat, v)

    d = cmp["difference"]
    signed = f(d) if np.isnan(d) or d < 0 else "+" + f(d)
    unit = " (x100)" if stat in SCALED_STATS else " (score units)"
    p = cmp["pvalue"]
    zero = "includes 0" if np.isnan(cmp["low"]) or cmp["low"] <= 0 <= cmp["high"] else "excludes 0"
    verdict = ("significant" if p < ALPHA else "not significant") if not np.isnan(p) else "not testable"
    return (f"**{md_text(cmp['y'])} − {md_text(cmp['x'])}** in {cell_label(cmp['cell'])}{unit}: {f(cmp['estimate_y'])} − "
            f"{f(cmp['estimate_x'])} = **{signed}**, {cmp['confidence']:.0%} paired bootstrap interval "
            f"[{f(cmp['low'])}, {f(cmp['high'])}], which {zero}. Wilcoxon signed-rank p = {_p(p)} on the per-SEG "
            f"values of the {cmp['n']} SEGs the leaderboard averages (with both values): **{verdict}** at {ALPHA:g} for this pair alone (uncorrected; "
            "the significance heatmap above corrects for all pairs shown).")


__all__ = ["SETTINGS", "ALPHA", "BoardBootstrap", "board_bootstrap", "cell_name", "cell_label", "rank_cell",
           "board_intervals", "style_board_intervals", "rank_text", "interval_note",
           "leaderboard_ci_csv", "significance", "significance_figure", "significance_note",
           "pair_comparison", "pair_comparison_md"]
