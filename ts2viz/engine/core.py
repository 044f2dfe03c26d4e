"""Batch scoring: datasets or loose images through metrics, with the score cache and a prefetching loader.

Decoding and preprocessing (``Metric.prepare``) run in a thread pool ahead of the model, a bounded number
of batches ahead (PIL, numpy and torch release the GIL), so that the accelerator does not wait on them;
the model runs in the calling thread. The pool has a thread per CPU but one
(:func:`~ts2viz.engine.inputs.preparation_threads`), each running torch single-threaded; for a metric with
``stacks_prepared`` the threads also stack each batch as its images are prepared (in page-locked memory
for a CUDA metric). Images are hashed only for the cache. Each finished batch is committed to the cache
before the next starts; on an error or an interrupt the images not yet started are dropped.

Loaded metrics are kept for reuse in this process (:func:`get_metric`, at most :data:`MODEL_CACHE_SIZE`),
so that the app's repeated :func:`score_images` calls load a model once.
"""
from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from .cache import ScoreCache, hash_pil, variant_key
from .inputs import (Progress, Variant, VariantScores, image_sources, one_torch_thread, preparation_threads,
                     warn_unscored)


#: How many loaded metrics (models) the process keeps, least recently used dropped first
#: (env ``TS2VIZ_MODEL_CACHE``). A model can take gigabytes of GPU memory: keeping every spec ever
#: asked for (a public app) would exhaust it.
MODEL_CACHE_SIZE = max(1, int(os.environ.get("TS2VIZ_MODEL_CACHE", "2") or 2))

_METRICS: "OrderedDict[tuple, Any]" = OrderedDict()
_METRICS_LOCK = threading.Lock()

#: images with more pixels than this get NaN and a warning instead of being decoded (a 50-megapixel RGB
#: image is 150 MB decoded; the app's upload limit is the same). Set ``TS2VIZ_MAX_PIXELS`` to change it.
MAX_IMAGE_PIXELS = int(os.environ.get("TS2VIZ_MAX_PIXELS") or 50_000_000)


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


def _workers() -> int:
    # Leave a core to the model (see inputs.preparation_threads).
    return preparation_threads()


def _pool() -> ThreadPoolExecutor:
    """The threads that hash, decode and prepare images, torch single-threaded on each."""
    return ThreadPoolExecutor(_workers(), initializer=one_torch_thread)


def _open_cache(cache_dir, use_cache: bool) -> ScoreCache | None:
    if not use_cache:
        return None
    return ScoreCache(cache_dir)


class _Item:
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


def _hash_items(items: list[_Item], cache: ScoreCache | None, pool: ThreadPoolExecutor) -> None:
    """Set each item's cache key (the content hash of its image), or why it has none.

    Without a cache no image is hashed (no key is needed): only a missing source is noted.
    """
    from PIL import Image

    if cache is None:
        for it in items:
            if it.source is None:
                it.error = "image not available"
            elif not isinstance(it.source, Image.Image):
                it.key = str(it.source)
        return

    def one(it: _Item) -> None:
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


