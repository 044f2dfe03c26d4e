"""A dataset folder as one zip file and back.

What the app offers for download after an export, and what a visitor uploads to import a dataset.
Unpacking treats the zip as untrusted: only plain files at safe relative paths, caps on their number
and size, and the result checked by the loader before it appears; never a half-unpacked folder.
"""
from __future__ import annotations

import os
import shutil
import stat
import uuid
import zipfile
import zlib
from pathlib import Path

from ..atomic import atomic_path
from ..errors import InputError
from .problems import RESERVED_NAMES, file_name_problem

#: default caps of :func:`unpack_dataset`
MAX_FILES = 5000
MAX_TOTAL_BYTES = 2 * 1024 ** 3


def pack_dataset(folder: str | os.PathLike, zip_path: str | os.PathLike) -> Path:
    """Write a dataset folder to a zip file, atomically.

    Only the dataset's files go in (:func:`~ts2viz.authoring.dataset_files`), as entries under
    ``<folder name>/``. Images are stored as they are (already compressed), the CSV and README deflated.

    Parameters
    ----------
    folder : str or os.PathLike
        A dataset folder in ts2viz's format.
    zip_path : str or os.PathLike
        The zip file to write (replaced if it exists).

    Returns
    -------
    pathlib.Path
        ``zip_path``.

    Raises
    ------
    InputError
        When the folder does not load as a dataset (the loader's first problem).

    Examples
    --------
    >>> import io, tempfile, pathlib, zipfile
    >>> from PIL import Image
    >>> from ts2viz.authoring import SegDraft, export_dataset
    >>> def png(color):
    ...     buf = io.BytesIO()
    ...     Image.new("RGB", (8, 8), color).save(buf, "PNG")
    ...     return buf.getvalue()
    >>> d = SegDraft("a red square").add_node("0").add_image("r", "images/red.png", "0")
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> folder = export_dataset(d, tmp / "squares", {"r": png("red")})
    >>> z = pack_dataset(folder, tmp / "squares.zip")
    >>> zipfile.ZipFile(z).namelist()
    ['squares/metadata.csv', 'squares/README.md', 'squares/images/red.png']
    >>> sorted(p.name for p in unpack_dataset(z, tmp / "again").iterdir())
    ['README.md', 'images', 'metadata.csv']
    >>> import shutil; shutil.rmtree(tmp)
    """
    from .hub import dataset_files

    folder, zip_path = Path(folder), Path(zip_path)
    names = dataset_files(folder)
    with atomic_path(zip_path) as tmp:
        with zipfile.ZipFile(tmp, "w") as z:
            for n in names:
                kind = zipfile.ZIP_DEFLATED if n in RESERVED_NAMES else zipfile.ZIP_STORED
                z.write(folder / n, f"{folder.name}/{n}", compress_type=kind)
    return zip_path


def _entries(z: zipfile.ZipFile, max_files: int, max_total_bytes: int) -> tuple[list[tuple[zipfile.ZipInfo, str]], str]:
    """The zip's file entries with their paths inside the dataset, checked.

    A single top folder holding ``metadata.csv`` is stripped; every entry must be a plain file at a safe
    path, and the zip within the caps.
    """
    infos = [i for i in z.infolist() if not i.is_dir()]
    if len(infos) > max_files:
        raise InputError(f"the zip holds {len(infos)} files; at most {max_files} are accepted")
    total = sum(i.file_size for i in infos)
    if total > max_total_bytes:
        raise InputError(f"the zip unpacks to {total:,} bytes; at most {max_total_bytes:,} are accepted")
    names = [i.filename for i in infos]
    if "metadata.csv" in names:
        prefix = ""
    else:
        tops = {n.split("/", 1)[0] for n in names}
        if len(tops) != 1 or f"{next(iter(tops))}/metadata.csv" not in names:
            raise InputError("the zip holds no metadata.csv (at its top, or in one folder at its top)")
        prefix = next(iter(tops)) + "/"
    out = []
    for i in infos:
        mode = i.external_attr >> 16
        if mode and not (stat.S_ISREG(mode) or mode & 0o170000 == 0):
            raise InputError(f"zip entry {i.filename!r} is not a plain file (a link or a device)")
        rel = i.filename[len(prefix):]
        if rel not in RESERVED_NAMES:
            problem = file_name_problem(rel)
            if problem:
                raise InputError(f"zip entry: {problem}")
        out.append((i, rel))
    return out, prefix


