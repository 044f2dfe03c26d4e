"""A rated set's leaderboard by Gecko's tasks (intervals, significance clusters) and one metric's scatter."""
from __future__ import annotations

import html

import numpy as np

from ....display import md_text
from ....errors import InputError
from ..common import interval_text
from .sets import OWN_MARK, TASKS, own_result, rated, result, session_rated, shared_once


#: the pooled statistic each task's significance clusters are formed on (the column it is sorted by)
CLUSTER_STAT = {"point-wise": "spearman", "pair-wise": "pairwise_acc"}


@shared_once
def clusters(name: str, rating_set: str, stat: str) -> dict:
    """Significance cluster per metric, with ``ts2viz humaneval --clusters``'s defaults.

    One-sided paired permutation tests, p <= 0.05, 1,000 permutations with early stopping, seed 0, no
    correction; once per process.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    stat : str
        The pooled statistic (``spearman``, ``pairwise_acc``).

    Returns
    -------
    dict of str to int
        Cluster by metric (empty for a set without shared scores).
    """
    from ....metaeval.rated import rated_score_rows
    from ....metaeval.permutation import GoldStatistic, gold_clusters

    g = rated(name)
    r = result(name, rating_set)
    if r is None:          # a set without shared scores: nothing to cluster (a session's own are not)
        return {}
    x, names = rated_score_rows(g, rating_set)
    rows = [names.index(m) for m in r.metrics]
    cl, _ = gold_clusters(r.metrics, x[rows], g.human(rating_set), g.images["prompt_id"].to_numpy(),
                          GoldStatistic.from_settings(stat, r.settings))
    return {m: int(c) for m, c in zip(r.metrics, cl.cluster)}


def board(name: str, rating_set: str, task: str, own=None):
    """The leaderboard of one task: a DataFrame of strings, best first.

    Point-wise (correlations), pair-wise (accuracy, acc_eq) or model ordering, with 95 % intervals and, for the
    first two, significance clusters; a session's own metrics marked
    :data:`~ts2viz.ui.callbacks.humaneval.sets.OWN_MARK`.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    task : str
        One of :data:`~ts2viz.ui.callbacks.humaneval.sets.TASKS`.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    pandas.DataFrame
        The table (empty with a ``metric`` column when no metric is scored).

    Raises
    ------
    InputError
        For an unknown task, set or rating set.

    Examples
    --------
    TIFA160 against the DSG raters' mean: how often each metric orders two T2I models as the raters do (the
    other rating set's raters first, as the human ceiling):

    >>> t = board("tifa160", "dsg", "model ordering")
    >>> list(t.columns), t.iloc[0].tolist()
    (['metric', 'model pairs agreeing', 'τ of model means [95%]'], ['human:tifa', '90%', '1.000 [0.800, 1.000]'])
    """
    import pandas as pd

    if task not in TASKS:
        raise InputError(f"unknown task {task!r}: expected one of {', '.join(TASKS)}")
    shared, mine = result(name, rating_set), own_result(name, rating_set, own)
    frames = [shared.frame()] if shared is not None else []
    if mine is not None:
        frames.append(mine.frame().assign(metric=lambda d: d["metric"] + OWN_MARK))
    if not frames:
        return pd.DataFrame({"metric": []})
    f = pd.concat(frames, ignore_index=True)
    if task == "point-wise":
        f = f.sort_values("spearman", ascending=False)
        cols = {"metric": f["metric"], "n": f["n"],
                "Spearman [95%]": [interval_text(*r) for r in f[["spearman", "spearman_lo", "spearman_hi"]].to_numpy()],
                "Kendall τ-b [95%]": [interval_text(*r) for r in f[["kendall", "kendall_lo", "kendall_hi"]].to_numpy()],
                "Pearson [95%]": [interval_text(*r) for r in f[["pearson", "pearson_lo", "pearson_hi"]].to_numpy()],
                "Spearman, per-model avg": [f"{v:.3f}" for v in f["spearman_model_avg"]]}
    elif task == "pair-wise":
        f = f.sort_values("pairwise_acc", ascending=False)
        cols = {"metric": f["metric"],
                "accuracy [95%]": [interval_text(*r) for r in f[["pairwise_acc", "pairwise_acc_lo", "pairwise_acc_hi"]].to_numpy()],
                "acc_eq, tie-calibrated [95%]": [interval_text(*r) for r in
                                                 f[["pairwise_acc_eq", "pairwise_acc_eq_lo", "pairwise_acc_eq_hi"]].to_numpy()],
                "tie ε": [f"{v:.3g}" for v in f["tie_epsilon"]]}
    else:
        f = f.sort_values(["ordering_agreement", "ordering_kendall"], ascending=False)
        cols = {"metric": f["metric"],
                "model pairs agreeing": [f"{v:.0%}" if v == v else "–" for v in f["ordering_agreement"]],
                "τ of model means [95%]": [interval_text(*r) for r in
                                            f[["ordering_kendall", "ordering_kendall_lo", "ordering_kendall_hi"]].to_numpy()]}
    if task in CLUSTER_STAT:
        cl = clusters(name, rating_set, CLUSTER_STAT[task])
        cols["cluster"] = [str(cl[m]) if cl.get(m, 0) > 0 else "–" for m in f["metric"]]
    return pd.DataFrame(cols).reset_index(drop=True)


