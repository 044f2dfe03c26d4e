"""The authoring tab's callbacks: build SEGs in a session, see their problems, score and export them.

Build SEGs in a session (prompt, images, nodes with their error descriptions, edges), see every problem
the dataset loader would find, score the SEG being built, and export / import / push the session's
SEGs as a dataset in ts2viz's format.

Plain functions of data (the session's :class:`~ts2viz.ui.state.app_state.AppView` first), on the
session's :class:`~ts2viz.ui.state.authoring_session.Drafts`; the SEG logic is
:mod:`ts2viz.authoring`'s. Each action returns a one-line message (shown in the tab's message box, or
its error there); :func:`authoring_state` gives what the tab shows after it.

Public mode (``app.access.public``): images come only as uploads through the page (checked as the live
scoring tab checks them, :func:`~ts2viz.ui.callbacks.live.check_upload`, within the session's caps),
folders and paths are refused, file names are made by the server from sanitised names, a dataset
comes in as a checked .zip upload and goes out as a .zip download in the session's own folder; all of
it goes with the session.
"""
from __future__ import annotations

import base64
import html
import io
import os
import re
import secrets
import shutil
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Sequence

import numpy as np

from ...authoring import (DraftImage, SegDraft, draft_from_seg, draft_problems, draft_warnings, drafts_problems,
                          drafts_to_dataset, export_dataset, import_dataset, pack_dataset, preview_seg, push_to_hub,
                          safe_file_name, seg_size, unpack_dataset)
from ...authoring.limits import size_message
from ...display import plural
from ...errors import InputError
from ..state.authoring_session import AuthoringCaps, Drafts, caps_for, drafts_of
from .common import visitor_file
from .live import check_prompt, check_upload, load_metric, parse_specs

#: image file endings taken from a local folder (operator mode)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff")
#: an uploaded image's type -> the ending its dataset file name gets
SUFFIX_OF = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "BMP": ".bmp", "GIF": ".gif", "TIFF": ".tif"}
THUMB_PX = 96
#: how a draft image's key says where its bytes are
DATASET_KEY = "ds:"
#: labels a node may take (what the loader's parse_label accepts starts with digits)
NODE_LABEL_MAX = 16
ERRORS_MAX = 300


# -- the session's drafts -----------------------------------------------------------------------------

def _drafts(app, *, create: bool = True) -> Drafts:
    d = drafts_of(app, create=create)
    if d is None:
        raise InputError("start a SEG first (from a prompt, or from a SEG of the dataset)")
    return d


def _current(app) -> tuple[Drafts, SegDraft]:
    d = _drafts(app)
    if d.draft is None:
        raise InputError("start a SEG first (from a prompt, or from a SEG of the dataset)")
    return d, d.draft


def _sized(app, new: SegDraft, old: SegDraft | None = None) -> str:
    """Check the size of a changed SEG before it is kept.

    :func:`ts2viz.authoring.seg_size`: nodes, edges, error levels, walks counted without building one. A
    part above its cap that the change makes larger is refused (the operator's walks: a warning instead); a
    change that shrinks a SEG is always taken. Returns the warning to add to the action's message ('' if
    none).
    """
    caps = caps_for(app)
    size = seg_size(new)
    before = seg_size(old) if old is not None else None
    grown = [(what, n, lim) for what, n, lim in size.over(caps.seg_limits)
             if before is None or n > getattr(before, _SIZE_FIELD[what])]
    refused = [o for o in grown if o[0] != "walks" or caps.refuse_walks]
    if refused:
        raise InputError(size_message(new.seg_id, refused) + "; remove nodes or draw fewer edges")
    if grown:
        what, n, lim = grown[0]
        return (f" ⚠ SEG {new.seg_id} has {n:,} walks (more than {lim:,}): scoring it holds one row per walk "
                "in memory")
    return ""


_SIZE_FIELD = {"nodes": "nodes", "edges": "edges", "error levels": "levels", "walks": "walks"}


def _set(app, d: Drafts, new: SegDraft) -> str:
    """Keep ``new`` as the SEG being edited once its size is checked (:func:`_sized`); returns the warning."""
    note = _sized(app, new, d.draft)
    d.set_draft(new)
    return note


def _label(label) -> str:
    lbl = str(label or "").strip()
    if not lbl:
        raise InputError("enter a node label: its error count and a letter, e.g. 0, 1a, 2b")
    if len(lbl) > NODE_LABEL_MAX:
        raise InputError(f"a node label has at most {NODE_LABEL_MAX} characters")
    return lbl


def _next_seg_id(d: Drafts) -> int:
    return max((x.seg_id for x in d.drafts), default=-1) + 1


def _seg_id(value, d: Drafts) -> int:
    if value in (None, ""):
        return _next_seg_id(d)
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise InputError(f"SEG id {str(value)[:20]!r} is not a whole number") from None
    if f != int(f) or f < 0:
        raise InputError(f"SEG id {value} is not a non-negative whole number")
    return int(f)


