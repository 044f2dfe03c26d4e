"""The walk layout of one SEG under the structural rules of a policy (independent of the metrics).

:func:`seg_structure` enumerates a SEG's walks, nodes, levels, level pairs and edges once per shape
(:func:`shape_key`); the statistics of :mod:`ts2viz.metametrics.walks` run on this layout.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field

import numpy as np

from ..seg import SEG
from .policy import Policy, resolve_policy

# -- structure of one SEG under one policy (independent of the metrics) -----------------------------

@dataclass
class SegStructure:
    """Precomputed walk layout of one SEG under the structural rules of a policy.

    Everything but ``seg`` and ``file_names`` depends only on the SEG's shape (:func:`shape_key`), so
    SEGs of the same shape share these arrays (:meth:`rebind`); treat them as read-only. With K walks, N
    nodes, n images, L levels, P level pairs and E edges:

    Attributes
    ----------
    seg : SEG
        The SEG.
    file_names : list of str
        Its images in node order.
    levels : numpy.ndarray
        (n,) error count per image.
    node_of : numpy.ndarray
        (n,) node index per image.
    walk_nodes : list of tuple of int
        Node indices (into ``seg.nodes``) per walk.
    node_counts : numpy.ndarray
        (K, N) multiplicity of each node in each walk.
    member : numpy.ndarray
        (N, n) one-hot: image i belongs to node.
    level_values : numpy.ndarray
        (L,) distinct levels present.
    pairs : list of (int, int)
        Candidate level pairs (indices into ``level_values``), a < b.
    all_pairs : numpy.ndarray
        (K, P) bool: both levels of pair p occur in walk w.
    step_pairs : numpy.ndarray
        (K, P) bool: pair p is the level pair of a step of walk w.
    node_level : numpy.ndarray
        (N, L) one-hot: node j is at level l.
    node_starts : numpy.ndarray
        (N,) index of each node's first image (images are in node order).
    image_weights : numpy.ndarray
        (K, n) multiplicity of each image in each walk.
    edge_nodes : list of (int, int)
        Distinct adjacent node pairs (node indices).
    edge_counts : numpy.ndarray
        (E, N): the two nodes of each edge.
    edge_use : numpy.ndarray
        (E, P) bool: the level pair of each edge.
    layouts : dict
        Population layouts per unit kind (built on demand).
    """

    seg: SEG
    file_names: list[str]          # images in node order
    levels: np.ndarray             # (n,) error count per image
    node_of: np.ndarray            # (n,) node index per image
    walk_nodes: list[tuple[int, ...]]   # node indices (into seg.nodes) per walk
    node_counts: np.ndarray        # (K, N) multiplicity of each node in each walk
    member: np.ndarray             # (N, n) one-hot: image i belongs to node
    level_values: np.ndarray       # (L,) distinct levels present
    pairs: list[tuple[int, int]]   # candidate level pairs (indices into level_values), a < b
    all_pairs: np.ndarray          # (K, P) bool: both levels of pair p occur in walk w
    step_pairs: np.ndarray         # (K, P) bool: pair p is the level pair of a step of walk w
    node_level: np.ndarray         # (N, L) one-hot: node j is at level l
    node_starts: np.ndarray        # (N,) index of each node's first image (images are in node order)
    image_weights: np.ndarray      # (K, n) multiplicity of each image in each walk
    edge_nodes: list[tuple[int, int]]   # distinct adjacent node pairs (node indices)
    edge_counts: np.ndarray        # (E, N): the two nodes of each edge
    edge_use: np.ndarray           # (E, P) bool: the level pair of each edge
    layouts: dict = field(default_factory=dict, repr=False)   # population layouts per unit kind

    @property
    def walks(self) -> list[tuple[str, ...]]:
        """Node labels per walk."""
        labels = self.seg.labels
        return [tuple(labels[i] for i in w) for w in self.walk_nodes]

    @property
    def edges(self) -> list[tuple[str, str]]:
        """Distinct adjacent node pairs (node labels)."""
        labels = self.seg.labels
        return [(labels[a], labels[b]) for a, b in self.edge_nodes]

    def rebind(self, seg: SEG) -> "SegStructure":
        """The same layout for another SEG of the same shape.

        Shares every array; cheap: one copy of the object and the SEG's file names.

        Parameters
        ----------
        seg : SEG
            A SEG with the same :func:`shape_key`.

        Returns
        -------
        SegStructure
            The layout bound to ``seg``.
        """
        out = copy.copy(self)
        out.seg = seg
        out.file_names = [im.file_name for n in seg.nodes for im in n.images]
        return out


def shape_key(seg: SEG) -> tuple:
    """What a SEG's walk layout depends on; SEGs with equal keys have equal layouts.

    Parameters
    ----------
    seg : SEG
        The SEG.

    Returns
    -------
    tuple
        Node levels and sizes in node order, and the edges between node positions (``None`` for
        implied edges).

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> from ts2viz.metametrics.structure import shape_key
    >>> shape_key(load_dataset("ts2")[0])
    (((0, 1), (1, 5), (1, 3), (2, 3)), None)
    """
    nodes = tuple((n.level, len(n.images)) for n in seg.nodes)
    if seg.edges is None:
        return nodes, None
    index = {lbl: i for i, lbl in enumerate(seg.labels)}
    return nodes, tuple(sorted((index[a], index[b]) for a, b in seg.edges))


def _walk_pair_masks(walks_lv: list[list[int]], pair_index: dict) -> tuple[np.ndarray, np.ndarray]:
    """(K, P) masks: level pairs that occur in each walk, and level pairs of each walk's steps."""
    both = np.zeros((len(walks_lv), len(pair_index)), dtype=bool)
    step = np.zeros_like(both)
    for w, lv in enumerate(walks_lv):
        for p in itertools.combinations(sorted(set(lv)), 2):
            both[w, pair_index[p]] = True
        for a, b in zip(lv, lv[1:]):
            if a != b:
                step[w, pair_index[(min(a, b), max(a, b))]] = True
    return both, step


