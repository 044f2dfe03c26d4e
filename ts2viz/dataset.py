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
#: seconds :func:`hub_reachable` waits for the hub to answer before a hub dataset id is treated as offline
HUB_PROBE_TIMEOUT = 3.0
#: :meth:`Dataset.fingerprint` of the TS2 release (165 SEGs, 2,840 images); tested against the bundle
TS2_FINGERPRINT = "629d02ee57209582"


#: the most SEG ids ``--seg`` may name when there is no dataset to resolve ranges against
MAX_SEG_IDS = 1_000_000


def parse_seg_ids(text: str | None, dataset: "Dataset | None" = None) -> list[int] | None:
    """SEG ids from text like ``'1,2,5-7'``; ``None`` for empty text (all SEGs).

    With ``dataset``, each part is checked against its SEG ids without expanding ranges (so
    ``0-99999999`` costs nothing): a single id must be one of the dataset's, a range ``a-b`` selects the
    dataset's SEGs with ``a <= id <= b`` and must lie within its id span. Without a dataset, ranges are
    expanded (at most :data:`MAX_SEG_IDS` ids). Ids come back in the order given, each once.

    Raises :class:`InputError` (one line, starting ``--seg:``) for a part that is neither an integer nor
    a range, a reversed range (``1-0``), an id the dataset lacks, or a range outside its ids.
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
    """TS2's partitions by SEG id: 0-110 Synth, 111-135 Nat, 136-164 Real."""
    if seg_id <= 110:
        return "Synth"
    if seg_id <= 135:
        return "Nat"
    return "Real"


@dataclass
class ImageRow:
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

    ``root`` is the folder the ``file_name`` paths are relative to (``None`` when the images are not
    on disk, as for the bundled TS2 metadata). ``hf_id`` is set when images can be fetched on demand
    from a Hugging Face dataset.
    """

    name: str
    segs: dict[int, SEG]
    rows: list[ImageRow]
    root: Path | None = None
    hf_id: str | None = None
    _row_of: dict[str, int] = field(default_factory=dict, repr=False)
    _fingerprint: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._row_of = {r.file_name: i for i, r in enumerate(self.rows)}

    def __len__(self) -> int:
        return len(self.segs)

    def __iter__(self) -> Iterator[SEG]:
        return iter(self.segs.values())

    def __getitem__(self, seg_id: int) -> SEG:
        return self.segs[seg_id]

    @property
    def file_names(self) -> list[str]:
        return [r.file_name for r in self.rows]

    def row(self, file_name: str) -> ImageRow:
        """The metadata row of an image (``KeyError`` for a name the dataset does not have)."""
        return self.rows[self._row_of[file_name]]

    def __contains__(self, seg_id: object) -> bool:
        """Whether the dataset has a SEG with this id (like ``len``, iteration and ``[]``: by SEG)."""
        return seg_id in self.segs

    def has_image(self, file_name: object) -> bool:
        """Whether ``file_name`` is one of the dataset's images."""
        return file_name in self._row_of

    @property
    def is_ts2(self) -> bool:
        """Whether this is the TS2 dataset (its 165 SEGs, whichever way it was loaded): same SEG ids,
        image file names and node labels as the bundled TS2 metadata."""
        # the counts first: a dataset of another size is not TS2, and is not hashed for it
        return len(self.segs) == 165 and len(self.rows) == 2840 and self.fingerprint() == TS2_FINGERPRINT

    def fingerprint(self) -> str:
        """A short hash of the dataset's structure: SEG ids, file names and node labels (not the paths).

        Computed once per list of rows (``is_ts2`` asks for it on every leaderboard and question view)."""
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

        Only names the dataset knows are resolved, and only inside ``root``: nothing else on disk
        can be reached through a file name.
        """
        if self.root is None or not self.has_image(file_name):
            return None
        root = self.root.resolve()
        p = (root / file_name).resolve()
        if root not in p.parents or not p.is_file():
            return None
        return p

    def images_frame(self):
        """The images as a pandas DataFrame (one row per image, dataset order)."""
        import pandas as pd

        return pd.DataFrame([r.__dict__ for r in self.rows])

    def subset(self, seg_ids) -> "Dataset":
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

    ``spec`` is ``"ts2"`` (the bundled TS2 metadata, no image files), a local folder laid out like the
    released dataset, or a Hugging Face dataset id such as ``saxon/T2IScoreScore``.
    """
    s = str(spec)
    if s == "ts2":
        return load_bundled()
    p = Path(s).expanduser()
    if p.exists():
        if not p.is_dir():
            raise InputError("expected a dataset folder containing metadata.csv", file=p)
        return load_folder(p)
    if _looks_like_hub_id(s):
        return load_hf(s)
    raise InputError("no such dataset: expected 'ts2', an existing folder with metadata.csv, "
                     "or a Hugging Face dataset id (owner/name)", file=s)


