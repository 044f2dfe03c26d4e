"""Reading a scores file (CSV or Parquet) in the project's format, validated, within caps."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from ..errors import InputError, warn_input
from .table import Scores, drop_non_finite


IGNORED_COLUMNS = frozenset({"id", "seg_id", "target_prompt", "prompt", "image_source", "rank",
                             "image_id", "label", "level", "partition"})


HEADER_PREFIX = "# ts2viz-scores"


PARQUET_KEY = b"ts2viz.lower_is_better"


#: cells read as "no score"
NA_STRINGS = ("", "nan", "NaN", "NA", "None", "null")


def _parse_header_line(line: str) -> set[str]:
    out: set[str] = set()
    for part in line[len(HEADER_PREFIX):].split(";"):
        part = part.strip()
        if part.startswith("lower_is_better="):
            out |= {m.strip() for m in part.split("=", 1)[1].split(",") if m.strip()}
    return out


@dataclass
class _Table:
    """What a reader hands back: file names, metric columns, values, declared lower-is-better metrics.

    Also a function giving the file's row (line) of a data row index, for messages.
    """

    names: list[str]
    metrics: list[str]
    values: np.ndarray
    lib: set[str]
    row_of: Callable[[int], int]


@dataclass(frozen=True)
class ReadCaps:
    """Bounds on what reading one scores file may cost, checked before the data is read.

    Parameters
    ----------
    max_rows : int, optional
        Data rows (Parquet: from the file's metadata; CSV: counted while streaming, the read stops at the
        first row past the cap).
    max_metrics : int, optional
        Metric columns.
    max_columns : int, optional
        Columns of any kind.
    max_decoded_bytes : int, optional
        Parquet only: the uncompressed size of the columns to read as the file's metadata states it
        (dictionary and run-length encoding let a few KB stand for gigabytes).
    max_cell_chars : int, default 1024
        The longest text cell (a file name, a number written as text).
    max_footer_bytes : int, default 1 MiB
        Parquet metadata (thousands of columns make it large).
    max_header_bytes : int, default 64 KiB
        A CSV's header line (and the optional ``# ts2viz-scores`` line).
    """

    max_rows: int | None = None
    max_metrics: int | None = None
    max_columns: int | None = None
    max_decoded_bytes: int | None = None
    max_cell_chars: int = 1024
    max_footer_bytes: int = 1 << 20
    max_header_bytes: int = 64 * 1024


class TooLarge(InputError):
    """A scores file past one of the caps of :class:`ReadCaps` (its message quotes nothing from the file)."""


def read_scores(path: str | os.PathLike, *, dataset=None,
                lower_is_better: Iterable[str] = (), metrics: Sequence[str] | None = None,
                caps: ReadCaps | None = None) -> Scores:
    r"""Read a scores file (CSV or Parquet) and validate it.

    Only the ``file_name`` column and the metric columns asked for are read (all metric columns when
    ``metrics`` is None), with pyarrow's CSV reader, so memory is about the size of those columns, not of
    the file. The format is in the module docstring.

    Parameters
    ----------
    path : str or os.PathLike
        CSV (``.csv``, UTF-8, a byte-order mark allowed) or Parquet (``.parquet``/``.pq``) file.
    dataset : Dataset, optional
        If given, every ``file_name`` must belong to it.
    lower_is_better : iterable of str, default ()
        Metric names to treat as lower-is-better, in addition to those the file declares.
    metrics : sequence of str, optional
        Keep only these metric columns (each must exist).
    caps : ReadCaps, optional
        Bounds checked before the data is read (a public app's uploads).

    Returns
    -------
    Scores
        The file's scores.

    Raises
    ------
    InputError
        Naming the file, the row (1-based file line for CSV, data row for Parquet) and the problem: not
        UTF-8, empty file, no ``file_name`` column, a column named twice, a row with more or fewer fields
        than the header, unknown or duplicate ``file_name``, no metric column, a missing requested
        metric, a non-numeric cell.
    TooLarge
        For a file past one of ``caps`` (after reading at most the caps' worth of it).

    Warns
    -----
    InputWarning
        For non-finite numbers (one per file, counting them per column and naming the first row) and for
        a metric column without any score.

    Notes
    -----
    NaN policy: an empty cell (or ``nan``, ``NA``, ``None``, ``null``) is no score. A non-finite number
    (``inf``, ``-inf``, or one too large for float64 such as ``1e999``) is also treated as no score.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ts2viz import load_dataset, read_scores
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "my_scores.csv"
    >>> _ = path.write_text("# ts2viz-scores lower_is_better=distance\n"
    ...                     "file_name,mine,distance\n"
    ...                     "images/000-00.jpg,0.91,0.2\n"
    ...                     "images/000-01.jpg,,0.4\n")
    >>> scores = read_scores(path, dataset=load_dataset("ts2"))
    >>> scores.metrics, scores.lower_is_better, scores.values.tolist()
    (['mine', 'distance'], {'distance'}, [[0.91, 0.2], [nan, 0.4]])
    >>> _ = path.write_text("file_name,mine\nimages/000-00.jpg,high\n")
    >>> read_scores(path)
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: /.../my_scores.csv, row 2: column 'mine': 'high' is not a number
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such scores file", file=path)
    caps = caps or ReadCaps()
    if path.suffix.lower() in (".parquet", ".pq"):
        t = _read_parquet(path, metrics, caps)
    else:
        t = _read_csv(path, metrics, caps)
    lib = set(lower_is_better) | t.lib
    seen: dict[str, int] = {}
    for i, f in enumerate(t.names):
        if not f:
            raise InputError("empty file_name", file=path, row=t.row_of(i))
        if f in seen:
            raise InputError(f"duplicate file_name {f!r} (first at row {t.row_of(seen[f])})", file=path,
                             row=t.row_of(i))
        seen[f] = i
        if dataset is not None and not dataset.has_image(f):
            raise InputError(f"unknown file_name {f!r}: not an image of dataset {dataset.name}",
                             file=path, row=t.row_of(i))
    drop_non_finite(t.values, t.metrics, path, lambda i: f"row {t.row_of(i)}")
    for j, m in enumerate(t.metrics):
        if len(t.values) and np.isnan(t.values[:, j]).all():
            warn_input(f"metric column {m!r} has no scores (every cell is empty or not finite)", file=path)
    return Scores(t.names, t.metrics, t.values, {m for m in lib if m in t.metrics}, source=str(path))


def _metric_columns(columns: Sequence[str], path: Path, metrics: Sequence[str] | None, header_row,
                    caps: ReadCaps | None = None) -> list[str]:
    """The metric columns to read, after checking the header.

    A file_name column, no name twice, within the caps' column counts.
    """
    caps = caps or ReadCaps()
    if caps.max_columns is not None and len(columns) > caps.max_columns:
        raise TooLarge(f"{len(columns):,} columns; the limit is {caps.max_columns}", file=path)
    seen: dict[str, int] = {}
    for j, c in enumerate(columns):
        if c in seen:
            raise InputError(f"column {c!r} appears twice in the header (columns {seen[c] + 1} and {j + 1}); "
                             f"give each metric a name of its own", file=path, row=header_row)
        seen[c] = j
    if "file_name" not in seen:
        raise InputError(f"no file_name column (columns: {', '.join(map(str, columns))})", file=path)
    # (pandas stores a non-default index in Parquet as "__index_level_0__": not a metric)
    cols = [c for c in columns if c != "file_name" and c not in IGNORED_COLUMNS and not c.startswith("__index_level_")]
    if metrics is not None:
        for m in metrics:
            if m not in cols:
                raise InputError(f"missing metric column {m!r} (have: {', '.join(cols) or 'none'})", file=path)
        want = set(metrics)
        cols = [c for c in cols if c in want]
    if not cols:
        raise InputError("no metric columns: expected file_name plus one numeric column per metric", file=path)
    if caps.max_metrics is not None and len(cols) > caps.max_metrics:
        raise TooLarge(f"{len(cols):,} metric columns; a session may hold at most {caps.max_metrics} metrics",
                       file=path)
    return cols


def _parquet_footer_bytes(path: Path) -> int:
    """The size of a Parquet file's metadata (its last 8 bytes: a 4-byte length and ``PAR1``)."""
    import struct

    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        if f.tell() < 12:
            return -1
        f.seek(-8, os.SEEK_END)
        tail = f.read(8)
    return struct.unpack("<I", tail[:4])[0] if tail[4:] == b"PAR1" else -1


def _read_parquet(path: Path, metrics: Sequence[str] | None, caps: ReadCaps) -> _Table:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    footer = _parquet_footer_bytes(path)
    if footer < 0:
        raise InputError("not a readable Parquet file (no Parquet footer)", file=path)
    if footer > caps.max_footer_bytes:
        raise TooLarge(f"the file's Parquet metadata is {footer / 1024:,.0f} KB (too many columns or row groups); "
                       f"the limit is {caps.max_footer_bytes // 1024:,} KB", file=path)
    try:
        pf = pq.ParquetFile(path)
        meta, schema = pf.metadata, pf.schema_arrow
    except Exception as e:
        raise InputError(f"not a readable Parquet file ({type(e).__name__})", file=path) from None
    # Every cap is checked on the metadata, before a value is decoded.
    if caps.max_rows is not None and meta.num_rows > caps.max_rows:
        raise TooLarge(f"{meta.num_rows:,} rows; the limit is {caps.max_rows:,}", file=path)
    lib: set[str] = set()
    kv = schema.metadata or {}
    if PARQUET_KEY in kv:
        lib = {m for m in kv[PARQUET_KEY].decode(errors="replace").split(",") if m}
    cols = _metric_columns([str(n) for n in schema.names], path, metrics, None, caps)
    want = ["file_name", *cols]
    for c in want:
        t = schema.field(c).type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
                or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_null(t)
                or pa.types.is_decimal(t)
                or (pa.types.is_dictionary(t) and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)))):
            raise InputError(f"column {c!r} has type {t}: expected text (file_name) or numbers", file=path)
    if caps.max_decoded_bytes is not None:
        index = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
        size = sum(meta.row_group(g).column(index[c]).total_uncompressed_size
                   for g in range(meta.num_row_groups) for c in want if c in index)
        if size > caps.max_decoded_bytes:
            raise TooLarge(f"the columns to read hold {size / 1e6:,.0f} MB uncompressed; the limit is "
                           f"{caps.max_decoded_bytes / 1e6:,.0f} MB", file=path)
    text = [c for c in want if pa.types.is_string(schema.field(c).type) or pa.types.is_large_string(schema.field(c).type)
            or pa.types.is_dictionary(schema.field(c).type)]
    try:
        # text columns stay dictionary-encoded until their longest value is known: a few bytes of
        # dictionary may stand for one long string repeated on every row
        table = pq.read_table(path, columns=want, read_dictionary=text, use_threads=False)
    except Exception as e:
        raise InputError(f"not a readable Parquet file ({type(e).__name__})", file=path) from None
    if caps.max_rows is not None and table.num_rows > caps.max_rows:     # metadata that lied
        raise TooLarge(f"{table.num_rows:,} rows; the limit is {caps.max_rows:,}", file=path)
    for c in text:
        col = table.column(c)
        for chunk in col.chunks:
            values = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
            if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
                longest = pc.max(pc.utf8_length(values)).as_py() or 0
                if longest > caps.max_cell_chars:
                    raise TooLarge(f"column {c!r} holds a text of {longest:,} characters; the limit is "
                                   f"{caps.max_cell_chars:,}", file=path)
        if pa.types.is_dictionary(col.type):
            table = table.set_column(table.schema.get_field_index(c), c, col.cast(col.type.value_type))
    if table.num_rows == 0:
        raise InputError("no rows", file=path)
    names = ["" if v is None else str(v).strip() for v in table.column("file_name").to_pylist()]
    values = np.empty((table.num_rows, len(cols)))
    for j, c in enumerate(cols):
        values[:, j] = _to_float(table.column(c).to_pandas(), path=path, column=c, row_of=lambda i: i + 1)
    return _Table(names, cols, values, lib, lambda i: i + 1)


