"""The metric base class: :class:`Metric`, image loading and scoring in out-of-memory-safe chunks.

Devices, dtypes and out-of-memory handling are in :mod:`.device`; model ids, hub probes and
``from_pretrained`` error handling in :mod:`.hub`.

A metric splits its work in two so that the engine can keep the accelerator busy:

* :meth:`Metric.prepare` turns one decoded PIL image into model input on the CPU (resize, normalise).
  It must be thread-safe; the engine runs it in worker threads ahead of the model.
* :meth:`Metric.score_prepared` scores a batch of prepared images against their prompts on the device.

``metric(images=..., prompts=...)`` does both for a plain call.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import InputError
from .device import run_halving_on_oom
from .spec import Spec


class Metric:
    """A per-image text-to-image faithfulness metric.

    Attributes
    ----------
    spec : str
        The SPEC string (scores column name and cache key).
    name : str
        The family name (``clipscore``, ``tifa``, ...).
    higher_is_better : bool
        Direction of the scores.
    config : dict
        Identifies the metric exactly (model id, revision, pretrained tag, questions, options).
    device : str
        Torch device string the model runs on (``cpu`` for model-free metrics).
    batch_size : int
        Images per model call (the engine halves it on GPU out-of-memory).
    has_details : bool
        Whether :attr:`last_details` holds per-image details after a call (TIFA, DSG).
    needs_pixels : bool
        Whether :meth:`prepare` needs the decoded image (a precomputed-scores metric only needs the image's file
        name, so the engine neither reads nor hashes the file for it).
    cacheable : bool
        Whether finished scores are worth keeping in the score cache (not for lookups).
    image_reading : str
        How :meth:`read_image` reads an image: ``ts2viz`` (default, :func:`ts2viz.imaging.as_rgb`), or, for a
        family with the ``image_mode`` option, its original's reading (:mod:`.image_mode`).
    stacks_prepared : bool
        Whether :meth:`score_prepared` takes a :class:`PreparedBatch`'s stacked tensors instead of stacking the
        prepared items itself (the engine then stacks them on its worker threads).

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec (its raw string becomes :attr:`spec`; the parsed one is ``parsed_spec``).
    config : dict
        The settings that identify the metric's scores (:attr:`config`).
    device : str, optional
        The torch device the model runs on.
    batch_size : int, optional
        Images per model call (at least 1 is used).

    Examples
    --------
    A subclass implements :meth:`score_prepared` (and :meth:`prepare` when it preprocesses); a call
    scores images (PIL images, paths or bytes) against their prompts:

    >>> from PIL import Image
    >>> from ts2viz.metrics.common.spec import parse_spec
    >>> class Width(Metric):
    ...     def prepare(self, image, file_name=None):
    ...         return image.width
    ...     def score_prepared(self, items, prompts):
    ...         return np.asarray(items, dtype=float)
    >>> m = Width(parse_spec("width:pixels"), {"family": "width"})
    >>> m(images=[Image.new("RGB", (4, 2)), Image.new("RGB", (8, 2))], prompts=["a", "b"])
    array([4., 8.])
    """

    name: str = "metric"
    higher_is_better: bool = True
    has_details: bool = False
    needs_pixels: bool = True
    cacheable: bool = True
    stacks_prepared: bool = False
    #: how :meth:`read_image` reads an image (:data:`ts2viz.metrics.common.image_mode.READINGS`); a family
    #: with the ``image_mode`` option sets its original's
    image_reading: str = "ts2viz"

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
        """``<ClassName SPEC on DEVICE>``."""
        return f"<{type(self).__name__} {self.spec} on {self.device}>"

    def check_prompts(self, prompts: Sequence[str]) -> None:
        """Raise :class:`InputError` before any scoring if a prompt cannot be scored (default: :meth:`check_prompt`).

        The engine calls it once, with the prompts of the images it is about to score (those not in the
        cache), before any image is scored, so that a prompt the metric cannot score (e.g. one with no
        questions) fails at once rather than after hours. By default each distinct prompt goes to
        :meth:`check_prompt` once, in order.

        Parameters
        ----------
        prompts : sequence of str
            The prompts to be scored.
        """
        for p in dict.fromkeys(prompts):
            self.check_prompt(p)

    def check_prompt(self, prompt: str) -> None:
        """Raise :class:`InputError` if ``prompt`` cannot be scored (default: no check; see :meth:`check_prompts`).

        Parameters
        ----------
        prompt : str
            A prompt to be scored.
        """

    # -- the two halves ----------------------------------------------------------------------------
    def read_image(self, image):
        """One image decoded and read as this metric reads images (:func:`load_image` with :attr:`image_reading`).

        Parameters
        ----------
        image : PIL.Image.Image, str, os.PathLike, bytes or bytearray
            The image, its file, or its encoded bytes.

        Returns
        -------
        PIL.Image.Image
            The image :meth:`prepare` takes.

        Raises
        ------
        InputError
            If it cannot be read or decoded (naming the file).
        """
        return load_image(image, self.image_reading)

    def prepare(self, image, file_name: str | None = None) -> Any:
        """CPU-side preprocessing of one image (thread-safe). Default: the image itself.

        Parameters
        ----------
        image : PIL.Image.Image or None
            The image as :meth:`read_image` reads it: RGB unless the metric's :attr:`image_reading` is
            ``decoded`` (``None`` when :attr:`needs_pixels` is False).
        file_name : str or None, optional
            The image's dataset file name or path when it has one.

        Returns
        -------
        object
            The model input of the image, as :meth:`score_prepared` takes it.
        """
        return image

    def score_prepared(self, items: Sequence[Any], prompts: Sequence[str]) -> np.ndarray:
        """Scores of a batch of prepared images, one prompt each (float64 array).

        Each family implements it; the engine calls it on the device thread with batches of at most
        :attr:`batch_size` items (smaller after an out-of-memory halving).

        Parameters
        ----------
        items : sequence
            Images as :meth:`prepare` returned them (a :class:`PreparedBatch` when
            :attr:`stacks_prepared`).
        prompts : sequence of str
            One prompt per item.

        Returns
        -------
        numpy.ndarray
            One score per item (float64).

        Raises
        ------
        NotImplementedError
            Always, in the base class.
        """
        raise NotImplementedError

    # -- plain call --------------------------------------------------------------------------------
    def __call__(self, images: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """Per-image scores: ``images`` are PIL images or paths, ``prompts`` one string per image.

        Every image is prepared (:meth:`prepare`) and the prepared images are scored in chunks of
        :attr:`batch_size`, halved on GPU out-of-memory (:func:`score_with_oom_retry`). Per-image details
        (TIFA, DSG) are left in ``last_details``.

        Parameters
        ----------
        images : sequence of PIL.Image.Image, str, os.PathLike or bytes
            The images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            float64 scores, one per image; NaN for an image that cannot be read or prepared (with a
            warning).

        Raises
        ------
        InputError
            If ``images`` and ``prompts`` differ in length, or the metric returns the wrong number of
            scores.
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
                prepared.append(self.prepare(self.read_image(im) if self.needs_pixels else None, name))
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

