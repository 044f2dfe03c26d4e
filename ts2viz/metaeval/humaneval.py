"""Gecko's three meta-evaluation tasks against human ratings, with bootstrap intervals over prompts.

Gecko (Wiles et al., "Revisiting text-to-image evaluation with Gecko: on metrics, prompts, and human
ratings"; its title: "one slice is not enough") judges a metric three ways (its Sec. 6, App. F.1):

**point-wise** : correlation of the metric's per-image scores with the mean human rating of each image:
    Spearman's rho, Kendall's tau (tau-b by default, as scipy; tau-c on request) and Pearson's r,
    pooled over every image of the set and within each T2I model. The per-model average is the
    Fisher average ``tanh(mean(atanh(r)))`` over the models where r is defined
    (``model_average="fisher"``; ``"mean"`` is the plain mean of the coefficients, what a release
    reports as a "Fisher average" computed without the transform).
**pair-wise** : over pairs of images of the same prompt that the raters rate differently, the fraction
    the metric orders as the raters do (a metric tie counts as wrong; ``metric_ties="half"`` counts it
    half right). Beside it, the tie-aware variant: Deutsch et al. (2023)'s ``acc_eq`` over every pair
    of the same prompt (gold ties included) at the tie threshold epsilon that tie calibration fits
    (:mod:`ts2viz.metaeval.pairwise`).
**model ordering** : per prompt, each T2I model's mean score; for every pair of models a Wilcoxon
    signed-rank test over prompts (:func:`ts2viz.statistics.wilcoxon.wilcoxon`, as scipy's defaults), the
    pair *significantly ordered* when p < alpha (Gecko: 0.001), by the sign of the mean difference.
    The metric agrees with the humans on a model pair when both give the same outcome (A better, B
    better, or no significant difference); ``ordering_agreement`` is the fraction of model pairs it
    agrees on, ``ordering_kendall`` Kendall's tau-b between the metric's and the humans' per-model
    means.

Intervals: percentile bootstrap over **prompts** (the unit that was sampled: an image's ratings are
not independent of its prompt's other images), one set of resamples for every metric and statistic
(so differences are paired), drawn from ``numpy.random.default_rng(seed)`` with
:class:`ts2viz.statistics.bootstrap.BootstrapSettings`. In each resample:

- Pearson, pair-wise accuracies and per-model means are recomputed exactly (they are functions of
  per-prompt sums, so a resample is one matrix product of prompt counts with per-prompt sums);
- Spearman and Kendall are those of the resampled data (re-ranked: an image's rank in a resample is
  the weight of the images below it, so no sort is needed, :mod:`ts2viz.statistics.rank_bootstrap`),
  computed exactly on small sets and to first order in the prompt counts on large ones
  (``HumanEvalSettings.rank_bootstrap``; :func:`rank_interval_methods` says which, and
  :meth:`HumanEval.interval_notes` says so beside the results): exact while images x prompts is at
  most :data:`RANK_EXACT_MAX_WORK` and images at most :data:`RANK_EXACT_HARD_MAX_IMAGES` (Spearman:
  matrix products of the counts with prompts x values matrices; Kendall: a quadratic form in the
  prompt counts, tau-b or tau-c, which counts the distinct values each resample holds);
- the tie-calibrated accuracy keeps the epsilon fitted on the full set (it is not refitted per
  resample); the model-ordering interval is that of ``ordering_kendall`` (the Wilcoxon tests are
  not rerun per resample).

Paired comparisons: :meth:`HumanEval.compare` gives the difference of two metrics on a statistic with
its paired bootstrap interval and the fraction of resamples where it is <= 0.

Pure numpy: no scipy, torch or gradio.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..statistics.bootstrap import DEFAULTS, BootstrapSettings, quantiles
from ..statistics.wilcoxon import wilcoxon
from ..statistics.correlation import kendall, kendall_from_codes, pearson, ranks_codes, spearman, subset_order
from ..statistics.rank_bootstrap import ResampledSpearman, kendall_influence_from_codes, spearman_influence_from_ranks
from .pairwise import pair_counts, pairs_within, pairwise_accuracy, tie_calibration

#: ``rank_bootstrap="auto"``: Spearman's and Kendall's resamples are exact while images x prompts (their
#: cost per resample and metric; TIFA160 1.3e5, ImagenHub 1.9e5, GenAI-Bench 1.7e6) is at most this and
#: images at most RANK_EXACT_HARD_MAX_IMAGES, first-order above
RANK_EXACT_MAX_WORK = 2_000_000
#: ``rank_bootstrap="exact"`` refuses sets beyond these (Kendall's pair sums hold images^2 pairs,
#: Spearman's matrices images x prompts entries): an InputError instead of running out of memory
RANK_EXACT_HARD_MAX_IMAGES = 5_000
RANK_EXACT_HARD_MAX_WORK = 10_000_000
RANK_BOOTSTRAPS = ("auto", "exact", "linear")
#: from this many prompts on, the resamples' matrix product runs in float32 (twice as fast; the
#: resampled statistics then differ from float64 by about 1e-8, ``tests/statistics/test_rank_bootstrap.py``)
FLOAT32_MIN_PROMPTS = 1000
SPEARMAN_DEFINITIONS = ("textbook", "np-corrcoef")
MODEL_AVERAGES = ("fisher", "mean")
#: the statistics with bootstrap intervals, as columns of :meth:`HumanEval.frame`
INTERVAL_STATS = ("spearman", "kendall", "pearson", "pairwise_acc", "pairwise_acc_eq", "ordering_kendall")


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


def average_correlations(r: np.ndarray, how: str = "fisher", axis: int = -1) -> np.ndarray:
    """Average of correlation coefficients along ``axis``.

    Parameters
    ----------
    r : array_like
        Correlation coefficients.
    how : {'fisher', 'mean'}, default 'fisher'
        ``tanh(mean(arctanh(r)))`` (|r| = 1 clipped to 1 - 1e-12 so it stays finite), or the arithmetic
        mean.
    axis : int, default -1
        The axis to average over.

    Returns
    -------
    numpy.ndarray
        The averages (a 0-d array for a 1-D input).

    Raises
    ------
    ValueError
        If ``how`` is unknown.

    Notes
    -----
    NaN policy: NaN entries are skipped; NaN if none is left.

    Examples
    --------
    >>> from ts2viz.metaeval.humaneval import average_correlations
    >>> round(float(average_correlations([0.5, 0.7, float("nan")])), 4)
    0.6096
    >>> round(float(average_correlations([0.5, 0.7], "mean")), 4)
    0.6
    """
    r = np.asarray(r, dtype=np.float64)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if how == "mean":
            return np.nanmean(r, axis=axis)
        if how != "fisher":
            raise ValueError(f"unknown average {how!r}")
        z = np.arctanh(np.clip(r, -1 + 1e-12, 1 - 1e-12))
        return np.tanh(np.nanmean(z, axis=axis))


# -- model ordering -----------------------------------------------------------------------------------

def prompt_model_means(values: np.ndarray, prompts: np.ndarray, models: np.ndarray, n_prompts: int,
                       n_models: int) -> np.ndarray:
    """Mean of ``values`` per prompt and T2I model.

    Parameters
    ----------
    values : numpy.ndarray
        (k, n) scores (or ratings) of n images.
    prompts : numpy.ndarray
        (n,) prompt code (0 .. n_prompts - 1) of each image.
    models : numpy.ndarray
        (n,) model code (0 .. n_models - 1) of each image.
    n_prompts, n_models : int
        Numbers of prompts and models.

    Returns
    -------
    numpy.ndarray
        (k, n_prompts, n_models) means; NaN where a cell has no value.

    Notes
    -----
    NaN policy: NaN values are skipped.
    """
    v = np.atleast_2d(values)
    ok = ~np.isnan(v)
    cell = prompts * n_models + models
    size = n_prompts * n_models
    out = np.full((v.shape[0], size), np.nan)
    for r in range(v.shape[0]):
        s = np.bincount(cell[ok[r]], weights=v[r][ok[r]], minlength=size)
        c = np.bincount(cell[ok[r]], minlength=size)
        out[r] = np.where(c > 0, s / np.maximum(c, 1), np.nan)
    return out.reshape(v.shape[0], n_prompts, n_models)


@dataclass(frozen=True, eq=False)
class ModelOrdering:
    """Pairwise model comparisons of one scorer (a metric or the humans).

    Attributes
    ----------
    pairs : tuple of (int, int)
        Model index pairs (a, b), a < b.
    mean_diff : numpy.ndarray
        (scorers, pairs) mean over prompts of (a - b), on prompts where both are scored.
    pvalue : numpy.ndarray
        (scorers, pairs) Wilcoxon signed-rank p-value.
    outcome : numpy.ndarray
        (scorers, pairs) +1 (a significantly better), -1 (b better), 0 (no significant difference at
        alpha).
    """

    pairs: tuple[tuple[int, int], ...]
    mean_diff: np.ndarray
    pvalue: np.ndarray
    outcome: np.ndarray


def model_ordering(cells: np.ndarray, alpha: float) -> ModelOrdering:
    """Wilcoxon tests for every model pair, from per-prompt per-model means.

    Parameters
    ----------
    cells : numpy.ndarray
        (k, prompts, models) means (:func:`prompt_model_means`).
    alpha : float
        The significance level.

    Returns
    -------
    ModelOrdering
        Mean differences, p-values and outcomes of every model pair for every scorer.

    Notes
    -----
    NaN policy: a prompt where either model has no mean is left out of that pair's test.
    """
    k, _, m = cells.shape
    pairs = tuple((a, b) for a in range(m) for b in range(a + 1, m))
    if not pairs:
        empty = np.zeros((k, 0))
        return ModelOrdering(pairs, empty, empty, empty.astype(int))
    xa = np.stack([cells[:, :, a] for a, _ in pairs], axis=1)      # (k, pairs, P)
    xb = np.stack([cells[:, :, b] for _, b in pairs], axis=1)
    d = xa - xb
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        diff = np.nanmean(d, axis=-1)
    p = wilcoxon(xa, xb).pvalue
    outcome = np.where((p < alpha) & (diff != 0), np.sign(diff), 0).astype(int)
    return ModelOrdering(pairs, diff, p, outcome)


def kendall_small(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the last axes of two arrays of a few values (the T2I models' means).

    Parameters
    ----------
    a, b : numpy.ndarray
        (..., M) values, M small (all M * (M - 1) / 2 pairs are formed); their leading axes broadcast
        (one row of the raters' means against many of the metrics').

    Returns
    -------
    numpy.ndarray
        (...,) tau-b; NaN where a side has no untied pair.

    Notes
    -----
    NaN policy: a pair with NaN on either side is left out.
    """
    i, j = np.triu_indices(a.shape[-1], 1)
    sa = np.sign(a[..., i] - a[..., j])
    sb = np.sign(b[..., i] - b[..., j])
    ok = ~(np.isnan(sa) | np.isnan(sb))
    num = np.where(ok, sa * sb, 0).sum(-1)
    na = np.where(ok, sa != 0, False).sum(-1)
    nb = np.where(ok, sb != 0, False).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((na > 0) & (nb > 0), num / np.sqrt(na * nb.astype(float)), np.nan)