def seg_structure(seg: SEG, policy: "Policy | str" = "paper") -> SegStructure:
    """Walk layout of ``seg`` under ``policy`` (built once per SEG and structural rules, kept with the SEG).

    Parameters
    ----------
    seg : SEG
        The SEG.
    policy : Policy or str, default "paper"
        The policy (only ``repeat_root`` matters here).

    Returns
    -------
    SegStructure
        The layout.

    Raises
    ------
    InputError
        For an unknown policy.
    """
    return layout(seg, resolve_policy(policy))


def layout(seg: SEG, pol: Policy) -> SegStructure:
    """:func:`seg_structure` under a resolved policy (nothing is validated), memoised on the SEG.

    Parameters
    ----------
    seg : SEG
        The SEG.
    pol : Policy
        The resolved policy (only its structural rule ``repeat_root`` matters).

    Returns
    -------
    SegStructure
        The layout, shared by every call with the same SEG and ``repeat_root``.
    """
    return seg.memo(("walk-layout", pol.repeat_root), lambda: _build_structure(seg, pol))


def _build_structure(seg: SEG, pol: Policy) -> SegStructure:
    labels = list(seg.labels)
    node_index = {lbl: i for i, lbl in enumerate(labels)}
    file_names, levels, node_of = [], [], []
    for i, node in enumerate(seg.nodes):
        for img in node.images:
            file_names.append(img.file_name)
            levels.append(node.level)
            node_of.append(i)
    levels_a = np.asarray(levels, dtype=np.float64)
    node_of_a = np.asarray(node_of, dtype=np.int64)
    n_nodes = len(labels)
    member = (node_of_a[None, :] == np.arange(n_nodes)[:, None]).astype(np.float64)
    walks = seg.walks(repeat_root=pol.repeat_root)
    counts = np.zeros((len(walks), n_nodes))
    for w, walk in enumerate(walks):
        for lbl in walk:
            counts[w, node_index[lbl]] += 1
    level_values = np.unique(levels_a)
    lv_index = {float(v): i for i, v in enumerate(level_values)}
    pairs = list(itertools.combinations(range(len(level_values)), 2))
    pair_index = {p: i for i, p in enumerate(pairs)}
    walks_lv = [[lv_index[float(seg.node(lbl).level)] for lbl in walk] for walk in walks]
    edges = [(node_index[a], node_index[b]) for a, b in seg.adjacent_pairs()]
    edge_counts = np.zeros((len(edges), n_nodes))
    edge_use = np.zeros((len(edges), len(pairs)), dtype=bool)
    for e, (a, b) in enumerate(edges):
        edge_counts[e, a] += 1
        edge_counts[e, b] += 1
        la, lb = lv_index[float(seg.nodes[a].level)], lv_index[float(seg.nodes[b].level)]
        if la != lb:
            edge_use[e, pair_index[(min(la, lb), max(la, lb))]] = True
    node_level = np.array([[float(n.level) == v for v in level_values] for n in seg.nodes], dtype=np.float64)
    walk_nodes = [tuple(node_index[lbl] for lbl in walk) for walk in walks]
    node_starts = np.flatnonzero(np.r_[True, node_of_a[1:] != node_of_a[:-1]])
    return SegStructure(seg, file_names, levels_a, node_of_a, walk_nodes, counts, member, level_values, pairs,
                        *_walk_pair_masks(walks_lv, pair_index), node_level, node_starts, counts @ member,
                        edges, edge_counts, edge_use)
