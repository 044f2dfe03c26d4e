"""The session's SEG drafts: start one (new or from a dataset SEG), pick, remove, undo, its header."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from ....authoring import SegDraft, draft_from_seg, seg_size
from ....authoring.limits import size_message
from ....display import plural
from ....errors import InputError
from ...state.authoring_session import Drafts, caps_for, drafts_of
from ..live import check_prompt


#: image file endings taken from a local folder (operator mode)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff")


#: an uploaded image's type -> the ending its dataset file name gets
SUFFIX_OF = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp", "BMP": ".bmp", "GIF": ".gif", "TIFF": ".tif"}


THUMB_PX = 96


#: how a draft image's key says where its bytes are
DATASET_KEY = "ds:"


def session_drafts(app, *, create: bool = True) -> Drafts:
    """The session's drafts (:func:`ts2viz.ui.state.authoring_session.drafts_of`), refused when there are none.

    Parameters
    ----------
    app : AppView
        The session's view.
    create : bool, default True
        Make them if the session has none.

    Returns
    -------
    Drafts
        The drafts.

    Raises
    ------
    InputError
        When the session has none (``create`` off, or a read-only view).
    """
    d = drafts_of(app, create=create)
    if d is None:
        raise InputError("start a SEG first (from a prompt, or from a SEG of the dataset)")
    return d


def current_draft(app) -> tuple[Drafts, SegDraft]:
    """The session's drafts and the SEG being edited, refused when none is.

    Parameters
    ----------
    app : AppView
        The session's view.

    Returns
    -------
    tuple of (Drafts, ts2viz.authoring.SegDraft)
        The drafts and the current one.

    Raises
    ------
    InputError
        When no SEG is being edited.
    """
    d = session_drafts(app)
    if d.draft is None:
        raise InputError("start a SEG first (from a prompt, or from a SEG of the dataset)")
    return d, d.draft


def sized_message(app, new: SegDraft, old: SegDraft | None = None) -> str:
    """Check the size of a changed SEG before it is kept.

    :func:`ts2viz.authoring.seg_size`: nodes, edges, error levels, walks counted without building one. A
    part above its cap that the change makes larger is refused (the operator's walks: a warning instead); a
    change that shrinks a SEG is always taken.

    Parameters
    ----------
    app : AppView
        The session's view (its authoring caps).
    new : ts2viz.authoring.SegDraft
        The changed SEG.
    old : ts2viz.authoring.SegDraft or None, default None
        The SEG before the change (``None``: a new SEG).

    Returns
    -------
    str
        The warning to add to the action's message (``""`` if none).

    Raises
    ------
    InputError
        When the change makes a part above its cap larger.
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


def keep_draft(app, d: Drafts, new: SegDraft) -> str:
    """Keep ``new`` as the SEG being edited once its size is checked (:func:`sized_message`).

    Parameters
    ----------
    app : AppView
        The session's view.
    d : Drafts
        The session's drafts.
    new : ts2viz.authoring.SegDraft
        The changed SEG.

    Returns
    -------
    str
        The size warning (``""`` if none).
    """
    note = sized_message(app, new, d.draft)
    d.set_draft(new)
    return note


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
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d = session_drafts(app)
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
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    from ..common import get_seg

    d = session_drafts(app)
    seg = get_seg(app, seg_id)
    base = draft_from_seg(app.dataset, seg.id)
    images = tuple(replace(im, key=DATASET_KEY + im.file_name) for im in base.images)
    caps = caps_for(app)
    held = sum(len(x.images) for x in d.drafts)
    if held + len(images) > caps.max_images:
        raise InputError(f"a session may hold at most {caps.max_images} images; this SEG has {len(images)}")
    sid = base.seg_id if all(x.seg_id != base.seg_id for x in d.drafts) else _next_seg_id(d)
    draft = replace(base, images=images, seg_id=sid)
    note = sized_message(app, draft)
    d.add_draft(draft, caps)
    return (f"Started a variant of SEG {seg.id} ({plural(len(images), 'image')}, {plural(len(seg.nodes), 'node')})."
            + note)


def select_draft(app, index) -> str:
    """Edit another SEG of the session.

    The tab's SEG picker: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d = session_drafts(app)
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
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d, draft = current_draft(app)
    with d.lock:
        d.remember()
        d.drafts.pop(d.current)
        d.current = min(d.current, len(d.drafts) - 1)
        drop_unused_files(d)
    return f"Removed SEG {draft.seg_id}."


def undo(app) -> str:
    """Take back the session's last change (up to :data:`~ts2viz.ui.state.authoring_session.MAX_UNDO`).

    The tab's "Undo" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d = session_drafts(app)
    d.undo()
    return "Undone." + (f" Editing SEG {d.draft.seg_id}." if d.draft is not None else "")


def set_header(app, prompt, seg_id, partition) -> str:
    """Change the prompt, SEG id and partition of the SEG being edited.

    The tab's "Save prompt / id" button: an action, after which the tab shows the session's SEGs again
    (:func:`~ts2viz.ui.callbacks.authoring.view.authoring_state`).

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
    d, draft = current_draft(app)
    new = draft.with_prompt(check_prompt(prompt)).with_seg_id(_seg_id(seg_id, d))
    part = " ".join(str(partition or "").split())[:40]
    d.set_draft(new.with_partition(part))
    return f"SEG {new.seg_id} updated."


def drop_unused_files(d: Drafts) -> None:
    """Let go of the images no draft and no state undo can go back to uses.

    The session's copies are deleted, and an imported dataset's folder once none of its images is used any
    more.

    Parameters
    ----------
    d : Drafts
        The session's drafts.
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
