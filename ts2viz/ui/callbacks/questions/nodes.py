"""One SEG's questions x nodes: each question's accuracy (or gated count) in each node, and the catches."""
from __future__ import annotations

import numpy as np

from .... import figures
from ....display import md_text, plural
from ....errors import InputError
from ....qa.details import DEPENDENT, RATING_KINDS, SOFT_KINDS
from ....qa.views import edge_question_drops, question_node_accuracy
from ..common import get_seg, mark_columns
from ...state.app_state import AppView
from .sources import QASource, qa_source, seg_records, short_name, source_of


#: what a questions x nodes cell shows: (label, value of :func:`ts2viz.qa.views.question_node_accuracy`)
VALUE_CHOICES = {"correct": "answered right (share of images)", "counted": "counts toward the score (DSG gating)",
                 "score": "question score (mean probability)"}


#: a question catches the error of an edge when its accuracy drops at least this much along it
CATCH_DROP = 0.5


def value_choices(app: AppView, metric) -> list[tuple[str, str]]:
    """The values a questions x nodes cell may show for a metric (the value picker).

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.

    Returns
    -------
    list of (str, str)
        (label, value) pairs; the judges' ratings, DSG's counting, soft scores where they apply.
    """
    src = qa_source(app, metric)
    if src is None:
        return [(VALUE_CHOICES["correct"], "correct")]
    if src.details in RATING_KINDS:
        return [("rating on [0, 1] (mean over the node's images; error count: 1 − n/9)", "score"), ("judge's reply read (share of images)", "correct")]
    vals = ["correct"]
    if src.details == DEPENDENT:
        vals.append("counted")
    if src.details in SOFT_KINDS or src.normalized:
        vals = ["score", *vals]
    return [(VALUE_CHOICES[v], v) for v in vals]


def default_value(app: AppView, metric, current=None) -> str:
    """The value picker's value after a metric change: ``current`` if the metric offers it, else its first.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    current : str or None, default None
        The picker's value now.

    Returns
    -------
    str
        The value.
    """
    vals = [v for _, v in value_choices(app, metric)]
    return current if current in vals else vals[0]


def checked_value(app: AppView, metric, value) -> str:
    """A cell value the metric's nodes table may show (:func:`value_choices`), refused otherwise.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        The question metric.
    value : str
        The value asked for.

    Returns
    -------
    str
        ``value``.

    Raises
    ------
    InputError
        For a value the metric does not offer.
    """
    vals = [v for _, v in value_choices(app, metric)]
    if value not in vals:
        raise InputError(f"a cell may show {', '.join(vals)} for {str(metric)[:60]}, not {str(value)[:20]!r}")
    return value


def node_accuracy(app: AppView, metric, seg_id, value: str = "correct"):
    """Accuracy of each question in each node of a SEG (:func:`ts2viz.qa.views.question_node_accuracy`).

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    seg_id : int or str
        The SEG.
    value : str, default "correct"
        What a cell shows (:func:`value_choices`).

    Returns
    -------
    pandas.DataFrame
        One row per question, one column per node.

    Raises
    ------
    InputError
        For a value the metric does not offer, a metric without details, or a SEG the dataset lacks.
    """
    src = source_of(app, metric)
    seg = get_seg(app, seg_id)
    value = checked_value(app, metric, value)

    def build():
        recs = seg_records(app, src.metric, seg.id)
        return question_node_accuracy(recs, seg, metric=src.metric, value=value,
                                      accumulation=src.accumulation or "gated") if len(recs) else None

    return app.memo(("qa_node_acc", src.metric, seg.id, value), [src.metric], build)


def _catches(app: AppView, src: QASource, seg, value: str) -> dict[int, str]:
    recs = seg_records(app, src.metric, seg.id)
    drops = edge_question_drops(recs, seg, metric=src.metric, value=value, accumulation=src.accumulation or "gated")
    out: dict[int, list[str]] = {}
    for r in drops.itertuples():
        if np.isfinite(r.drop) and r.drop >= CATCH_DROP:
            out.setdefault(int(r.question_id), []).append(f"{r.parent}→{r.child} (−{r.drop * 100:.0f}%)")
    return {q: ", ".join(v) for q, v in out.items()}


def node_questions(app: AppView, metric, seg_id, value: str = "correct", *, figure: bool = True) -> dict:
    """The questions x nodes view of a SEG: the Questions tab's lower part.

    Called by the tab's redraw while it is open (SEG, metric, value or figure-format changes).

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    seg_id : int or str
        The SEG.
    value : str, default "correct"
        What a cell shows (:func:`value_choices`).
    figure : bool, default True
        Build the heatmap (else ``figure`` is ``None``).

    Returns
    -------
    dict
        ``figure`` (the heatmap), ``table`` (one row per question, its number and text, its value in each
        node, fractions shown with two decimals, and ``catches``: the edges, node -> child node with more
        errors, along which its value drops by at least :data:`CATCH_DROP`) and ``note`` (Markdown).

    Raises
    ------
    InputError
        For a value the metric does not offer, a metric without details, or a SEG the dataset lacks.
    """
    import pandas as pd

    src = source_of(app, metric)
    seg = get_seg(app, seg_id)
    value = checked_value(app, metric, value)
    acc = node_accuracy(app, src.metric, seg.id, value)
    label = {"correct": "accuracy", "counted": "counted", "score": "mean score"}[value]
    if acc is None:
        note = ("No per-question details for this SEG" + ("" if src.bundled else
                                                           ": score it in the Live scoring tab first"))
        return {"figure": figures.empty_figure(note) if figure else None,
                "table": pd.DataFrame(columns=["#", "question"]), "note": note + node_errors_md(seg)}
    title = f"SEG {seg.id}: {label} of each question per node · {short_name(src.metric)}"
    fig = (figures.question_node_heatmap(acc, title=title, value_label=label, percent=value != "score")
           if figure else None)
    nodes = [c for c in acc.columns if c != "question"]
    table = pd.DataFrame({"#": acc.index.astype(int), "question": acc["question"].to_numpy()})
    for n in nodes:
        table[n] = acc[n].to_numpy(dtype=float)
    catches = _catches(app, src, seg, value)
    table["catches"] = [catches.get(int(q), "–") for q in acc.index]
    n_img = acc.attrs.get("n_images", {})
    missing = [n for n in nodes if not n_img.get(n)]
    note = (f"{plural(len(acc), 'question')} · {plural(sum(n_img.values()), 'image')} with details"
            + (f" · no details for node {', '.join(missing)}" if missing else "") + node_errors_md(seg))
    return {"figure": fig, "table": mark_columns(table, scores=nodes), "note": note}


def node_errors_md(seg) -> str:
    """The errors each node of a SEG adds relative to its parent, as Markdown to read beside the questions.

    From the dataset's ``nodes.csv``: does a question cover each error?

    Parameters
    ----------
    seg : ts2viz.seg.SEG
        The SEG.

    Returns
    -------
    str
        The Markdown; empty when no node has errors described.
    """
    described = [n for n in seg.nodes if getattr(n, "errors", ())]
    if not described:
        return ""
    return ("\n\n**Errors the nodes add**: "
            + " · ".join(f"**{md_text(n.label)}**: {md_text('; '.join(n.errors))}" for n in described))
