"""Meta-evaluation: how well a metric agrees with a gold standard (human ratings, or a SEG's error counts).

Small composable functions over score matrices (in the style of mt-metrics-eval). Pure numpy: never
imports torch, gradio or scipy. The statistics they use (correlations, bootstrap, Wilcoxon, permutation
tests) live in :mod:`ts2viz.statistics`, TS2's meta-metrics in :mod:`ts2viz.metametrics`.

- :mod:`ts2viz.metaeval.pairwise`: pairwise accuracy with ties (Deutsch et al. 2023's ``acc_eq``) and
  tie calibration, over any set of item pairs (pairs of images of one prompt, pairs on a SEG walk).
- :mod:`ts2viz.metaeval.humaneval`: Gecko's three tasks (point-wise, pair-wise, model ordering)
  against human ratings, with bootstrap intervals over prompts and paired comparisons; its settings in
  :mod:`ts2viz.metaeval.humaneval_settings`, its bootstrap over prompts in
  :mod:`ts2viz.metaeval.prompt_bootstrap`, and on a rated set (with the human rows and the
  leave-one-rater-out ceiling) :mod:`ts2viz.metaeval.rated`.
- :mod:`ts2viz.metaeval.slices`: Gecko's tasks per slice (skill, prompt set, DSG category, T2I model),
  one resample matrix for every slice, and how stable the metrics' ranking is across slices.
- :mod:`ts2viz.metaeval.agreement`: raters' agreement, Krippendorff's alpha (the ``krippendorff``
  package's) per rating set, T2I model and slice, with bootstrap intervals over prompts.
- :mod:`ts2viz.metaeval.reliable`: Gecko's reliable prompts (inter-rater disagreement below X of the
  largest for every model and template), or Gecko2K's released flags.
- :mod:`ts2viz.metaeval.seg_pairwise`: pairwise accuracy on SEGs, a TS2 meta-metric with tie
  calibration cross-validated over SEGs.
- :mod:`ts2viz.metaeval.judges`: judges (and point-wise metrics) on side-by-side pairs: 4-label
  accuracy, accuracy with and without ties, position-swap accuracy, position bias.
- :mod:`ts2viz.metaeval.sxs`: T2I models ordered from side-by-side votes; absolute templates against SxS.
- :mod:`ts2viz.metaeval.spa`: soft pairwise accuracy of a T2I-model ordering (mt-metrics-eval's pce.py).
- :mod:`ts2viz.metaeval.permutation`: permutation tests and significance clusters of pooled statistics on
  rated sets (Spearman, Kendall, Pearson, pair-wise accuracy).

``pearson``, ``spearman`` and ``kendall`` (:mod:`ts2viz.statistics.correlation`) are re-exported here.
"""
from ..statistics.correlation import kendall, pearson, spearman
from .humaneval import HumanEval, average_correlations, evaluate
from .humaneval_settings import HumanEvalSettings
from .rated import evaluate_rated
from .pairwise import (PairCounts, PairIndex, TieCalibration, accuracy_from_counts, pair_counts,
                       pairs_within, pairwise_accuracy, tie_calibration)

__all__ = ["HumanEval", "HumanEvalSettings", "PairCounts", "PairIndex", "TieCalibration", "accuracy_from_counts",
           "average_correlations", "evaluate", "evaluate_rated", "kendall", "pair_counts", "pairs_within",
           "pairwise_accuracy", "pearson", "spearman", "tie_calibration"]
