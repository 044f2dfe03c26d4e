"""The scores table: per-image metric scores with their orientation, aligned to image lists, merged."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from ..errors import InputError, warn_input


@dataclass
class Scores:
    """Per-image scores of one or more metrics.

    ``values[i, j]`` is metric ``metrics[j]`` on image ``file_names[i]`` (NaN = no score).

    Parameters
    ----------
    file_names : list of str
        The images (rows).
    metrics : list of str
        The metrics (columns), each once.
    values : array_like
        (images, metrics) scores, reshaped to that shape; inf and -inf become NaN with one
        :class:`~ts2viz.errors.InputWarning` (:func:`drop_non_finite`).
    lower_is_better : set of str, default empty
        The metrics whose smaller values mean more faithful.
    source : str, default ""
        Where the scores came from (a file; for messages).

    Raises
    ------
    InputError
        If a metric is named twice.

    See Also
    --------
    read_scores : a scores file.
    bundled_scores : the scores behind the published TS2 leaderboard.

    Examples
    --------
    >>> from ts2viz import Scores
    >>> s = Scores(["a.png", "b.png"], ["mine", "distance"], [[0.9, 0.2], [0.4, 0.7]], {"distance"})
    >>> s.aligned(["b.png", "c.png"]).tolist()
    [[0.4, -0.7], [nan, nan]]
    """

    file_names: list[str]
    metrics: list[str]
    values: np.ndarray
    lower_is_better: set[str] = field(default_factory=set)
    source: str = ""

    def __post_init__(self) -> None:
        """Shape the values, check the metric names, and turn infinities into NaN (one warning)."""
        self.values = np.asarray(self.values, dtype=np.float64).reshape(len(self.file_names), len(self.metrics))
        if len(set(self.metrics)) != len(self.metrics):
            dup = next(m for m in self.metrics if self.metrics.count(m) > 1)
            raise InputError(f"metric {dup!r} appears twice", file=self.source or None)
        if np.isinf(self.values).any():
            self.values = self.values.copy()    # not the caller's array
            drop_non_finite(self.values, self.metrics, self.source, lambda i: f"image {self.file_names[i]!r}")
        self._index = {f: i for i, f in enumerate(self.file_names)}

    def column(self, metric: str) -> np.ndarray:
        """The scores of one metric, as stored (not oriented).

        Parameters
        ----------
        metric : str
            A metric of :attr:`metrics`.

        Returns
        -------
        numpy.ndarray
            (images,) a view of :attr:`values`.

        Raises
        ------
        ValueError
            If the metric is not in the table.
        """
        return self.values[:, self.metrics.index(metric)]

    def get(self, file_name: str, metric: str) -> float:
        """One score.

        Parameters
        ----------
        file_name : str
            An image.
        metric : str
            A metric of :attr:`metrics`.

        Returns
        -------
        float
            The score as stored; NaN for an image the table does not have.

        Raises
        ------
        ValueError
            If the metric is not in the table.
        """
        i = self._index.get(file_name)
        return math.nan if i is None else float(self.values[i, self.metrics.index(metric)])

    def aligned(self, file_names: Sequence[str], metrics: Sequence[str] | None = None,
                *, oriented: bool = True) -> np.ndarray:
        """Scores for ``file_names`` (rows) x ``metrics`` (columns).

        Parameters
        ----------
        file_names : sequence of str
            The images, in the order wanted.
        metrics : sequence of str, optional
            The metrics (default: all).
        oriented : bool, default True
            Negate lower-is-better metrics, so that higher is always better.

        Returns
        -------
        numpy.ndarray
            (len(file_names), len(metrics)) float64.

        Raises
        ------
        InputError
            If a metric is not in the table.

        Notes
        -----
        NaN policy: NaN where an image has no score or is not in the table; values changed in place to inf
        since construction are set to NaN too (with a warning).
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
        # values may have been changed in place since construction: no inf leaves this table
        drop_non_finite(out, metrics, self.source, lambda i: f"image {file_names[i]!r}")
        if oriented:
            flip = np.array([m in self.lower_is_better for m in metrics])
            out[:, flip] *= -1.0
        return out

    def select(self, metrics: Sequence[str]) -> "Scores":
        """A table of some of the metrics.

        Parameters
        ----------
        metrics : sequence of str
            The metrics to keep, in this order.

        Returns
        -------
        Scores
            The same images; lower-is-better kept for the selected metrics.

        Raises
        ------
        ValueError
            If a metric is not in the table.
        """
        cols = [self.metrics.index(m) for m in metrics]
        return Scores(list(self.file_names), list(metrics), self.values[:, cols],
                      {m for m in metrics if m in self.lower_is_better}, self.source)

    def to_frame(self):
        """The table as a DataFrame.

        Returns
        -------
        pandas.DataFrame
            ``file_name`` and one column per metric.
        """
        import pandas as pd

        df = pd.DataFrame(self.values, columns=self.metrics)
        df.insert(0, "file_name", self.file_names)
        return df


def merge(tables: Iterable[Scores]) -> Scores:
    """Join scores tables column-wise on ``file_name``; a metric may appear in only one table.

    Parameters
    ----------
    tables : iterable of Scores
        The tables.

    Returns
    -------
    Scores
        Every image of any table (in order of first appearance) x every metric; NaN where a table lacks
        an image. A single table is returned as it is.

    Raises
    ------
    ValueError
        If there is no table.
    InputError
        If a metric is in two tables.
    """
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


def drop_non_finite(values: np.ndarray, metrics: Sequence[str], source: object = None,
                    where: Callable[[int], str] | None = None) -> int:
    """Set the inf/-inf entries of ``values`` to NaN, in place, with one warning.

    This is the one rule for non-finite scores, wherever they enter (a scores file, a :class:`Scores`
    built in code, a metric's output): they count as no score. Left in, an inf would rank as the best or
    worst possible score in ord and sep while the mean gaps silently dropped it.

    Parameters
    ----------
    values : numpy.ndarray
        (rows, metrics), changed in place.
    metrics : sequence of str
        The metrics (for the message).
    source : object, optional
        The file (for the message).
    where : callable, optional
        ``where(i)`` describes row ``i`` (e.g. ``"row 5"``) in the message.

    Returns
    -------
    int
        How many entries were set to NaN.

    Warns
    -----
    InputWarning
        When there are any: one warning counting them per metric and naming the first.
    """
    bad = np.isinf(values)
    n = int(bad.sum())
    if not n:
        return 0
    parts = []
    for j in np.flatnonzero(bad.any(axis=0)):
        col = bad[:, j]
        first = int(np.flatnonzero(col)[0])
        parts.append(f"{metrics[j]!r} {int(col.sum())} (first at {where(first) if where else f'row index {first}'})")
    values[bad] = np.nan
    warn_input(f"{n} non-finite score(s) (inf, -inf, or too large for float64) treated as missing: "
               + ", ".join(parts), file=source or None, stacklevel=3)
    return n
