"""Loaded metrics kept in memory for reuse in this process, so that repeated calls load a model once.

At most :data:`MODEL_CACHE_SIZE` (env ``TS2VIZ_MODEL_CACHE``), least recently used dropped first: the app's
repeated :func:`ts2viz.engine.score_images` calls share them (:func:`get_metric`).
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any


#: How many loaded metrics (models) the process keeps, least recently used dropped first
#: (env ``TS2VIZ_MODEL_CACHE``). A model can take gigabytes of GPU memory: keeping every spec ever
#: asked for (a public app) would exhaust it.
MODEL_CACHE_SIZE = max(1, int(os.environ.get("TS2VIZ_MODEL_CACHE", "2") or 2))

_METRICS: "OrderedDict[tuple, Any]" = OrderedDict()
_METRICS_LOCK = threading.Lock()


def get_metric(spec, device: str | None = None, **options):
    r"""A loaded metric for ``spec`` (a SPEC string or a Metric), reused across calls in this process.

    At most :data:`MODEL_CACHE_SIZE` metrics are kept, keyed by ``(spec, device, options)``, least recently
    used dropped first (a caller still holding a dropped one keeps it until done; once it is dropped, cached
    GPU memory is given back). Loads are serialised, so two threads asking for the same spec load it once.

    Parameters
    ----------
    spec : str or ts2viz.metrics.common.base.Metric
        A SPEC string (``family:model?key=value``, see :mod:`ts2viz.metrics`), or a loaded metric, which is
        returned as it is (neither kept nor checked against ``device``).
    device : str or None, default None
        ``cuda``, ``cuda:N``, ``mps`` or ``cpu``; None: the first of cuda, mps and cpu that torch can use.
    **options
        Options overriding the spec's ``?key=value`` part (:func:`ts2viz.metrics.load`).

    Returns
    -------
    ts2viz.metrics.common.base.Metric
        The metric: the kept one when the same ``(spec, device, options)`` was loaded before.

    Raises
    ------
    InputError
        From :func:`ts2viz.metrics.load`: a malformed spec, an unknown family or option, a model that cannot
        be found or loaded, or a device that is not available.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "mine.py").write_text("def length(images, prompts):\n"
    ...                                  "    return [len(p) for p in prompts]\n")
    >>> m = get_metric(f"callable:{tmp / 'mine.py'}:length")
    >>> m is get_metric(f"callable:{tmp / 'mine.py'}:length"), get_metric(m) is m
    (True, True)
    >>> (m.spec, None, ()) in cached_metrics()
    True
    >>> import shutil; shutil.rmtree(tmp)
    """
    from ..metrics import load
    from ..metrics.common.base import Metric

    if isinstance(spec, Metric):
        return spec
    key = (spec, device, tuple(sorted(options.items())))
    with _METRICS_LOCK:
        m = _METRICS.get(key)
        if m is not None:
            _METRICS.move_to_end(key)
            return m
        m = load(spec, device=device, **options)
        _METRICS[key] = m
        dropped = []
        while len(_METRICS) > MODEL_CACHE_SIZE:
            dropped.append(_METRICS.popitem(last=False)[1])
    if dropped:
        del dropped
        _release_accelerator_memory()
    return m


def get_metrics(specs, device: str | None = None) -> list:
    """The loaded metrics of ``specs`` (:func:`get_metric` each), in order, no metric twice.

    Parameters
    ----------
    specs : sequence of (str or ts2viz.metrics.common.base.Metric)
        SPEC strings or loaded metrics.
    device : str or None, default None
        As for :func:`get_metric`.

    Returns
    -------
    list of ts2viz.metrics.common.base.Metric
        One metric per spec.

    Raises
    ------
    InputError
        If two specs give the same metric (the same ``spec`` label), or as for :func:`get_metric`.
    """
    from ..errors import InputError

    metrics = [get_metric(s, device) for s in specs]
    labels = [m.spec for m in metrics]
    if len(set(labels)) != len(labels):
        raise InputError("the same metric is given twice")
    return metrics

def cached_metrics() -> list[tuple]:
    """Keys of the loaded metrics kept for reuse by :func:`get_metric`.

    Returns
    -------
    list of tuple
        ``(spec, device, options)`` per kept metric (``options`` a sorted tuple of ``(name, value)``
        pairs), least recently used first.
    """
    with _METRICS_LOCK:
        return list(_METRICS)


def _release_accelerator_memory() -> None:
    # Only if torch is already imported: a dropped model's CUDA memory goes back to the device.
    import gc
    import sys

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
