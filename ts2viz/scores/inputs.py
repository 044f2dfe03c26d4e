"""The inputs of a meta-evaluation: a dataset and its scores files (or the bundled TS2 scores), read once.

:func:`load_inputs` is what ``ts2viz leaderboard`` (and the other meta-evaluation commands) and the app
(:func:`ts2viz.ui.load_state`) read: the same names (``ts2`` for the bundled scores), the same checks and
the same messages.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from ..errors import InputError, warn_input
from ..paths import bundled_data_dir
from .reading import read_scores
from .table import Scores, merge

#: the name that stands for the bundled TS2 scores in ``--scores`` (as ``--dataset ts2`` does for the data)
BUNDLED = "ts2"


def uses_bundled(scores: Sequence[str] | None) -> bool:
    """Whether the bundled TS2 scores are among the inputs: no scores given (``None``), or ``ts2`` among them.

    Parameters
    ----------
    scores : sequence of str or None
        The scores inputs as given (``--scores``): files and the name :data:`BUNDLED`.

    Returns
    -------
    bool
        True when the bundled scores are read.

    Examples
    --------
    >>> uses_bundled(None), uses_bundled(["ts2", "mine.csv"]), uses_bundled(["mine.csv"]), uses_bundled([])
    (True, True, False, False)
    """
    return scores is None or BUNDLED in scores


def _folded(name: str, available) -> str:
    """``name``, or the one available name equal to it ignoring case."""
    if name in available:
        return name
    folded = [m for m in available if m.casefold() == name.casefold()]
    return folded[0] if len(folded) == 1 else name


def _close(name: str, available) -> str:
    """The available names closest to ``name`` (ignoring case), as "'A' or 'B'" ('' if none is close)."""
    import difflib

    by_fold = {m.casefold(): m for m in available}
    close = [by_fold[c] for c in difflib.get_close_matches(name.casefold(), list(by_fold), n=3, cutoff=0.6)]
    return " or ".join(repr(c) for c in close)


def metric_name(name: str, available, option: str) -> str:
    """A metric name as one of the available names, matched exactly or ignoring case.

    Parameters
    ----------
    name : str
        The name the user gave (``"clipscore"`` finds ``CLIPScore``).
    available : iterable of str
        The metric names of the scores.
    option : str
        The option or subcommand that named it (for the message).

    Returns
    -------
    str
        ``name`` if available, else the one available name equal to it ignoring case.

    Raises
    ------
    InputError
        When there is no such metric, with the closest names ("did you mean ...").

    Examples
    --------
    >>> metric_name("clipscore", ["CLIPScore", "TIFA-GPT4V"], "--metrics")
    'CLIPScore'
    >>> metric_name("tifa-gpt4", ["CLIPScore", "TIFA-GPT4V"], "compare")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: compare: no metric 'tifa-gpt4' in the scores; did you mean 'TIFA-GPT4V'? ...
    """
    have = list(available)
    found = _folded(name, have)
    if found in have:
        return found
    close = _close(name, have)
    hint = f"; did you mean {close}?" if close else ""
    raise InputError(f"{option}: no metric {name!r} in the scores{hint} (have: {', '.join(have)})")


def warn_bundled_lookalikes(tables, bundled) -> None:
    """Warn when a scores file has a column named like a bundled TS2 metric but with other values.

    E.g. the release's gated DSG columns in ``published_scores.csv``, where the bundled scores (like the
    app) use the web leaderboard's accumulation. One :class:`~ts2viz.errors.InputWarning` per such
    column, naming the file and how many images differ (beyond 1e-9).

    Parameters
    ----------
    tables : sequence of ts2viz.scores.Scores
        The user's scores tables.
    bundled : ts2viz.scores.Scores
        The bundled TS2 scores.
    """
    for t in tables:
        for m in t.metrics:
            if m not in bundled.metrics:
                continue
            common = [f for f in t.file_names if f in set(bundled.file_names)]
            if not common:
                continue
            a = t.aligned(common, [m], oriented=False)[:, 0]
            b = bundled.aligned(common, [m], oriented=False)[:, 0]
            both = np.isfinite(a) & np.isfinite(b)
            if both.any() and not np.allclose(a[both], b[both], rtol=0, atol=1e-9):
                warn_input(f"column {m!r} has the name of a bundled TS2 metric but other values "
                           f"(on {int((~np.isclose(a[both], b[both], rtol=0, atol=1e-9)).sum())} of "
                           f"{int(both.sum())} images); for the bundled scores plus yours, as the app shows "
                           f"them, use --scores {BUNDLED} YOUR_FILE", file=t.source)


@dataclass
class Inputs:
    """What a meta-evaluation reads: the dataset, its scores tables, and the metrics and SEGs asked for.

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        The dataset.
    tables : list of (str, Scores)
        Each scores input as given (a file, or :data:`BUNDLED`) with its table, lower-is-better metrics
        recorded, in input order.
    scores : Scores or None
        The tables merged into one (:func:`ts2viz.scores.merge`); ``None`` when there is none.
    metrics : list of str or None
        The metrics asked for, spelled as in the scores, or ``None`` for all.
    seg_ids : list of int or None
        The SEGs asked for, or ``None`` for all.
    """

    dataset: object
    tables: list
    scores: Scores | None
    metrics: list | None = None
    seg_ids: list | None = None


def load_inputs(dataset: str | os.PathLike = "ts2", scores: Sequence[str] | None = None, *,
                metrics: str | Sequence[str] | None = None, lower_is_better: Iterable[str] = (),
                dsg: str | None = None, seg: str | None = None) -> Inputs:
    """The dataset and scores tables of a meta-evaluation, all validated: what the CLI and the app read.

    ``scores`` takes files and the name :data:`BUNDLED` (``ts2``: the bundled TS2 scores, with ``dsg``'s
    accumulation of the DSG columns), so ``["ts2", "mine.csv"]`` is the bundled scores plus one's own, as
    in the app after an upload; ``None`` is the bundled scores alone (the dataset must then be TS2) and
    ``[]`` no scores at all. With ``metrics``, each file is read for the metrics it has among them only.
    Error messages name the command-line options (``--scores``, ``--metrics``, ``--lower-is-better``,
    ``--dsg``, ``--seg``) that ``ts2viz leaderboard`` and ``ts2viz app`` share.

    Parameters
    ----------
    dataset : str or os.PathLike, default "ts2"
        ``"ts2"``, a dataset folder or a hub dataset id (:func:`ts2viz.dataset.load_dataset`).
    scores : sequence of str or None, default None
        Scores files (CSV or Parquet) and :data:`BUNDLED`; ``None``: the bundled TS2 scores.
    metrics : str or sequence of str or None, default None
        The metrics to evaluate (comma-separated in a string; exact names or the one name equal ignoring
        case); ``None``: all.
    lower_is_better : iterable of str, default ()
        Metrics to treat as lower-is-better (each item may be comma-separated; matched as ``metrics``).
    dsg : str or None, default None
        The accumulation of the bundled DSG columns (:func:`ts2viz.scores.bundled_scores`); only with the
        bundled scores.
    seg : str or None, default None
        SEG ids and ranges (:func:`ts2viz.dataset.parse_seg_ids`); ``None``: all.

    Returns
    -------
    Inputs
        The dataset, its tables, the metrics and SEG ids asked for.

    Raises
    ------
    InputError
        For a dataset or scores file that does not load, ``dsg`` without the bundled scores, the bundled
        scores with another dataset, a metric or ``lower_is_better`` name not in the scores, a malformed
        ``seg``.

    Warns
    -----
    InputWarning
        For a file's column named like a bundled TS2 metric but with other values (on the TS2 data,
        without the bundled scores: :func:`warn_bundled_lookalikes`).

    Examples
    --------
    >>> inp = load_inputs("ts2", metrics="clipscore,DSG-mPLUG", seg="0-4")
    >>> [name for name, _ in inp.tables], inp.metrics, inp.seg_ids, len(inp.scores.file_names)
    (['ts2'], ['CLIPScore', 'DSG-mPLUG'], [0, 1, 2, 3, 4], 2840)
    """
    from ..dataset import load_dataset, parse_seg_ids
    from .bundled import bundled_scores

    ds = load_dataset(dataset)
    seg_ids = parse_seg_ids(seg, ds)
    lib = {m.strip() for item in lower_is_better for m in item.split(",") if m.strip()}
    wanted = None
    if metrics:
        items = metrics.split(",") if isinstance(metrics, str) else metrics
        wanted = list(dict.fromkeys(m.strip() for m in items if m.strip()))
    files = [p for p in (scores or []) if p != BUNDLED]
    with_bundled = uses_bundled(scores)
    if dsg and not with_bundled:
        raise InputError(f"--dsg applies to the bundled TS2 scores only (it recomputes their DSG columns); "
                         f"add them with --scores {BUNDLED} ... or drop --dsg")
    if with_bundled and not ds.is_ts2:   # TS2 by its content: the bundled name or a copy of the release
        if scores:
            raise InputError(f"--scores {BUNDLED} (the bundled TS2 scores) needs the TS2 data: --dataset ts2 or a "
                             f"folder of the TS2 release; {dataset} is not the TS2 release (its SEGs, "
                             "image names and node labels differ)")
        raise InputError("--scores is required with a dataset other than TS2")
    bundled = bundled_scores(dsg=dsg) if with_bundled else None
    headers = {p: scores_columns(p) for p in files}
    available = list(dict.fromkeys([*(bundled.metrics if bundled is not None else []),
                                    *(m for p in files for m in headers[p] if m != "file_name")]))
    if wanted is not None:
        wanted = list(dict.fromkeys(_folded(m, available) for m in wanted))
        if bundled is not None:       # (a file's reader names a column it lacks, and the file)
            for m in wanted:
                metric_name(m, available, "--metrics")
    lib = {_folded(m, available) for m in lib}
    tables = []
    if bundled is not None:
        bundled.lower_is_better |= {m for m in lib if m in bundled.metrics}
        if wanted is None or any(m in bundled.metrics for m in wanted):
            tables.append((BUNDLED, bundled))
    for p in files:
        # With metrics, a file is read for the metrics it has among them only (a file with none of
        # them is skipped), so a wide scores file costs the memory of the columns asked for.
        want = None
        if wanted is not None:
            want = [m for m in wanted if m in headers[p]]
            if not want:
                if (len(files) > 1 or bundled is not None) and headers[p]:
                    continue
                want = wanted    # the reader names the missing column (or the file's problem)
        tables.append((p, read_scores(p, dataset=ds, lower_is_better=lib, metrics=want)))
    if not tables and wanted is not None:
        raise InputError(f"--metrics: none of {', '.join(wanted)} is in the scores files")
    if bundled is None and ds.is_ts2:     # (with the bundled scores a shared name is an error)
        names = set(bundled_names())
        if any(m in names for _, t in tables for m in t.metrics):
            warn_bundled_lookalikes([t for _, t in tables], bundled_scores(dsg=None))
    merged = merge([t for _, t in tables]) if tables else None
    unknown = lib - set(available)
    if unknown:
        first = sorted(unknown)[0]
        hint = _close(first, available)
        raise InputError(f"--lower-is-better names a metric not in the scores: {first!r}"
                         + (f"; did you mean {hint}?" if hint else ""))
    if wanted is not None:
        for m in wanted:
            if m not in merged.metrics:
                raise InputError(f"--metrics: no metric {m!r} in the scores (have: {', '.join(merged.metrics)})")
    return Inputs(ds, tables, merged, wanted, seg_ids)


def bundled_names() -> list[str]:
    """The metric names of the bundled TS2 scores (from the header of the released table only).

    Returns
    -------
    list of str
        The column names, ``file_name`` included.
    """
    return scores_columns(bundled_data_dir() / "ts2" / "published_scores.csv")


def scores_columns(path) -> list[str]:
    """The column names of a scores file, from its header only.

    Parameters
    ----------
    path : str or os.PathLike
        A scores file (CSV, or Parquet by its suffix ``.parquet`` / ``.pq``).

    Returns
    -------
    list of str
        The columns; empty if the file cannot be read (the scores reader then reports the problem).
    """
    from pathlib import Path

    p = Path(path)
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return [str(n) for n in pq.read_schema(p).names]
        import csv

        with open(p, encoding="utf-8-sig", errors="replace", newline="") as f:
            first = f.readline()
            if first.startswith("# ts2viz-scores"):
                first = f.readline()
        return next(csv.reader([first]), [])
    except Exception:  # noqa: BLE001 - read_scores gives the one-line error
        return []
