"""The Human ratings tab's views as plain functions of data (testable without a browser).

Per rated set and rating set, a leaderboard of metrics by Gecko's tasks with bootstrap intervals
(:func:`board`), a scatter of one metric against the human mean coloured by T2I model
(:func:`scatter_figure`), one image's details (:func:`image_detail`) and the cross-gold ranks of the
metric families the sources share (:func:`cross_gold_table`). The tab's views are redrawn when the
rated set, rating set, task or scatter metric change (in the gold lane: a session's own metrics compute
their intervals on first drawing); a click on a scatter point shows that image.

The bundled sets and the operator's own (``app.py --gold FOLDER``, :func:`add_operator_sets`) are the
same for every visitor: computed once per process and shared. A session's uploaded score columns
(``own``: its :class:`~ts2viz.ui.state.gold_session.GoldUploads`) join them for that session only: its
metrics are evaluated on their own (same bootstrap settings, so the same prompt resamples) and their
rows added to the shared ones.
"""
from __future__ import annotations

import functools
import html
import os
import threading

import numpy as np

from ...display import md_text
from ...errors import InputError
from ...statistics.bootstrap import BootstrapSettings

#: the bundled sets the tab offers: every one the CLI has (GenAI-Bench 527 comes without metric scores: it is
#: offered for a visitor's own, its leaderboard empty until they add a score file)
GOLD_SETS = ("tifa160", "imagenhub-t2i", "genaibench-teaser", "genaibench")
#: what the leaderboard of a set without metric scores shows (a table cell)
NO_GOLD_SCORES = "No metric scores come with this rated set: add a score file (below) to evaluate your metric"
TASKS = ("point-wise", "pair-wise", "model ordering")
#: the operator's own rated sets (``app.py --gold FOLDER``), by name, in the order given
_OPERATOR: dict = {}
_OPERATOR_LOCK = threading.Lock()
#: the cross-gold view's rank intervals
CROSS_BOOTSTRAP = BootstrapSettings(1000)
#: a session's own metrics are marked so in the tables (their names are the visitor's)
OWN_MARK = " (yours)"
def shared_once(fn):
    """``fn(*args)`` computed once per arguments and process, shared by every session.

    A cache hit takes no lock. Each value has a lock of its own, held while it is computed: a click on a
    view the warm-up (:func:`warm`) is computing waits for that one computation instead of doing it again,
    and never waits behind the warm-up's other work.

    Parameters
    ----------
    fn : callable
        A function of hashable arguments.

    Returns
    -------
    callable
        The cached function; ``cache_clear()`` forgets every value.
    """
    done: dict = {}
    locks: dict = {}
    locks_lock = threading.Lock()

    @functools.wraps(fn)
    def run(*args):
        try:
            return done[args]
        except KeyError:
            pass
        with locks_lock:
            lock = locks.setdefault(args, threading.Lock())
        with lock:
            if args not in done:
                done[args] = fn(*args)
            return done[args]

    run.cache_clear = done.clear
    return run


def add_operator_sets(folders) -> list[str]:
    """Load the operator's rated-set folders (``app.py --gold``) and offer them in the tab.

    Parameters
    ----------
    folders : iterable of str or os.PathLike
        Rated-set folders (``images.csv``, ``ratings.csv``, ...).

    Returns
    -------
    list of str
        Their names (a folder's ``gold.json`` name or the folder name).

    Raises
    ------
    InputError
        For a folder that does not load, a bundled set's name, or two sets with one name.
    """
    from ...gold import BUNDLED, load_gold

    names = []
    for folder in folders:
        g = load_gold(os.fspath(folder))
        if g.name in BUNDLED:
            raise InputError(f"rated set name {g.name!r} is a bundled set's; give the folder another name "
                             "(or a \"name\" in its gold.json)", file=folder)
        with _OPERATOR_LOCK:
            if g.name in _OPERATOR:
                raise InputError(f"two rated sets are named {g.name!r}", file=folder)
            _OPERATOR[g.name] = g
        names.append(g.name)
    return names


def remove_operator_sets(names) -> None:
    """Stop offering some of the operator's sets (tests; an app process keeps them for its life).

    Parameters
    ----------
    names : iterable of str
        The sets' names.
    """
    with _OPERATOR_LOCK:
        for n in names:
            _OPERATOR.pop(n, None)
    rated.cache_clear()
    result.cache_clear()


def gold_sets() -> list[str]:
    """The rated sets the tab offers: the bundled ones, then the operator's.

    Returns
    -------
    list of str
        Their names.
    """
    with _OPERATOR_LOCK:
        return list(GOLD_SETS) + list(_OPERATOR)