def _header_lines(path: Path, caps: ReadCaps) -> tuple[list[bytes], int]:
    """The file's first one or two lines (the optional ``# ts2viz-scores`` line, then the header) and their count.

    Lines may end in LF, CRLF or CR alone (old Excel); a header longer than ``caps.max_header_bytes`` is
    refused.
    """
    import re

    with open(path, "rb") as fh:
        head = fh.read(2 * caps.max_header_bytes + 2)
    lines: list[bytes] = []
    pos = 0
    for _ in range(2):
        m = re.compile(rb"\r\n|\r|\n").search(head, pos)
        end = m.start() if m else len(head)
        if end - pos > caps.max_header_bytes:
            raise TooLarge(f"the header line is longer than {caps.max_header_bytes // 1024} KB, the limit", file=path,
                           row=len(lines) + 1)
        lines.append(head[pos:end])
        if m is None or not lines[0].lstrip(b"\xef\xbb\xbf").startswith(HEADER_PREFIX.encode()):
            break
        pos = m.end()
    return lines, len(lines)


def _read_csv(path: Path, metrics: Sequence[str] | None, caps: ReadCaps) -> _Table:
    import csv

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from ..dataset import read_text_utf8

    # The header (and the optional "# ts2viz-scores" line above it), read as text.
    raw, header_row = _header_lines(path, caps)
    try:
        lines = [ln.decode("utf-8-sig") for ln in raw]
    except UnicodeDecodeError:
        read_text_utf8(path)    # raises the error naming the line of the first bad byte
        raise
    lib: set[str] = set()
    if header_row == 2:
        lib = _parse_header_line(lines[0].strip())
    header_text = lines[-1] if lines else ""
    if not header_text.strip():
        raise InputError("empty file: expected a header with a file_name column", file=path)
    try:
        columns = next(csv.reader([header_text], strict=True))
    except csv.Error:
        raise InputError("the header is not valid CSV (an unterminated quote?)", file=path, row=header_row) from None
    cols = _metric_columns(columns, path, metrics, header_row, caps)

    bad_rows: list = []

    def invalid_row(row) -> str:
        bad_rows.append(row)
        return "skip"

    # Read in blocks of 1 MB, counting rows: past ``caps.max_rows`` the read stops there.
    block = 1 << 20 if caps.max_rows is not None else 1 << 22

    def read(types) -> "pa.Table":
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(skip_rows=header_row, column_names=columns, use_threads=False,
                                           block_size=block),
            parse_options=pacsv.ParseOptions(invalid_row_handler=invalid_row, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(include_columns=["file_name", *cols], column_types=types,
                                                 null_values=list(NA_STRINGS), strings_can_be_null=False,
                                                 quoted_strings_can_be_null=True))
        batches, n = [], 0
        for batch in reader:
            n += batch.num_rows
            if caps.max_rows is not None and n > caps.max_rows:
                raise TooLarge(f"more than {caps.max_rows:,} rows; the limit is {caps.max_rows:,}", file=path)
            batches.append(batch)
        return pa.Table.from_batches(batches, schema=reader.schema)

    row_of = _csv_row_counter(path, header_row)
    strings = {c: pa.string() for c in ["file_name", *cols]}
    try:
        try:
            table = read({**strings, **{c: pa.float64() for c in cols}})
            fast = True
        except pa.ArrowInvalid:
            # A cell that is not a number (or not UTF-8): read as text and find it for the message.
            bad_rows.clear()
            table = read(strings)
            fast = False
    except pa.ArrowInvalid as e:
        read_text_utf8(path)    # not UTF-8: raises naming the line
        if "straddling" in str(e) or "block" in str(e):
            raise TooLarge(f"a row longer than {block // (1 << 20)} MB, the limit", file=path) from None
        raise InputError("not a readable CSV file", file=path) from None
    if bad_rows:
        line, n = _first_ragged_row(path, header_row, len(columns))
        raise InputError(f"{n} fields, but the header has {len(columns)} ({', '.join(columns)})",
                         file=path, row=line)
    if table.num_rows == 0:
        raise InputError("no rows below the header", file=path)
    for c in ("file_name", *([] if fast else cols)):
        longest = max((len(x) for x in table.column(c).to_pylist() if x), default=0) if caps.max_rows is not None else 0
        if longest > caps.max_cell_chars:
            raise TooLarge(f"column {c!r} holds a text of {longest:,} characters; the limit is "
                           f"{caps.max_cell_chars:,}", file=path)
    names = [s.strip() for s in table.column("file_name").to_pylist()]
    values = np.empty((table.num_rows, len(cols)))
    for j, c in enumerate(cols):
        col = table.column(c)
        if fast:
            values[:, j] = col.to_numpy(zero_copy_only=False)
        else:
            values[:, j] = _to_float(col.to_pandas(), path=path, column=c, row_of=row_of)
    return _Table(names, cols, values, lib, row_of)


