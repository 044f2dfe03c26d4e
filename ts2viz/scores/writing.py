"""Writing a scores table in the project's format (CSV or Parquet), atomically."""
from __future__ import annotations

from pathlib import Path

from ..atomic import atomic_path
from .reading import HEADER_PREFIX, PARQUET_KEY
from .table import Scores


def write_scores(scores: Scores, path) -> None:
    """Write ``scores`` atomically as CSV or Parquet (by suffix), recording lower-is-better metrics.

    Parameters
    ----------
    scores : Scores
        The table.
    path : str, os.PathLike or text stream
        ``.parquet``/``.pq`` for Parquet (lower-is-better in the schema metadata), anything else for CSV
        (a ``# ts2viz-scores lower_is_better=...`` first line when there are any). An open text stream
        (``sys.stdout``) gets CSV.

    Examples
    --------
    >>> import sys
    >>> from ts2viz import Scores, write_scores
    >>> write_scores(Scores(["a.png", "b.png"], ["mine", "distance"], [[0.5, 1.0], [float("nan"), 2.0]],
    ...                     {"distance"}), sys.stdout)
    # ts2viz-scores lower_is_better=distance
    file_name,mine,distance
    a.png,0.5,1
    b.png,,2
    """
    if hasattr(path, "write"):
        _write_csv(scores, path)
        return
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix.lower() in (".parquet", ".pq"):
            import pyarrow as pa
            import pyarrow.parquet as pq

            lib = ",".join(m for m in scores.metrics if m in scores.lower_is_better)
            table = pa.Table.from_pandas(scores.to_frame(), preserve_index=False)
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), PARQUET_KEY: lib.encode()})
            pq.write_table(table, tmp)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                _write_csv(scores, f)


def _write_csv(scores: Scores, f) -> None:
    lib = ",".join(m for m in scores.metrics if m in scores.lower_is_better)
    if lib:
        f.write(f"{HEADER_PREFIX} lower_is_better={lib}\n")
    scores.to_frame().to_csv(f, index=False, float_format="%.10g", lineterminator="\n")