def start_draft(app, prompt, seg_id=None, partition: str = "Custom") -> str:
    """Start a new SEG from a prompt (it becomes the one being edited).

    The tab's "New SEG" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    prompt : str
        The SEG's prompt.
    seg_id : int or str or None, default None
        Its id (empty: the next free one; one the session uses: the next free one too).
    partition : str, default "Custom"
        Its partition (at most 40 characters).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        For an empty or overlong prompt, an id that is not a whole number, or a session at its SEG cap.
    """
    d = _drafts(app)
    p = check_prompt(prompt)
    part = " ".join(str(partition or "Custom").split())[:40] or "Custom"
    sid = _seg_id(seg_id, d)
    # the id field shows the SEG being edited: a new SEG with that id would clash, so it gets the next free one
    taken = any(x.seg_id == sid for x in d.drafts)
    draft = SegDraft(p, _next_seg_id(d) if taken else sid, part)
    d.add_draft(draft, caps_for(app))
    return (f"Started SEG {draft.seg_id}" + (f" (id {sid} is taken in this session)" if taken else "")
            + ". Add images, then nodes (label 0 first), and put the images into them.")


def start_from_seg(app, seg_id) -> str:
    """Start a variant of a SEG of the loaded dataset (the explorer's).

    The tab's "Vary the explorer's SEG" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Its prompt, nodes (with their error descriptions), images and edges; its own SEG id, or the next free
    one when a SEG of the session has that id.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        For a SEG the dataset lacks, or a session at its image, SEG or size caps.
    """
    from .common import get_seg

    d = _drafts(app)
    seg = get_seg(app, seg_id)
    base = draft_from_seg(app.dataset, seg.id)
    images = tuple(replace(im, key=DATASET_KEY + im.file_name) for im in base.images)
    caps = caps_for(app)
    held = sum(len(x.images) for x in d.drafts)
    if held + len(images) > caps.max_images:
        raise InputError(f"a session may hold at most {caps.max_images} images; this SEG has {len(images)}")
    sid = base.seg_id if all(x.seg_id != base.seg_id for x in d.drafts) else _next_seg_id(d)
    draft = replace(base, images=images, seg_id=sid)
    note = _sized(app, draft)
    d.add_draft(draft, caps)
    return (f"Started a variant of SEG {seg.id} ({plural(len(images), 'image')}, {plural(len(seg.nodes), 'node')})."
            + note)


def select_draft(app, index) -> str:
    """Edit another SEG of the session.

    The tab's SEG picker: an action, after which the tab shows the session's SEGs again (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    index : int or str
        The SEG's position in the session (the picker's value).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        For anything but a SEG of this session.
    """
    d = _drafts(app)
    try:
        i = int(index)
    except (TypeError, ValueError):
        raise InputError("choose a SEG of this session") from None
    if not 0 <= i < len(d.drafts):
        raise InputError("choose a SEG of this session")
    d.current = i
    return f"Editing SEG {d.drafts[i].seg_id}."


def remove_draft(app) -> str:
    """Remove the SEG being edited (undo can bring it back).

    The tab's "Remove SEG" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited.
    """
    d, draft = _current(app)
    with d.lock:
        d.remember()
        d.drafts.pop(d.current)
        d.current = min(d.current, len(d.drafts) - 1)
        _drop_unused_files(d)
    return f"Removed SEG {draft.seg_id}."


def undo(app) -> str:
    """Take back the session's last change (up to :data:`~ts2viz.ui.state.authoring_session.MAX_UNDO`).

    The tab's "Undo" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When there is nothing to undo.
    """
    d = _drafts(app)
    d.undo()
    return "Undone." + (f" Editing SEG {d.draft.seg_id}." if d.draft is not None else "")


def set_header(app, prompt, seg_id, partition) -> str:
    """Change the prompt, SEG id and partition of the SEG being edited.

    The tab's "Save prompt / id" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    prompt : str
        The prompt.
    seg_id : int or str or None
        The id (empty: the next free one).
    partition : str
        The partition.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for a bad prompt, or an id that is not a whole number.
    """
    d, draft = _current(app)
    new = draft.with_prompt(check_prompt(prompt)).with_seg_id(_seg_id(seg_id, d))
    part = " ".join(str(partition or "").split())[:40]
    d.set_draft(new.with_partition(part))
    return f"SEG {new.seg_id} updated."


# -- images -------------------------------------------------------------------------------------------

def _unique_name(d: Drafts, draft: SegDraft, name: str, suffix: str) -> str:
    """The dataset file name of an image called ``name`` by its uploader, new in the session.

    The server's tidy one (:func:`ts2viz.authoring.safe_file_name`), with the ending of its checked type.
    """
    taken = {im.file_name for x in d.drafts for im in x.images} | {im.file_name for im in draft.images}
    stem = PurePosixPath(str(name).replace("\\", "/")).name.rsplit(".", 1)[0]
    return safe_file_name(f"{stem}{suffix}", taken)


def _room(d: Drafts, caps: AuthoringCaps, n_new: int, new_bytes: int = 0) -> None:
    held = sum(len(x.images) for x in d.drafts)
    if held + n_new > caps.max_images:
        raise InputError(f"a session may hold at most {caps.max_images} images (it has {held})")
    if d.bytes_held + new_bytes > caps.max_total_bytes:
        raise InputError(f"a session may hold at most {caps.max_total_bytes // (1024 * 1024)} MB of images")


