"""SEG datasets and their loaders: the bundled TS2 metadata, a local folder, a Hugging Face dataset id.

A dataset folder is laid out like the released TS2 dataset: ``metadata.csv`` with the columns
``id, target_prompt, file_name, image_source, rank`` (``rank`` is the node label) and the image files at
``file_name`` relative to the folder. Optional: a ``partition`` column (otherwise TS2's id ranges are
used), ``edges.csv`` with columns ``id, parent, child`` (otherwise every node of error level k
connects to every node of the next error level present), and ``nodes.csv`` with columns
``id, rank, errors``: the error(s) each node adds relative to its parent, in words, several separated by
``;`` (read into :attr:`ts2viz.seg.Node.errors`).
"""
from __future__ import annotations

import csv
import io
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from .errors import InputError, Problems, warn_input
from .hub import PROBE_TIMEOUT, endpoint, is_hub_id, offline, reachable, set_timeouts
from .paths import bundled_data_dir
from .seg import (SEG, build_seg, edge_problem, label_sort_key, missing_node_problem, no_root_problem, parse_label,
                  unreachable_problem)

REQUIRED_COLUMNS = ("id", "target_prompt", "file_name", "image_source", "rank")
#: columns of the optional ``nodes.csv`` (error descriptions of nodes)
NODES_COLUMNS = ("id", "rank", "errors")
#: separator of several error descriptions in one ``errors`` cell of ``nodes.csv``
ERROR_SEPARATOR = ";"
PARTITIONS = ("Synth", "Nat", "Real")
TS2_HF_ID = "saxon/T2IScoreScore"
#: :meth:`Dataset.fingerprint` of the TS2 release (165 SEGs, 2,840 images); tested against the bundle
TS2_FINGERPRINT = "629d02ee57209582"


#: the most SEG ids ``--seg`` may name when there is no dataset to resolve ranges against
MAX_SEG_IDS = 1_000_000


def parse_seg_ids(text: str | None, dataset: "Dataset | None" = None) -> list[int] | None:
    """SEG ids from text like ``'1,2,5-7'``; ``None`` for empty text (all SEGs).

    With ``dataset``, each part is checked against its SEG ids without expanding ranges (so
    ``0-99999999`` costs nothing): a single id must be one of the dataset's, a range ``a-b`` selects the
    dataset's SEGs with ``a <= id <= b`` and must lie within its id span. Without a dataset, ranges are
    expanded (at most :data:`MAX_SEG_IDS` ids).

    Parameters
    ----------
    text : str or None
        Ids and ranges separated by commas.
    dataset : Dataset, optional
        The dataset the ids must belong to.

    Returns
    -------
    list of int or None
        The ids in the order given, each once; None for empty text.

    Raises
    ------
    InputError
        One line starting ``--seg:``: a part that is neither an integer nor a range, a reversed range
        (``1-0``), an id the dataset lacks, a range outside its ids or selecting none of them, too many
        ids.

    Examples
    --------
    >>> from ts2viz.dataset import load_dataset, parse_seg_ids
    >>> parse_seg_ids("1,2,5-7")
    [1, 2, 5, 6, 7]
    >>> parse_seg_ids("160-1000", load_dataset("ts2"))
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: --seg: range 160-1000 goes beyond the SEG ids of dataset ts2 (0-164)
    """
    if not text or not text.strip():
        return None
    import bisect

    have = sorted(dataset.segs) if dataset is not None else None
    span = f"{have[0]}-{have[-1]}" if have else ""
    out: dict[int, None] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                cut = part.index("-", 1)
                a, b = int(part[:cut]), int(part[cut + 1:])
            else:
                a = b = int(part)
        except ValueError:
            raise InputError(f"--seg: {part!r} is not an id or a range like 3-7") from None
        if a > b:
            raise InputError(f"--seg: {part!r} is a reversed range (start above end); write {b}-{a}")
        if have is None:
            if len(out) + (b - a + 1) > MAX_SEG_IDS:
                raise InputError(f"--seg: {part!r} names more than {MAX_SEG_IDS:,} SEG ids")
            out.update(dict.fromkeys(range(a, b + 1)))
            continue
        if a == b and part.lstrip("-").isdigit():
            if a not in dataset.segs:
                raise InputError(f"--seg: no SEG with id {a} in dataset {dataset.name} (its ids: {span})")
            out[a] = None
            continue
        if a < have[0] or b > have[-1]:
            raise InputError(f"--seg: range {part} goes beyond the SEG ids of dataset {dataset.name} ({span})")
        picked = have[bisect.bisect_left(have, a):bisect.bisect_right(have, b)]
        if not picked:
            raise InputError(f"--seg: range {part} selects no SEG of dataset {dataset.name}")
        out.update(dict.fromkeys(picked))
    return list(out) or None


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


