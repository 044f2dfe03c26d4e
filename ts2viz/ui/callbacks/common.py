"""Helpers every tab's callbacks share.

The SEG and metric a view names (checked), family filters, tables as people read them (:func:`shown`),
CSV downloads into the session's folder, and the checks of a visitor's uploaded file. Plain functions of
data (see :mod:`ts2viz.ui.callbacks`).
"""
from __future__ import annotations

import html
import logging
import os
import re
from pathlib import Path
from typing import Any, Callable, Sequence

from ...display import column_label, echo, fmt_score, fmt_x100, is_missing, plural, spreadsheet_safe_frame
from ...errors import InputError
from ..state.app_state import AppView
from ..state.tables import metric_family

log = logging.getLogger("ts2viz.ui")

ALL = "All"
#: the statistics a SEG can be ranked or correlated by
SEG_STATS = ("ord", "sep", "signed_sep", "delta", "kendall")

#: how seg_view and select_walk produce a figure: ``plot(key, metrics, build)`` with a key naming all
#: the figure depends on besides the metrics' data, the metrics it shows, and a builder of the figure.
#: The default builds it; the app passes one that returns cached, serialised plot data.
Plot = Callable[[tuple, Sequence[str | None], Callable[[], Any]], Any]


#: what an empty table of metric results says when the session has no metric (issue 40 item 12)
NO_SCORES = ("No metric scores loaded: add a scores file (Leaderboard tab: 'Add a scores file'), or score a "
             "metric in the Live scoring tab")


def build_figure(key: tuple, metrics: Sequence[str | None], build: Callable[[], Any]):
    """The default :data:`Plot`: build the figure, no cache.

    Parameters
    ----------
    key : tuple
        What the figure depends on (unused here).
    metrics : sequence of str or None
        The metrics it shows (unused here).
    build : callable
        Builds the figure.

    Returns
    -------
    object
        What ``build()`` returns.
    """
    return build()


# -- helpers ---------------------------------------------------------------------------------------

def get_seg(app: AppView, seg_id):
    """The SEG a view names, checked.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG's id (as a dropdown sends it).

    Returns
    -------
    ts2viz.seg.SEG
        The SEG.

    Raises
    ------
    InputError
        For something that is not a SEG id, or an id the dataset lacks.
    """
    try:
        sid = int(seg_id)
    except (TypeError, ValueError):
        raise InputError(f"not a SEG id: {echo(repr(seg_id))}") from None
    if sid not in app.dataset.segs:
        raise InputError(f"no SEG with id {sid} in dataset {app.dataset.name}")
    return app.dataset[sid]


def get_metric(app: AppView, metric, *, required: bool = True) -> str | None:
    """The metric a view names, checked.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str or None
        The metric's name (``None``, ``""``, ``"—"``, ``"(none)"``: none chosen).
    required : bool, default True
        Whether a metric must be chosen.

    Returns
    -------
    str or None
        The name; ``None`` when none is chosen and none is required.

    Raises
    ------
    InputError
        When none is chosen but one is required, or the session has no such metric.
    """
    if metric in (None, "", "—", "(none)"):
        if required:
            raise InputError("choose a metric")
        return None
    if metric not in app.metrics:
        raise InputError(f"no metric {metric!r} loaded (have: {', '.join(app.metrics) or 'none'})")
    return str(metric)


def families_filter(families) -> set[str] | None:
    """The families a family filter's value keeps.

    Parameters
    ----------
    families : list of str or None
        The filter's value.

    Returns
    -------
    set of str or None
        The families; ``None`` for all (empty, or "All" among them).

    Examples
    --------
    >>> families_filter(["TIFA", "DSG"]) == {"TIFA", "DSG"}, families_filter([ALL, "TIFA"])
    (True, None)
    """
    if not families:
        return None
    fam = {str(f) for f in families}
    return None if ALL in fam else fam