def board_note(name: str, rating_set: str, task: str, own=None) -> str:
    """The note above a task's leaderboard: the set, the gold, what the task measures and the intervals.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    task : str
        One of :data:`~ts2viz.ui.callbacks.humaneval.sets.TASKS`.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    str
        Markdown.
    """
    g = rated(name)
    r = result(name, rating_set) or own_result(name, rating_set, own)
    head = (f"**{md_text(g.meta.get('title', name))}**: {len(g)} images, {g.images['prompt_id'].nunique()} "
            f"prompts, {len(g.t2i_models)} T2I models; gold = mean of rating set {md_text(rating_set)}. ")
    if r is None:
        return head + ("No metric scores in this set (it comes with human ratings only): add a score file (below: "
                       "image_id + one column per metric) to evaluate yours.")
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
                f"{r.settings.alpha:g}); the humans order {int((h != 0).sum())} of them significantly. "
                "'model pairs agreeing': the pairs on which the metric's test gives the humans' outcome (this "
                "model better, that one, or no significant difference); 'τ of model means': Kendall's τ of "
                "the models' mean scores against their mean ratings. The two can differ: the means may rank "
                "the models exactly as the raters do (τ = 1.000) while the metric separates fewer, or other, "
                "pairs significantly than the raters do (agreeing 50%).")
    if task in CLUSTER_STAT:
        body += (f" Cluster: greedy from the top by {'Spearman' if task == 'point-wise' else 'accuracy'}, a new "
                 "cluster when a metric is worse than its cluster's best in a one-sided paired permutation test "
                 "(images' z-scored scores swapped between the two metrics), p ≤ 0.05, no correction.")
    boot = r.bootstrap
    notes = "".join(f" {n}." for n in r.interval_notes()) if task == "point-wise" else ""   # first-order ranks
    return head + body + (f" 95% intervals: {boot.n_resamples:,} bootstrap resamples of prompts." if boot else "") \
        + notes


def scatter_data(name: str, rating_set: str, metric: str, own=None):
    """Points of the scatter, NaN-free.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    metric : str
        A metric of the set (or ``human:RATING_SET``, another rating set's mean).
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    pandas.DataFrame
        ``image_id``, ``prompt``, ``t2i_model``, ``score``, ``human``.

    Raises
    ------
    InputError
        For a metric the set does not have.
    """
    import pandas as pd

    g = session_rated(name, own)
    if metric not in g.metrics and not metric.startswith("human:"):
        raise InputError(f"rated set {name!r} has no metric {metric!r}")
    x = g.human(metric.split(":", 1)[1]) if metric.startswith("human:") else g.scores[metric].to_numpy(float)
    y = g.human(rating_set)
    ok = ~(np.isnan(x) | np.isnan(y))
    return pd.DataFrame({"image_id": g.images["image_id"].to_numpy()[ok],
                         "prompt": g.images["prompt"].to_numpy()[ok] if "prompt" in g.images else "",
                         "t2i_model": g.images["t2i_model"].to_numpy()[ok], "score": x[ok], "human": y[ok]})


def scatter_figure(name: str, rating_set: str, metric: str, own=None):
    """The scatter: one point per image, x = metric score, y = mean human rating, one trace per T2I model.

    Hover shows the image id and prompt; ``customdata`` holds the image id (a click on a point shows that image:
    :func:`~ts2viz.ui.callbacks.humaneval.image.image_detail`). Built with :func:`ts2viz.figures.figure` (send it
    with ``page_plot``).

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    metric : str
        The metric.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    ts2viz.figures.PlainFigure or plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    InputError
        For a metric the set does not have.
    """
    from ....figures import figure

    pts = scatter_data(name, rating_set, metric, own)
    traces = []
    for model, sub in pts.groupby("t2i_model", sort=False):
        traces.append(dict(type="scattergl", x=sub["score"].tolist(), y=sub["human"].tolist(), mode="markers",
                           name=html.escape(str(model)), customdata=[str(i) for i in sub["image_id"]],
                           text=[f"{html.escape(str(i))}<br>{html.escape(str(p)[:80])}"
                                 for i, p in zip(sub["image_id"], sub["prompt"])],
                           hovertemplate="%{text}<br>score %{x:.3f}, human %{y:.2f}<extra>%{fullData.name}</extra>",
                           marker={"size": 6, "opacity": 0.7}))
    r = result(name, rating_set)
    if r is None or metric not in r.metrics:
        r = own_result(name, rating_set, own) or r
    i = r.metrics.index(metric) if r is not None and metric in r.metrics else None
    rho = f" (Spearman {r.point['spearman'][i]:.3f})" if i is not None else ""
    # legend under the plot: on a phone a side legend would take half the width
    return figure(traces, {"margin": {"l": 50, "r": 10, "b": 45},
                           "xaxis": {"title": {"text": html.escape(metric)}},
                           "yaxis": {"title": {"text": f"mean rating ({html.escape(rating_set)})"}},
                           "legend": {"title": {"text": "T2I model"}, "orientation": "h", "y": -0.2,
                                      "yanchor": "top"}},
                  title=f"{html.escape(metric)} against the human mean{rho}", height=480)
