"""Question-level views of a QA metric (TIFA, DSG) on a SEG dataset, as tables for the app and for users.

All functions take a QA records table (:mod:`ts2viz.qa.records`: bundled with
:func:`~ts2viz.qa.records.bundled_qa_records`, live-scored with :func:`ts2viz.engine.details.cached_qa_records` or
:func:`~ts2viz.qa.records.records_from_details`) for **one** metric and return pandas DataFrames:

* :func:`image_question_table`: one image's questions, answers, mapped choices and correctness (DSG:
  parents and whether the question counted);
* :func:`question_node_accuracy`: per SEG, the accuracy of each question in each node (which
  question catches which error along the graph);
* :func:`edge_question_drops` and :func:`rank_segs_by_questions`: per edge of a SEG (a node and a
  child node with more errors), how much each question's accuracy drops; SEGs ranked by how many of
  their edges no question notices, for the failure finder.

"Accuracy" is the share of a node's images on which a question is answered correctly (``value=
"correct"``) or counts toward the score (``value="counted"``, DSG gating applied); for records with a
``score`` column (:func:`ts2viz.qa.details.detail_records`: Gecko, T2I-FineEval, likelihood scores)
``value="score"`` averages the questions' own values instead.

The records of a live TIFA/DSG metric come back from the score cache through the engine
(:func:`ts2viz.engine.details.cached_qa_records`): question answering reads no cache and runs no model.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from .questions import DEPENDENT_KIND
from .records import with_counted

#: what the question-level views average (module docstring)
VALUES = ("correct", "counted", "score")


def _one_metric(records, metric: str | None):
    names = list(dict.fromkeys(records["metric"].astype(str)))
    if metric is None:
        if len(names) > 1:
            raise InputError(f"records hold several metrics ({', '.join(names)}): name one")
        return records, (names[0] if names else "")
    if metric not in names:
        raise InputError(f"no records for metric {metric!r} (have: {', '.join(names) or 'none'})")
    return records[records["metric"].astype(str) == metric], metric


def _with_score(records, value: str):
    """Records with a ``score`` column when ``value="score"`` asks for one.

    Records without a value of their own get 0/1 correctness as ``score``.
    """
    if value == "score" and "score" not in records.columns:
        return records.assign(score=records["correct"].astype(float))
    return records


def image_question_table(records, file_name: str, *, metric: str | None = None, accumulation: str = "gated"):
    """One image's questions, answers, mapped choices and correctness.

    Parameters
    ----------
    records : pandas.DataFrame
        QA records (:mod:`ts2viz.qa.records`).
    file_name : str
        The image.
    metric : str, optional
        Which metric of ``records``; needed only when ``records`` holds several.
    accumulation : str, default 'gated'
        DSG: the accumulation deciding ``counted`` (:mod:`ts2viz.qa.accumulation`; ``gated`` =
        ``transitive``, ``direct`` or ``mean``).

    Returns
    -------
    pandas.DataFrame
        One row per question in question-id order, columns ``question_id, question, choices (list),
        expected, answer, mapped, correct``, and for DSG also ``parents`` (list of question ids) and
        ``counted``. Empty (same columns) when the image has no records.

    Raises
    ------
    InputError
        If ``records`` holds several metrics and ``metric`` is None, if it has no records of
        ``metric``, or if ``accumulation`` is unknown.

    Examples
    --------
    The release's DSG-BLIP1 answers for one image: the root question fails, so under the default
    (transitive) accumulation no question counts, although the last one is answered correctly.

    >>> from ts2viz.qa.records import bundled_qa_records
    >>> from ts2viz.qa.views import image_question_table
    >>> recs = bundled_qa_records("DSG-BLIP1")
    >>> image_question_table(recs, "images/065-06.jpg")[["question_id", "parents", "correct", "counted"]]
       question_id parents  correct  counted
    0            0      []    False    False
    1            1     [0]    False    False
    2            2     [0]    False    False
    3            3     [0]     True    False
    >>> image_question_table(recs, "images/065-06.jpg", accumulation="mean")["counted"].tolist()
    [False, False, False, True]
    """
    import pandas as pd

    recs, _ = _one_metric(records, metric)
    sub = recs[recs["file_name"].astype(str) == str(file_name)]
    dsg = bool((sub["kind"].astype(str) == DEPENDENT_KIND).any()) if len(sub) else \
        bool((recs["kind"].astype(str) == DEPENDENT_KIND).any())
    cols = ["question_id", "question", "choices", "expected", "answer", "mapped", "correct"]
    if dsg:
        cols += ["parents", "counted"]
    if not len(sub):
        return pd.DataFrame(columns=cols)
    sub = with_counted(sub, accumulation).sort_values("question_id")
    out = pd.DataFrame({
        "question_id": sub["question_id"].astype(int).to_numpy(),
        "question": sub["question"].astype(str).to_numpy(),
        "choices": [str(c).split("|") for c in sub["choices"]],
        "expected": sub["expected"].astype(str).to_numpy(),
        "answer": sub["answer"].astype(str).to_numpy(),
        "mapped": sub["mapped"].astype(str).to_numpy(),
        "correct": sub["correct"].astype(bool).to_numpy(),
    })
    if dsg:
        out["parents"] = [[int(p) for p in str(t).split("-") if p] for t in sub["parents"]]
        out["counted"] = sub["counted"].astype(bool).to_numpy()
    return out


def _node_of(seg) -> dict[str, str]:
    return {im.file_name: n.label for n in seg.nodes for im in n.images}


def question_node_accuracy(records, seg, *, metric: str | None = None, value: str = "correct",
                           accumulation: str = "gated"):
    """Accuracy of each question in each node of a SEG.

    A value is the share of the node's images (with records) on which the question is correct
    (``value="correct"``) or counts toward the score (``value="counted"``, DSG gating applied), or the
    mean of its ``score`` (``value="score"``; 0/1 correctness for records without a ``score`` column).

    Parameters
    ----------
    records : pandas.DataFrame
        QA records (:mod:`ts2viz.qa.records`, or :func:`ts2viz.qa.details.detail_records`).
    seg : SEG
        The semantic error graph (a SEG of a :class:`ts2viz.Dataset`: nodes with labels, levels and
        images).
    metric : str, optional
        Which metric of ``records``; needed only when ``records`` holds several.
    value : {'correct', 'counted', 'score'}, default 'correct'
        What is averaged (:data:`VALUES`).
    accumulation : str, default 'gated'
        The DSG accumulation of ``value="counted"``.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``question_id``, a ``question`` column and one column per node label in the SEG's
        node order (by error count, then label); NaN for a node without records.
        ``df.attrs["n_images"]`` gives the number of images with records per node, ``df.attrs["levels"]``
        the error count per node.

    Raises
    ------
    InputError
        If ``value`` is not one of :data:`VALUES`, if ``records`` holds several metrics and ``metric``
        is None, if it has no records of ``metric``, or if ``accumulation`` is unknown.

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> from ts2viz.qa.records import bundled_qa_records
    >>> from ts2viz.qa.views import question_node_accuracy
    >>> acc = question_node_accuracy(bundled_qa_records("DSG-BLIP1"), load_dataset("ts2")[65])
    >>> acc.drop(columns="question")
                   0   1a   1b
    question_id
    0            1.0  1.0  0.0
    1            1.0  1.0  0.0
    2            1.0  0.0  0.0
    3            1.0  0.0  1.0
    >>> acc.attrs["n_images"]
    {'0': 1, '1a': 5, '1b': 5}
    """
    import pandas as pd

    if value not in VALUES:
        raise InputError(f"value must be one of {', '.join(VALUES)}, not {value!r}")
    recs, _ = _one_metric(records, metric)
    recs = _with_score(recs, value)
    node_of = _node_of(seg)
    sub = recs[recs["file_name"].astype(str).isin(node_of)]
    labels = [n.label for n in seg.nodes]
    if value == "counted":
        sub = with_counted(sub, accumulation)
    sub = sub.assign(node=sub["file_name"].astype(str).map(node_of), hit=sub[value].astype(float),
                     question_id=sub["question_id"].astype(int), question=sub["question"].astype(str))
    acc = sub.pivot_table(index="question_id", columns="node", values="hit", aggfunc="mean")
    acc = acc.reindex(columns=labels)
    text = sub.drop_duplicates("question_id").set_index("question_id")["question"]
    out = pd.concat([text.rename("question"), acc], axis=1).sort_index()
    out.columns.name = None
    counts = sub.drop_duplicates("file_name")["node"].value_counts()
    out.attrs["n_images"] = {lbl: int(counts.get(lbl, 0)) for lbl in labels}
    out.attrs["levels"] = {n.label: n.level for n in seg.nodes}
    return out


def edge_question_drops(records, seg, *, metric: str | None = None, value: str = "correct",
                        accumulation: str = "gated"):
    """Per edge of a SEG and question: the question's accuracy in both nodes and its drop.

    An edge is a pair (node, child node) of :meth:`SEG.adjacent_pairs`; the child holds more errors.
    Accuracies are those of :func:`question_node_accuracy`.

    Parameters
    ----------
    records : pandas.DataFrame
        QA records (:mod:`ts2viz.qa.records`, or :func:`ts2viz.qa.details.detail_records`).
    seg : SEG
        The semantic error graph.
    metric : str, optional
        Which metric of ``records``; needed only when ``records`` holds several.
    value : {'correct', 'counted', 'score'}, default 'correct'
        What is averaged (see :func:`question_node_accuracy`).
    accumulation : str, default 'gated'
        The DSG accumulation of ``value="counted"``.

    Returns
    -------
    pandas.DataFrame
        Columns ``parent, child, question_id, question, acc_parent, acc_child, drop`` (``acc_parent -
        acc_child``; positive: the question notices the added error), rows by edge then question. Edges
        where either node has no records are left out.

    Raises
    ------
    InputError
        As :func:`question_node_accuracy`.

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> from ts2viz.qa.records import bundled_qa_records
    >>> from ts2viz.qa.views import edge_question_drops
    >>> drops = edge_question_drops(bundled_qa_records("DSG-BLIP1"), load_dataset("ts2")[65])
    >>> drops.groupby(["parent", "child"])["drop"].max()
    parent  child
    0       1a       1.0
            1b       1.0
    Name: drop, dtype: float64
    """
    import pandas as pd

    acc = question_node_accuracy(records, seg, metric=metric, value=value, accumulation=accumulation)
    rows = []
    for a, b in seg.adjacent_pairs():
        if acc.attrs["n_images"].get(a, 0) == 0 or acc.attrs["n_images"].get(b, 0) == 0:
            continue
        for qid, r in acc.iterrows():
            pa, pb = r[a], r[b]
            rows.append((a, b, int(qid), r["question"], pa, pb, pa - pb))
    return pd.DataFrame(rows, columns=["parent", "child", "question_id", "question", "acc_parent", "acc_child",
                                       "drop"])


def rank_segs_by_questions(records, dataset, *, metric: str | None = None, seg_ids: Sequence[int] | None = None,
                           min_drop: float = 0.5, value: str = "correct", accumulation: str = "gated"):
    """SEGs ranked by how many of their errors no question notices (worst first).

    For every edge of a SEG (a node and a child node with more errors) the edge is *caught* when some
    question's accuracy drops by at least ``min_drop`` from the node to the child (e.g. with 0.5: at
    least half of the child's images fail a question that the parent's images pass), else *missed*. A QA
    metric that misses an edge cannot order or separate those two nodes by its questions. One pass over
    all records computes every SEG's accuracies.

    Parameters
    ----------
    records : pandas.DataFrame
        QA records (:mod:`ts2viz.qa.records`, or :func:`ts2viz.qa.details.detail_records`).
    dataset : Dataset
        The :class:`ts2viz.Dataset` the records' images belong to (images of other datasets are ignored).
    metric : str, optional
        Which metric of ``records``; needed only when ``records`` holds several.
    seg_ids : sequence of int, optional
        Rank only these SEGs (default: all).
    min_drop : float, default 0.5
        The drop that catches an edge, in (0, 1].
    value : {'correct', 'counted', 'score'}, default 'correct'
        What is averaged (see :func:`question_node_accuracy`).
    accumulation : str, default 'gated'
        The DSG accumulation of ``value="counted"``.

    Returns
    -------
    pandas.DataFrame
        One row per SEG with records, columns ``seg_id, partition, n_edges, missed_edges,
        missed_fraction, mean_best_drop`` (mean over edges of the largest drop of any question),
        ``worst_edge`` (the edge with the smallest best drop, ``"0->1a"``) and
        ``worst_edge_best_question`` (its question with the largest drop); sorted by
        ``missed_fraction`` descending, then ``mean_best_drop`` ascending, then ``seg_id``. SEGs without
        records or without edges with records in both nodes are left out.

    Raises
    ------
    InputError
        If ``min_drop`` is not in (0, 1], if ``value`` is not one of :data:`VALUES`, if ``records``
        holds several metrics and ``metric`` is None, if it has no records of ``metric``, or if
        ``accumulation`` is unknown.

    Examples
    --------
    >>> from ts2viz import load_dataset
    >>> from ts2viz.qa.records import bundled_qa_records
    >>> from ts2viz.qa.views import rank_segs_by_questions
    >>> ranked = rank_segs_by_questions(bundled_qa_records("DSG-BLIP1"), load_dataset("ts2"), seg_ids=[65])
    >>> ranked[["seg_id", "n_edges", "missed_edges", "mean_best_drop", "worst_edge"]].to_dict("records")
    [{'seg_id': 65, 'n_edges': 2, 'missed_edges': 0, 'mean_best_drop': 1.0, 'worst_edge': '0->1a'}]
    """
    import pandas as pd

    if not 0 < min_drop <= 1:
        raise InputError(f"min_drop must be in (0, 1], not {min_drop}")
    if value not in VALUES:
        raise InputError(f"value must be one of {', '.join(VALUES)}, not {value!r}")
    recs, _ = _one_metric(records, metric)
    recs = _with_score(recs, value)
    if value == "counted":
        recs = with_counted(recs, accumulation)
    # one pass over all records: accuracy per (SEG, question, node)
    where = {im.file_name: (seg.id, n.label) for seg in dataset for n in seg.nodes for im in n.images}
    keys = recs["file_name"].astype(str).map(where)
    ok = keys.notna().to_numpy()
    sub = recs[ok]
    keys = keys[ok]
    table = pd.DataFrame({"seg": [k[0] for k in keys], "node": [k[1] for k in keys],
                          "question_id": sub["question_id"].astype(int).to_numpy(),
                          "question": sub["question"].astype(str).to_numpy(),
                          "hit": sub[value].astype(float).to_numpy()})
    wide_all = table.groupby(["seg", "question_id", "node"])["hit"].mean().unstack("node")
    col = {c: j for j, c in enumerate(wide_all.columns)}
    values = wide_all.to_numpy(dtype=float)
    seg_of_row = wide_all.index.get_level_values("seg").to_numpy()
    qid_of_row = wide_all.index.get_level_values("question_id").to_numpy()
    text = dict(zip(zip(table["seg"], table["question_id"]), table["question"]))
    bounds = np.flatnonzero(np.r_[True, seg_of_row[1:] != seg_of_row[:-1], True])
    rows = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        sid = int(seg_of_row[lo])
        seg = dataset[sid]
        if seg_ids is not None and seg.id not in seg_ids:
            continue
        best = []
        for a, b in seg.adjacent_pairs():
            if a not in col or b not in col:
                continue
            drop = values[lo:hi, col[a]] - values[lo:hi, col[b]]
            if np.isnan(drop).all():
                continue
            k = int(np.nanargmax(drop))
            best.append((a, b, float(drop[k]), text[(sid, int(qid_of_row[lo + k]))]))
        if not best:
            continue
        drops = np.array([d for _, _, d, _ in best])
        w = int(np.argmin(drops))
        rows.append((seg.id, seg.partition, len(best), int((drops < min_drop).sum()),
                     float((drops < min_drop).mean()), float(drops.mean()), f"{best[w][0]}->{best[w][1]}", best[w][3]))
    out = pd.DataFrame(rows, columns=["seg_id", "partition", "n_edges", "missed_edges", "missed_fraction",
                                      "mean_best_drop", "worst_edge", "worst_edge_best_question"])
    return out.sort_values(["missed_fraction", "mean_best_drop", "seg_id"], ascending=[False, True, True],
                           ignore_index=True)
