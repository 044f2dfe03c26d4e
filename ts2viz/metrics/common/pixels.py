"""Model-ready pixels, computed ahead of the model and exactly as the model's image processor computes them.

Two things let the scoring engine keep an accelerator busy (:mod:`ts2viz.engine.core` runs
:meth:`~ts2viz.metrics.common.base.Metric.prepare` on worker threads while the model runs):

* :func:`processor_pixels` is ``ip(images=image, return_tensors="pt")["pixel_values"][0]`` for a
  transformers image processor ``ip``, computed faster where that is exact. For the PIL backends of
  transformers 5 (``CLIPImageProcessorPil`` and the other processors that run the generic
  :class:`~transformers.image_processing_backends.PilBackend` pipeline unchanged: the one t2v_metrics'
  CLIP-FlanT5 and LLaVA-1.5 ran, and TS2's CLIP) it resizes the PIL image once with the same Pillow call
  and maps each 8-bit value through a per-channel table holding exactly what the processor's
  rescale-then-normalise arithmetic gives for that value (float64 ``x * rescale_factor`` rounded to float32,
  then float32 ``(x - mean) / std``, each step correctly rounded as numpy computes it). The result is the
  processor's tensor bit for bit: that is checked against the processor's own call on probe images when a
  processor is first seen (a processor that fails the check, or is of another kind, always gets its own
  call), and in the tests on images of many sizes. 1.3-1.5x faster than the processor's call, which converts
  the image to numpy and back and normalises in float64 and float32 passes over the whole image. For the
  torchvision backends running the generic :class:`~transformers.image_processing_backends.TorchvisionBackend`
  pipeline unchanged (``CLIPImageProcessor`` and its kin) it calls the processor's own resize, crop and
  fused rescale-normalise on the image's tensor, as the processor does, skipping its per-call argument
  handling (1.3-1.9x faster, docs/guide/engine-throughput.md), checked the same way.
* :func:`prepared_image` wraps a decoded image and its pixel tensor in a :class:`PIL.Image.Image` that
  carries the tensor (``pixels``) and a key naming the preprocessing that made it; :func:`pixels_of`
  returns the tensor when the key matches, else computes it. Code that only needs the image sees an
  ordinary PIL image (crops and copies of it are plain images again).
"""
from __future__ import annotations

import copy
import threading
import weakref
from typing import Any, Callable

import numpy as np

__all__ = ["processor_pixels", "processor_inputs", "fast_pixels", "prepared_image", "pixels_of"]

#: processor -> (the settings its plan was made for, its fast function or None: the processor's own call)
_PLANS: "weakref.WeakKeyDictionary[Any, tuple]" = weakref.WeakKeyDictionary()
_PLANS_LOCK = threading.Lock()

#: the PilBackend methods whose generic behaviour the fast path reproduces; a processor overriding any
#: of them gets its own call
_GENERIC_METHODS = ("__call__", "preprocess", "_standardize_kwargs", "_preprocess_image_like_inputs",
                    "_prepare_image_like_inputs", "_prepare_images_structure", "fetch_images", "process_image",
                    "convert_to_rgb", "_preprocess", "resize", "center_crop", "rescale", "normalize")


def processor_pixels(ip, image):
    """``ip(images=image, return_tensors="pt")["pixel_values"][0]``, the same tensor, faster where exact.

    Parameters
    ----------
    ip : transformers image processor
        The processor whose pixel values are wanted.
    image : PIL.Image.Image
        One image (any mode; only RGB images without a transparency key take the fast path).

    Returns
    -------
    torch.Tensor
        The processor's pixel values of the image, ``(channels, height, width)``.
    """
    fast = fast_pixels(ip)
    if fast is not None:
        out = fast(image)
        if out is not None:
            return out
    return ip(images=image, return_tensors="pt")["pixel_values"][0]


def processor_inputs(ip, image) -> dict:
    """Every per-image tensor the processor gives for one image, by name, faster where exact.

    Parameters
    ----------
    ip : transformers image processor
        The processor whose tensors are wanted.
    image : PIL.Image.Image
        One image.

    Returns
    -------
    dict
        ``{k: v[0]}`` for each tensor ``v`` of ``ip(images=image, return_tensors="pt")`` (``pixel_values``
        and, for some processors, masks or sizes), the same values, through :func:`processor_pixels`' fast
        path where it applies.
    """
    fast = fast_pixels(ip)
    if fast is not None:
        out = fast(image)
        if out is not None:
            return {"pixel_values": out}
    enc = ip(images=image, return_tensors="pt")
    return {k: v[0] for k, v in enc.items() if hasattr(v, "shape")}


