"""The Human ratings tab's views as plain functions of data (testable without a browser).

Bundled rated sets only (the same for every visitor: computed once per process and shared):
per set and rating set, a leaderboard of metrics by Gecko's tasks with bootstrap intervals
(:func:`board`), a scatter of one metric against the human mean coloured by T2I model
(:func:`scatter_figure`), and the cross-gold ranks of the metric families the sources share
(:func:`cross_gold_table`).
"""
from __future__ import annotations

import functools
import html

import numpy as np

from ..errors import InputError

#: the sets the tab offers (GenAI-Bench 527 has no released metric scores)
GOLD_SETS = ("tifa160", "imagenhub-t2i", "genaibench-teaser")
TASKS = ("point-wise", "pair-wise", "model ordering")


def check_gold(name: str) -> str:
    if name not in GOLD_SETS:
        raise InputError(f"unknown rated set {name!r}: expected one of {', '.join(GOLD_SETS)}")
    return name


@functools.lru_cache(maxsize=None)
def rated(name: str):
    from ..gold import load_gold

    return load_gold(check_gold(name))


def rating_sets(name: str) -> list[str]:
    g = rated(name)
    skip = set(g.meta.get("not_faithfulness", []))
    return [s for s in g.rating_sets if s not in skip]


@functools.lru_cache(maxsize=None)
def result(name: str, rating_set: str):
    from ..metaeval.humaneval import evaluate_rated

    g = rated(name)
    if rating_set not in rating_sets(name):
        raise InputError(f"rated set {name!r} has no rating set {rating_set!r}")
    return evaluate_rated(g, rating_set=rating_set)


#: the pooled statistic each task's significance clusters are formed on (the column it is sorted by)
CLUSTER_STAT = {"point-wise": "spearman", "pair-wise": "pairwise_acc"}


@functools.lru_cache(maxsize=None)
def clusters(name: str, rating_set: str, stat: str) -> dict:
    """Significance cluster per metric (``ts2viz humaneval --clusters`` defaults: one-sided paired
    permutation tests, p <= 0.05, 1,000 permutations with early stopping, seed 0, no correction)."""
    from ..metaeval.humaneval import rated_score_rows
    from ..significance.gold import GoldStatistic, gold_clusters

    g = rated(name)
    r = result(name, rating_set)
    x, names = rated_score_rows(g, rating_set)
    rows = [names.index(m) for m in r.metrics]
    cl, _ = gold_clusters(r.metrics, x[rows], g.human(rating_set), g.images["prompt_id"].to_numpy(),
                          GoldStatistic.from_settings(stat, r.settings))
    return {m: int(c) for m, c in zip(r.metrics, cl.cluster)}


def _ci(v, lo, hi) -> str:
    if v != v:
        return "–"
    if lo != lo or hi != hi:
        return f"{v:.3f}"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def board(name: str, rating_set: str, task: str):
    """The leaderboard of one task: a DataFrame of strings, best first."""
    import pandas as pd

    if task not in TASKS:
        raise InputError(f"unknown task {task!r}: expected one of {', '.join(TASKS)}")
    f = result(name, rating_set).frame()
    if task == "point-wise":
        f = f.sort_values("spearman", ascending=False)
        cols = {"metric": f["metric"], "n": f["n"],
                "Spearman [95%]": [_ci(*r) for r in f[["spearman", "spearman_lo", "spearman_hi"]].to_numpy()],
                "Kendall τ-b [95%]": [_ci(*r) for r in f[["kendall", "kendall_lo", "kendall_hi"]].to_numpy()],
                "Pearson [95%]": [_ci(*r) for r in f[["pearson", "pearson_lo", "pearson_hi"]].to_numpy()],
                "Spearman, per-model avg": [f"{v:.3f}" for v in f["spearman_model_avg"]]}
    elif task == "pair-wise":
        f = f.sort_values("pairwise_acc", ascending=False)
        cols = {"metric": f["metric"],
                "accuracy [95%]": [_ci(*r) for r in f[["pairwise_acc", "pairwise_acc_lo", "pairwise_acc_hi"]].to_numpy()],
                "acc_eq, tie-calibrated [95%]": [_ci(*r) for r in
                                                 f[["pairwise_acc_eq", "pairwise_acc_eq_lo", "pairwise_acc_eq_hi"]].to_numpy()],
                "tie ε": [f"{v:.3g}" for v in f["tie_epsilon"]]}
    else:
        f = f.sort_values(["ordering_agreement", "ordering_kendall"], ascending=False)
        cols = {"metric": f["metric"],
                "model pairs agreeing": [f"{v:.0%}" if v == v else "–" for v in f["ordering_agreement"]],
                "τ of model means [95%]": [_ci(*r) for r in
                                            f[["ordering_kendall", "ordering_kendall_lo", "ordering_kendall_hi"]].to_numpy()]}
    if task in CLUSTER_STAT:
        cl = clusters(name, rating_set, CLUSTER_STAT[task])
        cols["cluster"] = [str(cl[m]) if cl.get(m, 0) > 0 else "–" for m in f["metric"]]
    return pd.DataFrame(cols).reset_index(drop=True)


