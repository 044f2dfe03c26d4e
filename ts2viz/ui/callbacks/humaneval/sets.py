"""The rated sets the tab offers (bundled, the operator's), each as a session sees it, evaluated once."""
from __future__ import annotations

import functools
import os
import threading

from ....errors import InputError
from ...serving import priority


#: the bundled sets the tab offers: every one the CLI has (GenAI-Bench 527 comes without metric scores: it is
#: offered for a visitor's own, its leaderboard empty until they add a score file)
GOLD_SETS = ("tifa160", "imagenhub-t2i", "genaibench-teaser", "genaibench")


#: what the leaderboard of a set without metric scores shows (a table cell)
NO_GOLD_SCORES = "No metric scores come with this rated set: add a score file (below) to evaluate your metric"


TASKS = ("point-wise", "pair-wise", "model ordering")


#: the operator's own rated sets (``app.py --gold FOLDER``), by name, in the order given
_OPERATOR: dict = {}


_OPERATOR_LOCK = threading.Lock()


#: a session's own metrics are marked so in the tables (their names are the visitor's)
OWN_MARK = " (yours)"


def shared_once(fn):
    """``fn(*args)`` computed once per arguments and process, shared by every session.

    A cache hit takes no lock. Each value has a lock of its own, held while it is computed: a click on a view the
    warm-up (:func:`~ts2viz.ui.callbacks.humaneval.warmup.warm`) is computing waits for that one computation instead
    of doing it again, and never waits behind the warm-up's other work; the warm-up's thread computing it then
    does not pause for visitors (:func:`ts2viz.ui.serving.priority.awaiting`).

    Parameters
    ----------
    fn : callable
        A function of hashable arguments.

    Returns
    -------
    callable
        The cached function; ``cache_clear()`` forgets every value.
    """
    done: dict = {}
    locks: dict = {}
    owners: dict = {}            # args -> the thread computing them (a waiting visitor lets it run on)
    locks_lock = threading.Lock()

    @functools.wraps(fn)
    def run(*args):
        try:
            return done[args]
        except KeyError:
            pass
        with locks_lock:
            lock = locks.setdefault(args, threading.Lock())
        if not lock.acquire(blocking=False):
            got = False
            while not got:              # the owner is read again: it may not have been recorded yet
                with priority.awaiting(owners.get(args)):
                    got = lock.acquire(timeout=0.1)
        try:
            if args not in done:
                owners[args] = threading.get_ident()
                try:
                    done[args] = fn(*args)
                finally:
                    owners.pop(args, None)
            return done[args]
        finally:
            lock.release()

    run.cache_clear = done.clear
    return run


def add_operator_sets(folders) -> list[str]:
    """Load the operator's rated-set folders (``app.py --gold``) and offer them in the tab.

    Parameters
    ----------
    folders : iterable of str or os.PathLike
        Rated-set folders (``images.csv``, ``ratings.csv``, ...).

    Returns
    -------
    list of str
        Their names (a folder's ``gold.json`` name or the folder name).

    Raises
    ------
    InputError
        For a folder that does not load, a bundled set's name, or two sets with one name.
    """
    from ....gold import BUNDLED, load_gold

    names = []
    for folder in folders:
        g = load_gold(os.fspath(folder))
        if g.name in BUNDLED:
            raise InputError(f"rated set name {g.name!r} is a bundled set's; give the folder another name "
                             "(or a \"name\" in its gold.json)", file=folder)
        with _OPERATOR_LOCK:
            if g.name in _OPERATOR:
                raise InputError(f"two rated sets are named {g.name!r}", file=folder)
            _OPERATOR[g.name] = g
        names.append(g.name)
    return names


def remove_operator_sets(names) -> None:
    """Stop offering some of the operator's sets (tests; an app process keeps them for its life).

    Parameters
    ----------
    names : iterable of str
        The sets' names.
    """
    with _OPERATOR_LOCK:
        for n in names:
            _OPERATOR.pop(n, None)
    rated.cache_clear()
    result.cache_clear()


def gold_sets() -> list[str]:
    """The rated sets the tab offers: the bundled ones, then the operator's.

    Returns
    -------
    list of str
        Their names.
    """
    with _OPERATOR_LOCK:
        return list(GOLD_SETS) + list(_OPERATOR)


