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
    """The :class:`~ts2viz.seg.SEG` the draft describes (what the explorer draws and meta-metrics use),
    with each node's error descriptions.

    Raises :class:`~ts2viz.errors.InputError` (one line: the first problem, and how many more) when
    :func:`~ts2viz.authoring.draft_problems` finds any.
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
    """A draft of SEG ``seg_id`` of ``dataset`` (e.g. a TS2 SEG, to make a variant): its prompt,
    partition, nodes (by error level, then label) with their error descriptions, images keyed by their
    file names, node by node in the dataset's order, and its edges (``None`` when the dataset has no
    edge list for it). :class:`~ts2viz.errors.InputError` for an id the dataset lacks."""
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
    """The drafts as a :class:`~ts2viz.dataset.Dataset`, equal to what an export of them loads as (each in
    :func:`~ts2viz.authoring.canonical` order), without writing anything: for live scoring and meta-metrics while authoring. ``root`` is a folder holding the images
    at their ``file_name`` (``None``: images not on disk). Raises :class:`~ts2viz.errors.InputError`
    (the first problem, one line) when :func:`~ts2viz.authoring.drafts_problems` finds any."""
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
    """The SEG of the part of a draft that is already sound, to draw while the draft still has problems
    (:func:`~ts2viz.authoring.draft_problems` says what is left out and why): nodes with well-formed,
    distinct labels (and images, unless ``include_empty``), the images in them (a file name once),
    the explicit edges between kept nodes that go from fewer to more errors, and only nodes a walk
    reaches. ``None`` while no error-0 node can be drawn. Equal to :func:`draft_to_seg` for a draft
    without problems."""
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
