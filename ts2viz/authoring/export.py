"""Export drafts as a ts2viz dataset folder (the documented format) and import such a folder back."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..dataset import Dataset
from .draft import DraftImage, SegDraft

#: what gives the bytes of a draft image: a function of the image, or a mapping from image keys;
#: either may give ``bytes`` or a path to a file
ImageBytes = Callable[[DraftImage], "bytes | str | os.PathLike"] | Mapping[str, "bytes | str | os.PathLike"]


def export_dataset(drafts: SegDraft | Sequence[SegDraft], folder: str | os.PathLike, image_bytes: ImageBytes,
                   *, overwrite: bool = False, name: str | None = None) -> Path:
    """Write ``drafts`` (one or several SEGs with distinct ids) as a dataset folder and return its path.

    The folder holds ``metadata.csv`` (``id, target_prompt, file_name, image_source, rank, partition``),
    ``edges.csv`` (rows for the SEGs with explicit edges; only when one has them), ``nodes.csv``
    (``id, rank, errors``: the error descriptions, ``;``-separated; only when a node has some), every
    image at its ``file_name``, and ``README.md`` (a dataset card: each SEG, its nodes and their
    errors, how to load it). ``name`` titles the card (default: the folder's name).

    Atomic: the dataset is written next to ``folder``, checked with
    :func:`ts2viz.dataset.validate_folder`, then renamed into place; on any error nothing is left.
    Raises :class:`~ts2viz.errors.InputError` (one line) when a draft has problems, an image's bytes
    cannot be had, or ``folder`` exists (with ``overwrite=True`` an existing dataset folder, or an
    empty folder, is replaced; any other folder is refused).
    """
    raise NotImplementedError


def import_dataset(source: str | os.PathLike | Dataset) -> list[SegDraft]:
    """The drafts of a dataset (a folder in ts2viz's format, or a loaded :class:`~ts2viz.dataset.Dataset`),
    one per SEG in id order; images keyed by their file names (the file is ``folder / key``; see
    :func:`image_locator`). ``import_dataset(export_dataset(drafts, ...)) == drafts`` for drafts sorted
    by id whose nodes and images are in label / file order (see :func:`canonical`)."""
    raise NotImplementedError


def image_locator(dataset: Dataset) -> Callable[[DraftImage], Path | None]:
    """For drafts made by :func:`import_dataset` or :func:`~ts2viz.authoring.draft_from_seg`: a function
    giving an image's local file (on disk under the dataset folder, or fetched from its hub repo), or
    ``None`` when it cannot be had."""
    raise NotImplementedError


def canonical(draft: SegDraft) -> SegDraft:
    """The same draft with nodes sorted by label and images by node then file name (the order an
    exported dataset reads back in), explicit edges sorted."""
    raise NotImplementedError
