"""Batch scoring: datasets or loose images through metrics, with the score cache and a prefetching loader.

The entry points (:func:`score_images`, :func:`score_dataset`, :func:`score_variants`) check their inputs,
open the cache and run each metric over the images batch by batch (:mod:`ts2viz.engine.batches`: the
prefetching loader); loaded metrics are kept for reuse in this process (:mod:`ts2viz.engine.models`), so
that the app's repeated :func:`score_images` calls load a model once.
"""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from ..errors import InputError
from .batches import Item, hash_items, preparation_pool, run_metric
from .cache import ScoreCache, variant_key
from .inputs import Progress, Variant, VariantScores, image_sources, warn_unscored
from .models import get_metric, get_metrics


def _open_cache(cache_dir, use_cache: bool) -> ScoreCache | None:
    if not use_cache:
        return None
    return ScoreCache(cache_dir)


def _warn_missing(items: list[Item], names: Sequence[str]) -> int:
    return warn_unscored(names, [it.error for it in items], stacklevel=4)


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
    (:func:`~ts2viz.engine.inputs.pool_threads`, ``TS2VIZ_WORKERS``): a few batches ahead of a model on an
    accelerator, or a batch at a time between the calls of a model on the CPU
    (:func:`~ts2viz.engine.inputs.computes_on_cpu`); the model runs in the calling thread; each finished batch is committed to the cache in one
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
        an image, over :data:`ts2viz.engine.batches.MAX_IMAGE_PIXELS`, or a metric that returned an infinite value).
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
    items = [Item(im, str(p), name) for im, p, name in zip(images, prompts, names)]
    cache = _open_cache(cache_dir, use_cache)
    try:
        with preparation_pool() as pool:
            hash_items(items, cache, pool)
            values, dets = run_metric(metric, items, cache, pool, batch_size, progress, return_details)
    finally:
        if cache is not None:
            cache.close()
    _warn_missing(items, [name or f"image {k}" for k, name in enumerate(names)])
    return (values, dets) if return_details else values


def needs_pixels(spec) -> bool:
    """Whether a metric reads the images, as its family's record says (:attr:`ts2viz.metrics.Family.needs_pixels`).

    Parameters
    ----------
    spec : str or Metric
        A metric spec (its family is looked up) or a built metric (its ``needs_pixels``).

    Returns
    -------
    bool
        False for a metric that reads no pixels (precomputed scores); True otherwise, and for an unknown
        family (the metric's loading then says what is wrong).
    """
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


def _hash_dataset_images(ds, names, items, cache, pool) -> None:
    # the items' sources (the dataset's images of ``names``, in order) set and hashed; InputError if none
    # of them can be read
    for it, src in zip(items, image_sources(ds, names)):
        it.source = src
    hash_items(items, cache, pool)
    if all(it.error is not None for it in items):
        raise InputError(f"none of the {len(items)} images of dataset {ds.name} could be read "
                         "(no local image files; pass a dataset folder with the images)")


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
    (:func:`~ts2viz.engine.inputs.pool_threads`; ``TS2VIZ_WORKERS`` sets the number) a few batches ahead of
    a model on an accelerator, a batch at a time between the calls of one on the CPU; the model runs in the
    calling thread. On GPU out-of-memory the failing batch is halved
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
    ts2viz.metametrics.results.compute : the meta-metrics of the returned scores.

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
    if any(needs_pixels(s) for s in specs):
        _require_images(ds, names)      # before a model is loaded (that can take many seconds)
    metrics = get_metrics(specs, device)
    values = np.full((len(names), len(metrics)), np.nan)
    cache = _open_cache(cache_dir, use_cache)
    try:
        items = [Item(None, ds.row(fn).prompt, fn) for fn in names]
        with preparation_pool() as pool:
            if any(m.needs_pixels for m in metrics):
                _hash_dataset_images(ds, names, items, cache, pool)
            for j, m in enumerate(metrics):
                values[:, j], _ = run_metric(m, items, cache, pool, batch_size, progress, False)
        if any(m.needs_pixels for m in metrics):
            _warn_missing(items, names)
    finally:
        if cache is not None:
            cache.close()
    lib = {m.spec for m in metrics if not m.higher_is_better}
    return Scores(list(names), [m.spec for m in metrics], values, lib, source=f"ts2viz score ({ds.name})")


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
    if needs_pixels(spec):
        _require_images(ds, names)      # before a model is loaded
    metric = get_metric(spec, device)
    values = np.full((len(names), len(variants)), np.nan)
    cache = _open_cache(cache_dir, use_cache)
    errors: list[str | None] = [None] * len(names)
    try:
        base = [Item(None, ds.row(fn).prompt, fn) for fn in names]
        with preparation_pool() as pool:
            if metric.needs_pixels:
                _hash_dataset_images(ds, names, base, cache, pool)
            for v, var in enumerate(variants):
                hook = var.image if metric.needs_pixels else None
                items = []
                for b in base:
                    it = Item(b.source, var.prompt(b.prompt) if var.prompt is not None else b.prompt, b.name, hook)
                    it.error = b.error
                    it.key = variant_key(b.key, hook.key) if (hook is not None and b.key is not None) else b.key
                    items.append(it)

                def prog(_spec, done, total, _label=var.label):
                    if progress is not None:
                        progress(f"{_spec} [{_label}]", done, total)

                values[:, v], _ = run_metric(metric, items, cache, pool, batch_size, prog, False)
                for i, it in enumerate(items):
                    errors[i] = errors[i] or it.error
    finally:
        if cache is not None:
            cache.close()
    warn_unscored(names, errors, stacklevel=2)
    return VariantScores(list(names), labels, values, metric.spec, dict(metric.config), metric.config_hash,
                         bool(metric.higher_is_better))
