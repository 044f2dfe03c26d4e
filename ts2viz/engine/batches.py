"""One metric over a list of images, batch by batch: cache lookups, preparation ahead of the model, stacking.

Decoding and preprocessing (``Metric.prepare``) run in a thread pool (PIL, numpy and torch release the GIL);
the model runs in the calling thread. The pool has a thread per CPU
(:func:`~ts2viz.engine.inputs.pool_threads`), each running torch single-threaded. For a model on an
accelerator at most :func:`~ts2viz.engine.inputs.preparation_threads` of them (a CPU per thread but one for
the model's) prepare a bounded number of batches ahead, so that the accelerator does not wait on them; for a
model on the CPU (:func:`~ts2viz.engine.inputs.computes_on_cpu`) all of them prepare one batch, then the model
computes on torch's threads (no more than the CPUs) while they wait: never more busy threads than cores. For a metric with
``stacks_prepared`` the threads also stack each batch as its images are prepared (in page-locked memory
for a CUDA metric). Images are hashed only for the cache. Each finished batch is committed to the cache
before the next starts; on an error or an interrupt the images not yet started are dropped.
"""
from __future__ import annotations

import os
import threading
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..errors import InputError
from .cache import ScoreCache, hash_pil
from .inputs import Progress, computes_on_cpu, one_torch_thread, pool_threads, preparation_threads

#: images with more pixels than this get NaN and a warning instead of being decoded (a 50-megapixel RGB
#: image is 150 MB decoded; the app's upload limit is the same). Set ``TS2VIZ_MAX_PIXELS`` to change it.
MAX_IMAGE_PIXELS = int(os.environ.get("TS2VIZ_MAX_PIXELS") or 50_000_000)


def _workers() -> int:
    # Leave a core to the model (see inputs.preparation_threads).
    return preparation_threads()


class _Gate:
    """At most ``n`` preparations at once (a model on an accelerator), or no limit (``n`` None)."""

    def __init__(self, n: int | None):
        self.sem = threading.BoundedSemaphore(n) if n else None

    def __enter__(self):
        if self.sem is not None:
            self.sem.acquire()

    def __exit__(self, *exc):
        if self.sem is not None:
            self.sem.release()


def preparation_pool() -> ThreadPoolExecutor:
    """The threads that hash, decode and prepare images, torch single-threaded on each.

    Returns
    -------
    concurrent.futures.ThreadPoolExecutor
        A thread per CPU (:func:`ts2viz.engine.inputs.pool_threads`; :func:`run_metric` says how many of them
        work at once); use it as a context manager.
    """
    return ThreadPoolExecutor(pool_threads(), initializer=one_torch_thread)

class Item:
    """One image to score.

    Where it comes from, its name, its prompt, its cache key, why it failed, and the change made to its
    decoded image before scoring (``hook``: a :class:`Variant`'s ``image``).
    """

    __slots__ = ("source", "name", "prompt", "key", "error", "hook")

    def __init__(self, source, prompt: str, name: str | None = None, hook=None):
        self.source = source
        self.name = name
        self.prompt = prompt
        self.key: str | None = None
        self.error: str | None = None
        self.hook = hook


def hash_items(items: list[Item], cache: ScoreCache | None, pool: ThreadPoolExecutor) -> None:
    """Set each item's cache key (the content hash of its image), or why it has none.

    Without a cache no image is hashed (no key is needed): only a missing source is noted.

    Parameters
    ----------
    items : list of Item
        The images; each gets its ``key`` (or its ``error``) in place.
    cache : ScoreCache or None
        The score cache (it memoises file hashes); None: no hashing.
    pool : concurrent.futures.ThreadPoolExecutor
        The threads that hash (:func:`preparation_pool`).
    """
    from PIL import Image

    if cache is None:
        for it in items:
            if it.source is None:
                it.error = "image not available"
            elif not isinstance(it.source, Image.Image):
                it.key = str(it.source)
        return

    def one(it: Item) -> None:
        if it.source is None:
            it.error = "image not available"
            return
        try:
            if isinstance(it.source, Image.Image):
                it.key = hash_pil(it.source)
            elif cache is not None:
                it.key = cache.file_hash(it.source)
            else:
                it.key = str(it.source)
        except OSError as e:
            it.error = f"unreadable ({e.strerror or type(e).__name__})"

    list(pool.map(one, items))


