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
    """``name`` if it is one of :data:`ACCUMULATIONS` or :data:`ALIASES`, else :class:`InputError`.

    The name is returned as given (``gated`` stays ``gated``, so existing configurations keep their
    hashes); :func:`canonical_accumulation` gives the rule it stands for.
    """
    if name not in ACCUMULATIONS and name not in ALIASES:
        raise InputError(f"unknown DSG accumulation {name!r}: expected one of {', '.join(ACCUMULATIONS)}"
                         f" (or {', '.join(ALIASES)}, an alias of {', '.join(ALIASES.values())})")
    return name


def canonical_accumulation(name: str) -> str:
    """The rule ``name`` stands for: one of :data:`ACCUMULATIONS` (``gated`` -> ``transitive``)."""
    return ALIASES.get(check_accumulation(name), name)


def counted_flags(question_ids: Sequence[int], correct: Sequence[bool], parents: Sequence[Sequence[int]],
                  accumulation: str = DEFAULT_ACCUMULATION) -> list[bool]:
    """Whether each question of one image counts as correct.

    Parameters
    ----------
    question_ids : the image's question ids (distinct).
    correct : whether each question was answered correctly.
    parents : each question's parent question ids (empty for a root).
    accumulation : ``direct``, ``transitive`` (alias ``gated``) or ``mean`` (see the module docstring).

    Returns
    -------
    One flag per question, in input order. With ``mean`` the flags are ``correct`` itself. With
    ``direct`` a question counts when it and all its direct parents are correct; with
    ``transitive`` when it is correct and all its parents count. A parent id that is not among
    ``question_ids`` is ignored (there is no answer that could fail it).

    Raises
    ------
    InputError if the parent links form a cycle (then no order of answering exists).
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
    """:func:`direct_flags`, :func:`gated_flags` (transitive) or ``correct`` itself (mean), by name."""
    rule = canonical_accumulation(accumulation)
    if rule == "mean":
        return np.asarray(correct, dtype=bool).copy()
    return direct_flags(correct, child, parent) if rule == "direct" else gated_flags(correct, child, parent)


def direct_flags(correct: np.ndarray, child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The ``direct`` rule on positions: ``correct[i]`` and ``correct[p]`` for every parent ``p`` of ``i``.

    Same edge layout as :func:`gated_flags`; one vectorised pass (no order needed: a parent is
    judged on its own answer, as in DSG's ``calc_vqa_score``). Cycles are harmless here.
    """
    counted = np.asarray(correct, dtype=bool).copy()
    if len(child):
        bad = ~np.asarray(correct, dtype=bool)[parent]
        counted[np.asarray(child)[bad]] = False
    return counted


def gated_flags(correct: np.ndarray, child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """The ``transitive`` (``gated``) rule on positions: ``correct[i]`` and every parent of ``i`` counts.

    ``child[k]`` and ``parent[k]`` are positions in ``correct`` (edge k: ``parent[k]`` is a parent of
    ``child[k]``). Questions are settled depth by depth (a root has depth 0, a question one more than
    its deepest parent), so each question is decided after all its ancestors. Vectorised, so one
    call can cover a whole table of images. Raises :class:`InputError` on a cycle.
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
