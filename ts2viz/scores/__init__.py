"""Scores tables: per-image metric scores, read from and written to the project's scores format.

Scores format (CSV or Parquet)
------------------------------
One row per image. A ``file_name`` column matching the dataset's ``file_name``; one numeric column per
metric (empty cell = no score, NaN). Columns named like dataset metadata (``id``, ``seg_id``,
``target_prompt``, ``prompt``, ``image_source``, ``rank``, ``image_id``) are ignored. Higher = more
faithful unless a metric is declared lower-is-better: in a CSV by a first line
``# ts2viz-scores lower_is_better=NAME,NAME``, in Parquet by the schema metadata key
``ts2viz.lower_is_better``, or on the command line with ``--lower-is-better NAME``.

The package's interface is what it exports here; its modules, one concept each:

- :mod:`.table`: the table (:class:`Scores`, :func:`merge`, :func:`drop_non_finite`);
- :mod:`.reading`: a scores file read and validated (:func:`read_scores`, :class:`ReadCaps`);
- :mod:`.writing`: a table written (:func:`write_scores`);
- :mod:`.bundled`: the bundled TS2 scores (:func:`bundled_scores`);
- :mod:`.coverage`: which images each metric scored (:func:`coverage`);
- :mod:`.inputs`: a meta-evaluation's dataset and scores, as the CLI and the app read them
  (:func:`load_inputs`).
"""
from __future__ import annotations

from .bundled import bundled_scores
from .coverage import Coverage, coverage
from .inputs import (BUNDLED, Inputs, bundled_names, load_inputs, metric_name, scores_columns, uses_bundled,
                     warn_bundled_lookalikes)
from .reading import HEADER_PREFIX, IGNORED_COLUMNS, NA_STRINGS, PARQUET_KEY, ReadCaps, TooLarge, read_scores
from .table import Scores, drop_non_finite, merge
from .writing import write_scores

__all__ = ["Scores", "merge", "drop_non_finite",
           "read_scores", "ReadCaps", "TooLarge", "IGNORED_COLUMNS", "HEADER_PREFIX", "PARQUET_KEY", "NA_STRINGS",
           "write_scores", "bundled_scores", "Coverage", "coverage",
           "BUNDLED", "Inputs", "load_inputs", "uses_bundled", "metric_name", "scores_columns", "bundled_names",
           "warn_bundled_lookalikes"]
