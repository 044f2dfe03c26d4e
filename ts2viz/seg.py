"""Semantic error graphs (SEGs): the data model.

A SEG is one prompt and a set of image nodes. A node's label (``0``, ``1a``, ``2b``) starts with the
number of semantic errors its images contain. Walks run from an error-0 node down through one node
per error level, following the SEG's edges.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Mapping, Sequence, TypeVar

T = TypeVar("T")

_LABEL = re.compile(r"^(\d+)([A-Za-z]*)$")


def parse_label(label: str) -> int:
    """Error count of a node label: the leading integer of ``0``, ``1a``, ``12b``.

    Parameters
    ----------
    label : str
        The label (surrounding spaces ignored).

    Returns
    -------
    int
        The error count.

    Raises
    ------
    ValueError
        For anything else (empty, no leading digits, trailing symbols).

    Examples
    --------
    >>> from ts2viz.seg import parse_label
    >>> parse_label("0"), parse_label("12b")
    (0, 12)
    """
    m = _LABEL.match(str(label).strip())
    if not m:
        raise ValueError(f"malformed node label {label!r}: expected an error count followed by "
                         f"optional letters, e.g. 0, 1a, 2b")
    return int(m.group(1))


def edge_problem(parent: str, child: str) -> str | None:
    """Why ``parent -> child`` cannot be an edge of a SEG, or ``None`` if it can.

    An edge must go from a lower to a higher error level. That rules out self-loops, edges within a
    level and edges back to a lower level, and with them every cycle, so walks always end.

    Parameters
    ----------
    parent, child : str
        Node labels.

    Returns
    -------
    str or None
        The problem in words, or None.

    Raises
    ------
    ValueError
        If a label is malformed (:func:`parse_label`).
    """
    lp, lc = parse_label(parent), parse_label(child)
    if parent == child:
        return f"edge {parent}->{child} is a self-loop; an edge must go from a lower to a higher error level"
    if lp >= lc:
        return (f"edge {parent}->{child} goes from error level {lp} to level {lc}; an edge must go from a "
                f"lower to a higher error level")
    return None


def label_sort_key(label: str) -> tuple[int, str]:
    """Sort key of a node label: (error count, label).

    Parameters
    ----------
    label : str
        A well-formed label.

    Returns
    -------
    tuple of (int, str)
        The key.

    Raises
    ------
    ValueError
        If the label is malformed.
    """
    return parse_label(label), str(label)


def implied_edges(labels: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """The edges of a SEG without an edge list (TS2).

    Every node of error level k connects to every node of the next error level present. Each label is
    parsed once and the labels grouped by level, so the cost is that of the edges themselves (not of every
    pair of labels).

    Parameters
    ----------
    labels : iterable of str
        Well-formed node labels.

    Returns
    -------
    tuple of (str, str)
        (parent, child) pairs, sorted by parent, child.

    Raises
    ------
    ValueError
        If a label is malformed.

    Examples
    --------
    >>> from ts2viz.seg import implied_edges
    >>> implied_edges(["0", "1a", "1b", "2"])
    (('0', '1a'), ('0', '1b'), ('1a', '2'), ('1b', '2'))
    """
    by_level: dict[int, list[str]] = {}
    for lbl in set(labels):
        by_level.setdefault(parse_label(lbl), []).append(lbl)
    levels = sorted(by_level)
    for lv in levels:
        by_level[lv].sort()
    return tuple((a, b) for lv, nxt in zip(levels, levels[1:]) for a in by_level[lv] for b in by_level[nxt])


def count_walks(labels: Iterable[str], edges: Iterable[tuple[str, str]] | None = None, *,
                repeat_root: bool = False) -> int:
    """How many walks :meth:`SEG.walks` gives for a SEG with these node labels and edges, without building one.

    Dynamic programming over the graph, linear in nodes and edges: a walk starts at an error-0 node and
    takes one child at a time until a node without children, so the number of walks from a node is 1 for a
    node without children, else the sum over its children (children always have a higher error level:
    nodes are taken from the highest level down).

    Parameters
    ----------
    labels : iterable of str
        Node labels; labels that are not well-formed are left out (a draft's problems are reported
        elsewhere).
    edges : iterable of (str, str), optional
        (parent, child) edges; None follows the error counts (:func:`implied_edges`). Edges that name a
        label not given, or that do not go from a lower to a higher level, are left out.
    repeat_root : bool, default False
        Count as the ``paper`` policy walks (the level-0 step taken twice: with implied edges every
        ordered pair of error-0 nodes, with explicit edges each error-0 node with itself).

    Returns
    -------
    int
        The number of walks, an exact Python integer: it can be astronomically large (3 nodes on each of
        30 levels: 3**29 walks), so a caller can compare it with a limit before any walk is built.

    Examples
    --------
    >>> count_walks(["0", "1a", "1b", "2"])
    2
    >>> count_walks(["0", "1a", "1b", "2"], [("0", "1a"), ("1a", "2")])
    1
    >>> count_walks([str(k) + x for k in range(10) for x in "abc"]) == 3 ** 9 * 3
    True
    """
    level: dict[str, int] = {}
    for lbl in set(labels):
        try:
            level[lbl] = parse_label(lbl)
        except ValueError:
            continue
    kids: dict[str, set[str]] = {lbl: set() for lbl in level}
    if edges is None:
        by_level: dict[int, list[str]] = {}
        for lbl, lv in level.items():
            by_level.setdefault(lv, []).append(lbl)
        levels = sorted(by_level)
        nxt = dict(zip(levels, levels[1:]))
        for lbl, lv in level.items():
            if lv in nxt:
                kids[lbl] = set(by_level[nxt[lv]])
    else:
        for a, b in edges:
            if a in level and b in level and level[a] < level[b]:
                kids[a].add(b)
    walks_from: dict[str, int] = {}
    for lbl in sorted(level, key=level.__getitem__, reverse=True):
        ks = kids[lbl]
        walks_from[lbl] = sum(walks_from[k] for k in ks) if ks else 1
    roots = [lbl for lbl, lv in level.items() if lv == 0]
    if not repeat_root or edges is not None:
        return sum(walks_from[r] for r in roots)
    return len(roots) * sum(walks_from[r] for r in roots)


def no_root_problem(seg_id: int, labels: Iterable[str]) -> str | None:
    """Why a SEG with these (well-formed) node labels has no walk: it has no error-0 node; else ``None``.

    Parameters
    ----------
    seg_id : int
        The SEG's id (for the message).
    labels : iterable of str
        Its node labels.

    Returns
    -------
    str or None
        The problem in words, or None.
    """
    labels = set(labels)
    if any(parse_label(lbl) == 0 for lbl in labels):
        return None
    return f"SEG {seg_id} has no error-0 node (labels: {', '.join(sorted(labels))})"


def missing_node_problem(seg_id: int, parent: str, child: str, labels: Iterable[str]) -> str | None:
    """Why the edge ``parent -> child`` cannot be in a SEG with these node labels, or ``None``.

    Parameters
    ----------
    seg_id : int
        The SEG's id (for the message).
    parent, child : str
        The edge.
    labels : iterable of str
        The SEG's node labels.

    Returns
    -------
    str or None
        The problem (the edge names a node the SEG lacks), or None.
    """
    labels = set(labels)
    missing = [lbl for lbl in (parent, child) if lbl not in labels]
    if not missing:
        return None
    return (f"edge {parent}->{child}: SEG {seg_id} has no node {missing[0]!r} (nodes: "
            f"{', '.join(sorted(labels, key=label_sort_key))})")


def unreachable_nodes(labels: Iterable[str], edges: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """Labels (sorted) that no walk reaches: not an error-0 node and not reachable from one along ``edges``.

    With implied edges every node is reachable when an error-0 node exists.

    Parameters
    ----------
    labels : iterable of str
        Well-formed node labels.
    edges : iterable of (str, str)
        (parent, child) pairs.

    Returns
    -------
    tuple of str
        The unreachable labels, sorted by :func:`label_sort_key`.
    """
    labels = set(labels)
    kids: dict[str, set[str]] = {}
    for a, b in edges:
        kids.setdefault(a, set()).add(b)
    seen = {lbl for lbl in labels if parse_label(lbl) == 0}
    todo = list(seen)
    while todo:
        for k in kids.get(todo.pop(), ()):
            if k not in seen:
                seen.add(k)
                todo.append(k)
    return tuple(sorted(labels - seen, key=label_sort_key))


def unreachable_problem(seg_id: int, labels: Iterable[str], edges: Iterable[tuple[str, str]]) -> str | None:
    """Why a SEG's explicit edges leave nodes out of every walk, or ``None``.

    Their images would count for nothing. Applies only when some error-0 node exists (else
    :func:`no_root_problem`).

    Parameters
    ----------
    seg_id : int
        The SEG's id (for the message).
    labels : iterable of str
        Its node labels.
    edges : iterable of (str, str)
        Its edges.

    Returns
    -------
    str or None
        The problem in words, or None.
    """
    labels = set(labels)
    if not any(parse_label(lbl) == 0 for lbl in labels):
        return None
    lost = unreachable_nodes(labels, edges)
    if not lost:
        return None
    return (f"SEG {seg_id}: node{'s' if len(lost) > 1 else ''} {', '.join(lost)} cannot be reached from an "
            f"error-0 node along the SEG's edges; add an edge into {'each' if len(lost) > 1 else 'it'}")


@dataclass(frozen=True)
class Image:
    """One image of a SEG: its dataset file name and where it came from (SD2.1, DALL-E2, Natural, ...).

    Attributes
    ----------
    file_name : str
        The file name in the dataset.
    image_source : str
        The generator or source ("" if unknown).
    """

    file_name: str
    image_source: str = ""


@dataclass(frozen=True)
class Node:
    """A node of a SEG: its label, its images, and the error(s) its images add relative to the parent node.

    Parameters
    ----------
    label : str
        The label; its leading integer is the error count (``1a``).
    images : tuple of Image
        The node's images.
    errors : tuple of str, default ()
        The error(s) in words (from the dataset's optional ``nodes.csv``; empty if none).

    Attributes
    ----------
    level : int
        The error count, parsed once from the label.

    Raises
    ------
    ValueError
        If the label is malformed.
    """

    label: str
    images: tuple[Image, ...]
    level: int = field(init=False, compare=False)   # error count, parsed once from the label
    errors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Parse the level from the label."""
        object.__setattr__(self, "level", parse_label(self.label))


@dataclass(frozen=True)
class SEG:
    """A semantic error graph: one prompt, image nodes by error count, and the edges walks follow.

    Parameters
    ----------
    id : int
        The SEG's id.
    prompt : str
        The prompt the images were made for.
    partition : str
        Its partition (TS2: ``Synth``, ``Nat``, ``Real``).
    nodes : tuple of Node
        The nodes (stored sorted by level, then label).
    edges : tuple of (str, str) or None, default None
        ``None`` when the dataset gives no edge list (the TS2 release): then every node of error level k
        connects to every node of the next error level present. Otherwise (parent label, child label)
        pairs, and walks follow them.

    Raises
    ------
    ValueError
        For duplicate labels, no error-0 node, an edge naming a missing node or not going to a higher
        level, or a node no walk reaches.

    Examples
    --------
    >>> from ts2viz.seg import build_seg
    >>> seg = build_seg(7, "a red cube", "Synth", [("a.png", "SD", "0"), ("b.png", "SD", "1a"),
    ...                                           ("c.png", "SD", "1b"), ("d.png", "SD", "2")])
    >>> seg.labels, seg.levels, seg.n_images
    (('0', '1a', '1b', '2'), (0, 1, 2), 4)
    >>> seg.walks()
    [('0', '1a', '2'), ('0', '1b', '2')]
    """

    id: int
    prompt: str
    partition: str
    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, str], ...] | None = None
    _by_label: dict = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]
    _children: dict = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]
    _memo: dict = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        """Sort the nodes, index them by label and check the graph (see the class's Raises)."""
        nodes = tuple(sorted(self.nodes, key=lambda n: (n.level, n.label)))
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "_by_label", {n.label: n for n in nodes})
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_memo", {})
        if len(self._by_label) != len(nodes):
            raise ValueError(f"SEG {self.id}: duplicate node labels")
        problem = no_root_problem(self.id, self._by_label)
        if problem:
            raise ValueError(problem)
        if self.edges is not None:
            for a, b in self.edges:
                problem = missing_node_problem(self.id, a, b, self._by_label)
                if problem:
                    raise ValueError(problem)
                problem = edge_problem(a, b)
                if problem:
                    raise ValueError(f"SEG {self.id}: {problem}")
            problem = unreachable_problem(self.id, self._by_label, self.edges)
            if problem:
                raise ValueError(problem)

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """A structure derived from this SEG, built once per key and kept with the SEG.

        The SEG is immutable, so anything computed from it alone (walk layouts, pair masks) can live as long
        as it does; the cache goes away with the SEG object.

        Parameters
        ----------
        key : Hashable
            What is cached.
        build : callable
            Builds it (called once per key).

        Returns
        -------
        object
            The cached structure.
        """
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = build()
        return hit

    # -- structure ---------------------------------------------------------------------------
    def node(self, label: str) -> Node:
        """The node with label ``label``.

        Parameters
        ----------
        label : str
            A node label of the SEG.

        Returns
        -------
        Node
            The node.

        Raises
        ------
        KeyError
            If the SEG has no such node.
        """
        return self._by_label[label]

    @property
    def labels(self) -> tuple[str, ...]:
        """The node labels, by level then label."""
        return tuple(n.label for n in self.nodes)

    @property
    def levels(self) -> tuple[int, ...]:
        """Sorted distinct error levels present in the SEG."""
        return tuple(sorted({n.level for n in self.nodes}))

    @property
    def n_images(self) -> int:
        """The number of images over all nodes."""
        return sum(len(n.images) for n in self.nodes)

    def nodes_at(self, level: int) -> tuple[Node, ...]:
        """The nodes of one error level.

        Parameters
        ----------
        level : int
            The error count.

        Returns
        -------
        tuple of Node
            The nodes at that level (empty if none).
        """
        return tuple(n for n in self.nodes if n.level == level)

    def children(self, label: str) -> tuple[str, ...]:
        """Labels of the nodes a walk may take after ``label``.

        Parameters
        ----------
        label : str
            A node label.

        Returns
        -------
        tuple of str
            The children (explicit edges, or the next level's nodes).

        Raises
        ------
        KeyError
            If the SEG has no such node.
        """
        hit = self._children.get(label)
        if hit is not None:
            return hit
        if self.edges is not None:
            kids = tuple(sorted({b for a, b in self.edges if a == label}, key=label_sort_key))
        else:
            self._by_label[label]           # KeyError for a label the SEG lacks, as with explicit edges
            kids = tuple(b for a, b in self.memo("implied_edges", lambda: implied_edges(self._by_label))
                         if a == label)
        self._children[label] = kids
        return kids

    def adjacent_pairs(self) -> tuple[tuple[str, str], ...]:
        """Distinct (parent, child) node pairs joined by an edge (explicit or implied).

        Returns
        -------
        tuple of (str, str)
            The pairs, by parent then child.
        """
        return tuple((a.label, c) for a in self.nodes for c in self.children(a.label))

    def n_walks(self, repeat_root: bool = False) -> int:
        """How many walks :meth:`walks` gives, counted without building them (:func:`count_walks`).

        Parameters
        ----------
        repeat_root : bool, default False
            As for :meth:`walks`.

        Returns
        -------
        int
            The number of walks.
        """
        return count_walks(self._by_label, self.edges, repeat_root=repeat_root)

    def walks(self, repeat_root: bool = False) -> list[tuple[str, ...]]:
        """All walks through the SEG as tuples of node labels.

        Each walk starts at an error-0 node and takes one node per step along edges until a node without
        children; every node appears at most once.

        Parameters
        ----------
        repeat_root : bool, default False
            How the published TS2 numbers were computed (policy ``paper``): the level-0 step is taken twice,
            so each walk is (error-0 node, error-0 node, level-1 node, ...): the root's images enter every
            walk twice, and in a SEG with several error-0 nodes and implied edges two of them can share a walk
            (explicit edges never join two error-0 nodes: an edge goes from a lower to a higher error level).

        Returns
        -------
        list of tuple of str
            The walks.

        Examples
        --------
        >>> from ts2viz.seg import build_seg
        >>> seg = build_seg(0, "p", "Synth", [("a", "", "0"), ("b", "", "1"), ("c", "", "2")])
        >>> seg.walks(), seg.walks(repeat_root=True)
        ([('0', '1', '2')], [('0', '0', '1', '2')])
        """
        roots = [n.label for n in self.nodes_at(0)]
        out: list[tuple[str, ...]] = []

        def extend(prefix: tuple[str, ...]) -> None:
            kids = self.children(prefix[-1])
            if not kids:
                out.append(prefix)
                return
            for k in kids:
                extend(prefix + (k,))

        if not repeat_root:
            for r in roots:
                extend((r,))
        else:
            for r, r2 in itertools.product(roots, roots):
                if self.edges is not None and r2 != r and (r, r2) not in self.edges:
                    continue
                extend((r, r2))
        return out


