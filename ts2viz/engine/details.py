"""Per-image details of a scored metric read back from the score cache, without a model or any scoring.

A metric with details (TIFA, DSG, Gecko, T2I-FineEval, the judges, ...) stores each image's details beside its
score in the engine's cache (:class:`ts2viz.engine.cache.ScoreCache`); :func:`cached_details` finds them
again from the metric's ``config_hash`` and the dataset's image files. :mod:`ts2viz.qa` reads them as
question-level records and tables.
"""
from __future__ import annotations

from typing import Sequence

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
