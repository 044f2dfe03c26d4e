"""Kept for old imports: :class:`Spec` and :func:`parse_spec` live in :mod:`ts2viz.metrics.common.spec`."""
from .common.spec import TEXT_OPTIONS, Spec, parse_spec

__all__ = ["TEXT_OPTIONS", "Spec", "parse_spec"]
