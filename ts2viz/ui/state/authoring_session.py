"""A session's SEG drafts in the authoring tab (private to it, dropped with it).

The drafts (:class:`ts2viz.authoring.SegDraft`, immutable) and the image files they name live beside
the session's :class:`~ts2viz.ui.state.workspace.Workspace`: made on the first authoring action, closed when the
tab closes or after the idle timeout (:data:`ts2viz.ui.state.session_store.CLOSE_HOOKS` drops them then; the image
files lie in the session's own downloads folder, which the workspace deletes). An image is known by an
opaque key the server makes (``up-…`` an upload, ``ds:FILE`` an image of the loaded dataset, ``im-…``
an image of an imported dataset); what a visitor typed never becomes a path.

Caps (public mode: :data:`PUBLIC_CAPS`): SEGs and images per session, bytes of one image and of all.
"""
from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ...authoring import SegDraft
from ...errors import InputError
from .session_store import SessionStore


@dataclass(frozen=True)
class AuthoringCaps:
    """What one session may hold in the authoring tab.

    Parameters
    ----------
    max_drafts : int
        SEGs being authored at once.
    max_images : int
        Images over all its drafts (uploads and imports).
    max_image_bytes : int
        Bytes of one image file.
    max_total_bytes : int
        Bytes of all its image files.
    max_zip_bytes : int
        Bytes of an uploaded dataset .zip.
    max_zip_members : int
        Files in it.
    max_unzipped_bytes : int
        Bytes it unpacks to.
    max_nodes : int, default 64
        Nodes of one SEG.
    max_edges : int, default 512
        Edges of one SEG (explicit or implied).
    max_levels : int, default 16
        Distinct error levels of one SEG.
    max_walks : int, default 5000
        Walks of one SEG (counted, never enumerated: :func:`ts2viz.authoring.seg_size`).
    refuse_walks : bool, default True
        Above ``max_walks``: refused (a visitor) or accepted with a warning (the operator).
    max_csv_bytes : int, default 1 MiB
        Bytes of each dataset file of an imported .zip (``metadata.csv``, ``edges.csv``, ``nodes.csv``:
        read in full only within this).
    max_pixels : int, default 50_000_000
        Pixels of one image (uploads and imported images alike, as :func:`ts2viz.imagecheck.open_checked`
        checks them).
    max_frames : int, default 500
        Frames of one image.
    max_trailing_bytes : int, default 64 KiB
        Bytes a file may hold beyond the end of its image.

    See Also
    --------
    OPERATOR_CAPS : the operator's own app.
    PUBLIC_CAPS : a public app (changed without code by ``TS2VIZ_AUTHORING_CAPS``).
    """

    max_drafts: int          # SEGs being authored at once
    max_images: int          # images over all its drafts (uploads and imports)
    max_image_bytes: int     # one image file
    max_total_bytes: int     # all its image files
    max_zip_bytes: int       # an uploaded dataset .zip
    max_zip_members: int     # files in it
    max_unzipped_bytes: int  # what it unpacks to
    #: one SEG: nodes, edges (explicit or implied), distinct error levels, walks (counted, never
    #: enumerated: :func:`ts2viz.authoring.seg_size`)
    max_nodes: int = 64
    max_edges: int = 512
    max_levels: int = 16
    max_walks: int = 5_000
    #: above ``max_walks``: refused (a visitor) or accepted with a warning (the operator)
    refuse_walks: bool = True
    #: the dataset files of an imported .zip: metadata.csv's rows (images), edges.csv's and nodes.csv's
    #: rows, and the bytes of each of these files (read in full only within these)
    max_csv_bytes: int = 1024 * 1024
    #: pixels and frames of one image (uploads and imported images alike), and bytes a file may hold
    #: beyond the end of its image (checked as :func:`ts2viz.imagecheck.check_image` does)
    max_pixels: int = 50_000_000
    max_frames: int = 500
    max_trailing_bytes: int = 64 * 1024

    @property
    def seg_limits(self):
        """The caps of one SEG as :class:`ts2viz.authoring.SegLimits`."""
        from ...authoring import SegLimits

        return SegLimits(self.max_nodes, self.max_edges, self.max_levels, self.max_walks)


OPERATOR_CAPS = AuthoringCaps(max_drafts=200, max_images=20_000, max_image_bytes=50 * 1024 * 1024,
                              max_total_bytes=20 * 1024 ** 3, max_zip_bytes=4 * 1024 ** 3,
                              max_zip_members=50_000, max_unzipped_bytes=8 * 1024 ** 3,
                              max_nodes=5_000, max_edges=100_000, max_levels=1_000, max_walks=200_000,
                              refuse_walks=False, max_csv_bytes=512 * 1024 * 1024, max_pixels=200_000_000,
                              max_frames=10_000, max_trailing_bytes=1 << 62)