def _looks_like_hub_id(s: str) -> bool:
    parts = s.split("/")
    return len(parts) == 2 and all(parts) and not s.startswith((".", "/", "~"))


def load_bundled() -> Dataset:
    """The TS2 metadata shipped in ``data/ts2`` (165 SEGs, 2,840 images; images not included)."""
    path = bundled_data_dir() / "ts2" / "metadata.csv"
    ds = read_metadata(path, name="ts2", root=None)
    ds.hf_id = TS2_HF_ID
    return ds


@dataclass(frozen=True)
class FolderCaps:
    """How much of an untrusted dataset folder is read: bytes of each of its CSV files (refused from
    the file's size, before it is read), rows of ``metadata.csv`` (images), ``edges.csv`` and
    ``nodes.csv`` (the reading stops at the first row past the cap), and SEGs."""

    max_bytes: int
    max_images: int
    max_edges: int
    max_nodes: int
    max_segs: int


def load_folder(folder: str | os.PathLike, name: str | None = None, *, caps: FolderCaps | None = None) -> Dataset:
    """Load a dataset folder (``metadata.csv``, optional ``edges.csv`` and ``nodes.csv``; see the module
    docstring). ``caps`` bound what is read of a folder from an untrusted source (:class:`FolderCaps`):
    each file is refused from its size, and read no further than the first row past its row cap; a
    one-line :class:`InputError` names the file, the number and the limit."""
    folder = Path(folder)
    meta = folder / "metadata.csv"
    if not meta.is_file():
        raise InputError("dataset folder has no metadata.csv", file=folder)
    edges = read_edges(folder / "edges.csv", caps=caps) if (folder / "edges.csv").is_file() else None
    nodes = read_node_errors(folder / "nodes.csv", caps=caps) if (folder / "nodes.csv").is_file() else None
    return read_metadata(meta, name=name or folder.name, root=folder, edges=edges, node_errors=nodes, caps=caps)


@dataclass
class ValidationReport:
    """Every problem of a dataset folder (:func:`validate_folder`)."""

    folder: Path
    errors: list[InputError]
    warnings: list[str]
    n_segs: int = 0             # SEGs that loaded without a problem
    n_images: int = 0           # their image rows
    missing_images: list[tuple[str, int]] = field(default_factory=list)   # (file_name, metadata row)
    dropped: int = 0            # errors beyond the report's limit

    @property
    def ok(self) -> bool:
        return not self.errors


