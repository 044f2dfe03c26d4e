"""Pixels: turning a decoded image of any mode into the 8-bit RGB image every metric and transform reads.

One rule for the scoring engine (:func:`ts2viz.metrics.common.base.load_image`), the nuisance transforms
and whatever else reads pixels, so that a 16-bit PNG is scored as what it shows, not clipped to white
(Pillow's ``convert("RGB")`` clips 16- and 32-bit values at 255).
"""
from __future__ import annotations

import numpy as np

__all__ = ["as_rgb"]


def as_rgb(image):
    """An 8-bit RGB copy of a PIL image of any mode.

    Parameters
    ----------
    image : PIL.Image.Image
        A decoded image of any Pillow mode.

    Returns
    -------
    PIL.Image.Image
        An RGB image with 8 bits per channel (``image`` itself when it is RGB already).

    Notes
    -----
    16-bit and 32-bit integer images (``I;16``, ``I;16B``, ``I``) are scaled to 8 bits (value / 257,
    rounded; ``I`` clipped to 0-65535 first), float images (``F``) clipped to 0-255; palette, RGBA, LA, CMYK
    and the others go through Pillow's ``convert("RGB")`` (transparency dropped, as the scoring engine
    reads images). An RGB image is returned as it is.

    Examples
    --------
    A 16-bit grey at half of 65535 stays half grey (Pillow's own conversion would clip it to white):

    >>> from PIL import Image
    >>> grey16 = Image.new("I;16", (2, 2), 32896)
    >>> as_rgb(grey16).getpixel((0, 0)), grey16.convert("RGB").getpixel((0, 0))
    ((128, 128, 128), (255, 255, 255))
    """
    from PIL import Image

    if image.mode == "RGB":
        return image
    if image.mode.startswith("I"):
        a = np.asarray(image).astype(np.float64)
        if image.mode == "I":
            a = np.clip(a, 0, 65535)
        return Image.fromarray(np.floor(a / 257.0 + 0.5).astype(np.uint8)).convert("RGB")
    if image.mode == "F":
        a = np.clip(np.nan_to_num(np.asarray(image, dtype=np.float64)), 0, 255)
        return Image.fromarray(np.floor(a + 0.5).astype(np.uint8)).convert("RGB")
    return image.convert("RGB")
