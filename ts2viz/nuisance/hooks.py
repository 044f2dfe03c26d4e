"""What the scoring engine calls to apply a nuisance transform: an image hook, a text hook, a source's format.

The hooks are small and picklable (a Ray actor rebuilds the transform from its spec); the transforms
themselves are :mod:`ts2viz.nuisance.transforms`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .transform_types import Transform
from .transforms import parse


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


__all__ = ["ImageHook", "TextHook", "source_format"]