#: a public app: a few small SEGs per visitor (TS2's largest SEG: 18 nodes, 60 edges, 6 error levels,
#: 450 walks)
PUBLIC_CAPS = AuthoringCaps(max_drafts=8, max_images=96, max_image_bytes=5 * 1024 * 1024,
                            max_total_bytes=100 * 1024 * 1024, max_zip_bytes=50 * 1024 * 1024,
                            max_zip_members=200, max_unzipped_bytes=120 * 1024 * 1024)


#: public caps an operator changes without code: ``TS2VIZ_AUTHORING_CAPS="max_walks=20000,max_nodes=100"``
CAPS_ENV = "TS2VIZ_AUTHORING_CAPS"


def caps_from_env(base: AuthoringCaps, text: str | None) -> AuthoringCaps:
    """Caps with some fields changed, as ``TS2VIZ_AUTHORING_CAPS`` says.

    Parameters
    ----------
    base : AuthoringCaps
        The caps to start from.
    text : str or None
        ``name=value`` pairs, comma-separated (``None`` or blank: ``base`` as it is).

    Returns
    -------
    AuthoringCaps
        The changed caps.

    Raises
    ------
    InputError
        For an unknown name or a value that is not a whole number.

    Examples
    --------
    >>> caps = caps_from_env(PUBLIC_CAPS, "max_walks=20000, max_nodes=100")
    >>> caps.max_walks, caps.max_nodes, caps.max_drafts
    (20000, 100, 8)
    """
    if not text or not text.strip():
        return base
    fields = {k: type(v) for k, v in base.__dict__.items()}
    out = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in fields:
            raise InputError(f"{CAPS_ENV}: unknown cap {name!r} (known: {', '.join(fields)})")
        try:
            out[name] = (value.strip().lower() in ("1", "true", "yes")) if fields[name] is bool else int(value)
        except ValueError:
            raise InputError(f"{CAPS_ENV}: {name} must be a whole number, not {value.strip()[:20]!r}") from None
    return AuthoringCaps(**{**base.__dict__, **out})


def caps_for(view) -> AuthoringCaps:
    """The caps of the session a view belongs to.

    Public mode's (with the operator's changes from ``TS2VIZ_AUTHORING_CAPS``), with one image no larger
    than the app's upload cap (``limits.max_upload_bytes``); or the operator's.

    Parameters
    ----------
    view : AppView
        The session's view.

    Returns
    -------
    AuthoringCaps
        The caps.

    Raises
    ------
    InputError
        For a malformed ``TS2VIZ_AUTHORING_CAPS``.
    """
    if not view.access.public:
        return OPERATOR_CAPS
    base = caps_from_env(PUBLIC_CAPS, os.environ.get(CAPS_ENV))
    one = min(base.max_image_bytes, int(view.limits.max_upload_bytes))
    return AuthoringCaps(**{**base.__dict__, "max_image_bytes": one})


#: changes undo can take back, per session
MAX_UNDO = 50