def _run_metric(metric, items: list[_Item], cache: ScoreCache | None, pool: ThreadPoolExecutor,
                batch_size: int | None, progress: Progress | None,
                want_details: bool) -> tuple[np.ndarray, list]:
    """Scores (and details) of ``items`` for one metric, reusing and filling the cache.

    Every metric takes the same path: ``prepare`` on worker threads (given the decoded image when the
    metric needs pixels, and the image's name), then ``score_prepared`` in batches on this thread.
    """
    from ..metrics.common.base import load_image, score_with_oom_retry

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

    def prep(i: int, stacker: _Stacker | None = None, slot: int = 0):
        try:
            if pixels:
                check_pixels(items[i].source)
            image = load_image(items[i].source) if pixels else None
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
    ahead = max(2, -(-4 * _workers() // max(bs, 1)))
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


def _warn_missing(items: list[_Item], names: Sequence[str]) -> int:
    return warn_unscored(names, [it.error for it in items], stacklevel=4)


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


def score_images(spec_or_metric, images: Sequence, prompts: Sequence[str], *, device: str | None = None,
                 batch_size: int | None = None, cache_dir=None, use_cache: bool = True,
                 progress: Progress | None = None, return_details: bool = False):
    r"""Score loose images (PIL images or paths) against their prompts, through the score cache.

    The app's live scoring and :func:`ts2viz.authoring.score_drafts` call it; :func:`score_dataset` is the
    same engine over a dataset's images. Both share one cache, so either reuses the other's finished work.

    How it runs: the metric is loaded once per process and kept (:func:`get_metric`). With the cache, each
    image is hashed first (a file by its bytes, memoised by path, size and mtime; a PIL image by its mode,
    size and pixels) and every ``(metric config hash, image hash, prompt)`` already in the cache is taken
    from it without decoding the image. The rest are decoded and preprocessed on a pool of threads
    (:func:`~ts2viz.engine.inputs.preparation_threads`, ``TS2VIZ_WORKERS``) a few batches ahead of the
    model, which runs in the calling thread; each finished batch is committed to the cache in one
    transaction before the next, so an interrupted call loses at most the batch in flight and the next call
    scores only what is missing.

    Parameters
    ----------
    spec_or_metric : str or ts2viz.metrics.common.base.Metric
        The metric: a SPEC string (``clipscore:ViT-B-32/openai``, ``vqascore:clip-flant5-xl``,
        ``callable:mypkg.metrics:my_score``; :mod:`ts2viz.metrics`) or a loaded metric.
    images : sequence of PIL.Image.Image or path
        The images, any mode (converted to 8-bit RGB). A path's text names the image in warnings; so does a
        PIL image's ``filename`` when it has one.
    prompts : sequence of str
        One prompt per image.
    device : str or None, default None
        Where a metric given as a spec is loaded: ``cuda``, ``cuda:N``, ``mps`` or ``cpu``; None: the first
        of cuda, mps and cpu that torch can use. A loaded metric stays where it is. The compute dtype, part
        of the metric's config, differs between GPU and CPU, so their scores are cached apart.
    batch_size : int or None, default None
        Images per model call; None: the metric's own (its family's card). On GPU out-of-memory the failing
        batch is halved and retried, and the smaller size is kept for the rest of the call (one warning).
    cache_dir : str or os.PathLike or None, default None
        The score cache: a folder (holding ``scores.sqlite``) or a ``.sqlite``/``.db`` file; None:
        :func:`ts2viz.engine.cache.default_path`.
    use_cache : bool, default True
        False: neither read nor write the cache (and no image is hashed). Metrics that are not
        ``cacheable`` (``csv:``) never use it.
    progress : callable or None, default None
        ``progress(spec, done, total)``: called once before scoring with the images already done (cache
        hits), then after every batch. An exception raised in it stops the run (finished batches stay in
        the cache).
    return_details : bool, default False
        Also return the metric's per-image details.

    Returns
    -------
    scores : numpy.ndarray
        Float64, one score per image, in order; NaN for an image that could not be scored (unreadable, not
        an image, over :data:`MAX_IMAGE_PIXELS`, or a metric that returned an infinite value).
    details : list
        Only with ``return_details=True``: per image, the metric's details (the per-question records of
        TIFA, DSG and the other question-answering metrics), else ``None``.

    Raises
    ------
    InputError
        If ``images`` and ``prompts`` differ in length; from :func:`get_metric` (a malformed spec, an
        unknown family, a model that cannot be loaded, a device that is not available); if the cache file
        cannot be opened; if the metric refuses a prompt (``check_prompts``).

    Warns
    -----
    InputWarning
        Once, naming the images that could not be scored and why.

    See Also
    --------
    score_dataset : every image of a dataset, one column per metric.
    ts2viz.engine.cache.ScoreCache : the cache's keys.

    Examples
    --------
    A metric of your own (``callable:file.py:function``) on two images; the second call takes both scores
    from the cache (progress starts at 2 of 2) and an unreadable image gets NaN:

    >>> import pathlib, tempfile, warnings
    >>> from PIL import Image
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (tmp / "mine.py").write_text("def redness(images, prompts):\n"
    ...                                  "    return [im.getpixel((0, 0))[0] / 255 for im in images]\n")
    >>> spec = f"callable:{tmp / 'mine.py'}:redness"
    >>> ims = [Image.new("RGB", (8, 8), "red"), Image.new("RGB", (8, 8), (51, 51, 51))]
    >>> seen = []
    >>> def progress(spec, done, total):
    ...     seen.append((done, total))
    >>> score_images(spec, ims, ["a red square", "a grey square"], cache_dir=tmp, progress=progress)
    array([1. , 0.2])
    >>> seen
    [(0, 2), (2, 2)]
    >>> seen.clear()
    >>> score_images(spec, ims, ["a red square", "a grey square"], cache_dir=tmp, progress=progress)
    array([1. , 0.2])
    >>> seen
    [(2, 2)]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     score_images(spec, [ims[0], tmp / "lost.png"], ["a red square"] * 2, use_cache=False)
    array([ 1., nan])
    >>> print(caught[0].message)
    1 image(s) could not be scored and get NaN: .../lost.png: ...
    >>> import shutil; shutil.rmtree(tmp)
    """
    images, prompts = list(images), list(prompts)
    if len(images) != len(prompts):
        raise InputError(f"got {len(images)} images but {len(prompts)} prompts")
    metric = get_metric(spec_or_metric, device)
    names = [str(im) if isinstance(im, (str, os.PathLike)) else getattr(im, "filename", None) or None
             for im in images]
    items = [_Item(im, str(p), name) for im, p, name in zip(images, prompts, names)]
    cache = _open_cache(cache_dir, use_cache)
    try:
        with _pool() as pool:
            _hash_items(items, cache, pool)
            values, dets = _run_metric(metric, items, cache, pool, batch_size, progress, return_details)
    finally:
        if cache is not None:
            cache.close()
    _warn_missing(items, [name or f"image {k}" for k, name in enumerate(names)])
    return (values, dets) if return_details else values


def _needs_pixels(spec) -> bool:
    """Whether a metric (a spec string or a built metric) reads the images: as its family's record says."""
    if isinstance(spec, str):
        from ..metrics import family

        try:
            return family(spec.strip().partition(":")[0].strip()).needs_pixels
        except InputError:       # an unknown family: the metric's loading says what is wrong
            return True
    return bool(getattr(spec, "needs_pixels", True))


def _require_images(ds, names: Sequence[str]) -> None:
    """Raise :class:`InputError` unless some of these images can be had.

    On disk, in the hub cache, or from the hub (:func:`ts2viz.dataset.images_available`, a second at most).
    """
    from ..dataset import images_available

    if images_available(ds, names):
        return
    where = ("the local hub cache does not hold them and the hub cannot be reached (offline)"
             if ds.hf_id is not None else "its folder holds no image files")
    raise InputError(f"none of the {len(names)} images of dataset {ds.name} could be read: {where}. Nothing was "
                     "scored and no model was loaded; pass a dataset folder with the images (--dataset FOLDER)")


def score_dataset(dataset, specs: Sequence, seg_ids: Sequence[int] | None = None, device: str | None = None,
                  batch_size: int | None = None, cache_dir=None, progress: Progress | None = None, *,
                  use_cache: bool = True, ray: bool | str | None = None, ray_actors: int | None = None):
    r"""Score every image of a dataset with each metric: the engine behind ``ts2viz score``.

    The metrics run one after the other, each over every image. Before any model is loaded the engine
    checks that some image can be had (a dataset without its image files fails at once, not after a model
    load of many seconds); images are then resolved (a hub dataset's are fetched to the local hub cache) and
    hashed once for all metrics.

    The cache: a score is stored under ``(metric config hash, image content hash, prompt)``
    (:mod:`ts2viz.engine.cache`). The config hash covers everything that changes a metric's numbers (model
    and its revision or files, options, compute dtype), so another model or option is a fresh column, while
    a renamed or moved image file is still a hit. Each batch is committed in one transaction as it
    finishes: a run that is interrupted (Ctrl-C, a crash, a killed job) resumes where it stopped when run
    again, and a run over images already scored (by a previous run or by the app's :func:`score_images`)
    loads the model but makes no model call.

    Devices and batches: a metric given as a spec is loaded on ``device`` and kept for reuse in this
    process (:func:`get_metric`). Images are decoded and preprocessed on a pool of threads
    (:func:`~ts2viz.engine.inputs.preparation_threads`; ``TS2VIZ_WORKERS`` sets the number) a few batches
    ahead of the model, which runs in the calling thread. On GPU out-of-memory the failing batch is halved
    and retried, and the smaller batch size is kept for the rest of that metric (one warning).

    Ray: with ``ray`` the same scoring runs on Ray actors, one loaded metric each, possibly on many
    machines (:mod:`ts2viz.engine.distributed`): the actors read and decode the images where they lie, the
    calling process owns the cache and commits every returned block. Same scores, same cache entries, same
    resumability.

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset or str or os.PathLike
        A loaded dataset, or a spec for :func:`ts2viz.dataset.load_dataset`: ``"ts2"`` (the bundled
        metadata, whose images come from the hub), a dataset folder, or a Hugging Face dataset id.
    specs : sequence of str or ts2viz.metrics.common.base.Metric
        The metrics: SPEC strings (``clipscore:ViT-B-32/openai``, ``vqascore:clip-flant5-xl?batch_size=8``;
        :mod:`ts2viz.metrics`) or loaded metrics; one column each, named by its spec. With ``ray``, SPEC
        strings only (each actor loads its own copy).
    seg_ids : sequence of int or None, default None
        Score only these SEGs (:meth:`ts2viz.dataset.Dataset.subset`); None: all.
    device : str or None, default None
        Where metrics given as specs are loaded: ``cuda``, ``cuda:N``, ``mps`` or ``cpu``; None: the first
        of cuda, mps and cpu that torch can use. Loaded metrics stay where they are. With ``ray``: None uses
        the cluster's GPUs if it has any, ``cuda`` requires them, ``cpu`` runs on CPU actors.
    batch_size : int or None, default None
        Images per model call (with ``ray``, also images per block sent to an actor); None: each metric's
        own (its family's card).
    cache_dir : str or os.PathLike or None, default None
        The score cache: a folder (holding ``scores.sqlite``) or a ``.sqlite``/``.db`` file; None:
        :func:`ts2viz.engine.cache.default_path`. CLI ``--cache``.
    progress : callable or None, default None
        ``progress(spec, done, total)``: per metric, called once with the images already done (cache hits)
        and then after every batch; with ``ray`` also for hashing, labelled ``"hashing images"``. An
        exception raised in it stops the run (finished batches stay in the cache).
    use_cache : bool, default True
        False: neither read nor write the cache, and hash no image (CLI ``--no-cache``).
    ray : bool or str or None, default None
        None or False: score in this process. True: on Ray, joining this process's Ray connection if it has
        one, else ``$RAY_ADDRESS`` if set, else a new local instance using this machine's CPUs and GPUs. A
        string: join the cluster at that address (``auto``, ``ray://HOST:10001``, ``HOST:6379``). CLI
        ``--ray [ADDRESS]``.
    ray_actors : int or None, default None
        With ``ray``: how many metric actors (each loads the model); None: one per GPU of the cluster, else
        one per CPU.

    Returns
    -------
    ts2viz.scores.Scores
        One row per image (the dataset's order), one column per spec (named by the spec string), its
        lower-is-better metrics recorded. NaN for an image that could not be scored (one warning).

    Raises
    ------
    InputError
        If no spec is given or the same metric is given twice; if none of the dataset's images can be read
        (e.g. the bundled TS2 metadata offline, without its images): nothing is scored and no model is
        loaded; if a dataset spec, metric spec, model, device or the cache cannot be used; if a metric
        refuses a prompt. With ``ray`` also: ``ray`` is not installed, the cluster cannot be reached, a
        spec is not a string, ``ray_actors`` or ``batch_size`` is below 1, a GPU is asked of a cluster
        without one, or the actors loaded different models (config hashes differ between nodes).
    RuntimeError
        With ``ray``: every actor died while loading the metric, or a block was lost twice with its actor
        (finished blocks are in the cache; a re-run resumes).

    Warns
    -----
    InputWarning
        Once, naming the images that could not be scored (missing, unreadable, too large) and why.

    See Also
    --------
    score_images : loose images, the app's live scoring.
    score_variants : the same metric on changed copies of the images or prompts.
    ts2viz.metametrics.compute : the meta-metrics of the returned scores.

    Examples
    --------
    A dataset folder of one SEG with three images, and a metric of your own:

    >>> import pathlib, tempfile
    >>> from PIL import Image
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> (tmp / "ds" / "images").mkdir(parents=True)
    >>> rows = ["id,target_prompt,file_name,image_source,rank"]
    >>> for rank, red in [("0", 255), ("1", 128), ("2", 0)]:
    ...     Image.new("RGB", (8, 8), (red, 0, 0)).save(tmp / "ds" / "images" / f"{rank}.png")
    ...     rows.append(f"0,a red square,images/{rank}.png,demo,{rank}")
    >>> _ = (tmp / "ds" / "metadata.csv").write_text("\n".join(rows) + "\n")
    >>> _ = (tmp / "mine.py").write_text("def redness(images, prompts):\n"
    ...                                  "    return [im.getpixel((0, 0))[0] / 255 for im in images]\n")
    >>> spec = f"callable:{tmp / 'mine.py'}:redness"
    >>> sc = score_dataset(tmp / "ds", [spec], cache_dir=tmp / "cache")
    >>> sc.file_names, sc.metrics == [spec]
    (['images/0.png', 'images/1.png', 'images/2.png'], True)
    >>> sc.values.round(2).ravel().tolist()
    [1.0, 0.5, 0.0]

    A second run finds every score in the cache (progress starts at 3 of 3):

    >>> seen = []
    >>> _ = score_dataset(tmp / "ds", [spec], cache_dir=tmp / "cache",
    ...                   progress=lambda spec, done, total: seen.append((done, total)))
    >>> seen
    [(3, 3)]
    >>> score_dataset(tmp / "ds", [])
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: no metric given (use --metric SPEC; `ts2viz metrics` lists the families)
    >>> import shutil; shutil.rmtree(tmp)

    On a Ray cluster (``pip install 'ts2viz[ray]'``), the same call with ``ray=True`` (a local instance or
    ``$RAY_ADDRESS``) or ``ray="HOST:6379"``, e.g. ``score_dataset("ts2", ["clipscore:ViT-L-14/openai"],
    ray="auto", ray_actors=4)``.
    """
    from ..dataset import Dataset, load_dataset
    from ..scores import Scores

    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    if seg_ids is not None:
        ds = ds.subset(seg_ids)
    specs = list(specs)
    if not specs:
        raise InputError("no metric given (use --metric SPEC; `ts2viz metrics` lists the families)")
    if ray is not None and ray is not False:
        from .distributed import score_dataset_on_ray

        return score_dataset_on_ray(ds, specs, address=ray, actors=ray_actors, device=device,
                                    batch_size=batch_size, cache_dir=cache_dir, progress=progress,
                                    use_cache=use_cache)
    names = ds.file_names
    if any(_needs_pixels(s) for s in specs):
        _require_images(ds, names)      # before a model is loaded (that can take many seconds)
    metrics = [get_metric(s, device) for s in specs]
    labels = [m.spec for m in metrics]
    if len(set(labels)) != len(labels):
        raise InputError("the same metric is given twice")
    values = np.full((len(names), len(metrics)), np.nan)
    cache = _open_cache(cache_dir, use_cache)
    try:
        items = [_Item(None, ds.row(fn).prompt, fn) for fn in names]
        with _pool() as pool:
            if any(m.needs_pixels for m in metrics):
                for it, src in zip(items, image_sources(ds, names)):
                    it.source = src
                _hash_items(items, cache, pool)
                if all(it.error is not None for it in items):
                    raise InputError(f"none of the {len(items)} images of dataset {ds.name} could be read "
                                     "(no local image files; pass a dataset folder with the images)")
            for j, m in enumerate(metrics):
                values[:, j], _ = _run_metric(m, items, cache, pool, batch_size, progress, False)
        if any(m.needs_pixels for m in metrics):
            _warn_missing(items, names)
    finally:
        if cache is not None:
            cache.close()
    lib = {m.spec for m in metrics if not m.higher_is_better}
    return Scores(list(names), labels, values, lib, source=f"ts2viz score ({ds.name})")


def score_variants(dataset, spec, variants: Sequence[Variant], seg_ids: Sequence[int] | None = None,
                   device: str | None = None, batch_size: int | None = None, cache_dir=None,
                   progress: Progress | None = None, *, use_cache: bool = True, ray: bool | str | None = None,
                   ray_actors: int | None = None) -> VariantScores:
    r"""Score every image of ``dataset`` with one metric in several :class:`Variant` s of its inputs.

    The nuisance analysis (:mod:`ts2viz.nuisance`) runs on it. The metric is loaded once and each image's
    file is hashed once; a variant's scores are batched and cached like :func:`score_dataset`'s, its cache
    key carrying the variant's image change (:func:`ts2viz.engine.cache.variant_key`) and changed prompt,
    so an interrupted run resumes and a re-run scores nothing.

    Parameters
    ----------
    dataset : ts2viz.dataset.Dataset or str or os.PathLike
        A loaded dataset, or a spec for :func:`ts2viz.dataset.load_dataset`.
    spec : str or ts2viz.metrics.common.base.Metric
        The metric: a SPEC string, or a loaded metric (not with ``ray``).
    variants : sequence of Variant
        The variants, e.g. ``[Variant("clean"), Variant("jpeg", image=hook)]``; labels unique.
    seg_ids : sequence of int or None, default None
        As for :func:`score_dataset`.
    device : str or None, default None
        As for :func:`score_dataset`.
    batch_size : int or None, default None
        As for :func:`score_dataset`.
    cache_dir : str or os.PathLike or None, default None
        As for :func:`score_dataset`.
    progress : callable or None, default None
        As for :func:`score_dataset`, per variant, labelled ``"{spec} [{label}]"``.
    use_cache : bool, default True
        As for :func:`score_dataset`.
    ray : bool or str or None, default None
        As for :func:`score_dataset`: one pool of actors serves every variant.
    ray_actors : int or None, default None
        As for :func:`score_dataset`.

    Returns
    -------
    VariantScores
        The scores, one column per variant in the order given; NaN for an image that could not be read
        (one warning).

    Raises
    ------
    InputError
        If no variant is given or a label is given twice, if no image can be read, or for what
        :func:`score_dataset` raises.
    RuntimeError
        With ``ray``, as for :func:`score_dataset`.

    Examples
    --------
    The images as they are, and their prompts in capitals (a metric that reads the prompt):

    >>> import pathlib, tempfile
    >>> from PIL import Image
    >>> from ts2viz.engine import Variant
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> (tmp / "ds" / "images").mkdir(parents=True)
    >>> Image.new("RGB", (8, 8), "red").save(tmp / "ds" / "images" / "0.png")
    >>> _ = (tmp / "ds" / "metadata.csv").write_text("id,target_prompt,file_name,image_source,rank\n"
    ...                                              "0,a red square,images/0.png,demo,0\n")
    >>> _ = (tmp / "mine.py").write_text("def capitals(images, prompts):\n"
    ...                                  "    return [sum(c.isupper() for c in p) for p in prompts]\n")
    >>> vs = score_variants(tmp / "ds", f"callable:{tmp / 'mine.py'}:capitals",
    ...                     [Variant("clean"), Variant("shout", prompt=str.upper)], cache_dir=tmp / "cache")
    >>> vs.file_names, vs.labels, vs.values.tolist()
    (['images/0.png'], ['clean', 'shout'], [[0.0, 10.0]])
    >>> import shutil; shutil.rmtree(tmp)
    """
    from ..dataset import Dataset, load_dataset

    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    if seg_ids is not None:
        ds = ds.subset(seg_ids)
    variants = list(variants)
    labels = [v.label for v in variants]
    if not variants:
        raise InputError("no variant to score")
    if len(set(labels)) != len(labels):
        raise InputError(f"variant {next(x for x in labels if labels.count(x) > 1)!r} is given twice")
    if ray is not None and ray is not False:
        from .distributed import score_variants_on_ray

        return score_variants_on_ray(ds, spec, variants, address=ray, actors=ray_actors, device=device,
                                     batch_size=batch_size, cache_dir=cache_dir, progress=progress,
                                     use_cache=use_cache)
    names = ds.file_names
    if _needs_pixels(spec):
        _require_images(ds, names)      # before a model is loaded
    metric = get_metric(spec, device)
    values = np.full((len(names), len(variants)), np.nan)
    cache = _open_cache(cache_dir, use_cache)
    errors: list[str | None] = [None] * len(names)
    try:
        base = [_Item(None, ds.row(fn).prompt, fn) for fn in names]
        with _pool() as pool:
            if metric.needs_pixels:
                for it, src in zip(base, image_sources(ds, names)):
                    it.source = src
                _hash_items(base, cache, pool)
                if all(it.error is not None for it in base):
                    raise InputError(f"none of the {len(base)} images of dataset {ds.name} could be read "
                                     "(no local image files; pass a dataset folder with the images)")
            for v, var in enumerate(variants):
                hook = var.image if metric.needs_pixels else None
                items = []
                for b in base:
                    it = _Item(b.source, var.prompt(b.prompt) if var.prompt is not None else b.prompt, b.name, hook)
                    it.error = b.error
                    it.key = variant_key(b.key, hook.key) if (hook is not None and b.key is not None) else b.key
                    items.append(it)

                def prog(_spec, done, total, _label=var.label):
                    if progress is not None:
                        progress(f"{_spec} [{_label}]", done, total)

                values[:, v], _ = _run_metric(metric, items, cache, pool, batch_size, prog, False)
                for i, it in enumerate(items):
                    errors[i] = errors[i] or it.error
    finally:
        if cache is not None:
            cache.close()
    warn_unscored(names, errors, stacklevel=2)
    return VariantScores(list(names), labels, values, metric.spec, dict(metric.config), metric.config_hash,
                         bool(metric.higher_is_better))
