"""Kept for old imports: this lives in :mod:`ts2viz.statistics.two_level_bootstrap`."""
from ..statistics.two_level_bootstrap import CHUNK, image_pools, node_resample_index, two_level_bootstrap

__all__ = ["CHUNK", "image_pools", "node_resample_index", "two_level_bootstrap"]
