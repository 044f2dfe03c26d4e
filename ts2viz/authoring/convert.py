"""Drafts to SEGs and back: what the explorer draws, and a start from an existing SEG."""
from __future__ import annotations

from ..dataset import Dataset
from ..errors import InputError
from ..seg import SEG, build_seg
from .draft import DraftImage, DraftNode, SegDraft
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