def check_gold(name: str) -> str:
    """A rated set's name, checked.

    Parameters
    ----------
    name : str
        The name.

    Returns
    -------
    str
        ``name``.

    Raises
    ------
    InputError
        For a set the tab does not offer.
    """
    if name not in gold_sets():
        raise InputError(f"unknown rated set {name!r}: expected one of {', '.join(gold_sets())}")
    return name


@functools.lru_cache(maxsize=None)
def rated(name: str):
    """A rated set, loaded once per process.

    Parameters
    ----------
    name : str
        The rated set's name.

    Returns
    -------
    ts2viz.gold.RatedSet
        The set.

    Raises
    ------
    InputError
        For a set the tab does not offer.
    """
    from ...gold import load_gold

    check_gold(name)
    with _OPERATOR_LOCK:
        own = _OPERATOR.get(name)
    return own if own is not None else load_gold(name)


def session_rated(name: str, own=None):
    """The rated set as a session sees it: with its uploaded score columns, if any.

    Parameters
    ----------
    name : str
        The rated set's name.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    ts2viz.gold.RatedSet
        The set.
    """
    g = rated(name)
    if not own or not own.metrics(name):
        return g
    return own.memo(("rated", name, own.version), lambda: g.with_scores(own.columns[name]))


def own_result(name: str, rating_set: str, own=None):
    """The session's own metrics evaluated on a set.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    ts2viz.metaeval.humaneval.HumanEval or None
        The evaluation; ``None`` when the session uploaded no metric for the set.

    Raises
    ------
    InputError
        For an unknown set or rating set.
    """
    from ...metaeval.humaneval import evaluate_rated

    if not own or not own.metrics(name):
        return None
    result(name, rating_set)          # checks the rating set (and shares the settings below)
    return own.memo(("result", name, rating_set, own.version),
                    lambda: evaluate_rated(session_rated(name, own), rating_set=rating_set,
                                           metrics=own.metrics(name), ceiling=False))


def metrics_of(name: str, rating_set: str, own=None) -> list[str]:
    """The metrics the scatter may show: the shared ones (human ceilings included), then the session's.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    list of str
        The metric names.
    """
    r = result(name, rating_set)
    return (list(r.metrics) if r is not None else []) + (own.metrics(name) if own else [])


def rating_sets(name: str) -> list[str]:
    """The rating sets of a set that measure faithfulness (the rating-set picker).

    Parameters
    ----------
    name : str
        The rated set's name.

    Returns
    -------
    list of str
        Their names (those the set's metadata marks ``not_faithfulness`` left out).
    """
    g = rated(name)
    skip = set(g.meta.get("not_faithfulness", []))
    return [s for s in g.rating_sets if s not in skip]


@shared_once
def result(name: str, rating_set: str):
    """The shared metrics of a set evaluated against one rating set (once per process).

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.

    Returns
    -------
    ts2viz.metaeval.humaneval.HumanEval or None
        The evaluation; ``None`` for an operator's set without ``scores.csv`` (only a visitor's uploads are
        evaluated then).

    Raises
    ------
    InputError
        For an unknown set or rating set.
    """
    from ...metaeval.humaneval import evaluate_rated

    g = rated(name)
    if rating_set not in rating_sets(name):
        raise InputError(f"rated set {name!r} has no rating set {rating_set!r}")
    if not g.metrics:       # an operator's set without scores.csv: only a visitor's uploads are evaluated
        return None
    return evaluate_rated(g, rating_set=rating_set)


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
    from ...metaeval.humaneval import rated_score_rows
    from ...statistics.gold_permutation import GoldStatistic, gold_clusters

    g = rated(name)
    r = result(name, rating_set)
    if r is None:          # a set without shared scores: nothing to cluster (a session's own are not)
        return {}
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


def board(name: str, rating_set: str, task: str, own=None):
    """The leaderboard of one task: a DataFrame of strings, best first.

    Point-wise (correlations), pair-wise (accuracy, acc_eq) or model ordering, with 95 % intervals and,
    for the first two, significance clusters; a session's own metrics marked :data:`OWN_MARK`.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    task : str
        One of :data:`TASKS`.
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


def board_note(name: str, rating_set: str, task: str, own=None) -> str:
    """The note above a task's leaderboard: the set, the gold, what the task measures and the intervals.

    Parameters
    ----------
    name : str
        The rated set's name.
    rating_set : str
        The rating set whose mean is the gold.
    task : str
        One of :data:`TASKS`.
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

    Hover shows the image id and prompt; ``customdata`` holds the image id (a click on a point shows that
    image: :func:`image_detail`). Built with :func:`ts2viz.figures.figure` (send it with ``page_plot``).

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
    from ...figures import figure

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


