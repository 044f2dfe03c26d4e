"""Scores tables: per-image metric scores, read from and written to the project's scores format.

Scores format (CSV or Parquet)
------------------------------
One row per image. A ``file_name`` column matching the dataset's ``file_name``; one numeric column per
metric (empty cell = no score, NaN). Columns named like dataset metadata (``id``, ``seg_id``,
``target_prompt``, ``prompt``, ``image_source``, ``rank``, ``image_id``) are ignored. Higher = more
faithful unless a metric is declared lower-is-better: in a CSV by a first line
``# ts2viz-scores lower_is_better=NAME,NAME``, in Parquet by the schema metadata key
``ts2viz.lower_is_better``, or on the command line with ``--lower-is-better NAME``.
"""
from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .atomic import atomic_path
from .errors import InputError
from .paths import bundled_data_dir

IGNORED_COLUMNS = frozenset({"id", "seg_id", "target_prompt", "prompt", "image_source", "rank",
                             "image_id", "label", "level", "partition"})
HEADER_PREFIX = "# ts2viz-scores"
PARQUET_KEY = b"ts2viz.lower_is_better"


@dataclass
class Scores:
    """Per-image scores of one or more metrics.

    ``values[i, j]`` is metric ``metrics[j]`` on image ``file_names[i]`` (NaN = no score).
    ``lower_is_better`` names the metrics whose smaller values mean more faithful.
    """

    file_names: list[str]
    metrics: list[str]
    values: np.ndarray
    lower_is_better: set[str] = field(default_factory=set)
    source: str = ""

    def __post_init__(self) -> None:
        self.values = np.asarray(self.values, dtype=np.float64).reshape(len(self.file_names), len(self.metrics))
        self._index = {f: i for i, f in enumerate(self.file_names)}

    def column(self, metric: str) -> np.ndarray:
        return self.values[:, self.metrics.index(metric)]

    def get(self, file_name: str, metric: str) -> float:
        i = self._index.get(file_name)
        return math.nan if i is None else float(self.values[i, self.metrics.index(metric)])

    def aligned(self, file_names: Sequence[str], metrics: Sequence[str] | None = None,
                *, oriented: bool = True) -> np.ndarray:
        """Scores for ``file_names`` (rows) x ``metrics`` (columns); NaN where an image has no score.

        With ``oriented=True`` lower-is-better metrics are negated, so higher is always better.
        """
        metrics = list(self.metrics if metrics is None else metrics)
        cols = []
        for m in metrics:
            if m not in self.metrics:
                raise InputError(f"no metric {m!r} in scores (have: {', '.join(self.metrics)})",
                                 file=self.source or None)
            cols.append(self.metrics.index(m))
        out = np.full((len(file_names), len(metrics)), np.nan)
        idx = np.array([self._index.get(f, -1) for f in file_names], dtype=np.int64)
        ok = idx >= 0
        out[ok] = self.values[np.ix_(idx[ok], cols)]
        if oriented:
            flip = np.array([m in self.lower_is_better for m in metrics])
            out[:, flip] *= -1.0
        return out

    def select(self, metrics: Sequence[str]) -> "Scores":
        cols = [self.metrics.index(m) for m in metrics]
        return Scores(list(self.file_names), list(metrics), self.values[:, cols],
                      {m for m in metrics if m in self.lower_is_better}, self.source)

    def to_frame(self):
        import pandas as pd

        df = pd.DataFrame(self.values, columns=self.metrics)
        df.insert(0, "file_name", self.file_names)
        return df


def merge(tables: Iterable[Scores]) -> Scores:
    """Join scores tables column-wise on ``file_name``; a metric may appear in only one table."""
    tables = list(tables)
    if not tables:
        raise ValueError("no scores tables to merge")
    if len(tables) == 1:
        return tables[0]
    names: list[str] = []
    seen: set[str] = set()
    for t in tables:
        for f in t.file_names:
            if f not in seen:
                seen.add(f)
                names.append(f)
    metrics: list[str] = []
    origin: dict[str, str] = {}
    for t in tables:
        for m in t.metrics:
            if m in origin:
                raise InputError(f"metric {m!r} appears in two scores files ({origin[m]} and {t.source})",
                                 file=t.source or None)
            origin[m] = t.source
            metrics.append(m)
    cols = [t.aligned(names, oriented=False) for t in tables]
    lib = set().union(*(t.lower_is_better for t in tables))
    return Scores(names, metrics, np.hstack(cols), lib, source=" + ".join(t.source for t in tables))


# -- reading ---------------------------------------------------------------------------------------

def _parse_header_line(line: str) -> set[str]:
    out: set[str] = set()
    for part in line[len(HEADER_PREFIX):].split(";"):
        part = part.strip()
        if part.startswith("lower_is_better="):
            out |= {m.strip() for m in part.split("=", 1)[1].split(",") if m.strip()}
    return out


