"""How a metric reads an image's pixels: as its original's code does (``image_mode=original``) or by ts2viz's one rule (``ts2viz``).

The originals do not read images alike. A decoded image of a mode other than RGB (grey ``L``, ``LA``,
``RGBA``, palette ``P``, 16-bit ``I;16``, ``CMYK``) reaches their models by different roads (issue 39,
item 9; each family's card says which):

* ``rgb``: Pillow's ``convert("RGB")`` before anything else (HPSv2, HPSv3, PickScore's CLIP processor of
  the snippet's time). Pillow clips 16-bit values at 255, so a 16-bit PNG is read nearly white, and
  transparency is dropped (the colour under a transparent pixel is kept; the colour key Pillow carries
  over from a palette's transparent index is dropped too, which transformers 5's processors would
  otherwise paint white: the originals' transformers 4 did not);
* ``decoded``: the image as decoded, in its own mode; the family's own preprocessing resizes it in that
  mode and converts it to RGB after (ImageReward: a palette image resized by nearest neighbour, as Pillow
  resizes palettes, an RGBA one with its alpha premultiplied);
* ``ts2viz``: :func:`ts2viz.imaging.as_rgb` first (16-bit values scaled to 8 bits, not clipped; the other
  modes through ``convert("RGB")``), what every family without this option reads.

An RGB image is read bit-identically by all three. None of the originals applies a JPEG's EXIF
orientation, nor does ts2viz: a rotated photo is scored as stored.

A family with the option names its original's reading (``ORIGINAL``), declares :func:`option` on its card
and passes the option through :func:`reading`; the metric's :meth:`~ts2viz.metrics.common.base.Metric.read_image`
reads every image so, and the option is recorded in the metric's config (part of the cache key).
"""
from __future__ import annotations

from ...errors import InputError

__all__ = ["MODES", "DEFAULT", "READINGS", "reading", "read", "option"]

#: the option's values
MODES = ("original", "ts2viz")
#: its default: each family reads an image exactly as its original does
DEFAULT = "original"
#: the readings :func:`read` knows (``original`` resolves to the family's one)
READINGS = ("ts2viz", "rgb", "decoded")


def reading(mode: str, original: str, spec: str = "") -> str:
    """The reading (one of :data:`READINGS`) that ``image_mode=mode`` means for a family whose original reads ``original``.

    Parameters
    ----------
    mode : str
        The option's value, ``original`` or ``ts2viz``.
    original : str
        The family's original reading (``rgb`` or ``decoded``).
    spec : str, optional
        The metric's spec, named in the error.

    Returns
    -------
    str
        ``original`` for ``mode="original"``, ``"ts2viz"`` for ``mode="ts2viz"``.

    Raises
    ------
    InputError
        One line for a value that is not one of :data:`MODES`.
    ValueError
        If ``original`` is not one of :data:`READINGS` (a family's programming error).

    Examples
    --------
    >>> reading("original", "decoded"), reading("ts2viz", "decoded")
    ('decoded', 'ts2viz')
    >>> reading("pillow", "rgb", "hpsv2:hps-v2.1")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: metric 'hpsv2:hps-v2.1': image_mode='pillow' is not one of original, ts2viz
    """
    if original not in READINGS:
        raise ValueError(f"unknown original reading {original!r} (one of {', '.join(READINGS)})")
    if mode not in MODES:
        where = f"metric {spec!r}: " if spec else ""
        raise InputError(f"{where}image_mode={mode!r} is not one of {', '.join(MODES)}")
    return original if mode == "original" else "ts2viz"


def read(image, how: str):
    """A decoded PIL image as the reading ``how`` hands it to a family's preprocessing.

    Parameters
    ----------
    image : PIL.Image.Image
        A decoded image of any mode.
    how : str
        One of :data:`READINGS`.

    Returns
    -------
    PIL.Image.Image
        ``ts2viz``: :func:`ts2viz.imaging.as_rgb`'s 8-bit RGB image; ``rgb``: Pillow's ``convert("RGB")``
        (16-bit values clipped at 255); ``decoded``: ``image`` itself, in its own mode. An RGB image keeps
        its pixels in all three; ``ts2viz`` and ``rgb`` drop a colour key (``info["transparency"]``, which
        Pillow carries over from a palette's transparent index) so that no processor composites it.

    Raises
    ------
    ValueError
        If ``how`` is not one of :data:`READINGS` (a programming error, not a user's input).

    Examples
    --------
    >>> from PIL import Image
    >>> grey16 = Image.new("I;16", (2, 2), 32896)
    >>> [read(grey16, h).getpixel((0, 0)) for h in READINGS]
    [(128, 128, 128), (255, 255, 255), 32896]
    """
    from ...imaging import as_rgb

    if how == "decoded":
        return image
    if how == "ts2viz":
        out = as_rgb(image)
    elif how == "rgb":
        out = image if image.mode == "RGB" else image.convert("RGB")
    else:
        raise ValueError(f"unknown image reading {how!r} (one of {', '.join(READINGS)})")
    if "transparency" in out.info:
        # Pillow carries a palette's transparent index over as an RGB colour key; transformers 5's
        # convert_to_rgb would then paint that colour white, which the originals' processors never did
        out = out.copy() if out is image else out
        del out.info["transparency"]
    return out


def option(original_reads: str):
    """The card's ``image_mode`` option of a family whose original reads images as ``original_reads`` says.

    Parameters
    ----------
    original_reads : str
        What the original's code does with a non-RGB image (Markdown, one sentence).

    Returns
    -------
    Option
        ``image_mode``, default ``original``, values :data:`MODES`.
    """
    from ..family import Option

    return Option("image_mode", DEFAULT,
                  f"How an image of a mode other than RGB is read. `original` (default): as the original's code "
                  f"reads it: {original_reads} `ts2viz`: ts2viz's one rule for every family (16-bit images scaled "
                  f"to 8 bits, not clipped; other modes through Pillow's `convert(\"RGB\")`, before any resize). "
                  f"RGB images are read bit-identically either way; no EXIF rotation either way, as the "
                  f"originals. Recorded in the config (`image_mode`).", MODES)
