"""The nuisance test: whether a metric moves more for nuisance than for errors.

A metric that moves as much under JPEG compression, a resize or a slightly brighter image as it does
between error levels cannot separate a SEG's nodes in practice, and as a reward it is hackable. Every
SEG edge is a measured semantic step, so a nuisance change can be put in the units of that SEG's own
error steps:

- :mod:`.transforms`: the nuisance transforms (image and text side), one registry, named and
  parametrised like metrics (``jpeg:quality=30``, ``blur:sigma=2``), deterministic for a seed;
- :mod:`.run`: scoring the transformed copies through the batch engine (batched, cached with the
  transform in the key, resumable, GPU, Ray), and the per-image long table;
- :mod:`.summary`: nuisance-to-step ratio, flip rate, Ord and Sep under nuisance, direction; per
  metric, transform and SEG, pooled with bootstrap intervals over SEGs.

Its figures are in :mod:`ts2viz.figures.nuisance_overlay`, its views in the app in :mod:`ts2viz.ui.callbacks.nuisance`.

Importing this package imports neither torch nor gradio.

Examples
--------
>>> from ts2viz.nuisance import transforms
>>> transforms.parse("blur").spec
'blur:sigma=2'
"""
from __future__ import annotations

from . import run, summary, transforms
from .run import MetricRun, NuisanceScores, read_nuisance
from .summary import NuisanceSummary, format_summary, summarize
from .transform_types import Transform
from .transforms import DEFAULT, parse, parse_list

__all__ = ["transforms", "run", "summary", "MetricRun", "NuisanceScores", "read_nuisance", "NuisanceSummary",
           "summarize", "format_summary", "DEFAULT", "Transform", "parse", "parse_list"]