class _Stacker:
    """One batch's prepared items, stacked by the threads that prepare them.

    Each item is copied into one tensor per field with a new first axis as soon as it is prepared, so that
    the thread that drives the model need not stack them (for a metric with ``stacks_prepared``; see
    :class:`ts2viz.metrics.common.base.PreparedBatch`).

    The first item fixes the fields' shapes and dtypes; an item of another shape or kind (not a tensor or a
    dict of tensors) leaves the batch unstacked, and the metric stacks it as it would anyway. ``pin``: the
    buffers in page-locked memory (a CUDA metric: faster, asynchronous copies to the device).
    """

    def __init__(self, n: int, pin: bool = False):
        self.n, self.pin = n, pin
        self.lock = threading.Lock()
        self.buffers: dict | None = None
        self.ok = True

    def _empty(self, shape, dtype):
        import torch

        if self.pin:
            try:
                return torch.empty(shape, dtype=dtype, pin_memory=True)
            except RuntimeError:    # no page-locked memory to be had: ordinary memory
                self.pin = False
        return torch.empty(shape, dtype=dtype)

    def put(self, slot: int, item):
        """Copy ``item`` into the batch at ``slot``.

        Returns it as a view of the batch, or as it is when the batch cannot take it.
        """
        import torch

        fields = item if isinstance(item, dict) else {None: item}
        if not self.ok or not fields or not all(isinstance(v, torch.Tensor) for v in fields.values()):
            self.ok = False
            return item
        with self.lock:
            if self.buffers is None:
                self.buffers = {k: self._empty((self.n, *v.shape), v.dtype) for k, v in fields.items()}
            buffers = self.buffers
        if set(buffers) != set(fields) or any(buffers[k].shape[1:] != v.shape or buffers[k].dtype != v.dtype
                                              for k, v in fields.items()):
            self.ok = False
            return item
        views = {}
        for k, v in fields.items():
            buffers[k][slot].copy_(v)
            views[k] = buffers[k][slot]
        return views if isinstance(item, dict) else views[None]

    def batch(self, prepared: list):
        """The batch's items as a :class:`PreparedBatch` carrying the stacked tensors, or the plain list."""
        from ..metrics.common.base import PreparedBatch

        if not self.ok or self.buffers is None or len(prepared) != self.n:
            return prepared
        stacked = self.buffers if None not in self.buffers else self.buffers[None]
        return PreparedBatch(prepared, stacked)


def _pinned_staging(metric) -> bool:
    """Whether a metric's stacked batches are staged in page-locked memory: it runs on a CUDA device."""
    import sys

    torch = sys.modules.get("torch")
    device = str(getattr(metric, "device", "") or "")
    return bool(torch is not None and device.startswith("cuda") and torch.cuda.is_available())


