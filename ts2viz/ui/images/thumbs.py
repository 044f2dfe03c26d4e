"""Thumbnails and gallery-size copies of dataset images, resized once and cached on disk.

Images come from the dataset folder or, for a Hugging Face dataset, are fetched on demand in a
few background threads (:mod:`ts2viz.ui.images.image_fetch`). Whatever happens (offline, missing file,
unreadable or enormous image) a caller gets a path at once: the cached resize, or a placeholder that
says why (loading, offline, missing). Nothing here waits on the network.
"""
from __future__ import annotations

import base64
import hashlib
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, ImageOps

from ...atomic import atomic_path
from .image_fetch import LOADING, MISSING, OFFLINE, READY, VIEW, ImageFetcher

#: Largest image (in pixels) decoded from the dataset. TS2 has images over 8,000 px wide; JPEG
#: draft mode decodes those at a fraction of full size, so only the header's size is checked here.
MAX_DATASET_PIXELS = 400_000_000

THUMB = 96      # node-card thumbnails
GALLERY = 640   # gallery images ("readable size")


#: the images of a node the SEG's graph shows as thumbnails (:mod:`ts2viz.ui.views.graph`)
N_THUMBS = 4


def thumb_files(seg) -> list[str]:
    """The images whose thumbnails the graph of a SEG shows (the first :data:`N_THUMBS` of each node).

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.

    Returns
    -------
    list of str
        Their file names, node by node.
    """
    return [im.file_name for n in seg.nodes for im in n.images[:N_THUMBS]]


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:20]


