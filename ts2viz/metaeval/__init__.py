"""Meta-evaluation: statistics that say how well a metric agrees with a gold standard.

Small composable functions over score matrices (in the style of mt-metrics-eval). Pure numpy: never
imports torch, gradio or scipy.

- :mod:`ts2viz.metaeval.pairwise`: pairwise accuracy with ties (Deutsch et al. 2023's ``acc_eq``) and
  tie calibration, over any set of item pairs (pairs of images of one prompt, pairs on a SEG walk).
- :mod:`ts2viz.metaeval.correlation`: Pearson, Spearman, Kendall tau-b / tau-c (O(n log n)).
- :mod:`ts2viz.metaeval.humaneval`: Gecko's three tasks (point-wise, pair-wise, model ordering)
  against human ratings, with bootstrap intervals over prompts and paired comparisons.
- :mod:`ts2viz.metaeval.rank_bootstrap`: Spearman and Kendall of bootstrap resamples of prompts,
  exact (re-ranked through weighted ranks, no sort) or to first order (per-item influences).
"""
from .correlation import kendall, pearson, spearman
from .humaneval import HumanEval, HumanEvalSettings, average_correlations, evaluate, evaluate_rated
from .pairwise import (PairCounts, PairIndex, TieCalibration, accuracy_from_counts, pair_counts,
                       pairs_within, pairwise_accuracy, tie_calibration)

__all__ = ["HumanEval", "HumanEvalSettings", "PairCounts", "PairIndex", "TieCalibration", "accuracy_from_counts",
           "average_correlations", "evaluate", "evaluate_rated", "kendall", "pair_counts", "pairs_within",
           "pairwise_accuracy", "pearson", "spearman", "tie_calibration"]