# -- the result ------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)     # holds arrays: compared by identity
class HumanEval:
    """Result of :func:`evaluate`: one row per metric, intervals from one set of resamples.

    Attributes
    ----------
    metrics : tuple of str
        The scorers' names (metrics, and ``human:OTHER`` rows from :func:`evaluate_rated`).
    models : tuple of str
        The T2I models.
    n : numpy.ndarray
        (k,) images with a score and a rating, per metric.
    point : dict
        Statistic -> (k,) point estimates (``spearman``, ``kendall``, ``kendall_other``, ``pearson``,
        ``pairwise_acc``, ``pairwise_acc_eq``, ``ordering_agreement``, ``ordering_kendall``).
    per_model : dict
        ``"spearman"``/``"kendall"``/``"pearson"`` -> (k, models) within each model's images.
    ordering : ModelOrdering
        The metrics' model comparisons (rows: metrics).
    human_ordering : ModelOrdering
        The humans' model comparisons (one row).
    epsilon : numpy.ndarray
        (k,) the fitted tie threshold per metric.
    samples : dict
        Statistic -> (k, B) resampled values (empty without a bootstrap).
    settings : HumanEvalSettings
        The settings used.
    bootstrap : BootstrapSettings or None
        The resampling settings, None when no intervals were drawn.
    interval_methods : dict
        ``"spearman"``/``"kendall"`` -> ``"exact"``, ``"linear"`` or ``"pearson"``
        (:func:`rank_interval_methods`).
    """

    metrics: tuple[str, ...]
    models: tuple[str, ...]
    n: np.ndarray                     # images with a score and a rating, per metric
    point: dict                       # stat -> (k,) point estimates
    per_model: dict                   # "spearman"/"kendall"/"pearson" -> (k, M)
    ordering: ModelOrdering           # rows: metrics
    human_ordering: ModelOrdering     # one row: the humans
    epsilon: np.ndarray               # fitted tie threshold per metric
    samples: dict = field(default_factory=dict)   # stat -> (k, B) resampled values
    settings: HumanEvalSettings = HumanEvalSettings()
    bootstrap: BootstrapSettings | None = None
    interval_methods: dict = field(default_factory=dict)   # "spearman"/"kendall" -> exact, linear, pearson

    def interval_notes(self) -> list[str]:
        """Notes on the rank statistics whose interval is not from the exact resampled statistic.

        Returns
        -------
        list of str
            One line per such statistic, for printing beside the results (empty when every interval is
            exact or there are no intervals).
        """
        notes = []
        if self.bootstrap is None:
            return notes
        for stat, label in (("spearman", "Spearman"), ("kendall", f"Kendall tau-{self.settings.kendall}")):
            if self.interval_methods.get(stat) == "linear":
                notes.append(f"{label} intervals: first-order (linearised) bootstrap; the set is too large to "
                             "re-rank every resample exactly (rank_bootstrap='exact' or a smaller set for exact)")
        return notes

    def interval(self, stat: str) -> tuple[np.ndarray, np.ndarray]:
        """The percentile interval of one statistic for every metric.

        Parameters
        ----------
        stat : str
            One of :data:`INTERVAL_STATS`.

        Returns
        -------
        low : numpy.ndarray
            (k,) the lower bounds at the bootstrap's confidence; NaN without a bootstrap or for a
            statistic without resamples.
        high : numpy.ndarray
            (k,) the upper bounds, the same way.
        """
        if stat not in self.samples or self.bootstrap is None:
            nan = np.full(len(self.metrics), np.nan)
            return nan, nan.copy()
        a = (1.0 - self.bootstrap.confidence) / 2.0
        q = quantiles(self.samples[stat], (a, 1.0 - a))
        return q[0], q[1]

    def frame(self):
        """The results as a table, one row per metric.

        Returns
        -------
        pandas.DataFrame
            ``metric``, ``n``, each statistic and its interval bounds (``_lo``, ``_hi``), ``kendall_other``
            (tau-c or tau-b beside the chosen one), ``tie_epsilon``, the per-model averages
            (``{stat}_model_avg``), ``ordering_agreement``, ``ordering_kendall`` and its interval.
        """
        import pandas as pd

        cols: dict = {"metric": list(self.metrics), "n": self.n.astype(int)}
        for stat in ("spearman", "kendall", "pearson", "pairwise_acc", "pairwise_acc_eq"):
            cols[stat] = self.point[stat]
            lo, hi = self.interval(stat)
            cols[f"{stat}_lo"], cols[f"{stat}_hi"] = lo, hi
        cols["kendall_other"] = self.point["kendall_other"]
        cols["tie_epsilon"] = self.epsilon
        for stat in ("spearman", "kendall", "pearson"):
            cols[f"{stat}_model_avg"] = average_correlations(self.per_model[stat], self.settings.model_average)
        cols["ordering_agreement"] = self.point["ordering_agreement"]
        cols["ordering_kendall"] = self.point["ordering_kendall"]
        lo, hi = self.interval("ordering_kendall")
        cols["ordering_kendall_lo"], cols["ordering_kendall_hi"] = lo, hi
        return pd.DataFrame(cols)

    def per_model_frame(self):
        """The per-model correlations as a long table.

        Returns
        -------
        pandas.DataFrame
            One row per (metric, T2I model): ``metric``, ``t2i_model``, ``spearman``, ``kendall``,
            ``pearson`` (within that model's images).
        """
        import pandas as pd

        rows = []
        for i, m in enumerate(self.metrics):
            for j, t in enumerate(self.models):
                rows.append({"metric": m, "t2i_model": t, **{s: float(self.per_model[s][i, j])
                                                              for s in ("spearman", "kendall", "pearson")}})
        return pd.DataFrame(rows)

    def ordering_frame(self):
        """The model-pair comparisons as a long table.

        Returns
        -------
        pandas.DataFrame
            One row per (scorer, model pair): ``scorer`` (``human`` or a metric), ``model_a``, ``model_b``,
            ``mean_diff``, ``pvalue``, ``outcome`` (+1 a better, -1 b better, 0 not significant), ``agrees``
            (with the humans).
        """
        import pandas as pd

        rows = []
        names = ["human"] + list(self.metrics)
        res = [self.human_ordering] + [self.ordering] * len(self.metrics)
        idx = [0] + list(range(len(self.metrics)))
        h = self.human_ordering.outcome[0]
        for name, r, i in zip(names, res, idx):
            for p, (a, b) in enumerate(r.pairs):
                rows.append({"scorer": name, "model_a": self.models[a], "model_b": self.models[b],
                             "mean_diff": float(r.mean_diff[i, p]), "pvalue": float(r.pvalue[i, p]),
                             "outcome": int(r.outcome[i, p]), "agrees": bool(r.outcome[i, p] == h[p])})
        return pd.DataFrame(rows)

    def compare(self, a: str, b: str, stat: str = "spearman"):
        """Paired bootstrap comparison of two metrics on one statistic.

        Parameters
        ----------
        a, b : str
            Metric names.
        stat : str, default "spearman"
            One of :data:`INTERVAL_STATS`.

        Returns
        -------
        dict
            ``a``, ``b``, ``stat``, ``diff`` (stat(a) - stat(b)), ``lo`` and ``hi`` (its paired bootstrap
            interval), ``p_le_0`` (the one-sided bootstrap p-value: the fraction of resamples with a
            difference <= 0); NaN interval and p-value without resamples.

        Raises
        ------
        ValueError
            If a metric is not among :attr:`metrics`.

        Examples
        --------
        >>> from ts2viz.gold import load_gold
        >>> from ts2viz.metaeval.humaneval import evaluate_rated
        >>> from ts2viz.statistics.bootstrap import BootstrapSettings
        >>> he = evaluate_rated(load_gold("tifa160", answers=False), metrics=["clipscore_vitb32", "tifa_mplug-large"],
        ...                     bootstrap=BootstrapSettings(n_resamples=1000))
        >>> res = he.compare("tifa_mplug-large", "clipscore_vitb32", "spearman")
        >>> round(res["diff"], 2), round(res["lo"], 2), round(res["hi"], 2), res["p_le_0"]
        (0.33, 0.22, 0.45, 0.0)
        """
        i, j = self.metrics.index(a), self.metrics.index(b)
        diff = float(self.point[stat][i] - self.point[stat][j])
        if stat not in self.samples or self.bootstrap is None:
            return {"a": a, "b": b, "stat": stat, "diff": diff, "lo": math.nan, "hi": math.nan, "p_le_0": math.nan}
        d = self.samples[stat][i] - self.samples[stat][j]
        al = (1.0 - self.bootstrap.confidence) / 2.0
        lo, hi = quantiles(d[None, :], (al, 1 - al))[:, 0]
        ok = ~np.isnan(d)
        return {"a": a, "b": b, "stat": stat, "diff": diff, "lo": float(lo), "hi": float(hi),
                "p_le_0": float((d[ok] <= 0).mean()) if ok.any() else math.nan}