@shared_once
def _cross_long():
    from ...gold.crossgold import cross_gold

    return cross_gold(bootstrap=CROSS_BOOTSTRAP)


def cross_gold_table(own=None):
    """Metric families x gold standards: ``rank [low–high] (value)``, one row per family.

    A session's own metrics join as rows ``NAME (yours)`` on the sets it uploaded them for, ranked with the
    shared families of that set (the set's column is recomputed for that session).

    Parameters
    ----------
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.

    Returns
    -------
    pandas.DataFrame
        ``metric family`` and one column per ``gold:statistic``.
    """
    from ...gold.crossgold import CROSS_NAMES, rated_rank_rows

    t = _cross_long()
    if own:
        import pandas as pd

        def build():
            parts = [t]
            for name in own.columns:
                g = session_rated(name, own)
                labels = {c: l for c, l in CROSS_NAMES.get(name, {}).items() if c in g.metrics}
                labels.update({m: m + OWN_MARK for m in own.metrics(name)})
                parts = [p[p["gold"] != f"{name}:spearman"] for p in parts]
                parts.append(pd.DataFrame(rated_rank_rows(g, labels, bootstrap=CROSS_BOOTSTRAP)))
            return pd.concat(parts, ignore_index=True)

        t = own.memo(("cross", own.version), build)
    return _cross_wide(t)


def cross_gold_shown(table):
    """The cross-gold table with headers for people.

    ``ts2:ord_avg`` -> ``TS2 Ord avg``, ``tifa160:spearman`` -> ``tifa160 Spearman`` (the table
    :func:`cross_gold_table` returns keeps the ``gold:statistic`` names).

    Parameters
    ----------
    table : pandas.DataFrame
        What :func:`cross_gold_table` returns.

    Returns
    -------
    pandas.DataFrame
        The renamed table.
    """
    from ...display import column_label

    def label(c: str) -> str:
        gold, sep, stat = str(c).partition(":")
        if not sep:
            return str(c)
        return f"{'TS2' if gold == 'ts2' else gold} {column_label(stat) if stat != 'spearman' else 'Spearman'}"

    return table.rename(columns={c: label(c) for c in table.columns})


def _cross_wide(t):
    t = t.assign(cell=[f"{int(r)} [{lo:g}–{hi:g}] ({v:.3f})" for r, lo, hi, v in
                       t[["rank", "rank_lo", "rank_hi", "value"]].to_numpy()])
    wide = t.pivot(index="label", columns="gold", values="cell").fillna("–")
    order = ["ts2:ord_avg", "ts2:sep_avg"] + [c for c in wide.columns if not c.startswith("ts2:")]
    wide = wide[[c for c in order if c in wide.columns]]
    return wide.reset_index().rename(columns={"label": "metric family"})


def answers_metric(g, metric: str | None) -> str | None:
    """The answer-based QA metric whose per-question answers an image's details show.

    Parameters
    ----------
    g : ts2viz.gold.RatedSet
        The rated set.
    metric : str or None
        The scatter's metric.

    Returns
    -------
    str or None
        ``metric`` when it is one (``dsg:PaLI-17B``, ``vq2a:InstructBLIP``, ...), else the set's first
        such metric; ``None`` when the set has no released answers.
    """
    from ...gold.answers import answer_metric

    names = [m for m in g.metrics if answer_metric(m) is not None]
    if metric in names:
        return metric
    return names[0] if names else None


def answers_table(g, image_id: str, metric: str):
    """One image's released answers behind a QA metric, in the Questions tab's question table.

    The records of :func:`ts2viz.gold.answers.answer_records` through
    :func:`ts2viz.qa.views.image_question_table` (with the metric's own accumulation: DSG's ``counts``
    column is what its score averages) and :func:`ts2viz.ui.callbacks.questions.image.display_table`, the code
    the Questions tab uses.

    Parameters
    ----------
    g : ts2viz.gold.RatedSet
        The rated set.
    image_id : str
        The image.
    metric : str
        The QA metric (``dsg:PaLI-17B``).

    Returns
    -------
    pandas.DataFrame
        The table (``attrs["metric"]`` names the metric); empty when the image has none.
    """
    import pandas as pd

    from ...gold.answers import answer_records
    from ...qa.views import image_question_table
    from .questions.image import display_table

    recs, kind, accumulation = answer_records(g, metric, image_id)
    if not len(recs):
        out = pd.DataFrame()
    else:
        out = display_table(kind, image_question_table(recs, image_id, metric=metric, accumulation=accumulation))
    out.attrs["metric"] = metric
    return out


