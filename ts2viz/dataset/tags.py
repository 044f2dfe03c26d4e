"""Tags of a dataset's SEGs, grouped in families, and the slices of SEGs they define.

A *SEG tag* says something about a whole SEG (its partition, a topic, the kind of error it tests); tags come
in *families*, and a SEG may carry several tags of one family. The *slice* of a tag is the set of SEGs that
carry it; the leaderboard is computed on each slice (:func:`ts2viz.metametrics.slices.board_slices`).

Sources, merged by :func:`seg_tags`:

- every dataset: family ``partition``, each SEG's partition as its metadata records it (a ``partition``
  column of ``metadata.csv``, otherwise TS2's id ranges: Synth 0-110, Nat 111-135, Real 136-164);
- a dataset folder's ``seg_tags.csv`` (:data:`DATASET_TAG_FILE`), read like the user's files;
- the user's tag files (:func:`read_seg_tags`): CSV ``seg_id``, ``family``, ``tag``, one row per tag of a
  SEG (several rows for several tags).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..errors import InputError
from ..tagfamilies import TagFamilies, check_tag_row
from .model import PARTITIONS

#: the columns of :attr:`SegTags.frame` and of a SEG tag file
SEG_TAG_COLUMNS = ("seg_id", "family", "tag")
#: the family every dataset has: each SEG's partition
PARTITION_FAMILY = "partition"
#: a dataset folder's own SEG tags, merged by :func:`seg_tags`
DATASET_TAG_FILE = "seg_tags.csv"


@dataclass(frozen=True)
class SegTags(TagFamilies):
    """Tags of SEGs, in families.

    Attributes
    ----------
    rows : tuple of (int, str, str)
        ``(seg_id, family, tag)``, each once, in order of first appearance.
    """

    rows: tuple

    _KIND = "SEG tag"

    def _family_tags(self):
        return ((f, t) for _, f, t in self.rows)

    def merged(self, other: "SegTags") -> "SegTags":
        """These tags and ``other``'s, duplicates dropped.

        Parameters
        ----------
        other : SegTags
            More tags.

        Returns
        -------
        SegTags
            The union.
        """
        return SegTags(tuple(dict.fromkeys(self.rows + other.rows)))


def partition_tags(dataset) -> SegTags:
    """Family ``partition``: each SEG's partition, TS2's partitions first (Synth, Nat, Real), then others.

    Parameters
    ----------
    dataset : Dataset
        The dataset.

    Returns
    -------
    SegTags
        One row per SEG.

    Examples
    --------
    >>> from ts2viz.dataset import load_dataset
    >>> from ts2viz.dataset.tags import partition_tags
    >>> partition_tags(load_dataset("ts2")).tags("partition")
    ['Synth', 'Nat', 'Real']
    """
    parts = [seg.partition for seg in dataset]
    seen = list(dict.fromkeys(parts))
    order = [p for p in PARTITIONS if p in seen] + [p for p in seen if p not in PARTITIONS]
    rank = {p: i for i, p in enumerate(order)}
    rows = sorted(((seg.id, PARTITION_FAMILY, seg.partition) for seg in dataset), key=lambda r: (rank[r[2]], r[0]))
    return SegTags(tuple(rows))


def read_seg_tags(path: str | os.PathLike, dataset) -> SegTags:
    r"""Read a SEG tag file: CSV ``seg_id``, ``family``, ``tag`` (several rows for several tags of a SEG).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    dataset : Dataset
        Every ``seg_id`` must be one of its SEGs.

    Returns
    -------
    SegTags
        The tags, in the file's order.

    Raises
    ------
    InputError
        In one line naming the file and row: a missing column, a ``seg_id`` that is not an integer or not
        a SEG of the dataset, an empty family or tag (or one with a comma or a control character), the
        built-in family ``partition``, more than :data:`~ts2viz.tagfamilies.MAX_TAGS_PER_FAMILY` tags in one
        family, no row.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz.dataset import load_dataset
    >>> from ts2viz.dataset.tags import read_seg_tags
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "seg_tags.csv"
    >>> _ = f.write_text("seg_id,family,tag\n0,topic,holiday\n1,topic,animals\n0,topic,objects\n")
    >>> tags = read_seg_tags(f, load_dataset("ts2"))
    >>> tags.families, tags.tags("topic")
    (['topic'], ['holiday', 'animals', 'objects'])
    """
    from .reading import csv_records, read_text_utf8

    path = Path(path)
    text = read_text_utf8(path)
    rows, per_family = [], {}
    for line, rec in csv_records(path, text, SEG_TAG_COLUMNS):
        try:
            sid = int(rec["seg_id"])
        except ValueError:
            raise InputError(f"seg_id {rec['seg_id'][:40]!r} is not an integer", file=path, row=line) from None
        if sid not in dataset:
            ids = sorted(dataset.segs)
            raise InputError(f"seg_id {sid} is not a SEG of dataset {dataset.name} (its ids: {ids[0]}-{ids[-1]})",
                             file=path, row=line)
        check_tag_row(rec, per_family, path, line)
        if rec["family"] == PARTITION_FAMILY:
            raise InputError(f"family {PARTITION_FAMILY!r} is built in (the SEGs' partitions); name yours "
                             "otherwise", file=path, row=line)
        rows.append((sid, rec["family"], rec["tag"]))
    if not rows:
        raise InputError("no tag rows below the header (expected seg_id,family,tag)", file=path)
    return SegTags(tuple(dict.fromkeys(rows)))


def seg_tags(dataset, files: Sequence[str | os.PathLike] = ()) -> SegTags:
    """Every SEG tag of a dataset: its partitions, its folder's ``seg_tags.csv``, then the user's files.

    Parameters
    ----------
    dataset : Dataset
        The dataset.
    files : sequence of path-like, default ()
        SEG tag files (:func:`read_seg_tags`).

    Returns
    -------
    SegTags
        The merged tags.

    Raises
    ------
    InputError
        For a bad tag file (one line: file, row, problem).
    """
    tags = partition_tags(dataset)
    own = Path(dataset.root) / DATASET_TAG_FILE if dataset.root is not None else None
    if own is not None and own.is_file():
        tags = tags.merged(read_seg_tags(own, dataset))
    for f in files:
        tags = tags.merged(read_seg_tags(f, dataset))
    return tags


def seg_slices(dataset, family: str, tags: SegTags | None = None, *, include_all: bool = True) -> dict[str, list[int]]:
    """The SEGs of each tag of ``family``.

    Parameters
    ----------
    dataset : Dataset
        The dataset.
    family : str
        The tag family.
    tags : SegTags, optional
        The tags (default: :func:`seg_tags` of the dataset, its partitions alone).
    include_all : bool, default True
        Put a slice ``all`` (every SEG of the dataset) first, to compare each slice with.

    Returns
    -------
    dict
        Slice name -> SEG ids (in id order), tags in order of first appearance; a tag named ``all`` is
        renamed ``all (tag)``.

    Raises
    ------
    InputError
        If the family is unknown.

    Examples
    --------
    >>> from ts2viz.dataset import load_dataset
    >>> from ts2viz.dataset.tags import seg_slices
    >>> {k: len(v) for k, v in seg_slices(load_dataset("ts2"), "partition").items()}
    {'all': 165, 'Synth': 111, 'Nat': 25, 'Real': 29}
    """
    tags = seg_tags(dataset) if tags is None else tags
    tags.check_family(family)
    out: dict[str, list[int]] = {"all": sorted(dataset.segs)} if include_all else {}
    for sid, f, t in tags.rows:
        if f == family:
            name = "all (tag)" if include_all and t == "all" else t
            out.setdefault(name, []).append(sid)
    return {k: sorted(set(v)) for k, v in out.items()}