def validate_folder(folder: str | os.PathLike, *, check_images: bool = True, limit: int = 1000) -> ValidationReport:
    """Check a dataset folder with every rule of :func:`load_folder` and report all problems, not only
    the first: each one line naming the file, the row and what was expected (at most ``limit``).

    A bad row or SEG is set aside and checking goes on, so the report lists each independent problem;
    a problem that makes the rest of a file unreadable (not UTF-8, a missing column) ends that file's
    checks. With ``check_images``, image files that do not exist under the folder are listed
    (not an error: a dataset can be meta-evaluated from scores without its images).
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
            cache_dir: str | os.PathLike | None = None, probe_timeout: float = HUB_PROBE_TIMEOUT) -> Dataset:
    """Load a SEG dataset from the Hugging Face hub (an imagefolder: ``metadata.csv`` + images).

    Only ``metadata.csv`` (and ``edges.csv``, ``nodes.csv`` if present) are downloaded here; images are fetched on
    demand by :func:`fetch_image`. Offline this uses the local hub cache if it holds the dataset and
    otherwise fails fast with an :class:`InputError`: with ``HF_HUB_OFFLINE=1`` at once; without it,
    after one probe of the hub that gives up after ``probe_timeout`` seconds (the hub client's own
    retries on a network that drops or stalls connections take minutes).
    """
    _hub_timeouts(timeout)
    try:
        import huggingface_hub.constants as hub_constants
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - huggingface_hub is a requirement
        raise InputError("huggingface_hub is not installed", file=hf_id) from e
    unreachable = not hub_constants.HF_HUB_OFFLINE and not hub_reachable(probe_timeout)
    try:
        local = snapshot_download(repo_id=hf_id, repo_type="dataset", revision=revision,
                                  allow_patterns=["metadata.csv", "edges.csv", "nodes.csv"],
                                  cache_dir=None if cache_dir is None else str(cache_dir),
                                  local_files_only=unreachable)
    except Exception as e:  # network errors, offline mode, missing repo: all one message
        if unreachable:
            raise InputError(f"cannot reach the Hugging Face hub ({hub_constants.ENDPOINT}) within "
                             f"{probe_timeout:g} s and the dataset is not in the local hub cache; pass a "
                             f"local dataset folder instead", file=hf_id) from None
        raise InputError(f"could not load Hugging Face dataset (offline or not found: "
                         f"{type(e).__name__}); pass a local dataset folder instead", file=hf_id) from None
    folder = Path(local)
    ds = load_folder(folder, name=hf_id)
    ds.hf_id = hf_id
    return ds


def hub_reachable(timeout: float = HUB_PROBE_TIMEOUT, endpoint: str | None = None) -> bool:
    """Whether the Hugging Face hub (``endpoint``, default ``HF_ENDPOINT``) answers an HTTP request within
    ``timeout`` seconds.

    Any HTTP answer counts (even an error status): the point is to tell a working network from one that
    fails or stalls, before the hub client starts its long retries.
    """
    import urllib.error
    import urllib.request

    if endpoint is None:
        try:
            import huggingface_hub.constants as hub_constants

            endpoint = hub_constants.ENDPOINT
        except ImportError:  # pragma: no cover - huggingface_hub is a requirement
            endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    try:
        with urllib.request.urlopen(urllib.request.Request(endpoint.rstrip("/") + "/",
                                                           method="HEAD"), timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):   # URLError, timeouts, refused or reset connections, a bad endpoint URL
        return False


def _hub_timeouts(timeout: float) -> None:
    # huggingface_hub reads these per request; setdefault keeps a user's own settings.
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(int(timeout)))
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(int(timeout)))


def cached_image(ds: Dataset, file_name: str) -> Path | None:
    """An already downloaded copy of a dataset image in the local hub cache (never touches the network).

    Only names the dataset knows are looked up; ``None`` when there is no copy.
    """
    if ds.hf_id is None or not ds.has_image(file_name):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(ds.hf_id, file_name, repo_type="dataset")
        return Path(hit) if isinstance(hit, str) else None
    except Exception:
        return None


def images_available(ds: Dataset, file_names: Sequence[str], probe_timeout: float = HUB_PROBE_TIMEOUT) -> bool:
    """Whether any of these images of ``ds`` can be had now: on disk, in the local hub cache, or from the
    dataset's hub repo (``HF_HUB_OFFLINE`` unset and the hub answers :func:`hub_reachable`).

    Quick, for a check before a model is loaded: it stops at the first image found, downloads nothing and
    probes the hub at most once (``probe_timeout`` seconds).
    """
    names = [f for f in file_names if ds.has_image(f)]
    if any(ds.image_path(f) is not None for f in names):
        return True
    if ds.hf_id is None or not names:
        return False
    if any(cached_image(ds, f) is not None for f in names):
        return True
    import huggingface_hub.constants as hub_constants

    return not hub_constants.HF_HUB_OFFLINE and hub_reachable(probe_timeout)


def fetch_image(ds: Dataset, file_name: str, *, timeout: float = 5.0) -> Path | None:
    """Local path of an image, downloading it from the dataset's hub repo if needed.

    Returns ``None`` (never raises, never hangs past ``timeout``) when the image cannot be had.
    """
    p = ds.image_path(file_name)
    if p is not None or ds.hf_id is None or not ds.has_image(file_name):
        return p
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("", "0", "false", "False"):
        return cached_image(ds, file_name)
    _hub_timeouts(timeout)
    try:
        from huggingface_hub import hf_hub_download
        return Path(hf_hub_download(ds.hf_id, file_name, repo_type="dataset"))
    except Exception:
        return None


# -- parsing ---------------------------------------------------------------------------------------

def read_text_utf8(path: str | os.PathLike, max_bytes: int | None = None) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped), or one clear :class:`InputError`.

    A file that is not UTF-8 (Latin-1, UTF-16, a binary file) is named with the line of its first bad
    byte. ``max_bytes``: a larger file is refused from its size, before a byte of it is read.
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

    ``line`` is the 1-based line of the row in the file (the header is line 1). Raises
    :class:`InputError` for an empty file, a missing required column, a column named twice (nothing
    else can be read then), and reports to ``problems`` (default: raise) a row with more or fewer
    fields than the header, which is then skipped. Blank lines are skipped. Cells are stripped.
    ``max_rows``: an :class:`InputError` at the first data row past it (nothing more is read). A row
    the CSV reader cannot read (a cell over its field limit, a stray NUL) is an :class:`InputError`
    naming the row.
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
    """The rows of an ``edges.csv``: per SEG id, ``(parent, child, line)`` triples; ``path`` for messages."""

    path: Path
    by_seg: dict[int, list[tuple[str, str, int]]]


def read_edges(path: Path, problems: Problems | None = None, *, caps: FolderCaps | None = None) -> EdgeList:
    """The rows of an ``edges.csv``, each checked on its own (an integer id; parent and child well-formed
    labels with the parent at a lower error level). A bad row is reported to ``problems`` (default:
    raise) and left out."""
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
    """The error descriptions in an ``errors`` cell of ``nodes.csv``: split at ``;``, blanks collapsed,
    empty parts dropped."""
    return tuple(" ".join(e.split()) for e in cell.split(ERROR_SEPARATOR) if e.strip())


@dataclass
class NodeErrorList:
    """The rows of a ``nodes.csv``: per SEG id, node label -> (error descriptions, line)."""

    path: Path
    by_seg: dict[int, dict[str, tuple[tuple[str, ...], int]]]


def read_node_errors(path: Path, problems: Problems | None = None, *, caps: FolderCaps | None = None) -> NodeErrorList:
    """The rows of a ``nodes.csv`` (``id, rank, errors``), each checked on its own: an integer id, a
    well-formed node label, each node once. A bad row is reported to ``problems`` (default: raise) and
    left out. Whether the SEG and node exist is checked by :func:`read_metadata`."""
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
    """The canonical spelling of a partition name: TS2's (``synth`` -> ``Synth``), else ``value`` as is."""
    for p in PARTITIONS:
        if value.lower() == p.lower():
            return p
    return value


