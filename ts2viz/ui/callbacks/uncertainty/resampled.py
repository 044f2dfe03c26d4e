"""One bootstrap of the leaderboard per mode and side (shared, or a session's own), drawn when first needed."""
from __future__ import annotations

import itertools
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Sequence

from ....metametrics import intervals as bs
from ....statistics.bootstrap import DEFAULTS
from ....display import stat_name
from ....errors import InputError
from ....metametrics.results import MetaMetrics
from ..common import ALL, SEG_STATS
from ...state.memo import Memo
from ...state.app_state import AppView
from ...state.session_store import CLOSE_HOOKS


#: bootstrap settings of every view (the library's defaults: 10,000 resamples, 95 %, seed 0)
SETTINGS = DEFAULTS


#: significance level of the heatmap's marks and the pair caption's verdict
ALPHA = 0.05


#: bytes of bootstraps kept whole for the operator's metrics (one per mode is ~30 MB for TS2's 19
#: metrics; a bootstrap over a quarter of this is drawn for each view that needs it, not kept)
SHARED_BOOT_BYTES = 192 * 1024 * 1024


#: the same for all sessions with metrics of their own, together (least recently used dropped first)
SESSION_BOOT_BYTES = 192 * 1024 * 1024


@dataclass(frozen=True, eq=False)
class BoardBootstrap:
    """A bootstrap of one side's meta-metrics.

    Parameters
    ----------
    mm : ts2viz.metametrics.results.MetaMetrics
        What it was drawn from.
    boot : ts2viz.metametrics.intervals.LeaderboardBootstrap
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


def check_cell(entry: BoardBootstrap, cell: str) -> None:
    """Refuse a cell (:func:`cell_name`) the bootstrap has no column for (a partition without SEGs).

    Parameters
    ----------
    entry : BoardBootstrap
        The bootstrap.
    cell : str
        The cell.

    Raises
    ------
    InputError
        When the bootstrap has no such cell.
    """
    if cell not in entry.boot.cells:
        groups = sorted({c.split("_")[-1] for c in entry.boot.cells})
        raise InputError(f"no SEGs of partition {cell.split('_')[-1][:40]!r} (have: {', '.join(groups)})")
