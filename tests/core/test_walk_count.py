"""The walk counter (``ts2viz.seg.count_walks``, dynamic programming) against brute-force enumeration
of every walk on small random SEGs, implied and explicit edges, both policies (issue 32: the cost of a
SEG is known before any walk is built)."""
from __future__ import annotations

import itertools
import time

from hypothesis import given, settings, strategies as st

from ts2viz.seg import SEG, Image, Node, count_walks, implied_edges, parse_label


@st.composite
def dags(draw):
    """Node labels on 1-6 error levels (some skipped), 1-4 nodes a level, an error-0 level always, and
    either no edge list (implied edges) or random upward edges with every node given a parent."""
    levels = sorted({0} | set(draw(st.lists(st.integers(1, 9), min_size=0, max_size=5))))
    labels = [f"{lv}{'abcd'[k]}" for lv in levels for k in range(draw(st.integers(1, 4)))]
    if draw(st.booleans()):
        return labels, None
    below: list[str] = []
    edges = set()
    for lv in levels:
        here = [lbl for lbl in labels if parse_label(lbl) == lv]
        for lbl in here:
            if below:   # one parent, so that the SEG is valid (every node reachable), then maybe more
                edges.add((draw(st.sampled_from(below)), lbl))
                for a in draw(st.lists(st.sampled_from(below), max_size=3)):
                    edges.add((a, lbl))
        below += here
    return labels, sorted(edges)


def _enumerate(labels, edges, repeat_root: bool) -> int:
    """Every walk, one by one, from the definition (independent of ts2viz.seg.SEG.walks): from each
    error-0 node (twice at the start with ``repeat_root``: every ordered pair of error-0 nodes with
    implied edges, a node with itself with explicit edges) along the edges until a node without any."""
    pairs = implied_edges(labels) if edges is None else edges
    kids = {lbl: [b for a, b in pairs if a == lbl] for lbl in labels}
    roots = [lbl for lbl in labels if parse_label(lbl) == 0]
    stack = []
    if repeat_root:
        stack = [(r, r2) for r, r2 in itertools.product(roots, roots) if edges is None or r == r2]
    else:
        stack = [(r,) for r in roots]
    n = 0
    while stack:
        walk = stack.pop()
        nxt = kids[walk[-1]]
        if not nxt:
            n += 1
        stack += [walk + (k,) for k in nxt]
    return n


def _seg(labels, edges) -> SEG:
    return SEG(0, "p", "Custom", tuple(Node(lbl, (Image(f"{lbl}.png"),)) for lbl in labels),
               None if edges is None else tuple(edges))


@settings(max_examples=300, deadline=None)
@given(dags(), st.booleans())
def test_count_equals_brute_force_enumeration(dag, repeat_root):
    labels, edges = dag
    expected = _enumerate(labels, edges, repeat_root)
    assert count_walks(labels, edges, repeat_root=repeat_root) == expected
    seg = _seg(labels, edges)
    assert seg.n_walks(repeat_root) == expected == len(seg.walks(repeat_root))


def test_a_walk_explosion_is_counted_without_building_a_walk():
    """3 nodes on each of 31 levels (the issue's draft within every old cap): 3^30 walks, counted
    exactly; enumerating them would need more memory than any machine has."""
    labels = [f"{lv}{x}" for lv in range(31) for x in "abc"]
    t0 = time.perf_counter()
    n = count_walks(labels)
    assert n == 3 ** 31 and count_walks(labels, repeat_root=True) == 3 * 3 ** 31
    assert time.perf_counter() - t0 < 0.5        # linear in nodes and implied edges (a few hundred)


def test_labels_and_edges_a_draft_may_still_have_wrong_are_left_out():
    labels = ["0", "1a", "1b", "x", "2"]
    edges = [("0", "1a"), ("0", "1b"), ("1a", "2"), ("2", "1b"), ("1a", "9z"), ("0", "0")]
    # x is no label, 2->1b goes down, 9z is no node, 0->0 is a loop: walks 0-1a-2 and 0-1b
    assert count_walks(labels, edges) == 2
