"""The types of the nuisance transforms: a parameter, a transform kind, a parametrised transform, its context.

A :class:`TransformKind` (``jpeg``, ``blur``, ...) declares its side and its :class:`Param` list; a
:class:`Transform` is a kind with every parameter's value, named by its canonical :attr:`Transform.spec`.
The registry of kinds, the spec parser and the built-in transforms are :mod:`ts2viz.nuisance.transforms`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import InputError
from ..imaging import as_rgb

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
        return format_value(self.default)

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
        lo = "" if self.low is None else f"{'>' if self.low_open else '>='} {format_value(self.low)}"
        hi = "" if self.high is None else f"{'<' if self.high_open else '<='} {format_value(self.high)}"
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


def format_value(v: Any) -> str:
    """A parameter value as written in a canonical spec: ``2.0`` -> ``2``, ``0.90`` -> ``0.9``.

    Parameters
    ----------
    v : Any
        The value (a float is written in its shortest positional form).

    Returns
    -------
    str
        The value's text.

    Examples
    --------
    >>> from ts2viz.nuisance.transform_types import format_value
    >>> format_value(2.0), format_value(0.90), format_value(30)
    ('2', '0.9', '30')
    """
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
    """A transform with its parameters bound (see :func:`ts2viz.nuisance.transforms.parse`).

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
        return f"{self.kind.name}:" + "&".join(f"{k}={format_value(v)}" for k, v in self.params)

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