def image_caps(caps: AuthoringCaps):
    """The check every image of a session passes (uploads and imported images alike).

    Parameters
    ----------
    caps : AuthoringCaps
        The session's caps.

    Returns
    -------
    ts2viz.imagecheck.ImageCaps
        Bytes, pixels, frames and trailing bytes of one image.
    """
    from ...imagecheck import ImageCaps

    return ImageCaps(max_bytes=caps.max_image_bytes, max_pixels=caps.max_pixels, max_frames=caps.max_frames,
                     max_trailing_bytes=caps.max_trailing_bytes)


def _checked_image(path: Path, caps: AuthoringCaps, name: str):
    """``(ImageInfo, thumbnail data URI)`` of an image file checked as every image of a session is.

    :func:`ts2viz.imagecheck.open_checked`; the thumbnail is made from the frame the check decoded, so
    nothing is decoded again while the tab is drawn.
    """
    from ...imagecheck import open_checked

    pic, info = open_checked(path, image_caps(caps), name=name, reduce_to=4 * THUMB_PX)
    return info, _thumb_of(pic)


def _thumb_of(pic) -> str | None:
    try:
        pic = pic.copy()
        pic.thumbnail((THUMB_PX, THUMB_PX))
        buf = io.BytesIO()
        pic.convert("RGB").save(buf, format="JPEG", quality=80)
    except Exception:  # noqa: BLE001 - a thumbnail that cannot be made is a placeholder tile
        return None
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


#: images one call may add
MAX_IMAGES_PER_CALL = 32


def add_uploads(app, files, source: str = "") -> str:
    """Add uploaded images to the SEG being edited (unassigned).

    The tab's "Add uploaded images" button (in the files lane): an action, after which the tab shows the session's
    SEGs again (:func:`authoring_state`).

    Each is checked as every image of the session is (bytes, structure, frames, bytes beyond its end, type,
    pixels, a first frame that decodes: :func:`ts2viz.imagecheck.open_checked`) within the session's caps and
    disk budget, and copied into the session's own folder under a file name the server makes
    (``images/<tidied name>.<type>``). A cancel stops it between images.

    Parameters
    ----------
    app : AppView
        The session's view.
    files : list
        The uploaded files (paths or Gradio file objects), at most :data:`MAX_IMAGES_PER_CALL`.
    source : str, default ""
        Where they come from (``image_source``; at most 60 characters).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for no image or too many, a file outside the upload folder (public mode), an
        image refused by the check, or a session at its image, byte or disk caps.
    """
    from ..state import disk
    from ..serving.jobs import checkpoint

    d, draft = _current(app)
    caps = caps_for(app)
    paths = [f if isinstance(f, (str, Path)) else getattr(f, "name", None) for f in (files or [])]
    paths = [p for p in paths if p]
    if not paths:
        raise InputError("upload at least one image")
    if len(paths) > MAX_IMAGES_PER_CALL:
        raise InputError(f"at most {MAX_IMAGES_PER_CALL} images at a time")
    paths = [visitor_file(app, p) for p in paths]
    if app.access.public:
        for p in paths:
            app.workspace.own_file(p)
    _room(d, caps, len(paths))
    src = " ".join(str(source or "").split())[:60]
    checked = []
    for p in paths:
        checkpoint()
        info, thumb = _checked_image(p, caps, p.name)
        checked.append((p, info, thumb))
    total = sum(info.size for _, info, _ in checked)
    _room(d, caps, len(paths), total)
    disk.require(app, total, "adding these images")
    folder = d.folder("images")
    with d.lock:
        for p, info, thumb in checked:
            suffix = SUFFIX_OF.get(info.format, ".png")
            key = f"up-{d.next_id()}-{secrets.token_hex(3)}"
            dest = folder / f"{key}{suffix}"
            shutil.copyfile(p, dest)
            d.files[key] = dest
            d.sizes[key] = info.size
            d.thumbs[key] = thumb
            d.bytes_held += info.size
            draft = draft.add_image(key, _unique_name(d, draft, p.name, suffix), None, src)
        d.set_draft(draft)
    disk.refresh(app)
    return f"Added {plural(len(checked), 'image')}; select them and put them into a node."


def add_folder(app, folder, source: str = "") -> str:
    """Add the images of a local folder of this machine.

    The tab's "Add folder" button (operator mode only; in the files lane): an action, after which the tab shows the
    session's SEGs again (:func:`authoring_state`).

    Each is checked as an upload is; they are read from where they are when the SEG is exported.

    Parameters
    ----------
    app : AppView
        The session's view.
    folder : str
        The folder.
    source : str, default ""
        Where they come from.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        In public mode (a visitor never names a server path); when no SEG is being edited, for something that is not
        a folder or holds no image, an image refused by the check, or a session at its image cap.
    """
    if app.access.public:
        raise InputError("adding a folder of the server is not available here; upload the images")
    d, draft = _current(app)
    caps = caps_for(app)
    root = Path(str(folder or "").strip()).expanduser()
    if not str(folder or "").strip() or not root.is_dir():
        raise InputError("not a folder", file=root)
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise InputError(f"no image files ({', '.join(IMAGE_SUFFIXES)}) in the folder", file=root)
    _room(d, caps, len(files))
    src = " ".join(str(source or "").split())[:60]
    for p in files:
        check_upload(p, max_bytes=caps.max_image_bytes)
    with d.lock:
        for p in files:
            key = f"lf-{d.next_id()}-{secrets.token_hex(3)}"
            d.files[key] = p.resolve()
            draft = draft.add_image(key, _unique_name(d, draft, p.name, p.suffix.lower()), None, src)
        d.set_draft(draft)
    return f"Added {plural(len(files), 'image')} from the folder."


