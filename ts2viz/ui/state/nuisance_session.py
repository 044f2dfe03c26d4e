"""The nuisance test's results in the app: the operator's (shared by every session) and each session's own.

The operator's long tables (``python app.py --nuisance FILE``, from ``ts2viz nuisance``) are read at start
(:func:`add_operator_nuisance`) and shared by every session; their summaries are computed once per mode. A
session's live runs (:func:`ts2viz.ui.callbacks.nuisance.live_nuisance`) live beside its
:class:`~ts2viz.ui.state.workspace.Workspace` (:class:`SessionNuisance`, merged per metric across SEGs) and
are dropped when the session ends (:data:`ts2viz.ui.state.session_store.CLOSE_HOOKS`).
"""
from __future__ import annotations

import threading
import weakref
from typing import Sequence

import numpy as np

from ...errors import InputError
from ...nuisance.run import MetricRun, NuisanceScores, read_nuisance
from .session_store import SessionStore


class SharedNuisance:
    """The operator's nuisance results (read at start) and their summaries per mode (computed once).

    Parameters
    ----------
    scores : ts2viz.nuisance.run.NuisanceScores
        The results.
    """

    def __init__(self, scores: NuisanceScores) -> None:
        self.scores = scores
        self.summaries: dict[str, object] = {}
        self.lock = threading.Lock()


class SessionNuisance:
    """One session's live nuisance results: per metric, one :class:`MetricRun` over the SEGs it ran on.

    ``version`` counts the changes.
    """

    def __init__(self) -> None:
        self.runs: dict[str, MetricRun] = {}
        self.version = 0
        self.lock = threading.Lock()

    def __bool__(self) -> bool:
        """Whether the session has a result."""
        return bool(self.runs)

    def add(self, run: MetricRun) -> None:
        """Add a live run, merged with the metric's earlier one (:func:`merge_runs`).

        Parameters
        ----------
        run : ts2viz.nuisance.run.MetricRun
            The run.
        """
        with self.lock:
            old = self.runs.get(run.metric)
            self.runs[run.metric] = merge_runs(old, run) if old is not None else run
            self.version += 1


#: the shared results, keyed by the app's thumbnail store (one per app process and dataset, shared by the
#: variants of its data)
_SHARED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
#: workspace -> its SessionNuisance (weak: a workspace that is gone takes its results with it)
_SESSIONS = SessionStore(lambda ws: SessionNuisance())
_LOCK = threading.Lock()


def merge_runs(old: MetricRun, new: MetricRun) -> MetricRun:
    """One run with another's images added (or replaced).

    Parameters
    ----------
    old : ts2viz.nuisance.run.MetricRun
        The earlier run.
    new : ts2viz.nuisance.run.MetricRun
        The new one.

    Returns
    -------
    ts2viz.nuisance.run.MetricRun
        The merged run (``old``'s images, then ``new``'s that ``old`` lacks, ``new``'s values where both
        have them); ``new`` alone when their transforms or seeds differ.
    """
    if [t.spec for t in old.transforms] != [t.spec for t in new.transforms] or old.seed != new.seed:
        return new
    files = list(old.file_names) + [f for f in new.file_names if f not in set(old.file_names)]
    idx = {f: i for i, f in enumerate(files)}
    clean = np.full(len(files), np.nan)
    tr = np.full((len(files), len(old.transforms)), np.nan)
    for r in (old, new):
        rows = [idx[f] for f in r.file_names]
        clean[rows] = r.clean
        tr[rows] = r.transformed
    return MetricRun(new.metric, new.higher_is_better, new.config_hash, tuple(files), clean, new.transforms, tr, new.seed)


def add_operator_nuisance(app, paths: Sequence[str]) -> list[str]:
    """Read the operator's long tables (``app.py --nuisance FILE``) for every session.

    Parameters
    ----------
    app : AppState
        The app.
    paths : sequence of str
        Long tables written by ``ts2viz nuisance``.

    Returns
    -------
    list of str
        The metrics read.

    Raises
    ------
    InputError
        For a file that does not load (file, row, problem), or a metric in two files.
    """
    merged = NuisanceScores(app.dataset.name)
    for p in paths:
        for r in read_nuisance(p, app.dataset).runs:
            if r.metric in merged.metrics:
                raise InputError(f"metric {r.metric!r} has nuisance results in two files", file=p)
            merged.runs.append(r)
    with _LOCK:
        _SHARED[app.thumbs] = SharedNuisance(merged)
    return merged.metrics


def shared_results(view) -> SharedNuisance | None:
    """The operator's results, if the app was started with some.

    Parameters
    ----------
    view : AppView
        A session's view.

    Returns
    -------
    SharedNuisance or None
        The results.
    """
    with _LOCK:
        return _SHARED.get(view.thumbs)


def session_results(view, *, create: bool = False) -> SessionNuisance | None:
    """The session's live results.

    Parameters
    ----------
    view : AppView
        The session's view.
    create : bool, default False
        Make them if the session has none.

    Returns
    -------
    SessionNuisance or None
        The results; ``None`` on a read-only view, or when there are none and ``create`` is off.
    """
    return _SESSIONS.of(view, create=create)


def metric_choices(view) -> list[str]:
    """Metrics with nuisance results this session sees: the session's live runs, then the shared ones.

    Parameters
    ----------
    view : AppView
        The session's view.

    Returns
    -------
    list of str
        The metric names.
    """
    own = session_results(view)
    names = list(own.runs) if own else []
    sh = shared_results(view)
    return names + [m for m in (sh.scores.metrics if sh else []) if m not in names]


def run_of(view, metric) -> tuple[MetricRun | None, str]:
    """The results for a metric and where they come from.

    The session's own run of a metric is shown instead of the shared one.

    Parameters
    ----------
    view : AppView
        The session's view.
    metric : str
        The metric.

    Returns
    -------
    run : ts2viz.nuisance.run.MetricRun or None
        The run, or ``None`` when there is none.
    source : str
        ``"session"``, ``"shared"`` or ``""``.
    """
    own = session_results(view)
    if own and metric in own.runs:
        return own.runs[metric], "session"
    sh = shared_results(view)
    if sh is not None and metric in sh.scores.metrics:
        return sh.scores.run(metric), "shared"
    return None, ""




__all__ = ["SharedNuisance", "SessionNuisance", "add_operator_nuisance", "shared_results", "session_results",
           "metric_choices", "run_of", "merge_runs"]
