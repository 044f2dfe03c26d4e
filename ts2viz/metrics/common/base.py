"""The metric base class and the helpers every family shares (devices, images, model ids, OOM retry).

A metric splits its work in two so that the engine can keep the accelerator busy:

* :meth:`Metric.prepare` turns one decoded PIL image into model input on the CPU (resize, normalise).
  It must be thread-safe; the engine runs it in worker threads ahead of the model.
* :meth:`Metric.score_prepared` scores a batch of prepared images against their prompts on the device.

``metric(images=..., prompts=...)`` does both for a plain call.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError
from .spec import Spec


class Metric:
    """A per-image text-to-image faithfulness metric.

    Attributes
    ----------
    spec : the SPEC string (scores column name and cache key).
    name : the family name (``clipscore``, ``tifa``, ...).
    higher_is_better : direction of the scores.
    config : dict identifying the metric exactly (model id, revision, pretrained tag, questions, options).
    device : torch device string the model runs on (``cpu`` for model-free metrics).
    batch_size : images per model call (the engine halves it on GPU out-of-memory).
    has_details : whether :attr:`last_details` holds per-image details after a call (TIFA, DSG).
    needs_pixels : whether :meth:`prepare` needs the decoded image (a precomputed-scores metric only
        needs the image's file name, so the engine neither reads nor hashes the file for it).
    cacheable : whether finished scores are worth keeping in the score cache (not for lookups).
    """

    name: str = "metric"
    higher_is_better: bool = True
    has_details: bool = False
    needs_pixels: bool = True
    cacheable: bool = True

    def __init__(self, spec: Spec, config: dict, device: str = "cpu", batch_size: int = 32):
        self.parsed_spec = spec
        self.spec = spec.raw
        self.config = config
        self.device = device
        self.batch_size = max(1, int(batch_size))
        self.last_details: list | None = None

    @property
    def config_hash(self) -> str:
        """A short stable hash of :attr:`config` (the cache key part that names the metric)."""
        blob = json.dumps(self.config, sort_keys=True, default=str).encode()
        return hashlib.sha1(blob).hexdigest()[:20]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec} on {self.device}>"

    def check_prompts(self, prompts: Sequence[str]) -> None:
        """Raise :class:`InputError` before any scoring if a prompt cannot be scored (default: no check)."""

    # -- the two halves ----------------------------------------------------------------------------
    def prepare(self, image, file_name: str | None = None) -> Any:
        """CPU-side preprocessing of one image (thread-safe). Default: the image itself.

        ``image`` is an RGB PIL image (``None`` when :attr:`needs_pixels` is False); ``file_name`` is
        the image's dataset file name or path when it has one.
        """
        return image

    def score_prepared(self, items: Sequence[Any], prompts: Sequence[str]) -> np.ndarray:
        """Scores of a batch of prepared images, one prompt each (float64 array)."""
        raise NotImplementedError

    # -- plain call --------------------------------------------------------------------------------
    def __call__(self, images: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """Per-image scores: ``images`` are PIL images or paths, ``prompts`` one string per image.

        An image that cannot be read gets NaN (with a warning). Returns a float64 array.
        """
        images, prompts = list(images), list(prompts)
        if len(images) != len(prompts):
            raise InputError(f"{self.spec}: got {len(images)} images but {len(prompts)} prompts")
        out = np.full(len(images), np.nan)
        details: list = [None] * len(images)
        ok: list[int] = []
        prepared: list = []
        for i, im in enumerate(images):
            name = str(im) if isinstance(im, (str, os.PathLike)) else getattr(im, "filename", None) or None
            try:
                prepared.append(self.prepare(load_image(im) if self.needs_pixels else None, name))
                ok.append(i)
            except InputError as e:
                warnings.warn(f"{e}; its score is NaN", stacklevel=2)
        vals, dets, self.batch_size = score_with_oom_retry(self, prepared, [prompts[i] for i in ok], self.batch_size)
        out[ok] = vals
        if dets is not None:
            for i, d in zip(ok, dets):
                details[i] = d
        self.last_details = details if self.has_details else None
        return out


# -- images ----------------------------------------------------------------------------------------

def load_image(image):
    """An RGB PIL image from a PIL image, a path or raw bytes; :class:`InputError` if it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    if isinstance(image, Image.Image):
        return image if image.mode == "RGB" else image.convert("RGB")
    try:
        if isinstance(image, (bytes, bytearray)):
            import io

            im = Image.open(io.BytesIO(image))
        else:
            im = Image.open(Path(image))
        im.load()
        return im.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as e:
        name = "image bytes" if isinstance(image, (bytes, bytearray)) else str(image)
        raise InputError(f"unreadable image ({type(e).__name__}: {e})", file=name) from None


# -- devices and dtypes ----------------------------------------------------------------------------

def resolve_device(device: str | None) -> str:
    """``device`` checked against what torch can use; ``None`` picks cuda, then mps, then cpu."""
    import torch

    if device is None or device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    d = str(device).lower()
    kind = d.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {device!r} requested but no CUDA GPU is available to torch "
                         "(use --device cpu)")
    if kind == "mps" and not (getattr(torch.backends, "mps", None) is not None
                              and torch.backends.mps.is_available()):
        raise InputError(f"device {device!r} requested but Apple MPS is not available (use --device cpu)")
    if kind not in ("cuda", "cpu", "mps"):
        raise InputError(f"unknown device {device!r}: expected cuda, cpu or mps")
    return d


