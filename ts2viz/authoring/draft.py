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

    Parameters
    ----------
    errors : str or iterable of str
        One string holding several descriptions separated by ``;`` (as in a ``nodes.csv`` cell, read the
        way the loader reads it), or an iterable of descriptions, each kept whole with its blanks
        collapsed; empty ones are dropped.

    Returns
    -------
    tuple of str
        The descriptions, in order.

    Examples
    --------
    >>> clean_errors("no apple;  no table ")
    ('no apple', 'no table')
    >>> clean_errors(["a  red; apple", " "])
    ('a red; apple',)
    """
    if isinstance(errors, str):
        return parse_errors(errors)       # as the loader reads a nodes.csv cell
    return tuple(" ".join(str(e).split()) for e in errors if str(e).strip())


@dataclass(frozen=True)
class DraftNode:
    """A node of a draft.

    Parameters
    ----------
    label : str
        The node label (``0``, ``1a``, ``2b``: the leading integer is its error count); stored stripped of
        surrounding blanks.
    errors : tuple of str, default ()
        The error(s) its images add relative to its parent node, in words (``"no fruit"``).

    Examples
    --------
    >>> DraftNode(" 2b ", ("no fruit", "no bowl"))
    DraftNode(label='2b', errors=('no fruit', 'no bowl'))
    >>> DraftNode("2b").level, DraftNode("x").level
    (2, None)
    """

    label: str
    errors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Strip the label and make the errors a tuple."""
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

    Parameters
    ----------
    key : str
        An opaque handle that the caller maps to the image's bytes or file (the app keeps uploads in a
        session folder; :func:`~ts2viz.authoring.import_dataset` uses the file name). Unique in a draft.
    file_name : str
        The image's path inside the exported dataset folder (``images/cat-0.jpg``); stored stripped.
    node : str or None, default None
        The label of the node it belongs to; ``None``: not yet assigned.
    source : str, default ""
        Where it came from (``SD2.1``, ``DALL-E2``, ``Natural``, ...; ``metadata.csv``'s
        ``image_source``); stored stripped.
    """

    key: str
    file_name: str
    node: str | None = None
    source: str = ""

    def __post_init__(self) -> None:
        """Strip the file name, the source and the node label (as the loader strips CSV cells)."""
        # stripped as the loader strips CSV cells, so an export reads back equal
        object.__setattr__(self, "file_name", str(self.file_name).strip())
        object.__setattr__(self, "source", str(self.source).strip())
        if self.node is not None:
            object.__setattr__(self, "node", str(self.node).strip())


@dataclass(frozen=True)
class SegDraft:
    """A SEG being authored (immutable; every update method returns a new draft).

    A draft may be incomplete or wrong at any moment; :func:`~ts2viz.authoring.draft_problems` says what is
    wrong, and :func:`~ts2viz.authoring.draft_to_seg` turns a draft without problems into a
    :class:`~ts2viz.seg.SEG`.

    Parameters
    ----------
    prompt : str
        The prompt every image of the SEG was made for; stored stripped.
    seg_id : int, default 0
        The SEG's id in the dataset (``metadata.csv``'s ``id``).
    partition : str, default "Custom"
        The dataset partition (``Synth``, ``Nat``, ``Real``, ``Custom``, ...), spelled as the loader
        spells it (:func:`ts2viz.dataset.canonical_partition`).
    nodes : tuple of DraftNode, default ()
        The nodes, in the order they were added.
    images : tuple of DraftImage, default ()
        The images, in the order they were added, assigned to nodes or not.
    edges : tuple of (str, str) or None, default None
        ``None`` to follow the error counts (every node of error level k connects to every node of the
        next level present, as TS2 does when ``edges.csv`` is absent; see :attr:`implied_edges`), or an
        explicit tuple of (parent label, child label) pairs.

    See Also
    --------
    ts2viz.authoring.draft_problems : what stops a draft from exporting and loading.
    ts2viz.authoring.seg_size : nodes, edges, levels and walks, before anything is built.

    Examples
    --------
    A SEG with an error-0 node, two one-error nodes and a two-error node; edges follow the error counts:

    >>> d = (SegDraft("a red apple on a table", seg_id=7)
    ...      .add_node("0").add_node("1a", "no apple").add_node("1b", "a green apple")
    ...      .add_node("2a", ["no apple", "no table"])
    ...      .add_image("k0", "images/apple-0.png", "0", "SD2.1")
    ...      .add_image("k1", "images/apple-1.png", "1a", "SD2.1")
    ...      .add_image("k2", "images/apple-2.png", "1b")
    ...      .add_image("k3", "images/apple-3.png"))
    >>> d.sorted_labels()
    ('0', '1a', '1b', '2a')
    >>> d.effective_edges
    (('0', '1a'), ('0', '1b'), ('1a', '2a'), ('1b', '2a'))
    >>> [im.key for im in d.unassigned]
    ['k3']
    >>> d2 = d.assign("k3", "2a")
    >>> d2 == d, d2.image("k3").node, d.image("k3").node is None
    (False, '2a', True)
    """

    prompt: str
    seg_id: int = 0
    partition: str = "Custom"
    nodes: tuple[DraftNode, ...] = ()
    images: tuple[DraftImage, ...] = ()
    edges: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self) -> None:
        """Strip the prompt, spell the partition as the loader does, make nodes, images and edges tuples."""
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
        """Whether the draft has a node with this label.

        Parameters
        ----------
        label : str
            A node label.

        Returns
        -------
        bool
            True if some node has the label.
        """
        return any(n.label == label for n in self.nodes)

    def node(self, label: str) -> DraftNode:
        """The node with this label.

        Parameters
        ----------
        label : str
            A node label.

        Returns
        -------
        DraftNode
            The first node with the label.

        Raises
        ------
        KeyError
            If no node has the label.
        """
        return _first(self.nodes, "label", label)

    def image(self, key: str) -> DraftImage:
        """The image with this key.

        Parameters
        ----------
        key : str
            An image key.

        Returns
        -------
        DraftImage
            The image.

        Raises
        ------
        KeyError
            If no image has the key.
        """
        return _first(self.images, "key", key)

    def images_of(self, label: str | None) -> tuple[DraftImage, ...]:
        """The images of a node, in the draft's order.

        Parameters
        ----------
        label : str or None
            A node label; ``None`` for the images not yet in a node.

        Returns
        -------
        tuple of DraftImage
            The images whose ``node`` is ``label``.
        """
        return tuple(im for im in self.images if im.node == label)

    @property
    def unassigned(self) -> tuple[DraftImage, ...]:
        """The images not yet in a node, in the draft's order."""
        return self.images_of(None)

    @functools.cached_property
    def implied_edges(self) -> tuple[tuple[str, str], ...]:
        """The edges that follow from the error counts alone (nodes with malformed labels left out).

        Computed once per draft (a draft is immutable), from the nodes grouped by level.
        """
        return implied_edges(lbl for lbl in self.labels if DraftNode(lbl).level is not None)

    @property
    def effective_edges(self) -> tuple[tuple[str, str], ...]:
        """The edges walks follow: the explicit ones, or the implied ones when ``edges`` is ``None``."""
        return self.implied_edges if self.edges is None else self.edges

    def sorted_labels(self) -> tuple[str, ...]:
        """Node labels by error level, then label (malformed labels last).

        Returns
        -------
        tuple of str
            The labels, sorted.
        """
        return tuple(sorted(self.labels, key=_label_key))

    # -- the SEG as a whole ------------------------------------------------------------------------
    def with_prompt(self, prompt: str) -> "SegDraft":
        """A copy with another prompt.

        Parameters
        ----------
        prompt : str
            The new prompt (stored stripped).

        Returns
        -------
        SegDraft
            The updated draft.
        """
        return replace(self, prompt=prompt)

    def with_seg_id(self, seg_id: int) -> "SegDraft":
        """A copy with another SEG id.

        Parameters
        ----------
        seg_id : int
            The new id (converted with ``int``).

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        ValueError
            If ``seg_id`` is not a number ``int`` accepts.
        """
        return replace(self, seg_id=int(seg_id))

    def with_partition(self, partition: str) -> "SegDraft":
        """A copy with another partition.

        Parameters
        ----------
        partition : str
            The new partition (spelled as the loader spells it).

        Returns
        -------
        SegDraft
            The updated draft.
        """
        return replace(self, partition=partition)

    # -- nodes -------------------------------------------------------------------------------------
    def add_node(self, label: str, errors: str | Iterable[str] = ()) -> "SegDraft":
        """A copy with one more node.

        Adding a label that exists is allowed and reported by :func:`~ts2viz.authoring.draft_problems` as a
        duplicate (a UI may show it before it is fixed).

        Parameters
        ----------
        label : str
            The node label (stripped), e.g. ``"1a"``.
        errors : str or iterable of str, default ()
            Its error descriptions (:func:`clean_errors`: a string is split at ``;``).

        Returns
        -------
        SegDraft
            The updated draft.
        """
        return replace(self, nodes=self.nodes + (DraftNode(str(label).strip(), clean_errors(errors)),))

    def rename_node(self, old: str, new: str) -> "SegDraft":
        """A copy with a node relabelled; its images and explicit edges follow it.

        Parameters
        ----------
        old : str
            The current label.
        new : str
            The new label (stripped).

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        KeyError
            If ``old`` is not a node.
        """
        self.node(old)
        new = str(new).strip()
        nodes = tuple(replace(n, label=new) if n.label == old else n for n in self.nodes)
        images = tuple(replace(im, node=new) if im.node == old else im for im in self.images)
        edges = None if self.edges is None else tuple(
            (new if a == old else a, new if b == old else b) for a, b in self.edges)
        return replace(self, nodes=nodes, images=images, edges=edges)

    def remove_node(self, label: str) -> "SegDraft":
        """A copy without a node (every node with this label): its images become unassigned, its edges go.

        Parameters
        ----------
        label : str
            The node label.

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        KeyError
            If ``label`` is not a node.
        """
        self.node(label)
        nodes = tuple(n for n in self.nodes if n.label != label)
        images = tuple(replace(im, node=None) if im.node == label else im for im in self.images)
        edges = None if self.edges is None else tuple(e for e in self.edges if label not in e)
        return replace(self, nodes=nodes, images=images, edges=edges)

    def set_node_errors(self, label: str, errors: str | Iterable[str]) -> "SegDraft":
        """A copy with a node's error descriptions replaced.

        Parameters
        ----------
        label : str
            The node label.
        errors : str or iterable of str
            The new descriptions (a string is split at ``;``).

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        KeyError
            If ``label`` is not a node.
        """
        self.node(label)
        errs = clean_errors(errors)
        return replace(self, nodes=tuple(replace(n, errors=errs) if n.label == label else n for n in self.nodes))

    # -- images ------------------------------------------------------------------------------------
    def add_image(self, key: str, file_name: str, node: str | None = None, source: str = "") -> "SegDraft":
        """A copy with one more image, in ``node`` or unassigned.

        Parameters
        ----------
        key : str
            The caller's handle on the image's bytes; two images cannot share it.
        file_name : str
            The image's path inside the exported dataset folder.
        node : str or None, default None
            The node it belongs to (not checked here: :func:`~ts2viz.authoring.draft_problems` reports an
            image in a node the draft lacks); ``None``: unassigned.
        source : str, default ""
            Where the image came from (``metadata.csv``'s ``image_source``).

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        ValueError
            If the draft already has an image with this key.
        """
        if any(im.key == key for im in self.images):
            raise ValueError(f"the draft already has an image with key {key!r}")
        return replace(self, images=self.images + (DraftImage(key, file_name, node, source),))

    def remove_image(self, key: str) -> "SegDraft":
        """A copy without an image.

        Parameters
        ----------
        key : str
            The image's key.

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        KeyError
            If no image has the key.
        """
        self.image(key)
        return replace(self, images=tuple(im for im in self.images if im.key != key))

    def assign(self, keys: str | Sequence[str], node: str | None) -> "SegDraft":
        """A copy with images (one key or several) put into a node.

        Parameters
        ----------
        keys : str or sequence of str
            One image key, or several.
        node : str or None
            The node label; ``None`` unassigns the images.

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        KeyError
            If a key is not an image's, or ``node`` is not a node.
        """
        keys = {keys} if isinstance(keys, str) else set(keys)
        for k in keys:
            self.image(k)
        if node is not None:
            self.node(node)
        return replace(self, images=tuple(replace(im, node=node) if im.key in keys else im for im in self.images))

    def unassign(self, keys: str | Sequence[str]) -> "SegDraft":
        """A copy with images taken out of their nodes (``assign(keys, None)``).

        Parameters
        ----------
        keys : str or sequence of str
            One image key, or several.

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        KeyError
            If a key is not an image's.
        """
        return self.assign(keys, None)

    def set_image(self, key: str, *, file_name: str | None = None, source: str | None = None) -> "SegDraft":
        """A copy with an image's dataset file name and/or source changed.

        Parameters
        ----------
        key : str
            The image's key.
        file_name : str or None, default None
            The new file name; ``None`` keeps it.
        source : str or None, default None
            The new source; ``None`` keeps it.

        Returns
        -------
        SegDraft
            The updated draft.

        Raises
        ------
        KeyError
            If no image has the key.
        """
        im = self.image(key)
        new = replace(im, file_name=im.file_name if file_name is None else file_name,
                      source=im.source if source is None else source)
        return replace(self, images=tuple(new if x.key == key else x for x in self.images))

    # -- edges -------------------------------------------------------------------------------------
    def add_edge(self, parent: str, child: str) -> "SegDraft":
        """A copy with one more explicit edge.

        On a draft following the error counts, the implied edges become explicit first (so nothing a walk
        took before is lost). Adding an edge that exists changes nothing.

        Parameters
        ----------
        parent : str
            The parent node's label (fewer errors).
        child : str
            The child node's label (more errors). Neither is checked here:
            :func:`~ts2viz.authoring.draft_problems` reports a wrong edge.

        Returns
        -------
        SegDraft
            The updated draft (``self`` if the edge is there and the edges are already explicit).
        """
        edges = self.effective_edges
        if (parent, child) in edges:
            return self if self.edges is not None else replace(self, edges=edges)
        return replace(self, edges=edges + ((str(parent), str(child)),))

    def remove_edge(self, parent: str, child: str) -> "SegDraft":
        """A copy without an edge (the implied edges become explicit first).

        Parameters
        ----------
        parent : str
            The parent node's label.
        child : str
            The child node's label.

        Returns
        -------
        SegDraft
            The updated draft, with explicit edges.

        Raises
        ------
        KeyError
            If there is no such edge.
        """
        edges = self.effective_edges
        if (parent, child) not in edges:
            raise KeyError((parent, child))
        return replace(self, edges=tuple(e for e in edges if e != (parent, child)))

    def follow_error_counts(self) -> "SegDraft":
        """A copy without explicit edges: edges follow from the error counts (``edges=None``).

        Returns
        -------
        SegDraft
            The updated draft.
        """
        return replace(self, edges=None)

    def explicit_edges(self) -> "SegDraft":
        """A copy whose current edges are explicit (the implied ones, when following error counts).

        Returns
        -------
        SegDraft
            The updated draft.
        """
        return replace(self, edges=self.effective_edges)


def _first(items, attr: str, value):
    # the first of ``items`` whose ``attr`` equals ``value``; KeyError(value) if none
    for it in items:
        if getattr(it, attr) == value:
            return it
    raise KeyError(value)

def _label_key(label: str | None):
    try:
        return (0, *label_sort_key(label))
    except (ValueError, TypeError):
        return (1, 0, str(label))


def canonical(draft: SegDraft, *, rekey: bool = False) -> SegDraft:
    """The same draft in the order an exported dataset reads back in.

    Nodes by error level then label, images node by node then by file name, explicit edges sorted and
    each once (and an empty edge list of a SEG whose implied edges are empty too, i.e. one level only,
    as ``None``).

    Parameters
    ----------
    draft : SegDraft
        Any draft.
    rekey : bool, default False
        Also set each image's key to its file name (the keys :func:`import_dataset` gives).

    Returns
    -------
    SegDraft
        The reordered draft.

    Examples
    --------
    >>> d = SegDraft("p").add_node("1a").add_node("0").add_image("x", "b.png", "0").add_image("y", "a.png", "0")
    >>> c = canonical(d, rekey=True)
    >>> c.labels, [im.key for im in c.images]
    (('0', '1a'), ['a.png', 'b.png'])
    """
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
