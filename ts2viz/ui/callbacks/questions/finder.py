"""The failure finder by questions: SEGs ranked by how many of their errors no question notices."""
from __future__ import annotations

from ....errors import InputError
from ....qa.views import rank_segs_by_questions
from ..common import ALL, mark_columns
from ...state.app_state import AppView
from .nodes import CATCH_DROP, checked_value, default_value
from .sources import all_records, qa_metrics, source_of


#: rows of the question-level failure finder
FINDER_ROWS = 50


def finder_metric(app: AppView, metric, metric_b=None) -> str:
    """The metric the failure finder ranks by questions: metric A if it has questions, else metric B.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str or None
        Metric A.
    metric_b : str or None, default None
        Metric B.

    Returns
    -------
    str
        The question metric.

    Raises
    ------
    InputError
        When neither has per-question details.
    """
    got = qa_metrics(app, [metric, metric_b])
    if not got:
        raise InputError("ranking by questions needs a question metric as 'Metric' or 'Compare with' (a bundled "
                         "TIFA-/DSG- column, or a TIFA, DSG, Gecko or T2I-FineEval metric scored live)")
    return got[0]


def question_finder(app: AppView, metric, partition: str = ALL, value: str | None = None,
                    min_drop: float = CATCH_DROP, limit: int = FINDER_ROWS):
    """SEGs ranked by how many of their errors no question of a metric notices, worst first.

    :func:`ts2viz.qa.views.rank_segs_by_questions`; the failure finder with "Questions" as its statistic.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    partition : str, default ALL
        A partition, or all.
    value : str or None, default None
        What a question's value is (default: the metric's first,
        :func:`~ts2viz.ui.callbacks.questions.nodes.value_choices`).
    min_drop : float, default CATCH_DROP
        A question catches an edge's error when its value drops at least this much along it.
    limit : int, default FINDER_ROWS
        The most rows.

    Returns
    -------
    pandas.DataFrame
        ``SEG`` (click opens it), ``missed`` (edges along which no question's value drops by
        ``min_drop``), ``of`` (the SEG's edges), ``drop`` (mean over edges of the largest drop of any
        question; a fraction, shown x100), ``worst edge``, ``question`` (the question dropping most along
        it), ``partition``, ``prompt``.

    Raises
    ------
    InputError
        For a metric without per-question details, or a value it does not offer.
    """
    import pandas as pd

    src = source_of(app, metric)
    value = default_value(app, metric) if value in (None, "") else checked_value(app, metric, value)
    seg_ids = None
    if partition not in (None, "", ALL):
        seg_ids = [s.id for s in app.dataset if s.partition == partition]

    def build():
        recs = all_records(app, src.metric)
        if not len(recs):
            return None
        return rank_segs_by_questions(recs, app.dataset, metric=src.metric, seg_ids=seg_ids, min_drop=min_drop,
                                      value=value, accumulation=src.accumulation or "gated")

    ranked = app.memo(("qa_finder", src.metric, partition, value, min_drop), [src.metric], build)
    cols = ["SEG", "missed", "of", "drop", "worst edge", "question", "partition", "prompt"]
    if ranked is None or not len(ranked):
        return mark_columns(pd.DataFrame(columns=cols), x100=["drop"])
    r = ranked.head(limit)
    df = pd.DataFrame({"SEG": r["seg_id"].astype(int), "missed": r["missed_edges"].astype(int),
                       "of": r["n_edges"].astype(int), "drop": r["mean_best_drop"],
                       "worst edge": r["worst_edge"].str.replace("->", "→", regex=False),
                       "question": r["worst_edge_best_question"], "partition": r["partition"],
                       "prompt": [app.dataset[int(s)].prompt for s in r["seg_id"]]})
    return mark_columns(df.reset_index(drop=True), x100=["drop"])


def question_finder_on_screen(table):
    """The question finder as the explorer's narrow sidebar shows it.

    SEG, edges missed ("2 of 5"), prompt and the worst edge's best question (the CSV keeps every column of
    :func:`question_finder`).

    Parameters
    ----------
    table : pandas.DataFrame
        What :func:`question_finder` returns.

    Returns
    -------
    pandas.DataFrame
        The shown table.
    """
    import pandas as pd

    missed = [f"{int(m)} of {int(n)}" for m, n in zip(table["missed"], table["of"])]
    return pd.DataFrame({"SEG": table["SEG"].to_numpy(), "missed": missed, "prompt": table["prompt"].to_numpy(),
                         "question": table["question"].to_numpy()})