def resolve_dtype(device: str, dtype: str | None = None):
    """The compute dtype: float32 on CPU, bfloat16 (or float16 without bf16 support) on GPU by default."""
    import torch

    if dtype not in (None, "auto"):
        try:
            return {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
                    "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}[str(dtype)]
        except KeyError:
            raise InputError(f"unknown dtype {dtype!r}: expected float32, float16 or bfloat16") from None
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.startswith("mps"):
        return torch.float16
    return torch.float32


def autocast(device: str, dtype):
    """Mixed precision on GPU (a no-op context on CPU or for float32)."""
    import torch

    if dtype == torch.float32 or not (device.startswith("cuda") or device.startswith("mps")):
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.split(":")[0], dtype=dtype)


# -- out of memory ---------------------------------------------------------------------------------

def is_oom(err: BaseException) -> bool:
    """Whether ``err`` is a GPU out-of-memory error (torch's own class or a RuntimeError saying so)."""
    import torch

    if isinstance(err, getattr(torch.cuda, "OutOfMemoryError", ())):
        return True
    return isinstance(err, RuntimeError) and "out of memory" in str(err).lower()


def free_gpu() -> None:
    """Release cached GPU memory (after an out-of-memory error, or when a model is dropped)."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_halving_on_oom(call: Callable[[int, int], Any], n: int, batch_size: int, label: str) -> tuple[list, int]:
    """Run ``call(start, stop)`` over ``range(n)`` in chunks of ``batch_size``, halving on GPU out-of-memory.

    This is the one place where ts2viz survives running out of GPU memory: the chunk that failed is
    retried at half the size, and the smaller size sticks so that a run does not keep hitting the
    limit. Out of memory at chunk size 1, and every other error, is re-raised.

    Returns ``(results of the calls in order, batch size that worked)``.
    """
    results: list = []
    batch_size = max(1, int(batch_size))
    i = 0
    while i < n:
        m = min(batch_size, n - i)
        try:
            results.append(call(i, i + m))
        except Exception as e:  # noqa: BLE001 - only OOM is handled, the rest re-raised
            if not is_oom(e) or m == 1:
                raise
            free_gpu()
            batch_size = max(1, m // 2)
            warnings.warn(f"{label}: out of GPU memory at batch size {m}; retrying with {batch_size}",
                          stacklevel=3)
            continue
        i += m
    return results, batch_size


def score_with_oom_retry(metric: Metric, items: Sequence, prompts: Sequence[str],
                         batch_size: int) -> tuple[np.ndarray, list | None, int]:
    """Score prepared ``items`` in chunks of ``batch_size`` (see :func:`run_halving_on_oom`).

    Returns ``(scores, per-image details or None, batch size that worked)``.
    """
    def chunk(a: int, b: int):
        vals = np.asarray(metric.score_prepared(list(items[a:b]), list(prompts[a:b])), dtype=np.float64).reshape(-1)
        if len(vals) != b - a:
            raise InputError(f"{metric.spec}: returned {len(vals)} scores for {b - a} images")
        dets = (metric.last_details or [None] * (b - a)) if metric.has_details else None
        return vals, dets

    parts, batch_size = run_halving_on_oom(chunk, len(items), batch_size, metric.spec)
    out = np.concatenate([v for v, _ in parts]) if parts else np.zeros(0)
    details = [d for _, ds in parts for d in ds] if metric.has_details else None
    return out, details, batch_size


# -- model ids -------------------------------------------------------------------------------------

def is_local_model(model: str) -> bool:
    return Path(os.path.expanduser(model)).is_dir()


def check_model_id(spec: Spec) -> str:
    """The model folder or hub id of ``spec``; :class:`InputError` if it is neither."""
    m = spec.model
    if is_local_model(m):
        return str(Path(os.path.expanduser(m)).resolve())
    parts = m.split("/")
    if m.startswith((".", "/", "~")) or len(parts) > 2 or not all(parts):
        raise InputError(f"metric {spec.raw!r}: no model folder {m!r} and not a hub id (owner/name)")
    return m


def folder_fingerprint(folder: str | os.PathLike) -> str:
    """A cheap content fingerprint of a local model folder.

    Small files are hashed whole; large weight files by size plus their first and last 64 KiB, which
    changes whenever the weights do without reading gigabytes on every load.
    """
    h = hashlib.sha1()
    root = Path(folder)
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.startswith("."):
            continue
        size = p.stat().st_size
        h.update(f"{p.relative_to(root)}\0{size}\0".encode())
        with open(p, "rb") as f:
            if size <= 1 << 20:
                h.update(f.read())
            else:
                h.update(f.read(1 << 16))
                f.seek(-(1 << 16), os.SEEK_END)
                h.update(f.read())
    return h.hexdigest()[:16]


def file_fingerprint(path: str | os.PathLike) -> str:
    p = Path(path)
    size = p.stat().st_size
    h = hashlib.sha1(f"{size}\0".encode())
    with open(p, "rb") as f:
        h.update(f.read(1 << 16))
        if size > 1 << 17:
            f.seek(-(1 << 16), os.SEEK_END)
            h.update(f.read())
    return h.hexdigest()[:16]


def model_identity(model_id: str, revision: str | None, loaded_config=None) -> dict:
    """Config entries naming a transformers model exactly: id plus hub commit or local fingerprint."""
    ident: dict = {"model": model_id}
    if is_local_model(model_id):
        ident["fingerprint"] = folder_fingerprint(model_id)
    else:
        commit = getattr(loaded_config, "_commit_hash", None) if loaded_config is not None else None
        ident["revision"] = commit or revision or "main"
    return ident


#: what to do when a hub model cannot be had (said with every such failure)
OFFLINE_ADVICE = ("Offline? Give a local model folder instead (FAMILY:/path/to/folder, a model saved with "
                  "save_pretrained, e.g. clipscore:/models/clip-vit-base-patch32), or load the model once while "
                  "the hub is reachable")
#: seconds a hub probe's answer holds (a metric loads several files in a row: one probe for all of them)
HUB_PROBE_TTL = 30.0
_hub_probe: dict = {"endpoint": None, "until": 0.0, "up": True}


def hub_answers() -> bool:
    """Whether the Hugging Face hub answers (:func:`ts2viz.dataset.hub_reachable`, a few seconds at most),
    remembered for :data:`HUB_PROBE_TTL` seconds. Offline mode (``HF_HUB_OFFLINE``) is not asked about here."""
    import time

    import huggingface_hub.constants as hub_constants

    from ..dataset import hub_reachable

    if time.monotonic() >= _hub_probe["until"] or _hub_probe["endpoint"] != hub_constants.ENDPOINT:
        _hub_probe.update(endpoint=hub_constants.ENDPOINT, up=hub_reachable())
        _hub_probe["until"] = time.monotonic() + HUB_PROBE_TTL
    return _hub_probe["up"]


def _not_available(spec: Spec, what: str, model_id: str, unreachable: bool) -> InputError:
    why = "the Hugging Face hub does not answer" if unreachable else "offline mode (HF_HUB_OFFLINE is set)"
    return InputError(f"metric {spec.raw!r}: cannot load {what} {model_id!r} from the Hugging Face hub: "
                      f"{why}, and it is not in the local hub cache. {OFFLINE_ADVICE}")


def _in_hub_cache(model_id: str) -> bool:
    """Whether the local hub cache holds anything of the model ``model_id`` (its ``models--OWNER--NAME``
    folder, in huggingface_hub's cache or a ``TRANSFORMERS_CACHE``); no file is read."""
    import huggingface_hub.constants as hub_constants

    folder = "models--" + model_id.replace("/", "--")
    roots = [hub_constants.HF_HUB_CACHE, os.environ.get("TRANSFORMERS_CACHE")]
    return any(r and (Path(os.path.expanduser(r)) / folder).exists() for r in roots)


def check_hub_model_available(spec: Spec, options: dict | None = None) -> None:
    """:class:`InputError` at once if ``spec``'s model is a hub id that cannot be had: the hub does not
    answer (one short probe, :func:`hub_answers`) or offline mode is on, and the local hub cache holds
    nothing of it. Called before a family's module is imported: the first failure then takes the probe
    (a second at most), not the import of torch and transformers (tens of seconds on a busy machine).

    Anything else (a local folder, an open_clip model, not an ``owner/name`` id, a model with something
    in the cache, ``local_files_only`` or ``cache_dir`` options) is left to the family's own loading,
    which says precisely what is wrong (:func:`hf_load`).
    """
    opts = {**spec.options, **(options or {})}
    m = spec.model
    if spec.is_openclip or opts.get("cache_dir") or opts.get("local_files_only") or is_local_model(m):
        return
    parts = m.split("/")
    if m.startswith((".", "/", "~")) or len(parts) > 2 or not all(parts):
        return
    import huggingface_hub.constants as hub_constants

    offline = bool(hub_constants.HF_HUB_OFFLINE)
    if (not offline and hub_answers()) or _in_hub_cache(m):
        return
    raise _not_available(spec, "model", m, unreachable=not offline)


def hf_load(what: str, fn: Callable, model_id: str, spec: Spec, **kwargs):
    """Call a ``from_pretrained``-style ``fn`` and turn every failure into one clear :class:`InputError`.

    A hub model on a network where the hub does not answer (one short probe, :func:`hub_answers`) comes
    from the local hub cache only: it loads at once if cached and otherwise fails in seconds with advice,
    not after the hub client's retries (half a minute and more).
    """
    import huggingface_hub.constants as hub_constants

    hub = not is_local_model(model_id)
    offline = bool(hub_constants.HF_HUB_OFFLINE)
    unreachable = hub and not offline and not kwargs.get("local_files_only") and not hub_answers()
    if unreachable:
        kwargs = {**kwargs, "local_files_only": True}
    try:
        return fn(model_id, **kwargs)
    except InputError:
        raise
    except (OSError, ValueError, KeyError, ImportError, EnvironmentError) as e:
        if hub and (offline or unreachable):
            raise _not_available(spec, what, model_id, unreachable) from e
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        where = "local folder" if not hub else "hub model (not found? expected a hub id owner/name or a local folder)"
        raise InputError(f"metric {spec.raw!r}: cannot load {what} from {where} {model_id!r}: {msg[:300]}") from e