def _copy_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, left: int, limit: int,
                 one_file: int | None = None) -> int:
    """Write one zip member to ``dest``, counting its bytes as they come (the zip's headers may lie).

    Returns the bytes left of the whole budget ``left``; :class:`InputError` past it (``limit`` names it)
    or past ``one_file`` bytes for this file.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with z.open(info) as src, open(dest, "xb") as out:
        while chunk := src.read(1 << 20):
            left -= len(chunk)
            written += len(chunk)
            if left < 0:      # the headers understated the sizes
                raise InputError(f"the zip unpacks to more than {limit:,} bytes")
            if one_file is not None and written > one_file:
                raise InputError(f"{dest.name} is more than {one_file:,} bytes; the limit is {one_file:,}")
            out.write(chunk)
    return left


def unpack_dataset(zip_file: str | os.PathLike, folder: str | os.PathLike, *, max_files: int = MAX_FILES,
                   max_total_bytes: int = MAX_TOTAL_BYTES, caps=None, accept=None, check_image=None,
                   require_images: bool = False, checkpoint=None, max_image_bytes: int | None = None) -> Path:
    """Unpack a zipped dataset into a new folder.

    The zip is as :func:`pack_dataset` writes it, or zipped by hand (the files at the zip's top or in one
    folder there). It is untrusted and read in proportion to what is accepted:

    1. every entry must be a plain file at a safe relative path
       (:func:`~ts2viz.authoring.file_name_problem`), at most ``max_files`` files and ``max_total_bytes``
       bytes unpacked (from the zip's headers first, then counted while reading);
    2. the dataset's own files (``metadata.csv``, ``edges.csv``, ``nodes.csv``, ``README.md``) are
       unpacked first and loaded with :func:`ts2viz.dataset.load_folder` within ``caps``, by every rule
       of the loader;
    3. ``accept(dataset)``, if given, may refuse what it describes (too many SEGs, images or walks)
       before a single image is unpacked;
    4. only the images ``metadata.csv`` names are unpacked (nothing else of the zip is written), each
       handed to ``check_image`` as soon as it is on disk.

    All of it is written to a temporary folder that is renamed to ``folder`` only at the end: a refused
    or failed unpack leaves nothing.

    Parameters
    ----------
    zip_file : str or os.PathLike or file-like
        The zip.
    folder : str or os.PathLike
        The new folder; it must not exist.
    max_files : int, default MAX_FILES
        The most file entries the zip may hold.
    max_total_bytes : int, default MAX_TOTAL_BYTES
        The most bytes it may unpack to.
    caps : ts2viz.dataset.FolderCaps or None, default None
        Caps on the dataset's own files (each file's bytes, rows, SEGs); ``None``: the loader's defaults.
    accept : callable or None, default None
        ``accept(dataset)`` raises to refuse the dataset the CSV files describe.
    check_image : callable or None, default None
        ``check_image(file_name, path)`` raises to refuse an unpacked image.
    require_images : bool, default False
        Refuse the zip if it lacks an image ``metadata.csv`` names.
    checkpoint : callable or None, default None
        Called between images; raises to stop (a cancelled job).
    max_image_bytes : int or None, default None
        The largest image file accepted (checked from the zip's header, and while it is read).

    Returns
    -------
    pathlib.Path
        ``folder``.

    Raises
    ------
    InputError
        In one line, for a zip that is not one, breaks a rule, exceeds a cap, or is corrupt; for a
        ``folder`` that exists. Whatever ``accept``, ``check_image`` or ``checkpoint`` raise is raised as
        it is (an :class:`~ts2viz.errors.InputError` reworded to name files inside the dataset).
    """
    from ..dataset import load_folder

    folder = Path(folder)
    if folder.exists():
        raise InputError("already exists; expected a new folder to unpack the dataset into", file=folder)
    try:
        z = zipfile.ZipFile(zip_file)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise InputError("not a zip file") from None
    tmp = folder.absolute().parent / f".{folder.name}.{uuid.uuid4().hex[:12]}.tmp"
    with z:
        entries, _ = _entries(z, max_files, max_total_bytes)
        by_name: dict[str, zipfile.ZipInfo] = {}
        for info, rel in entries:
            by_name.setdefault(rel, info)
        try:
            tmp.mkdir(parents=True)
            left = max_total_bytes
            one = caps.max_bytes if caps is not None else None
            for own in sorted(RESERVED_NAMES):
                if own in by_name:
                    left = _copy_member(z, by_name[own], tmp / own, left, max_total_bytes, one)
            ds = load_folder(tmp, caps=caps)
            if accept is not None:
                accept(ds)
            for row in ds.rows:
                info = by_name.get(row.file_name)
                if info is None:
                    if require_images:
                        raise InputError(f"the zip has no file {row.file_name} (named in metadata.csv)")
                    continue
                if checkpoint is not None:
                    checkpoint()
                if max_image_bytes is not None and info.file_size > max_image_bytes:
                    raise InputError(f"{row.file_name}: file is {info.file_size / 1e6:.1f} MB; the limit is "
                                     f"{max_image_bytes / (1024 * 1024):g} MB")
                dest = tmp / row.file_name
                left = _copy_member(z, info, dest, left, max_total_bytes, max_image_bytes)
                if check_image is not None:
                    check_image(row.file_name, dest)
            os.replace(tmp, folder)
        except InputError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            # the loader names files by their temporary path: name them inside the dataset instead
            raise InputError(str(e).replace(str(tmp) + os.sep, "").replace(str(tmp), folder.name)) from None
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, zlib.error) as e:   # corrupt data, encrypted entries
            shutil.rmtree(tmp, ignore_errors=True)
            raise InputError(f"cannot unpack the zip ({type(e).__name__})") from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return folder