def _keys(draft: SegDraft, keys) -> list[str]:
    ks = [str(k) for k in (keys or [])]
    if not ks:
        raise InputError("select one or more images first")
    have = {im.key for im in draft.images}
    bad = [k for k in ks if k not in have]
    if bad:
        raise InputError("an image selected is not in this SEG; select again")
    return ks


def assign_images(app, keys, node) -> str:
    """Put the selected images into a node, or take them out of their nodes.

    The tab's "Put into node" and "Take out" buttons: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    keys : list of str
        The selected images' keys.
    node : str or None
        The node (empty: take them out of their nodes).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for no selection, an image not of this SEG, or a node it does not have.
    """
    d, draft = _current(app)
    ks = _keys(draft, keys)
    label = str(node or "").strip() or None
    if label is not None and not draft.has_node(label):
        raise InputError(f"no node {label!r} in this SEG; add it first")
    d.set_draft(draft.assign(ks, label))
    return f"{plural(len(ks), 'image')} " + (f"put into node {label}." if label else "taken out of their nodes.")


def remove_images(app, keys) -> str:
    """Remove the selected images from the SEG being edited.

    The tab's "Remove images" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Their files go once no SEG and no state undo can go back to uses them.

    Parameters
    ----------
    app : AppView
        The session's view.
    keys : list of str
        The selected images' keys.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for no selection, or an image not of this SEG.
    """
    d, draft = _current(app)
    ks = _keys(draft, keys)
    for k in ks:
        draft = draft.remove_image(k)
    with d.lock:
        d.set_draft(draft)
        _drop_unused_files(d)
    return f"Removed {plural(len(ks), 'image')}."


def _drop_unused_files(d: Drafts) -> None:
    """Let go of the images no draft and no state undo can go back to uses.

    The session's copies are deleted, and an imported dataset's folder once none of its images is used any
    more.
    """
    used = d.keys_in_use()
    for k in [k for k in d.remote if k not in used]:
        d.remote.pop(k)
        d.bytes_held -= d.sizes.pop(k, 0)
        d.thumbs.pop(k, None)
    for k in [k for k in d.files if k not in used]:
        p = d.files.pop(k)
        d.thumbs.pop(k, None)
        if k.startswith("up-"):            # the session's own copy (a folder's files are the operator's)
            d.bytes_held -= d.sizes.pop(k, 0)
            try:
                p.unlink()
            except OSError:
                pass
    kept = {str(ds.root) for ds, _ in d.remote.values() if getattr(ds, "root", None) is not None}
    imports = Path(d.folder_of()) / "authoring" / "imports"
    if imports.is_dir():
        for sub in imports.iterdir():
            if sub.is_dir() and not sub.name.startswith(".") and str(sub) not in kept:
                shutil.rmtree(sub, ignore_errors=True)


def rename_image(app, keys, file_name) -> str:
    """Change the file name the one selected image gets in the exported dataset.

    The tab's "Rename" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    The operator's name is taken as typed (:func:`~ts2viz.authoring.draft_problems` says if it cannot be one);
    a public visitor's is tidied by the server (:func:`ts2viz.authoring.safe_file_name`, in ``images/``): what a
    visitor types never becomes a path as such.

    Parameters
    ----------
    app : AppView
        The session's view.
    keys : list of str
        The selection (exactly one image).
    file_name : str
        The new file name.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for a selection of more or fewer than one image, or an empty name.
    """
    d, draft = _current(app)
    ks = _keys(draft, keys)
    if len(ks) != 1:
        raise InputError("select exactly one image to rename")
    fn = str(file_name or "").strip()
    if not fn:
        raise InputError("enter the image's new file name, e.g. images/apple-0.png")
    if app.access.public:
        taken = {im.file_name for x in d.drafts for im in x.images if im.key != ks[0]}
        fn = safe_file_name(fn, taken)
    d.set_draft(draft.set_image(ks[0], file_name=fn))
    return f"Image renamed to {fn}."


# -- nodes and edges ----------------------------------------------------------------------------------

def save_node(app, label, errors="") -> str:
    """Add a node, or set the error descriptions of an existing one.

    The tab's "Add node / set its errors" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    label : str
        The node label (``0``, ``1a``, ...; at most :data:`NODE_LABEL_MAX` characters).
    errors : str, default ""
        Its error descriptions, several separated by ``;`` (at most :data:`ERRORS_MAX` characters).

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for an empty or overlong label or errors, or a SEG the new node would make too
        large.
    """
    d, draft = _current(app)
    lbl = _label(label)
    errs = str(errors or "")
    if len(errs) > ERRORS_MAX:
        raise InputError(f"error descriptions have at most {ERRORS_MAX} characters")
    if draft.has_node(lbl):
        d.set_draft(draft.set_node_errors(lbl, errs))
        return f"Node {lbl}: errors set."
    note = _set(app, d, draft.add_node(lbl, errs))
    return f"Added node {lbl}." + note


def remove_node(app, label) -> str:
    """Remove a node; its images become unassigned.

    The tab's "Remove node" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    label : str
        The node label.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, or for a node the SEG does not have.
    """
    d, draft = _current(app)
    lbl = _label(label)
    if not draft.has_node(lbl):
        raise InputError(f"no node {lbl!r} in this SEG")
    note = _set(app, d, draft.remove_node(lbl))
    return f"Removed node {lbl}; its images are unassigned." + note


