"""Nuisance transforms: changes to an image or a prompt that should leave a faithfulness score alone.

One registry, named and parametrised like metrics: a transform is a SPEC string ``NAME[:KEY=VALUE[&KEY=VALUE]]``
(``jpeg:quality=30``, ``blur:sigma=2``, ``hflip``, ``prefix:text=a photo of``); several are separated by
commas (``jpeg:quality=30,blur:sigma=2``). Every parameter has a default and a range, so ``jpeg`` is
``jpeg:quality=75``; :attr:`Transform.spec` is the canonical form (every parameter, in declared order),
which names the transform in results, columns and the score cache.

Image side (the input is the RGB image a metric would see; the output is an 8-bit RGB image):

========================  ==================================================================================
``jpeg:quality=Q``        re-encoded as JPEG at quality Q (1-95; Pillow's default 4:2:0 chroma subsampling)
                          and decoded again: the bytes change, the size does not
``rescale:factor=F``      down-scaled to F of each side (0.05 <= F < 1, bicubic) and up-scaled back (bicubic)
``resize:side=S``         resized so that the shorter side is S pixels (8-4096, Lanczos), aspect kept
``crop:fraction=F``       centre crop keeping ceil(F x side) of each side (0.9 <= F <= 1)
``blur:sigma=S``          Gaussian blur of standard deviation S pixels (0 < S <= 25; Pillow's extended-box
                          approximation)
``brightness:factor=F``   every channel value x F (0 < F <= 4)
``contrast:factor=F``     m + F x (value - m), m the image's mean luminance (0 < F <= 4)
``saturation:factor=F``   l + F x (value - l), l each pixel's luminance (0 <= F <= 4)
``noise:sigma=S``         plus Gaussian noise of standard deviation S (0 < S <= 128, pixel units),
                          drawn from a generator seeded by the run's seed, the transform and the pixels
``roundtrip:quality=Q``   stored in the other format and read back: a JPEG source as PNG (lossless), any
                          other source as JPEG at quality Q (50-95)
``hflip``                 mirrored left to right (**changes meaning**: left/right relations swap)
========================  ==================================================================================

Luminance is ITU-R 601 (0.299 R + 0.587 G + 0.114 B); values are rounded half up and clipped to 0..255.

Text side:

========================  ==================================================================================
``case:to=lower``         the prompt in lower case (``to=upper``, ``to=title``)
``period``                a trailing period added (or removed where the prompt ends with one)
``prefix:text=a photo of``  the text and a space put in front of the prompt
``spaces``                every space doubled
========================  ==================================================================================

A transform is *degrading* when it only removes information (``jpeg``, ``rescale``, ``blur``, ``noise``):
a score that goes up under it rewards a worse image (see :mod:`ts2viz.nuisance.summary`). A transform
that *changes meaning* (``hflip``) is available but marked so in every result.

Determinism: the same image (pixels), transform and seed always give the same output; only ``noise``
draws random numbers, and only its cache key carries the seed.

Examples
--------
>>> from ts2viz.nuisance.transforms import parse, parse_list
>>> parse("jpeg").spec
'jpeg:quality=75'
>>> [t.spec for t in parse_list("blur:sigma=2, case")]
['blur:sigma=2', 'case:to=lower']
>>> parse("prefix").text("a red cat")
'a photo of a red cat'
>>> parse("hflip").changes_meaning
True
"""
from __future__ import annotations

import hashlib
import io
import math
import re
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from ..imaging import as_rgb
from .transform_types import Context, Param, Transform, TransformKind, format_value

#: the two sides a transform can change
SIDES = ("image", "text")
#: the blind and mismatched-image baselines (``ts2viz nuisance --baselines`` adds them)
BASELINES = ("blank:value=128", "static", "mismatch")
#: the transforms a run uses unless told otherwise: six image transforms and two text ones
DEFAULT = ("jpeg:quality=30", "rescale:factor=0.5", "crop:fraction=0.9", "blur:sigma=2",
           "brightness:factor=1.2", "noise:sigma=8", "case:to=lower", "prefix:text=a photo of")


# -- the registry -----------------------------------------------------------------------------------

_REGISTRY: dict[str, TransformKind] = {}