def fast_pixels(ip) -> Callable | None:
    """The exact fast function of an image processor, built and checked once per processor.

    Parameters
    ----------
    ip : transformers image processor
        The processor.

    Returns
    -------
    callable or None
        ``fast(image)``: the processor's pixel tensor of one image, or None for an image it does not take
        (not RGB, or with a transparency key); None when ``ip`` has no such function: it is not of the
        kind the module docstring names, overrides a step of the generic pipeline, or gave other numbers
        than its own call on the probe images.
    """
    try:
        settings, plan = _PLANS[ip]
    except KeyError:
        settings, plan = None, None
    except TypeError:     # not weak-referenceable or not hashable: no memo, no fast path
        return None
    now = _settings(ip)
    if settings is not None and settings == now:
        return plan
    with _PLANS_LOCK:     # first seen, or its settings changed since (a plan follows the settings it was made for)
        plan = _pil_plan(ip) or _torchvision_plan(ip)
        if plan is not None and not _agrees(ip, plan):
            plan = None
        _PLANS[ip] = (copy.deepcopy(now), plan)
        return plan


def _settings(ip) -> tuple:
    """The processor's preprocessing settings (its attributes named by its valid kwargs)."""
    names = getattr(ip, "_valid_kwargs_names", None) or ()
    return (type(ip), tuple((k, getattr(ip, k, None)) for k in names))


def _generic_kwargs(ip, backend: str, methods: tuple) -> dict | None:
    """The standardised kwargs of a processor that runs ``backend``'s generic ``methods``, else None.

    None also when transformers has no such backend, or the processor's own kwargs call fails.
    """
    try:
        from transformers import image_processing_backends
    except ImportError:
        return None
    base = getattr(image_processing_backends, backend, None)
    if base is None or not isinstance(ip, base):
        return None
    cls = type(ip)
    if any(getattr(cls, name, None) is not getattr(base, name, None) for name in methods):
        return None
    try:
        names = list(getattr(ip, "_valid_kwargs_names"))
        return ip._standardize_kwargs(**{k: getattr(ip, k, None) for k in names})
    except Exception:  # noqa: BLE001 - an unusual processor: its own call
        return None

def _pil_plan(ip) -> Callable | None:
    """The fast function of a processor running PilBackend's generic pipeline, else None."""
    kw = _generic_kwargs(ip, "PilBackend", _GENERIC_METHODS)
    if kw is None:
        return None
    if kw.get("do_pad") or kw.get("data_format") not in (None, "channels_first") or kw.get("input_data_format"):
        return None
    do_resize, do_crop = bool(kw.get("do_resize")), bool(kw.get("do_center_crop"))
    size, crop = kw.get("size"), kw.get("crop_size")
    resample = kw.get("resample")
    if resample is None:
        resample = 2  # PILImageResampling.BILINEAR, PilBackend.resize's default
    if not isinstance(resample, int):  # a torchvision mode: PilBackend maps it; leave that to its call
        return None
    resample = int(resample)
    out_size = _output_size(size) if do_resize else None
    if do_resize and out_size is None:
        return None
    if do_crop and (crop is None or not crop.height or not crop.width):
        return None
    table = _value_table(kw)
    if table is False:
        return None

    def fast(image):
        import torch
        from PIL import Image

        if not isinstance(image, Image.Image) or image.mode != "RGB" or image.info.get("transparency") is not None:
            return None
        if do_resize:
            h, w = out_size(image.height, image.width)
            image = image.resize((w, h), resample=resample)
        a = np.asarray(image)                      # (h, w, 3) uint8
        if do_crop:
            a = _center_crop(a, int(crop.height), int(crop.width))
        if table is None:
            return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))
        out = np.empty((3, a.shape[0], a.shape[1]), dtype=table.dtype)
        for c in range(3):
            np.take(table[c], a[:, :, c], out=out[c])
        return torch.from_numpy(out)

    return fast


