"""The settings of Gecko's tasks against human ratings (:class:`HumanEvalSettings`) and their choices.

One frozen record for :func:`ts2viz.metaeval.humaneval.evaluate` and the bootstrap over prompts
(:mod:`ts2viz.metaeval.prompt_bootstrap`): which Spearman and which per-model average, how ties of the metric
count, how the rank statistics are resampled.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

RANK_BOOTSTRAPS = ("auto", "exact", "linear")
SPEARMAN_DEFINITIONS = ("textbook", "np-corrcoef")
MODEL_AVERAGES = ("fisher", "mean")


@dataclass(frozen=True)
class HumanEvalSettings:
    """Every choice that changes a human-evaluation result besides the data.

    Parameters
    ----------
    kendall : {'b', 'c'}, default 'b'
        Tau-b (scipy's default and the DSG README's) or Stuart's tau-c.
    spearman : {'textbook', 'np-corrcoef'}, default 'textbook'
        Spearman's rho, or what TIFA's ``compute_correlation.ipynb`` prints under "Spearman"
        (``np.corrcoef``, i.e. Pearson's r).
    model_average : {'fisher', 'mean'}, default 'fisher'
        Tanh of the mean Fisher z, or the plain mean of the per-model coefficients (a "Fisher average"
        without the Fisher transform).
    metric_ties : {'wrong', 'half'}, default 'wrong'
        Pair-wise task: a metric tie on a pair the raters order counts wrong or half right.
    alpha : float, default 0.001
        Model ordering: a model pair is significantly ordered when the Wilcoxon p < alpha (Gecko's
        level).
    rank_bootstrap : {'auto', 'exact', 'linear'}, default 'auto'
        How Spearman's and Kendall's bootstrap resamples are computed (intervals only): exact on small
        sets and first-order on large ones (:func:`rank_interval_methods`), exact wherever an exact
        method is affordable, or first order everywhere.

    Raises
    ------
    InputError
        If a setting is not one of its allowed values, or ``alpha`` is not strictly between 0 and 1.
    """

    kendall: str = "b"
    spearman: str = "textbook"
    model_average: str = "fisher"
    metric_ties: str = "wrong"
    alpha: float = 0.001
    rank_bootstrap: str = "auto"

    def __post_init__(self) -> None:
        """Check every setting (see the class's Raises)."""
        if self.rank_bootstrap not in RANK_BOOTSTRAPS:
            raise InputError(f"rank_bootstrap must be one of {', '.join(RANK_BOOTSTRAPS)}, not {self.rank_bootstrap!r}")
        if self.kendall not in ("b", "c"):
            raise InputError(f"Kendall variant must be b or c, not {self.kendall!r}")
        if self.spearman not in SPEARMAN_DEFINITIONS:
            raise InputError(f"spearman must be one of {', '.join(SPEARMAN_DEFINITIONS)}, not {self.spearman!r}")
        if self.model_average not in MODEL_AVERAGES:
            raise InputError(f"model average must be one of {', '.join(MODEL_AVERAGES)}, not {self.model_average!r}")
        if self.metric_ties not in ("wrong", "half"):
            raise InputError(f"metric ties must count 'wrong' or 'half', not {self.metric_ties!r}")
        if not 0.0 < float(self.alpha) < 1.0:
            raise InputError(f"alpha must be strictly between 0 and 1, got {self.alpha!r}")
