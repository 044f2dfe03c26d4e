"""J. Hessel et al.'s CLIP-S image preparation (jmhessel/clipscore ``CLIPImageDataset._transform_test``), exactly.

Their pipeline is torchvision's ``Compose([Resize(n, bicubic), CenterCrop(n), convert("RGB"), ToTensor(),
Normalize(mean, std)])`` on the PIL image. :func:`hessel_transform` gives the same tensor, bit for bit, with
less work after the resize: the crop stays torchvision's (on the PIL image), ``convert("RGB")`` is skipped for
an image that is RGB already (Pillow's conversion copies it unchanged), and ``ToTensor`` + ``Normalize`` become
one lookup per 8-bit value in a per-channel table holding what torchvision's float32 arithmetic
(``x / 255``, then ``(x - mean) / std``, each step correctly rounded) gives for that value. The table is made
by torchvision's own ``ToTensor`` / ``Normalize`` on the 256 values. The shortcut is checked against the
whole torchvision pipeline on probe images when it is made (a mismatch gives the pipeline itself), and in
the tests. The resize, most of the work, is the same Pillow call: no faster exact way is known (a JPEG
decoded at a reduced scale, or torchvision's tensor resize, gives other numbers).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["hessel_transform", "hessel_size"]


def hessel_size(ip) -> int:
    """The square side Hessel's pipeline resizes and crops to, from a transformers image processor.

    Parameters
    ----------
    ip : transformers image processor
        The checkpoint's processor: its crop height, else its shortest edge, else 224.

    Returns
    -------
    int
        ``n`` (224 for every OpenAI CLIP but the 336-px one).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> hessel_size(SimpleNamespace(crop_size={"height": 336, "width": 336}, size={"shortest_edge": 336}))
    336
    >>> hessel_size(SimpleNamespace(crop_size=None, size={"shortest_edge": 32}))
    32
    """
    crop = getattr(ip, "crop_size", None) or {}
    size = getattr(ip, "size", None)
    return int(crop.get("height") or (size.get("shortest_edge") if isinstance(size, dict) else 224) or 224)


def _reference(n: int, mean: tuple, std: tuple):
    """Hessel's own pipeline (torchvision's transforms, as their ``CLIPImageDataset`` composes them)."""
    from PIL import Image
    from torchvision.transforms import CenterCrop, Compose, Normalize, Resize, ToTensor

    return Compose([Resize(n, interpolation=Image.BICUBIC), CenterCrop(n), lambda im: im.convert("RGB"),
                    ToTensor(), Normalize(mean, std)])


def _value_table(mean: tuple, std: tuple) -> np.ndarray:
    """``Normalize(mean, std)(ToTensor()(v))`` for each 8-bit value ``v`` of each channel: a (3, 256) float32 array."""
    import torch
    from torchvision.transforms import Normalize

    v = torch.arange(256, dtype=torch.uint8).view(1, 1, 256).expand(3, 1, 256)
    # ToTensor on uint8 pixels: to float32, then / 255 (torchvision's to_tensor), then Normalize
    return Normalize(mean, std)(v.to(torch.float32).div(255)).reshape(3, 256).numpy().copy()


def hessel_transform(ip) -> Callable:
    """Hessel et al.'s image preparation for a checkpoint's processor settings, exact and faster (module docstring).

    Parameters
    ----------
    ip : transformers image processor
        The checkpoint's processor: its crop size (:func:`hessel_size`), ``image_mean`` and ``image_std``.

    Returns
    -------
    callable
        ``transform(image) -> torch.Tensor``: the ``(3, n, n)`` float32 pixel values of a PIL image, those of
        torchvision's pipeline. An image that is not RGB, or has a transparency key, goes through the pipeline
        itself; so does every image if the shortcut gave other numbers on the probe images.
    """
    n = hessel_size(ip)
    mean, std = tuple(float(x) for x in ip.image_mean), tuple(float(x) for x in ip.image_std)
    ref = _reference(n, mean, std)
    if len(mean) != 3 or len(std) != 3:
        return ref
    from PIL import Image
    from torchvision.transforms import CenterCrop, Resize

    resize, crop = Resize(n, interpolation=Image.BICUBIC), CenterCrop(n)
    table = _value_table(mean, std)

    def fast(image):
        import torch

        if not isinstance(image, Image.Image) or image.mode != "RGB" or image.info.get("transparency") is not None:
            return ref(image)
        a = np.asarray(crop(resize(image)))            # (n, n, 3) uint8
        out = np.empty((3, a.shape[0], a.shape[1]), dtype=np.float32)
        for c in range(3):
            np.take(table[c], a[:, :, c], out=out[c])
        return torch.from_numpy(out)

    return fast if _agrees(fast, ref) else ref


def _agrees(fast, ref) -> bool:
    """Whether ``fast`` gives the pipeline's tensors (values, dtype, shape) on probe images of many shapes."""
    import torch
    from PIL import Image

    rng = np.random.default_rng(20241)
    sizes = [(53, 61), (9, 5), (40, 40), (700, 301), (233, 517), (512, 512)]
    try:
        for h, w in sizes:
            im = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
            want, got = ref(im), fast(im)
            if got.dtype != want.dtype or got.shape != want.shape or not torch.equal(got, want):
                return False
    except Exception:  # noqa: BLE001 - anything unexpected: the pipeline itself
        return False
    return True