def rename_node(app, old, new) -> str:
    """Relabel a node; its images and edges follow it.

    Parameters
    ----------
    app : AppView
        The session's view.
    old : str
        The current label.
    new : str
        The new label.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for a node the SEG does not have, or a bad label.
    """
    d, draft = _current(app)
    o, n = _label(old), _label(new)
    if not draft.has_node(o):
        raise InputError(f"no node {o!r} in this SEG")
    note = _set(app, d, draft.rename_node(o, n))
    return f"Node {o} is now {n}." + note


def set_edges_follow(app, follow: bool) -> str:
    """Make edges follow the error counts, or make them explicit.

    The tab's "Edges follow the error counts" checkbox: an action, after which the tab shows the session's SEGs
    again (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    follow : bool
        Follow the error counts (as TS2 does without ``edges.csv``); else the current edges become
        explicit, to be drawn one by one.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, or for a SEG the change would make too large.
    """
    d, draft = _current(app)
    note = _set(app, d, draft.follow_error_counts() if follow else draft.explicit_edges())
    return ("Edges follow the error counts." if follow else "Edges are explicit: add or remove them.") + note


def add_edge(app, parent, child) -> str:
    """Add an explicit edge between two nodes of the SEG.

    The tab's "Add edge" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    parent : str
        The parent node (fewer errors).
    child : str
        The child node.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, for a node the SEG does not have, or a SEG the edge would make too large.
    """
    d, draft = _current(app)
    a, b = _label(parent), _label(child)
    for lbl in (a, b):          # an edge between nodes of the SEG only (the loader's rule, checked as it comes)
        if not draft.has_node(lbl):
            raise InputError(f"no node {lbl!r} in this SEG; add it first")
    note = _set(app, d, draft.add_edge(a, b))
    return f"Edge {a} → {b} added." + note


def remove_edge(app, parent, child) -> str:
    """Remove an edge (the implied edges become explicit first).

    The tab's "Remove edge" button: an action, after which the tab shows the session's SEGs again
    (:func:`authoring_state`).

    Parameters
    ----------
    app : AppView
        The session's view.
    parent : str
        The parent node.
    child : str
        The child node.

    Returns
    -------
    str
        The one-line message shown in the tab's message box.

    Raises
    ------
    InputError
        When no SEG is being edited, or for an edge the SEG does not have.
    """
    d, draft = _current(app)
    a, b = _label(parent), _label(child)
    try:
        d.set_draft(draft.remove_edge(a, b))       # fewer edges: never more walks
    except KeyError:
        raise InputError(f"no edge {a} → {b} in this SEG") from None
    return f"Edge {a} → {b} removed."


# -- what the tab shows --------------------------------------------------------------------------------

def _image_file(app, d: Drafts, im: DraftImage, *, fetch: bool = True) -> Path | None:
    """The local file of a draft image.

    The session's copy, an operator's file, or a dataset's (the loaded one's, an imported one's),
    downloaded from its hub repo if ``fetch`` (else only a copy already here).
    """
    from ...dataset import cached_image, fetch_image

    if im.key in d.files:
        return d.files[im.key]
    if im.key.startswith(DATASET_KEY):
        ds, fn = app.dataset, im.key[len(DATASET_KEY):]
    elif im.key in d.remote:
        ds, fn = d.remote[im.key]
    else:
        return None
    if not ds.has_image(fn):
        return None
    return fetch_image(ds, fn) if fetch else (ds.image_path(fn) or cached_image(ds, fn))


def _thumb_uri(app, d: Drafts, im: DraftImage) -> str | None:
    """A draft image's thumbnail.

    Images a session added have theirs from their check (made once, in the call that added them); a public
    app never decodes an image while drawing the tab. The operator's own images (a folder, an imported
    dataset folder) are decoded once here, and an image that cannot be made into one is remembered as such
    (not decoded again on every edit).
    """
    if im.key.startswith(DATASET_KEY):
        return app.thumbs.data_uri(im.key[len(DATASET_KEY):], placeholder=False)
    cache = d.thumbs
    if im.key in cache:
        return cache[im.key]
    if app.access.public:
        return None
    p = _image_file(app, d, im, fetch=False)      # a thumbnail never waits on the network
    if p is None:
        return None
    uri = None
    try:
        from PIL import Image

        with Image.open(p) as pic:
            if pic.size[0] * pic.size[1] <= caps_for(app).max_pixels:
                pic.draft("RGB", (THUMB_PX, THUMB_PX))
                pic.seek(0)
                uri = _thumb_of(pic)
    except Exception:  # noqa: BLE001 - a thumbnail that cannot be made is a placeholder tile
        uri = None
    cache[im.key] = uri                          # a failure is remembered too
    return uri


def draft_choices(app) -> list[tuple[str, str]]:
    """The session's SEGs as (shown, value) pairs for the SEG picker.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    list of (str, str)
        ``("SEG id: prompt", position)`` pairs.
    """
    d = drafts_of(app)
    if d is None:
        return []
    return [(f"SEG {x.seg_id}: {x.prompt[:50]}", str(i)) for i, x in enumerate(d.drafts)]


