"""A draft's images: uploads and folders checked within the session's caps, assigned to nodes, renamed, removed."""
from __future__ import annotations

import base64
import io
import secrets
import shutil
from pathlib import Path, PurePosixPath

from ....authoring import SegDraft, safe_file_name
from ....display import plural
from ....errors import InputError
from ...state.authoring_session import AuthoringCaps, Drafts, caps_for
from ..common import owned_visitor_files, uploaded_image_paths
from ..live import check_upload
from .drafts import IMAGE_SUFFIXES, SUFFIX_OF, THUMB_PX, current_draft, drop_unused_files


def _unique_name(d: Drafts, draft: SegDraft, name: str, suffix: str) -> str:
    """The dataset file name of an image called ``name`` by its uploader, new in the session.

    The server's tidy one (:func:`ts2viz.authoring.safe_file_name`), with the ending of its checked type.
    """
    taken = {im.file_name for x in d.drafts for im in x.images} | {im.file_name for im in draft.images}
    stem = PurePosixPath(str(name).replace("\\", "/")).name.rsplit(".", 1)[0]
    return safe_file_name(f"{stem}{suffix}", taken)


def check_room(d: Drafts, caps: AuthoringCaps, n_new: int, new_bytes: int = 0) -> None:
    """Refuse images past the session's caps: the images it holds, and their bytes.

    Parameters
    ----------
    d : Drafts
        The session's drafts.
    caps : AuthoringCaps
        Its caps.
    n_new : int
        The images to add.
    new_bytes : int, default 0
        Their bytes.

    Raises
    ------
    InputError
        When they would not fit.
    """
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
    from ....imagecheck import ImageCaps

    return ImageCaps(max_bytes=caps.max_image_bytes, max_pixels=caps.max_pixels, max_frames=caps.max_frames,
                     max_trailing_bytes=caps.max_trailing_bytes)


def checked_image(path: Path, caps: AuthoringCaps, name: str):
    """An image file checked as every image of a session is, and its thumbnail.

    :func:`ts2viz.imagecheck.open_checked`; the thumbnail is made from the frame the check decoded, so
    nothing is decoded again while the tab is drawn.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    caps : AuthoringCaps
        The session's caps.
    name : str
        How messages name the file.

    Returns
    -------
    tuple
        ``(ImageInfo, thumbnail data URI or None)``.
    """
    from ....imagecheck import open_checked

    pic, info = open_checked(path, image_caps(caps), name=name, reduce_to=4 * THUMB_PX)
    return info, thumb_of(pic)


def thumb_of(pic) -> str | None:
    """A small JPEG of an image as a data URI (the gallery's tile).

    Parameters
    ----------
    pic : PIL.Image.Image
        The image.

    Returns
    -------
    str or None
        The data URI; ``None`` when no thumbnail can be made (a placeholder tile is shown).
    """
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
    SEGs again (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    from ...state import disk
    from ...serving.jobs import checkpoint

    d, draft = current_draft(app)
    caps = caps_for(app)
    paths = owned_visitor_files(app, uploaded_image_paths(files, MAX_IMAGES_PER_CALL))
    check_room(d, caps, len(paths))
    src = " ".join(str(source or "").split())[:60]
    checked = []
    for p in paths:
        checkpoint()
        info, thumb = checked_image(p, caps, p.name)
        checked.append((p, info, thumb))
    total = sum(info.size for _, info, _ in checked)
    check_room(d, caps, len(paths), total)
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
    session's SEGs again (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d, draft = current_draft(app)
    caps = caps_for(app)
    root = Path(str(folder or "").strip()).expanduser()
    if not str(folder or "").strip() or not root.is_dir():
        raise InputError("not a folder", file=root)
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise InputError(f"no image files ({', '.join(IMAGE_SUFFIXES)}) in the folder", file=root)
    check_room(d, caps, len(files))
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
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d, draft = current_draft(app)
    ks = _keys(draft, keys)
    label = str(node or "").strip() or None
    if label is not None and not draft.has_node(label):
        raise InputError(f"no node {label!r} in this SEG; add it first")
    d.set_draft(draft.assign(ks, label))
    return f"{plural(len(ks), 'image')} " + (f"put into node {label}." if label else "taken out of their nodes.")


def remove_images(app, keys) -> str:
    """Remove the selected images from the SEG being edited.

    The tab's "Remove images" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d, draft = current_draft(app)
    ks = _keys(draft, keys)
    for k in ks:
        draft = draft.remove_image(k)
    with d.lock:
        d.set_draft(draft)
        drop_unused_files(d)
    return f"Removed {plural(len(ks), 'image')}."


def rename_image(app, keys, file_name) -> str:
    """Change the file name the one selected image gets in the exported dataset.

    The tab's "Rename" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d, draft = current_draft(app)
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
