"""Cross-gold view: the same metric families ranked on each gold standard (TS2 Ord / Sep, TIFA160,
ImagenHub, GenAI-Bench), with rank intervals, to show where a metric's standing changes with the slice.

The bundled sources name their metrics differently and computed them with different code and model
versions; :data:`CROSS_NAMES` maps each source's column to a shared label only where the family and
its VQA / judge model match (e.g. TS2's ``DSG-mPLUG`` and TIFA160's ``dsg:mPLUG-large``). A label
means "the same metric family with the same backbone", not bit-identical scores.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..statistics.bootstrap import BootstrapSettings

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
    """Rank (1 = best, higher value better) of each of k metrics on ``values`` (k,) and the
    percentile interval of its rank over ``samples`` (k, B); NaN values rank last."""
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
    """Rows of :func:`cross_gold` for one rated set ``g``: its metrics named in ``labels`` (column ->
    shared label) ranked among themselves by ``stat`` with rank intervals (the gold is ``g.name``).
    Empty when ``g`` has none of them."""
    from ..metaeval.humaneval import evaluate_rated

    cols = [c for c in labels if c in g.metrics]
    if not cols:
        return []
    res = evaluate_rated(g, metrics=cols, ceiling=False, bootstrap=bootstrap)
    point, lo, hi = ranks_over_resamples(res.point[stat], res.samples[stat], bootstrap.confidence)
    return [{"label": labels[c], "gold": f"{g.name}:{stat}", "metric": c, "value": float(res.point[stat][i]),
             "rank": int(point[i]), "rank_lo": float(lo[i]), "rank_hi": float(hi[i])} for i, c in enumerate(cols)]


def cross_gold(golds: Sequence[str] = ("tifa160", "imagenhub-t2i", "genaibench-teaser"), *, stat: str = "spearman",
               ts2: bool = True, bootstrap: BootstrapSettings = BootstrapSettings(1000)):
    """Long table: label, gold (``ts2:ord_avg``, ``ts2:sep_avg``, ``tifa160:spearman``, ...), metric
    (the source's column), value, rank, rank_lo, rank_hi (among the labels that source has)."""
    import pandas as pd

    from .bundled import load_gold

    rows = []
    for name in golds:
        rows += rated_rank_rows(load_gold(name), CROSS_NAMES.get(name, {}), stat=stat, bootstrap=bootstrap)
    if ts2:
        from ..dataset import load_dataset
        from ..metametrics import compute
        from ..scores import bundled_scores
        from ..statistics.bootstrap import bootstrap as seg_bootstrap
        from ..statistics.rank_intervals import rank_intervals

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
