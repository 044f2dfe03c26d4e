"""Score tables by kind (published, uploaded, live) and their meta-metrics: what the app and a session share."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ...errors import InputError
from ...metametrics.results import MetaMetrics, compute
from ...metametrics.policy import MODES
from ...scores import Scores, merge


KINDS = ("published", "uploaded", "live")
#: metric-name heads shown as ``Embedding`` besides the families of the registry's ``embedding`` group
EMBEDDING_HEADS = ("siglipscore", "blipscore", "openclip", "embedding")


def metric_family(name: str) -> str:
    """A display family for a metric name.

    The family is the one a published TS2 column's head names (:func:`ts2viz.scores.bundled.published_family`),
    else the registered family whose name is the longest prefix of the name's head (``tifa_mplug-large``:
    TIFA); the registry's ``embedding`` group and :data:`EMBEDDING_HEADS` show as ``Embedding``, any other
    family as its display name (:func:`ts2viz.metrics.registry.display_name`).

    Parameters
    ----------
    name : str
        A metric name or spec.

    Returns
    -------
    str
        ``Embedding``, a family's display name (``TIFA``, ``VQAScore``, ...), or the name's head.

    Examples
    --------
    >>> metric_family("clipscore:openai/clip-vit-base-patch32"), metric_family("TIFA-mPLUG"), metric_family("Mine")
    ('Embedding', 'TIFA', 'Mine')
    >>> metric_family("vqascore_clip_flant5"), metric_family("softtifa:m"), metric_family("DSG-GPT4V")
    ('VQAScore', 'Soft-TIFA', 'DSG')
    """
    from ...metrics.registry import display_name, registered
    from ...scores.bundled import published_family

    head = name.split(":", 1)[0] if ":" in name else name.split("-", 1)[0]
    low = head.lower()
    if low in EMBEDDING_HEADS:
        return "Embedding"
    known = registered()
    fam = published_family(head) or max((f for f in known if low.startswith(f)), key=len, default=None)
    if fam is None:
        return head or name
    return "Embedding" if known[fam].group == "embedding" else display_name(fam)


@dataclass
class Table:
    """A scores table loaded into the app, with its meta-metrics per mode once computed.

    Parameters
    ----------
    name : str
        Its name (a file name, ``TS2 published scores``, a live metric's).
    kind : str
        ``published`` (the operator's), ``uploaded`` or ``live`` (a session's).
    scores : ts2viz.scores.Scores
        The scores.
    results : dict of str to MetaMetrics, default {}
        Meta-metrics by mode, once computed.
    """

    name: str
    kind: str
    scores: Scores
    results: dict[str, MetaMetrics] = field(default_factory=dict, repr=False)


class TableSet:
    """Scores tables over one dataset, with merged scores and meta-metrics per mode (cached).

    ``version`` counts the changes (a cache key of every view built from the tables).

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset
        The dataset every table scores.
    """

    def __init__(self, dataset) -> None:
        self.dataset = dataset
        self.tables: list[Table] = []
        self.version = 0
        self._lock = threading.RLock()
        self._mm: dict[str, tuple[int, MetaMetrics]] = {}
        self._merged: tuple[int, Scores] | None = None

    @property
    def metrics(self) -> list[str]:
        """The metrics of every table, in table order."""
        return [m for t in self.tables for m in t.scores.metrics]

    def has(self, metric: str) -> bool:
        """Whether a table holds a metric.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        bool
            True if some table has it.
        """
        return any(metric in t.scores.metrics for t in self.tables)

    def kind_of(self, metric: str) -> str:
        """The kind of the table that holds a metric.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        str
            ``published``, ``uploaded`` or ``live``.

        Raises
        ------
        KeyError
            If no table holds it.
        """
        for t in self.tables:
            if metric in t.scores.metrics:
                return t.kind
        raise KeyError(metric)

    def lower_is_better(self, metric: str) -> bool:
        """Whether a metric's smaller values mean more faithful.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        bool
            True if a table declares it lower-is-better.
        """
        return any(metric in t.scores.lower_is_better for t in self.tables)

    def _check_names(self, scores: Scores, name: str) -> None:
        unknown = [f for f in scores.file_names if not self.dataset.has_image(f)]
        if unknown:
            raise InputError(f"unknown file_name {unknown[0]!r}: not an image of dataset {self.dataset.name}",
                             file=name)

    def _append(self, table: Table) -> None:
        self.tables.append(table)
        self._changed()

    def _changed(self) -> None:
        self.version += 1
        self._mm.clear()
        self._merged = None

    def scores(self) -> Scores:
        """All tables merged (cached until a table is added).

        Returns
        -------
        ts2viz.scores.Scores
            The merged scores.
        """
        with self._lock:
            if self._merged is None or self._merged[0] != self.version:
                self._merged = (self.version, merge([t.scores for t in self.tables]))
            return self._merged[1]

    def mm(self, mode: str) -> MetaMetrics:
        """Meta-metrics of every metric of these tables, in a mode (cached).

        Each table's are computed once and joined metric-wise.

        Parameters
        ----------
        mode : str
            A meta-metric policy preset (``paper`` or ``spec``).

        Returns
        -------
        ts2viz.metametrics.results.MetaMetrics
            The meta-metrics.

        Raises
        ------
        InputError
            For an unknown mode, or when no table is loaded.
        """
        if mode not in MODES:
            raise InputError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
        with self._lock:
            hit = self._mm.get(mode)
            if hit is not None and hit[0] == self.version:
                return hit[1]
            if not self.tables:
                raise InputError("no scores loaded")
            out = MetaMetrics.join([self._table_mm(t, mode) for t in self.tables])
            self._mm[mode] = (self.version, out)
            return out

    def _table_mm(self, t: Table, mode: str) -> MetaMetrics:
        hit = t.results.get(mode)
        if hit is None:
            hit = t.results[mode] = compute(self.dataset, t.scores, policy=mode)
        return hit

    def _owner(self, metric: str) -> Table:
        for t in self.tables:
            if metric in t.scores.metrics:
                return t
        raise InputError(f"no metric {metric!r} loaded")

    def column(self, file_names: Sequence[str], metric: str) -> np.ndarray:
        """Raw (not oriented) scores of one metric for some images, NaN where unscored.

        Parameters
        ----------
        file_names : sequence of str
            The images.
        metric : str
            A metric name.

        Returns
        -------
        numpy.ndarray
            (images,) scores.

        Raises
        ------
        InputError
            If no table holds the metric.
        """
        return self._owner(metric).scores.aligned(list(file_names), [metric], oriented=False)[:, 0]
