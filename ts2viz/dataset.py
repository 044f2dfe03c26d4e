"""SEG datasets and their loaders: the bundled TS2 metadata, a local folder, a Hugging Face dataset id.

A dataset folder is laid out like the released TS2 dataset: ``metadata.csv`` with the columns
``id, target_prompt, file_name, image_source, rank`` (``rank`` is the node label) and the image files at
``file_name`` relative to the folder. Optional: a ``partition`` column (otherwise TS2's id ranges are
used), and ``edges.csv`` with columns ``id, parent, child`` (otherwise every node of error level k
connects to every node of the next error level present).
"""
from __future__ import annotations

import csv
import os
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .errors import InputError
from .paths import bundled_data_dir
from .seg import SEG, build_seg, parse_label

REQUIRED_COLUMNS = ("id", "target_prompt", "file_name", "image_source", "rank")
PARTITIONS = ("Synth", "Nat", "Real")
TS2_HF_ID = "saxon/T2IScoreScore"
#: :meth:`Dataset.fingerprint` of the TS2 release (165 SEGs, 2,840 images); tested against the bundle
TS2_FINGERPRINT = "629d02ee57209582"


def parse_seg_ids(text: str | None) -> list[int] | None:
    """SEG ids from text like ``'1,2,5-7'`` -> ``[1, 2, 5, 6, 7]``; ``None`` for empty text (all SEGs).

    Raises :class:`InputError` for a part that is neither an integer nor a range ``a-b``.
    """
    if not text:
        return None
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if "-" in part[1:]:
                a, b = part.split("-", 1)
                out.extend(range(int(a), int(b) + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise InputError(f"--seg: {part!r} is not an id or a range like 3-7") from None
    return out


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
        """A short hash of the dataset's structure: SEG ids, file names and node labels (not the paths)."""
        import hashlib

        h = hashlib.sha1()
        for r in sorted(self.rows, key=lambda r: (r.seg_id, r.file_name)):
            h.update(f"{r.seg_id}|{r.file_name}|{r.label}\n".encode())
        return h.hexdigest()[:16]

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


def load_folder(folder: str | os.PathLike, name: str | None = None) -> Dataset:
    folder = Path(folder)
    meta = folder / "metadata.csv"
    if not meta.is_file():
        raise InputError("dataset folder has no metadata.csv", file=folder)
    edges = _read_edges(folder / "edges.csv") if (folder / "edges.csv").is_file() else None
    return read_metadata(meta, name=name or folder.name, root=folder, edges=edges)


def load_hf(hf_id: str, *, revision: str | None = None, timeout: float = 10.0,
            cache_dir: str | os.PathLike | None = None) -> Dataset:
    """Load a SEG dataset from the Hugging Face hub (an imagefolder: ``metadata.csv`` + images).

    Only ``metadata.csv`` (and ``edges.csv`` if present) are downloaded here; images are fetched on
    demand by :func:`fetch_image`. Offline (``HF_HUB_OFFLINE=1`` or no network) this uses the local
    hub cache if it holds the dataset and otherwise fails fast with an :class:`InputError`.
    """
    _hub_timeouts(timeout)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - huggingface_hub is a requirement
        raise InputError("huggingface_hub is not installed", file=hf_id) from e
    try:
        local = snapshot_download(repo_id=hf_id, repo_type="dataset", revision=revision,
                                  allow_patterns=["metadata.csv", "edges.csv"],
                                  cache_dir=None if cache_dir is None else str(cache_dir))
    except Exception as e:  # network errors, offline mode, missing repo: all one message
        raise InputError(f"could not load Hugging Face dataset (offline or not found: "
                         f"{type(e).__name__}); pass a local dataset folder instead", file=hf_id) from e
    folder = Path(local)
    ds = load_folder(folder, name=hf_id)
    ds.hf_id = hf_id
    return ds


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

def _read_edges(path: Path) -> dict[int, list[tuple[str, str]]]:
    out: dict[int, list[tuple[str, str]]] = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        cols = reader.fieldnames or []
        for c in ("id", "parent", "child"):
            if c not in cols:
                raise InputError(f"missing column {c!r} (expected id, parent, child)", file=path)
        for i, rec in enumerate(reader, start=2):
            try:
                sid = int(rec["id"])
                parse_label(rec["parent"])
                parse_label(rec["child"])
            except ValueError as e:
                raise InputError(str(e) if "label" in str(e) else "id must be an integer",
                                 file=path, row=i) from None
            out.setdefault(sid, []).append((rec["parent"].strip(), rec["child"].strip()))
    return out


def read_metadata(path: Path, *, name: str, root: Path | None,
                  edges: dict[int, list[tuple[str, str]]] | None = None) -> Dataset:
    """Parse a TS2-style ``metadata.csv`` into a :class:`Dataset`, validating every row.

    Row numbers in errors are 1-based file lines (the header is line 1).
    """
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", file=path) from None
    with f:
        reader = csv.DictReader(f)
        cols = reader.fieldnames
        if not cols:
            raise InputError("empty file: expected a header with columns " + ", ".join(REQUIRED_COLUMNS),
                             file=path)
        missing = [c for c in REQUIRED_COLUMNS if c not in cols]
        if missing:
            raise InputError(f"missing column {missing[0]!r} (expected {', '.join(REQUIRED_COLUMNS)})",
                             file=path)
        has_partition = "partition" in cols
        rows: list[ImageRow] = []
        first_row: dict[int, int] = {}
        seen: dict[str, int] = {}
        for i, rec in enumerate(reader, start=2):
            try:
                sid = int(str(rec["id"]).strip())
            except ValueError:
                raise InputError(f"id {rec['id']!r} is not an integer", file=path, row=i) from None
            fn = (rec["file_name"] or "").strip()
            if not fn:
                raise InputError("empty file_name", file=path, row=i)
            if fn in seen:
                raise InputError(f"duplicate file_name {fn!r} (first at row {seen[fn]})", file=path, row=i)
            seen[fn] = i
            label = (rec["rank"] or "").strip()
            try:
                level = parse_label(label)
            except ValueError as e:
                raise InputError(str(e), file=path, row=i) from None
            part = (rec.get("partition") or "").strip() if has_partition else ""
            first_row.setdefault(sid, i)
            rows.append(ImageRow(sid, fn, (rec["target_prompt"] or "").strip(),
                                 (rec["image_source"] or "").strip(), label, level,
                                 part or ts2_partition(sid)))
    if not rows:
        raise InputError("no image rows below the header", file=path)

    by_seg: dict[int, list[ImageRow]] = {}
    for r in rows:
        by_seg.setdefault(r.seg_id, []).append(r)
    segs: dict[int, SEG] = {}
    for sid in sorted(by_seg):
        members = by_seg[sid]
        prompts = Counter(r.prompt for r in members)
        prompt = prompts.most_common(1)[0][0]
        if len(prompts) > 1 and name != "ts2":
            # The TS2 release itself has one such row (SEG 3); the SEG's prompt is the majority one.
            warnings.warn(f"{path}: SEG {sid} has {len(prompts)} different prompts; using {prompt!r}",
                          stacklevel=2)
        if not any(r.level == 0 for r in members):
            raise InputError(f"SEG {sid} has no error-0 node (labels: "
                             f"{', '.join(sorted({r.label for r in members}))})", file=path, row=first_row[sid])
        partition = members[0].partition
        # A SEG without rows in edges.csv keeps the implied edges.
        seg_edges = edges.get(sid) if edges is not None else None
        try:
            segs[sid] = build_seg(sid, prompt, partition,
                                  ((r.file_name, r.image_source, r.label) for r in members),
                                  edges=seg_edges)
        except ValueError as e:
            raise InputError(str(e), file=path, row=first_row[sid]) from None
    # Keep rows in SEG order so that per-SEG slices are contiguous.
    rows.sort(key=lambda r: r.seg_id)
    return Dataset(name=name, segs=segs, rows=rows, root=root)