def _csv_row_counter(path: Path, header_row: int):
    """A function mapping a data row index to its 1-based line in the CSV file.

    The reader skips blank lines and a quoted cell may span lines, so the line is found by scanning the
    file, only when a message needs it (then once, for all rows).
    """
    cache: list[list[int]] = []

    def row_of(i: int) -> int:
        if not cache:
            starts = []
            try:
                for start, fields in _csv_data_rows(path, header_row):
                    if any(x.strip() for x in fields):
                        starts.append(start)
            except InputError:
                pass    # a line the csv module cannot read: rows past it are numbered by count
            cache.append(starts)
        starts = cache[0]
        return starts[i] if i < len(starts) else i + header_row + 1

    return row_of


def _first_ragged_row(path: Path, header_row: int, n_cols: int) -> tuple[int, int]:
    """(line, number of fields) of the first data row whose field count differs from the header's."""
    for start, fields in _csv_data_rows(path, header_row):
        if len(fields) != n_cols:
            return start, len(fields)
    return header_row + 1, n_cols  # pragma: no cover - pyarrow found one


def _csv_data_rows(path: Path, header_row: int):
    """(first line, fields) of each non-empty CSV record from record ``header_row`` on, as the csv module reads them.

    A record's first line is one past the previous record's last (a quoted cell may span lines; a blank
    line is a record of no fields, skipped). Raises :class:`~ts2viz.errors.InputError` naming the line at
    a record the csv module cannot read.
    """
    import csv

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as f:
        reader = csv.reader(f)
        prev = 0
        try:
            for k, fields in enumerate(reader):
                start, prev = prev + 1, reader.line_num
                if k >= header_row and fields:
                    yield start, fields
        except csv.Error:
            raise InputError("a row that is not valid CSV (an unterminated quote, or a field over "
                             f"{csv.field_size_limit():,} characters)", file=path, row=prev + 1) from None


def _to_float(series, *, path: Path, column: str, row_of) -> np.ndarray:
    import pandas as pd

    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    raw = series.astype(str).str.strip()
    raw = raw.mask(raw.isin(list(NA_STRINGS)) | series.isna(), None)
    num = pd.to_numeric(raw, errors="coerce")
    bad = num.isna() & raw.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        cell = str(raw.iloc[i])
        cell = cell if len(cell) <= 40 else cell[:37] + "..."
        raise InputError(f"column {column!r}: {cell!r} is not a number", file=path, row=row_of(i))
    return num.to_numpy(dtype=np.float64, na_value=np.nan)
