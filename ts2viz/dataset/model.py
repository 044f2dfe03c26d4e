"""The dataset and its image rows: SEGs by id, each image's file, source and node, the TS2 release's marks."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..errors import InputError
from ..seg import SEG


PARTITIONS = ("Synth", "Nat", "Real")


TS2_HF_ID = "saxon/T2IScoreScore"


#: :meth:`Dataset.fingerprint` of the TS2 release (165 SEGs, 2,840 images); tested against the bundle
TS2_FINGERPRINT = "629d02ee57209582"


def ts2_partition(seg_id: int) -> str:
    """TS2's partitions by SEG id: 0-110 Synth, 111-135 Nat, 136-164 Real.

    Parameters
    ----------
    seg_id : int
        A TS2 SEG id.

    Returns
    -------
    str
        ``"Synth"``, ``"Nat"`` or ``"Real"``.
    """
    if seg_id <= 110:
        return "Synth"
    if seg_id <= 135:
        return "Nat"
    return "Real"


@dataclass
class ImageRow:
    """One image's row of a dataset's metadata.

    Attributes
    ----------
    seg_id : int
        Its SEG.
    file_name : str
        Its file name (relative to the dataset's root).
    prompt : str
        The SEG's prompt as the row gives it.
    image_source : str
        The generator or source.
    label : str
        Its node label.
    level : int
        Its node's error count.
    partition : str
        Its SEG's partition.
    """

    seg_id: int
    file_name: str
    prompt: str
    image_source: str
    label: str
    level: int
    partition: str


@dataclass
class Dataset:
    """A set of SEGs plus where their image files live.

    Iterating over a dataset gives its SEGs; ``len`` counts them, ``dataset[seg_id]`` and
    ``seg_id in dataset`` look one up.

    Attributes
    ----------
    name : str
        The dataset's name (``ts2``, the folder's name, the hub id).
    segs : dict[int, SEG]
        The SEGs by id, in id order.
    rows : list of ImageRow
        One row per image, in SEG order.
    root : pathlib.Path or None
        The folder the ``file_name`` paths are relative to (``None`` when the images are not on disk, as
        for the bundled TS2 metadata).
    hf_id : str or None
        Set when images can be fetched on demand from a Hugging Face dataset.

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> ds = load_dataset("ts2")
    >>> len(ds), len(ds.rows), ds.is_ts2
    (165, 2840, True)
    >>> ds[0].prompt, ds[0].partition, ds[0].labels
    ('A Christmas tree with lights and teddy bear', 'Synth', ('0', '1a', '1b', '2'))
    """

    name: str
    segs: dict[int, SEG]
    rows: list[ImageRow]
    root: Path | None = None
    hf_id: str | None = None
    _row_of: dict[str, int] = field(default_factory=dict, repr=False)
    _fingerprint: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Index the rows by file name."""
        self._row_of = {r.file_name: i for i, r in enumerate(self.rows)}

    def __len__(self) -> int:
        """The number of SEGs."""
        return len(self.segs)

    def __iter__(self) -> Iterator[SEG]:
        """The SEGs, in id order."""
        return iter(self.segs.values())

    def __getitem__(self, seg_id: int) -> SEG:
        """The SEG with this id (``KeyError`` if there is none)."""
        return self.segs[seg_id]

    @property
    def file_names(self) -> list[str]:
        """The image file names, in row order."""
        return [r.file_name for r in self.rows]

    def row(self, file_name: str) -> ImageRow:
        """The metadata row of an image.

        Parameters
        ----------
        file_name : str
            An image of the dataset.

        Returns
        -------
        ImageRow
            Its row.

        Raises
        ------
        KeyError
            For a name the dataset does not have.
        """
        return self.rows[self._row_of[file_name]]

    def __contains__(self, seg_id: object) -> bool:
        """Whether the dataset has a SEG with this id (like ``len``, iteration and ``[]``: by SEG)."""
        return seg_id in self.segs

    def has_image(self, file_name: object) -> bool:
        """Whether ``file_name`` is one of the dataset's images.

        Parameters
        ----------
        file_name : object
            A file name.

        Returns
        -------
        bool
            True if a row has it.
        """
        return file_name in self._row_of

    @property
    def is_ts2(self) -> bool:
        """Whether this is the TS2 dataset (its 165 SEGs, whichever way it was loaded).

        Same SEG ids, image file names and node labels as the bundled TS2 metadata
        (:data:`TS2_FINGERPRINT`).
        """
        # the counts first: a dataset of another size is not TS2, and is not hashed for it
        return len(self.segs) == 165 and len(self.rows) == 2840 and self.fingerprint() == TS2_FINGERPRINT

    def fingerprint(self) -> str:
        """A short hash of the dataset's structure: SEG ids, file names and node labels (not the paths).

        Computed once per list of rows (``is_ts2`` asks for it on every leaderboard and question view).

        Returns
        -------
        str
            16 hexadecimal digits of a SHA-1.
        """
        import hashlib

        # a dataset's rows are not edited after loading: the same list with the same length, the same hash
        key = (id(self.rows), len(self.rows))
        if self._fingerprint is not None and self._fingerprint[0] == key:
            return self._fingerprint[1]
        h = hashlib.sha1()
        for r in sorted(self.rows, key=lambda r: (r.seg_id, r.file_name)):
            h.update(f"{r.seg_id}|{r.file_name}|{r.label}\n".encode())
        fp = h.hexdigest()[:16]
        self._fingerprint = (key, fp)
        return fp

    def image_path(self, file_name: str) -> Path | None:
        """Local path of an image, or ``None`` if it is not on disk.

        Only names the dataset knows are resolved, and only inside ``root``: nothing else on disk can be
        reached through a file name.

        Parameters
        ----------
        file_name : str
            An image of the dataset.

        Returns
        -------
        pathlib.Path or None
            The resolved path of an existing file inside ``root``.
        """
        if self.root is None or not self.has_image(file_name):
            return None
        root = self.root.resolve()
        p = (root / file_name).resolve()
        if root not in p.parents or not p.is_file():
            return None
        return p

    def images_frame(self):
        """The images as a pandas DataFrame (one row per image, dataset order).

        Returns
        -------
        pandas.DataFrame
            The fields of :class:`ImageRow` as columns.
        """
        import pandas as pd

        return pd.DataFrame([r.__dict__ for r in self.rows])

    def subset(self, seg_ids) -> "Dataset":
        """A dataset of some of these SEGs (same name, root and hub id).

        Parameters
        ----------
        seg_ids : iterable of int
            The SEGs to keep.

        Returns
        -------
        Dataset
            The SEGs and their rows, in this dataset's order.

        Raises
        ------
        InputError
            If a SEG id is not in the dataset.

        Examples
        --------
        >>> from ts2viz import load_dataset
        >>> sub = load_dataset("ts2").subset([0, 111])
        >>> len(sub), [seg.partition for seg in sub], sub.is_ts2
        (2, ['Synth', 'Nat'], False)
        """
        keep = [int(s) for s in seg_ids]
        missing = [s for s in keep if s not in self.segs]
        if missing:
            raise InputError(f"no SEG with id {missing[0]} in dataset {self.name}")
        ks = set(keep)
        return Dataset(self.name, {s: self.segs[s] for s in self.segs if s in ks},
                       [r for r in self.rows if r.seg_id in ks], self.root, self.hf_id)