def run_metric(metric, items: list[Item], cache: ScoreCache | None, pool: ThreadPoolExecutor,
                batch_size: int | None, progress: Progress | None,
                want_details: bool) -> tuple[np.ndarray, list]:
    """Scores (and details) of ``items`` for one metric, reusing and filling the cache.

    Every metric takes the same path: ``prepare`` on worker threads (given the decoded image when the
    metric needs pixels, and the image's name), then ``score_prepared`` in batches on this thread.

    Parameters
    ----------
    metric : Metric
        The loaded metric.
    items : list of Item
        The images, hashed (:func:`hash_items`); an item that fails gets its ``error`` set in place.
    cache : ScoreCache or None
        The score cache to read and fill (None, or a metric that is not cacheable: none).
    pool : concurrent.futures.ThreadPoolExecutor
        The threads that decode and prepare (:func:`preparation_pool`).
    batch_size : int or None
        Images per model call (None: the metric's own).
    progress : callable or None
        Called as ``progress(spec, done, total)`` after the cache check and after each batch.
    want_details : bool
        Whether to read cached details back too (a metric with details always computes them).

    Returns
    -------
    values : numpy.ndarray
        One score per item, NaN where it could not be scored.
    details : list
        One entry per item: its details, or None.
    """
    from ..metrics.common.base import score_with_oom_retry

    n = len(items)
    values = np.full(n, np.nan)
    details: list = [None] * n
    pixels = metric.needs_pixels
    # A metric that needs no pixels can score an image whose file cannot be read.
    todo = [i for i, it in enumerate(items) if not pixels or it.error is None]
    if not metric.cacheable:
        cache = None
    with_details = metric.has_details
    if cache is not None and todo:
        cache.register_metric(metric.config_hash, metric.spec, metric.config)
        hits = cache.get_many(metric.config_hash, [(items[i].key, items[i].prompt) for i in todo
                                                   if items[i].key is not None],
                              with_details=with_details and want_details)
        rest = []
        for i in todo:
            h = hits.get((items[i].key, items[i].prompt)) if items[i].key is not None else None
            if h is None:
                rest.append(i)
            else:
                values[i], details[i] = h
        todo = rest
    if todo:
        metric.check_prompts([items[i].prompt for i in todo])
    total, done = n, n - len(todo)
    if progress:
        progress(metric.spec, done, total)
    bs = int(batch_size or metric.batch_size)
    failed: dict[int, str] = {}

    # A model on the CPU: its batch prepared on every thread of the pool, then the model on torch's threads,
    # never both at once; on an accelerator: at most preparation_threads() at work, batches ahead of it.
    on_cpu = computes_on_cpu(metric)
    gate = _Gate(None if on_cpu else _workers())

    def prep(i: int, stacker: _Stacker | None = None, slot: int = 0):
        with gate:
            return _prep(i, stacker, slot)

    def _prep(i: int, stacker: _Stacker | None, slot: int):
        try:
            if pixels:
                check_pixels(items[i].source)
            image = metric.read_image(items[i].source) if pixels else None
            if pixels and items[i].hook is not None:
                image = items[i].hook(image, items[i].source)
            x = metric.prepare(image, items[i].name)
            return stacker.put(slot, x) if stacker is not None else x
        except InputError as e:
            failed[i] = e.problem
        except Exception as e:  # noqa: BLE001 - a bad image must not stop the run
            failed[i] = f"cannot preprocess ({type(e).__name__}: {e})"
        return None

    # Batches are prepared ahead of the model on the worker threads (each image on its own thread, and
    # for a metric that takes stacked batches, copied into its batch as it is done), a bounded number of
    # them in flight: while the model scores one batch, the next ones are being prepared.
    stacking = bool(getattr(metric, "stacks_prepared", False))
    pin = stacking and _pinned_staging(metric)
    ahead = 1 if on_cpu else max(2, -(-4 * _workers() // max(bs, 1)))
    queue: deque = deque()
    pos = 0

    def refill() -> None:
        nonlocal pos
        while pos < len(todo) and len(queue) < ahead:
            idx = todo[pos:pos + bs]
            pos += len(idx)
            stacker = _Stacker(len(idx), pin) if stacking else None
            queue.append((idx, [pool.submit(prep, i, stacker, k) for k, i in enumerate(idx)], stacker))

    try:
        refill()
        while queue:
            idx, futures, stacker = queue.popleft()
            batch = [(i, fut.result()) for i, fut in zip(idx, futures)]
            if not on_cpu:
                refill()
            good = [(i, x) for i, x in batch if i not in failed]
            if good:
                prepared = [x for _, x in good]
                if stacker is not None and len(good) == len(batch):
                    prepared = stacker.batch(prepared)
                vals, dets, bs = score_with_oom_retry(metric, prepared, [items[i].prompt for i, _ in good], bs)
                rows = []
                for k, (i, _) in enumerate(good):
                    if np.isinf(vals[k]):   # the one rule for non-finite scores: no score (see scores.drop_non_finite)
                        failed[i] = f"the metric returned {vals[k]}"
                        vals[k] = np.nan
                    values[i] = vals[k]
                    d = dets[k] if dets is not None else None
                    details[i] = d
                    if cache is not None and items[i].key is not None:
                        rows.append((items[i].key, items[i].prompt, vals[k], d))
                if cache is not None:
                    cache.put_many(metric.config_hash, rows)
            done += len(batch)
            if progress:
                progress(metric.spec, done, total)
            refill()
    except BaseException:
        # An error, or an interrupt (Ctrl-C, a progress callback that stops the run): the images not yet
        # started are dropped, so that leaving the thread pool waits only for those being prepared.
        for _, futures, _ in queue:
            for fut in futures:
                fut.cancel()
        raise
    for i, why in failed.items():
        items[i].error = items[i].error or why
    return values, details



def check_pixels(source, max_pixels: int | None = None) -> None:
    """Refuse an image with too many pixels, reading only the file's header: an oversized image is never decoded.

    The engine calls it before decoding each image; the image then gets NaN and is named in the run's
    warning.

    Parameters
    ----------
    source : str or os.PathLike or PIL.Image.Image
        The image file, or an image in memory. An unreadable file passes (decoding reports it).
    max_pixels : int or None, default None
        The most pixels (width x height) allowed; None: :data:`MAX_IMAGE_PIXELS` (``TS2VIZ_MAX_PIXELS``).

    Raises
    ------
    InputError
        If the image has more than ``max_pixels`` pixels, or Pillow's decompression-bomb check refuses it.

    Examples
    --------
    >>> from PIL import Image
    >>> check_pixels(Image.new("RGB", (10, 10)), max_pixels=100)
    >>> check_pixels(Image.new("RGB", (10, 11)), max_pixels=100)
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: image is 10x11 = 0 megapixels; the limit is 0.0001 megapixels (TS2VIZ_MAX_PIXELS)
    """
    from PIL import Image

    limit = MAX_IMAGE_PIXELS if max_pixels is None else max_pixels
    try:
        if isinstance(source, Image.Image):
            w, h = source.size
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(source) as im:
                    w, h = im.size
    except Image.DecompressionBombError as e:
        raise InputError(f"image has too many pixels ({e}); the limit is {limit / 1e6:g} megapixels "
                         f"(TS2VIZ_MAX_PIXELS)") from None
    except Exception:  # noqa: BLE001 - not an image, truncated...: load_image says so
        return
    if w * h > limit:
        raise InputError(f"image is {w}x{h} = {w * h / 1e6:.0f} megapixels; the limit is {limit / 1e6:g} "
                         f"megapixels (TS2VIZ_MAX_PIXELS)")
