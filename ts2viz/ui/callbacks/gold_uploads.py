"""A visitor's score file for a rated set, checked and read into the session's uploads (the Human ratings tab).

The uploads themselves live in :mod:`ts2viz.ui.state.gold_session`; within the session's caps
(:class:`~ts2viz.ui.serving.access.Limits`: score files, bytes, metrics). In public mode the file must come
through the page (:func:`ts2viz.ui.callbacks.common.visitor_file`) and an error quotes nothing from it.
"""
from __future__ import annotations

import os

from ...errors import InputError
from ..state.gold_session import uploads_of
from .humaneval import sets as gc_sets
from .common import scores_file_error, uploaded_scores_file


def add_gold_scores(view, gold: str, path, display_name: str | None = None) -> str:
    """Read an uploaded score file for a rated set into the session's uploads (the Human ratings tab's upload).

    The file is a CSV: ``image_id`` (or ``file_name``) + one numeric column per metric. Caps (the session's
    :class:`~ts2viz.ui.serving.access.Limits`): score files (SEG and gold uploads together), bytes of one
    file, metrics held (checked on the header, before the rows are read); rows are bounded by the rated
    set (every row names one of its images, once). In public mode the file must have come through the
    page (:func:`ts2viz.ui.callbacks.common.visitor_file`) and an error quotes nothing from it.

    Parameters
    ----------
    view : AppView
        The session's view.
    gold : str
        The rated set's name.
    path : str or os.PathLike
        The uploaded file.
    display_name : str or None, default None
        How messages name the file (default: its name).

    Returns
    -------
    str
        A status line, with the metric names as the visitor wrote them (escape them for display).

    Raises
    ------
    InputError
        For an unknown rated set, no file, a file that is not a .csv or not from the page (public mode),
        past a cap, a column without a name, named like a metric the set has or starting with ``human:``,
        a file that does not read as the set's scores, or one without a score.
    """
    from ...gold import read_score_table

    gc_sets.check_gold(gold)
    if not path:
        raise InputError("choose a score file (CSV: image_id and one column per metric) first")
    p, name = uploaded_scores_file(view, path, display_name, (".csv",),
                                   "scores for a rated set must be a .csv file")
    lim = view.limits
    held = uploads_of(view)
    files = view.workspace.uploads + (held.files if held else 0)
    if files >= lim.max_uploads:
        raise InputError(f"a session may add at most {lim.max_uploads} score files; reload the page to start "
                         "a new session")
    header = _header(p, name)
    key = "image_id" if "image_id" in header or "file_name" not in header else "file_name"
    new = [c for c in header if c != key]
    own = len(view.workspace.metrics) + (held.n_metrics if held else 0)
    if own + len(new) > lim.max_metrics:
        raise InputError(f"a session may hold at most {lim.max_metrics} metrics of its own (this one has {own}, "
                         f"the file has {len(new)})", file=name)
    g = gc_sets.rated(gold)
    taken = set(g.metrics) | set(held.metrics(gold) if held else [])
    for c in new:
        if not c:
            raise InputError("a metric column has no name", file=name, row=1)
        if c in taken or c.startswith("human:"):
            raise InputError(f"metric {c!r} is already in rated set {gold!r}; rename the column to add it",
                             file=name, row=1)
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = read_score_table(p, g.image_ids, max_bytes=lim.max_upload_bytes)
    except InputError as e:
        raise scores_file_error(view, e, p, name, f"score file for rated set {gold} (expected an image_id column "
                                "naming the set's images, once each, and numeric metric columns)") from None
    scored = int(table.notna().any(axis=1).sum())
    if not scored:
        raise InputError("no score in the file", file=name)
    uploads_of(view, create=True).add(gold, table)
    part = f" ({scored} of {len(g)} images scored)" if caught or scored < len(g) else ""
    k = len(table.columns)
    return f"Loaded {k} metric{'s' if k != 1 else ''} for {gold} from {name}{part}: {', '.join(table.columns)}"


def _header(p, name: str) -> list[str]:
    """The file's header row, read without reading the rest (the caps are checked on it first)."""
    import csv

    try:
        with open(p, encoding="utf-8-sig", newline="") as f:
            first = f.readline(1 << 20)
    except (OSError, UnicodeDecodeError):
        raise InputError("not a UTF-8 text file", file=name) from None
    try:
        row = next(csv.reader([first]), None)
    except csv.Error:       # a header cell over the CSV reader's field limit (128 KB), a NUL: one line
        raise InputError("the header row cannot be read as CSV (a cell too long, or a NUL byte)", file=name,
                         row=1) from None
    if not row:
        raise InputError("empty file: expected a header row (image_id, metric columns)", file=name, row=1)
    return [h.strip() for h in row]


def display_name(path) -> str | None:
    """The name of an uploaded file as messages give it.

    Parameters
    ----------
    path : str or os.PathLike or None
        The file.

    Returns
    -------
    str or None
        Its base name; ``None`` without a file.
    """
    return os.path.basename(str(path)) if path else None