def problems_md(problems, warnings=()) -> str:
    """The problems (what stops an export), then the warnings (what loads but may not be meant), as Markdown.

    Parameters
    ----------
    problems : sequence of DraftProblem
        The SEG's problems (:func:`ts2viz.authoring.draft_problems`; the first 60 listed).
    warnings : sequence of DraftProblem, default ()
        Its warnings (:func:`ts2viz.authoring.draft_warnings`).

    Returns
    -------
    str
        The Markdown (messages escaped).
    """
    warn = "".join(f"\n- ⚠ {_md(w.message)}" for w in warnings)
    if not problems:
        return "✓ **No problems**: this SEG would load as it is." + (f"\n\nWorth a look:{warn}" if warn else "")
    items = "\n".join(f"- {_md(p.message)}" for p in problems[:60])
    more = f"\n- … and {len(problems) - 60} more" if len(problems) > 60 else ""
    return (f"**{plural(len(problems), 'problem')}** (each as the dataset loader reports it):\n{items}{more}"
            + (f"\n\nWorth a look:{warn}" if warn else ""))


def _md(text: str) -> str:
    from ...display import md_text

    return md_text(" ".join(str(text).split()))


def _graph(app, d: Drafts, draft: SegDraft, means=None, metric=None, lower=False, walk=None, walk_name="") -> str:
    from ..views.graph import seg_graph_html

    # the sound part of the draft, drawn while the rest still has problems (listed beside it)
    seg = preview_seg(draft)
    if seg is None:
        return '<div class="authoring-empty">The graph is drawn from the error-0 node on: add node 0 and its images.</div>'
    
    by_name = {im.file_name: im for im in draft.images}
    return seg_graph_html(seg, node_means=means or {}, metric=metric, lower_is_better=lower,
                          thumb_uri=lambda fn: _thumb_uri(app, d, by_name[fn]) if fn in by_name else None,
                          walk=walk, walk_name=walk_name)


def authoring_state(app) -> dict:
    """What the tab shows of the SEG being edited (after every action, and when the tab is drawn).

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    dict
        ``drafts`` (picker choices), ``current`` (its value or ``None``), ``header`` (prompt, seg_id,
        partition), ``labels`` (node labels by level), ``images`` ((shown, key) pairs for the selection),
        ``gallery`` ((thumbnail data URI or ``None``, caption) pairs), ``nodes`` (rows: node, errors,
        images), ``edges`` (list of pairs), ``follow`` (edges follow error counts), ``problems``
        (messages), ``warnings`` (what loads but may not be meant), ``problems_md``, ``graph`` (HTML: the
        sound part of the draft while it has problems).
    """
    d = drafts_of(app)
    draft = d.draft if d is not None else None
    out = {"drafts": draft_choices(app), "current": None, "header": ("", None, "Custom"), "labels": [],
           "images": [], "gallery": [], "nodes": [], "edges": [], "follow": True, "problems": [], "warnings": [],
           "problems_md": "*Start a SEG: a prompt and images, or a SEG of the dataset to vary.*",
           "graph": '<div class="authoring-empty">No SEG yet.</div>'}
    if draft is None:
        return out
    probs, warns = draft_problems(draft), draft_warnings(draft)
    labels = list(draft.sorted_labels())
    out.update(
        current=str(d.current), header=(draft.prompt, draft.seg_id, draft.partition), labels=labels,
        images=[(f"{im.file_name} [{im.node if im.node is not None else 'no node'}]", im.key) for im in draft.images],
        gallery=[(_thumb_uri(app, d, im), f"{im.file_name} · {im.node if im.node is not None else 'no node'}")
                 for im in draft.images],
        nodes=[{"node": lbl, "errors": "; ".join(draft.node(lbl).errors),
                "images": len(draft.images_of(lbl))} for lbl in labels],
        edges=list(draft.effective_edges), follow=draft.edges is None,
        problems=[p.message for p in probs], warnings=[w.message for w in warns],
        problems_md=problems_md(probs, warns), graph=_graph(app, d, draft))
    return out


def gallery_html(state: dict) -> str:
    """The SEG's images as a grid of captioned thumbnails (what the selection boxes name).

    Parameters
    ----------
    state : dict
        What :func:`authoring_state` returns.

    Returns
    -------
    str
        The HTML (captions escaped).
    """
    if not state["gallery"]:
        return '<div class="authoring-empty">No images yet.</div>'
    cells = []
    for uri, cap in state["gallery"]:
        img = (f'<img src="{html.escape(uri, quote=True)}" alt=""/>' if uri
               else '<span class="ph">no preview</span>')
        cells.append(f'<figure>{img}<figcaption>{html.escape(cap)}</figcaption></figure>')
    return f'<div class="authoring-gallery">{"".join(cells)}</div>'


def nodes_table(state: dict):
    """The SEG's nodes as the tab's table.

    Parameters
    ----------
    state : dict
        What :func:`authoring_state` returns.

    Returns
    -------
    pandas.DataFrame
        ``node``, ``errors``, ``images``.
    """
    import pandas as pd

    return pd.DataFrame(state["nodes"], columns=["node", "errors", "images"])


# -- scoring while authoring ---------------------------------------------------------------------------

def loaded_metric_choices(app) -> list[str]:
    """The loaded metrics (shared and the session's): their scores serve the images of the loaded dataset.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    list of str
        The metric names.
    """
    return list(app.metrics)