def board_note(name: str, rating_set: str, task: str) -> str:
    g = rated(name)
    r = result(name, rating_set)
    head = (f"**{g.meta.get('title', name)}**: {len(g)} images, {g.images['prompt_id'].nunique()} prompts, "
            f"{len(g.t2i_models)} T2I models; gold = mean of rating set `{rating_set}`. ")
    if task == "point-wise":
        body = ("Correlation of each metric's per-image score with the mean rating; per-model average: Fisher "
                "average over the T2I models.")
    elif task == "pair-wise":
        body = ("Pairs of images of the same prompt that the raters rate differently: the fraction the metric "
                "orders as they do (a metric tie counts wrong). acc_eq: all same-prompt pairs, ties predicted "
                "within the fitted ε (Deutsch et al. 2023).")
    else:
        h = r.human_ordering.outcome[0]
        body = (f"Wilcoxon signed-rank tests over prompts for each of the {len(h)} model pairs (p < "
                f"{r.settings.alpha:g}); the humans order {int((h != 0).sum())} of them significantly.")
    if task in CLUSTER_STAT:
        body += (f" Cluster: greedy from the top by {'Spearman' if task == 'point-wise' else 'accuracy'}, a new "
                 "cluster when a metric is worse than its cluster's best in a one-sided paired permutation test "
                 "(images' z-scored scores swapped between the two metrics), p ≤ 0.05, no correction.")
    boot = r.bootstrap
    return head + body + (f" 95% intervals: {boot.n_resamples:,} bootstrap resamples of prompts." if boot else "")


def scatter_data(name: str, rating_set: str, metric: str):
    """Points of the scatter: image_id, prompt, t2i_model, score, human (NaN-free)."""
    import pandas as pd

    g = rated(name)
    if metric not in g.metrics and not metric.startswith("human:"):
        raise InputError(f"rated set {name!r} has no metric {metric!r}")
    x = g.human(metric.split(":", 1)[1]) if metric.startswith("human:") else g.scores[metric].to_numpy(float)
    y = g.human(rating_set)
    ok = ~(np.isnan(x) | np.isnan(y))
    return pd.DataFrame({"image_id": g.images["image_id"].to_numpy()[ok],
                         "prompt": g.images["prompt"].to_numpy()[ok] if "prompt" in g.images else "",
                         "t2i_model": g.images["t2i_model"].to_numpy()[ok], "score": x[ok], "human": y[ok]})


def scatter_figure(name: str, rating_set: str, metric: str):
    """One point per image, x = metric score, y = mean human rating, one trace per T2I model (its
    colour); hover shows the image id and prompt. Built with :func:`ts2viz.figures.figure` (send it
    with ``page_plot``)."""
    from ..figures import figure

    pts = scatter_data(name, rating_set, metric)
    traces = []
    for model, sub in pts.groupby("t2i_model", sort=False):
        traces.append(dict(type="scattergl", x=sub["score"].tolist(), y=sub["human"].tolist(), mode="markers",
                           name=str(model),
                           text=[f"{html.escape(str(i))}<br>{html.escape(str(p)[:80])}"
                                 for i, p in zip(sub["image_id"], sub["prompt"])],
                           hovertemplate="%{text}<br>score %{x:.3f}, human %{y:.2f}<extra>%{fullData.name}</extra>",
                           marker={"size": 6, "opacity": 0.7}))
    r = result(name, rating_set)
    i = r.metrics.index(metric) if metric in r.metrics else None
    rho = f" (Spearman {r.point['spearman'][i]:.3f})" if i is not None else ""
    # legend under the plot: on a phone a side legend would take half the width
    return figure(traces, {"margin": {"l": 50, "r": 10, "b": 45},
                           "xaxis": {"title": {"text": html.escape(metric)}},
                           "yaxis": {"title": {"text": f"mean rating ({html.escape(rating_set)})"}},
                           "legend": {"title": {"text": "T2I model"}, "orientation": "h", "y": -0.2,
                                      "yanchor": "top"}},
                  title=f"{html.escape(metric)} against the human mean{rho}", height=480)


@functools.lru_cache(maxsize=1)
def cross_gold_table():
    """Metric families x gold standards: 'rank [low–high]' (value), one row per family."""
    import pandas as pd

    from ..gold.crossgold import cross_gold
    from ..uncertainty import BootstrapSettings

    t = cross_gold(bootstrap=BootstrapSettings(1000))
    t["cell"] = [f"{int(r)} [{lo:g}–{hi:g}] ({v:.3f})" for r, lo, hi, v in
                 t[["rank", "rank_lo", "rank_hi", "value"]].to_numpy()]
    wide = t.pivot(index="label", columns="gold", values="cell").fillna("–")
    order = ["ts2:ord_avg", "ts2:sep_avg"] + [c for c in wide.columns if not c.startswith("ts2:")]
    wide = wide[[c for c in order if c in wide.columns]]
    return wide.reset_index().rename(columns={"label": "metric family"})
