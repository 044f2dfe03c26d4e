"""How a question-answering metric turns per-question correctness into one per-image score.

TIFA's score is the fraction of its questions answered correctly. DSG's questions form a graph: a
question about an attribute or relation presupposes the questions about its entities (its
*parents*). Three accumulations exist for DSG, and this module is where the choice is named:

``direct`` (default of the library's DSG metric: DSG's scoring code)
    a question *counts* when it is answered correctly and none of its **direct** parents was
    answered wrongly. DSG's ``calc_vqa_score`` (j-min/DSG, ``dsg/vqa_utils.py``) tests each parent
    on its raw answer score, not on whether the parent itself counts, so a grandparent's failure
    does not reach a grandchild whose parent was answered yes. The DSG authors' published TIFA160
    correlations (their README, "Human correlation on TIFA-160") are computed this way.
``transitive`` (accepted alias: ``gated``, the name this option had before)
    a question counts when it is correct **and every parent counts**, so a failure propagates down
    the graph. This is the rule DSG's README *describes* (its pseudocode zeroes scores in place,
    parents first) and the one the TS2 release's per-image DSG files use.
``mean``
    the plain fraction of correct answers, parents ignored ("DSG without dependency" in the DSG
    README, TIFA-style). The DSG rows of the published TS2 web leaderboard were computed this way.

TIFA has no parents, so all three give the same TIFA score.

What counts as a "yes" is not this module's: it is one rule for live and released answers,
:data:`ts2viz.qa.mapping.YES_RULES` (``exact``, DSG's code; ``contains``, TS2's code).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import InputError

#: the accumulations a DSG score can use (see the module docstring)
ACCUMULATIONS: tuple[str, ...] = ("direct", "transitive", "mean")
#: older names still accepted (CLI, app, metric specs), with the rule each stands for
ALIASES: dict[str, str] = {"gated": "transitive"}
#: the accumulation of the library's DSG metric (``dsg:MODEL?accumulation=...``): DSG's scoring code
DEFAULT_ACCUMULATION = "direct"
#: which source computes DSG scores with which accumulation (for documentation and reports)
USED_BY: dict[str, str] = {
    "direct": "DSG's scoring code (dsg/vqa_utils.py calc_vqa_score) and its published TIFA160 correlations",
    "transitive": "DSG's README pseudocode; the TS2 release's per-image DSG files",
    "mean": "'DSG without dependency' in the DSG README; the published TS2 web leaderboard's DSG rows",
}
def check_accumulation(name: str) -> str:
    """Check the name of a DSG accumulation.

    The name is returned as given (``gated`` stays ``gated``, so existing configurations keep their
    hashes); :func:`canonical_accumulation` gives the rule it stands for.

    Parameters
    ----------
    name : str
        One of :data:`ACCUMULATIONS` (``direct``, ``transitive``, ``mean``) or an alias of
        :data:`ALIASES` (``gated``).

    Returns
    -------
    str
        ``name``, unchanged.

    Raises
    ------
    InputError
        If ``name`` is neither an accumulation nor an alias (the message lists the allowed names).

    Examples
    --------
    >>> from ts2viz.qa.accumulation import check_accumulation
    >>> check_accumulation("gated")
    'gated'
    >>> check_accumulation("sum")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: unknown DSG accumulation 'sum': expected one of direct, transitive, mean (or gated, ...)
    """
    if name not in ACCUMULATIONS and name not in ALIASES:
        raise InputError(f"unknown DSG accumulation {name!r}: expected one of {', '.join(ACCUMULATIONS)}"
                         f" (or {', '.join(ALIASES)}, an alias of {', '.join(ALIASES.values())})")
    return name


def canonical_accumulation(name: str) -> str:
    """The rule an accumulation name stands for, with aliases resolved.

    Parameters
    ----------
    name : str
        An accumulation or an alias (see :func:`check_accumulation`).

    Returns
    -------
    str
        One of :data:`ACCUMULATIONS`: ``gated`` gives ``transitive``, any other accepted name itself.

    Raises
    ------
    InputError
        If ``name`` is not an accepted name.

    Examples
    --------
    >>> from ts2viz.qa.accumulation import canonical_accumulation
    >>> canonical_accumulation("gated"), canonical_accumulation("direct")
    ('transitive', 'direct')
    """
    return ALIASES.get(check_accumulation(name), name)


def counted_flags(question_ids: Sequence[int], correct: Sequence[bool], parents: Sequence[Sequence[int]],
                  accumulation: str = DEFAULT_ACCUMULATION) -> list[bool]:
    """Whether each question of one image counts toward the image's score.

    Parameters
    ----------
    question_ids : sequence of int
        The image's question ids (distinct).
    correct : sequence of bool
        Whether each question was answered correctly, aligned with ``question_ids``.
    parents : sequence of sequence of int
        Each question's parent question ids (empty for a root), aligned with ``question_ids``.
    accumulation : str, default DEFAULT_ACCUMULATION
        ``direct``, ``transitive`` (alias ``gated``) or ``mean`` (see the module docstring).

    Returns
    -------
    list of bool
        One flag per question, in input order. With ``mean`` the flags are ``correct`` itself. With
        ``direct`` a question counts when it and all its direct parents are correct; with
        ``transitive`` when it is correct and all its parents count. A parent id that is not among
        ``question_ids`` is ignored (there is no answer that could fail it); a question listed as its own
        parent gates nothing.

    Raises
    ------
    InputError
        If the parent links form a cycle (then no order of answering exists; checked under ``direct``
        too, whenever some question has a parent), or if ``accumulation`` is unknown.

    Examples
    --------
    Question 1 presupposes question 0 and question 2 presupposes question 1; question 0 is answered
    wrongly:

    >>> from ts2viz.qa.accumulation import counted_flags
    >>> ids, correct, parents = [0, 1, 2], [False, True, True], [[], [0], [1]]
    >>> counted_flags(ids, correct, parents, "direct")      # q2's parent q1 was answered correctly
    [False, False, True]
    >>> counted_flags(ids, correct, parents, "transitive")  # q0's failure reaches q2
    [False, False, False]
    >>> counted_flags(ids, correct, parents, "mean")
    [False, True, True]
    """
    rule = canonical_accumulation(accumulation)
    ok = np.asarray(correct, dtype=bool)
    if rule == "mean" or not any(parents):
        return ok.tolist()
    index = {q: i for i, q in enumerate(question_ids)}
    edges = [(i, index[p]) for i, ps in enumerate(parents) for p in ps if p in index]
    child, parent = (np.array(x, dtype=np.int64) for x in zip(*edges)) if edges else (np.zeros(0, np.int64),) * 2
    try:
        transitive = gated_flags(ok, child, parent)     # also rejects a cycle, whichever rule is asked
        return (transitive if rule == "transitive" else direct_flags(ok, child, parent)).tolist()
    except InputError:
        raise InputError(f"DSG questions {sorted(question_ids)}: the parent links form a cycle") from None


def counted_by_edges(correct: np.ndarray, child: np.ndarray, parent: np.ndarray,
                     accumulation: str = DEFAULT_ACCUMULATION) -> np.ndarray:
    """Counted flags under an accumulation named at run time, on positions and edges.

    Dispatches to :func:`direct_flags` (``direct``), :func:`gated_flags` (``transitive``/``gated``) or
    returns a copy of ``correct`` (``mean``). This is the form the table functions use
    (:func:`ts2viz.qa.records.with_counted`, :func:`ts2viz.gold.answers.question_scores`): one call covers
    the questions of many images, the edges joining questions of the same image.

    Parameters
    ----------
    correct : numpy.ndarray
        Bool array, whether each question was answered correctly.
    child, parent : numpy.ndarray
        Integer arrays of equal length, positions in ``correct``: edge ``k`` says that question
        ``parent[k]`` is a parent of question ``child[k]``.
    accumulation : str, default DEFAULT_ACCUMULATION
        ``direct``, ``transitive`` (alias ``gated``) or ``mean``.

    Returns
    -------
    numpy.ndarray
        A new bool array, one flag per entry of ``correct``.

    Raises
    ------
    InputError
        If ``accumulation`` is unknown, or (``transitive``) if the edges form a cycle.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.qa.accumulation import counted_by_edges
    >>> correct = np.array([False, True, True])
    >>> child, parent = np.array([1, 2]), np.array([0, 1])
    >>> counted_by_edges(correct, child, parent, "direct").tolist()
    [False, False, True]
    >>> counted_by_edges(correct, child, parent, "gated").tolist()
    [False, False, False]
    """
    rule = canonical_accumulation(accumulation)
    if rule == "mean":
        return np.asarray(correct, dtype=bool).copy()
    return direct_flags(correct, child, parent) if rule == "direct" else gated_flags(correct, child, parent)


def direct_flags(correct: np.ndarray, child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The ``direct`` rule on positions: ``correct[i]`` and ``correct[p]`` for every parent ``p`` of ``i``.

    One vectorised pass, no order needed: a parent is judged on its own answer, as in DSG's
    ``calc_vqa_score``, so a grandparent's failure does not reach a grandchild. Cycles are harmless here.

    Parameters
    ----------
    correct : numpy.ndarray
        Bool array, whether each question was answered correctly.
    child, parent : numpy.ndarray
        Integer arrays of equal length, positions in ``correct``: edge ``k`` says that ``parent[k]`` is
        a parent of ``child[k]`` (the layout of :func:`gated_flags`).

    Returns
    -------
    numpy.ndarray
        A new bool array: ``correct`` with every question that has a wrongly answered parent set to
        False.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.qa.accumulation import direct_flags
    >>> direct_flags(np.array([False, True, True]), np.array([1, 2]), np.array([0, 1])).tolist()
    [False, False, True]
    """
    counted = np.asarray(correct, dtype=bool).copy()
    if len(child):
        bad = ~np.asarray(correct, dtype=bool)[parent]
        counted[np.asarray(child)[bad]] = False
    return counted