# -- evaluation -------------------------------------------------------------------------------------------

def _codes(values) -> tuple[np.ndarray, list]:
    vals = list(values)
    index: dict = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in vals), dtype=np.int64, count=len(vals))
    return codes, list(index)


def evaluate(scores, human, prompts, models, metrics: Sequence[str], *,
             settings: HumanEvalSettings = HumanEvalSettings(),
             bootstrap: BootstrapSettings | None = DEFAULTS, per_model_all: bool = True) -> HumanEval:
    """Gecko's three tasks for every metric (see the module docstring).

    Parameters
    ----------
    scores : array_like
        (k, n) metric scores (higher = better), NaN where not scored.
    human : array_like
        (n,) mean human rating per image (NaN: not rated; such images are left out).
    prompts, models : array_like
        (n,) prompt and T2I model of each image (any hashable labels).
    metrics : sequence of str
        The k metric names.
    settings : HumanEvalSettings, default HumanEvalSettings()
        The statistics' choices.
    bootstrap : BootstrapSettings or None, default DEFAULTS
        Resampling settings (prompts are resampled), or None for no intervals.
    per_model_all : bool, default True
        Per-model Kendall and Pearson beside the per-model Spearman (False: NaN, for callers that use
        only Spearman's per-model average; the slices, :mod:`ts2viz.metaeval.slices`).

    Returns
    -------
    HumanEval
        Point estimates, per-model correlations, model orderings, tie thresholds and resamples.

    Raises
    ------
    ValueError
        If ``scores``, ``human`` and ``metrics`` do not match in shape.
    InputError
        If ``settings.rank_bootstrap="exact"`` on a set too large for it.

    See Also
    --------
    evaluate_rated : the same on a rated set.
    ts2viz.metaeval.permutation.gold_clusters : significance clusters on a pooled statistic.

    Notes
    -----
    NaN policy: each metric uses the images it scored that have a rating (``n``); a statistic undefined
    on them (fewer than two images, a constant side) is NaN.

    Examples
    --------
    Four images of two prompts by two models, two metrics (no intervals):

    >>> from ts2viz.metaeval.humaneval import evaluate
    >>> scores = [[0.9, 0.2, 0.8, 0.4], [0.1, 0.5, 0.3, 0.6]]
    >>> human = [5.0, 2.0, 4.0, 3.0]
    >>> he = evaluate(scores, human, ["p1", "p1", "p2", "p2"], ["m1", "m2", "m1", "m2"], ["good", "bad"],
    ...               bootstrap=None)
    >>> he.frame()[["metric", "n", "spearman", "pairwise_acc"]]
      metric  n  spearman  pairwise_acc
    0   good  4       1.0           1.0
    1    bad  4      -0.8           0.0
    """
    x = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.asarray(human, dtype=np.float64).ravel()
    k, n = x.shape
    if y.size != n or len(metrics) != k:
        raise ValueError("scores, human and metrics do not match in shape")
    pc, _ = _codes(prompts)
    mc, model_names = _codes(models)
    P, M = (int(pc.max()) + 1 if n else 0), len(model_names)
    st = settings
    ok = ~np.isnan(x) & ~np.isnan(y)[None, :]
    n_ok = ok.sum(1)
    point: dict = {s: np.full(k, np.nan) for s in ("spearman", "kendall", "kendall_other", "pearson")}
    per_model = {s: np.full((k, M), np.nan) for s in ("spearman", "kendall", "pearson")}
    y_sorted: dict = {}                  # the ratings' order, once per set of usable images
    methods = {} if bootstrap is None else rank_interval_methods(int((~np.isnan(y)).sum()), P, settings)
    influence: dict = {}                 # (stat, metric) -> per-image influence (first-order resamples)
    for i in range(k):
        m = ok[i]
        if m.sum() < 2:
            continue
        xv, yv = x[i][m], y[m]
        key = m.tobytes()
        if key not in y_sorted:
            y_sorted = {key: np.argsort(yv, kind="stable")}
            y_model: dict = {}
        oy = y_sorted[key]
        ox = np.argsort(xv, kind="stable")
        rx, cx = ranks_codes(xv, ox)
        ry, cy = ranks_codes(yv, oy)
        point["spearman"][i] = pearson(xv, yv) if st.spearman == "np-corrcoef" else pearson(rx, ry)
        tb, tc = kendall_from_codes(cx, cy, ox)
        point["kendall"][i], point["kendall_other"][i] = (tb, tc) if st.kendall == "b" else (tc, tb)
        point["pearson"][i] = pearson(xv, yv)
        if methods.get("spearman") == "linear":
            influence["spearman", i] = spearman_influence_from_ranks(rx, cx, ry, cy)[1]
        if methods.get("kendall") == "linear":
            influence["kendall", i] = kendall_influence_from_codes(cx, cy, ox, st.kendall)[1]
        mv = mc[m]
        for j in range(M):
            sel = mv == j
            if sel.sum() < 2:
                continue
            if (key, j) not in y_model:         # the ratings' side: once per set of usable images and model
                sy = subset_order(oy, sel)
                y_model[key, j] = ranks_codes(yv[sel], sy)
            sx = subset_order(ox, sel)
            rxs, cxs = ranks_codes(xv[sel], sx)
            rys, cys = y_model[key, j]
            per_model["spearman"][i, j] = (pearson(xv[sel], yv[sel]) if st.spearman == "np-corrcoef"
                                           else pearson(rxs, rys))
            if per_model_all:
                tb, tc = kendall_from_codes(cxs, cys, sx)
                per_model["kendall"][i, j] = tb if st.kendall == "b" else tc
                per_model["pearson"][i, j] = pearson(xv[sel], yv[sel])
    # pair-wise: pairs of images of one prompt (through the pairwise module)
    pairs = pairs_within(pc)
    point["pairwise_acc"] = np.atleast_1d(pairwise_accuracy(x, y, pairs, gold_ties="exclude",
                                                            metric_ties=st.metric_ties))
    cal = tie_calibration(x, y, pairs, gold_ties="include")
    eps = np.atleast_1d(cal.epsilon).astype(np.float64)
    point["pairwise_acc_eq"] = np.atleast_1d(pairwise_accuracy(x, y, pairs, eps, gold_ties="include"))
    # model ordering
    cells = prompt_model_means(x, pc, mc, P, M)
    hcells = prompt_model_means(y[None, :], pc, mc, P, M)
    ordering = model_ordering(cells, st.alpha)
    human_ord = model_ordering(hcells, st.alpha)
    point["ordering_agreement"] = (ordering.outcome == human_ord.outcome).mean(1) if ordering.pairs else np.full(k, np.nan)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mmeans = np.nanmean(cells, axis=1)          # (k, M)
        hmeans = np.nanmean(hcells, axis=1)         # (1, M)
    point["ordering_kendall"] = kendall_small(mmeans, np.broadcast_to(hmeans, mmeans.shape))
    samples = {} if bootstrap is None else _bootstrap(x, y, ok, pc, P, cells, hcells, pairs, eps, st,
                                                      bootstrap, point, methods, influence)
    return HumanEval(tuple(metrics), tuple(str(m) for m in model_names), n_ok, point, per_model, ordering,
                     human_ord, eps, samples, st, bootstrap, methods)


