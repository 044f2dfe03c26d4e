"""Cross-gold view: the same metric families ranked on each gold standard, with rank intervals.

The gold standards are TS2 (Ord, Sep), TIFA160, ImagenHub and GenAI-Bench; the view shows where a
metric's standing changes with the slice.

The bundled sources name their metrics differently and computed them with different code and model
versions; :data:`CROSS_NAMES` maps each source's column to a shared label only where the family and
its VQA / judge model match (e.g. TS2's ``DSG-mPLUG`` and TIFA160's ``dsg:mPLUG-large``). A label
means "the same metric family with the same backbone", not bit-identical scores.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .statistics.bootstrap import BootstrapSettings

#: per source: its metric column -> the shared label
CROSS_NAMES: dict[str, dict[str, str]] = {
    "ts2": {"CLIPScore": "CLIPScore", "TIFA-mPLUG": "TIFA-mPLUG", "DSG-mPLUG": "DSG-mPLUG",
            "DSG-InstructBLIP": "DSG-InstructBLIP", "VIEScore": "VIEScore-GPT4V"},
    "tifa160": {"clipscore_vitb32": "CLIPScore", "tifa_mplug-large": "TIFA-mPLUG", "dsg:mPLUG-large": "DSG-mPLUG",
                "dsg:InstructBLIP": "DSG-InstructBLIP"},
    "imagenhub-t2i": {"clipscore": "CLIPScore", "viescore_sc:gpt4v_0shot": "VIEScore-GPT4V"},
    "genaibench-teaser": {"clipscore": "CLIPScore", "vqascore_clip_flant5": "VQAScore"},
}


def ranks_over_resamples(values: np.ndarray, samples: np.ndarray, confidence: float):
    """Rank of each of k metrics, and the percentile interval of its rank over resamples.

    Parameters
    ----------
    values : numpy.ndarray
        (k,) the metrics' values, higher better.
    samples : numpy.ndarray
        (k, B) their resampled values.
    confidence : float
        Two-sided level of the interval.

    Returns
    -------
    rank : numpy.ndarray
        (k,) rank on ``values`` (1 = best; ties by position).
    low : numpy.ndarray
        (k,) the lower quantile of the resampled ranks (linear interpolation).
    high : numpy.ndarray
        (k,) the upper quantile.

    Notes
    -----
    NaN policy: NaN values rank last.

    Examples
    --------
    >>> import numpy as np
    >>> from ts2viz.crossgold import ranks_over_resamples
    >>> rank, low, high = ranks_over_resamples(np.array([0.3, 0.5, np.nan]),
    ...                                        np.array([[0.3, 0.6], [0.5, 0.4], [0.1, 0.2]]), 0.95)
    >>> rank.tolist(), low.tolist(), high.tolist()
    ([2, 1, 3], [1.025, 1.025, 3.0], [1.975, 1.975, 3.0])
    """
    def rank(v):
        v = np.where(np.isnan(v), -np.inf, v)
        order = np.argsort(-v, axis=0, kind="stable")
        r = np.empty_like(order)
        np.put_along_axis(r, order, np.arange(1, v.shape[0] + 1)[:, None] if v.ndim == 2 else np.arange(1, v.size + 1),
                          axis=0)
        return r

    point = rank(values)
    rs = rank(samples).astype(np.float64)
    a = (1.0 - confidence) / 2.0
    return point, np.quantile(rs, a, axis=1), np.quantile(rs, 1 - a, axis=1)


def rated_rank_rows(g, labels: dict[str, str], *, stat: str = "spearman",
                    bootstrap: BootstrapSettings = BootstrapSettings(1000)) -> list[dict]:
    """Rows of :func:`cross_gold` for one rated set.

    Parameters
    ----------
    g : RatedSet
        The gold set (its name names the rows' gold).
    labels : dict[str, str]
        Its metric column -> the shared label.
    stat : str, default "spearman"
        The statistic that ranks the metrics (one of
        :data:`ts2viz.metaeval.prompt_bootstrap.INTERVAL_STATS`).
    bootstrap : BootstrapSettings, default BootstrapSettings(1000)
        Resampling settings for the rank intervals.

    Returns
    -------
    list of dict
        One per metric of ``labels`` that ``g`` has, ranked among themselves: ``label``, ``gold``
        (``NAME:stat``), ``metric``, ``value``, ``rank``, ``rank_lo``, ``rank_hi``. Empty when ``g`` has
        none of them.
    """
    from .metaeval.rated import evaluate_rated

    cols = [c for c in labels if c in g.metrics]
    if not cols:
        return []
    res = evaluate_rated(g, metrics=cols, ceiling=False, bootstrap=bootstrap)
    point, lo, hi = ranks_over_resamples(res.point[stat], res.samples[stat], bootstrap.confidence)
    return [{"label": labels[c], "gold": f"{g.name}:{stat}", "metric": c, "value": float(res.point[stat][i]),
             "rank": int(point[i]), "rank_lo": float(lo[i]), "rank_hi": float(hi[i])} for i, c in enumerate(cols)]


def cross_gold(golds: Sequence[str] = ("tifa160", "imagenhub-t2i", "genaibench-teaser"), *, stat: str = "spearman",
               ts2: bool = True, bootstrap: BootstrapSettings = BootstrapSettings(1000)):
    """The cross-gold table: each labelled metric's value and rank on every gold standard.

    Parameters
    ----------
    golds : sequence of str, default ("tifa160", "imagenhub-t2i", "genaibench-teaser")
        Bundled rated sets.
    stat : str, default "spearman"
        The statistic on the rated sets.
    ts2 : bool, default True
        Add TS2's average Ord and Sep (bundled scores, the paper's policy).
    bootstrap : BootstrapSettings, default BootstrapSettings(1000)
        Resampling settings for the rank intervals (prompts for the rated sets, SEGs for TS2).

    Returns
    -------
    pandas.DataFrame
        Long table: ``label``, ``gold`` (``ts2:ord_avg``, ``ts2:sep_avg``, ``tifa160:spearman``, ...),
        ``metric`` (the source's column), ``value``, ``rank``, ``rank_lo``, ``rank_hi`` (among the
        labels that source has).

    Raises
    ------
    InputError
        If a gold name is unknown.
    """
    import pandas as pd

    from .gold.bundled import load_gold

    rows = []
    for name in golds:
        rows += rated_rank_rows(load_gold(name), CROSS_NAMES.get(name, {}), stat=stat, bootstrap=bootstrap)
    if ts2:
        from .dataset import load_dataset
        from .metametrics.results import compute
        from .scores import bundled_scores
        from .metametrics.intervals import bootstrap as seg_bootstrap
        from .metametrics.ranks import rank_intervals

        cols = list(CROSS_NAMES["ts2"])
        mm = compute(load_dataset("ts2"), bundled_scores(), cols, policy="paper")
        boot = seg_bootstrap(mm, n_resamples=bootstrap.n_resamples, confidence=bootstrap.confidence,
                             seed=bootstrap.seed)
        lb = mm.leaderboard().set_index("metric")
        for cell in ("ord_avg", "sep_avg"):
            ri = rank_intervals(mm, cell, boot=boot).frame().set_index("metric")
            for c in cols:
                rows.append({"label": CROSS_NAMES["ts2"][c], "gold": f"ts2:{cell}", "metric": c,
                             "value": float(lb.loc[c, cell]), "rank": int(ri.loc[c, "rank"]),
                             "rank_lo": float(ri.loc[c, "low"]), "rank_hi": float(ri.loc[c, "high"])})
    return pd.DataFrame(rows, columns=["label", "gold", "metric", "value", "rank", "rank_lo", "rank_hi"])