# -- loaders ---------------------------------------------------------------------------------------

def load_dataset(spec: str | os.PathLike = "ts2") -> Dataset:
    """Load a SEG dataset.

    Parameters
    ----------
    spec : str or os.PathLike, default "ts2"
        ``"ts2"`` (the bundled TS2 metadata, no image files), a local folder laid out like the released
        dataset (see the module docstring), or a Hugging Face dataset id such as
        ``saxon/T2IScoreScore``.

    Returns
    -------
    Dataset
        The SEGs and their image rows.

    Raises
    ------
    InputError
        For a path that is not a dataset folder, a spec that is none of the three, or bad files (one line
        naming the file, the row and what was expected).

    See Also
    --------
    validate_folder : every problem of a folder, not only the first.
    ts2viz.metametrics.compute : the meta-metrics of scores on a dataset.

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> ds = load_dataset("ts2")
    >>> len(ds), sum(seg.n_images for seg in ds)
    (165, 2840)
    >>> from collections import Counter
    >>> Counter(seg.partition for seg in ds)
    Counter({'Synth': 111, 'Real': 29, 'Nat': 25})
    """
    s = str(spec)
    if s == "ts2":
        return load_bundled()
    p = Path(s).expanduser()
    if p.exists():
        if not p.is_dir():
            raise InputError("expected a dataset folder containing metadata.csv", file=p)
        return load_folder(p)
    if is_hub_id(s):
        return load_hf(s)
    raise InputError("no such dataset: expected 'ts2', an existing folder with metadata.csv, "
                     "or a Hugging Face dataset id (owner/name)", file=s)


def load_bundled() -> Dataset:
    """The TS2 metadata shipped in ``data/ts2`` (165 SEGs, 2,840 images; images not included).

    Returns
    -------
    Dataset
        The dataset, with ``hf_id`` set to the TS2 release (images are fetched on demand).
    """
    path = bundled_data_dir() / "ts2" / "metadata.csv"
    ds = read_metadata(path, name="ts2", root=None)
    ds.hf_id = TS2_HF_ID
    return ds


@dataclass(frozen=True)
class FolderCaps:
    """How much of an untrusted dataset folder is read (:func:`load_folder`).

    Each CSV file is refused from its size, before it is read; the reading of a file stops at the first row
    past its row cap.

    Parameters
    ----------
    max_bytes : int
        Bytes of each of the folder's CSV files.
    max_images : int
        Rows of ``metadata.csv`` (images).
    max_edges : int
        Rows of ``edges.csv``.
    max_nodes : int
        Rows of ``nodes.csv``.
    max_segs : int
        SEGs.
    """

    max_bytes: int
    max_images: int
    max_edges: int
    max_nodes: int
    max_segs: int


def load_folder(folder: str | os.PathLike, name: str | None = None, *, caps: FolderCaps | None = None) -> Dataset:
    """Load a dataset folder: ``metadata.csv``, optional ``edges.csv`` and ``nodes.csv``.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder (see the module docstring for the files).
    name : str, optional
        The dataset's name (default: the folder's name).
    caps : FolderCaps, optional
        Bounds on what is read of a folder from an untrusted source: each file is refused from its size,
        and read no further than the first row past its row cap.

    Returns
    -------
    Dataset
        The dataset, rooted at ``folder``.

    Raises
    ------
    InputError
        For a folder without ``metadata.csv``, any bad row (the first one; :func:`validate_folder` lists
        them all), or a file past one of ``caps`` (one line naming the file, the number and the limit).
    """
    folder = Path(folder)
    meta = folder / "metadata.csv"
    if not meta.is_file():
        raise InputError("dataset folder has no metadata.csv", file=folder)
    edges = read_edges(folder / "edges.csv", caps=caps) if (folder / "edges.csv").is_file() else None
    nodes = read_node_errors(folder / "nodes.csv", caps=caps) if (folder / "nodes.csv").is_file() else None
    return read_metadata(meta, name=name or folder.name, root=folder, edges=edges, node_errors=nodes, caps=caps)