def read_scores(path: str | os.PathLike, *, dataset=None,
                lower_is_better: Iterable[str] = (), metrics: Sequence[str] | None = None) -> Scores:
    """Read a scores file (CSV or Parquet) and validate it.

    Parameters
    ----------
    path : CSV (``.csv``) or Parquet (``.parquet``/``.pq``) file.
    dataset : if given, every ``file_name`` must belong to it.
    lower_is_better : metric names to treat as lower-is-better, in addition to those the file declares.
    metrics : keep only these metric columns (each must exist).

    Raises
    ------
    InputError naming the file, the row (1-based file line for CSV, data row for Parquet) and the
    problem: empty file, no ``file_name`` column, unknown or duplicate ``file_name``, no metric
    column, a missing requested metric, a non-numeric cell.
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError("no such scores file", file=path)
    lib: set[str] = set(lower_is_better)
    parquet = path.suffix.lower() in (".parquet", ".pq")
    row_offset = 2  # CSV: header is line 1
    if parquet:
        try:
            import pyarrow.parquet as pq

            table = pq.read_table(path)
        except Exception as e:
            raise InputError(f"not a readable Parquet file ({type(e).__name__})", file=path) from None
        meta = table.schema.metadata or {}
        if PARQUET_KEY in meta:
            lib |= {m for m in meta[PARQUET_KEY].decode().split(",") if m}
        df = table.to_pandas()
        row_offset = 1
    else:
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"cannot read as UTF-8 text ({type(e).__name__})", file=path) from None
        if not text.strip():
            raise InputError("empty file: expected a header with a file_name column", file=path)
        if text.startswith(HEADER_PREFIX):
            first, _, text = text.partition("\n")
            lib |= _parse_header_line(first)
            row_offset = 3
            if not text.strip():
                raise InputError("empty file: expected a header with a file_name column", file=path)
        try:
            df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        except Exception as e:
            raise InputError(f"not a readable CSV file ({type(e).__name__}: {e})", file=path) from None
    if "file_name" not in df.columns:
        raise InputError(f"no file_name column (columns: {', '.join(map(str, df.columns))})", file=path)
    if len(df) == 0:
        raise InputError("no rows below the header", file=path)
    names = [str(x).strip() for x in df["file_name"].tolist()]
    seen: dict[str, int] = {}
    for i, f in enumerate(names):
        if not f:
            raise InputError("empty file_name", file=path, row=i + row_offset)
        if f in seen:
            raise InputError(f"duplicate file_name {f!r} (first at row {seen[f]})", file=path,
                             row=i + row_offset)
        seen[f] = i + row_offset
        if dataset is not None and not dataset.has_image(f):
            raise InputError(f"unknown file_name {f!r}: not an image of dataset {dataset.name}",
                             file=path, row=i + row_offset)
    cols = [c for c in df.columns if c != "file_name" and str(c) not in IGNORED_COLUMNS]
    if metrics is not None:
        for m in metrics:
            if m not in cols:
                raise InputError(f"missing metric column {m!r} (have: {', '.join(map(str, cols)) or 'none'})",
                                 file=path)
        cols = [c for c in cols if c in set(metrics)]
    if not cols:
        raise InputError("no metric columns: expected file_name plus one numeric column per metric",
                         file=path)
    values = np.empty((len(df), len(cols)))
    for j, c in enumerate(cols):
        values[:, j] = _to_float(df[c], path=path, column=str(c), row_offset=row_offset)
    return Scores(names, [str(c) for c in cols], values, {m for m in lib if m in cols}, source=str(path))


def _to_float(series, *, path: Path, column: str, row_offset: int) -> np.ndarray:
    import pandas as pd

    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    raw = series.astype(str).str.strip()
    raw = raw.mask(raw.isin(["", "nan", "NaN", "NA", "None", "null"]), None)
    num = pd.to_numeric(raw, errors="coerce")
    bad = num.isna() & raw.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"column {column!r}: {raw.iloc[i]!r} is not a number", file=path, row=i + row_offset)
    return num.to_numpy(dtype=np.float64, na_value=np.nan)


def bundled_scores(dsg: str | None = None) -> Scores:
    """The per-image scores behind the published TS2 leaderboard (19 metric variants).

    Parameters
    ----------
    dsg : how the DSG columns accumulate their questions: ``"mean"`` (the default,
        :data:`ts2viz.qa_records.BUNDLED_DSG_ACCUMULATION`: the plain fraction of correct answers,
        which reproduces the published web leaderboard's DSG rows) or ``"gated"`` (a question fails
        when a parent fails, as DSG defines it and as the release's per-image DSG files use). The
        six DSG columns with per-question records (all but DSG-GPT4V) are recomputed from
        ``data/ts2/qa_answers.parquet`` either way; DSG-GPT4V has no per-question records in the
        release and keeps its released per-image scores.
    """
    from .metrics.accumulation import check_accumulation
    from .qa_records import BUNDLED_DSG_ACCUMULATION, BUNDLED_QA_METRICS, bundled_qa_scores

    accumulation = check_accumulation(BUNDLED_DSG_ACCUMULATION if dsg is None else dsg)
    scores = read_scores(bundled_data_dir() / "ts2" / "published_scores.csv")
    dsg_metrics = [m for m in BUNDLED_QA_METRICS if m.startswith("DSG-")]
    recomputed = bundled_qa_scores(accumulation, dsg_metrics).reindex(scores.file_names)
    for m in dsg_metrics:
        scores.values[:, scores.metrics.index(m)] = recomputed[m].to_numpy(dtype=np.float64)
    return scores


# -- writing ---------------------------------------------------------------------------------------

def write_scores(scores: Scores, path: str | os.PathLike) -> None:
    """Write ``scores`` atomically as CSV or Parquet (by suffix), recording lower-is-better metrics."""
    path = Path(path)
    df = scores.to_frame()
    lib = ",".join(m for m in scores.metrics if m in scores.lower_is_better)
    with atomic_path(path) as tmp:
        if path.suffix.lower() in (".parquet", ".pq"):
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pandas(df, preserve_index=False)
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), PARQUET_KEY: lib.encode()})
            pq.write_table(table, tmp)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                if lib:
                    f.write(f"{HEADER_PREFIX} lower_is_better={lib}\n")
                df.to_csv(f, index=False, float_format="%.10g")
