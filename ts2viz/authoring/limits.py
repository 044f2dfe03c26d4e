"""How large a SEG is, known before anything is built from it: nodes, edges, error levels and walks.

A SEG's walks multiply level by level (3 nodes on each of 12 levels following the error counts make
3^11 = 177,147 walks), and the meta-metrics hold one row per walk, so the cost of scoring a SEG is
its walk count, which :func:`ts2viz.seg.count_walks` gives without enumerating one. A UI checks
:func:`seg_size` against :class:`SegLimits` before it accepts a change (the app's authoring tab:
refused for a public app's visitor, a warning for the operator).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..seg import count_walks, parse_label
from .draft import SegDraft


@dataclass(frozen=True)
class SegLimits:
    """The largest SEG one may build.

    Parameters
    ----------
    max_nodes : int
        Nodes.
    max_edges : int
        Edges (explicit, or implied by the error counts).
    max_levels : int
        Distinct error levels.
    max_walks : int
        Walks (the larger count of the two policies, ``paper`` and ``spec``).
    """

    max_nodes: int
    max_edges: int
    max_levels: int
    max_walks: int


@dataclass(frozen=True)
class SegSize:
    """The size of a draft (what :func:`seg_size` returns).

    Parameters
    ----------
    nodes : int
        Nodes (every node of the draft, well-formed or not).
    edges : int
        Edges: the explicit ones as given (each once), or the ones the error counts imply.
    levels : int
        Distinct error levels among the well-formed labels.
    walks : int
        Walks: the larger of the two policies' counts, over the well-formed labels and the edges between
        them that go from a lower to a higher level.
    """

    nodes: int
    edges: int
    levels: int
    walks: int

    def over(self, limits: SegLimits, *, walks: bool = True) -> list[tuple[str, int, int]]:
        """The parts of the size above their limits.

        Parameters
        ----------
        limits : SegLimits
            The limits to check against.
        walks : bool, default True
            Check the walks too (``False``: nodes, edges and levels only).

        Returns
        -------
        list of (str, int, int)
            ``(what, number, limit)`` for each part above its limit (``what`` is ``"nodes"``, ``"edges"``,
            ``"error levels"`` or ``"walks"``); empty when the draft is within the limits.

        Examples
        --------
        >>> SegSize(nodes=40, edges=99, levels=12, walks=531441).over(SegLimits(30, 200, 20, 5000))
        [('nodes', 40, 30), ('walks', 531441, 5000)]
        """
        out = [("nodes", self.nodes, limits.max_nodes), ("edges", self.edges, limits.max_edges),
               ("error levels", self.levels, limits.max_levels)]
        if walks:
            out.append(("walks", self.walks, limits.max_walks))
        return [(what, n, lim) for what, n, lim in out if n > lim]


def implied_edge_count(labels: Sequence[str]) -> int:
    """How many edges the error counts imply, counted without listing them.

    Every node of a level connects to every node of the next level present; malformed labels are left
    out, and a label given twice counts once.

    Parameters
    ----------
    labels : sequence of str
        Node labels.

    Returns
    -------
    int
        The number of implied edges.

    Examples
    --------
    >>> implied_edge_count(["0", "1a", "1b", "2a", "oops"])
    4
    """
    per: dict[int, int] = {}
    for lbl in set(labels):
        try:
            lv = parse_label(lbl)
        except ValueError:
            continue
        per[lv] = per.get(lv, 0) + 1
    levels = sorted(per)
    return sum(per[a] * per[b] for a, b in zip(levels, levels[1:]))


def seg_size(draft: SegDraft) -> SegSize:
    """The size of a draft: nodes, edges, error levels and walks, linear in its nodes and edges.

    Walks are counted with :func:`ts2viz.seg.count_walks`, without enumerating one, so a draft with
    hundreds of thousands of walks is measured at once (and can be refused before it is built).

    Parameters
    ----------
    draft : SegDraft
        Any draft (problems and all: malformed labels and edges that do not go from a lower to a higher
        level are left out of the walks).

    Returns
    -------
    SegSize
        Its nodes, edges, levels and walks.

    See Also
    --------
    SegSize.over : the parts above a :class:`SegLimits`.

    Examples
    --------
    Three nodes on each of 12 error levels, edges following the error counts: the walks multiply level by
    level (the ``paper`` policy counts each ordered pair of error-0 nodes as a start, hence one more factor 3):

    >>> d = SegDraft("p")
    >>> for lv in range(12):
    ...     d = d.add_node(f"{lv}a").add_node(f"{lv}b").add_node(f"{lv}c")
    >>> s = seg_size(d)
    >>> (s.nodes, s.edges, s.levels, s.walks == 3 * 3 ** 12)
    (36, 99, 12, True)

    A small SEG with explicit edges:

    >>> small = SegDraft("p", edges=[("0", "1a"), ("0", "1b"), ("1a", "2a")]).add_node("0").add_node("1a")
    >>> small = small.add_node("1b").add_node("2a")
    >>> seg_size(small)
    SegSize(nodes=4, edges=3, levels=3, walks=2)
    """
    labels = draft.labels
    good = []
    for lbl in set(labels):
        try:
            parse_label(lbl)
        except ValueError:
            continue
        good.append(lbl)
    levels = len({parse_label(lbl) for lbl in good})
    if draft.edges is None:
        n_edges = implied_edge_count(good)
    else:
        n_edges = len(set(draft.edges))
    walks = max(count_walks(good, draft.edges, repeat_root=rr) for rr in (False, True))
    return SegSize(len(labels), n_edges, levels, walks)


def size_message(seg_id, over: list[tuple[str, int, int]]) -> str:
    """One line for the parts of a SEG above their limits.

    Parameters
    ----------
    seg_id : int
        The SEG's id (for the message).
    over : list of (str, int, int)
        What :meth:`SegSize.over` returns (not empty).

    Returns
    -------
    str
        The message.

    Examples
    --------
    >>> size_message(3, [("walks", 177147, 5000)])
    'SEG 3 would have 177,147 walks (the limit is 5,000)'
    """
    parts = [f"{n:,} {what} (the limit is {lim:,})" for what, n, lim in over]
    return f"SEG {seg_id} would have " + ", ".join(parts)
