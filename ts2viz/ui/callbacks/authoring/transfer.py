"""The session's SEGs out and in: export to a folder or a .zip, import one, push to the hub."""
from __future__ import annotations

import os
import re
import secrets
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from ....authoring import (DraftImage, SegDraft, export_dataset, import_dataset, pack_dataset, push_to_hub,
                          unpack_dataset)
from ....authoring.limits import size_message
from ....display import plural
from ....errors import InputError
from ...state.authoring_session import Drafts, caps_for
from ..common import visitor_file
from .drafts import session_drafts, sized_message
from .images import check_room, checked_image
from .view import image_file


def _export_to(app, folder: Path, name: str | None, overwrite: bool = False) -> Path:
    from ...serving.jobs import checkpoint

    d = session_drafts(app)
    if not d.drafts:
        raise InputError("no SEG to export; start one first")

    def image_bytes(im: DraftImage):
        checkpoint()
        p = image_file(app, d, im)
        if p is None:
            raise InputError(f"image {im.file_name} cannot be had here (not on disk)")
        return p

    return export_dataset(list(d.drafts), folder, image_bytes, overwrite=overwrite, name=name or None)


def _export_bytes(app, d: Drafts) -> int:
    """What an export of the session's SEGs writes, at most.

    Each image's file as it is (they were checked when added) and the dataset's CSV files and card (a
    megabyte is plenty for its caps).
    """
    total = 1024 * 1024
    for x in d.drafts:
        for im in x.images:
            n = d.sizes.get(im.key)
            if n is None:
                p = image_file(app, d, im, fetch=False)
                try:
                    n = p.stat().st_size if p is not None else 0
                except OSError:
                    n = 0
            total += n
    return total


def _dataset_name(name) -> str:
    n = re.sub(r"[^A-Za-z0-9_-]+", "-", str(name or "").strip()).strip("-")[:60]
    return n or "my-segs"


def export_folder(app, folder, overwrite: bool = False, name=None) -> str:
    """Export the session's SEGs to a dataset folder of this machine.

    The tab's "Export" button (operator mode only; in the files lane): an action, after which the tab shows the
    session's SEGs again (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    folder : str
        The new folder.
    overwrite : bool, default False
        Replace an existing dataset folder.
    name : str or None, default None
        The dataset card's title (default: the folder's name).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        In public mode; for no folder, no SEG, or anything :func:`ts2viz.authoring.export_dataset` refuses.
    """
    if app.access.public:
        raise InputError("exporting to a folder of the server is not available here; download the .zip")
    if not str(folder or "").strip():
        raise InputError("enter the folder to write the dataset to")
    target = Path(str(folder).strip()).expanduser()
    out = _export_to(app, target, str(name or "").strip() or None, bool(overwrite))
    n = len(session_drafts(app).drafts)
    return f"Exported {plural(n, 'SEG')} to {out}. Load it with: ts2viz validate {out}"