def gated_flags(correct: np.ndarray, child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The ``transitive`` (``gated``) rule on positions: ``correct[i]`` and every parent of ``i`` counts.

    Questions are settled depth by depth (a root has depth 0, a question one more than its deepest
    parent), so each question is decided after all its ancestors. Vectorised, so one call can cover a
    whole table of images. A question listed as its own parent (DSG's data has a few) is not gated by
    that link: it fails exactly when it fails already.

    Parameters
    ----------
    correct : numpy.ndarray
        Bool array, whether each question was answered correctly.
    child, parent : numpy.ndarray
        Integer arrays of equal length, positions in ``correct``: edge ``k`` says that ``parent[k]`` is
        a parent of ``child[k]``.

    Returns
    -------
    numpy.ndarray
        A new bool array: a question is True when it is correct and all its parents are True.

    Raises
    ------
    InputError
        If the edges (self-links aside) form a cycle.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.qa.accumulation import gated_flags
    >>> gated_flags(np.array([False, True, True]), np.array([1, 2]), np.array([0, 1])).tolist()
    [False, False, False]
    >>> gated_flags(np.array([True, True]), np.array([0, 1]), np.array([1, 0]))
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: DSG question parent links form a cycle
    """
    n = len(correct)
    counted = np.asarray(correct, dtype=bool).copy()
    # a question listed as its own parent (DSG's data has a few) gates nothing: it fails exactly
    # when it fails already; dropping the link keeps it from reading as a cycle
    keep = np.asarray(child) != np.asarray(parent)
    child, parent = np.asarray(child)[keep], np.asarray(parent)[keep]
    if len(child) == 0:
        return counted
    depth = np.zeros(n, dtype=np.int64)
    for _ in range(n + 1):
        new = np.zeros(n, dtype=np.int64)
        np.maximum.at(new, child, depth[parent] + 1)
        if np.array_equal(new, depth):
            break
        depth = new
    else:
        raise InputError("DSG question parent links form a cycle")
    edge_depth = depth[child]
    for d in range(1, int(depth.max()) + 1):
        at = edge_depth == d
        counted[child[at][~counted[parent[at]]]] = False
    return counted


def dsg_counted(correct: Mapping[int, bool], parents: Mapping[int, Sequence[int]],
                accumulation: str = DEFAULT_ACCUMULATION) -> dict[int, bool]:
    """Whether each question counts, keyed by question id (:func:`counted_flags` on mappings).

    Parameters
    ----------
    correct : mapping of int to bool
        Question id -> answered correctly; its order is the order of the result.
    parents : mapping of int to sequence of int
        Question id -> parent question ids; roots may be left out.
    accumulation : str, default DEFAULT_ACCUMULATION
        ``direct``, ``transitive`` (alias ``gated``) or ``mean``.

    Returns
    -------
    dict of int to bool
        Question id -> counts, in the order of ``correct``.

    Raises
    ------
    InputError
        If the parent links form a cycle, or if ``accumulation`` is unknown.

    Examples
    --------
    >>> from ts2viz.qa.accumulation import dsg_counted
    >>> dsg_counted({0: False, 1: True, 2: True}, {1: [0], 2: [1]}, "direct")
    {0: False, 1: False, 2: True}
    """
    ids = list(correct)
    flags = counted_flags(ids, [correct[q] for q in ids], [tuple(parents.get(q, ())) for q in ids], accumulation)
    return dict(zip(ids, flags))


def tifa_score(correct: Sequence[bool]) -> float:
    """TIFA's score: the fraction of questions answered correctly.

    Parameters
    ----------
    correct : sequence of bool
        Whether each question of one image was answered correctly.

    Returns
    -------
    float
        The fraction correct; NaN for no questions.

    Examples
    --------
    >>> from ts2viz.qa.accumulation import tifa_score
    >>> tifa_score([True, False, True, True])
    0.75
    >>> tifa_score([])
    nan
    """
    return float(np.mean(correct)) if len(correct) else float("nan")


def dsg_score(correct: Mapping[int, bool], parents: Mapping[int, Sequence[int]],
              accumulation: str = DEFAULT_ACCUMULATION) -> float:
    """DSG's score: the fraction of questions that count under an accumulation (:func:`dsg_counted`).

    Parameters
    ----------
    correct : mapping of int to bool
        Question id -> answered correctly.
    parents : mapping of int to sequence of int
        Question id -> parent question ids; roots may be left out.
    accumulation : str, default DEFAULT_ACCUMULATION
        ``direct`` (DSG's scoring code), ``transitive`` (alias ``gated``; DSG's README, TS2's release
        files) or ``mean`` (parents ignored).

    Returns
    -------
    float
        The fraction of questions that count; NaN for no questions.

    Raises
    ------
    InputError
        If the parent links form a cycle, or if ``accumulation`` is unknown.

    Examples
    --------
    >>> from ts2viz.qa.accumulation import dsg_score
    >>> correct, parents = {0: False, 1: True, 2: True}, {1: [0], 2: [1]}
    >>> [round(dsg_score(correct, parents, a), 3) for a in ("direct", "transitive", "mean")]
    [0.333, 0.0, 0.667]
    """
    counted = dsg_counted(correct, parents, accumulation)
    return float(np.mean(list(counted.values()))) if counted else float("nan")