@dataclass
class ValidationReport:
    """Every problem of a dataset folder (:func:`validate_folder`).

    Attributes
    ----------
    folder : pathlib.Path
        The folder.
    errors : list of InputError
        The problems, each one line naming the file and row.
    warnings : list of str
        The warnings (one line each).
    n_segs : int
        SEGs that loaded without a problem.
    n_images : int
        Their image rows.
    missing_images : list of (str, int)
        Image files not under the folder: (file_name, metadata row).
    dropped : int
        Errors beyond the report's limit.
    """

    folder: Path
    errors: list[InputError]
    warnings: list[str]
    n_segs: int = 0             # SEGs that loaded without a problem
    n_images: int = 0           # their image rows
    missing_images: list[tuple[str, int]] = field(default_factory=list)   # (file_name, metadata row)
    dropped: int = 0            # errors beyond the report's limit

    @property
    def ok(self) -> bool:
        """Whether the folder has no error (warnings and missing images do not count)."""
        return not self.errors


def validate_folder(folder: str | os.PathLike, *, check_images: bool = True, limit: int = 1000) -> ValidationReport:
    r"""Check a dataset folder with every rule of :func:`load_folder` and report all problems.

    A bad row or SEG is set aside and checking goes on, so the report lists each independent problem; a
    problem that makes the rest of a file unreadable (not UTF-8, a missing column) ends that file's
    checks.

    Parameters
    ----------
    folder : str or os.PathLike
        The folder.
    check_images : bool, default True
        List image files that do not exist under the folder (not an error: a dataset can be
        meta-evaluated from scores without its images).
    limit : int, default 1000
        Keep at most this many errors.

    Returns
    -------
    ValidationReport
        Each problem one line naming the file, the row and what was expected.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz.dataset import validate_folder
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "metadata.csv").write_text("id,target_prompt,file_name,image_source,rank\n"
    ...                                          "0,a red cube,a.png,SD,0\n0,a red cube,b.png,SD,1\n"
    ...                                          "0,a red cube,c.png,SD,x\n")
    >>> report = validate_folder(folder)
    >>> report.ok, report.n_segs, len(report.missing_images)
    (False, 1, 2)
    >>> print(report.errors[0])
    /.../metadata.csv, row 4: malformed node label 'x': expected an error count followed by optional letters, e.g. 0, 1a, 2b
    """
    import warnings

    folder = Path(folder)
    meta = folder / "metadata.csv"
    problems = Problems(collect=True, limit=limit)
    report = ValidationReport(folder, problems.errors, [])
    if not meta.is_file():
        problems.report("dataset folder has no metadata.csv", file=folder)
        return report
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        edges = None
        if (folder / "edges.csv").is_file():
            try:
                edges = read_edges(folder / "edges.csv", problems)
            except InputError as e:      # the file as a whole cannot be read
                problems.errors.append(e)
        nodes = None
        if (folder / "nodes.csv").is_file():
            try:
                nodes = read_node_errors(folder / "nodes.csv", problems)
            except InputError as e:
                problems.errors.append(e)
        try:
            ds = read_metadata(meta, name=folder.name, root=folder, edges=edges, node_errors=nodes,
                               problems=problems)
        except InputError as e:
            problems.errors.append(e)
            ds = None
    report.warnings = [" ".join(str(w.message).split()) for w in caught]
    report.dropped = problems.dropped
    if ds is not None:
        report.n_segs, report.n_images = len(ds.segs), len(ds.rows)
        if check_images:
            rows = _metadata_lines(meta)
            report.missing_images = [(r.file_name, rows.get(r.file_name, 0)) for r in ds.rows
                                     if not (folder / r.file_name).is_file()]
    return report


def _metadata_lines(meta: Path) -> dict[str, int]:
    """file_name -> its line in metadata.csv (for messages about image files)."""
    out: dict[str, int] = {}
    for line, rec in csv_records(meta, read_text_utf8(meta), ("file_name",), problems=Problems(collect=True)):
        out.setdefault(rec["file_name"], line)
    return out


