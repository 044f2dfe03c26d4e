"""Batch scoring on a Ray cluster: the single-process engine's results and score cache, many machines.

``score_dataset(..., ray=True | ADDRESS)`` (CLI ``ts2viz score --ray [ADDRESS]``) lands here.

How a run goes
--------------
* The **driver** (the process that calls ``score_dataset``) loads the dataset's metadata, resolves the
  image paths and owns the SQLite score cache. It never decodes an image and never reads one whole.
* A pool of **actors** each holds one loaded metric: one per GPU (``num_gpus=1``) when the cluster
  has GPUs, else one per CPU. They all load at once; the first one up serves the cache check while
  the others load, and each joins the work when ready. Work reaches them as (path, file name,
  prompt) triples, never pixels.
* Images whose content hash the cache does not know yet are hashed by the actors (sha1 of the file,
  read where it lies); the driver memoises those hashes like the single-process engine does. The
  driver then looks every (metric, image hash, prompt) up in the cache and dispatches only misses.
* Misses go out in **blocks of one batch** (the batch size of the single-process engine, so the
  same images share a model call), at most two blocks in flight per actor so that an actor decodes
  its next block while the model runs. An actor reads each file once (hash and decode from the same
  bytes), preprocesses, scores, and returns the scores and the hashes of the bytes it scored.
* The driver **commits every returned block to the cache in one transaction as it arrives**, then
  updates one progress bar (images/s over the whole cluster).

Why the driver commits (and not the workers): the score cache is one SQLite file, and SQLite must not
be written from several machines over a network filesystem; results are a few bytes per image, so
one writer is no bottleneck, and the workers need no shared writable storage. A killed driver loses
at most the blocks in flight; a re-run finds the committed ones in the cache and dispatches the rest.

Faults: actors restart when their process dies (``max_restarts``) and Ray re-runs their unfinished
blocks on the restarted actor (``max_task_retries``). A block whose actor is gone for good after
that is given to another actor once; a second loss stops the run (finished work is in the cache).

Requirements on a multi-node cluster: the same ts2viz (``pip install 'ts2viz[ray,models]'``) on every
node, the dataset at the same path on every node (a shared filesystem), and the model at the same
local path or reachable on the hub. Every actor reports its metric's config hash with each block; a
node that loaded a different model (say, another revision) stops the run instead of mixing scores.
"""
from __future__ import annotations

import contextlib
import uuid
import warnings
from collections import deque
from typing import Sequence

import numpy as np

from ..errors import InputError
from .cache import ScoreCache, variant_key
from .inputs import Progress, image_sources, warn_unscored
from .ray_actor import BlockScorer
from .ray_cluster import connect, import_ray

#: restarts of a dead actor process, and re-runs of its unfinished blocks on the restarted actor
ACTOR_MAX_RESTARTS = 3
ACTOR_MAX_TASK_RETRIES = 3
#: blocks in flight per actor (one being scored, one being decoded)
BLOCKS_IN_FLIGHT = 2
#: files per hashing call
HASH_BLOCK = 64
#: CPUs reserved by a GPU actor at most (its decode threads)
GPU_ACTOR_MAX_CPUS = 8
#: how long the driver waits for Ray in one call, so that Ctrl-C is noticed
WAIT_S = 1.0
#: after this long without a first actor, say why the run may be waiting
SLOW_START_S = 120.0
#: the label of the hashing stage in the progress callback
HASHING = "hashing images"
#: actors are named ACTOR_NAME-<8 hex digits for the metric's pool>-<k> (``ray.get_actor``, to watch one)
ACTOR_NAME = "ts2viz-score"


# -- the pool --------------------------------------------------------------------------------------