def build_seg(seg_id: int, prompt: str, partition: str,
              rows: Iterable[tuple[str, str, str]],
              edges: Sequence[tuple[str, str]] | None = None,
              node_errors: Mapping[str, Sequence[str]] | None = None) -> SEG:
    """Build a SEG from (file_name, image_source, label) rows, grouping images by node label.

    Parameters
    ----------
    seg_id : int
        The SEG's id.
    prompt : str
        Its prompt.
    partition : str
        Its partition.
    rows : iterable of (str, str, str)
        ``(file_name, image_source, label)`` per image.
    edges : sequence of (str, str), optional
        Explicit (parent, child) edges (default: implied, as in TS2).
    node_errors : Mapping[str, sequence of str], optional
        Node label -> its error descriptions (labels it lacks get none).

    Returns
    -------
    SEG
        The graph.

    Raises
    ------
    ValueError
        For a malformed label or a graph :class:`SEG` rejects.
    """
    groups: dict[str, list[Image]] = {}
    for file_name, source, label in rows:
        parse_label(label)
        groups.setdefault(label, []).append(Image(file_name, source))
    node_errors = node_errors or {}
    nodes = tuple(Node(lbl, tuple(imgs), errors=tuple(node_errors.get(lbl, ())))
                  for lbl, imgs in groups.items())
    return SEG(seg_id, prompt, partition, nodes, None if edges is None else tuple(edges))
