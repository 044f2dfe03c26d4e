"""The leaderboard tab's callbacks: the table, its CSV, the Ord-vs-Sep scatter, a visitor's scores file.

The table is sorted and filtered by family; a visitor's scores file joins the board for their session.
"""
from __future__ import annotations

import numpy as np

from ... import figures
from ...display import column_label, plural
from ...errors import InputError
from ..state.app_state import AppView
from ..state.tables import metric_family
from .common import families_filter, write_csv, mark_columns, scores_file_error, shown, uploaded_scores_file

BOARD_STATS = ("ord_avg", "sep_avg", "signed_sep_avg", "ord_synth", "sep_synth", "ord_nat", "sep_nat",
               "ord_real", "sep_real")
#: uncompressed bytes a scores file's columns may hold per allowed row (Parquet metadata, checked before reading)
SCORES_DECODED_BYTES_PER_ROW = 1024


# -- leaderboard -------------------------------------------------------------------------------------

def leaderboard(app: AppView, mode: str = "paper", families_sel=None, sort_by: str = "ord_avg",
                best_first: bool = True):
    """The leaderboard table: one row per metric (fractions; :func:`style_leaderboard` shows them x100).

    Ord/Sep x Avg/Synth/Nat/Real and the average signed separation, with the metric's direction (``dir``),
    the SEGs it has an Ord value on, its family and its source (``published``, ``uploaded``, ``live``).
    Called by the leaderboard's redraw (:func:`ts2viz.ui.tabs.board.board_view`: the family filter, sort,
    order, interval boxes, the mode, and after scores are added) and for its CSV.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str, default "paper"
        The meta-metric policy preset.
    families_sel : list of str or None, default None
        The family filter's value.
    sort_by : str, default "ord_avg"
        A stat column, or ``metric`` for the name (an unknown column: ``ord_avg``).
    best_first : bool, default True
        Largest values first (for names: A to Z).

    Returns
    -------
    pandas.DataFrame
        The table (meta-metric columns marked x100 for :func:`shown`); empty with its columns when no
        metric is loaded.

    Raises
    ------
    InputError
        For an unknown mode.

    Examples
    --------
    >>> from ts2viz.ui import load_state
    >>> board = leaderboard(load_state("ts2", fetch_images=False).view(), "paper", ["Embedding"])
    >>> board[["metric", "dir", "ord_avg", "segs", "source"]].round(3).values.tolist()
    [['ALIGNScore', '↑', 0.739, 165, 'published'], ['CLIPScore', '↑', 0.714, 165, 'published']]
    """
    import pandas as pd

    if not app.metrics:
        return pd.DataFrame(columns=["metric", "dir", *BOARD_STATS, "segs", "family", "source"])
    mm = app.mm(mode)
    board = mm.leaderboard(("ord", "sep", "signed_sep"))
    board = board[["metric"] + [c for c in BOARD_STATS if c in board.columns]]
    fam = families_filter(families_sel)
    segs = mm.segs()
    scored = segs.groupby("metric", sort=False)["ord"].apply(lambda s: int(s.notna().sum()))
    # the scores right after the name (on a phone the first columns are all that shows), then where it is from
    board.insert(1, "dir", ["↓" if app.lower_is_better(m) else "↑" for m in board["metric"]])
    board["segs"] = [int(scored.get(m, 0)) for m in board["metric"]]
    board["family"] = [metric_family(m) for m in board["metric"]]
    board["source"] = [app.kind_of(m) for m in board["metric"]]
    if fam is not None:
        board = board[board["family"].isin(fam)]
    if sort_by not in board.columns:
        sort_by = "ord_avg"
    ascending = best_first if sort_by == "metric" else not best_first
    board = board.sort_values(sort_by, ascending=ascending, na_position="last", kind="stable")
    return mark_columns(pd.DataFrame(board).reset_index(drop=True), x100=BOARD_STATS)