def export_zip(app, name=None) -> str:
    """Export the session's SEGs as a .zip of the dataset folder: the tab's download button (in the files lane).

    :func:`ts2viz.authoring.pack_dataset`: its files under ``<name>/``, in the session's downloads. The
    export's size is bounded by the images' own (checked) sizes and asked of the disk budget before it is
    written; it replaces the session's previous export (a session keeps one).

    Parameters
    ----------
    app : AppView
        The session's view.
    name : str or None, default None
        The dataset's name (tidied; default ``my-segs``).

    Returns
    -------
    str
        The .zip's path (the browser then saves it).

    Raises
    ------
    InputError
        For no SEG, a session past its disk budget, or anything :func:`ts2viz.authoring.export_dataset`
        refuses.
    """
    from ...state import disk

    d = session_drafts(app)
    if not d.drafts:
        raise InputError("no SEG to export; start one first")
    stem = _dataset_name(name)
    old = d.export
    need = _export_bytes(app, d)
    # the folder and the zip are both on disk for a moment; the previous export goes after
    disk.require(app, 2 * need, "this export")
    work = d.folder("exports") / secrets.token_hex(6)
    try:
        folder = _export_to(app, work / stem, stem)
        out = pack_dataset(folder, app.new_download(f"{stem}.zip"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if old is not None and old != out:
        shutil.rmtree(old.parent, ignore_errors=True)
    d.export = out
    disk.refresh(app)
    return str(out)


def _add_imported(app, drafts: Sequence[SegDraft], ds, sizes: dict | None = None, thumbs: dict | None = None) -> str:
    d = session_drafts(app)
    caps = caps_for(app)
    if len(d.drafts) + len(drafts) > caps.max_drafts:
        raise InputError(f"a session may author at most {caps.max_drafts} SEGs at once; "
                         f"this dataset has {len(drafts)}")
    new_bytes = sum((sizes or {}).get(im.key, 0) for x in drafts for im in x.images)
    check_room(d, caps, sum(len(x.images) for x in drafts), new_bytes)
    notes = [sized_message(app, x) for x in drafts]
    with d.lock:
        d.remember()
        for x in drafts:
            images = []
            for im in x.images:
                key = f"im-{d.next_id()}-{secrets.token_hex(3)}"
                d.remote[key] = (ds, im.key)      # read from the dataset's folder when needed (export, scoring)
                if sizes is not None and im.key in sizes:
                    d.sizes[key] = sizes[im.key]
                    d.bytes_held += sizes[im.key]
                if thumbs is not None and im.key in thumbs:
                    d.thumbs[key] = thumbs[im.key]
                images.append(replace(im, key=key))
            d.drafts.append(replace(x, images=tuple(images)))
        d.current = len(d.drafts) - 1
    return (f"Imported {plural(len(drafts), 'SEG')}: " + ", ".join(f"SEG {x.seg_id}" for x in drafts) + "."
            + "".join(dict.fromkeys(n for n in notes if n)))


def import_folder(app, folder) -> str:
    """Import a dataset of this machine, or a hub dataset, as SEGs of the session.

    The tab's "Import" button (operator mode only; in the files lane): an action, after which the tab shows the
    session's SEGs again (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    folder : str
        A folder in ts2viz's format, or anything else :func:`ts2viz.dataset.load_dataset` takes (a Hugging
        Face dataset id).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        In public mode; for nothing given, a dataset that does not load, or a session at its caps.
    """
    from ....dataset import load_dataset, load_folder

    if app.access.public:
        raise InputError("importing a folder of the server is not available here; upload a .zip")
    text = str(folder or "").strip()
    if not text:
        raise InputError("enter a dataset folder of this machine (or a Hugging Face dataset id)")
    root = Path(text).expanduser()
    ds = load_folder(root) if root.is_dir() else load_dataset(text)
    return _add_imported(app, import_dataset(ds), ds)


def import_zip(app, file) -> str:
    """Import a dataset from an uploaded .zip (what the export gives, or a folder zipped by hand).

    The tab's "Import .zip" button (in the files lane): an action, after which the tab shows the session's SEGs
    again (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    Read in proportion to what the session may still take (:func:`ts2viz.authoring.unpack_dataset`): the
    .zip's size, its members' paths and declared sizes first (and the disk budget for them); then its
    ``metadata.csv``, ``edges.csv`` and ``nodes.csv`` within byte and row caps (the rows the session has room
    for); then every SEG's size (nodes, edges, levels, walks counted) before any image is unpacked; then each
    image the dataset names, checked as an upload is as soon as it is on disk, within the session's image
    bytes. A refused or failed import leaves nothing on disk. In public mode the .zip must come from the
    upload folder (it is the session's, deleted with it), and every image must be in it.

    Parameters
    ----------
    app : AppView
        The session's view.
    file : str or os.PathLike or file object
        The uploaded .zip.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        For no file, one outside the upload folder (public mode), not a .zip, over a cap, breaking a rule of the
        loader, an image refused by the check, or a session at its caps (public mode: the message quotes nothing
        of the file's contents).
    """
    import zipfile

    from ....authoring.limits import SegSize, implied_edge_count
    from ....dataset import FolderCaps, load_folder
    from ...state import disk
    from ...serving.jobs import checkpoint

    if file is None:
        raise InputError("upload a .zip of a dataset folder")
    p = visitor_file(app, file if isinstance(file, (str, Path)) else getattr(file, "name", file))
    d = session_drafts(app)
    if app.access.public:
        app.workspace.own_file(p)
    caps = caps_for(app)
    name = p.name
    if p.suffix.lower() != ".zip":
        raise InputError("expected a .zip of a dataset folder", file=name)
    try:
        size = p.stat().st_size
    except OSError:
        raise InputError("upload the file through the page") from None
    if size > caps.max_zip_bytes:
        raise InputError(f"the .zip is {size / 1e6:.1f} MB; the limit is {caps.max_zip_bytes // (1024 * 1024)} MB",
                         file=name)
    # what the session has room for, before anything is unpacked
    room_drafts = caps.max_drafts - len(d.drafts)
    held = sum(len(x.images) for x in d.drafts)
    room_images = caps.max_images - held
    room_bytes = caps.max_total_bytes - d.bytes_held
    if room_drafts <= 0:
        raise InputError(f"a session may author at most {caps.max_drafts} SEGs at once; remove one first")
    if room_images <= 0 or room_bytes <= 0:
        raise InputError(f"a session may hold at most {caps.max_images} images and "
                         f"{caps.max_total_bytes // (1024 * 1024)} MB of images; remove some first")
    limit = min(caps.max_unzipped_bytes, room_bytes + 4 * caps.max_csv_bytes)
    try:
        with zipfile.ZipFile(p) as z:
            declared = sum(i.file_size for i in z.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        declared = 0                       # unpack_dataset says what is wrong with it
    disk.require(app, min(declared, limit), "importing this .zip")
    fcaps = FolderCaps(max_bytes=caps.max_csv_bytes, max_images=room_images,
                       max_edges=room_drafts * caps.max_edges, max_nodes=room_drafts * caps.max_nodes,
                       max_segs=room_drafts)
    warnings_: list[str] = []

    def accept(ds) -> None:
        for seg in ds:
            edges = implied_edge_count(seg.labels) if seg.edges is None else len(set(seg.edges))
            walks = max(seg.n_walks(False), seg.n_walks(True))
            size_ = SegSize(len(seg.nodes), edges, len(seg.levels), walks)
            over = size_.over(caps.seg_limits, walks=caps.refuse_walks)
            if over:
                raise InputError(size_message(seg.id, over))
            if walks > caps.max_walks:
                warnings_.append(f" ⚠ SEG {seg.id} has {walks:,} walks (more than {caps.max_walks:,}).")

    sizes: dict[str, int] = {}
    thumbs: dict[str, str | None] = {}

    def check(file_name: str, path: Path) -> None:
        info, thumb = checked_image(path, caps, file_name)
        sizes[file_name], thumbs[file_name] = info.size, thumb
        if sum(sizes.values()) > room_bytes:
            raise InputError(f"a session may hold at most {caps.max_total_bytes // (1024 * 1024)} MB of images")

    dest = d.folder("imports") / secrets.token_hex(6)
    try:
        try:
            unpack_dataset(p, dest, max_files=caps.max_zip_members, max_total_bytes=limit, caps=fcaps,
                           accept=accept, check_image=check, require_images=app.access.public,
                           checkpoint=checkpoint, max_image_bytes=caps.max_image_bytes)
        except InputError as e:
            text = str(e)
            if app.access.public:      # a message about a visitor's file quotes nothing of its contents
                text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
            raise InputError(f"{name}: {text}") from None
        ds = load_folder(dest, name=_dataset_name(p.stem), caps=fcaps)
        message = _add_imported(app, import_dataset(ds), ds, sizes, thumbs)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)       # a refused or failed import leaves nothing
        raise
    finally:
        disk.refresh(app)
    return message + "".join(warnings_)


def push(app, repo_id, private: bool = False, name=None) -> str:
    """Push the session's SEGs to a Hugging Face dataset repo.

    The tab's "Push" button (operator mode only): an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

    The token comes from the environment: ``HF_TOKEN`` or the client's login.

    Parameters
    ----------
    app : AppView
        The session's view.
    repo_id : str
        ``OWNER/NAME``.
    private : bool, default False
        Create the repo as private.
    name : str or None, default None
        The dataset card's title (default: the repo id).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        In public mode; for no repo, no SEG, anything the export refuses, or a hub error.
    """
    if app.access.public:
        raise InputError("pushing to the Hugging Face hub is not available here")
    repo = str(repo_id or "").strip()
    if not repo:
        raise InputError("enter the dataset repo to push to, as OWNER/NAME")
    d = session_drafts(app)
    work = d.folder("exports") / secrets.token_hex(6)
    try:
        folder = _export_to(app, work / _dataset_name(repo.split("/")[-1]), str(name or "").strip() or repo)
        url = push_to_hub(folder, repo, token=os.environ.get("HF_TOKEN") or None,
                          endpoint=os.environ.get("HF_ENDPOINT") or None, private=bool(private))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return f"Pushed {plural(len(d.drafts), 'SEG')} to {repo}: {url}"
