"""Untrusted image files checked before they are kept: bytes, type, pixels, frames, decodability, trailing bytes.

One check for every image a visitor hands the app (an upload for live scoring or authoring, every image
inside an imported dataset .zip): :func:`open_checked`. The file's own structure is walked first
(PNG chunks, JPEG markers, GIF blocks, the WebP RIFF size, the BMP header, TIFF directories), which
gives where the image ends and how many frames it has without decoding a pixel; the header then gives
the type and the pixel count; only then is the first frame decoded (large JPEGs at reduced scale), and
kept at most ``reduce_to`` pixels a side. A file that is a valid image followed by megabytes of
anything else (a PNG with 119 MB of zeros after its end) is refused: its bytes would be kept, counted
and copied into every export for nothing.

Examples
--------
>>> import io, tempfile, os
>>> from PIL import Image
>>> p = os.path.join(tempfile.mkdtemp(), "a.png")
>>> Image.new("RGB", (40, 30)).save(p)
>>> pic, info = open_checked(p, ImageCaps(max_bytes=1 << 20))
>>> (info.format, info.width, info.height, info.frames, info.size - info.end)
('PNG', 40, 30, 1, 0)
>>> with open(p, "ab") as f:
...     _ = f.write(bytes(200_000))
>>> open_checked(p, ImageCaps(max_bytes=1 << 20))
Traceback (most recent call last):
...
ts2viz.errors.InputError: a.png: 200,000 bytes after the end of the image (the limit is 65,536); save it again as PNG or JPEG
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

#: the image types accepted (PIL's format names)
IMAGE_FORMATS = frozenset({"JPEG", "PNG", "WEBP", "BMP", "GIF", "TIFF"})


@dataclass(frozen=True)
class ImageCaps:
    """What one image file may be.

    Parameters
    ----------
    max_bytes : int
        Bytes of the file.
    max_pixels : int, default 50_000_000
        Pixels of a frame (width x height, from the header, before decoding).
    max_frames : int, default 500
        Frames (an animation's).
    max_trailing_bytes : int, default 65536
        Bytes after the end of the image (padding some writers add; anything more is refused).
    """

    max_bytes: int
    max_pixels: int = 50_000_000
    max_frames: int = 500
    max_trailing_bytes: int = 64 * 1024


@dataclass(frozen=True)
class ImageInfo:
    """What :func:`open_checked` found in an image file.

    Parameters
    ----------
    format : str
        PIL's format name (``PNG``, ``JPEG``, ...).
    width : int
        The first frame's width, in pixels (as stored, before any reduction).
    height : int
        The first frame's height.
    frames : int
        The frames.
    end : int
        Where the image ends in the file (the file's size when the format says nothing of it).
    size : int
        The file's size in bytes.
    """

    format: str
    width: int
    height: int
    frames: int
    end: int
    size: int


class _Damaged(Exception):
    """The file's structure is broken (not a readable image of its type)."""


# -- where an image ends, and its frames, from the file's own structure ------------------------------------

def _png(data: bytes) -> tuple[int, int]:
    pos, frames, animated = 8, 0, False
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        nxt = pos + 12 + length
        if kind == b"acTL":
            animated = True
        elif kind == b"fcTL":
            frames += 1
        if kind == b"IEND":
            return nxt, max(1, frames) if animated else 1
        if length > len(data):
            raise _Damaged
        pos = nxt
    return len(data), max(1, frames) if animated else 1       # no IEND: the decoder decides


_JPEG_STANDALONE = {0x01, *range(0xD0, 0xD8)}


def _jpeg(data: bytes) -> tuple[int, int]:
    n, pos = len(data), 2
    while pos < n:
        if data[pos] != 0xFF:
            raise _Damaged
        while pos < n and data[pos] == 0xFF:      # fill bytes
            pos += 1
        if pos >= n:
            break
        marker = data[pos]
        pos += 1
        if marker == 0xD9:                        # end of image
            return pos, 1
        if marker in _JPEG_STANDALONE:
            continue
        if pos + 2 > n:
            break
        (length,) = struct.unpack(">H", data[pos:pos + 2])
        pos += length
        if marker == 0xDA:                        # entropy-coded data up to the next marker
            while True:
                pos = data.find(b"\xff", pos)
                if pos < 0 or pos + 1 >= n:
                    return n, 1
                b = data[pos + 1]
                if b == 0x00 or 0xD0 <= b <= 0xD7 or b == 0xFF:
                    pos += 1 if b == 0xFF else 2
                    continue
                break
    return n, 1                                   # no end marker: the decoder decides


def _sub_blocks(data: bytes, pos: int) -> int:
    while pos < len(data):
        size = data[pos]
        pos += 1 + size
        if size == 0:
            return pos
    raise _Damaged


def _gif(data: bytes) -> tuple[int, int]:
    if len(data) < 13:
        raise _Damaged
    packed = data[10]
    pos = 13 + (3 * 2 ** ((packed & 7) + 1) if packed & 0x80 else 0)
    frames = 0
    while pos < len(data):
        block = data[pos]
        if block == 0x3B:                         # trailer
            return pos + 1, max(1, frames)
        if block == 0x21:                         # extension: label, then sub-blocks
            pos = _sub_blocks(data, pos + 2)
        elif block == 0x2C:                       # an image: descriptor, local colours, LZW size, data
            if pos + 10 > len(data):
                raise _Damaged
            local = data[pos + 9]
            pos += 10 + (3 * 2 ** ((local & 7) + 1) if local & 0x80 else 0)
            pos = _sub_blocks(data, pos + 1)
            frames += 1
        else:
            raise _Damaged
    return len(data), max(1, frames)


def _webp(data: bytes) -> tuple[int, int]:
    (riff,) = struct.unpack("<I", data[4:8])
    end = 8 + riff
    pos, frames = 12, 0
    while pos + 8 <= min(end, len(data)):
        kind = data[pos:pos + 4]
        (size,) = struct.unpack("<I", data[pos + 4:pos + 8])
        if kind == b"ANMF":
            frames += 1
        pos += 8 + size + (size & 1)
    return min(end, len(data)) if end <= len(data) else len(data), max(1, frames)


def _bmp(data: bytes) -> tuple[int, int]:
    if len(data) < 34:
        raise _Damaged
    (file_size,) = struct.unpack("<I", data[2:6])
    (offset,) = struct.unpack("<I", data[10:14])
    (header,) = struct.unpack("<I", data[14:18])
    if header >= 40:
        width, height, _, bits, _, image_size = struct.unpack("<iiHHII", data[18:38])
        computed = offset + (image_size or ((abs(width) * bits + 31) // 32) * 4 * abs(height))
    else:
        computed = len(data)
    end = max(file_size, computed) if file_size else computed
    return min(end, len(data)), 1


_TIFF_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4}


def _tiff(data: bytes, max_frames: int) -> tuple[int, int] | None:
    order = "<" if data[:2] == b"II" else ">"
    (magic,) = struct.unpack(order + "H", data[2:4])
    if magic != 42:
        return None                               # BigTIFF: the size check alone
    (ifd,) = struct.unpack(order + "I", data[4:8])
    end, frames, seen = 8, 0, set()
    while ifd and ifd not in seen:
        seen.add(ifd)
        frames += 1
        if frames > max_frames + 1:
            break
        if ifd + 2 > len(data):
            raise _Damaged
        (count,) = struct.unpack(order + "H", data[ifd:ifd + 2])
        table = ifd + 2
        if table + 12 * count + 4 > len(data):
            raise _Damaged
        end = max(end, table + 12 * count + 4)
        arrays: dict[int, list[int]] = {}
        for k in range(count):
            e = table + 12 * k
            tag, kind, n = struct.unpack(order + "HHI", data[e:e + 8])
            width = _TIFF_TYPE_SIZES.get(kind, 1) * n
            at = e + 8 if width <= 4 else struct.unpack(order + "I", data[e + 8:e + 12])[0]
            if width > 4:
                end = max(end, at + width)
            if tag in (273, 279, 324, 325) and kind in (3, 4) and at + width <= len(data):
                fmt = order + ("H" if kind == 3 else "I") * n
                arrays[tag] = list(struct.unpack(fmt, data[at:at + width]))
        for offs, counts in ((273, 279), (324, 325)):
            for o, c in zip(arrays.get(offs, ()), arrays.get(counts, ())):
                end = max(end, o + c)
        (ifd,) = struct.unpack(order + "I", data[table + 12 * count:table + 12 * count + 4])
    return min(end, len(data)), frames


def structure(data: bytes, max_frames: int = 10_000) -> tuple[int, int] | None:
    """Where an image file's last block ends and how many frames it has, from its structure alone.

    No pixel is decoded: PNG chunks, JPEG markers, GIF blocks, the WebP RIFF size, the BMP header and TIFF
    directories are walked.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    max_frames : int, default 10_000
        Stop counting TIFF directories past this many (plus one).

    Returns
    -------
    (int, int) or None
        ``(end, frames)``; ``None`` for a type this walk does not know (the checks of the size and the
        decoder still apply).

    Raises
    ------
    ValueError
        For a structure that is broken.

    Examples
    --------
    >>> import io
    >>> from PIL import Image
    >>> buf = io.BytesIO()
    >>> Image.new("RGB", (4, 4)).save(buf, "GIF")
    >>> data = buf.getvalue()
    >>> structure(data + b"junk") == (len(data), 1)
    True
    >>> structure(b"not an image") is None
    True
    """
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            return _png(data)
        if data[:2] == b"\xff\xd8":
            return _jpeg(data)
        if data[:6] in (b"GIF87a", b"GIF89a"):
            return _gif(data)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp(data)
        if data[:2] == b"BM":
            return _bmp(data)
        if data[:4] in (b"II*\x00", b"MM\x00*"):
            return _tiff(data, max_frames)
    except (_Damaged, struct.error, IndexError):
        raise ValueError("damaged image structure") from None
    return None


# -- the check -------------------------------------------------------------------------------------------

def open_checked(path: str | os.PathLike, caps: ImageCaps, *, name: str | None = None,
                 reduce_to: int | None = 2048):
    """Check an untrusted image file and decode its first frame.

    In order, each refusal is a one-line :class:`~ts2viz.errors.InputError` naming ``name`` and never
    quoting the file's contents: an empty file or one over ``caps.max_bytes``; a broken structure
    (:func:`structure`); more than ``caps.max_frames`` frames or ``caps.max_trailing_bytes`` bytes after
    the image's end; a type outside :data:`IMAGE_FORMATS`; a frame over ``caps.max_pixels`` (from the
    header, before decoding); a first frame that does not decode (truncated, damaged, a decompression
    bomb). Large JPEGs are decoded at reduced scale.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    caps : ImageCaps
        What the file may be.
    name : str or None, default None
        How messages name the file (default: the file's name; never its full path).
    reduce_to : int or None, default 2048
        Keep the frame at most this many pixels a side (``None``: full size).

    Returns
    -------
    image : PIL.Image.Image
        The first frame, RGB.
    info : ImageInfo
        What was found (format, size as stored, frames, end, file size).

    Raises
    ------
    InputError
        For any refusal above, or a file that cannot be read.

    Examples
    --------
    >>> import tempfile, os
    >>> from PIL import Image
    >>> p = os.path.join(tempfile.mkdtemp(), "big.png")
    >>> Image.new("RGB", (3000, 1500), "white").save(p)
    >>> pic, info = open_checked(p, ImageCaps(max_bytes=10 << 20), reduce_to=1000)
    >>> pic.mode, pic.size, (info.width, info.height)
    ('RGB', (1000, 500), (3000, 1500))
    >>> open_checked(p, ImageCaps(max_bytes=10 << 20, max_pixels=1_000_000), name="upload 1")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: upload 1: image is 3000x1500 pixels; the limit is 1 megapixels
    """
    from PIL import Image, UnidentifiedImageError

    p = Path(path)
    label = name or p.name
    try:
        size = p.stat().st_size
    except OSError:
        raise InputError("the file could not be read", file=label) from None
    if size == 0:
        raise InputError("empty file", file=label)
    if size > caps.max_bytes:
        raise InputError(f"file is {size / 1e6:.1f} MB; the limit is {caps.max_bytes / (1024 * 1024):g} MB",
                         file=label)
    try:
        data = p.read_bytes()
    except OSError:
        raise InputError("the file could not be read", file=label) from None
    try:
        found = structure(data, caps.max_frames)
    except ValueError:
        raise InputError("not a readable image (damaged)", file=label) from None
    end, frames = found if found is not None else (size, 1)
    if frames > caps.max_frames:
        raise InputError(f"image has {frames:,} frames; the limit is {caps.max_frames:,}", file=label)
    if size - end > caps.max_trailing_bytes:
        raise InputError(f"{size - end:,} bytes after the end of the image (the limit is "
                         f"{caps.max_trailing_bytes:,}); save it again as PNG or JPEG", file=label)
    import io

    try:
        with Image.open(io.BytesIO(data)) as im:
            fmt = im.format
            w, h = im.size
            if fmt not in IMAGE_FORMATS:
                raise InputError(f"unsupported image type {fmt}; use JPEG, PNG, WebP, BMP, GIF or TIFF", file=label)
            if w * h > caps.max_pixels:
                raise InputError(f"image is {w}x{h} pixels; the limit is {caps.max_pixels / 1_000_000:g} megapixels",
                                 file=label)
            if found is None:
                frames = getattr(im, "n_frames", 1)
                if frames > caps.max_frames:
                    raise InputError(f"image has {frames:,} frames; the limit is {caps.max_frames:,}", file=label)
            if fmt == "JPEG" and reduce_to:       # decoded at reduced scale: the metrics resize anyway
                im.draft("RGB", (reduce_to, reduce_to))
            im.seek(0)          # an animation's first frame only (the others are never decoded)
            im.load()
            frame = im.convert("RGB") if im.mode in ("P", "PA", "1") else im   # palettes resize poorly
            if reduce_to and max(frame.size) > reduce_to:
                frame.thumbnail((reduce_to, reduce_to), Image.Resampling.LANCZOS, reducing_gap=3.0)
            out = frame.convert("RGB") if frame.mode != "RGB" or frame is im else frame
    except InputError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError):
        raise InputError("not a readable image (or a decompression bomb)", file=label) from None
    except Exception as e:  # noqa: BLE001 - a truncated or damaged file: one line, never its contents
        raise InputError(f"not a readable image ({type(e).__name__})", file=label) from None
    return out, ImageInfo(fmt, w, h, frames, end, size)