#: the TorchvisionBackend methods whose generic behaviour the torchvision fast path calls or skips
_TORCHVISION_METHODS = ("__call__", "preprocess", "_standardize_kwargs", "_preprocess_image_like_inputs",
                        "_prepare_image_like_inputs", "_prepare_images_structure", "fetch_images", "process_image",
                        "convert_to_rgb", "_preprocess", "resize", "center_crop", "rescale_and_normalize", "rescale",
                        "normalize", "_fuse_mean_std_and_rescale_factor")


def _torchvision_plan(ip) -> Callable | None:
    """The fast function of a processor running TorchvisionBackend's generic pipeline, else None.

    It calls the processor's own resize, centre-crop and fused rescale-normalise on the image's uint8
    tensor, as its ``_preprocess`` does, and skips the per-call argument handling and grouping around them.
    """
    kw = _generic_kwargs(ip, "TorchvisionBackend", _TORCHVISION_METHODS)
    if kw is None:
        return None
    if kw.get("do_pad") or kw.get("device") is not None or kw.get("input_data_format"):
        return None
    if kw.get("data_format") not in (None, "channels_first"):
        return None
    do_resize, do_crop = bool(kw.get("do_resize")), bool(kw.get("do_center_crop"))
    args = (bool(kw.get("do_rescale")), kw.get("rescale_factor"), bool(kw.get("do_normalize")), kw.get("image_mean"),
            kw.get("image_std"))

    def fast(image):
        from PIL import Image
        from torchvision.transforms.functional import pil_to_tensor

        if not isinstance(image, Image.Image) or image.mode != "RGB" or image.info.get("transparency") is not None:
            return None
        t = pil_to_tensor(image)
        if do_resize:
            t = ip.resize(image=t, size=kw["size"], resample=kw.get("resample"))
        if do_crop:
            t = ip.center_crop(t, kw["crop_size"])
        return ip.rescale_and_normalize(t, *args).contiguous()

    return fast


def _output_size(size) -> Callable | None:
    """``(height, width) -> (new height, new width)`` as PilBackend.resize computes it for ``size``."""
    from transformers import image_processing_backends as backends
    from transformers.image_utils import ChannelDimension

    if size is None:
        return None
    if size.shortest_edge and size.longest_edge:
        return lambda h, w: tuple(backends.get_size_with_aspect_ratio((h, w), size.shortest_edge, size.longest_edge))
    if size.shortest_edge:
        def shortest(h, w):
            dummy = np.broadcast_to(np.uint8(0), (3, h, w))  # only its shape is read
            return tuple(backends.get_resize_output_image_size(dummy, size=size.shortest_edge, default_to_square=False,
                                                               input_data_format=ChannelDimension.FIRST))
        return shortest
    if size.max_height and size.max_width:
        return lambda h, w: tuple(backends.get_image_size_for_max_height_width((h, w), size.max_height, size.max_width))
    if size.height and size.width:
        return lambda h, w: (size.height, size.width)
    return None


def _center_crop(a: np.ndarray, ch: int, cw: int) -> np.ndarray:
    """Crop the centre of an (h, w, c) array as transformers' ``image_transforms.center_crop`` does.

    The same offsets, and zero padding where the crop is larger than the image.
    """
    import math

    oh, ow = a.shape[:2]
    top, left = (oh - ch) // 2, (ow - cw) // 2
    if top >= 0 and left >= 0 and top + ch <= oh and left + cw <= ow:
        return a[top:top + ch, left:left + cw]
    nh, nw = max(ch, oh), max(cw, ow)
    padded = np.zeros((nh, nw) + a.shape[2:], dtype=a.dtype)
    tp, lp = math.ceil((nh - oh) / 2), math.ceil((nw - ow) / 2)
    padded[tp:tp + oh, lp:lp + ow] = a
    top, left = top + tp, left + lp
    return padded[max(0, top):min(nh, top + ch), max(0, left):min(nw, left + cw)]