def best_cells(board) -> dict[str, int]:
    """Row position of the best (largest) value of each stat column.

    Parameters
    ----------
    board : pandas.DataFrame
        A table of :func:`leaderboard`.

    Returns
    -------
    dict of str to int
        Row by column (columns without values left out).
    """
    out = {}
    for c in BOARD_STATS:
        if c in board.columns and board[c].notna().any():
            out[c] = int(np.nanargmax(board[c].to_numpy(dtype=float)))
    return out


def style_leaderboard(board):
    """The board as people read it (:func:`shown`: values x100), the best value per column bold on a tinted cell.

    Parameters
    ----------
    board : pandas.DataFrame
        A table of :func:`leaderboard`.

    Returns
    -------
    pandas.io.formats.style.Styler
        What the leaderboard's ``gr.Dataframe`` shows.
    """
    nums = [c for c in BOARD_STATS if c in board.columns]
    return mark_best(mark_columns(board, x100=nums).pipe(shown), board, nums)


def mark_best(styler, board, stats):
    """The best value of each stat column of the board bold on a tinted cell (:func:`best_cells`).

    Parameters
    ----------
    styler : pandas.io.formats.style.Styler
        The board as shown (headers of :func:`~ts2viz.display.column_label`).
    board : pandas.DataFrame
        A table of :func:`leaderboard`.
    stats : list of str
        The stat columns to mark (columns of ``board``).

    Returns
    -------
    pandas.io.formats.style.Styler
        ``styler`` with the best cells marked.
    """
    best = best_cells(board)
    by_label = {column_label(c): c for c in stats}

    def mark(col):
        i = best.get(by_label.get(col.name))
        return ["font-weight:700;background-color:#e0e7ff;color:#3730a3" if k == i else "" for k in range(len(col))]

    return styler.apply(mark, subset=list(by_label))


def leaderboard_csv(app: AppView, mode: str = "paper", families_sel=None, sort_by: str = "ord_avg",
                    best_first: bool = True) -> str:
    """The leaderboard as a CSV download (fractions), its rows in the order the table shows them.

    Called by the leaderboard's "Download CSV" button (without the interval box ticked; with it,
    :func:`ts2viz.ui.callbacks.uncertainty.intervals.leaderboard_ci_csv`).

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str, default "paper"
        The meta-metric policy preset.
    families_sel : list of str or None, default None
        The family filter's value.
    sort_by : str, default "ord_avg"
        The sort column.
    best_first : bool, default True
        The order.

    Returns
    -------
    str
        The file's path in the session's downloads folder.
    """
    board = leaderboard(app, mode, families_sel, sort_by, best_first)
    cols = ["metric"] + [c for c in BOARD_STATS if c in board.columns]
    return write_csv(app, board[cols], f"ts2viz-leaderboard-{mode}")


def leaderboard_figure(app: AppView, mode: str = "paper", families_sel=None):
    """The Ord-vs-Sep scatter of the leaderboard, without intervals.

    Parameters
    ----------
    app : AppView
        The session's view.
    mode : str, default "paper"
        The meta-metric policy preset.
    families_sel : list of str or None, default None
        The family filter's value.

    Returns
    -------
    plotly.graph_objects.Figure
        The scatter.
    """
    return figures.ord_sep_scatter(leaderboard(app, mode, families_sel), title=f"Ord vs Sep ({mode} mode)")

#: the class of the list of the scatter's points that narrow screens show under it (assets/app.css)
SCATTER_NAMES_CLASS = "scatter-names"


def scatter_names_html(board, x: str = "ord_avg", y: str = "sep_avg") -> str:
    """Every point of the Ord-vs-Sep scatter by name with its two values (x100), as HTML.

    For the note under the plot. Shown only where the plot's own labels are hidden (a window narrower than
    1040 px, a phone: assets/app.css), so that no name is missing there either.

    Parameters
    ----------
    board : pandas.DataFrame or None
        A table of :func:`leaderboard`.
    x : str, default "ord_avg"
        The x column.
    y : str, default "sep_avg"
        The y column.

    Returns
    -------
    str
        The HTML (names escaped); empty for no rows.
    """
    from ...display import fmt_x100, md_html_text

    if board is None or len(board) == 0:
        return ""
    items = [f"<b>{md_html_text(m)}</b> {fmt_x100(a)} · {fmt_x100(b)}"
             for m, a, b in zip(board["metric"], board[x], board[y])]
    return (f'<div class="{SCATTER_NAMES_CLASS}"><small>On a narrow screen the names are not drawn on the plot '
            f"(tap a point for its name). The points ({column_label(x)} · {column_label(y)}, x100): "
            + "; ".join(items) + ".</small></div>")


