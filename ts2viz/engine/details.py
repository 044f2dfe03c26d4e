"""Per-image details of a scored metric read back from the score cache, without a model or any scoring.

A metric with details (TIFA, DSG, Gecko, T2I-FineEval, the judges, ...) stores each image's details beside its
score in the engine's cache (:class:`ts2viz.engine.cache.ScoreCache`); :func:`cached_details` finds them
again from the metric's ``config_hash`` and the dataset's image files. :func:`cached_qa_records` reads a TIFA/DSG metric's as question-level
records (:mod:`ts2viz.qa`'s tables take them from there).
"""
from __future__ import annotations

from typing import Sequence

from ..errors import InputError
from .cache import ScoreCache


def cached_details(config_hash: str, dataset, file_names: Sequence[str] | None = None, cache_dir=None) -> dict:
    """Per-image details of a scored metric from the score cache (no model call, no scoring).

    Parameters
    ----------
    config_hash : str
        The metric's ``config_hash`` (it names the metric's cache entries; a loaded metric is not
        needed).
    dataset : Dataset
        The :class:`ts2viz.Dataset` the images belong to (image files on disk, or cached hub
        downloads): an entry's key is the image file's hash and the image's prompt.
    file_names : sequence of str, optional
        The images to look up (default: all of the dataset's).
    cache_dir : str or os.PathLike, optional
        The score cache (as for ``ts2viz.engine.score_dataset``; None: the default cache).

    Returns
    -------
    dict
        ``{file_name: details}`` for the images whose details are cached, in ``file_names`` order;
        images not scored yet, scored without details, or without a readable image file are absent.
    """
    from ..dataset import cached_image

    names = list(dataset.file_names if file_names is None else file_names)
    with ScoreCache(cache_dir) as cache:
        keys, found = [], []
        for fn in names:
            path = dataset.image_path(fn) or cached_image(dataset, fn)
            if path is None:
                continue
            try:
                keys.append((cache.file_hash(path), dataset.row(fn).prompt))
            except OSError:
                continue
            found.append(fn)
        hits = cache.get_many(config_hash, keys, with_details=True)
    return {fn: hits[k][1] for fn, k in zip(found, keys) if k in hits and hits[k][1]}


def cached_qa_records(metric, dataset, file_names: Sequence[str] | None = None, cache_dir=None):
    """QA records of a live TIFA/DSG metric from the score cache (no model call, no scoring).

    Parameters
    ----------
    metric : Metric
        The loaded TIFA/DSG metric (its ``config_hash`` names its cache entries; its ``spec`` names the
        records).
    dataset : Dataset
        The :class:`ts2viz.Dataset` the images belong to (image files on disk, or cached hub
        downloads).
    file_names : sequence of str, optional
        The images to look up (default: all of the dataset's).
    cache_dir : str or os.PathLike, optional
        The score cache (as for ``ts2viz.engine.score_dataset``; None: the default cache).

    Returns
    -------
    pandas.DataFrame
        QA records (:data:`ts2viz.qa.records.RECORD_COLUMNS`) named by ``metric.spec`` for the images
        whose per-question details are cached; images not scored yet are absent.

    Raises
    ------
    InputError
        If ``metric`` is not a TIFA/DSG metric with per-question details, or if the cached details are
        malformed.
    """
    from ..metrics.qametric.metric import QAMetric
    from ..metrics.registry import details_kind
    from ..qa.details import ANSWER_KINDS, question_kind
    from ..qa.records import records_from_details

    kind = details_kind(metric.name) if isinstance(metric, QAMetric) else ""
    if kind not in ANSWER_KINDS or not getattr(metric, "has_details", False):
        raise InputError(f"{getattr(metric, 'spec', metric)!r} is not a TIFA/DSG metric with per-question details")
    got = cached_details(metric.config_hash, dataset, file_names, cache_dir)
    return records_from_details(metric.spec, question_kind(kind), list(got), list(got.values()))
