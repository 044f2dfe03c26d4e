"""Soft pairwise accuracy (SPA) of a metric's T2I-model ordering: WMT24/25's primary system-level statistic.

From mt-metrics-eval's ``pce.py`` (Thompson et al., 2024, "Improving Statistical Significance in Human
Evaluation of Automatic Metrics via Soft Pairwise Accuracy"): for every pair of systems (here T2I models) a
paired permutation test over segments (here prompts) gives the p-value of "system i is better than system
j", once from the human scores and once from the metric's; ``SPA = 1 - mean |p_human - p_metric|`` over the
pairs ``i < j``. A metric that is as sure as the humans about each pair, and no surer, scores 1.

:func:`pairwise_p_values` computes what ``pce.compute_pairwise_p_values`` computes, bit for bit: the same
``numpy.random.default_rng(seed)`` float32 draws, rounded to a 0/1 mask, the same float32 sums and the
same ``null_delta >= test_delta`` count (a fixture made by mt-metrics-eval's own code checks this). System
scores are *sums* over segments, so every system needs a score on every segment: :func:`spa_rated` keeps
the prompts where every T2I model has an image with a score and a rating.

Pure numpy (no scipy, torch or gradio).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

#: mt-metrics-eval's defaults
N_PERMUTATIONS = 1000
SEED = 4


def pairwise_p_values(seg_scores, n_permutations: int = N_PERMUTATIONS, seed: int = SEED) -> np.ndarray:
    """Paired permutation p-values of "system i > system j" for every pair i < j (``pce.py``'s).

    Parameters
    ----------
    seg_scores : array_like
        (systems, segments) scores, higher = better, no NaN.
    n_permutations : int, default 1000
        Random sign-flip permutations (shared by every pair).
    seed : int, default 4
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray
        (systems, systems): the upper triangle holds the p-values, the rest NaN.

    Raises
    ------
    ValueError
        If the scores are not 2-D or hold NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.metaeval.spa import pairwise_p_values
    >>> p = pairwise_p_values(np.array([[0.8, 0.9, 0.7, 1.0, 0.6], [0.2, 0.3, 0.1, 0.4, 0.0]]))
    >>> float(p[0, 1]) < 0.1
    True
    """
    x = np.asarray(seg_scores, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"seg_scores must be (systems, segments), got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("seg_scores hold NaN: every system needs a score on every segment")
    n_sys, n_seg = x.shape
    rng = np.random.default_rng(seed)
    m = rng.random(size=(n_permutations, n_seg), dtype=np.float32)
    np.rint(m, out=m, casting="same_kind")
    m *= 2.0
    m -= 1.0
    x = x.astype(np.float32)
    sys_scores = np.sum(x, axis=1)
    partial = np.matmul(m, x.T)                 # (permutations, systems)
    p = np.full((n_sys, n_sys), np.nan)
    for i in range(n_sys):
        for j in range(i + 1, n_sys):
            p[i, j] = np.sum(partial[:, i] - partial[:, j] >= sys_scores[i] - sys_scores[j]) / n_permutations
    return p


def soft_pairwise_accuracy(human_p, metric_p) -> float:
    """``1 - mean |p_human - p_metric|`` over the upper triangle (``pce.compute_one_minus_pce``).

    Parameters
    ----------
    human_p, metric_p : array_like
        (systems, systems) p-values of :func:`pairwise_p_values`.

    Returns
    -------
    float
        SPA in [0, 1]; NaN with fewer than 2 systems.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.metaeval.spa import soft_pairwise_accuracy
    >>> h = np.array([[np.nan, 0.01, 0.2], [np.nan, np.nan, 0.9], [np.nan] * 3])
    >>> round(soft_pairwise_accuracy(h, h), 3), round(soft_pairwise_accuracy(h, 1 - h), 3)
    (1.0, 0.207)
    """
    h, m = np.asarray(human_p, float), np.asarray(metric_p, float)
    iu = np.triu_indices(h.shape[0], 1)
    if not iu[0].size:
        return float("nan")
    return float(1.0 - np.mean(np.abs(h - m)[iu]))


def spa_rated(rated, *, rating_set: str | None = None, metrics=None, ceiling: bool = False,
              n_permutations: int = N_PERMUTATIONS, seed: int = SEED) -> pd.DataFrame:
    """SPA of every metric of a rated set: T2I models as systems, prompts as segments.

    Each cell is the mean over a prompt's images of one model (usually one image); the human score is the
    mean rating of ``rating_set``. Only prompts where every model has a rated, scored image count (the
    same prompts for the humans and every metric).

    Parameters
    ----------
    rated : ts2viz.gold.RatedSet
        The rated set.
    rating_set : str, optional
        The gold rating set (default: the set's default).
    metrics : sequence of str, optional
        Metric columns (default: all).
    ceiling : bool, default False
        Also the ``human:OTHER`` rows (other rating sets' means), as
        :func:`ts2viz.metaeval.rated.rated_score_rows` makes them.
    n_permutations : int, default 1000
        Permutations of :func:`pairwise_p_values`.
    seed : int, default 4
        Its seed (mt-metrics-eval's default).

    Returns
    -------
    pandas.DataFrame
        ``metric, spa, n_models, n_prompts, n_permutations``, one row per metric.

    Examples
    --------
    >>> from ts2viz.gold import load_gold
    >>> from ts2viz.metaeval.spa import spa_rated
    >>> spa_rated(load_gold("tifa160", answers=False), metrics=["clipscore_vitb32", "spice"]).round(3)
                 metric   spa  n_models  n_prompts  n_permutations
    0  clipscore_vitb32  0.70         5        160            1000
    1             spice  0.93         5        160            1000
    """
    from .humaneval import prompt_model_means
    from .rated import rated_score_rows

    rs = rated.check_rating_set(rating_set)
    x, names = rated_score_rows(rated, rs, metrics, ceiling=ceiling)
    prompts, pnames = pd.factorize(rated.images["prompt_id"], sort=True)
    models, mnames = pd.factorize(rated.images["t2i_model"], sort=True)
    cells = prompt_model_means(np.vstack([rated.human(rs)[None, :], x]), prompts, models, len(pnames), len(mnames))
    keep = ~np.isnan(cells).any(axis=(0, 2))            # prompts complete for the humans and every metric
    human_p = pairwise_p_values(cells[0][keep].T, n_permutations, seed)
    rows = [{"metric": name, "spa": soft_pairwise_accuracy(human_p, pairwise_p_values(cells[1 + k][keep].T,
                                                                                       n_permutations, seed)),
             "n_models": len(mnames), "n_prompts": int(keep.sum()), "n_permutations": n_permutations}
            for k, name in enumerate(names)]
    return pd.DataFrame(rows)