def _value_table(kw: dict):
    """Tabulate what rescale and normalise make of each 8-bit value in each channel, a (3, 256) array.

    Computed with the processor's own numpy operations (transformers' ``rescale`` and ``normalize``); None
    when neither applies (the output stays uint8); False when the table cannot be made (own call).
    """
    from transformers.image_transforms import normalize, rescale
    from transformers.image_utils import ChannelDimension

    do_rescale, do_normalize = bool(kw.get("do_rescale")), bool(kw.get("do_normalize"))
    if not (do_rescale or do_normalize):
        return None
    v = np.broadcast_to(np.arange(256, dtype=np.uint8), (3, 1, 256)).copy()   # (c, h=1, w=256)
    try:
        if do_rescale:
            v = rescale(v, scale=kw["rescale_factor"], data_format=ChannelDimension.FIRST,
                        input_data_format=ChannelDimension.FIRST)
        if do_normalize:
            v = normalize(v, mean=kw["image_mean"], std=kw["image_std"], data_format=ChannelDimension.FIRST,
                          input_data_format=ChannelDimension.FIRST)
    except Exception:  # noqa: BLE001 - e.g. a mean of the wrong length: the processor's call says so
        return False
    return np.ascontiguousarray(v[:, 0, :])


def _probe_images():
    """Make images that exercise every branch of the fast path.

    Larger than any crop and not square, smaller than the crop (padding), square, a tall and a wide one,
    values 0-255.
    """
    from PIL import Image

    rng = np.random.default_rng(20240)
    sizes = [(53, 61), (9, 5), (40, 40), (700, 301), (233, 517)]
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in sizes]


def _agrees(ip, fast) -> bool:
    """Whether ``fast`` gives the processor's own tensors (values, dtype, shape) on the probe images."""
    import torch

    try:
        for im in _probe_images():
            ref = ip(images=im, return_tensors="pt")["pixel_values"][0]
            got = fast(im)
            if got is None or got.dtype != ref.dtype or got.shape != ref.shape or not torch.equal(got, ref):
                return False
    except Exception:  # noqa: BLE001 - anything unexpected: the processor's own call
        return False
    return True


# -- images that carry their pixels ---------------------------------------------------------------------

_PREPARED_CLASS: list = []


def _prepared_class():
    if not _PREPARED_CLASS:
        from PIL import Image

        class PreparedImage(Image.Image):
            """A decoded image that also carries model-ready pixels (:func:`prepared_image`)."""

            key: str = ""
            pixels: Any = None

        _PREPARED_CLASS.append(PreparedImage)
    return _PREPARED_CLASS[0]


def prepared_image(image, key: str, pixels):
    """An image that also carries the pixels a preprocessing made of it.

    Parameters
    ----------
    image : PIL.Image.Image
        A decoded image.
    key : str
        The name of the preprocessing (:func:`pixels_of` hands the pixels only to a caller naming it).
    pixels : object
        What the preprocessing made of the image (e.g. a tensor).

    Returns
    -------
    PIL.Image.Image
        A PIL image with ``key`` and ``pixels`` attributes, sharing the decoded image's pixel buffer
        (read-only: an in-place change of it copies first) and its ``info``; its crops, copies and
        conversions are ordinary images without ``pixels``.

    Examples
    --------
    >>> from PIL import Image
    >>> im = prepared_image(Image.new("RGB", (4, 3), (10, 20, 30)), "demo", [1, 2])
    >>> isinstance(im, Image.Image), im.size, im.getpixel((0, 0))
    (True, (4, 3), (10, 20, 30))
    >>> pixels_of(im, "demo", lambda image: "computed"), pixels_of(im, "other", lambda image: "computed")
    ([1, 2], 'computed')
    >>> pixels_of(im.crop((0, 0, 2, 2)), "demo", lambda image: "computed")
    'computed'
    """
    image.load()
    out = _prepared_class()()
    out.im = image.im
    out._mode = image.mode
    out._size = image.size
    out.palette = image.palette.copy() if image.palette is not None else None
    out.info = dict(image.info)
    out.readonly = 1
    out.key = key
    out.pixels = pixels
    return out


def pixels_of(image, key: str, compute: Callable):
    """The pixels an image carries, or those computed now.

    Parameters
    ----------
    image : PIL.Image.Image
        An image, possibly from :func:`prepared_image`.
    key : str
        The name of the preprocessing the caller wants.
    compute : callable
        Makes that preprocessing's pixels of an image.

    Returns
    -------
    object
        ``image.pixels`` when ``image`` carries pixels made by ``key``, else ``compute(image)``.
    """
    if _PREPARED_CLASS and isinstance(image, _PREPARED_CLASS[0]) and image.key == key and image.pixels is not None:
        return image.pixels
    return compute(image)