def load_image(image, mode: str):
    """A PIL image from a PIL image, a path or raw bytes, read as ``mode`` says; :class:`InputError` if it cannot be read.

    Parameters
    ----------
    image : PIL.Image.Image, str, os.PathLike, bytes or bytearray
        The image, its file, or its encoded bytes.
    mode : str
        The reading (:data:`ts2viz.metrics.common.image_mode.READINGS`): ``ts2viz`` converts every mode by
        :func:`ts2viz.imaging.as_rgb` (16-bit images scaled, not clipped), ``rgb`` by Pillow's
        ``convert("RGB")`` (16-bit values clipped), ``decoded`` keeps the image's own mode (the family's
        preprocessing converts it, as its original does). A metric reads with :meth:`Metric.read_image`.

    Returns
    -------
    PIL.Image.Image
        The decoded image (file read completely): RGB, or in its own mode for ``decoded``.

    Raises
    ------
    InputError
        If the file or bytes cannot be read or decoded as an image (naming the file).

    Examples
    --------
    >>> from PIL import Image
    >>> load_image(Image.new("L", (3, 2), 128), "ts2viz").mode, load_image(Image.new("L", (3, 2), 128), "decoded").mode
    ('RGB', 'L')
    >>> load_image(b"not an image", "ts2viz")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: ...unreadable image...
    """
    from PIL import Image, UnidentifiedImageError

    from .image_mode import read

    if isinstance(image, Image.Image):
        return read(image, mode)
    try:
        if isinstance(image, (bytes, bytearray)):
            import io

            im = Image.open(io.BytesIO(image))
        else:
            im = Image.open(Path(image))
        im.load()
        return read(im, mode)
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as e:
        name = "image bytes" if isinstance(image, (bytes, bytearray)) else str(image)
        raise InputError(f"unreadable image ({type(e).__name__}: {e})", file=name) from None