@dataclass
class Drafts:
    """One session's drafts, which one is being edited, and the files of their images.

    Parameters
    ----------
    folder_of : callable
        ``folder_of()`` gives the session's private folder (made on use).
    drafts : list of SegDraft, default []
        The drafts.
    current : int, default -1
        The index of the one being edited (-1: none).
    files : dict of str to pathlib.Path, default {}
        Image key -> its file (uploads, imports).
    remote : dict of str to tuple, default {}
        Image key -> (dataset, file name): an imported image fetched when needed (a hub dataset's).
    bytes_held : int, default 0
        Bytes of the session's image files.
    sizes : dict of str to int, default {}
        Image key -> bytes of its file (the session's copies and unpacked imports; counted in
        ``bytes_held``).
    export : pathlib.Path or None, default None
        The session's last dataset export (.zip): a new one replaces it.
    counter : int, default 0
        The last id given by :meth:`next_id`.
    scores : dict of (str, str) to float, default {}
        Scores of draft images by (metric, key), from live scoring while authoring.
    thumbs : dict of str to str, default {}
        Image key -> its thumbnail (a data URI).
    history : list, default []
        Earlier states (the drafts, which one was edited), newest last, for undo; drafts are immutable, so
        a state is a tuple of references.
    lock : threading.RLock
        Held by every change.
    """

    folder_of: Callable[[], Path]                           # the session's private folder (made on use)
    drafts: list[SegDraft] = field(default_factory=list)
    current: int = -1
    files: dict[str, Path] = field(default_factory=dict)    # image key -> its file (uploads, imports)
    #: image key -> (dataset, file name): an imported image fetched when needed (a hub dataset's)
    remote: dict[str, tuple] = field(default_factory=dict)
    bytes_held: int = 0
    #: image key -> bytes of its file (the session's copies and unpacked imports; counted in bytes_held)
    sizes: dict[str, int] = field(default_factory=dict)
    #: the session's last dataset export (.zip): a new one replaces it
    export: Path | None = None
    counter: int = 0
    #: scores of draft images by (metric, key), from live scoring while authoring
    scores: dict[tuple[str, str], float] = field(default_factory=dict)
    thumbs: dict[str, str] = field(default_factory=dict)     # image key -> its thumbnail (a data URI)
    #: earlier states (the drafts, which one was edited), newest last, for undo; drafts are immutable,
    #: so a state is a tuple of references
    history: list = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __bool__(self) -> bool:
        """Whether the session holds drafts or image files."""
        return bool(self.drafts) or bool(self.files)

    def next_id(self) -> int:
        """A new number for the session's keys and names.

        Returns
        -------
        int
            One more than the last.
        """
        with self.lock:
            self.counter += 1
            return self.counter

    def folder(self, name: str) -> Path:
        """A folder of this session's own (``authoring/NAME`` in its downloads folder), made if missing.

        Parameters
        ----------
        name : str
            The folder's name.

        Returns
        -------
        pathlib.Path
            The folder.
        """
        d = Path(self.folder_of()) / "authoring" / name
        d.mkdir(parents=True, exist_ok=True)
        return d

    @property
    def draft(self) -> SegDraft | None:
        """The draft being edited, or ``None``."""
        return self.drafts[self.current] if 0 <= self.current < len(self.drafts) else None

    def remember(self) -> None:
        """Keep the present state for :meth:`undo` (call before a change; at most :data:`MAX_UNDO` kept)."""
        with self.lock:
            self.history.append((tuple(self.drafts), self.current))
            del self.history[:-MAX_UNDO]

    def undo(self) -> None:
        """Go back to the state before the last change.

        Raises
        ------
        InputError
            When there is nothing to undo.
        """
        with self.lock:
            if not self.history:
                raise InputError("nothing to undo")
            drafts, self.current = self.history.pop()
            self.drafts = list(drafts)

    def set_draft(self, draft: SegDraft) -> None:
        """Replace the draft being edited (remembered for undo when it changed).

        Parameters
        ----------
        draft : SegDraft
            The new version.

        Raises
        ------
        InputError
            When no draft is being edited.
        """
        with self.lock:
            if self.draft is None:
                raise InputError("start a SEG first (from a prompt, or from a SEG of the dataset)")
            if draft != self.draft:
                self.remember()
                self.drafts[self.current] = draft

    def add_draft(self, draft: SegDraft, caps: AuthoringCaps) -> None:
        """Add a draft and edit it.

        Parameters
        ----------
        draft : SegDraft
            The new draft.
        caps : AuthoringCaps
            The session's caps.

        Raises
        ------
        InputError
            Past ``caps.max_drafts``.
        """
        with self.lock:
            if len(self.drafts) >= caps.max_drafts:
                raise InputError(f"a session may author at most {caps.max_drafts} SEGs at once; remove one first")
            self.remember()
            self.drafts.append(draft)
            self.current = len(self.drafts) - 1

    def keys_in_use(self) -> set[str]:
        """Image keys of the drafts and of the states undo can go back to (their files are kept).

        Returns
        -------
        set of str
            The keys.
        """
        with self.lock:
            states = [self.drafts] + [list(h[0]) for h in self.history]
        return {im.key for drafts in states for x in drafts for im in x.images}

    def close(self) -> None:
        """Drop the drafts, their files' records, scores, thumbnails and history."""
        with self.lock:
            self.drafts, self.current, self.files, self.scores, self.thumbs, self.bytes_held = [], -1, {}, {}, {}, 0
            self.remote, self.history, self.sizes, self.export = {}, [], {}, None


def _close_drafts(workspace, drafts: Drafts) -> None:
    drafts.close()
    base = workspace.exports_path()
    if base is not None:     # the workspace deletes its folder too; gone now either way
        shutil.rmtree(os.path.join(base, "authoring"), ignore_errors=True)


#: workspace -> its Drafts (weak: a workspace that is gone takes its drafts with it)
_STORE = SessionStore(lambda ws: Drafts(ws.exports_dir), on_close=_close_drafts)


def drafts_of(view, *, create: bool = False) -> Drafts | None:
    """The session's drafts.

    Parameters
    ----------
    view : AppView
        The session's view.
    create : bool, default False
        Make them if the session has none.

    Returns
    -------
    Drafts or None
        The drafts; ``None`` on a read-only view, or when there are none and ``create`` is off.
    """
    return _STORE.of(view, create=create)
