"""What the single-process and the Ray engines share.

Where a dataset's images are (:func:`image_sources`), the progress callback's shape (:data:`Progress`),
the variants of a run's inputs (:class:`Variant`, :class:`VariantScores`), the one warning about images
that could not be scored (:func:`warn_unscored`), and the threads that prepare images
(:func:`preparation_threads`, :func:`one_torch_thread`).
"""
from __future__ import annotations

import os
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..errors import InputWarning

#: progress(spec, done, total): called after every batch (cache hits count as done at once)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Variant:
    """One variant of every input of a run (:func:`ts2viz.engine.score_variants`).

    The images and prompts as they are (``image`` and ``prompt`` both ``None``), or changed before scoring
    (a nuisance transform, :mod:`ts2viz.nuisance`).

    Attributes
    ----------
    label : str
        Names the variant (in progress reports and as its column); unique within a run.
    image : callable or None, default None
        Called as ``image(rgb_image, source) -> rgb_image`` after decoding, before the metric's
        preprocessing; its ``key`` attribute (a string) is part of the score-cache key
        (:func:`ts2viz.engine.cache.variant_key`), so a changed image is cached apart from the original.
        Must be picklable for Ray. Ignored for a metric that reads no pixels.
    prompt : callable or None, default None
        Called as ``prompt(text) -> text`` on each prompt; the changed prompt is the one in the cache key.

    Examples
    --------
    >>> from ts2viz.engine import Variant
    >>> Variant("clean")
    Variant(label='clean', image=None, prompt=None)
    >>> Variant("shout", prompt=str.upper).prompt("a red cat")
    'A RED CAT'
    """

    label: str
    image: Any = None
    prompt: Callable[[str], str] | None = None


@dataclass(frozen=True, eq=False)     # holds an array: compared by identity
class VariantScores:
    """What :func:`ts2viz.engine.score_variants` returns: one metric's scores of every variant of every image.

    Compared by identity (it holds an array).

    Attributes
    ----------
    file_names : list of str
        The images, in the dataset's order (the rows of ``values``).
    labels : list of str
        The variants' labels, in the order given (the columns of ``values``).
    values : numpy.ndarray
        Float64, shape ``(len(file_names), len(labels))``: ``values[i, v]`` is the score of image
        ``file_names[i]`` in variant ``labels[v]``; NaN where it was not scored (an unreadable image).
    spec : str
        The metric's spec.
    config : dict
        The metric's config (what its cache key is a hash of).
    config_hash : str
        :attr:`ts2viz.metrics.common.base.Metric.config_hash`: names the metric exactly.
    higher_is_better : bool
        The metric's direction.
    """

    file_names: list[str]
    labels: list[str]
    values: Any
    spec: str
    config: dict
    config_hash: str
    higher_is_better: bool


def image_sources(ds, file_names: Sequence[str]) -> list:
    """Local paths of the dataset's images, fetching from the hub when the dataset has no local copy.

    A network that fails or stalls costs one short probe (:func:`ts2viz.hub.reachable`), not a
    timeout per image; after a few failed downloads the rest come from the local hub cache only. In
    offline mode (:func:`ts2viz.hub.offline`) only the local hub cache is looked in.

    Parameters
    ----------
    ds : ts2viz.dataset.Dataset
        The dataset.
    file_names : sequence of str
        The images wanted (the dataset's ``file_name`` values).

    Returns
    -------
    list
        Per file name, in order: the image's local path, or ``None`` when it cannot be had (no local file,
        not in the hub cache and not downloadable).
    """
    from ..dataset import cached_image, fetch_image
    from ..hub import offline, reachable

    out: list = []
    fails = 0
    may_download = None     # decided at the first image that needs the hub
    for fn in file_names:
        p = ds.image_path(fn)
        if p is None and ds.hf_id is not None:
            if may_download is None:
                # offline mode: fetch_image only looks in the cache
                may_download = offline() or reachable()
            if may_download and fails < 3:
                p = fetch_image(ds, fn)
                fails = 0 if p is not None else fails + 1
            else:
                p = cached_image(ds, fn)
        out.append(p)
    return out