def check_gold(name: str) -> str:
    """A rated set's name, checked.

    Parameters
    ----------
    name : str
        The name.

    Returns
    -------
    str
        ``name``.

    Raises
    ------
    InputError
        For a set the tab does not offer.
    """
    if name not in gold_sets():
        raise InputError(f"unknown rated set {name!r}: expected one of {', '.join(gold_sets())}")
    return name


@functools.lru_cache(maxsize=None)
def rated(name: str):
    """A rated set, loaded once per process.

    Parameters
    ----------
    name : str
        The rated set's name.

    Returns
    -------
    ts2viz.gold.RatedSet
        The set.

    Raises
    ------
    InputError
        For a set the tab does not offer.
    """
    from ....gold import BUNDLED, load_gold

    check_gold(name)
    return load_gold(name) if name in BUNDLED else listed(name)


def listed(name: str):
    """A rated set as the tab's pickers need it: its images, ratings, rating sets and metadata.

    A bundled set without the metric columns computed from its VQA answers (:func:`rated` has them), which the
    pickers do not need: the page is built without computing them (they are computed once, by the first view
    that needs the set's metrics). A bundled set's files are read once per process either way.

    Parameters
    ----------
    name : str
        A set :func:`gold_sets` offers.

    Returns
    -------
    ts2viz.gold.RatedSet
        The operator's set as loaded, or the bundled one without its answer columns.

    Raises
    ------
    InputError
        For a name the tab does not offer.
    """
    from ....gold import load_gold

    check_gold(name)
    with _OPERATOR_LOCK:
        own = _OPERATOR.get(name)
    return own if own is not None else load_gold(name, answers=False)


def session_rated(name: str, own=None):
    """The rated set as a session sees it: with its uploaded score columns, if any.

    Parameters
    ----------
    name : str
        The rated set's name.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    ts2viz.gold.RatedSet
        The set.
    """
    g = rated(name)
    if not own or not own.metrics(name):
        return g
    return own.memo(("rated", name, own.version), lambda: g.with_scores(own.columns[name]))


def own_result(name: str, rating_set: str, own=None):
    """The session's own metrics evaluated on a set.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    ts2viz.metaeval.humaneval.HumanEval or None
        The evaluation; ``None`` when the session uploaded no metric for the set.

    Raises
    ------
    InputError
        For an unknown set or rating set.
    """
    from ....metaeval.rated import evaluate_rated

    if not own or not own.metrics(name):
        return None
    result(name, rating_set)          # checks the rating set (and shares the settings below)
    return own.memo(("result", name, rating_set, own.version),
                    lambda: evaluate_rated(session_rated(name, own), rating_set=rating_set,
                                           metrics=own.metrics(name), ceiling=False))


def metrics_of(name: str, rating_set: str, own=None) -> list[str]:
    """The metrics the scatter may show: the shared ones (human ceilings included), then the session's.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    list of str
        The metric names.
    """
    r = result(name, rating_set)
    return (list(r.metrics) if r is not None else []) + (own.metrics(name) if own else [])


def rating_sets(name: str) -> list[str]:
    """The rating sets of a set that measure faithfulness (the rating-set picker).

    Parameters
    ----------
    name : str
        The rated set's name.

    Returns
    -------
    list of str
        Their names (those the set's metadata marks ``not_faithfulness`` left out).
    """
    g = listed(name)
    skip = set(g.meta.get("not_faithfulness", []))
    return [s for s in g.rating_sets if s not in skip]


@shared_once
def result(name: str, rating_set: str):
    """The shared metrics of a set evaluated against one rating set (once per process).

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.

    Returns
    -------
    ts2viz.metaeval.humaneval.HumanEval or None
        The evaluation; ``None`` for an operator's set without ``scores.csv`` (only a visitor's uploads are
        evaluated then).

    Raises
    ------
    InputError
        For an unknown set or rating set.
    """
    from ....metaeval.rated import evaluate_rated

    g = rated(name)
    if rating_set not in rating_sets(name):
        raise InputError(f"rated set {name!r} has no rating set {rating_set!r}")
    if not g.metrics:       # an operator's set without scores.csv: only a visitor's uploads are evaluated
        return None
    return evaluate_rated(g, rating_set=rating_set)
