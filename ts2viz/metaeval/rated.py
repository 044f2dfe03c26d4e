"""Gecko's tasks on a rated set: its score rows, the human rows beside them, the leave-one-rater-out ceiling.

The rated set is a :class:`ts2viz.gold.model.RatedSet`.

:func:`evaluate_rated` lays a rated set out for :func:`ts2viz.metaeval.humaneval.evaluate` (its metrics'
scores, the mean human rating per image, prompts and T2I models) and adds the human rows;
:func:`leave_one_rater_out` is the inter-rater ceiling. Pure numpy.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..statistics.bootstrap import DEFAULTS, BootstrapSettings
from ..statistics.correlation import kendall, pearson, spearman
from .humaneval import HumanEval, evaluate
from .humaneval_settings import HumanEvalSettings


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
    >>> from ts2viz.metaeval.rated import evaluate_rated
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
    >>> from ts2viz.metaeval.rated import leave_one_rater_out
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
