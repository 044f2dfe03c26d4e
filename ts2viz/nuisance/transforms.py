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
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError
from ..imaging import as_rgb

#: the two sides a transform can change
SIDES = ("image", "text")
#: the blind and mismatched-image baselines (``ts2viz nuisance --baselines`` adds them)
BASELINES = ("blank:value=128", "static", "mismatch")
#: the transforms a run uses unless told otherwise: six image transforms and two text ones
DEFAULT = ("jpeg:quality=30", "rescale:factor=0.5", "crop:fraction=0.9", "blur:sigma=2",
           "brightness:factor=1.2", "noise:sigma=8", "case:to=lower", "prefix:text=a photo of")
#: the longest text a text parameter may hold
MAX_TEXT = 40
#: part of every cache key: bump when an implementation changes its output
KEY_VERSION = "nuisance-1"


@dataclass(frozen=True)
class Param:
    """One parameter of a transform: its type, default, range and meaning.

    Attributes
    ----------
    name : str
        The parameter's name in a spec (``quality`` in ``jpeg:quality=30``).
    kind : type
        ``int``, ``float`` or ``str``.
    default : Any
        The default value.
    doc : str
        What it means.
    low, high : float or None
        Bounds of a number (None: unbounded).
    low_open, high_open : bool
        Whether the bound itself is excluded.
    choices : tuple of str
        A text parameter's allowed values (empty: any short text without ``,``/``&``).
    """

    name: str
    kind: type
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()

    @property
    def default_text(self) -> str:
        """The default as a canonical spec writes it."""
        return _fmt(self.default)

    def allowed(self) -> str:
        """The allowed values in words (for messages and ``ts2viz transforms``).

        Returns
        -------
        str
            E.g. ``"an integer >= 1 and <= 95"`` or ``"one of lower, upper, title"``.

        Examples
        --------
        >>> from ts2viz.nuisance.transforms import kind
        >>> kind("jpeg").param("quality").allowed()
        'an integer >= 1 and <= 95'
        """
        if self.kind is str:
            return "one of " + ", ".join(self.choices) if self.choices else f"text of 1-{MAX_TEXT} characters"
        what = "an integer" if self.kind is int else "a number"
        lo = "" if self.low is None else f"{'>' if self.low_open else '>='} {_fmt(self.low)}"
        hi = "" if self.high is None else f"{'<' if self.high_open else '<='} {_fmt(self.high)}"
        return f"{what} {lo}{' and ' if lo and hi else ''}{hi}".strip()

    def check(self, raw: Any, transform: str) -> Any:
        """``raw`` (text or a value) as this parameter's value.

        Parameters
        ----------
        raw : Any
            The value as written in a spec (text) or given in code.
        transform : str
            The transform's spec, for the message.

        Returns
        -------
        Any
            The value, of the parameter's type (a text choice lower-cased, a text stripped).

        Raises
        ------
        InputError
            Naming the transform, the parameter and what is allowed: a value of the wrong type (a bool is
            not a number), not finite, out of range, or not an allowed text.
        """
        bad = InputError(f"transform {transform!r}: {self.name}={raw!s} is out of range: {self.name} must be "
                         f"{self.allowed()}")
        if self.kind is str:
            v = str(raw).strip()
            if self.choices:
                v = v.lower()
                if v not in self.choices:
                    raise bad
            elif not v or len(v) > MAX_TEXT or any(c in v for c in ",&\n\r\t") or not v.isprintable():
                raise bad
            return v
        try:
            if isinstance(raw, str):
                v = int(raw) if self.kind is int else float(raw)
            elif isinstance(raw, bool):
                raise ValueError
            else:
                v = self.kind(raw)
                if self.kind is int and v != raw:
                    raise ValueError
        except (TypeError, ValueError):
            raise InputError(f"transform {transform!r}: {self.name}={raw!s} is not {self.allowed()}") from None
        if not math.isfinite(v):
            raise bad
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            raise bad
        if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
            raise bad
        return v


def _fmt(v: Any) -> str:
    """A parameter value as written in a canonical spec: ``2.0`` -> ``2``, ``0.90`` -> ``0.9``."""
    if isinstance(v, float):
        return np.format_float_positional(v, trim="-")
    return str(v)


