"""Export drafts as a ts2viz dataset folder (the documented format) and import such a folder back."""
from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import uuid
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..dataset import ERROR_SEPARATOR, Dataset, fetch_image, load_dataset, validate_folder
from ..errors import InputError
from .convert import draft_from_seg
from .draft import DraftImage, SegDraft, canonical
from .problems import drafts_problems

#: what gives the bytes of a draft image: a function of the image, or a mapping from image keys;
#: either may give ``bytes`` or a path to a file
ImageBytes = Callable[[DraftImage], "bytes | str | os.PathLike"] | Mapping[str, "bytes | str | os.PathLike"]

METADATA_COLUMNS = ("id", "target_prompt", "file_name", "image_source", "rank", "partition")


def _csv_text(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def dataset_card(drafts: Sequence[SegDraft], name: str) -> str:
    """The ``README.md`` of an exported dataset.

    What it is, how to load it, its files, and each SEG with its nodes, their error descriptions, image
    counts and edges; with Hugging Face dataset-card front matter (``pretty_name``, tags).

    Parameters
    ----------
    drafts : sequence of SegDraft
        The exported drafts (written in id order, each in :func:`canonical` order).
    name : str
        The dataset's title.

    Returns
    -------
    str
        The Markdown text.

    Examples
    --------
    >>> from ts2viz.authoring import SegDraft
    >>> d = SegDraft("a red apple").add_node("0").add_node("1a", "no apple").add_image("k", "a.png", "0")
    >>> card = dataset_card([d], "apples")
    >>> print(card[card.index("### SEG"):])
    ### SEG 0: a red apple
    <BLANKLINE>
    Partition Custom; 2 nodes, 1 images.
    <BLANKLINE>
    | node | errors | images |
    |---|---|---|
    | 0 | (none: matches the prompt) | 1 |
    | 1a | no apple | 0 |
    <BLANKLINE>
    Edges: follow the error counts.
    <BLANKLINE>
    """
    drafts = [canonical(d) for d in sorted(drafts, key=lambda d: d.seg_id)]
    n_images = sum(len(d.images) for d in drafts)
    explicit = any(d.edges is not None for d in drafts)
    described = any(n.errors for d in drafts for n in d.nodes)
    title = " ".join(name.split()).replace('"', "'")
    out = [
        "---",
        f'pretty_name: "{title}"',
        "tags:",
        "- ts2viz",
        "- semantic-error-graph",
        "- text-to-image",
        "- t2i-evaluation",
        "---",
        f"# {_md(name)}",
        "",
        f"{len(drafts)} semantic error graph{'s' if len(drafts) != 1 else ''} (SEGs) with {n_images} images, "
        "made with ts2viz for meta-evaluating text-to-image faithfulness metrics as "
        "T2IScoreScore does: in each SEG, one prompt and its images grouped into nodes by how many errors "
        "they contain; a good metric's scores fall as errors rise along every walk (Ord) and separate the "
        "nodes (Sep). The format and the meta-metrics are those of T2IScoreScore (Saxon et al., 2024, "
        "\"Who Evaluates the Evaluations? Objectively Scoring Text-to-Image Prompt Coherence Metrics with "
        "T2IScoreScore (TS2)\").",
        "",
        "## Load it",
        "",
        "```bash",
        "ts2viz validate THIS_FOLDER",
        "ts2viz leaderboard --dataset THIS_FOLDER --scores scores.csv   # scores.csv: file_name + one column per metric",
        "```",
        "",
        "```python",
        "from ts2viz.dataset import load_dataset",
        'ds = load_dataset("THIS_FOLDER")     # or the Hugging Face dataset id it was pushed to',
        "ds[%d].node(\"%s\").errors" % (drafts[0].seg_id, drafts[0].nodes[-1].label) if drafts and drafts[0].nodes
        else "ds.segs",
        "```",
        "",
        "## Files",
        "",
        "- `metadata.csv`: one row per image: `id` (SEG id), `target_prompt`, `file_name`, `image_source`, "
        "`rank` (node label: error count, then letters), `partition`.",
    ]
    if explicit:
        out.append("- `edges.csv`: `id, parent, child`: the edges of the SEGs that list them; the other SEGs "
                   "connect every node of error level k to every node of the next level present.")
    if described:
        out.append(f"- `nodes.csv`: `id, rank, errors`: the error(s) each node adds relative to its parent, "
                   f"several separated by `{ERROR_SEPARATOR}`.")
    out.append("- the images, at their `file_name`.")
    out += ["", "## SEGs"]
    for d in drafts:
        out += ["", f"### SEG {d.seg_id}: {_md(d.prompt)}", "",
                f"Partition {_md(d.partition)}; {len(d.nodes)} nodes, {len(d.images)} images.", "",
                "| node | errors | images |", "|---|---|---|"]
        for n in d.nodes:
            errs = "; ".join(_md(e) for e in n.errors) or ("(none: matches the prompt)" if n.level == 0 else "")
            out.append(f"| {n.label} | {errs} | {len(d.images_of(n.label))} |")
        edges = "follow the error counts" if d.edges is None else ", ".join(f"{a} → {b}" for a, b in d.edges)
        out += ["", f"Edges: {edges}."]
    return "\n".join(out) + "\n"


def _bytes_of(im: DraftImage, image_bytes: ImageBytes) -> bytes:
    try:
        got = image_bytes[im.key] if isinstance(image_bytes, Mapping) else image_bytes(im)
    except KeyError:
        raise InputError(f"no bytes given for image {im.file_name} (key {im.key!r})") from None
    if got is None:
        raise InputError(f"no bytes given for image {im.file_name} (key {im.key!r})")
    if isinstance(got, (bytes, bytearray, memoryview)):
        data = bytes(got)
    else:
        try:
            data = Path(got).read_bytes()
        except OSError as e:
            raise InputError(f"cannot read the file of image {im.file_name}: {e.strerror or type(e).__name__}") from None
    if not data:
        raise InputError(f"image {im.file_name} is empty (0 bytes)")
    return data


def _check_image(im: DraftImage, data: bytes) -> None:
    """An image file PIL can open (what the explorer and the metrics will do with it)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as pic:
            pic.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        raise InputError(f"image {im.file_name} is not an image file that can be read (PNG, JPEG, ...)") from None


def _target(folder: Path, overwrite: bool) -> None:
    if not folder.exists():
        return
    if not folder.is_dir():
        raise InputError("exists and is not a folder; expected a new folder for the dataset", file=folder)
    if not overwrite:
        raise InputError("already exists; choose a new folder or pass overwrite=True to replace it", file=folder)
    if any(folder.iterdir()) and not (folder / "metadata.csv").is_file():
        raise InputError("exists and is not a dataset folder (no metadata.csv); refusing to replace it",
                         file=folder)


def export_dataset(drafts: SegDraft | Sequence[SegDraft], folder: str | os.PathLike, image_bytes: ImageBytes,
                   *, overwrite: bool = False, name: str | None = None) -> Path:
    """Write drafts (one or several SEGs with distinct ids) as a dataset folder.

    The folder holds ``metadata.csv`` (``id, target_prompt, file_name, image_source, rank, partition``),
    ``edges.csv`` (rows for the SEGs with explicit edges; only when one has them), ``nodes.csv``
    (``id, rank, errors``: the error descriptions, ``;``-separated; only when a node has some), every
    image at its ``file_name``, and ``README.md`` (:func:`dataset_card`). Rows are written in
    :func:`canonical` order.

    Atomic: the dataset is written next to ``folder``, checked with
    :func:`ts2viz.dataset.validate_folder`, then renamed into place; on any error nothing is left.

    Parameters
    ----------
    drafts : SegDraft or sequence of SegDraft
        The drafts, without problems (:func:`~ts2viz.authoring.drafts_problems`).
    folder : str or os.PathLike
        The new dataset folder.
    image_bytes : callable or mapping
        What gives each image's bytes (``ImageBytes``): a function of the :class:`DraftImage`, or a
        mapping from image keys; either gives ``bytes`` or a path to a file. Each must be an image file
        PIL can read.
    overwrite : bool, default False
        Replace ``folder`` if it is an existing dataset folder (one with ``metadata.csv``) or an empty
        folder; any other folder is refused.
    name : str or None, default None
        The title of the card (default: the folder's name).

    Returns
    -------
    pathlib.Path
        ``folder``.

    Raises
    ------
    InputError
        In one line, when a draft has problems, two images of different SEGs share a key while
        ``image_bytes`` is a mapping, an image's bytes cannot be had or are not an image, ``folder``
        exists (and may not be replaced), or the disk refuses the write.

    See Also
    --------
    import_dataset : the drafts of an exported folder.
    pack_dataset : the folder as one zip file.

    Examples
    --------
    >>> import io, tempfile, pathlib
    >>> from PIL import Image
    >>> from ts2viz.authoring import SegDraft
    >>> def png(color):
    ...     buf = io.BytesIO()
    ...     Image.new("RGB", (8, 8), color).save(buf, "PNG")
    ...     return buf.getvalue()
    >>> d = (SegDraft("a red square", seg_id=1).add_node("0").add_node("1a", "a blue square")
    ...      .add_image("r", "images/red.png", "0", "PIL").add_image("b", "images/blue.png", "1a", "PIL"))
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "squares"
    >>> folder = export_dataset(d, out, {"r": png("red"), "b": png("blue")})
    >>> sorted(p.name for p in folder.iterdir())
    ['README.md', 'images', 'metadata.csv', 'nodes.csv']
    >>> print((folder / "metadata.csv").read_text().strip())
    id,target_prompt,file_name,image_source,rank,partition
    1,a red square,images/red.png,PIL,0,Custom
    1,a red square,images/blue.png,PIL,1a,Custom
    >>> import_dataset(folder) == [canonical(d, rekey=True)]
    True
    >>> import shutil; shutil.rmtree(out.parent)
    """
    drafts = [drafts] if isinstance(drafts, SegDraft) else list(drafts)
    folder = Path(folder)
    problems = drafts_problems(drafts)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise InputError(f"cannot export: {problems[0].message}{more}", file=folder)
    _target(folder, overwrite)
    drafts = [canonical(d) for d in sorted(drafts, key=lambda d: d.seg_id)]
    if isinstance(image_bytes, Mapping):
        keys = [im.key for d in drafts for im in d.images]
        if len(set(keys)) != len(keys):
            raise InputError("cannot export: two images of different SEGs share a key, so a mapping of keys "
                             "to bytes cannot tell them apart; pass a function of the image instead", file=folder)

    parent = folder.absolute().parent
    tmp = parent / f".{folder.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as e:
        raise InputError(f"cannot create the dataset folder here ({e.strerror or type(e).__name__})",
                         file=folder) from None
    try:
        meta_rows, edge_rows, node_rows = [], [], []
        for d in drafts:
            for im in d.images:
                data = _bytes_of(im, image_bytes)
                _check_image(im, data)
                dest = tmp / im.file_name
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
                meta_rows.append((d.seg_id, d.prompt, im.file_name, im.source, im.node, d.partition))
            edge_rows += [(d.seg_id, a, b) for a, b in (d.edges or ())]
            node_rows += [(d.seg_id, n.label, f"{ERROR_SEPARATOR} ".join(n.errors)) for n in d.nodes if n.errors]
        (tmp / "metadata.csv").write_text(_csv_text(METADATA_COLUMNS, meta_rows), encoding="utf-8")
        if edge_rows:
            (tmp / "edges.csv").write_text(_csv_text(("id", "parent", "child"), edge_rows), encoding="utf-8")
        if node_rows:
            (tmp / "nodes.csv").write_text(_csv_text(("id", "rank", "errors"), node_rows), encoding="utf-8")
        (tmp / "README.md").write_text(dataset_card(drafts, name or folder.name), encoding="utf-8")
        # the loader's own check of what was written (one truth: a draft without problems must pass it)
        report = validate_folder(tmp)
        if not report.ok or report.missing_images:
            first = str(report.errors[0]) if report.errors else f"image {report.missing_images[0][0]} missing"
            raise InputError(f"the exported dataset does not validate: {first.replace(str(tmp), str(folder))}")
        _swap_in(tmp, folder)
    except OSError as e:         # a full disk, a permission: one line, nothing left
        shutil.rmtree(tmp, ignore_errors=True)
        raise InputError(f"cannot write the dataset ({e.strerror or type(e).__name__})", file=folder) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def _swap_in(tmp: Path, folder: Path) -> None:
    """Rename the finished ``tmp`` folder to ``folder``, replacing an existing one.

    The existing folder is moved aside first and put back if the rename fails.
    """
    if not folder.exists():
        os.replace(tmp, folder)
        return
    old = folder.parent / f".{folder.name}.{uuid.uuid4().hex[:12]}.old"
    os.replace(folder, old)
    try:
        os.replace(tmp, folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.replace(old, folder)
        raise
    shutil.rmtree(old, ignore_errors=True)


def import_dataset(source: str | os.PathLike | Dataset) -> list[SegDraft]:
    """The drafts of a dataset, one per SEG in id order.

    Images are keyed by their file names (:func:`image_locator` gives their files). For drafts without
    problems, ``import_dataset(export_dataset(drafts, ...)) == [canonical(d, rekey=True) for d in drafts]``
    (drafts in id order).

    Parameters
    ----------
    source : str or os.PathLike or ts2viz.dataset.Dataset
        Whatever :func:`ts2viz.dataset.load_dataset` takes (a folder in ts2viz's format, a Hugging Face
        dataset id, ``"ts2"``), or a loaded dataset.

    Returns
    -------
    list of SegDraft
        The drafts.

    Raises
    ------
    InputError
        For a folder that does not load (the loader's first problem).

    Examples
    --------
    >>> drafts = import_dataset("ts2")
    >>> len(drafts), drafts[0].seg_id, drafts[0].images[0].key == drafts[0].images[0].file_name
    (165, 0, True)
    """
    ds = source if isinstance(source, Dataset) else load_dataset(source)
    return [draft_from_seg(ds, sid) for sid in sorted(ds.segs)]


def image_locator(dataset: Dataset) -> Callable[[DraftImage], Path | None]:
    """A function giving the local file of an image of an imported draft.

    For drafts made by :func:`import_dataset` or :func:`~ts2viz.authoring.draft_from_seg`: the file on
    disk under the dataset folder, or fetched from its hub repo. Only the dataset's own file names are
    resolved.

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        The dataset the drafts came from.

    Returns
    -------
    callable
        ``locate(image) -> pathlib.Path or None`` (``None`` when the file cannot be had).
    """
    def locate(im: DraftImage) -> Path | None:
        return fetch_image(dataset, im.key)
    return locate