def family_selection(chosen) -> list[str]:
    """A family filter's value after the visitor added or removed an entry.

    Picking a family while "All" is selected drops "All" (else nothing would change), picking "All" drops
    the families, and an empty selection means "All" again.

    Parameters
    ----------
    chosen : list of str or None
        The value, in the order picked (the last is the newest).

    Returns
    -------
    list of str
        The tidied value.

    Examples
    --------
    >>> family_selection(["All", "TIFA"]), family_selection(["TIFA", "All"]), family_selection([])
    (['TIFA'], ['All'], ['All'])
    """
    picked = [str(f) for f in (chosen or [])]
    if not picked:
        return [ALL]
    if ALL in picked and len(picked) > 1:
        return [ALL] if picked[-1] == ALL else [f for f in picked if f != ALL]
    return picked


def write_csv(app: AppView, df, stem: str) -> str:
    """Write a table to a new CSV download in the session's folder.

    Names and texts from visitors (metric names, file names) never act as spreadsheet formulas
    (:func:`ts2viz.display.spreadsheet_safe_frame`).

    Parameters
    ----------
    app : AppView
        The session's view.
    df : pandas.DataFrame
        The table.
    stem : str
        The file's name without ``.csv`` (reduced to safe characters, at most 60).

    Returns
    -------
    str
        The file's path.
    """
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:60] or "table"
    p = app.new_download(f"{stem}.csv")
    # names and texts from visitors (metric names, file names) never act as spreadsheet formulas
    spreadsheet_safe_frame(df).to_csv(p, index=False)
    return str(p)


def table_csv(app: AppView, df, stem: str) -> str | None:
    """Write a table to a CSV file in the session's own downloads folder (made when asked for).

    What the download buttons under the tables call; the file holds the data (fractions), not the x100
    display.

    Parameters
    ----------
    app : AppView
        The session's view.
    df : pandas.DataFrame or pandas.io.formats.style.Styler or None
        A table, or one from :func:`shown`.
    stem : str
        What the table is (the file is ``ts2viz-<stem>.csv``).

    Returns
    -------
    str or None
        The file's path; ``None`` for no table (nothing written).
    """
    from pandas.io.formats.style import Styler

    if isinstance(df, Styler):
        df = getattr(df, "data_names", df.data)
    if df is None or len(getattr(df, "columns", [])) == 0:
        return None
    return write_csv(app, df, f"ts2viz-{stem}")


def mark_columns(df, *, x100=(), scores=()):
    """Record which columns of a table :func:`shown` formats.

    Parameters
    ----------
    df : pandas.DataFrame
        The table (its ``attrs`` are set).
    x100 : iterable of str, default ()
        Columns of meta-metric values (shown x100).
    scores : iterable of str, default ()
        Columns of metric scores (shown with three decimals).

    Returns
    -------
    pandas.DataFrame
        ``df``.
    """
    df.attrs["x100"] = [c for c in x100 if c in df.columns]
    df.attrs["scores"] = [c for c in scores if c in df.columns]
    return df


def shown(df):
    """A table as people read it, the data underneath unchanged.

    The columns :func:`mark_columns` marked are formatted (meta-metric values x100 with one decimal, scores
    with three, '–' for missing) while the data underneath (what a row click or a CSV download gets) stays
    in fractions. Headers are written for people (:func:`ts2viz.display.column_label`: ``ord_avg`` shows
    as "Ord avg"): a later ``subset=`` on the Styler names columns by :func:`column_label` too.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.

    Returns
    -------
    pandas.io.formats.style.Styler
        What ``gr.Dataframe`` displays (its ``data_names`` holds the table under its own names, for
        :func:`table_csv`).

    Examples
    --------
    >>> import pandas as pd
    >>> t = shown(mark_columns(pd.DataFrame({"metric": ["A"], "ord_avg": [0.8123]}), x100=["ord_avg"]))
    >>> list(t.data.columns), t.data_names["ord_avg"].tolist()
    (['metric', 'Ord avg'], [0.8123])
    """
    labels = {c: column_label(c) for c in df.columns}
    if len(set(labels.values())) < len(labels):     # two columns would share a header: keep the names
        labels = {c: c for c in df.columns}
    fmt = {labels[c]: fmt_x100 for c in df.attrs.get("x100", []) if c in df.columns}
    fmt.update({labels[c]: fmt_score for c in df.attrs.get("scores", []) if c in df.columns})
    styler = df.rename(columns=labels).style.format(fmt)
    styler.data_names = df      # the table under its own names, for a CSV of it (:func:`table_csv`)
    return styler


