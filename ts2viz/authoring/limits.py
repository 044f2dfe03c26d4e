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
    """The largest SEG one may build: nodes, edges (explicit, or implied by the error counts), distinct
    error levels, and walks (the larger count of the two policies, ``paper`` and ``spec``)."""

    max_nodes: int
    max_edges: int
    max_levels: int
    max_walks: int


@dataclass(frozen=True)
class SegSize:
    """The size of a draft: nodes, edges (explicit as given, or implied), distinct error levels among
    well-formed labels, and walks (the larger of the two policies' counts, over the well-formed labels
    and the edges between them that go from a lower to a higher level)."""

    nodes: int
    edges: int
    levels: int
    walks: int

    def over(self, limits: SegLimits, *, walks: bool = True) -> list[tuple[str, int, int]]:
        """``(what, number, limit)`` for each part above its limit (``walks=False``: walks not checked)."""
        out = [("nodes", self.nodes, limits.max_nodes), ("edges", self.edges, limits.max_edges),
               ("error levels", self.levels, limits.max_levels)]
        if walks:
            out.append(("walks", self.walks, limits.max_walks))
        return [(what, n, lim) for what, n, lim in out if n > lim]


def implied_edge_count(labels: Sequence[str]) -> int:
    """How many edges the error counts imply (every node of a level to every node of the next level
    present), counted without listing them."""
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
    """The size of ``draft`` (:class:`SegSize`), linear in its nodes and edges.

    Examples
    --------
    >>> d = SegDraft("p")
    >>> for lv in range(12):
    ...     d = d.add_node(f"{lv}a").add_node(f"{lv}b").add_node(f"{lv}c")
    >>> s = seg_size(d)
    >>> (s.nodes, s.edges, s.levels, s.walks == 3 * 3 ** 12)
    (36, 99, 12, True)
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
    """One line for the parts of a SEG above their limits: ``SEG 3 would have 177,147 walks; the
    limit is 5,000``."""
    parts = [f"{n:,} {what} (the limit is {lim:,})" for what, n, lim in over]
    return f"SEG {seg_id} would have " + ", ".join(parts)