class _Pool:
    """The actors holding one metric. Actors join the rotation once their model is loaded."""

    def __init__(self, ray, spec: str, device: str | None):
        self.ray = ray
        res = ray.cluster_resources()
        gpus, cpus = res.get("GPU", 0), res.get("CPU", 1)
        wants_gpu = device is not None and str(device).startswith("cuda")
        if wants_gpu and gpus < 1:
            raise InputError(f"device {device!r} requested but the Ray cluster has no GPU (use --device cpu)")
        self.on_gpu = gpus >= 1 and (device is None or wants_gpu)
        if self.on_gpu:
            # A GPU actor decodes on a few threads of its own so that the GPU is not kept waiting.
            ncpu = max(1, min(GPU_ACTOR_MAX_CPUS, int(cpus // gpus)))
            opts = {"num_gpus": 1, "num_cpus": ncpu}
            self.default_size = int(gpus)
        else:
            ncpu = 1
            opts = {"num_cpus": 1}
            self.default_size = max(1, int(cpus))
        self.cls = ray.remote(BlockScorer)
        self.opts = dict(max_restarts=ACTOR_MAX_RESTARTS, max_task_retries=ACTOR_MAX_TASK_RETRIES,
                         max_concurrency=2, **opts)
        self.args = (spec, device, ncpu)
        self.actors: list = []
        self.prefix = f"{ACTOR_NAME}-{uuid.uuid4().hex[:8]}-"

    def start(self, n: int) -> dict:
        """Start ``n`` more actors; returns ``{ref of its info(): actor index}``."""
        out = {}
        for _ in range(max(0, n)):
            a = self.cls.options(name=f"{self.prefix}{len(self.actors)}", **self.opts).remote(*self.args)
            self.actors.append(a)
            out[a.info.remote()] = len(self.actors) - 1
        return out

    def close(self) -> None:
        for a in self.actors:
            try:
                self.ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.actors = []


def _lost_errors(ray) -> tuple:
    """Ray's errors that mean the actor (process or node) is gone, as opposed to an error in our code."""
    ex = ray.exceptions
    return (ex.RayActorError, ex.WorkerCrashedError, ex.NodeDiedError, ex.OutOfMemoryError)


def _get(ray, ref, what: str):
    """``ray.get`` with an actor's InputError re-raised as itself (one line for the CLI)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, InputError):
            raise e.cause from None
        raise
    except _lost_errors(ray) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise RuntimeError(f"the Ray actor {what} died: {first[:300]} (is the same ts2viz installed on "
                           "every node?)") from e


class _Blocks:
    """Runs blocks of work over a pool's actors, two in flight per actor, handing results back as they arrive.

    Actors still loading join when ready; a block whose actor is lost for good (Ray's restarts and retries
    used up) goes to another actor once.
    """

    def __init__(self, ray, pool: _Pool, ready: list[int], joining: dict, config_hash: str, spec: str):
        self.ray, self.pool, self.ready, self.joining = ray, pool, ready, joining
        self.config_hash, self.spec = config_hash, spec
        self.lost = _lost_errors(ray)

    def run(self, blocks: list[list[int]], call, on_result) -> None:
        """``call(actor, block) -> ObjectRef``; ``on_result(block, result)`` on the driver, per block."""
        ray = self.ray
        pending: deque = deque((b, 0) for b in blocks)
        inflight: dict = {}
        load = {a: 0 for a in self.ready}

        def feed(a: int) -> None:
            while pending and load[a] < BLOCKS_IN_FLIGHT:
                blk, tries = pending.popleft()
                inflight[call(self.pool.actors[a], blk)] = (a, blk, tries)
                load[a] += 1

        for a in self.ready:
            feed(a)
        while pending or inflight:
            if not inflight and not self.joining:
                raise RuntimeError(f"{self.spec}: no Ray actor is left to score on (finished blocks are in "
                                   "the score cache; a re-run resumes)")
            done, _ = ray.wait(list(inflight) + list(self.joining), num_returns=1, timeout=WAIT_S)
            for ref in done:
                if ref in self.joining:
                    a = self.joining.pop(ref)
                    try:
                        info = _get(ray, ref, f"for {self.spec}")
                    except RuntimeError:
                        continue  # this actor never came up; the others carry on
                    self._same_metric(info["config_hash"])
                    self.ready.append(a)
                    load[a] = 0
                    feed(a)
                    continue
                a, blk, tries = inflight.pop(ref)
                load[a] -= 1
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    if isinstance(e.cause, InputError):
                        raise e.cause from None
                    raise
                except self.lost:
                    if a in self.ready:
                        self.ready.remove(a)
                    if tries >= 1:
                        raise RuntimeError(f"{self.spec}: a block of {len(blk)} images was lost twice with "
                                           "its Ray actor; finished blocks are in the score cache, a re-run "
                                           "resumes") from None
                    pending.appendleft((blk, tries + 1))
                    for b in self.ready:
                        feed(b)
                    continue
                if isinstance(result, dict) and "config_hash" in result:
                    self._same_metric(result["config_hash"])
                on_result(blk, result)
                if a in self.ready:
                    feed(a)

    def _same_metric(self, config_hash: str) -> None:
        if config_hash != self.config_hash:
            raise InputError(f"metric {self.spec!r}: Ray actors loaded different models (config hash "
                             f"{config_hash} vs {self.config_hash}); give every node the same model copy")


# -- the driver ------------------------------------------------------------------------------------

def score_dataset_on_ray(ds, specs: Sequence, *, address: bool | str | None = True, actors: int | None = None,
                         device: str | None = None, batch_size: int | None = None, cache_dir=None,
                         progress: Progress | None = None, use_cache: bool = True):
    """:func:`ts2viz.engine.score_dataset` on Ray (how a run goes: the module docstring).

    ``score_dataset(..., ray=...)`` calls it; the specs are checked (parsed, families known) before Ray is
    started. A local Ray instance started here is shut down at the end.

    Parameters
    ----------
    ds : ts2viz.dataset.Dataset
        The dataset (already loaded and subset).
    specs : sequence of str
        SPEC strings (each actor loads its own copy of the metric); one column each.
    address : bool or str or None, default True
        Where Ray runs (:func:`connect`).
    actors : int or None, default None
        Metric actors per metric; None: one per GPU of the cluster, else one per CPU.
    device : str or None, default None
        None: GPU actors if the cluster has GPUs; ``cuda...``: GPU actors (the cluster must have GPUs);
        ``cpu``: CPU actors.
    batch_size : int or None, default None
        Images per block and per model call; None: the metric's own.
    cache_dir : str or os.PathLike or None, default None
        The score cache, owned by this process (:class:`ts2viz.engine.cache.ScoreCache`).
    progress : callable or None, default None
        ``progress(label, done, total)``; label ``"hashing images"`` (:data:`HASHING`) while the actors
        hash images, then the spec.
    use_cache : bool, default True
        Read and write the score cache.

    Returns
    -------
    ts2viz.scores.Scores
        The same as :func:`ts2viz.engine.score_dataset` gives without Ray.

    Raises
    ------
    InputError
        If a spec is not a string, does not parse or names an unknown family; a metric is given twice;
        ``actors`` or ``batch_size`` is below 1; ray is missing or the cluster cannot be reached; a GPU is
        asked of a cluster without one; a metric fails to load on the actors; the actors loaded different
        models; no image can be read.
    RuntimeError
        If every actor died while loading the metric, or a block was lost twice with its actor.
    """
    from ..metrics import family, parse_spec
    from ..scores import Scores

    specs = list(specs)
    for s in specs:
        if not isinstance(s, str):
            raise InputError("with Ray, give metrics as SPEC strings (each actor loads its own copy)")
        family(parse_spec(s).family)  # a malformed spec or an unknown family fails here, not on a worker
    if len(set(specs)) != len(specs):
        raise InputError("the same metric is given twice")
    _check_sizes(actors, batch_size)
    values = np.full((len(ds.file_names), len(specs)), np.nan)
    lower: set[str] = set()
    with _ray_run(ds, address, actors, device, batch_size, cache_dir, progress, use_cache) as run:
        for j, spec in enumerate(specs):
            values[:, j], higher_is_better = run.metric(spec)
            if not higher_is_better:
                lower.add(spec)
    return Scores(list(run.names), specs, values, lower, source=f"ts2viz score --ray ({ds.name})")


def score_variants_on_ray(ds, spec: str, variants: Sequence, *, address: bool | str | None = True,
                          actors: int | None = None, device: str | None = None, batch_size: int | None = None,
                          cache_dir=None, progress: Progress | None = None, use_cache: bool = True):
    """:func:`ts2viz.engine.score_variants` on Ray: one pool of actors for the metric serves every variant.

    Same :class:`ts2viz.engine.VariantScores`, same cache entries as the single-process engine.

    Parameters
    ----------
    ds : ts2viz.dataset.Dataset
        The dataset (already loaded and subset).
    spec : str
        The metric's SPEC string.
    variants : sequence of ts2viz.engine.Variant
        The variants (their ``image`` hooks are sent to the actors: picklable).
    address : bool or str or None, default True
        As for :func:`score_dataset_on_ray`.
    actors : int or None, default None
        As for :func:`score_dataset_on_ray`.
    device : str or None, default None
        As for :func:`score_dataset_on_ray`.
    batch_size : int or None, default None
        As for :func:`score_dataset_on_ray`.
    cache_dir : str or os.PathLike or None, default None
        As for :func:`score_dataset_on_ray`.
    progress : callable or None, default None
        As for :func:`score_dataset_on_ray`; a variant's label is ``"{spec} [{label}]"``.
    use_cache : bool, default True
        As for :func:`score_dataset_on_ray`.

    Returns
    -------
    ts2viz.engine.VariantScores
        One column per variant.

    Raises
    ------
    InputError
        If ``spec`` is not a string or does not parse, ``actors`` or ``batch_size`` is below 1, or as for
        :func:`score_dataset_on_ray`.
    RuntimeError
        As for :func:`score_dataset_on_ray`.
    """
    from ..metrics import family, parse_spec
    from .inputs import VariantScores

    if not isinstance(spec, str):
        raise InputError("with Ray, give the metric as a SPEC string (each actor loads its own copy)")
    family(parse_spec(spec).family)
    _check_sizes(actors, batch_size)
    with _ray_run(ds, address, actors, device, batch_size, cache_dir, progress, use_cache) as run:
        values, info = run.variants(spec, list(variants))
    return VariantScores(list(run.names), [v.label for v in variants], values, info["spec"], dict(info["config"]),
                         info["config_hash"], bool(info["higher_is_better"]))


def _check_sizes(actors, batch_size) -> None:
    # InputError for a number of actors or a batch size below 1 (None: the default)
    if actors is not None and int(actors) < 1:
        raise InputError("the number of Ray actors must be at least 1")
    if batch_size is not None and int(batch_size) < 1:
        raise InputError("the batch size must be at least 1")


@contextlib.contextmanager
def _ray_run(ds, address, actors, device, batch_size, cache_dir, progress, use_cache):
    # a _Run on the connected cluster; on success the unscored images are warned of; the cache is closed
    # and Ray (when this call started it) shut down after, errors included
    ray = import_ray()
    cache = ScoreCache(cache_dir) if use_cache else None
    started = False
    try:
        started = connect(address)
        run = _Run(ray, ds, cache, progress, batch_size, actors, device)
        yield run
        if run.paths is not None:
            warn_unscored(run.names, run.errors)
    finally:
        if cache is not None:
            cache.close()
        if started:
            ray.shutdown()


class _Run:
    """The driver's side of one run: image paths, content hashes and per-image errors, kept across metrics."""

    def __init__(self, ray, ds, cache: ScoreCache | None, progress: Progress | None, batch_size, actors, device):
        self.ray, self.ds, self.cache, self.progress = ray, ds, cache, progress
        self.batch_size, self.actors, self.device = batch_size, actors, device
        self.names = ds.file_names
        self.prompts = [ds.row(fn).prompt for fn in self.names]
        self.paths: list[str | None] | None = None  # resolved when the first metric needing pixels comes
        self.keys: list[str | None] = [None] * len(self.names)
        self.errors: list[str | None] = [None] * len(self.names)
        self.warned: set[str] = set()

    def _report(self, label: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(label, done, total)

    def _warn(self, messages) -> None:
        for msg in messages:
            if msg not in self.warned:
                self.warned.add(msg)
                warnings.warn(f"on a Ray worker: {msg}", stacklevel=2)

    def metric(self, spec: str) -> tuple[np.ndarray, bool]:
        """Per-image scores for ``spec`` (cache first, then the actors) and whether higher is better."""
        out, info = self.variants(spec, [None])
        return out[:, 0], bool(info["higher_is_better"])

    def variants(self, spec: str, variants: Sequence) -> tuple[np.ndarray, dict]:
        """Per-image scores for ``spec`` in each variant, one column each, with one pool of actors for all.

        A variant ``None`` is the inputs as they are, else a :class:`ts2viz.engine.Variant`. Returns the
        scores and the metric's info (:meth:`BlockScorer.info`).
        """
        ray = self.ray
        pool = _Pool(ray, spec, self.device)
        size = int(self.actors) if self.actors else pool.default_size
        try:
            # All actors load at once (a first run needs them all; a run that finds everything cached
            # drops them), and the first one up checks the cache while the others are still loading.
            joining = pool.start(size)
            info, a0 = self._first_up(joining, spec)
            blocks = _Blocks(ray, pool, [a0], joining, info["config_hash"], spec)
            if info["needs_pixels"] and self.paths is None:
                self._resolve(blocks)
            out = np.full((len(self.names), len(variants)), np.nan)
            for v, var in enumerate(variants):
                out[:, v] = self._score(spec, info, pool, blocks, a0, var)
            return out, info
        finally:
            pool.close()

    def _score(self, spec: str, info: dict, pool: _Pool, blocks: _Blocks, a0: int, variant) -> np.ndarray:
        """One variant's scores (see :meth:`variants`): cache lookups, then blocks on the actors."""
        ray = self.ray
        pixels = info["needs_pixels"]
        cache = self.cache if info["cacheable"] else None
        hook = variant.image if (variant is not None and pixels) else None
        prompts = (self.prompts if variant is None or variant.prompt is None
                   else [variant.prompt(p) for p in self.prompts])
        label = spec if variant is None else f"{spec} [{variant.label}]"
        n = len(self.names)

        def key(i: int) -> str | None:
            base = self.keys[i] if pixels else self.names[i]
            return variant_key(base, hook.key) if (hook is not None and base is not None) else base

        todo = [i for i in range(n) if not pixels or self.errors[i] is None]
        out = np.full(n, np.nan)
        if cache is not None and todo:
            cache.register_metric(info["config_hash"], info["spec"], info["config"])
            hits = cache.get_many(info["config_hash"], [(key(i), prompts[i]) for i in todo])
            rest = []
            for i in todo:
                h = hits.get((key(i), prompts[i]))
                if h is None:
                    rest.append(i)
                else:
                    out[i] = h[0]
            todo = rest
        if todo:
            _get(ray, pool.actors[a0].check_prompts.remote([prompts[i] for i in todo]), f"for {spec}")
        done = n - len(todo)
        self._report(label, done, n)
        if not todo:
            return out
        bs = int(self.batch_size or info["batch_size"])
        want_keys = pixels and cache is not None
        paths = self.paths or [None] * n

        def call(actor, blk):
            entries = [(paths[i], self.names[i], prompts[i]) for i in blk]
            if hook is None:
                return actor.score_block.remote(entries, bs, want_keys)
            return actor.score_block.remote(entries, bs, want_keys, hook)

        def on_result(blk, res):
            nonlocal done
            rows = []
            for k, i in enumerate(blk):
                err = res["errors"][k]
                if err is not None:
                    self.errors[i] = self.errors[i] or err
                    continue
                v = float(res["values"][k])
                out[i] = v
                if want_keys and res["keys"][k] is not None:
                    self.keys[i] = res["keys"][k]  # the hash of the bytes actually scored
                if cache is not None and key(i) is not None:
                    rows.append((key(i), prompts[i], v,
                                 res["details"][k] if res["details"] is not None else None))
            if cache is not None:
                cache.put_many(info["config_hash"], rows)  # one transaction per block
            self._warn(res["warnings"])
            done += len(blk)
            self._report(label, done, n)

        blocks.run([todo[k:k + bs] for k in range(0, len(todo), bs)], call, on_result)
        return out

    def _first_up(self, joining: dict, spec: str) -> tuple[dict, int]:
        """The info and index of the first actor whose metric is loaded (taken out of ``joining``)."""
        ray = self.ray
        waited = 0.0
        while True:
            if not joining:
                raise RuntimeError(f"{spec}: every Ray actor died while loading the metric (is the same "
                                   "ts2viz installed on every node?)")
            ready, _ = ray.wait(list(joining), num_returns=1, timeout=WAIT_S)
            if not ready:
                waited += WAIT_S
                if waited == SLOW_START_S:
                    warnings.warn(f"{spec}: no Ray actor is up after {SLOW_START_S:.0f} s (still loading the "
                                  "model, or no free CPU/GPU in the cluster); waiting", stacklevel=4)
                continue
            a = joining.pop(ready[0])
            try:
                return _get(ray, ready[0], f"loading {spec}"), a
            except RuntimeError:
                if not joining:
                    raise

    def _resolve(self, blocks: _Blocks) -> None:
        """Resolve image paths on the driver, then content hashes.

        Memoised hashes come from the cache, the rest are hashed by the actors (where the files lie) and
        memoised. Unreadable images get their error here.
        """
        self.paths = [None if p is None else str(p) for p in image_sources(self.ds, self.names)]
        unknown: list[int] = []
        for i, p in enumerate(self.paths):
            if p is None:
                self.errors[i] = "image not available"
            elif self.cache is None:
                self.keys[i] = p
            else:
                try:
                    self.keys[i] = self.cache.known_file_hash(p)
                except OSError as e:
                    self.errors[i] = f"unreadable ({e.strerror or type(e).__name__})"
                    continue
                if self.keys[i] is None:
                    unknown.append(i)
        if unknown:
            done = 0

            def call(actor, blk):
                return actor.hash_files.remote([self.paths[i] for i in blk])

            def on_result(blk, res):
                nonlocal done
                rows = []
                for i, r in zip(blk, res):
                    if isinstance(r, str):
                        self.errors[i] = r
                    else:
                        self.keys[i] = r[0]
                        rows.append((self.paths[i], r[1], r[2], r[0]))
                self.cache.remember_file_hashes(rows)
                done += len(blk)
                self._report(HASHING, done, len(unknown))

            self._report(HASHING, 0, len(unknown))
            blocks.run([unknown[k:k + HASH_BLOCK] for k in range(0, len(unknown), HASH_BLOCK)], call, on_result)
        if self.names and all(e is not None for e in self.errors):
            raise InputError(f"none of the {len(self.names)} images of dataset {self.ds.name} could be read "
                             "(no local image files; pass a dataset folder with the images)")
