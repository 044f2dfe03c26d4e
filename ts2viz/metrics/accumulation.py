"""How a question-answering metric turns per-question correctness into one per-image score.

TIFA's score is the fraction of its questions answered correctly. DSG's questions form a graph: a
question about an attribute or relation presupposes the questions about its entities (its
*parents*). Two accumulations exist for DSG, and this module is where the choice is named:

``gated`` (default, as the DSG paper defines it)
    a question *counts* as correct only when it is answered correctly **and every parent counts**.
    Gating is transitive: a grandchild fails when a grandparent fails, because its parent then
    does not count. This is what DSG's reference code does (it zeroes a question's score in place,
    parents before children) and what the TS2 release's per-image DSG files use.
``mean``
    the plain fraction of correct answers, parents ignored (TIFA-style). The DSG rows of the
    published TS2 web leaderboard were computed this way.

TIFA has no parents, so both give the same TIFA score.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import InputError

#: the accumulations a DSG score can use (see the module docstring)
ACCUMULATIONS: tuple[str, ...] = ("gated", "mean")
#: the accumulation of the library's DSG metric (``dsg:MODEL?accumulation=...``)
DEFAULT_ACCUMULATION = "gated"


def check_accumulation(name: str) -> str:
    """``name`` if it is one of :data:`ACCUMULATIONS`, else :class:`InputError`."""
    if name not in ACCUMULATIONS:
        raise InputError(f"unknown DSG accumulation {name!r}: expected one of {', '.join(ACCUMULATIONS)}")
    return name


def counted_flags(question_ids: Sequence[int], correct: Sequence[bool], parents: Sequence[Sequence[int]],
                  accumulation: str = DEFAULT_ACCUMULATION) -> list[bool]:
    """Whether each question of one image counts as correct.

    Parameters
    ----------
    question_ids : the image's question ids (distinct).
    correct : whether each question was answered correctly.
    parents : each question's parent question ids (empty for a root).
    accumulation : ``gated`` or ``mean`` (see the module docstring).

    Returns
    -------
    One flag per question, in input order. With ``mean`` the flags are ``correct`` itself. With
    ``gated`` a question counts when it is correct and all its parents count; a parent id that is
    not among ``question_ids`` is ignored (there is no answer that could fail it).

    Raises
    ------
    InputError if the parent links form a cycle (then no order of answering exists).
    """
    check_accumulation(accumulation)
    ok = np.asarray(correct, dtype=bool)
    if accumulation == "mean" or not any(parents):
        return ok.tolist()
    index = {q: i for i, q in enumerate(question_ids)}
    edges = [(i, index[p]) for i, ps in enumerate(parents) for p in ps if p in index]
    child, parent = (np.array(x, dtype=np.int64) for x in zip(*edges)) if edges else (np.zeros(0, np.int64),) * 2
    try:
        return gated_flags(ok, child, parent).tolist()
    except InputError:
        raise InputError(f"DSG questions {sorted(question_ids)}: the parent links form a cycle") from None


def gated_flags(correct: np.ndarray, child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The ``gated`` rule on positions: ``correct[i]`` and every parent of ``i`` counts.

    ``child[k]`` and ``parent[k]`` are positions in ``correct`` (edge k: ``parent[k]`` is a parent of
    ``child[k]``). Questions are settled depth by depth (a root has depth 0, a question one more than
    its deepest parent), so each question is decided after all its ancestors. Vectorised, so one
    call can cover a whole table of images. Raises :class:`InputError` on a cycle.
    """
    n = len(correct)
    counted = np.asarray(correct, dtype=bool).copy()
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
    """:func:`counted_flags` keyed by question id (``parents`` may leave out roots)."""
    ids = list(correct)
    flags = counted_flags(ids, [correct[q] for q in ids], [tuple(parents.get(q, ())) for q in ids], accumulation)
    return dict(zip(ids, flags))


def tifa_score(correct: Sequence[bool]) -> float:
    """Fraction of questions answered correctly (NaN for no questions)."""
    return float(np.mean(correct)) if len(correct) else float("nan")


def dsg_score(correct: Mapping[int, bool], parents: Mapping[int, Sequence[int]],
              accumulation: str = DEFAULT_ACCUMULATION) -> float:
    """Fraction of questions that count (:func:`dsg_counted`); NaN for no questions."""
    counted = dsg_counted(correct, parents, accumulation)
    return float(np.mean(list(counted.values()))) if counted else float("nan")
