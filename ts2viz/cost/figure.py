"""Kept for old imports: this lives in :mod:`ts2viz.figures.cost_front`."""
from ..figures.cost_front import cost_figure

__all__ = ["cost_figure"]