@dataclass(frozen=True)
class TransformKind:
    """A registered transform: name, side, what it does, its parameters and how to apply it.

    Attributes
    ----------
    name : str
        The transform's name in specs.
    side : str
        ``"image"`` or ``"text"``.
    summary : str
        What it does, in one line.
    params : tuple of Param
        Its parameters, in declared order.
    fn : callable
        ``fn(x, params, context)``: for the image side ``x`` is an 8-bit RGB PIL image and the result
        one too; for the text side both are strings. ``context`` is a :class:`Context`.
    changes_meaning : bool
        It may change what the image shows (marked in every result).
    degrading : bool or callable
        It only removes information (or a function of the parameters that says so).
    random : bool
        The output depends on the seed.
    needs_format : bool
        The image's file format matters (``roundtrip``).
    baseline : bool
        A blind or mismatched-image baseline (``blank``, ``static``, ``mismatch``): it removes the image's
        content or pairs the prompt with another SEG's image, so a metric that barely moves under it
        answers from the text. Its ratio reads the other way round: near 0 is the warning.
    """

    name: str
    side: str
    summary: str
    params: tuple[Param, ...]
    fn: Callable
    changes_meaning: bool = False
    degrading: bool | Callable[[dict], bool] = False
    random: bool = False
    needs_format: bool = False
    baseline: bool = False

    def param(self, name: str) -> Param | None:
        """The parameter ``name``, or None if the transform has none of that name.

        Parameters
        ----------
        name : str
            A parameter name.

        Returns
        -------
        Param or None
            The parameter.
        """
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class Context:
    """What an image transform may need besides the image.

    Attributes
    ----------
    seed : int
        The run's seed.
    source_format : str or None
        The source file's format (``"JPEG"``, ``"PNG"``, ...), None when unknown.
    """

    seed: int = 0
    source_format: str | None = None


@dataclass(frozen=True)
class Transform:
    """A transform with its parameters bound (see :func:`parse`).

    Attributes
    ----------
    kind : TransformKind
        The registered transform.
    params : tuple of (str, Any)
        ``(name, value)`` pairs in declared order, every parameter present.
    """

    kind: TransformKind
    params: tuple[tuple[str, Any], ...] = field(default=())

    @property
    def name(self) -> str:
        """The transform's name (``jpeg``)."""
        return self.kind.name

    @property
    def spec(self) -> str:
        """Canonical SPEC: ``name`` or ``name:k=v&k=v`` with every parameter, in declared order."""
        if not self.params:
            return self.kind.name
        return f"{self.kind.name}:" + "&".join(f"{k}={_fmt(v)}" for k, v in self.params)

    @property
    def side(self) -> str:
        """``"image"`` or ``"text"``."""
        return self.kind.side

    @property
    def changes_meaning(self) -> bool:
        """Whether the transform may change what the image shows (``hflip``)."""
        return self.kind.changes_meaning

    @property
    def degrading(self) -> bool:
        """Whether the transform only removes information (``jpeg``, ``rescale``, ``blur``, ``noise``)."""
        d = self.kind.degrading
        return bool(d(dict(self.params)) if callable(d) else d)

    @property
    def random(self) -> bool:
        """Whether the output depends on the seed (``noise``)."""
        return self.kind.random

    def config(self, seed: int = 0) -> dict:
        """What identifies this transform's output exactly (recorded with results; the cache key).

        Parameters
        ----------
        seed : int, default 0
            The run's seed (recorded only for a random transform).

        Returns
        -------
        dict
            ``transform`` (the canonical spec), ``version`` (:data:`KEY_VERSION`) and, for a random
            transform, ``seed``.

        Examples
        --------
        >>> from ts2viz.nuisance.transforms import parse
        >>> parse("noise").config(seed=3)
        {'transform': 'noise:sigma=8', 'version': 'nuisance-1', 'seed': 3}
        >>> parse("jpeg").config(seed=3)
        {'transform': 'jpeg:quality=75', 'version': 'nuisance-1'}
        """
        out = {"transform": self.spec, "version": KEY_VERSION}
        if self.random:
            out["seed"] = int(seed)
        return out

    def cache_key(self, seed: int = 0) -> str:
        """The transform's part of a score-cache key.

        Parameters
        ----------
        seed : int, default 0
            The run's seed.

        Returns
        -------
        str
            Its canonical spec and version, plus the seed for a random transform (a deterministic one gives
            the same output for every seed), as ``key=value`` pairs joined by ``|``.
        """
        c = self.config(seed)
        return "|".join(f"{k}={c[k]}" for k in sorted(c))

    def image(self, image, *, seed: int = 0, source_format: str | None = None):
        """The transformed image of a PIL image of any mode.

        Parameters
        ----------
        image : PIL.Image.Image
            The image, any mode (converted as :func:`ts2viz.imaging.as_rgb` does).
        seed : int, default 0
            The run's seed (random transforms only).
        source_format : str, optional
            The source file's format (default: ``image.format``).

        Returns
        -------
        PIL.Image.Image
            An 8-bit RGB image.

        Raises
        ------
        InputError
            For a text transform.

        Examples
        --------
        >>> from PIL import Image
        >>> from ts2viz.nuisance.transforms import parse
        >>> image = Image.new("RGB", (32, 16), (200, 100, 50))
        >>> parse("brightness:factor=1.2").image(image).getpixel((0, 0))
        (240, 120, 60)
        >>> parse("resize:side=8").image(image).size
        (16, 8)
        """
        if self.side != "image":
            raise InputError(f"transform {self.spec!r} changes the prompt, not the image")
        fmt = source_format if source_format is not None else getattr(image, "format", None)
        out = self.kind.fn(as_rgb(image), dict(self.params), Context(int(seed), fmt))
        return out if out.mode == "RGB" else out.convert("RGB")

    def text(self, prompt: str) -> str:
        """The transformed prompt.

        Parameters
        ----------
        prompt : str
            The prompt.

        Returns
        -------
        str
            The prompt after the transform.

        Raises
        ------
        InputError
            For an image transform.
        """
        if self.side != "text":
            raise InputError(f"transform {self.spec!r} changes the image, not the prompt")
        return self.kind.fn(str(prompt), dict(self.params), Context())

    def __call__(self, x, seed: int = 0):
        """:meth:`text` of a string, :meth:`image` of anything else (with ``seed``)."""
        return self.text(x) if isinstance(x, str) else self.image(x, seed=seed)

    def __str__(self) -> str:
        """The canonical spec."""
        return self.spec


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
    rng = np.random.default_rng(pixel_seed(im, f"noise:sigma={_fmt(p['sigma'])}", ctx.seed))
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