def load_hf(hf_id: str, *, revision: str | None = None, timeout: float = 10.0,
            cache_dir: str | os.PathLike | None = None, probe_timeout: float = PROBE_TIMEOUT) -> Dataset:
    """Load a SEG dataset from the Hugging Face hub (an imagefolder: ``metadata.csv`` + images).

    Only ``metadata.csv`` (and ``edges.csv``, ``nodes.csv`` if present) are downloaded here; images are
    fetched on demand by :func:`fetch_image`.

    Parameters
    ----------
    hf_id : str
        The dataset id (``owner/name``).
    revision : str, optional
        A branch, tag or commit.
    timeout : float, default 10.0
        Seconds per hub request (``HF_HUB_ETAG_TIMEOUT``, ``HF_HUB_DOWNLOAD_TIMEOUT`` unless set).
    cache_dir : str or os.PathLike, optional
        The hub cache to use.
    probe_timeout : float, default ts2viz.hub.PROBE_TIMEOUT
        Seconds the one probe of the hub waits (:func:`ts2viz.hub.reachable`).

    Returns
    -------
    Dataset
        The dataset, rooted in the hub cache, with ``hf_id`` set.

    Raises
    ------
    InputError
        Offline without the dataset in the local hub cache (at once in offline mode, :func:`ts2viz.hub.offline`; without
        it, after one probe that gives up after ``probe_timeout`` seconds, since the hub client's own
        retries on a network that drops or stalls connections take minutes), a missing repository, or
        bad files.
    """
    set_timeouts(timeout)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - huggingface_hub is a requirement
        raise InputError("huggingface_hub is not installed", file=hf_id) from e
    off = offline()
    unreachable = not off and not reachable(probe_timeout)
    try:
        local = snapshot_download(repo_id=hf_id, repo_type="dataset", revision=revision,
                                  allow_patterns=["metadata.csv", "edges.csv", "nodes.csv"],
                                  cache_dir=None if cache_dir is None else str(cache_dir),
                                  local_files_only=off or unreachable)
    except Exception as e:  # network errors, offline mode, missing repo: all one message
        if unreachable:
            raise InputError(f"cannot reach the Hugging Face hub ({endpoint()}) within "
                             f"{probe_timeout:g} s and the dataset is not in the local hub cache; pass a "
                             f"local dataset folder instead", file=hf_id) from None
        raise InputError(f"could not load Hugging Face dataset (offline or not found: "
                         f"{type(e).__name__}); pass a local dataset folder instead", file=hf_id) from None
    folder = Path(local)
    ds = load_folder(folder, name=hf_id)
    ds.hf_id = hf_id
    return ds


def cached_image(ds: Dataset, file_name: str) -> Path | None:
    """An already downloaded copy of a dataset image in the local hub cache (never touches the network).

    Parameters
    ----------
    ds : Dataset
        A dataset with ``hf_id``.
    file_name : str
        One of its images (other names are not looked up).

    Returns
    -------
    pathlib.Path or None
        The cached file, or None when there is no copy.
    """
    if ds.hf_id is None or not ds.has_image(file_name):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(ds.hf_id, file_name, repo_type="dataset")
        return Path(hit) if isinstance(hit, str) else None
    except Exception:
        return None


def images_available(ds: Dataset, file_names: Sequence[str], probe_timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether any of these images of ``ds`` can be had now.

    On disk, in the local hub cache, or from the dataset's hub repo (offline mode off and the hub
    answers :func:`ts2viz.hub.reachable`). Quick, for a check before a model is loaded: it stops at the first
    image found, downloads nothing and probes the hub at most once.

    Parameters
    ----------
    ds : Dataset
        The dataset.
    file_names : sequence of str
        The images (names the dataset lacks are ignored).
    probe_timeout : float, default ts2viz.hub.PROBE_TIMEOUT
        Seconds the probe of the hub waits.

    Returns
    -------
    bool
        True if at least one image can be had.
    """
    names = [f for f in file_names if ds.has_image(f)]
    if any(ds.image_path(f) is not None for f in names):
        return True
    if ds.hf_id is None or not names:
        return False
    if any(cached_image(ds, f) is not None for f in names):
        return True
    return not offline() and reachable(probe_timeout)


def fetch_image(ds: Dataset, file_name: str, *, timeout: float = 5.0) -> Path | None:
    """Local path of an image, downloading it from the dataset's hub repo if needed.

    Parameters
    ----------
    ds : Dataset
        The dataset.
    file_name : str
        One of its images.
    timeout : float, default 5.0
        Seconds per hub request.

    Returns
    -------
    pathlib.Path or None
        The file; ``None`` (never raises, never hangs past ``timeout``) when the image cannot be had.
        Offline (:func:`ts2viz.hub.offline`), only the local hub cache is looked at.
    """
    p = ds.image_path(file_name)
    if p is not None or ds.hf_id is None or not ds.has_image(file_name):
        return p
    if offline():
        return cached_image(ds, file_name)
    set_timeouts(timeout)
    try:
        from huggingface_hub import hf_hub_download
        return Path(hf_hub_download(ds.hf_id, file_name, repo_type="dataset"))
    except Exception:
        return None


# -- parsing ---------------------------------------------------------------------------------------

def read_text_utf8(path: str | os.PathLike, max_bytes: int | None = None) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped), or one clear :class:`InputError`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    max_bytes : int, optional
        A larger file is refused from its size, before a byte of it is read.

    Returns
    -------
    str
        Its text.

    Raises
    ------
    InputError
        If the file cannot be read, is larger than ``max_bytes``, or is not UTF-8 (Latin-1, UTF-16, a
        binary file): named with the line of its first bad byte.
    """
    if max_bytes is not None:
        try:
            size = Path(path).stat().st_size
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror or type(e).__name__}", file=path) from None
        if size > max_bytes:
            raise InputError(f"the file is {size:,} bytes; the limit is {max_bytes:,}", file=path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or type(e).__name__}", file=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[e.start]:02x}); save the file as UTF-8",
                         file=path, row=line) from None