def register(kind: TransformKind) -> TransformKind:
    """Add a transform to the registry (replacing one of the same name).

    Parameters
    ----------
    kind : TransformKind
        The transform.

    Returns
    -------
    TransformKind
        ``kind`` itself.

    Raises
    ------
    ValueError
        If its side is not one of :data:`SIDES`.
    """
    if kind.side not in SIDES:
        raise ValueError(f"unknown side {kind.side!r}: expected one of {SIDES}")
    _REGISTRY[kind.name.lower()] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a registered transform (no error if there is none).

    Parameters
    ----------
    name : str
        The transform's name (any case).
    """
    _REGISTRY.pop(name.lower(), None)


def kinds() -> list[TransformKind]:
    """The registered transforms, in registration order.

    Returns
    -------
    list of TransformKind
        The built-in ones first.
    """
    return list(_REGISTRY.values())


def kind(name: str) -> TransformKind:
    """The registered transform ``name``.

    Parameters
    ----------
    name : str
        The name (any case, surrounding spaces ignored).

    Returns
    -------
    TransformKind
        The transform.

    Raises
    ------
    InputError
        If there is none, naming the closest names and every known one.
    """
    k = _REGISTRY.get(str(name).strip().lower())
    if k is None:
        import difflib

        close = difflib.get_close_matches(str(name).strip().lower(), list(_REGISTRY), n=2, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise InputError(f"unknown transform {str(name)[:40]!r}{hint} (known: {', '.join(_REGISTRY)})")
    return k


_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def parse(spec: "str | Transform") -> Transform:
    """A transform from its SPEC ``NAME[:KEY=VALUE[&KEY=VALUE]]``.

    Parameters
    ----------
    spec : str or Transform
        The spec (a :class:`Transform` is returned as it is).

    Returns
    -------
    Transform
        The transform with every parameter bound (defaults for those not given).

    Raises
    ------
    InputError
        For an empty or malformed spec, an unknown name, an unknown or repeated parameter, or a value of
        the wrong type or out of range.

    Examples
    --------
    >>> from ts2viz.nuisance.transforms import parse
    >>> parse("jpeg:quality=30").spec
    'jpeg:quality=30'
    >>> parse("crop:fraction=0.5")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: transform 'crop:fraction=0.5': fraction=0.5 is out of range: fraction must be a number >= 0.9 and <= 1
    """
    if isinstance(spec, Transform):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("empty transform: expected NAME[:KEY=VALUE], e.g. jpeg:quality=30")
    text = spec.strip()
    name, sep, rest = text.partition(":")
    name = name.strip()
    if not _NAME.match(name):
        raise InputError(f"transform {text[:60]!r}: expected NAME[:KEY=VALUE[&KEY=VALUE]], e.g. jpeg:quality=30")
    k = kind(name)
    given: dict[str, Any] = {}
    if sep and rest.strip():
        for part in rest.split("&"):
            key, eq, value = part.partition("=")
            key = key.strip().lower()
            if not eq or not key:
                raise InputError(f"transform {text[:60]!r}: expected KEY=VALUE after ':' "
                                 + (f"({k.name} takes {', '.join(p.name for p in k.params)})" if k.params
                                    else f"({k.name} takes no parameters)"))
            p = k.param(key)
            if p is None:
                takes = (f"{k.name} takes {', '.join(p.name for p in k.params)}" if k.params
                         else f"{k.name} takes no parameters")
                raise InputError(f"transform {text[:60]!r}: unknown parameter {key!r} ({takes})")
            if key in given:
                raise InputError(f"transform {text[:60]!r}: parameter {key!r} given twice")
            given[key] = p.check(value, text[:60])
    params = tuple((p.name, given.get(p.name, p.default)) for p in k.params)
    return Transform(k, params)


def parse_list(text: "str | Sequence[str | Transform] | None") -> list[Transform]:
    """Transforms from a comma-separated list (or a sequence of specs).

    Parameters
    ----------
    text : str, sequence of (str or Transform), or None
        The specs; None or empty text means :data:`DEFAULT`.

    Returns
    -------
    list of Transform
        The transforms, in the order given.

    Raises
    ------
    InputError
        For a bad spec, the same transform twice (in any spelling), or an empty sequence.

    Examples
    --------
    >>> from ts2viz.nuisance.transforms import parse_list
    >>> [t.spec for t in parse_list("jpeg:quality=30, blur")]
    ['jpeg:quality=30', 'blur:sigma=2']
    >>> len(parse_list(None))
    8
    """
    if text is None or (isinstance(text, str) and not text.strip()):
        items: Sequence = DEFAULT
    elif isinstance(text, str):
        items = [s for s in text.split(",") if s.strip()]
    else:
        items = list(text)
    out = [parse(s) for s in items]
    seen: dict[str, int] = {}
    for t in out:
        if t.spec in seen:
            raise InputError(f"transform {t.spec!r} is given twice")
        seen[t.spec] = 1
    if not out:
        raise InputError("no transform given (e.g. jpeg:quality=30,blur:sigma=2; `ts2viz transforms` lists them)")
    return out


def apply(spec: "str | Transform", x, *, seed: int = 0):
    """Apply the transform ``spec`` to an image (any PIL mode) or a prompt (a string).

    Parameters
    ----------
    spec : str or Transform
        The transform.
    x : PIL.Image.Image or str
        The image or the prompt.
    seed : int, default 0
        The run's seed (random transforms only).

    Returns
    -------
    PIL.Image.Image or str
        The transformed image (8-bit RGB) or prompt.

    Raises
    ------
    InputError
        For a bad spec, or a transform of the other side.

    Examples
    --------
    >>> from ts2viz.nuisance.transforms import apply
    >>> apply("spaces", "a red cat")
    'a  red  cat'
    """
    return parse(spec)(x, seed=seed)


# -- images ---------------------------------------------------------------------------------------

def _pixels(image) -> np.ndarray:
    return np.asarray(image, dtype=np.float64)


def _to_image(a: np.ndarray):
    from PIL import Image

    return Image.fromarray(np.clip(np.floor(a + 0.5), 0, 255).astype(np.uint8), "RGB")


def _luminance(a: np.ndarray) -> np.ndarray:
    return a[..., 0] * 0.299 + a[..., 1] * 0.587 + a[..., 2] * 0.114


def _encode(image, fmt: str, **kw):
    from PIL import Image

    buf = io.BytesIO()
    image.save(buf, fmt, **kw)
    buf.seek(0)
    out = Image.open(buf)
    out.load()
    return out.convert("RGB")


def _jpeg(im, p, ctx):
    return _encode(im, "JPEG", quality=int(p["quality"]))


def _rescale(im, p, ctx):
    from PIL import Image

    w, h = im.size
    f = float(p["factor"])
    small = im.resize((max(1, round(w * f)), max(1, round(h * f))), Image.Resampling.BICUBIC)
    return small.resize((w, h), Image.Resampling.BICUBIC)


def _resize(im, p, ctx):
    from PIL import Image

    w, h = im.size
    s = int(p["side"])
    size = (s, max(1, round(h * s / w))) if w <= h else (max(1, round(w * s / h)), s)
    return im.resize(size, Image.Resampling.LANCZOS)


def _crop(im, p, ctx):
    w, h = im.size
    f = float(p["fraction"])
    # ceil, less a hair for binary rounding (0.9 x 10 = 9.000000000000002): at least F of each side is kept
    cw, ch = min(w, math.ceil(w * f - 1e-9)), min(h, math.ceil(h * f - 1e-9))
    left, top = (w - cw) // 2, (h - ch) // 2
    return im.crop((left, top, left + cw, top + ch))


def _blur(im, p, ctx):
    from PIL import ImageFilter

    return im.filter(ImageFilter.GaussianBlur(float(p["sigma"])))


def _lut(im, f):
    """``im`` with every channel value v replaced by ``f(v)`` (rounded half up, clipped): one lookup table."""
    v = np.arange(256, dtype=np.float64)
    table = np.clip(np.floor(f(v) + 0.5), 0, 255).astype(np.uint8).tolist()
    return im.point(table * 3)


def _brightness(im, p, ctx):
    return _lut(im, lambda v: v * float(p["factor"]))


def _contrast(im, p, ctx):
    m = float(_luminance(_pixels(im)).mean())
    return _lut(im, lambda v: m + float(p["factor"]) * (v - m))


def _saturation(im, p, ctx):
    a = _pixels(im)
    lum = _luminance(a)[..., None]
    return _to_image(lum + float(p["factor"]) * (a - lum))


def pixel_seed(image, transform: str, seed: int) -> np.random.SeedSequence:
    """The seed of a random transform's generator for one image.

    Parameters
    ----------
    image : PIL.Image.Image
        The image (its mode, size and pixels are hashed).
    transform : str
        The transform's canonical spec.
    seed : int
        The run's seed.

    Returns
    -------
    numpy.random.SeedSequence
        Made of the run's seed, and a SHA-1 of the transform's spec and the image's pixels (so a copy of
        the image elsewhere gets the same draw).
    """
    h = hashlib.sha1(f"{transform}|{image.mode}|{image.size[0]}x{image.size[1]}|".encode())
    h.update(image.tobytes())
    d = h.digest()
    return np.random.SeedSequence([int(seed), int.from_bytes(d[:8], "little"), int.from_bytes(d[8:16], "little")])


def _noise(im, p, ctx):
    rng = np.random.default_rng(pixel_seed(im, f"noise:sigma={format_value(p['sigma'])}", ctx.seed))
    a = np.asarray(im, dtype=np.float32)
    noise = rng.standard_normal(size=a.shape, dtype=np.float32) * np.float32(p["sigma"])
    return _rgb_image(np.clip(np.floor(a + noise + np.float32(0.5)), 0, 255).astype(np.uint8))


def _blank(im, p, ctx):
    from PIL import Image

    v = int(p["value"])
    return Image.new("RGB", im.size, (v, v, v))


def _static(im, p, ctx):
    rng = np.random.default_rng(pixel_seed(im, "static", ctx.seed))
    return _rgb_image(rng.integers(0, 256, size=(im.size[1], im.size[0], 3), dtype=np.uint8))


def _mismatch(s, p, ctx):
    raise InputError("mismatch: the prompt of another SEG is drawn by the nuisance run over the whole dataset "
                     "(ts2viz.nuisance.run.mismatch_pairs); it cannot be applied to one prompt alone")


def _rgb_image(a: np.ndarray):
    from PIL import Image

    return Image.fromarray(a, "RGB")


def _roundtrip(im, p, ctx):
    if (ctx.source_format or "").upper() in ("JPEG", "MPO"):
        return _encode(im, "PNG")
    return _encode(im, "JPEG", quality=int(p["quality"]))


def _hflip(im, p, ctx):
    from PIL import Image

    return im.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


# -- text -----------------------------------------------------------------------------------------

def _case(s, p, ctx):
    return {"lower": s.lower(), "upper": s.upper(), "title": s.title()}[p["to"]]


def _period(s, p, ctx):
    t = s.rstrip()
    return t[:-1].rstrip() if t.endswith(".") else t + "."


def _prefix(s, p, ctx):
    return f"{p['text']} {s}"


def _spaces(s, p, ctx):
    return s.replace(" ", "  ")


for _k in (
    TransformKind("jpeg", "image", "re-encoded as JPEG at this quality and decoded again",
                  (Param("quality", int, 75, "JPEG quality", 1, 95),), _jpeg, degrading=True),
    TransformKind("rescale", "image", "down-scaled by this factor and up-scaled back (bicubic)",
                  (Param("factor", float, 0.5, "the size of the small copy, per side", 0.05, 1.0, high_open=True),),
                  _rescale, degrading=True),
    TransformKind("resize", "image", "resized so that the shorter side has this many pixels (Lanczos)",
                  (Param("side", int, 512, "pixels of the shorter side", 8, 4096),), _resize),
    TransformKind("crop", "image", "centre crop keeping this fraction of each side",
                  (Param("fraction", float, 0.95, "the kept fraction of each side", 0.9, 1.0),), _crop),
    TransformKind("blur", "image", "Gaussian blur of this standard deviation (pixels)",
                  (Param("sigma", float, 2.0, "standard deviation in pixels", 0.0, 25.0, low_open=True),), _blur,
                  degrading=True),
    TransformKind("brightness", "image", "every channel value times this factor",
                  (Param("factor", float, 1.2, "the factor", 0.0, 4.0, low_open=True),), _brightness),
    TransformKind("contrast", "image", "distance from the mean luminance times this factor",
                  (Param("factor", float, 1.2, "the factor", 0.0, 4.0, low_open=True),), _contrast),
    TransformKind("saturation", "image", "distance from each pixel's luminance times this factor",
                  (Param("factor", float, 1.2, "the factor (0: grey)", 0.0, 4.0),), _saturation),
    TransformKind("noise", "image", "plus Gaussian noise of this standard deviation (pixel units, seeded)",
                  (Param("sigma", float, 8.0, "standard deviation in pixel units (0-255 scale)", 0.0, 128.0,
                         low_open=True),), _noise, degrading=True, random=True),
    TransformKind("roundtrip", "image", "stored in the other format and read back: JPEG as PNG, others as JPEG",
                  (Param("quality", int, 95, "JPEG quality for a source that is not a JPEG", 50, 95),), _roundtrip,
                  needs_format=True),
    TransformKind("hflip", "image", "mirrored left to right (left/right relations swap)",
                  (), _hflip, changes_meaning=True),
    TransformKind("blank", "image", "blind baseline: a uniform grey image of the same size",
                  (Param("value", int, 128, "the grey level", 0, 255),), _blank, changes_meaning=True,
                  baseline=True),
    TransformKind("static", "image", "blind baseline: uniform random pixels of the same size (seeded)",
                  (), _static, changes_meaning=True, random=True, baseline=True),
    TransformKind("mismatch", "text", "mismatched-image baseline: the image scored against the prompt of a "
                  "random other SEG (seeded, drawn per SEG over the run's SEGs)", (), _mismatch,
                  changes_meaning=True, random=True, baseline=True),
    TransformKind("case", "text", "the prompt in lower, upper or title case",
                  (Param("to", str, "lower", "the case", choices=("lower", "upper", "title")),), _case),
    TransformKind("period", "text", "a trailing period added (or removed where there is one)", (), _period),
    TransformKind("prefix", "text", "this text and a space put in front of the prompt",
                  (Param("text", str, "a photo of", "the text put in front"),), _prefix),
    TransformKind("spaces", "text", "every space doubled", (), _spaces),
):
    register(_k)


__all__ = ["DEFAULT", "BASELINES", "SIDES", "Param", "TransformKind", "Transform", "Context",
           "register", "unregister", "kinds", "kind", "parse", "parse_list", "apply", "as_rgb", "pixel_seed"]