def open_reduced(path: Path, size: int, *, max_pixels: int = MAX_DATASET_PIXELS) -> Image.Image:
    """Open an image and shrink it to fit ``size`` x ``size`` cheaply.

    JPEGs are decoded at reduced scale (``draft``); other formats are reduced by an integer factor before
    the final resampling. EXIF orientation is applied; transparency is put on white.

    Parameters
    ----------
    path : pathlib.Path
        The image file.
    size : int
        The longest side, in pixels.
    max_pixels : int, default MAX_DATASET_PIXELS
        The largest image opened (from its header).

    Returns
    -------
    PIL.Image.Image
        The reduced image, RGB.

    Raises
    ------
    ValueError
        For an image larger than ``max_pixels``.
    """
    im = Image.open(path)
    w, h = im.size
    if w * h > max_pixels:
        raise ValueError(f"image too large ({w}x{h} pixels)")
    if im.format == "JPEG":
        im.draft("RGB", (size, size))
    im = ImageOps.exif_transpose(im) if hasattr(im, "getexif") else im
    if im.mode not in ("RGB", "L"):
        im = im.convert("RGBA")
        bg = Image.new("RGB", im.size, (255, 255, 255))
        bg.paste(im, mask=im.split()[-1])
        im = bg
    elif im.mode == "L":
        im = im.convert("RGB")
    factor = max(1, min(im.size) // (2 * size)) if min(im.size) > 4 * size else 1
    if factor > 1:
        im = im.reduce(factor)
    im.thumbnail((size, size), Image.Resampling.LANCZOS)
    return im


#: seconds before an image found absent from the local hub cache is looked for there again
ABSENT_RECHECK_S = 10.0


def placeholder(text: str, size: int, note: str = "image unavailable") -> Image.Image:
    """A neutral square with a file name and a short note, for an image that cannot be shown.

    Parameters
    ----------
    text : str
        A file name (its last part is written).
    size : int
        The side, in pixels.
    note : str, default "image unavailable"
        Why (``loading…``, ``offline``, ``image missing``).

    Returns
    -------
    PIL.Image.Image
        The tile, RGB.
    """
    im = Image.new("RGB", (size, size), (238, 240, 244))
    d = ImageDraw.Draw(im)
    d.rectangle([0, 0, size - 1, size - 1], outline=(200, 205, 214))
    try:
        font = ImageFont.load_default(size=max(9, size // 11))
    except TypeError:  # pragma: no cover - old Pillow
        font = ImageFont.load_default()
    name = Path(text).name
    per_line = max(6, int(size / max(6, size // 18)))
    lines = [name[i:i + per_line] for i in range(0, len(name), per_line)][:4] + [note]
    y = size // 2 - len(lines) * (size // 10) // 2
    for ln in lines:
        tw = d.textlength(ln, font=font)
        d.text(((size - tw) / 2, y), ln, fill=(90, 98, 112), font=font)
        y += size // 10 + 2
    return im


class Thumbs:
    """Disk cache of resized dataset images for one dataset.

    ``generation`` is bumped whenever an image arrives from the hub, so that views built without it are
    rebuilt.

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        The dataset.
    folder : pathlib.Path
        The cache folder for this dataset's resized images (made if missing).
    fetch : bool, default True
        Whether images missing locally may be downloaded from the dataset's hub repo (in the background,
        by an :class:`ImageFetcher`; :attr:`fetcher` is ``None`` otherwise).
    timeout : float, default 4.0
        Seconds one download's metadata request may take.
    """

    def __init__(self, dataset, folder: Path, *, fetch: bool = True, timeout: float = 4.0):
        self.dataset = dataset
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.fetch = fetch and dataset.hf_id is not None
        self.timeout = timeout
        self._uri: dict[tuple[str, int], str] = {}
        #: bumped whenever an image arrives from the hub, so that views built without it are rebuilt
        self.generation = 0
        self.fetcher = ImageFetcher(dataset, timeout=timeout, on_arrival=self._arrived) if self.fetch else None
        #: states that stay (an image on disk, a name the dataset does not know), and, without a fetcher, the
        #: time each image was last found absent from the hub cache: a view asks for the state of every
        #: thumbnail of its SEG, twice, and each fresh look is several file-system lookups (offline, a
        #: third of a SEG view's CPU)
        self._settled: dict[tuple[str, int], str] = {}
        self._absent: dict[str, float] = {}
        # (file, size) -> (state, when) of a tile that was not ready in a process without downloads
        self._unready: dict[tuple[str, int], tuple[str, float]] = {}

    # -- paths ---------------------------------------------------------------------------------------------
    def _cached(self, file_name: str, size: int) -> Path:
        return self.folder / f"{size}" / f"{_key(file_name)}.jpg"

    def _placeholder(self, file_name: str, size: int, note: str) -> Path:
        # One tile per note and size, not per image (the gallery's caption names the file): a SEG of
        # missing images costs no image encoding, and the cache holds a handful of files.
        p = self.folder / "placeholder" / f"{_key(note)}_{size}.png"
        if not p.is_file():
            with atomic_path(p) as tmp:
                placeholder("", size, note).save(tmp, format="PNG")
        return p

    def state(self, file_name: str, size: int = THUMB) -> str:
        """What a tile of this image shows now.

        Parameters
        ----------
        file_name : str
            An image of the dataset.
        size : int, default THUMB
            The longest side, in pixels (:data:`THUMB` or :data:`GALLERY`).

        Returns
        -------
        str
            ``ready``, ``loading``, ``offline`` or ``missing``.
        """
        key = (file_name, size)
        known = self._settled.get(key)
        if known is not None:
            return known
        if self.fetcher is None:
            # no downloads here: a tile found not ready is looked for again after ABSENT_RECHECK_S, not at
            # every view (a view's signature reads every tile of its SEG: two file checks each)
            seen = self._unready.get(key)
            if seen is not None and time.monotonic() - seen[1] < ABSENT_RECHECK_S:
                return seen[0]
        if self._cached(file_name, size).is_file() or self.dataset.image_path(file_name) is not None:
            self._settled[key] = READY
            return READY
        if not self.dataset.has_image(file_name):
            self._settled[key] = MISSING
            return MISSING
        if self.fetcher is None:
            if self._local_download(file_name) is not None:
                return READY
            # a hub dataset with downloads off (HF_HUB_OFFLINE): offline; a local folder: missing
            st = OFFLINE if self.dataset.hf_id else MISSING
            self._unready[key] = (st, time.monotonic())
            return st
        return self.fetcher.state(file_name)

    def states(self, file_names, size: int = THUMB) -> tuple[str, ...]:
        """:meth:`state` of each image (a view's signature: it is redrawn when this changes).

        Parameters
        ----------
        file_names : iterable of str
            Images of the dataset.
        size : int, default THUMB
            The longest side, in pixels (:data:`THUMB` or :data:`GALLERY`).

        Returns
        -------
        tuple of str
            Their states.
        """
        return tuple(self.state(f, size) for f in file_names)

    def request(self, file_names, priority: int = VIEW) -> int:
        """Start downloading these images in the background (:meth:`ImageFetcher.request`).

        Parameters
        ----------
        file_names : iterable of str
            Images of the dataset.
        priority : int, default VIEW
            ``VIEW``, ``NEIGHBOUR`` or ``WARM``.

        Returns
        -------
        int
            How many were queued (0 without a fetcher).
        """
        return 0 if self.fetcher is None else self.fetcher.request(file_names, priority)

    def _arrived(self, file_name: str) -> None:
        # the graph's thumbnail is made by the download thread, not by the next view
        try:
            self.get(file_name, THUMB)
        except Exception:
            pass
        self.generation += 1

    def get(self, file_name: str, size: int = THUMB) -> tuple[Path, bool]:
        """The resized image's path, or a placeholder's; never blocks long.

        An image not on disk is queued for download and its placeholder says ``loading`` (or ``offline``,
        ``missing``, ``unknown image``, ``unreadable image``).

        Parameters
        ----------
        file_name : str
            An image of the dataset.
        size : int, default THUMB
            The longest side, in pixels (:data:`THUMB` or :data:`GALLERY`).

        Returns
        -------
        path : pathlib.Path
            The JPEG of the resized image, or a placeholder PNG.
        real : bool
            True for the image itself.
        """
        out = self._cached(file_name, size)
        if out.is_file():
            return out, True
        src = self.dataset.image_path(file_name)
        if src is None:
            if not self.dataset.has_image(file_name):
                return self._placeholder(file_name, size, "unknown image"), False
            src = self._local_download(file_name)
        if src is None:
            self.request([file_name])
            st = self.state(file_name, size)
            note = {LOADING: "loading…", OFFLINE: "offline", READY: "loading…"}.get(st, "image missing")
            return self._placeholder(file_name, size, note), False
        try:
            im = open_reduced(src, size)
        except Exception:
            return self._placeholder(file_name, size, "unreadable image"), False
        with atomic_path(out) as tmp:
            im.save(tmp, format="JPEG", quality=88)
        return out, True

    def path(self, file_name: str, size: int = THUMB) -> Path:
        """The path :meth:`get` gives (the resized image or a placeholder).

        Parameters
        ----------
        file_name : str
            An image of the dataset.
        size : int, default THUMB
            The longest side, in pixels (:data:`THUMB` or :data:`GALLERY`).

        Returns
        -------
        pathlib.Path
            The file.
        """
        return self.get(file_name, size)[0]

    def data_uri(self, file_name: str, size: int = THUMB, *, placeholder: bool = True) -> str | None:
        """The image as a ``data:`` URI, for inline HTML (memoised once the real image is there).

        Parameters
        ----------
        file_name : str
            An image of the dataset.
        size : int, default THUMB
            The longest side, in pixels (:data:`THUMB` or :data:`GALLERY`).
        placeholder : bool, default True
            Give a placeholder's URI when the image is not available; ``False``: ``None`` then (the caller
            draws its own tile; :meth:`state` says why), and the image is queued for download.

        Returns
        -------
        str or None
            The URI.
        """
        hit = self._uri.get((file_name, size))
        if hit is not None:
            return hit
        p, real = self.get(file_name, size)
        if not real and not placeholder:
            return None
        mime = "image/jpeg" if p.suffix == ".jpg" else "image/png"
        uri = f"data:{mime};base64," + base64.b64encode(p.read_bytes()).decode("ascii")
        if real:
            self._uri[(file_name, size)] = uri
        return uri

    # -- hub downloads -------------------------------------------------------------------------------------
    def _local_download(self, file_name: str) -> Path | None:
        """An already downloaded copy (hub cache), without touching the network."""
        from ...dataset import cached_image

        if self.fetcher is not None:            # downloads land there as we go: look each time
            return cached_image(self.dataset, file_name)
        # no downloads here: an image absent from the hub cache is looked for again after ABSENT_RECHECK_S
        # (another process, e.g. `ts2viz fetch-images`, may put it there meanwhile), not at every view
        now = time.monotonic()
        if now - self._absent.get(file_name, -ABSENT_RECHECK_S) < ABSENT_RECHECK_S:
            return None
        hit = cached_image(self.dataset, file_name)
        if hit is None:
            self._absent[file_name] = now
        else:
            self._absent.pop(file_name, None)
        return hit
