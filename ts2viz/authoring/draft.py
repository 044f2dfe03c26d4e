"""A SEG being authored: an immutable draft and pure functions that return an updated copy.

A :class:`SegDraft` may be incomplete or wrong at any moment (an image not yet in a node, an edge
going the wrong way, no error-0 node yet): :func:`ts2viz.authoring.draft_problems` lists what is
wrong, by the same rules the dataset loader applies. Every update returns a new draft, so a UI can
keep the history (undo) and a test can compare drafts with ``==``.

Node labels are stored stripped of surrounding blanks (as the loader strips CSV cells).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from ..dataset import canonical_partition, parse_errors
from ..seg import implied_edges, label_sort_key, parse_label


def clean_errors(errors: str | Iterable[str]) -> tuple[str, ...]:
    """Error descriptions as a tuple of stripped, non-empty strings.

    ``errors`` is one string (several descriptions separated by ``;``, as in ``nodes.csv``) or an
    iterable of strings (each kept whole, blanks stripped; empty ones dropped).
    """
    if isinstance(errors, str):
        return parse_errors(errors)       # as the loader reads a nodes.csv cell
    return tuple(" ".join(str(e).split()) for e in errors if str(e).strip())


@dataclass(frozen=True)
class DraftNode:
    """A node of a draft: its label (``0``, ``1a``, ``2b``: the leading integer is its error count) and
    the error(s) its images add relative to its parent node, in words (``"no fruit"``)."""

    label: str
    errors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", str(self.label).strip())
        object.__setattr__(self, "errors", tuple(self.errors))

    @property
    def level(self) -> int | None:
        """The error count of the label, or ``None`` while the label is malformed."""
        try:
            return parse_label(self.label)
        except ValueError:
            return None


@dataclass(frozen=True)
class DraftImage:
    """An image of a draft.

    ``key`` is an opaque handle that the caller maps to the image's bytes or file (the app keeps
    uploads in a session folder; :func:`~ts2viz.authoring.import_dataset` uses the file name).
    ``file_name`` is the image's path inside the exported dataset folder (``images/cat-0.jpg``);
    ``node`` is the label of the node it belongs to (``None``: not yet assigned); ``source`` is where it
    came from (``SD2.1``, ``DALL-E2``, ``Natural``, ...; metadata.csv's ``image_source``).
    """

    key: str
    file_name: str
    node: str | None = None
    source: str = ""

    def __post_init__(self) -> None:
        # stripped as the loader strips CSV cells, so an export reads back equal
        object.__setattr__(self, "file_name", str(self.file_name).strip())
        object.__setattr__(self, "source", str(self.source).strip())
        if self.node is not None:
            object.__setattr__(self, "node", str(self.node).strip())


@dataclass(frozen=True)
class SegDraft:
    """A SEG being authored (immutable; every update method returns a new draft).

    ``edges`` is ``None`` to follow error counts (every node of error level k connects to every node of
    the next level present, as TS2 does when ``edges.csv`` is absent; see :attr:`implied_edges`), or an
    explicit tuple of (parent label, child label) pairs.
    """

    prompt: str
    seg_id: int = 0
    partition: str = "Custom"
    nodes: tuple[DraftNode, ...] = ()
    images: tuple[DraftImage, ...] = ()
    edges: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self) -> None:
        # stripped as the loader strips CSV cells, so an export reads back equal
        object.__setattr__(self, "prompt", str(self.prompt).strip())
        object.__setattr__(self, "partition", canonical_partition(str(self.partition).strip()))
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "images", tuple(self.images))
        if self.edges is not None:
            object.__setattr__(self, "edges", tuple((str(a), str(b)) for a, b in self.edges))

    # -- reading -----------------------------------------------------------------------------------
    @property
    def labels(self) -> tuple[str, ...]:
        """Node labels in the draft's order (the order nodes were added)."""
        return tuple(n.label for n in self.nodes)

    def has_node(self, label: str) -> bool:
        return any(n.label == label for n in self.nodes)

    def node(self, label: str) -> DraftNode:
        """The node with this label (``KeyError`` if there is none)."""
        for n in self.nodes:
            if n.label == label:
                return n
        raise KeyError(label)

    def image(self, key: str) -> DraftImage:
        """The image with this key (``KeyError`` if there is none)."""
        for im in self.images:
            if im.key == key:
                return im
        raise KeyError(key)

    def images_of(self, label: str | None) -> tuple[DraftImage, ...]:
        """The images of a node (``None``: the unassigned images), in the draft's order."""
        return tuple(im for im in self.images if im.node == label)

    @property
    def unassigned(self) -> tuple[DraftImage, ...]:
        return self.images_of(None)

    @functools.cached_property
    def implied_edges(self) -> tuple[tuple[str, str], ...]:
        """The edges that follow from the error counts alone (nodes with malformed labels left out);
        computed once per draft (a draft is immutable), from the nodes grouped by level."""
        return implied_edges(lbl for lbl in self.labels if DraftNode(lbl).level is not None)

    @property
    def effective_edges(self) -> tuple[tuple[str, str], ...]:
        """The edges walks follow: the explicit ones, or the implied ones when ``edges`` is ``None``."""
        return self.implied_edges if self.edges is None else self.edges

    def sorted_labels(self) -> tuple[str, ...]:
        """Node labels by error level then label (malformed labels last)."""
        return tuple(sorted(self.labels, key=_label_key))

    # -- the SEG as a whole ------------------------------------------------------------------------
    def with_prompt(self, prompt: str) -> "SegDraft":
        return replace(self, prompt=prompt)

    def with_seg_id(self, seg_id: int) -> "SegDraft":
        return replace(self, seg_id=int(seg_id))

    def with_partition(self, partition: str) -> "SegDraft":
        return replace(self, partition=partition)

    # -- nodes -------------------------------------------------------------------------------------
    def add_node(self, label: str, errors: str | Iterable[str] = ()) -> "SegDraft":
        """Add a node (label stripped). Adding a label that exists is allowed and reported by
        :func:`~ts2viz.authoring.draft_problems` as a duplicate (a UI may show it before it is fixed)."""
        return replace(self, nodes=self.nodes + (DraftNode(str(label).strip(), clean_errors(errors)),))

    def rename_node(self, old: str, new: str) -> "SegDraft":
        """Relabel a node; its images and edges follow it. ``KeyError`` if ``old`` is not a node."""
        self.node(old)
        new = str(new).strip()
        nodes = tuple(replace(n, label=new) if n.label == old else n for n in self.nodes)
        images = tuple(replace(im, node=new) if im.node == old else im for im in self.images)
        edges = None if self.edges is None else tuple(
            (new if a == old else a, new if b == old else b) for a, b in self.edges)
        return replace(self, nodes=nodes, images=images, edges=edges)

    def remove_node(self, label: str) -> "SegDraft":
        """Remove a node (every node with this label): its images become unassigned, its edges go."""
        self.node(label)
        nodes = tuple(n for n in self.nodes if n.label != label)
        images = tuple(replace(im, node=None) if im.node == label else im for im in self.images)
        edges = None if self.edges is None else tuple(e for e in self.edges if label not in e)
        return replace(self, nodes=nodes, images=images, edges=edges)

    def set_node_errors(self, label: str, errors: str | Iterable[str]) -> "SegDraft":
        """Set the error descriptions of a node (a string is split at ``;``)."""
        self.node(label)
        errs = clean_errors(errors)
        return replace(self, nodes=tuple(replace(n, errors=errs) if n.label == label else n for n in self.nodes))

    # -- images ------------------------------------------------------------------------------------
    def add_image(self, key: str, file_name: str, node: str | None = None, source: str = "") -> "SegDraft":
        """Add an image (in ``node``, or unassigned). A key already in the draft is a ``ValueError``
        (the key is the caller's handle on the bytes, so two images cannot share it)."""
        if any(im.key == key for im in self.images):
            raise ValueError(f"the draft already has an image with key {key!r}")
        return replace(self, images=self.images + (DraftImage(key, file_name, node, source),))

    def remove_image(self, key: str) -> "SegDraft":
        self.image(key)
        return replace(self, images=tuple(im for im in self.images if im.key != key))

    def assign(self, keys: str | Sequence[str], node: str | None) -> "SegDraft":
        """Put images (one key or several) into ``node`` (``None``: unassign them)."""
        keys = {keys} if isinstance(keys, str) else set(keys)
        for k in keys:
            self.image(k)
        if node is not None:
            self.node(node)
        return replace(self, images=tuple(replace(im, node=node) if im.key in keys else im for im in self.images))

    def unassign(self, keys: str | Sequence[str]) -> "SegDraft":
        return self.assign(keys, None)

    def set_image(self, key: str, *, file_name: str | None = None, source: str | None = None) -> "SegDraft":
        """Change an image's dataset file name and/or source."""
        im = self.image(key)
        new = replace(im, file_name=im.file_name if file_name is None else file_name,
                      source=im.source if source is None else source)
        return replace(self, images=tuple(new if x.key == key else x for x in self.images))

    # -- edges -------------------------------------------------------------------------------------
    def add_edge(self, parent: str, child: str) -> "SegDraft":
        """Add an explicit edge. On a draft following error counts, the implied edges become explicit
        first (so nothing a walk took before is lost). Adding an edge that exists changes nothing."""
        edges = self.effective_edges
        if (parent, child) in edges:
            return self if self.edges is not None else replace(self, edges=edges)
        return replace(self, edges=edges + ((str(parent), str(child)),))

    def remove_edge(self, parent: str, child: str) -> "SegDraft":
        """Remove an edge (the implied edges become explicit first). ``KeyError`` if there is no such edge."""
        edges = self.effective_edges
        if (parent, child) not in edges:
            raise KeyError((parent, child))
        return replace(self, edges=tuple(e for e in edges if e != (parent, child)))

    def follow_error_counts(self) -> "SegDraft":
        """Drop the explicit edges: edges follow from the error counts (``edges=None``)."""
        return replace(self, edges=None)

    def explicit_edges(self) -> "SegDraft":
        """Make the current edges explicit (the implied ones, when following error counts)."""
        return replace(self, edges=self.effective_edges)


def _label_key(label: str | None):
    try:
        return (0, *label_sort_key(label))
    except (ValueError, TypeError):
        return (1, 0, str(label))


def canonical(draft: SegDraft, *, rekey: bool = False) -> SegDraft:
    """The same draft in the order an exported dataset reads back in: nodes by error level then label,
    images node by node then by file name, explicit edges sorted (and an empty edge list of a SEG whose
    implied edges are empty too, i.e. one level only, as ``None``). ``rekey=True`` also sets each
    image's key to its file name (the keys :func:`import_dataset` gives)."""
    nodes = tuple(sorted(draft.nodes, key=lambda n: _label_key(n.label)))
    order = {n.label: i for i, n in enumerate(nodes)}
    images = tuple(sorted(draft.images, key=lambda im: (order.get(im.node, len(order)), im.file_name)))
    if rekey:
        images = tuple(replace(im, key=im.file_name) for im in images)
    edges = draft.edges
    if edges is not None:
        edges = tuple(sorted(dict.fromkeys(edges), key=lambda e: (_label_key(e[0]), _label_key(e[1]))))
        if not edges and not draft.implied_edges:
            edges = None
    return replace(draft, nodes=nodes, images=images, edges=edges)
