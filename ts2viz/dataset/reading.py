"""Reading a dataset's CSV files: UTF-8 text, records with their line numbers, and what an untrusted folder may hold."""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from ..errors import InputError, Problems


@dataclass(frozen=True)
class FolderCaps:
    """How much of an untrusted dataset folder is read (:func:`load_folder`).

    Each CSV file is refused from its size, before it is read; the reading of a file stops at the first row
    past its row cap.

    Parameters
    ----------
    max_bytes : int
        Bytes of each of the folder's CSV files.
    max_images : int
        Rows of ``metadata.csv`` (images).
    max_edges : int
        Rows of ``edges.csv``.
    max_nodes : int
        Rows of ``nodes.csv``.
    max_segs : int
        SEGs.
    """

    max_bytes: int
    max_images: int
    max_edges: int
    max_nodes: int
    max_segs: int


def read_text_utf8(path: str | os.PathLike, max_bytes: int | None = None) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped), or one clear :class:`InputError`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    max_bytes : int, optional
        A larger file is refused from its size, before a byte of it is read.

    Returns
    -------
    str
        Its text.

    Raises
    ------
    InputError
        If the file cannot be read, is larger than ``max_bytes``, or is not UTF-8 (Latin-1, UTF-16, a
        binary file): named with the line of its first bad byte.
    """
    if max_bytes is not None:
        try:
            size = Path(path).stat().st_size
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror or type(e).__name__}", file=path) from None
        if size > max_bytes:
            raise InputError(f"the file is {size:,} bytes; the limit is {max_bytes:,}", file=path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or type(e).__name__}", file=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[e.start]:02x}); save the file as UTF-8",
                         file=path, row=line) from None


def csv_records(path: str | os.PathLike, text: str, required: Sequence[str],
                optional: Sequence[str] = (), problems: Problems | None = None,
                max_rows: int | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, record)`` for each data row of CSV ``text``, every row checked against the header.

    Blank lines are skipped; cells are stripped.

    Parameters
    ----------
    path : str or os.PathLike
        The file (for messages).
    text : str
        Its text.
    required : sequence of str
        Columns that must be in the header.
    optional : sequence of str, default ()
        Columns read when present.
    problems : Problems, optional
        Where a row with more or fewer fields than the header is reported (default: raise); the row is
        then skipped.
    max_rows : int, optional
        An :class:`InputError` at the first data row past it (nothing more is read).

    Yields
    ------
    line : int
        The 1-based line of the row in the file (the header is line 1).
    record : dict[str, str]
        The required and present optional columns' cells.

    Raises
    ------
    InputError
        For an empty file, a missing required column, a column named twice (nothing else can be read
        then), a header or row the CSV reader cannot read (a cell over its field limit, a stray NUL), a
        row past ``max_rows``, and a bad row when ``problems`` raises.
    """
    problems = Problems() if problems is None else problems
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as e:
        raise InputError(f"the header cannot be read as CSV ({_csv_reason(e)})", file=path, row=1) from None
    if not header or not any(h.strip() for h in header):
        raise InputError("empty file: expected a header with columns " + ", ".join(required), file=path)
    cols = [h.strip() for h in header]
    seen: dict[str, int] = {}
    for j, c in enumerate(cols):
        if c in seen:
            raise InputError(f"column {c!r} appears twice in the header (columns {seen[c] + 1} and {j + 1})",
                             file=path, row=1)
        seen[c] = j
    missing = [c for c in required if c not in seen]
    if missing:
        raise InputError(f"missing column {missing[0]!r} (expected {', '.join(required)})", file=path)
    keep = [c for c in (*required, *optional) if c in seen]
    prev = reader.line_num                      # physical lines read so far (a cell may span lines)
    n = 0
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(f"the row cannot be read as CSV ({_csv_reason(e)})", file=path, row=prev + 1) from None
        start, prev = prev + 1, reader.line_num
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        n += 1
        if max_rows is not None and n > max_rows:
            raise InputError(f"more than {max_rows:,} rows; the limit is {max_rows:,}", file=path, row=start)
        if len(fields) != len(cols):
            problems.report(f"{len(fields)} fields, but the header has {len(cols)} ({', '.join(cols)})",
                            file=path, row=start)
            continue
        yield start, {c: fields[seen[c]].strip() for c in keep}


def _csv_reason(e: Exception) -> str:
    """The CSV reader's reason, without any of the file's text (its messages quote none, but cut anyway)."""
    return " ".join(str(e).split())[:80]