# -- what the scoring engine calls ------------------------------------------------------------------

@dataclass(frozen=True)
class ImageHook:
    """An image transform as the scoring engine applies it (:class:`ts2viz.engine.Variant`).

    Called with the decoded RGB image and its source (a path, or an in-memory image) after decoding,
    before the metric's preprocessing. Small and picklable (a Ray actor rebuilds the transform from its
    spec).

    Attributes
    ----------
    spec : str
        The transform's spec.
    seed : int
        The run's seed.
    """

    spec: str
    seed: int = 0

    @property
    def transform(self) -> Transform:
        """The parsed transform."""
        return parse(self.spec)

    @property
    def key(self) -> str:
        """The transform's part of the cache key (:meth:`Transform.cache_key`)."""
        return self.transform.cache_key(self.seed)

    def __call__(self, image, source=None):
        """The transformed image; the source's file format is read when the transform needs it."""
        t = self.transform
        fmt = None
        if t.kind.needs_format:
            fmt = source_format(source) if source is not None else getattr(image, "format", None)
        return t.image(image, seed=self.seed, source_format=fmt)


@dataclass(frozen=True)
class TextHook:
    """A text transform as the scoring engine applies it to each prompt (picklable).

    Attributes
    ----------
    spec : str
        The transform's spec.
    """

    spec: str

    def __call__(self, prompt: str) -> str:
        """The transformed prompt."""
        return parse(self.spec).text(prompt)


def source_format(source) -> str | None:
    """The file format of an image source.

    Parameters
    ----------
    source : str, os.PathLike or PIL.Image.Image
        A path (the format is read from the file's header) or an image (its ``format``).

    Returns
    -------
    str or None
        ``"JPEG"``, ``"PNG"``, ...; None when unknown or unreadable.
    """
    if isinstance(source, (str, os.PathLike)):
        from PIL import Image

        try:
            with Image.open(source) as im:
                return im.format
        except Exception:  # noqa: BLE001 - unreadable: decoding reports it
            return None
    return getattr(source, "format", None)


__all__ = ["DEFAULT", "BASELINES", "SIDES", "Param", "TransformKind", "Transform", "Context", "ImageHook", "TextHook",
           "register", "unregister", "kinds", "kind", "parse", "parse_list", "apply", "as_rgb", "pixel_seed",
           "source_format"]