def image_detail(name: str, image_id: str, own=None, metric: str | None = None):
    """What the page shows for one image of a rated set: a click on a scatter point (or an id typed).

    Parameters
    ----------
    name : str
        The rated set's name.
    image_id : str
        The image.
    own : ts2viz.ui.state.gold_session.GoldUploads or None, default None
        The session's uploaded score columns.
    metric : str or None, default None
        The scatter's metric (whose answers to show, if it is a QA metric).

    Returns
    -------
    markdown : str
        The prompt, T2I model and every rating (by rating set and rater), texts escaped.
    scores : pandas.DataFrame
        Each metric's score, the session's own first and marked.
    answers : pandas.DataFrame
        The released per-question VQA answers behind ``metric`` (or, when it is not a QA metric, the set's
        first: :func:`answers_metric`) in the Questions tab's question table (:func:`answers_table`; empty
        where the set has no answers).
    image_path : str or None
        The image file when the operator's folder names one that exists inside it (else ``None``: the page
        shows a placeholder with the image id; the bundled sets have no pixels).

    Raises
    ------
    InputError
        For no image id, or one the set does not have.
    """
    import pandas as pd

    g = session_rated(name, own)
    iid = str(image_id or "").strip()
    hit = np.flatnonzero(g.images["image_id"].to_numpy() == iid) if iid else []
    if not len(hit):
        raise InputError(f"rated set {name} has no image with that id" if iid else "click a point of the scatter")
    i = int(hit[0])
    row = g.images.iloc[i]
    lines = [f"**Image** {md_text(iid)} of **{md_text(name)}**", "",
             f"**Prompt:** {md_text(g.prompt_text(iid)) or '_(no text)_'}", "",
             f"**T2I model:** {md_text(row['t2i_model'])}", ""]
    r = g.ratings[g.ratings["image_id"] == iid]
    for rs, sub in r.groupby("rating_set", sort=False):
        each = ", ".join(f"{md_text(a)}: {v:g}" for a, v in zip(sub["rater"], sub["rating"]))
        lines.append(f"**Ratings {md_text(rs)}** (mean {sub['rating'].mean():.2f}): {each}")
        lines.append("")
    if r.empty:
        lines.append("_No rating._")
    mine = set(own.metrics(name)) if own else set()
    vals = g.scores.iloc[i] if len(g.scores.columns) else pd.Series(dtype=float)
    vals = vals[[m for m in vals.index if m in mine] + [m for m in vals.index if m not in mine]]   # yours first
    scores = pd.DataFrame({"metric": [m + OWN_MARK if m in mine else m for m in vals.index],
                           "score": ["–" if v != v else f"{v:.4g}" for v in vals.to_numpy(float)]})
    shown = answers_metric(g, metric)
    answers = answers_table(g, iid, shown) if shown is not None else pd.DataFrame()
    path = None
    src = str(row.get("path", "") or "")
    if src and g.source is not None:
        base = os.path.realpath(g.source)
        full = os.path.realpath(os.path.join(base, src))
        # only a file inside the operator's folder (a path in images.csv cannot point elsewhere)
        if os.path.commonpath([full, base]) == base and os.path.isfile(full):
            path = full
    return "\n".join(lines), scores, answers, path


def warm(names=None) -> None:
    """Compute the tab's shared views ahead of the first visitor (the app starts it in the background).

    The first view a visitor sees first (the first set's default rating set, point-wise, and the
    cross-gold ranks), then every rating set and task of every set: each click of the tab then finds its
    view computed (issue 40 item 15: the tab's first open took 13.5 s, imagenhub-t2i 9.7 s). A click on a
    view still being computed waits for that computation (:func:`shared_once`), never repeats it.

    Parameters
    ----------
    names : sequence of str or None, default None
        The rated sets (``None``: every set the tab offers).
    """
    names = list(gold_sets() if names is None else names)
    if not names:
        return
    first = rated(names[0]).default_rating_set
    board(names[0], first, TASKS[0])
    _cross_long()
    for name in names:
        for rs in rating_sets(name):
            for task in TASKS:
                board(name, rs, task)


def placeholder_html(image_id: str | None) -> str:
    """The image's place when the set has no pixels for it: a box with the image id.

    Parameters
    ----------
    image_id : str or None
        The image (``None``: a hint to click a point).

    Returns
    -------
    str
        HTML (the id escaped).
    """
    from ...display import html_text

    text = html_text(image_id) if image_id else "click a point of the scatter"
    return (f"<div class='gold-image-placeholder' style='border:1px dashed #999;border-radius:6px;padding:24px 8px;"
            f"text-align:center;max-width:320px;word-break:break-all;color:#666'>no image bundled<br>"
            f"<code>{text}</code></div>")
