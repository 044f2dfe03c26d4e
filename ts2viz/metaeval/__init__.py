"""Meta-evaluation: statistics that say how well a metric agrees with a gold standard.

Small composable functions over score matrices (in the style of mt-metrics-eval). Pure numpy: never
imports torch or gradio.

- :mod:`ts2viz.metaeval.pairwise`: pairwise accuracy with ties (Deutsch et al. 2023's ``acc_eq``) and
  tie calibration, over any set of item pairs (pairs of images of one prompt, pairs on a SEG walk).
"""
from .pairwise import (PairCounts, PairIndex, TieCalibration, accuracy_from_counts, pair_counts,
                       pairs_within, pairwise_accuracy, tie_calibration)

__all__ = ["PairCounts", "PairIndex", "TieCalibration", "accuracy_from_counts", "pair_counts",
           "pairs_within", "pairwise_accuracy", "tie_calibration"]