def warn_unscored(names: Sequence[str], errors: Sequence[str | None], stacklevel: int = 3) -> int:
    """Warn once about the images that could not be scored.

    One :class:`ts2viz.errors.InputWarning` names the first three images and their reasons and counts the
    rest; nothing is issued when every image was scored.

    Parameters
    ----------
    names : sequence of str
        The images' names.
    errors : sequence of str or None
        Per image, why it could not be scored, or ``None`` if it was.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (3: the caller of the engine function that calls this).

    Returns
    -------
    int
        How many images could not be scored.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unscored(["a.png", "b.png"], [None, "unreadable (No such file or directory)"])
    1
    >>> print(caught[0].message)
    1 image(s) could not be scored and get NaN: b.png: unreadable (No such file or directory)
    """
    bad = [(n, e) for n, e in zip(names, errors) if e is not None]
    if bad:
        first = "; ".join(f"{n}: {e}" for n, e in bad[:3])
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        warnings.warn(f"{len(bad)} image(s) could not be scored and get NaN: {first}{more}", InputWarning,
                      stacklevel=stacklevel)
    return len(bad)


#: at most this many threads prepare images ahead of a model on an accelerator (env ``TS2VIZ_WORKERS`` sets the
#: number outright). More threads contend for the interpreter lock: on one H100 with 16 CPUs
#: (benchmarks/bench_gpu.py, CLIP ViT-L/14, bfloat16, 1024 images) the engine scored 557, 549, 529, 449 and 322
#: images/s with 2, 4, 6, 8 and 15 threads, PickScore ViT-H/14 619 with 4 and 241 with 15 (docs/guide/speed.md)
MAX_PREPARATION_THREADS = 4


def _workers_from_env() -> int | None:
    env = os.environ.get("TS2VIZ_WORKERS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return None


def preparation_threads() -> int:
    """How many threads decode and prepare images ahead of a model on an accelerator.

    One per CPU this process may run on (:func:`ts2viz.parallel.usable_cpus`), less one for the thread that
    drives the model: at least 1, at most :data:`MAX_PREPARATION_THREADS`. A model that computes on the CPU
    gets :func:`pool_threads` instead, one batch at a time (:func:`computes_on_cpu`).

    Returns
    -------
    int
        The number of threads; the environment variable ``TS2VIZ_WORKERS`` sets it outright.

    Examples
    --------
    >>> preparation_threads() >= 1
    True
    """
    env = _workers_from_env()
    if env is not None:
        return env
    from ..parallel import usable_cpus

    return max(1, min(MAX_PREPARATION_THREADS, usable_cpus() - 1))


def pool_threads() -> int:
    """How many threads the engine's preparation pool has: one per CPU this process may run on.

    A model on the CPU has its batch prepared on all of them, then computes on torch's threads while they
    wait (:func:`computes_on_cpu`); a model on an accelerator has at most :func:`preparation_threads` of them
    at work at a time, ahead of it.

    Returns
    -------
    int
        :func:`ts2viz.parallel.usable_cpus`; the environment variable ``TS2VIZ_WORKERS`` sets it outright.

    Examples
    --------
    >>> pool_threads() >= preparation_threads()
    True
    """
    env = _workers_from_env()
    if env is not None:
        return env
    from ..parallel import usable_cpus

    return usable_cpus()


def computes_on_cpu(metric) -> bool:
    """Whether a metric's model computes on the CPU: a torch module in ``metric.model`` on device ``cpu``.

    For such a metric the engine never runs preparation and the model at once, which would put more threads
    to work than there are cores (torch's intra-op threads take every core): it prepares a batch on
    :func:`pool_threads` threads, then runs the model on torch's threads (no more than the CPUs), then
    prepares the next. A metric without a local model (an API judge) keeps preparing ahead of its calls.

    Parameters
    ----------
    metric : Metric
        A loaded metric.

    Returns
    -------
    bool
        True for a torch model on the CPU.
    """
    torch = sys.modules.get("torch")
    if torch is None or str(getattr(metric, "device", "") or "").split(":")[0] != "cpu":
        return False
    return isinstance(getattr(metric, "model", None), torch.nn.Module)


def one_torch_thread() -> None:
    """Run torch's operations on the calling thread without intra-op parallelism.

    The initializer of the engine's preparation threads. Many threads each preparing one image beat one image's resize split over every core; and torch's
    OpenMP pool, entered from many threads at once, starts a team of threads for each of them (on a
    16-core machine with 8 preparation threads, up to 8 x 16 threads on 16 cores). Only the calling thread's
    OpenMP setting changes (through ``threadpoolctl``), not torch's process-wide number of threads
    (``torch.set_num_threads`` would lower it for every thread started later as well).

    Returns
    -------
    None
        Nothing happens when torch is not imported yet or threadpoolctl is missing.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    torch.get_num_threads()     # torch's own setup of this thread first: it would undo what follows
    try:
        threadpool_limits(1, user_api="openmp")
    except Exception:  # noqa: BLE001 - no OpenMP runtime found: nothing to limit
        pass