def csv_records(path: str | os.PathLike, text: str, required: Sequence[str],
                optional: Sequence[str] = (), problems: Problems | None = None,
                max_rows: int | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, record)`` for each data row of CSV ``text``, every row checked against the header.

    Blank lines are skipped; cells are stripped.

    Parameters
    ----------
    path : str or os.PathLike
        The file (for messages).
    text : str
        Its text.
    required : sequence of str
        Columns that must be in the header.
    optional : sequence of str, default ()
        Columns read when present.
    problems : Problems, optional
        Where a row with more or fewer fields than the header is reported (default: raise); the row is
        then skipped.
    max_rows : int, optional
        An :class:`InputError` at the first data row past it (nothing more is read).

    Yields
    ------
    line : int
        The 1-based line of the row in the file (the header is line 1).
    record : dict[str, str]
        The required and present optional columns' cells.

    Raises
    ------
    InputError
        For an empty file, a missing required column, a column named twice (nothing else can be read
        then), a header or row the CSV reader cannot read (a cell over its field limit, a stray NUL), a
        row past ``max_rows``, and a bad row when ``problems`` raises.
    """
    problems = Problems() if problems is None else problems
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as e:
        raise InputError(f"the header cannot be read as CSV ({_csv_reason(e)})", file=path, row=1) from None
    if not header or not any(h.strip() for h in header):
        raise InputError("empty file: expected a header with columns " + ", ".join(required), file=path)
    cols = [h.strip() for h in header]
    seen: dict[str, int] = {}
    for j, c in enumerate(cols):
        if c in seen:
            raise InputError(f"column {c!r} appears twice in the header (columns {seen[c] + 1} and {j + 1})",
                             file=path, row=1)
        seen[c] = j
    missing = [c for c in required if c not in seen]
    if missing:
        raise InputError(f"missing column {missing[0]!r} (expected {', '.join(required)})", file=path)
    keep = [c for c in (*required, *optional) if c in seen]
    prev = reader.line_num                      # physical lines read so far (a cell may span lines)
    n = 0
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(f"the row cannot be read as CSV ({_csv_reason(e)})", file=path, row=prev + 1) from None
        start, prev = prev + 1, reader.line_num
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        n += 1
        if max_rows is not None and n > max_rows:
            raise InputError(f"more than {max_rows:,} rows; the limit is {max_rows:,}", file=path, row=start)
        if len(fields) != len(cols):
            problems.report(f"{len(fields)} fields, but the header has {len(cols)} ({', '.join(cols)})",
                            file=path, row=start)
            continue
        yield start, {c: fields[seen[c]].strip() for c in keep}


def _csv_reason(e: Exception) -> str:
    """The CSV reader's reason, without any of the file's text (its messages quote none, but cut anyway)."""
    return " ".join(str(e).split())[:80]


@dataclass
class EdgeList:
    """The rows of an ``edges.csv``.

    Attributes
    ----------
    path : pathlib.Path
        The file (for messages).
    by_seg : dict[int, list of (str, str, int)]
        Per SEG id, ``(parent, child, line)`` triples.
    """

    path: Path
    by_seg: dict[int, list[tuple[str, str, int]]]


def read_edges(path: Path, problems: Problems | None = None, *, caps: FolderCaps | None = None) -> EdgeList:
    """The rows of an ``edges.csv``, each checked on its own.

    An integer id; parent and child well-formed labels with the parent at a lower error level. Whether
    the SEG and nodes exist is checked by :func:`read_metadata`.

    Parameters
    ----------
    path : pathlib.Path
        The file (``id, parent, child``).
    problems : Problems, optional
        Where a bad row is reported (default: raise); it is then left out.

    caps : FolderCaps, optional
        Bounds: the file's bytes (``max_bytes``) and rows (``max_edges``).

    Returns
    -------
    EdgeList
        The good rows.

    Raises
    ------
    InputError
        If the file cannot be read as CSV with those columns, is past ``caps``, or for a bad row when
        ``problems`` raises.
    """
    problems = Problems() if problems is None else problems
    out: dict[int, list[tuple[str, str, int]]] = {}
    text = read_text_utf8(path, caps.max_bytes if caps else None)
    for line, rec in csv_records(path, text, ("id", "parent", "child"), problems=problems,
                                 max_rows=caps.max_edges if caps else None):
        try:
            sid = int(rec["id"])
        except ValueError:
            problems.report(f"id {rec['id']!r} is not an integer", file=path, row=line)
            continue
        a, b = rec["parent"], rec["child"]
        try:
            problem = edge_problem(a, b)
        except ValueError as e:
            problem = str(e)
        else:
            problem = problem and f"SEG {sid}: {problem}"
        if problem:
            problems.report(problem, file=path, row=line)
            continue
        out.setdefault(sid, []).append((a, b, line))
    return EdgeList(path, out)


def parse_errors(cell: str) -> tuple[str, ...]:
    """The error descriptions in an ``errors`` cell of ``nodes.csv``.

    Parameters
    ----------
    cell : str
        The cell: descriptions separated by ``;``.

    Returns
    -------
    tuple of str
        The descriptions, blanks collapsed, empty parts dropped.

    Examples
    --------
    >>> from ts2viz.dataset import parse_errors
    >>> parse_errors("no teddy bear;  lights   off ;")
    ('no teddy bear', 'lights off')
    """
    return tuple(" ".join(e.split()) for e in cell.split(ERROR_SEPARATOR) if e.strip())


@dataclass
class NodeErrorList:
    """The rows of a ``nodes.csv``.

    Attributes
    ----------
    path : pathlib.Path
        The file (for messages).
    by_seg : dict[int, dict[str, (tuple of str, int)]]
        Per SEG id, node label -> (error descriptions, line).
    """

    path: Path
    by_seg: dict[int, dict[str, tuple[tuple[str, ...], int]]]


def read_node_errors(path: Path, problems: Problems | None = None, *, caps: FolderCaps | None = None) -> NodeErrorList:
    """The rows of a ``nodes.csv`` (``id, rank, errors``), each checked on its own.

    An integer id, a well-formed node label, each node once. Whether the SEG and node exist is checked
    by :func:`read_metadata`.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    problems : Problems, optional
        Where a bad row is reported (default: raise); it is then left out.

    caps : FolderCaps, optional
        Bounds: the file's bytes (``max_bytes``) and rows (``max_nodes``).

    Returns
    -------
    NodeErrorList
        The good rows.

    Raises
    ------
    InputError
        If the file cannot be read as CSV with those columns, is past ``caps``, or for a bad row when
        ``problems`` raises.
    """
    problems = Problems() if problems is None else problems
    out: dict[int, dict[str, tuple[tuple[str, ...], int]]] = {}
    text = read_text_utf8(path, caps.max_bytes if caps else None)
    for line, rec in csv_records(path, text, NODES_COLUMNS, problems=problems,
                                 max_rows=caps.max_nodes if caps else None):
        try:
            sid = int(rec["id"])
        except ValueError:
            problems.report(f"id {rec['id']!r} is not an integer", file=path, row=line)
            continue
        label = rec["rank"]
        try:
            parse_label(label)
        except ValueError as e:
            problems.report(str(e), file=path, row=line)
            continue
        seen = out.setdefault(sid, {})
        if label in seen:
            problems.report(f"node {label} of SEG {sid} is listed twice (first at row {seen[label][1]})",
                            file=path, row=line)
            continue
        seen[label] = (parse_errors(rec["errors"]), line)
    return NodeErrorList(path, out)


def canonical_partition(value: str) -> str:
    """The canonical spelling of a partition name: TS2's (``synth`` -> ``Synth``), else ``value`` as is.

    Parameters
    ----------
    value : str
        A partition name.

    Returns
    -------
    str
        The name.
    """
    for p in PARTITIONS:
        if value.lower() == p.lower():
            return p
    return value


def _partition(value: str, sid: int, path: Path, line: int, unknown: dict[str, tuple[int, int]]) -> str:
    """The canonical spelling of a partition cell (``synth`` -> ``Synth``).

    An unknown value is kept as a partition of its own and reported once (``unknown`` collects value ->
    (SEG, line)).
    """
    value = canonical_partition(value)
    if value not in PARTITIONS:
        unknown.setdefault(value, (sid, line))
    return value


def read_metadata(path: Path, *, name: str, root: Path | None, edges: EdgeList | None = None,
                  problems: Problems | None = None, node_errors: NodeErrorList | None = None,
                  caps: FolderCaps | None = None) -> Dataset:
    """Parse a TS2-style ``metadata.csv`` into a :class:`Dataset`, validating every row.

    A ``partition`` value other than Synth, Nat, Real (any case) is kept as a partition of its own;
    beside SEGs in TS2's partitions it is also reported with an :class:`~ts2viz.errors.InputWarning` (a
    likely misspelling), alone it is the user's choice. With explicit edges, every node must be reachable
    from an error-0 node. A SEG whose rows give several prompts takes the most common one (the TS2
    release has one such SEG, 3).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    name : str
        The dataset's name.
    root : pathlib.Path or None
        The folder the image file names are relative to.
    edges : EdgeList, optional
        The rows of the dataset's ``edges.csv``: each must name a SEG and nodes that exist.
    problems : Problems, optional
        Receives every problem (default: raise the first). When it collects them instead
        (:func:`validate_folder`), a bad row or SEG is left out and reading goes on, so that each later
        problem is found too; the returned dataset then holds only the good SEGs.
    node_errors : NodeErrorList, optional
        The rows of ``nodes.csv``: each must name a SEG and a node that exist.
    caps : FolderCaps, optional
        Bounds: the file's bytes (``max_bytes``), its rows (``max_images``) and its SEGs (``max_segs``).

    Returns
    -------
    Dataset
        The dataset, rows in SEG order.

    Raises
    ------
    InputError
        Naming the file (``metadata.csv``, ``edges.csv`` or ``nodes.csv``) and the row (1-based file
        line; the header is line 1): a bad id, an empty or repeated file name, a malformed label, a SEG in
        two partitions, no rows, a SEG without an error-0 node, an edge or node entry naming what does not
        exist, a node no walk reaches, a file past ``caps``.

    Warns
    -----
    InputWarning
        For a partition that is likely misspelt, and a SEG with several prompts (other than TS2's).
    """
    problems = Problems() if problems is None else problems
    path = Path(path)
    text = read_text_utf8(path, caps.max_bytes if caps else None)
    rows: list[ImageRow] = []
    first_row: dict[int, int] = {}
    seen: dict[str, int] = {}
    seg_partition: dict[int, tuple[str, int]] = {}
    unknown: dict[str, tuple[int, int]] = {}
    for i, rec in csv_records(path, text, REQUIRED_COLUMNS, ("partition",), problems=problems,
                              max_rows=caps.max_images if caps else None):
        try:
            sid = int(rec["id"])
        except ValueError:
            problems.report(f"id {rec['id'][:40]!r} is not an integer", file=path, row=i)
            continue
        if caps is not None and sid not in seg_partition and len(seg_partition) >= caps.max_segs:
            raise InputError(f"more than {caps.max_segs:,} SEGs; the limit is {caps.max_segs:,}", file=path, row=i)
        fn = rec["file_name"]
        if not fn:
            problems.report("empty file_name", file=path, row=i)
            continue
        if fn in seen:
            problems.report(f"duplicate file_name {fn!r} (first at row {seen[fn]})", file=path, row=i)
            continue
        seen[fn] = i
        label = rec["rank"]
        try:
            level = parse_label(label)
        except ValueError as e:
            problems.report(str(e), file=path, row=i)
            continue
        part = rec.get("partition", "")
        part = _partition(part, sid, path, i, unknown) if part else ts2_partition(sid)
        if sid in seg_partition and seg_partition[sid][0] != part:
            problems.report(f"SEG {sid} is in partition {part!r} here but in {seg_partition[sid][0]!r} at row "
                            f"{seg_partition[sid][1]}: a SEG belongs to one partition", file=path, row=i)
            continue
        seg_partition.setdefault(sid, (part, i))
        first_row.setdefault(sid, i)
        rows.append(ImageRow(sid, fn, rec["target_prompt"], rec["image_source"], label, level, part))
    if not rows and not problems:
        raise InputError("no image rows below the header", file=path)
    # A partition of the user's own ("Custom", "Medical") is a choice when no SEG uses TS2's names; beside
    # TS2's names it is more likely a misspelling ("Synthetic" for "Synth"), so it is reported then.
    mixed = any(p in PARTITIONS for p, _ in seg_partition.values())
    for value, (sid, line) in (unknown.items() if mixed else ()):
        n = sum(1 for p, _ in seg_partition.values() if p == value)
        warn_input(f"partition {value!r} (SEG {sid}) is not one of {', '.join(PARTITIONS)}; its {n} SEG(s) "
                   f"form a partition of their own", file=path, row=line)

    by_seg: dict[int, list[ImageRow]] = {}
    for r in rows:
        by_seg.setdefault(r.seg_id, []).append(r)
    bad_segs: set[int] = set()
    if edges is not None:
        for sid, items in edges.by_seg.items():
            if sid not in by_seg:
                problems.report(f"edge {items[0][0]}->{items[0][1]} is for SEG {sid}, which {path.name} does "
                                f"not have", file=edges.path, row=items[0][2])
                continue
            labels = {r.label for r in by_seg[sid]}
            for a, b, line in items:
                problem = missing_node_problem(sid, a, b, labels)
                if problem:
                    problems.report(problem, file=edges.path, row=line)
                    bad_segs.add(sid)
        # after every row's own checks: a node no walk reaches (the SEG's edges as a whole)
        for sid, items in edges.by_seg.items():
            if sid in by_seg and sid not in bad_segs:
                problem = unreachable_problem(sid, {r.label for r in by_seg[sid]}, [(a, b) for a, b, _ in items])
                if problem:
                    problems.report(problem, file=edges.path, row=items[0][2])
                    bad_segs.add(sid)
    errors_of: dict[int, dict[str, tuple[str, ...]]] = {}
    if node_errors is not None:
        for sid, entries in node_errors.by_seg.items():
            for label, (errs, line) in entries.items():
                if sid not in by_seg:
                    problems.report(f"errors of node {label} are for SEG {sid}, which {path.name} does not have",
                                    file=node_errors.path, row=line)
                    break
                labels = {r.label for r in by_seg[sid]}
                if label not in labels:
                    problems.report(f"SEG {sid} has no node {label!r} (nodes: "
                                    f"{', '.join(sorted(labels, key=label_sort_key))})",
                                    file=node_errors.path, row=line)
                    continue
                errors_of.setdefault(sid, {})[label] = errs
    segs: dict[int, SEG] = {}
    for sid in sorted(by_seg):
        if sid in bad_segs:
            continue
        members = by_seg[sid]
        prompts = Counter(r.prompt for r in members)
        prompt = prompts.most_common(1)[0][0]
        if len(prompts) > 1 and name != "ts2":
            # The TS2 release itself has one such row (SEG 3); the SEG's prompt is the majority one.
            warn_input(f"SEG {sid} has {len(prompts)} different prompts; using {prompt!r}", file=path,
                       row=first_row[sid])
        problem = no_root_problem(sid, (r.label for r in members))
        if problem:
            problems.report(problem, file=path, row=first_row[sid])
            continue
        # A SEG without rows in edges.csv keeps the implied edges.
        seg_edges = None
        if edges is not None and sid in edges.by_seg:
            seg_edges = [(a, b) for a, b, _ in edges.by_seg[sid]]
        try:
            segs[sid] = build_seg(sid, prompt, members[0].partition,
                                  ((r.file_name, r.image_source, r.label) for r in members),
                                  edges=seg_edges, node_errors=errors_of.get(sid))
        except ValueError as e:
            problems.report(str(e), file=path, row=first_row[sid])
            continue
    # Keep rows in SEG order so that per-SEG slices are contiguous (and only rows of good SEGs).
    rows = [r for r in rows if r.seg_id in segs]
    rows.sort(key=lambda r: r.seg_id)
    return Dataset(name=name, segs=segs, rows=rows, root=root)