def header_html(app: AppView) -> str:
    """The page header: the dataset and what is loaded (counts as they are now).

    Shown at the top of the page; redrawn after an upload or a live score adds metrics.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    str
        HTML (the dataset's name escaped).
    """
    ds = app.dataset
    return (f"<div class='brand'><span class='logo'>TS2</span><div><h1>ts2viz</h1>"
            f"<p>Text-to-image faithfulness metrics, meta-evaluated on semantic error graphs · dataset "
            f"<b>{html.escape(str(ds.name))}</b>: {plural(len(ds), 'SEG')}, {plural(len(ds.rows), 'image')}, "
            f"{plural(len(app.metrics), 'metric')}</p></div></div>")


def walk_label(walk: Sequence[str]) -> str:
    """A walk as the walk picker names it: node labels joined by ``>``, each once.

    Parameters
    ----------
    walk : sequence of str
        Node labels.

    Returns
    -------
    str
        The label.

    Examples
    --------
    >>> walk_label(["0", "0", "1a", "2a"])
    '0>1a>2a'
    """
    return ">".join(dict.fromkeys(walk))


# -- metric lists ------------------------------------------------------------------------------------

def families(app: AppView) -> list[str]:
    """The display families of the metrics the session sees (:func:`metric_family`), in order.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    list of str
        The families, each once.
    """
    return list(dict.fromkeys(metric_family(m) for m in app.metrics))


def metric_choices(app: AppView, families_sel=None) -> list[str]:
    """The metrics a metric picker offers, filtered by family.

    Parameters
    ----------
    app : AppView
        The session's view.
    families_sel : list of str or None, default None
        A family filter's value.

    Returns
    -------
    list of str
        The metric names.
    """
    fam = families_filter(families_sel)
    return [m for m in app.metrics if fam is None or metric_family(m) in fam]


def check_stat(stat: str) -> str:
    """A per-SEG statistic's name, checked.

    Parameters
    ----------
    stat : str
        One of :data:`SEG_STATS`.

    Returns
    -------
    str
        ``stat``.

    Raises
    ------
    InputError
        For another name.
    """
    if stat not in SEG_STATS:
        raise InputError(f"unknown statistic {stat!r}: expected one of {', '.join(SEG_STATS)}")
    return stat

def visitor_file(app: AppView, path) -> Path:
    """The path of a file a visitor uploaded, checked in public mode.

    In public mode it must lie in the upload folder (``app.access.upload_root``); anything else gets the
    same message whether it exists or not (so no path of the server can be probed).

    Parameters
    ----------
    app : AppView
        The session's view.
    path : str or os.PathLike
        The path the event sent.

    Returns
    -------
    pathlib.Path
        The path.

    Raises
    ------
    InputError
        In public mode, for a path outside the upload folder ("upload the file through the page").
    """
    p = Path(str(path))
    if app.access.public:
        root = app.access.upload_root
        real = os.path.realpath(p)
        base = os.path.realpath(root) if root else None
        if base is None or os.path.commonpath([real, base]) != base or real == base:
            raise InputError("upload the file through the page")
    return p


def uploaded_image_paths(files, most: int) -> list[str | Path]:
    """The paths of the files an upload event sent, at least one and at most ``most``.

    Parameters
    ----------
    files : list or None
        What the event sent: paths, or objects with a ``name`` (Gradio's file values).
    most : int
        The most images one call takes.

    Returns
    -------
    list of str or pathlib.Path
        The paths, not yet checked (see :func:`owned_visitor_files`).

    Raises
    ------
    InputError
        For no image, or more than ``most``.
    """
    paths = [f if isinstance(f, (str, Path)) else getattr(f, "name", None) for f in (files or [])]
    paths = [p for p in paths if p]
    if not paths:
        raise InputError("upload at least one image")
    if len(paths) > most:
        raise InputError(f"at most {most} images at a time")
    return paths