def prompt_sums(x, y, ok, pc, P) -> np.ndarray:
    """Per-prompt sums behind Pearson's r, from which a resample's r is exact.

    Parameters
    ----------
    x : numpy.ndarray
        (k, n) scores.
    y : numpy.ndarray
        (n,) ratings.
    ok : numpy.ndarray
        (k, n) bool: the images each metric uses.
    pc : numpy.ndarray
        (n,) prompt codes 0 .. P - 1.
    P : int
        Number of prompts.

    Returns
    -------
    numpy.ndarray
        (P, k, 6): images, x, y, x^2, y^2, xy summed per prompt (centred on each metric's own images'
        means, so the products lose no precision); zeros for a metric with fewer than two images.
    """
    k, n = x.shape
    out = np.zeros((P, k, 6))
    for i in range(k):
        m = ok[i]
        xi, yi = x[i][m], y[m]
        if xi.size < 2:
            continue
        xi = xi - xi.mean()
        yi = yi - yi.mean()
        g = pc[m]
        for c, v in enumerate((None, xi, yi, xi * xi, yi * yi, xi * yi)):
            out[:, i, c] = np.bincount(g, weights=v, minlength=P)
    return out


def corr_from_sums(s: np.ndarray) -> np.ndarray:
    """Pearson's r from (weighted) sums.

    Parameters
    ----------
    s : numpy.ndarray
        (..., 6) sums as :func:`prompt_sums` makes them (weighted by a resample's prompt counts).

    Returns
    -------
    numpy.ndarray
        (...,) r; NaN where fewer than two images or a side is constant.
    """
    n = s[..., 0]
    sx, sy, sxx, syy, sxy = (s[..., c] for c in range(1, 6))
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sxy - sx * sy / n
        vx = sxx - sx * sx / n
        vy = syy - sy * sy / n
        r = cov / np.sqrt(vx * vy)
    return np.where((vx > 0) & (vy > 0) & (n >= 2), np.clip(r, -1, 1), np.nan)