def _loaded_name(app, d: Drafts, key: str) -> str | None:
    """The loaded dataset's file name of a draft image, when it is one of the loaded dataset's images.

    Taken from it, or imported from the same dataset (same SEGs, file names and labels); else ``None``.
    """
    if key.startswith(DATASET_KEY):
        return key[len(DATASET_KEY):]
    if key in d.remote:
        ds, fn = d.remote[key]
        if ds is app.dataset or (app.dataset.has_image(fn) and ds.fingerprint() == app.dataset.fingerprint()):
            return fn
    return None


def score_draft(app, source: str, metric, mode: str = "paper", device: str | None = None, progress=None) -> dict:
    """Ord/Sep and the walks of the SEG being edited, scored: the tab's "Score" button.

    With a loaded metric (``source='loaded'``: its scores of the loaded dataset's images; images from
    elsewhere stay unscored) or with a metric of the library (``source='library'``: every image scored now,
    in the model lane; in public mode only the metrics the app offers, by display name). The SEG's walks
    are counted first: past the session's walk cap it is refused (a visitor) or warned about (the
    operator).

    Parameters
    ----------
    app : AppView
        The session's view.
    source : str
        ``"loaded"`` or ``"library"``.
    metric : str or list of str
        A loaded metric's name, or a library spec.
    mode : str, default "paper"
        The meta-metric policy preset.
    device : str or None, default None
        The visitor's device choice (operator mode only).
    progress : callable or None, default None
        Gradio's progress callback.

    Returns
    -------
    dict
        ``message``, ``summary`` (Markdown: Ord, Sep, signed Sep, the hardest walk), ``walks`` (a DataFrame,
        worst Ord first, x100) and ``graph`` (HTML, nodes coloured by their mean, the hardest walk drawn).

    Raises
    ------
    InputError
        When no SEG is being edited, for a SEG with problems (the first), too many walks (a visitor), a metric not
        loaded or not offered, one that does not load, or no image scored.
    """
    import pandas as pd

    from ...metametrics import compute
    from ...scores import Scores
    from ...statistics.ord_sep import node_means
    from .common import get_metric, walk_label

    from ...policy import resolve_policy

    d, draft = _current(app)
    ds = drafts_to_dataset(draft, name=f"draft SEG {draft.seg_id}")   # an InputError: the first problem
    seg = ds[draft.seg_id]
    # the cost first: one row per walk is built below (counted here, none enumerated)
    caps = caps_for(app)
    n_walks = seg.n_walks(resolve_policy(mode).repeat_root)
    warn = ""
    if n_walks > caps.max_walks:
        if caps.refuse_walks:
            raise InputError(f"SEG {seg.id} has {n_walks:,} walks; at most {caps.max_walks:,} are scored here "
                             "(remove nodes or draw fewer edges)")
        warn = f" ⚠ {n_walks:,} walks (more than {caps.max_walks:,}): this takes memory and time."
    names = [im.file_name for n in seg.nodes for im in n.images]
    by_name = {im.file_name: im for im in draft.images}
    if source == "loaded":
        name = get_metric(app, metric)
        vals = np.full(len(names), np.nan)
        for i, fn in enumerate(names):
            own = _loaded_name(app, d, by_name[fn].key)
            if own is not None:
                vals[i] = app.image_scores([own], [name])[0, 0]
        lower = app.lower_is_better(name)
    else:
        spec = app.access.metric_spec(parse_specs(metric)[0])
        dev = app.access.device(device)
        m = load_metric(app, spec, dev)
        name = m.spec
        lower = not getattr(m, "higher_is_better", True)
        todo = [fn for fn in names if (name, by_name[fn].key) not in d.scores]
        if todo:
            from PIL import Image

            from ... import engine
            from ..serving.gpu import on_gpu

            from ..serving.jobs import checkpoint

            imgs = []
            for fn in todo:
                checkpoint()
                p = _image_file(app, d, by_name[fn])
                if p is None:
                    raise InputError(f"the image {fn} cannot be had to score (not on disk here)")
                with Image.open(p) as pic:
                    if pic.size[0] * pic.size[1] > caps.max_pixels:     # an operator's own file, unchecked
                        raise InputError(f"the image {fn} is over {caps.max_pixels:,} pixels")
                    pic.draft("RGB", (2048, 2048))
                    pic.seek(0)
                    one = pic.convert("RGB")
                    if max(one.size) > 2048:     # kept small: every metric's processor resizes to far less
                        one.thumbnail((2048, 2048))
                    imgs.append(one)
            if progress is not None:
                progress(0.2, desc=f"scoring {plural(len(imgs), 'image')} with {app.access.display_name(spec)}")

            def batches(*_):     # between the engine's batches: a cancel stops the work here
                checkpoint()

            got = np.asarray(on_gpu(engine.score_images)(m, imgs, [seg.prompt] * len(imgs),
                                                         cache_dir=app.cache_root, use_cache=not app.access.public,
                                                         progress=batches),
                             dtype=float)
            with d.lock:
                for fn, v in zip(todo, got):
                    d.scores[(name, by_name[fn].key)] = float(v)
        vals = np.array([d.scores.get((name, by_name[fn].key), np.nan) for fn in names])
    n_scored = int(np.isfinite(vals).sum())
    if n_scored == 0:
        raise InputError(f"{name} has no score for any image of this SEG (only images of the loaded dataset "
                         "have loaded scores; score with a metric of the library instead)")
    sc = Scores(names, [name], vals.reshape(-1, 1), {name} if lower else set(), source="draft")
    mm = compute(ds, sc, [name], mode)
    row = mm.segs().iloc[0]
    walks = mm.walks(seg.id)
    ns = {n.label: np.array([vals[names.index(im.file_name)] for im in n.images]) for n in seg.nodes}
    # the walk's scored images, each once (the meta-metrics' n_images counts node 0's twice in paper mode,
    # which repeats the root as the published code does: "3/3 images scored" beside "images 4" read wrong)
    scored = {label: int(np.isfinite(v).sum()) for label, v in ns.items()}
    table = pd.DataFrame({"walk": walks["walk"], "path": [walk_label(p.split(">")) for p in walks["path"]],
                          "ord": walks["ord"] * 100, "sep": walks["sep"] * 100,
                          "signed sep": walks["signed_sep"] * 100,
                          "images": [sum(scored.get(x, 0) for x in dict.fromkeys(p.split(">"))) for p in walks["path"]]})
    table = table.sort_values(["ord", "walk"], na_position="last", kind="stable").reset_index(drop=True)
    means = node_means(ns)
    worst = table.iloc[0] if len(table) else None
    wpath = list(walks["path"][walks["walk"] == int(worst["walk"])].iloc[0].split(">")) if worst is not None else None

    def pct(v) -> str:
        return "–" if v is None or not np.isfinite(v) else f"{100 * v:.1f}"

    summary = (f"**{_md(name)}** on SEG {seg.id} ({mode}): **Ord {pct(row['ord'])}**, **Sep {pct(row['sep'])}**, "
               f"signed Sep {pct(row['signed_sep'])} over {plural(int(row['n_walks']), 'walk')} "
               f"({n_scored}/{len(names)} images scored; x100, higher = the metric tells the errors apart better)."
               + (" Paper mode counts node 0's images twice in each walk's Ord, as the published code does."
                  if resolve_policy(mode).repeat_root else "")
               + (f" Hardest walk: {_md(walk_label(wpath))} (Ord {worst['ord']:.1f})." if worst is not None
                  and np.isfinite(worst["ord"]) else ""))
    graph = _graph(app, d, draft, means, name, lower, wpath, f"hardest walk ({walk_label(wpath)})" if wpath else "")
    return {"message": f"Scored SEG {seg.id} with {name}." + warn, "summary": summary, "walks": table, "graph": graph}