def owned_visitor_files(app: AppView, paths) -> list[Path]:
    """Visitors' uploaded files, checked (:func:`visitor_file`) and, in public mode, owned by the session.

    Parameters
    ----------
    app : AppView
        The session's view.
    paths : list of str or os.PathLike
        The paths the event sent.

    Returns
    -------
    list of pathlib.Path
        The paths (deleted with the session in public mode).

    Raises
    ------
    InputError
        In public mode, for a path outside the upload folder.
    """
    paths = [visitor_file(app, p) for p in paths]
    if app.access.public:
        for p in paths:
            app.workspace.own_file(p)
    return paths


def scores_file_error(app: AppView, e: InputError, p: Path, name: str, expected: str) -> InputError:
    """The error shown for a visitor's scores file that did not read (public mode: quoting nothing of the file).

    Parameters
    ----------
    app : AppView
        The session's view.
    e : InputError
        The reader's error.
    p : pathlib.Path
        The file read.
    name : str
        The name messages use.
    expected : str
        What a valid file is, in public mode's message (``not a valid {expected}``).

    Returns
    -------
    InputError
        In public mode ``e``'s row and ``expected``; otherwise ``e``'s message, the file named ``name``.
    """
    if app.access.public:
        at = f"row {e.row}: " if e.row is not None else ""
        return InputError(f"{at}not a valid {expected}", file=name)
    return InputError(str(e).replace(str(p), name))


def uploaded_scores_file(app: AppView, path, display_name: str | None, suffixes: tuple[str, ...],
                         wrong_type: str) -> tuple[Path, str]:
    """A visitor's scores file, checked before anything of it is read.

    From the upload folder (:func:`visitor_file`), owned by the session in public mode (deleted with it,
    whether it loads or not), one of ``suffixes`` and within the session's byte cap.

    Parameters
    ----------
    app : AppView
        The session's view.
    path : str or os.PathLike
        The uploaded file.
    display_name : str or None
        How messages name it (``None``: the file's name).
    suffixes : tuple of str
        The file types accepted (lower case, with the dot).
    wrong_type : str
        The message for another type.

    Returns
    -------
    path : pathlib.Path
        The file.
    name : str
        The name messages use.

    Raises
    ------
    InputError
        Outside the upload folder (public mode), of another type, or over ``limits.max_upload_bytes``.
    """
    p, = owned_visitor_files(app, [path])
    name = display_name or p.name
    if p.suffix.lower() not in suffixes:
        raise InputError(wrong_type, file=name)
    try:
        size = p.stat().st_size
    except OSError:
        raise InputError("upload the file through the page", file=name) from None
    cap = app.limits.max_upload_bytes
    if size > cap:
        mib = 1024 * 1024
        raise InputError(f"scores file is {size / mib:.1f} MB; the limit is {cap / mib:g} MB", file=name)
    return p, name


def interval_text(v, lo=None, hi=None, *, scale: float = 1.0, digits: int = 3, ci_digits: int | None = None) -> str:
    """A value with its interval as the tables show it: ``v [lo, hi]``; ``–`` for NaN.

    Parameters
    ----------
    v : float or None
        The value (``None`` or NaN: missing).
    lo, hi : float or None, default None
        The interval's ends; ``None`` or NaN: the value alone.
    scale : float, default 1.0
        Multiplies all three (``100``: percentages).
    digits : int, default 3
        Decimals of the value.
    ci_digits : int or None, default None
        Decimals of the interval's ends (``None``: ``digits``).

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> interval_text(0.51234, 0.4, 0.6)
    '0.512 [0.400, 0.600]'
    >>> interval_text(0.51234, 0.4, 0.6, scale=100, digits=2, ci_digits=1)
    '51.23 [40.0, 60.0]'
    >>> interval_text(0.714, 0.68, 0.749, scale=100.0, digits=1)      # the leaderboard's, x100
    '71.4 [68.0, 74.9]'
    >>> interval_text(float("nan")), interval_text(0.5, float("nan"), float("nan"))
    ('–', '0.500')
    """
    if is_missing(v):
        return "–"
    if is_missing(lo) or is_missing(hi):
        return f"{scale * v:.{digits}f}"
    d = digits if ci_digits is None else ci_digits
    return f"{scale * v:.{digits}f} [{scale * lo:.{d}f}, {scale * hi:.{d}f}]"