def pair_sums(x, y, pairs, eps, pc, P, metric_ties: str):
    """Per-prompt counts of pair outcomes, from which a resample's pair-wise accuracies are exact.

    Parameters
    ----------
    x : numpy.ndarray
        (k, n) scores.
    y : numpy.ndarray
        (n,) ratings.
    pairs : ts2viz.metaeval.pairwise.PairIndex
        Image pairs, both of one prompt.
    eps : numpy.ndarray
        (k,) each metric's tie threshold for acc_eq.
    pc : numpy.ndarray
        (n,) prompt codes 0 .. P - 1.
    P : int
        Number of prompts.
    metric_ties : {'wrong', 'half'}
        The credit of a metric tie on a pair the raters order.

    Returns
    -------
    numpy.ndarray
        (P, k, 4): the gold-ordered task's numerator and denominator, acc_eq's numerator and denominator.
    """
    i, j = pairs.first, pairs.second
    dm = x[:, i] - x[:, j]
    dg = (y[i] - y[j])[None, :]
    valid = ~np.isnan(dm) & ~np.isnan(dg)
    g = pc[i]
    out = np.zeros((P, x.shape[0], 4))
    credit = 0.5 if metric_ties == "half" else 0.0
    for r in range(x.shape[0]):
        v = valid[r]
        d, gd = dm[r], dg[0]
        ordered = v & (gd != 0)
        exact_tie = d == 0
        conc = ordered & ~exact_tie & (np.sign(d) == np.sign(gd))
        num1 = conc + credit * (ordered & exact_tie)
        mt = np.abs(d) <= eps[r]
        gt = gd == 0
        num2 = v & ((~mt & ~gt & (np.sign(d) == np.sign(gd))) | (mt & gt))
        out[:, r, 0] = np.bincount(g, weights=num1.astype(float), minlength=P)
        out[:, r, 1] = np.bincount(g, weights=ordered.astype(float), minlength=P)
        out[:, r, 2] = np.bincount(g, weights=num2.astype(float), minlength=P)
        out[:, r, 3] = np.bincount(g, weights=v.astype(float), minlength=P)
    return out


def _distinct_drawn(values: np.ndarray, g: np.ndarray, P: int):
    """A function of counts (b, P) -> (b,): how many distinct ``values`` the resample holds.

    A value held only by images of undrawn prompts is absent.
    """
    codes, sizes = np.unique(values, return_inverse=True, return_counts=True)[1:]
    codes = codes.ravel()
    single = sizes[codes] == 1
    per_prompt = np.bincount(g[single], minlength=P).astype(np.float64)        # values held by one image
    multi = np.flatnonzero(~single)
    mcodes = np.unique(codes[multi], return_inverse=True)[1].ravel()
    shared = np.zeros((P, int(mcodes.max()) + 1 if multi.size else 0))
    np.add.at(shared, (g[multi], mcodes), 1.0)
    return lambda cnt: (cnt > 0) @ per_prompt + ((cnt @ shared) > 0).sum(1)


def _by_prompt_pairs(v: np.ndarray, starts: np.ndarray, present: np.ndarray, P: int) -> np.ndarray:
    """Sum of an (images x images) array over blocks of images of one prompt: (P, P) float32.

    Images are sorted by prompt, ``starts`` holds each present prompt's first row; zeros for absent
    prompts.
    """
    blocks = np.add.reduceat(np.add.reduceat(v, starts, axis=0, dtype=np.int32), starts, axis=1, dtype=np.int32)
    out = np.zeros((P, P), dtype=np.float32)
    out[np.ix_(present, present)] = blocks
    return out


def _kendall_matrices(x, y, ok, pc, P, variant: str = "b"):
    """Per metric, prompt-by-prompt sums over ordered image pairs, for the exact resampled tau-b and tau-c.

    The sums are: concordance sign products A, ties in the metric Tx, ties in the ratings Ty (each P x P;
    images of a prompt count against each other and, with i = j, themselves), images per prompt, and
    (tau-c) the counters of distinct values drawn on each side. (The image pairs are int8 signs of dense
    codes, summed over prompt blocks by ``reduceat``: O(images^2) bytes, not float64 words.)
    """
    out = []
    human_ties: dict = {}
    for r in range(x.shape[0]):
        m = ok[r]
        if m.sum() < 2:                                     # no pair: no interval
            out.append(None)
            continue
        order = np.argsort(pc[m], kind="stable")            # images grouped by prompt
        xi, yi, g = x[r][m][order], y[m][order], pc[m][order]
        present, starts = np.unique(g, return_index=True)
        cx = np.unique(xi, return_inverse=True)[1].astype(np.int32).ravel()
        cy = np.unique(yi, return_inverse=True)[1].astype(np.int32).ravel()
        sx = np.sign(cx[:, None] - cx[None, :]).astype(np.int8)
        key = m.tobytes()
        if key not in human_ties:                       # the ratings' ties depend only on the mask
            sy = np.sign(cy[:, None] - cy[None, :]).astype(np.int8)
            human_ties = {key: (sy, _by_prompt_pairs(sy == 0, starts, present, P))}
        sy, ty = human_ties[key]
        presence = (_distinct_drawn(xi, g, P), _distinct_drawn(yi, g, P)) if variant == "c" else ()
        out.append((_by_prompt_pairs(sx * sy, starts, present, P), _by_prompt_pairs(sx == 0, starts, present, P), ty,
                    np.bincount(g, minlength=P).astype(np.float64), presence))
    return out