def _partition(value: str, sid: int, path: Path, line: int, unknown: dict[str, tuple[int, int]]) -> str:
    """The canonical spelling of a partition cell (``synth`` -> ``Synth``); an unknown value is kept as a
    partition of its own and reported once (``unknown`` collects value -> (SEG, line))."""
    value = canonical_partition(value)
    if value not in PARTITIONS:
        unknown.setdefault(value, (sid, line))
    return value


def read_metadata(path: Path, *, name: str, root: Path | None, edges: EdgeList | None = None,
                  problems: Problems | None = None, node_errors: NodeErrorList | None = None,
                  caps: FolderCaps | None = None) -> Dataset:
    """Parse a TS2-style ``metadata.csv`` into a :class:`Dataset`, validating every row.

    Row numbers in errors are 1-based file lines (the header is line 1). ``edges`` are the rows of the
    dataset's ``edges.csv``: each must name a SEG and nodes that exist (:class:`InputError` naming
    ``edges.csv`` and the row otherwise). A ``partition`` value other than Synth, Nat, Real (any case) is
    kept as a partition of its own; beside SEGs in TS2's partitions it is also reported with an
    :class:`~ts2viz.errors.InputWarning` (a likely misspelling), alone it is the user's choice. With explicit edges,
    every node must be reachable from an error-0 node. ``node_errors`` are the rows of ``nodes.csv``:
    each must name a SEG and a node that exist.

    ``problems`` (default: raise the first) receives every problem; when it collects them instead
    (:func:`validate_folder`), a bad row or SEG is left out and reading goes on, so that each later
    problem is found too; the returned dataset then holds only the good SEGs.
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
