"""Write files so that a reader never sees a half-written one: temp file in the same folder, then rename."""
from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success rename it over ``path``, on error delete it.

    The temporary file is created empty with mode 0666 less the process umask, like any new file (so the
    result is readable by whoever could read a plainly written one; ``mkstemp``'s 0600 would not be).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (its folder is created if needed).

    Yields
    ------
    pathlib.Path
        The temporary file to write to.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz.atomic import atomic_path
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("done")
    >>> target.read_text(), tmp.exists()
    ('done', False)
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    os.close(os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def check_writable(path: str | os.PathLike) -> Path:
    """Check, before any work, that :func:`atomic_path` will be able to write ``path``.

    The check creates and deletes one empty temporary file in the nearest existing folder; it creates
    no folder.

    Parameters
    ----------
    path : str or os.PathLike
        The file to be written.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        Naming ``path`` when it is a folder or another non-regular file (a device, a FIFO: renaming over
        it would replace it), or when no file can be created in its folder (read-only, ``/proc``-like, a
        file where a folder should be).
    """
    from .errors import InputError

    p = Path(path)
    if p.is_dir():
        raise InputError("is a folder; expected a file name", file=p)
    if p.exists() and not p.is_file():
        raise InputError("exists and is not a regular file (use --out - to write to stdout)", file=p)
    folder = p.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"cannot write here: {folder} is not a folder", file=p)
    probe = folder / f".{p.name}.{uuid.uuid4().hex[:12]}.probe"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as e:
        raise InputError(f"cannot write in folder {folder} ({e.strerror or type(e).__name__})", file=p) from None
    with contextlib.suppress(OSError):
        probe.unlink()
    return p
