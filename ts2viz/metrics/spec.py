"""Kept for old imports: ``Spec`` and ``parse_spec`` live in ts2viz.metrics.common.spec."""
from .common.spec import TEXT_OPTIONS, Spec, parse_spec  # noqa: F401
