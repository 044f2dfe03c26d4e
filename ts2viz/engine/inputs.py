"""What the single-process and the Ray engines share.

Where a dataset's images are, the progress callback's shape, the one warning about images that could not
be scored, and the threads that prepare images.
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
    """One variant of every input of a run (:func:`ts2viz.engine.score_variants`): the images and prompts
    as they are (both ``None``), or changed before scoring.

    Attributes
    ----------
    label : names the variant (progress, columns); unique within a run.
    image : called as ``image(rgb_image, source) -> rgb_image`` after decoding, before the metric's
        preprocessing; its ``key`` attribute (a string) is part of the score-cache key, so a changed
        image is cached apart from the original. Must be picklable for Ray.
    prompt : called as ``prompt(text) -> text`` on each prompt (the changed prompt is the cache key's).
    """

    label: str
    image: Any = None
    prompt: Callable[[str], str] | None = None


@dataclass(frozen=True, eq=False)     # holds an array: compared by identity
class VariantScores:
    """What :func:`score_variants` returns: one metric's scores of every variant of every image.

    ``values[i, v]`` is the score of image ``file_names[i]`` in variant ``labels[v]`` (NaN: not scored);
    ``spec``, ``config`` and ``config_hash`` name the metric exactly; ``higher_is_better`` its direction.
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

    A network that fails or stalls costs one short probe (:func:`ts2viz.dataset.hub_reachable`), not a
    timeout per image; after a few failed downloads the rest come from the local hub cache only.
    """
    from ..dataset import cached_image, fetch_image, hub_reachable

    out: list = []
    fails = 0
    may_download = None     # decided at the first image that needs the hub
    for fn in file_names:
        p = ds.image_path(fn)
        if p is None and ds.hf_id is not None:
            if may_download is None:
                import huggingface_hub.constants as hub_constants

                # offline mode: fetch_image only looks in the cache
                may_download = bool(hub_constants.HF_HUB_OFFLINE) or hub_reachable()
            if may_download and fails < 3:
                p = fetch_image(ds, fn)
                fails = 0 if p is not None else fails + 1
            else:
                p = cached_image(ds, fn)
        out.append(p)
    return out


def warn_unscored(names: Sequence[str], errors: Sequence[str | None], stacklevel: int = 3) -> int:
    """Warn once about the images that could not be scored (``errors[i]`` says why, ``None`` if scored).

    Returns how many there are.
    """
    bad = [(n, e) for n, e in zip(names, errors) if e is not None]
    if bad:
        first = "; ".join(f"{n}: {e}" for n, e in bad[:3])
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        warnings.warn(f"{len(bad)} image(s) could not be scored and get NaN: {first}{more}", InputWarning,
                      stacklevel=stacklevel)
    return len(bad)


#: at most this many threads prepare images (env ``TS2VIZ_WORKERS`` sets the number outright). More threads
#: contend for the interpreter lock: on one H100 with 16 CPUs (benchmarks/bench_gpu.py, CLIP ViT-L/14,
#: bfloat16, 1024 images) the engine scored 557, 549, 529, 449 and 322 images/s with 2, 4, 6, 8 and 15
#: threads, PickScore ViT-H/14 619 with 4 and 241 with 15 (docs/guide/speed.md)
MAX_PREPARATION_THREADS = 4


def preparation_threads() -> int:
    """How many threads decode and prepare images for the model.

    One per CPU this process may run on, less one for the thread that drives the model: at least 1, at most
    :data:`MAX_PREPARATION_THREADS`. The CPUs are those of the process's affinity mask where the system has
    one (a container's or a cluster job's share), else ``os.cpu_count()``.

    Returns
    -------
    int
        The number of threads; the environment variable ``TS2VIZ_WORKERS`` sets it outright.

    Examples
    --------
    >>> preparation_threads() >= 1
    True
    """
    env = os.environ.get("TS2VIZ_WORKERS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_PREPARATION_THREADS, cpus - 1))


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
