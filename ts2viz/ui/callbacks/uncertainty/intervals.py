"""The leaderboard with intervals and rank intervals: the table, how people read it, its note and its CSV."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ....metametrics import intervals as bs, ranks as ri
from ....metametrics.table import leaderboard_table
from ....display import column_label
from ..board import BOARD_STATS, leaderboard, mark_best
from ..common import interval_text, mark_columns, shown, table_csv
from ...state.app_state import AppView
from .resampled import SETTINGS, board_bootstrap, cell_label


#: the rank columns of the table and the CSV
RANK_COLUMNS = ("rank", "rank_median", "rank_lo", "rank_hi")


#: the header of the table's rank column (what it shows: the median rank and its interval)
RANK_HEADER = "median rank [95%]"


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

    ``{cell}_lo``, ``{cell}_hi`` after each stat column and the rank columns ``rank``, ``rank_median``, ``rank_lo``,
    ``rank_hi`` (:func:`ts2viz.metametrics.ranks.rank_intervals` by :func:`rank_cell` among every metric the
    session sees) at the end. The intervals and ranks are those of
    :func:`ts2viz.metametrics.table.leaderboard_table` on the session's meta-metrics with the bootstrap of
    :func:`~ts2viz.ui.callbacks.uncertainty.resampled.board_bootstrap`. Called by the leaderboard's redraw when its
    scatter whiskers or table intervals are on.

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
        return leaderboard_table(entry.mm, ("ord", "sep", "signed_sep"), boot=entry.boot,
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
    return mark_best(styler, board, stats)


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