# -- export, import, push -----------------------------------------------------------------------------

def _export_to(app, folder: Path, name: str | None, overwrite: bool = False) -> Path:
    from ..serving.jobs import checkpoint

    d = _drafts(app)
    if not d.drafts:
        raise InputError("no SEG to export; start one first")

    def image_bytes(im: DraftImage):
        checkpoint()
        p = _image_file(app, d, im)
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
                p = _image_file(app, d, im, fetch=False)
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
    session's SEGs again (:func:`authoring_state`).

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
    n = len(_drafts(app).drafts)
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
    from ..state import disk

    d = _drafts(app)
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
    d = _drafts(app)
    caps = caps_for(app)
    if len(d.drafts) + len(drafts) > caps.max_drafts:
        raise InputError(f"a session may author at most {caps.max_drafts} SEGs at once; "
                         f"this dataset has {len(drafts)}")
    new_bytes = sum((sizes or {}).get(im.key, 0) for x in drafts for im in x.images)
    _room(d, caps, sum(len(x.images) for x in drafts), new_bytes)
    notes = [_sized(app, x) for x in drafts]
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
    session's SEGs again (:func:`authoring_state`).

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
    from ...dataset import load_dataset, load_folder

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
    again (:func:`authoring_state`).

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

    from ...authoring.limits import SegSize, implied_edge_count
    from ...dataset import FolderCaps, load_folder
    from ..state import disk
    from ..serving.jobs import checkpoint

    if file is None:
        raise InputError("upload a .zip of a dataset folder")
    p = visitor_file(app, file if isinstance(file, (str, Path)) else getattr(file, "name", file))
    d = _drafts(app)
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
        info, thumb = _checked_image(path, caps, file_name)
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
    (:func:`authoring_state`).

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
    d = _drafts(app)
    work = d.folder("exports") / secrets.token_hex(6)
    try:
        folder = _export_to(app, work / _dataset_name(repo.split("/")[-1]), str(name or "").strip() or repo)
        url = push_to_hub(folder, repo, token=os.environ.get("HF_TOKEN") or None,
                          endpoint=os.environ.get("HF_ENDPOINT") or None, private=bool(private))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return f"Pushed {plural(len(d.drafts), 'SEG')} to {repo}: {url}"


def all_problems_md(app) -> str:
    """The problems of the session's SEGs together, as one dataset (what an export checks), in one line.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    str
        Markdown; empty when the session has no SEG.
    """
    d = drafts_of(app)
    if d is None or not d.drafts:
        return ""
    probs = drafts_problems(d.drafts)
    return ("✓ All SEGs of this session export together." if not probs
            else f"{plural(len(probs), 'problem')} before export: " + "; ".join(_md(p.message) for p in probs[:5])
            + (" …" if len(probs) > 5 else ""))