class PreparedBatch(list):
    """A batch of prepared items that also holds them stacked, for :meth:`Metric.score_prepared`.

    It is a list of the prepared items, as ``score_prepared`` takes a batch, with ``stacked``: the items
    stacked along a new first axis (a tensor, or a dict of tensors for dict items), as the scoring engine
    stacks them on its worker threads while they are prepared, for a metric with ``stacks_prepared``. The
    items are views of ``stacked``; a slice of the batch is a plain list.

    Parameters
    ----------
    items : list
        The prepared items, in order.
    stacked : torch.Tensor or dict of torch.Tensor
        The same items stacked along a new first axis.

    Examples
    --------
    >>> import torch
    >>> stacked = torch.arange(6.0).reshape(3, 2)
    >>> batch = PreparedBatch(list(stacked), stacked)
    >>> len(batch), batch.stacked.shape, type(batch[1:]).__name__
    (3, torch.Size([3, 2]), 'list')
    """

    def __init__(self, items, stacked):
        """Hold ``items`` as the list and ``stacked`` as :attr:`stacked`."""
        super().__init__(items)
        self.stacked = stacked


def stacked_or(items, stack):
    """The batch's items stacked: ``items.stacked`` for a :class:`PreparedBatch`, else ``stack(items)``.

    Parameters
    ----------
    items : list or PreparedBatch
        A batch of prepared items.
    stack : callable
        Stacks a list of items (e.g. ``torch.stack``).

    Returns
    -------
    object
        What ``stack(items)`` returns, without stacking again what the engine has stacked.

    Examples
    --------
    >>> stacked_or([1, 2], lambda xs: sum(xs)), stacked_or(PreparedBatch([1, 2], "ready"), lambda xs: sum(xs))
    (3, 'ready')
    """
    stacked = getattr(items, "stacked", None)
    return stacked if stacked is not None else stack(items)


def score_with_oom_retry(metric: Metric, items: Sequence, prompts: Sequence[str],
                         batch_size: int) -> tuple[np.ndarray, list | None, int]:
    """Score prepared ``items`` in chunks of ``batch_size`` (see :func:`run_halving_on_oom`).

    A chunk that runs out of GPU memory is retried at half the size, and the smaller size is kept for the
    rest. When the whole batch is a :class:`PreparedBatch` and fits in one chunk it is passed as is (its
    stacked tensors are used); otherwise chunks are plain lists.

    Parameters
    ----------
    metric : Metric
        The metric whose :meth:`Metric.score_prepared` scores each chunk.
    items : sequence
        Prepared images.
    prompts : sequence of str
        One prompt per item.
    batch_size : int
        The first chunk size.

    Returns
    -------
    scores : numpy.ndarray
        float64, one per item.
    details : list or None
        Per-item details when the metric has them (:attr:`Metric.has_details`), else None.
    batch_size : int
        The chunk size that worked last.

    Raises
    ------
    InputError
        If the metric returns a number of scores other than the chunk's number of items.
    """
    def chunk(a: int, b: int):
        part = items if (a, b) == (0, len(items)) and isinstance(items, PreparedBatch) else list(items[a:b])
        vals = np.asarray(metric.score_prepared(part, list(prompts[a:b])), dtype=np.float64).reshape(-1)
        if len(vals) != b - a:
            raise InputError(f"{metric.spec}: returned {len(vals)} scores for {b - a} images")
        dets = (metric.last_details or [None] * (b - a)) if metric.has_details else None
        return vals, dets

    parts, batch_size = run_halving_on_oom(chunk, len(items), batch_size, metric.spec)
    out = np.concatenate([v for v, _ in parts]) if parts else np.zeros(0)
    details = [d for _, ds in parts for d in ds] if metric.has_details else None
    return out, details, batch_size