def prompt_resamples(n_prompts: int, boot: BootstrapSettings, chunk_items: int = 10_000_000,
                     dtype=np.float64):
    """The bootstrap resamples of prompts, in chunks.

    Parameters
    ----------
    n_prompts : int
        Number of prompts.
    boot : BootstrapSettings
        Resample count and seed.
    chunk_items : int, default 10,000,000
        At most this many draws per chunk.
    dtype : numpy dtype, default numpy.float64
        The dtype of the count arrays.

    Yields
    ------
    start : int
        Index of the chunk's first resample.
    counts : numpy.ndarray
        (b, n_prompts): how often each prompt is drawn in resamples ``start .. start + b - 1``.

    Notes
    -----
    Each resample draws ``n_prompts`` prompts with replacement (``rng.integers(0, n_prompts)``,
    ``rng = numpy.random.default_rng(boot.seed)``, chunk by chunk), so the resamples depend only on the
    seed, the resample count and the number of prompts. (The draws are made as 32-bit integers, which
    numpy draws from the very same stream as 64-bit ones below 2**32 prompts, and counted 8 resamples
    at a time, whose counts stay in the cache.)

    Examples
    --------
    >>> from ts2viz.metaeval.humaneval import prompt_resamples
    >>> from ts2viz.statistics.bootstrap import BootstrapSettings
    >>> start, counts = next(prompt_resamples(4, BootstrapSettings(n_resamples=3)))
    >>> start, counts.shape, counts.sum(axis=1).tolist()
    (0, (3, 4), [4.0, 4.0, 4.0])
    """
    B, P = boot.n_resamples, max(int(n_prompts), 1)
    rng = np.random.default_rng(boot.seed)
    chunk = max(1, min(B, chunk_items // P))
    small = np.int32 if P < 2 ** 31 else np.int64
    step = 8                                  # resamples per bincount: its counts stay in the L2 cache
    offsets = (np.arange(step, dtype=np.intp) * P)[:, None]
    for start in range(0, B, chunk):
        b = min(chunk, B - start)
        draws = rng.integers(0, P, size=(b, P), dtype=small)
        counts = np.empty((b, P), dtype=dtype)
        for r in range(0, b, step):
            block = draws[r:r + step].astype(np.intp)
            block += offsets[:block.shape[0]]
            counts[r:r + step] = np.bincount(block.ravel(), minlength=block.size).reshape(-1, P)
        yield start, counts


def rank_interval_methods(n_images: int, n_prompts: int, settings: HumanEvalSettings) -> dict:
    """How the Spearman and Kendall resamples are computed for a set of this size.

    Parameters
    ----------
    n_images : int
        Rated images.
    n_prompts : int
        Prompts.
    settings : HumanEvalSettings
        Its ``rank_bootstrap`` and ``spearman`` choices.

    Returns
    -------
    dict
        ``{"spearman": m, "kendall": m}`` with m ``"exact"`` (the resampled data's own statistic) or
        ``"linear"`` (its first-order expansion in the prompt counts,
        :mod:`ts2viz.statistics.rank_bootstrap`); Spearman is ``"pearson"`` with
        ``spearman="np-corrcoef"`` (that statistic is Pearson's r, always exact).

    Raises
    ------
    InputError
        With ``rank_bootstrap="exact"`` above :data:`RANK_EXACT_HARD_MAX_IMAGES` images or
        :data:`RANK_EXACT_HARD_MAX_WORK` images x prompts (it would not fit in memory).

    Notes
    -----
    ``"auto"`` is exact while ``n_images * n_prompts`` is at most :data:`RANK_EXACT_MAX_WORK` and there
    are at most :data:`RANK_EXACT_HARD_MAX_IMAGES` images (images x prompts is the work per resample and
    metric of either exact method: matrix products with prompts x values matrices for Spearman, prompts
    x prompts quadratic forms for Kendall), linear above; ``"exact"`` is exact (memory and time grow
    with images x prompts, Kendall's set-up with images**2); ``"linear"`` is linear for both.

    Examples
    --------
    >>> from ts2viz.metaeval.humaneval import HumanEvalSettings, rank_interval_methods
    >>> rank_interval_methods(800, 160, HumanEvalSettings())          # TIFA160
    {'spearman': 'exact', 'kendall': 'exact'}
    >>> rank_interval_methods(100_000, 10_000, HumanEvalSettings())
    {'spearman': 'linear', 'kendall': 'linear'}
    """
    how = settings.rank_bootstrap
    if how == "exact" and (n_images > RANK_EXACT_HARD_MAX_IMAGES or n_images * n_prompts > RANK_EXACT_HARD_MAX_WORK):
        raise InputError(f"exact rank resamples of {n_images:,} images x {n_prompts:,} prompts would not fit in memory "
                         f"(at most {RANK_EXACT_HARD_MAX_IMAGES:,} images and {RANK_EXACT_HARD_MAX_WORK:,} images x "
                         "prompts): use rank_bootstrap 'auto' or 'linear'")
    exact = how == "exact" or (how == "auto" and n_images * n_prompts <= RANK_EXACT_MAX_WORK
                               and n_images <= RANK_EXACT_HARD_MAX_IMAGES)
    method = "exact" if exact else "linear"
    return {"spearman": "pearson" if settings.spearman == "np-corrcoef" else method, "kendall": method}


def _spearman_exact(x, y, ok, pc, P) -> list:
    """Per metric, the arguments of its :class:`ResampledSpearman` (None when it scored fewer than two).

    Each is built when used and dropped after (its matrices: prompts x values).
    """
    return [(x[i][ok[i]], y[ok[i]], pc[ok[i]], P) if ok[i].sum() >= 2 else None for i in range(x.shape[0])]


def _influence_columns(ok, pc, P, influence: dict) -> tuple[np.ndarray, list]:
    """Per-prompt influences (P, columns) of the statistics resampled to first order.

    From per-image influences ``{(stat, metric): psi}``; also returns which (statistic, metric) each
    column is.
    """
    cols, which = [], []
    for (stat, i), psi in influence.items():
        if np.isnan(psi).any():                      # the statistic is undefined on the full set
            continue
        cols.append(np.bincount(pc[ok[i]], weights=psi, minlength=P))
        which.append((stat, i))
    return (np.stack(cols, axis=1) if cols else np.zeros((P, 0))), which


def _distinct_columns(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of ``table`` (in first-seen order) and, per original column, its index among them.

    A hash of each column's bytes: ``np.unique(axis=1)`` sorts and costs seconds here.
    """
    cols = np.ascontiguousarray(table.T)
    first: dict = {}
    back = np.fromiter((first.setdefault(c.tobytes(), len(first)) for c in cols), dtype=np.int64, count=cols.shape[0])
    pick = np.empty(len(first), dtype=np.int64)
    pick[back] = np.arange(back.size)                                         # a column of each kind
    return np.ascontiguousarray(cols[pick].T), back


def _bootstrap(x, y, ok, pc, P, cells, hcells, pairs, eps, st: HumanEvalSettings, boot: BootstrapSettings,
               point: dict, methods: dict, influence: dict):
    """Resampled values of every interval statistic (stat -> (k, B)) and how each was computed.

    One matrix product per chunk of resamples serves every statistic that is a function of per-prompt
    sums: ``counts @ table`` is computed as ``table.sum(0) + (counts - 1) @ table`` with the second term in
    float32 (``counts - 1`` are small integers, exact in float32; the resample's departure from the full
    set is all float32 has to carry, so its rounding is ~1e-7 of the bootstrap spread, while the full
    set's sums stay float64) from :data:`FLOAT32_MIN_PROMPTS` prompts on, in float64 below.
    """
    k, n = x.shape
    B = boot.n_resamples
    sums = prompt_sums(x, y, ok, pc, P).reshape(P, k * 6)
    psum = pair_sums(x, y, pairs, eps, pc, P, st.metric_ties).reshape(P, k * 4)
    M = cells.shape[2]
    cv = np.nan_to_num(cells).transpose(1, 0, 2).reshape(P, k * M)
    cm = (~np.isnan(cells)).transpose(1, 0, 2).reshape(P, k * M).astype(float)
    hv = np.nan_to_num(hcells[0])
    hm = (~np.isnan(hcells[0])).astype(float)
    infl, which = _influence_columns(ok, pc, P, influence)
    table = np.concatenate([sums, psum, cv, cm, hv, hm, infl], axis=1)
    # many columns repeat (rating sums and masks shared by metrics scored on the same images): the
    # resampled sums are computed once per distinct column
    table, back = _distinct_columns(table)
    base = table.sum(0)
    precision = np.float32 if P >= FLOAT32_MIN_PROMPTS else np.float64
    table32 = table.astype(precision)
    kmat = _kendall_matrices(x, y, ok, pc, P, st.kendall) if methods["kendall"] == "exact" else None
    sexact = _spearman_exact(x, y, ok, pc, P) if methods["spearman"] == "exact" else None
    out = {s: np.full((k, B), np.nan) for s in INTERVAL_STATS}
    # one BLAS thread: the products are many and mid-sized, and a BLAS library's threads spin-wait for
    # work, which on a busy machine cost 5x the wall time (TIFA160: 31 s instead of 6.9 s at load 10)
    with one_blas_thread():
        for start, counts in prompt_resamples(P, boot, dtype=precision):
            b = counts.shape[0]
            counts -= 1.0
            t = ((counts @ table32).astype(np.float64) + base)[:, back]      # (b, columns)
            counts += 1.0
            s = t[:, :k * 6].reshape(b, k, 6)
            sl = slice(start, start + b)
            out["pearson"][:, sl] = corr_from_sums(s).T
            if methods["spearman"] == "pearson":
                out["spearman"][:, sl] = out["pearson"][:, sl]
            c0 = k * 6
            p4 = t[:, c0:c0 + 4 * k].reshape(b, k, 4)
            with np.errstate(invalid="ignore", divide="ignore"):
                out["pairwise_acc"][:, sl] = np.where(p4[..., 1] > 0, p4[..., 0] / p4[..., 1], np.nan).T
                out["pairwise_acc_eq"][:, sl] = np.where(p4[..., 3] > 0, p4[..., 2] / p4[..., 3], np.nan).T
                c1 = c0 + 4 * k
                mv = t[:, c1:c1 + k * M].reshape(b, k, M)
                mn = t[:, c1 + k * M:c1 + 2 * k * M].reshape(b, k, M)
                c2 = c1 + 2 * k * M
                hvv, hmm = t[:, c2:c2 + M], t[:, c2 + M:c2 + 2 * M]
                mm = np.where(mn > 0, mv / mn, np.nan)
                hh = np.where(hmm > 0, hvv / hmm, np.nan)
            out["ordering_kendall"][:, sl] = kendall_small(mm, np.broadcast_to(hh[:, None, :], mm.shape)).T
            c3 = c2 + 2 * M
            for c, (stat, i) in enumerate(which):               # first-order resamples: value + influence
                out[stat][i, sl] = np.clip(point[stat][i] + t[:, c3 + c] - base[back[c3 + c]], -1.0, 1.0)
            if sexact is not None or kmat is not None:
                _exact_rank_resamples(out, sl, counts, sexact, kmat, ok, st.kendall)
    return out


def _exact_rank_resamples(out: dict, sl: slice, counts: np.ndarray, sexact, kmat, ok, variant: str) -> None:
    """Exact Spearman and Kendall of the resamples ``sl`` into ``out``."""
    if sexact is not None:
        for i, args in enumerate(sexact):
            if args is not None:
                out["spearman"][i, sl] = ResampledSpearman(*args)(counts)
    if kmat is not None:
        cnt = counts.astype(np.float64)
        c32 = counts.astype(np.float32)
        # quadratic forms c' Q c: (c @ Q) in float32 is exact (integer sums far below 2**24), the
        # products with c and their sums in float64
        quad = lambda Q: ((c32 @ Q).astype(np.float64) * cnt).sum(1)          # noqa: E731
        rating_ties: dict = {}
        for r, mats in enumerate(kmat):
            if mats is None:
                continue
            A, Tx, Ty, sizes, presence = mats
            nn = cnt @ sizes
            s_ = quad(A) / 2
            with np.errstate(invalid="ignore", divide="ignore"):
                if variant == "b":
                    if id(Ty) not in rating_ties:           # one matrix per set of rated images
                        rating_ties[id(Ty)] = quad(Ty)
                    n0 = nn * (nn - 1) / 2
                    n1 = (quad(Tx) - nn) / 2
                    n2 = (rating_ties[id(Ty)] - nn) / 2
                    tau = s_ / np.sqrt((n0 - n1) * (n0 - n2))
                else:                                        # tau-c: distinct values drawn, per side
                    m = np.minimum(*((present(cnt) for present in presence)))
                    tau = np.where(m >= 2, 2.0 * s_ / (nn * nn * (m - 1) / np.maximum(m, 1)), np.nan)
            out["kendall"][r, sl] = np.clip(tau, -1, 1)


def one_blas_thread():
    """A context that limits BLAS to one thread (threadpoolctl), or does nothing without threadpoolctl.

    Returns
    -------
    contextlib.AbstractContextManager
        The context.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                                   # optional: only speed depends on it
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def evaluate_rated(rated, *, rating_set: str | None = None, metrics: Sequence[str] | None = None,
                   ceiling: bool = True, settings: HumanEvalSettings = HumanEvalSettings(),
                   bootstrap: BootstrapSettings | None = DEFAULTS, aggregate: str = "mean") -> HumanEval:
    """:func:`evaluate` on a :class:`ts2viz.gold.RatedSet` against the mean (or median, majority) of one rating set.

    Parameters
    ----------
    rated : RatedSet
        The gold set (:func:`ts2viz.gold.load_gold`).
    rating_set : str, optional
        The rating set whose per-image mean is the gold (default: the set's default rating set).
    metrics : sequence of str, optional
        Metric columns of the set to evaluate (default: all).
    ceiling : bool, default True
        Every *other* faithfulness rating set of the same images joins as a row ``human:NAME`` (its
        per-image mean scored like a metric): the agreement of one group of raters with another, the
        human ceiling a metric can be compared with (TIFA160: the TIFA raters against the DSG raters).
    settings : HumanEvalSettings, default HumanEvalSettings()
        The statistics' choices.
    bootstrap : BootstrapSettings or None, default DEFAULTS
        Resampling settings, or None for no intervals.
    aggregate : {'mean', 'median', 'majority'}, default 'mean'
        How an image's ratings become its gold (:meth:`ts2viz.gold.RatedSet.human`).

    Returns
    -------
    HumanEval
        One row per ``human:OTHER`` rating set, then one per metric.

    Raises
    ------
    InputError
        If the rating set or a metric is unknown, or there is nothing to score.

    Notes
    -----
    NaN policy: images nobody in the chosen rating set rated are left out; each metric uses the images
    it scored.

    Examples
    --------
    TIFA160 against the DSG raters' mean rating, with the TIFA raters as the human ceiling:

    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.humaneval import evaluate_rated
    >>> from ts2viz.statistics.bootstrap import BootstrapSettings
    >>> he = evaluate_rated(load_gold("tifa160", answers=False), metrics=["clipscore_vitb32", "tifa_mplug-large"],
    ...                     bootstrap=BootstrapSettings(n_resamples=1000))
    >>> he.frame()[["metric", "n", "spearman", "spearman_lo", "spearman_hi", "pairwise_acc"]].round(2)
                 metric    n  spearman  spearman_lo  spearman_hi  pairwise_acc
    0        human:tifa  800      0.83         0.80         0.85          0.60
    1  clipscore_vitb32  800      0.28         0.19         0.35          0.65
    2  tifa_mplug-large  800      0.61         0.53         0.67          0.43
    """
    rs = rated.check_rating_set(rating_set)
    x, names = rated_score_rows(rated, rs, metrics, ceiling=ceiling)
    return evaluate(x, rated.human(rs, aggregate), rated.images["prompt_id"].to_numpy(), rated.images["t2i_model"].to_numpy(),
                    names, settings=settings, bootstrap=bootstrap)


def rated_score_rows(rated, rating_set: str | None = None, metrics: Sequence[str] | None = None, *,
                     ceiling: bool = True) -> tuple[np.ndarray, list[str]]:
    """The rows :func:`evaluate_rated` scores.

    Parameters
    ----------
    rated : RatedSet
        The gold set.
    rating_set : str, optional
        The gold rating set (default: the set's default).
    metrics : sequence of str, optional
        Metric columns (default: all).
    ceiling : bool, default True
        Put the ``human:OTHER`` rows (other faithfulness rating sets' means) first.

    Returns
    -------
    scores : numpy.ndarray
        (k, n) scores.
    names : list of str
        Their names.

    Raises
    ------
    InputError
        If there is no row at all, or the rating set or a metric is unknown.
    """
    rs = rated.check_rating_set(rating_set)
    names = list(rated.metrics if metrics is None else metrics)
    x = rated.score_matrix(names) if names else np.zeros((0, len(rated)))
    if ceiling:
        others = [o for o in rated.rating_sets if o != rs and o in _faithfulness_sets(rated)]
        if others:
            x = np.vstack([np.stack([rated.human(o) for o in others]), x])
            names = [f"human:{o}" for o in others] + names
    if not names:
        raise InputError(f"rated set {rated.name!r} has no metric scores: add a scores file (image_id and one "
                         "column per metric)")
    return x, names


def _faithfulness_sets(rated) -> list[str]:
    """Rating sets that rate faithfulness (a set's gold.json may list others under ``not_faithfulness``)."""
    skip = set(rated.meta.get("not_faithfulness", []))
    return [s for s in rated.rating_sets if s not in skip]


def leave_one_rater_out(rated, rating_set: str | None = None, *, kendall_variant: str = "b") -> dict:
    """The human ceiling from one rating set alone: each rating against the mean of the image's other ratings.

    Every rating of an image with at least two ratings is paired with the mean of that image's *other*
    ratings, pooled over images (a single rater against the rest, as a metric would be against the
    raters).

    Parameters
    ----------
    rated : RatedSet
        The gold set.
    rating_set : str, optional
        The rating set (default: the set's default).
    kendall_variant : {'b', 'c'}, default 'b'
        The tau variant.

    Returns
    -------
    dict
        ``n`` (rating-vs-rest pairs), ``spearman``, ``kendall``, ``pearson`` (point values, no
        interval).

    Raises
    ------
    InputError
        If the rating set is unknown.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.humaneval import leave_one_rater_out
    >>> res = leave_one_rater_out(load_gold("tifa160", answers=False))
    >>> res["n"], round(res["spearman"], 3)
    (3995, 0.783)
    """
    rs = rated.check_rating_set(rating_set)
    sub = rated.ratings[rated.ratings["rating_set"] == rs]
    g = sub.groupby("image_id")["rating"]
    total = g.transform("sum").to_numpy(np.float64)
    count = g.transform("size").to_numpy(np.float64)
    r = sub["rating"].to_numpy(np.float64)
    keep = count >= 2
    rest = (total[keep] - r[keep]) / (count[keep] - 1)
    return {"n": int(keep.sum()), "spearman": spearman(r[keep], rest),
            "kendall": kendall(r[keep], rest, kendall_variant), "pearson": pearson(r[keep], rest)}
