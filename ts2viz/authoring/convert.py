"""Drafts to SEGs and back: what the explorer draws, and a start from an existing SEG."""
from __future__ import annotations

from ..dataset import Dataset
from ..seg import SEG
from .draft import SegDraft


def draft_to_seg(draft: SegDraft) -> SEG:
    """The :class:`~ts2viz.seg.SEG` the draft describes (what the explorer draws and meta-metrics use).

    Raises :class:`~ts2viz.errors.InputError` (one line: the first problem, and how many more) when
    :func:`~ts2viz.authoring.draft_problems` finds any.
    """
    raise NotImplementedError


def draft_from_seg(dataset: Dataset, seg_id: int) -> SegDraft:
    """A draft of SEG ``seg_id`` of ``dataset`` (e.g. a TS2 SEG, to make a variant): its prompt,
    partition, nodes with their error descriptions, images keyed by their file names, and its edges
    (``None`` when the dataset has no edge list for it). ``InputError`` for an unknown id."""
    raise NotImplementedError
