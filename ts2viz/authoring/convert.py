"""Drafts to SEGs and back: what the explorer draws, and a start from an existing SEG."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..dataset import Dataset, ImageRow
from ..errors import InputError
from ..seg import SEG, build_seg
from .draft import DraftImage, DraftNode, SegDraft, canonical
from .problems import draft_problems


def draft_to_seg(draft: SegDraft) -> SEG:
    """The :class:`~ts2viz.seg.SEG` a draft describes, with each node's error descriptions.

    What the explorer draws and the meta-metrics use.

    Parameters
    ----------
    draft : SegDraft
        A draft without problems.

    Returns
    -------
    ts2viz.seg.SEG
        The SEG.

    Raises
    ------
    InputError
        When :func:`~ts2viz.authoring.draft_problems` finds any problem (one line: the first problem,
        and how many more).

    See Also
    --------
    preview_seg : the sound part of a draft that still has problems.

    Examples
    --------
    >>> from ts2viz.authoring import SegDraft
    >>> d = (SegDraft("a red apple on a table", seg_id=3)
    ...      .add_node("0").add_node("1a", "no apple").add_node("1b", "a green apple").add_node("2a", "no table")
    ...      .add_image("k0", "images/0.png", "0").add_image("k1", "images/1.png", "1a")
    ...      .add_image("k2", "images/2.png", "1b").add_image("k3", "images/3.png", "2a"))
    >>> seg = draft_to_seg(d)
    >>> seg.walks()
    [('0', '1a', '2a'), ('0', '1b', '2a')]
    >>> seg.node("1b").errors
    ('a green apple',)
    >>> draft_to_seg(d.remove_image("k3"))
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: SEG 3: node 2a has no images; a node of a dataset exists through its images
    """
    problems = draft_problems(draft)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        first = problems[0].message
        raise InputError((first if first.startswith("SEG ") else f"SEG {draft.seg_id}: {first}") + more)
    return build_seg(draft.seg_id, draft.prompt, draft.partition,
                     ((im.file_name, im.source, im.node) for im in draft.images),
                     edges=draft.edges, node_errors={n.label: n.errors for n in draft.nodes})


def draft_from_seg(dataset: Dataset, seg_id: int) -> SegDraft:
    """A draft of one SEG of a dataset (e.g. a TS2 SEG, to make a variant).

    Its prompt, partition, nodes (by error level, then label) with their error descriptions, images keyed
    by their file names, node by node in the dataset's order, and its edges (``None`` when the dataset has
    no edge list for it).

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        A loaded dataset.
    seg_id : int
        The SEG's id.

    Returns
    -------
    SegDraft
        The draft.

    Raises
    ------
    InputError
        For an id the dataset lacks.

    Examples
    --------
    >>> from ts2viz.dataset import load_dataset
    >>> d = draft_from_seg(load_dataset("ts2"), 0)
    >>> d.prompt, d.labels[:3], d.edges is None
    ('A Christmas tree with lights and teddy bear', ('0', '1a', '1b'), True)
    """
    try:
        seg = dataset[int(seg_id)]
    except (KeyError, ValueError, TypeError):
        raise InputError(f"no SEG with id {seg_id!r} in dataset {dataset.name}") from None
    nodes = tuple(DraftNode(n.label, n.errors) for n in seg.nodes)
    images = tuple(DraftImage(im.file_name, im.file_name, n.label, im.image_source)
                   for n in seg.nodes for im in n.images)
    return SegDraft(seg.prompt, seg.id, seg.partition, nodes, images, seg.edges)


def drafts_to_dataset(drafts: SegDraft | Sequence[SegDraft], *, name: str = "draft",
                      root: str | os.PathLike | None = None) -> Dataset:
    """Drafts as a :class:`~ts2viz.dataset.Dataset`, without writing anything.

    Equal to what an export of the drafts loads as (each in :func:`~ts2viz.authoring.canonical` order):
    for live scoring and meta-metrics while authoring.

    Parameters
    ----------
    drafts : SegDraft or sequence of SegDraft
        One draft or several (distinct SEG ids).
    name : str, default "draft"
        The dataset's name.
    root : str or os.PathLike or None, default None
        A folder holding the images at their ``file_name``; ``None``: images not on disk.

    Returns
    -------
    ts2viz.dataset.Dataset
        The dataset, SEGs in id order.

    Raises
    ------
    InputError
        When :func:`~ts2viz.authoring.drafts_problems` finds any problem (the first, in one line).

    Examples
    --------
    >>> from ts2viz.authoring import SegDraft
    >>> d = (SegDraft("p", seg_id=5).add_node("0").add_node("1a")
    ...      .add_image("a", "a.png", "0").add_image("b", "b.png", "1a"))
    >>> ds = drafts_to_dataset(d)
    >>> sorted(ds.segs), [r.file_name for r in ds.rows]
    ([5], ['a.png', 'b.png'])
    """
    from .problems import drafts_problems

    drafts = [drafts] if isinstance(drafts, SegDraft) else list(drafts)
    problems = drafts_problems(drafts)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise InputError(problems[0].message + more)
    segs, rows = {}, []
    for d in sorted(drafts, key=lambda d: d.seg_id):
        seg = draft_to_seg(canonical(d))          # as an export writes it, so as it would load
        segs[d.seg_id] = seg
        rows += [ImageRow(d.seg_id, im.file_name, d.prompt, im.image_source, n.label, n.level, d.partition)
                 for n in seg.nodes for im in n.images]
    return Dataset(name, segs, rows, None if root is None else Path(root))


def preview_seg(draft: SegDraft, *, include_empty: bool = False) -> SEG | None:
    """The SEG of the part of a draft that is already sound, to draw while the draft still has problems.

    Kept: nodes with well-formed, distinct labels (and images, unless ``include_empty``), the images in
    them (a file name once), the explicit edges between kept nodes that go from fewer to more errors,
    and only nodes a walk reaches. :func:`~ts2viz.authoring.draft_problems` says what is left out and
    why.

    Parameters
    ----------
    draft : SegDraft
        Any draft.
    include_empty : bool, default False
        Keep nodes without images too.

    Returns
    -------
    ts2viz.seg.SEG or None
        The sound part; ``None`` while no error-0 node can be drawn. Equal to :func:`draft_to_seg` for a
        draft without problems.

    Examples
    --------
    >>> from ts2viz.authoring import SegDraft
    >>> d = SegDraft("p").add_node("0").add_node("1a").add_node("x1").add_image("k", "a.png", "0")
    >>> preview_seg(d).labels, preview_seg(d, include_empty=True).labels
    (('0',), ('0', '1a'))
    """
    from collections import Counter

    from ..seg import (Image, Node, edge_problem, missing_node_problem, parse_label, unreachable_nodes)

    counts = Counter(draft.labels)
    images: dict[str, list[Image]] = {}
    seen: set[str] = set()
    for im in draft.images:
        if im.node is None or counts.get(im.node) != 1 or im.file_name in seen:
            continue
        seen.add(im.file_name)
        images.setdefault(im.node, []).append(Image(im.file_name, im.source))
    keep: dict[str, DraftNode] = {}
    for n in draft.nodes:
        try:
            parse_label(n.label)
        except ValueError:
            continue
        if counts[n.label] == 1 and (include_empty or n.label in images):
            keep[n.label] = n
    if not any(parse_label(lbl) == 0 for lbl in keep):
        return None
    edges = None
    if draft.edges is not None:
        edges = []
        for a, b in dict.fromkeys(draft.edges):
            try:
                if missing_node_problem(draft.seg_id, a, b, keep) or edge_problem(a, b):
                    continue
            except ValueError:
                continue
            edges.append((a, b))
        for lost in unreachable_nodes(keep, edges):
            keep.pop(lost)
        edges = [(a, b) for a, b in edges if a in keep and b in keep]
    nodes = tuple(Node(n.label, tuple(images.get(n.label, ())), errors=n.errors) for n in keep.values())
    return SEG(draft.seg_id if isinstance(draft.seg_id, int) else 0, draft.prompt, draft.partition, nodes,
               None if edges is None else tuple(edges))
