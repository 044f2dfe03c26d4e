"""The scoring engine: run metrics over datasets or loose images, with a resumable on-disk cache.

``score_dataset`` (CLI ``ts2viz score``) and ``score_images`` (the app's live scoring) share one cache,
so either reuses the other's finished work. ``score_variants`` scores changed copies of the images or
prompts (nuisance transforms) through the same batches and cache. ``score_dataset(..., ray=...)`` runs the same scoring on
Ray actors (:mod:`ts2viz.engine.distributed`), with the same cache. Importing this package imports
neither torch nor ray.

The score cache (:class:`ScoreCache`, :mod:`ts2viz.engine.cache`) keys each score by the metric's config
hash, the image's content hash and the prompt, and commits every batch as it finishes: an interrupted run
resumes, a re-run scores nothing new. Loaded metrics are kept for reuse in the process
(:func:`get_metric`, :func:`cached_metrics`, at most :data:`MODEL_CACHE_SIZE`).
"""
from __future__ import annotations

from .cache import ScoreCache
from .core import score_dataset, score_images, score_variants
from .inputs import Variant, VariantScores
from .models import MODEL_CACHE_SIZE, cached_metrics, get_metric

__all__ = ["score_dataset", "score_images", "score_variants", "Variant", "VariantScores", "get_metric",
           "cached_metrics", "MODEL_CACHE_SIZE", "ScoreCache"]