def add_scores_file(app: AppView, path, display_name: str | None = None, lower_is_better: str = "") -> str:
    """Load an uploaded scores file (CSV or Parquet) into the session's workspace.

    Called by the leaderboard's upload button (:func:`ts2viz.ui.tabs.board.add_scores`, in the scores
    upload lane); the metrics then join every tab for this session. The session's caps hold (files, bytes,
    rows, metrics), checked before the data is read. In public mode a file that cannot be read gets a
    message naming the row but quoting nothing from the file.

    Parameters
    ----------
    app : AppView
        The session's view.
    path : str or os.PathLike or None
        The uploaded file.
    display_name : str or None, default None
        How messages name it (``None``: the file's name).
    lower_is_better : str, default ""
        Its lower-is-better metrics, comma-separated.

    Returns
    -------
    str
        The status line shown under the upload.

    Raises
    ------
    InputError
        For no file, a file outside the upload folder (public mode), of another type, past a cap, that
        does not read as scores of the dataset, or naming a metric already loaded.
    """
    from ...scores import IGNORED_COLUMNS, ReadCaps, TooLarge, read_scores

    if not path:
        raise InputError("choose a scores file (CSV or Parquet) first")
    p, name = uploaded_scores_file(app, path, display_name, (".csv", ".parquet", ".pq"),
                                   "scores must be a .csv or .parquet file")
    limits = app.limits
    lib = [s.strip() for s in (lower_is_better or "").split(",") if s.strip()]
    # the caps are checked before the data is read (a few KB of Parquet can stand for gigabytes)
    caps = ReadCaps(max_rows=limits.max_rows, max_metrics=limits.max_metrics,
                    max_columns=limits.max_metrics + len(IGNORED_COLUMNS) + 2,
                    max_decoded_bytes=SCORES_DECODED_BYTES_PER_ROW * limits.max_rows)
    try:
        sc = read_scores(p, dataset=app.dataset, lower_is_better=lib, caps=caps)
    except TooLarge as e:       # names a cap, quotes nothing from the file
        raise InputError(e.problem, file=name, row=e.row) from None
    except InputError as e:
        raise scores_file_error(app, e, p, name, "scores file for this dataset (expected a file_name column naming "
                                "the dataset's images and numeric metric columns)") from None
    if len(sc.file_names) > limits.max_rows:
        raise InputError(f"{len(sc.file_names)} rows; the limit is {limits.max_rows}", file=name)
    sc.source = name
    app.add_table(sc, kind="uploaded", name=name)
    return f"Loaded {plural(len(sc.metrics), 'metric')} from {name}: {', '.join(sc.metrics)}" \
        + "".join(f". ⚠ {w}" for w in coverage_warnings(sc, app.dataset))


def coverage_warnings(scores, dataset) -> list[str]:
    """What ``ts2viz leaderboard`` warns about a scores table's coverage of a dataset, one line per metric.

    Parameters
    ----------
    scores : ts2viz.scores.Scores
        The scores.
    dataset : ts2viz.dataset.Dataset
        The dataset.

    Returns
    -------
    list of str
        One warning per metric without a score for every image (none for a complete table).
    """
    from ...scores import coverage

    out = []
    for c in coverage(scores, dataset):
        if c.n_scored == 0:
            out.append(f"metric {c.metric!r} has no scores for any image of the dataset; its results are empty")
        elif not c.complete:
            out.append(c.describe() + "; its ord and sep use the scored images only")
    return out
