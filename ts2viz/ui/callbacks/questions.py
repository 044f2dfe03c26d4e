"""Callbacks of the explorer's Questions tab: question-based metrics seen one question at a time.

Plain functions of data, like :mod:`ts2viz.ui.callbacks` (the :class:`~ts2viz.ui.state.app_state.AppView`
first, plain values after; tested without a browser). A *question metric* is a loaded metric whose
per-question details the app can read:

* a bundled ``TIFA-*``/``DSG-*`` column of the TS2 scores (all but GPT4V): the release's answers
  (:func:`ts2viz.qa.records.bundled_qa_records`), loaded once per process for every session; DSG
  questions count under the accumulation of the shared data's variant the session shows (``mean`` or
  ``gated``, the header's control);
* a metric this session scored live from the library (``tifa:``, ``dsg:``, ``gecko:``,
  ``fineeval:``, and the judges ``viescore:``, ``llmscore:`` whose "questions" are their ratings
  with the judge's reasoning): its details are read back from the score cache
  (:func:`ts2viz.engine.details.cached_details`), no model is loaded.

For an image: its questions as a table (:func:`image_questions`) and, for T2I-FineEval, the image
with its detections and a question's best crop (:func:`boxes_html`). For a SEG: each question's
accuracy in each node (:func:`node_questions`). For the failure finder: SEGs ranked by how many of
their errors no question notices (:func:`question_finder`).
"""
from __future__ import annotations

import base64
import functools
import html
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from ... import figures
from ...display import md_text, plural
from ...engine.details import cached_details
from ...errors import InputError
from ...qa.details import (FAMILIES, JUDGE_FAMILIES, SOFT_FAMILIES, candidate_label, detail_records, draw_fineeval_boxes,
                          question_table)
from ...qa.records import BUNDLED_DSG_ACCUMULATION, BUNDLED_QA_METRICS, bundled_qa_records
from ...qa.views import edge_question_drops, question_node_accuracy, rank_segs_by_questions
from .common import ALL, mark_columns
from ..state.app_state import AppView

#: what a questions x nodes cell shows: (label, value of :func:`ts2viz.qa.views.question_node_accuracy`)
VALUE_CHOICES = {"correct": "answered right (share of images)", "counted": "counts toward the score (DSG gating)",
                 "score": "question score (mean probability)"}
#: a question catches the error of an edge when its accuracy drops at least this much along it
CATCH_DROP = 0.5
#: rows of the question-level failure finder
FINDER_ROWS = 50


@dataclass(frozen=True)
class QASource:
    """Where a question metric's per-question details come from.

    Parameters
    ----------
    metric : str
        The metric's name.
    family : str
        ``tifa``, ``dsg``, ``gecko``, ``fineeval`` (or a judge's).
    bundled : bool
        The TS2 release's records (else: live details in the score cache).
    config_hash : str or None
        Live metrics: the cache key of their details.
    accumulation : str or None
        DSG: what decides whether a question counts.
    normalized : bool, default False
        TIFA/DSG with ``score=normalized``.
    """

    metric: str
    family: str                  # tifa, dsg, gecko, fineeval
    bundled: bool                # the TS2 release's records (else: live details in the score cache)
    config_hash: str | None      # live metrics: the cache key of their details
    accumulation: str | None     # DSG: what decides whether a question counts
    normalized: bool = False     # TIFA/DSG with score=normalized


def qa_source(app: AppView, metric) -> QASource | None:
    """The source of a metric's per-question details.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str or None
        A metric.

    Returns
    -------
    QASource or None
        ``None`` when it has none (not a question metric, not loaded, or a live metric scored elsewhere).
    """
    if not metric or metric not in app.metrics:
        return None
    metric = str(metric)
    if (metric in BUNDLED_QA_METRICS and not app.workspace.has(metric) and app.kind_of(metric) == "published"
            and app.dataset.is_ts2):
        family = metric.split("-", 1)[0].lower()
        acc = None
        if family == "dsg":
            acc = app.app.variant_name if app.app.variant_name in ("mean", "gated") else BUNDLED_DSG_ACCUMULATION
        return QASource(metric, family, True, None, acc)
    info = app.workspace.metric_info.get(metric) if app.workspace.has(metric) else None
    if not info or not info.get("has_details") or info.get("family") not in FAMILIES:
        return None
    return QASource(metric, info["family"], False, info["config_hash"], info.get("accumulation"),
                    info.get("score") == "normalized")


def qa_metrics(app: AppView, metrics: Sequence) -> list[str]:
    """Those of some metrics that are question metrics, once each.

    Parameters
    ----------
    app : AppView
        The session's view.
    metrics : sequence
        Metric names (e.g. the explorer's two; empty entries skipped).

    Returns
    -------
    list of str
        The question metrics among them.
    """
    return [m for m in dict.fromkeys(m for m in metrics if m) if qa_source(app, m) is not None]


def qa_metric_choice(app: AppView, preferred: Sequence = (), current=None, *, follow: bool = False):
    """The Questions tab's metric picker: its choices and value.

    Called when the tab is opened and when the explorer's metrics change.

    Parameters
    ----------
    app : AppView
        The session's view.
    preferred : sequence, default ()
        The explorer's two metrics: their question metrics come first.
    current : str or None, default None
        The picker's value now.
    follow : bool, default False
        The explorer's metrics were just changed.

    Returns
    -------
    choices : list of str
        Every question metric the session sees, those of ``preferred`` first.
    value : str or None
        The first of ``preferred`` that is a question metric when ``follow`` or when ``current`` is not a
        choice; else ``current``; else the first choice (``None`` when there is none).
    """
    first = qa_metrics(app, preferred)
    choices = first + [m for m in qa_metrics(app, app.metrics) if m not in first]
    if first and (follow or current not in choices):
        return choices, first[0]
    if current in choices:
        return choices, current
    return choices, (choices[0] if choices else None)


def substitute_note(app: AppView, preferred: Sequence, metric) -> str:
    """A line for the Questions tab when it shows another metric than the explorer's metric A.

    That happens when metric A has no per-question details (e.g. TIFA-GPT4V: the TS2 release has its
    per-image scores only).

    Parameters
    ----------
    app : AppView
        The session's view.
    preferred : sequence
        The explorer's metrics (the first is metric A).
    metric : str or None
        The metric the tab shows.

    Returns
    -------
    str
        The line (Markdown), or ``""``.
    """
    wanted = next((m for m in preferred if m), None)
    if not wanted or metric is None or wanted == metric or qa_source(app, wanted) is not None:
        return ""
    shown = f"showing **{short_name(str(metric))}** instead" if metric else "nothing to show"
    return f"_**{short_name(str(wanted))}** has no per-question details (only its per-image scores are loaded): {shown}._"


def short_name(metric: str, limit: int = 40) -> str:
    """A metric's name short enough for a figure title: a live spec as ``family:model-folder?…``.

    Parameters
    ----------
    metric : str
        The name.
    limit : int, default 40
        The most characters.

    Returns
    -------
    str
        The short name.

    Examples
    --------
    >>> short_name("tifa:/models/blip-vqa-capfilt-large?questions=/data/q.csv")
    'tifa:blip-vqa-capfilt-large?…'
    """
    if len(metric) <= limit or ":" not in metric:
        return metric
    family, rest = metric.split(":", 1)
    model, _, query = rest.partition("?")
    short = f"{family}:{model.rstrip('/').rsplit('/', 1)[-1]}" + ("?…" if query else "")
    return short if len(short) <= limit else short[:limit - 1] + "…"


def _source(app: AppView, metric) -> QASource:
    src = qa_source(app, metric)
    if src is None:
        raise InputError(f"{str(metric)[:80]!r} has no per-question details here: choose a bundled TIFA/DSG "
                         "column or a TIFA, DSG, Gecko or T2I-FineEval metric scored live in this session")
    return src


def _seg(app: AppView, seg_id):
    try:
        sid = int(seg_id)
    except (TypeError, ValueError):
        raise InputError(f"not a SEG id: {str(seg_id)[:40]!r}") from None
    if sid not in app.dataset.segs:
        raise InputError(f"no SEG with id {sid} in dataset {app.dataset.name}")
    return app.dataset[sid]


def _node(seg, node) -> str:
    return node if node in seg.labels else seg.labels[0]


def node_images(app: AppView, seg_id, node) -> list[tuple[str, str]]:
    """The image picker's choices: (label, file name) of a node's images.

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.
    node : str or None
        The node (the first node's images when it is not one of the SEG's).

    Returns
    -------
    list of (str, str)
        Label (file name and source) and file name.

    Raises
    ------
    InputError
        For a SEG the dataset lacks.
    """
    seg = _seg(app, seg_id)
    n = seg.node(_node(seg, node))
    return [(f"{Path(im.file_name).name} · {im.image_source or 'unknown source'}", im.file_name) for im in n.images]


def image_from_gallery(app: AppView, seg_id, node, index) -> str | None:
    """The file name of the image clicked in a node's gallery (which picks the image in the Questions tab).

    Parameters
    ----------
    app : AppView
        The session's view.
    seg_id : int or str
        The SEG.
    node : str
        The node.
    index : int
        The clicked image's position.

    Returns
    -------
    str or None
        The file name; ``None`` if there is none.

    Raises
    ------
    InputError
        For a SEG the dataset lacks.
    """
    seg = _seg(app, seg_id)
    if node not in seg.labels:
        return None
    try:
        return seg.node(node).images[int(index)].file_name
    except (TypeError, ValueError, IndexError):
        return None


def _image_of_seg(seg, file_name) -> str:
    names = {im.file_name for n in seg.nodes for im in n.images}
    if file_name not in names:
        raise InputError(f"SEG {seg.id} has no image {str(file_name)[:80]!r}")
    return str(file_name)


# -- records and details --------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _bundled():
    """All bundled records once per process, with row positions per (metric, SEG) and per metric."""
    recs = bundled_qa_records()
    by_seg = {(str(m), int(s)): ix for (m, s), ix in recs.groupby(["metric", "seg_id"], observed=True).indices.items()}
    by_metric = {str(m): ix for m, ix in recs.groupby("metric", observed=True).indices.items()}
    return recs, by_seg, by_metric


def _live_details(app: AppView, src: QASource, seg) -> dict:
    """``{file_name: details}`` of a live metric for one SEG's images, from the score cache."""
    files = [im.file_name for n in seg.nodes for im in n.images]
    return app.memo(("qa_details", src.metric, src.config_hash, seg.id), [src.metric],
                    lambda: cached_details(src.config_hash, app.dataset, files, app.cache_root))


def seg_records(app: AppView, metric, seg_id):
    """QA records of a metric for one SEG's images (:data:`ts2viz.qa.details.DETAIL_RECORD_COLUMNS`).

    Cheap: the bundled table is held once per process, live details once per session and SEG.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    seg_id : int or str
        The SEG.

    Returns
    -------
    pandas.DataFrame
        One row per (image, question).

    Raises
    ------
    InputError
        For a metric without per-question details here, or a SEG the dataset lacks.
    """
    src = _source(app, metric)
    seg = _seg(app, seg_id)
    if src.bundled:
        recs, by_seg, _ = _bundled()
        ix = by_seg.get((src.metric, seg.id))
        out = recs.iloc[ix if ix is not None else []].reset_index(drop=True)
        return out.assign(score=out["correct"].astype(float))
    got = _live_details(app, src, seg)
    return detail_records(src.metric, src.family, list(got), list(got.values()))


def all_records(app: AppView, metric):
    """QA records of a metric for every image of the dataset that has them (not kept: the views built from them are).

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.

    Returns
    -------
    pandas.DataFrame
        One row per (image, question).

    Raises
    ------
    InputError
        For a metric without per-question details here.
    """
    src = _source(app, metric)
    if src.bundled:
        recs, _, by_metric = _bundled()
        out = recs.iloc[by_metric[src.metric]].reset_index(drop=True)
        return out.assign(score=out["correct"].astype(float))
    got = cached_details(src.config_hash, app.dataset, None, app.cache_root)
    return detail_records(src.metric, src.family, list(got), list(got.values()))


def _detail(app: AppView, src: QASource, seg, file_name):
    """One image's details in the metric's own shape (bundled: rebuilt from its records), or ``None``."""
    if src.bundled:
        recs = seg_records(app, src.metric, seg.id)
        sub = recs[recs["file_name"].astype(str) == file_name]
        if not len(sub):
            return None
        return [{"question_id": int(r.question_id), "question": str(r.question), "choices": str(r.choices).split("|"),
                 "expected": str(r.expected), "parents": [int(p) for p in str(r.parents).split("-") if p],
                 "answer": str(r.answer), "mapped": str(r.mapped), "correct": bool(r.correct)}
                for r in sub.itertuples()]
    return _live_details(app, src, seg).get(file_name)


# -- one image's questions -------------------------------------------------------------------------------

def _mark(v: bool) -> str:
    return "✓" if v else "✗"


def _p(v) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.3f}"


def _probs(d: dict) -> str:
    return " · ".join(f"{k} {_p(v)}" for k, v in d.items()) if d else "–"


def _short_candidate(detail: dict, c: int) -> str:
    cands = detail.get("candidates") or []
    if not 0 <= c < len(cands) or cands[c].get("kind") == "image":
        return "image"
    return "box " + "+".join(str(int(i)) for i in cands[c].get("detections") or ())


def display_table(family: str, table, detail=None):
    """A question table as people read it: lists joined, ✓/✗, probabilities with three decimals.

    One row per question of :func:`ts2viz.qa.details.question_table`, in the same order (the first column
    is the question's number). The columns that decide the score come first, the answer choices last.

    Parameters
    ----------
    family : str
        The metric's family (the columns depend on it).
    table : pandas.DataFrame
        The question table.
    detail : dict or None, default None
        The image's details (T2I-FineEval: the candidates' boxes).

    Returns
    -------
    pandas.DataFrame
        The table for display.
    """
    import pandas as pd

    t = table
    if family in ("tifa", "dsg") and "probabilities" not in t.columns:
        out = pd.DataFrame({"#": t["question_id"].astype(int), "question": t["question"], "expected": t["expected"],
                            "answer (raw)": t["answer"], "mapped to": t["mapped"],
                            "correct": [_mark(v) for v in t["correct"]]})
        if family == "dsg":
            out["parents"] = [", ".join(map(str, p)) or "–" for p in t["parents"]]
            out["counts"] = [_mark(v) for v in t["counted"]]
        out["choices"] = [" | ".join(c) for c in t["choices"]]
        return out
    if family in ("tifa", "dsg"):
        out = pd.DataFrame({"#": t["question_id"].astype(int), "question": t["question"], "expected": t["expected"],
                            "most likely": t["mapped"], "correct": [_mark(v) for v in t["correct"]],
                            "normalized": [_p(v) for v in t["normalized"]],
                            "P(choices)": [_probs(p) for p in t["probabilities"]]})
        if family == "dsg":
            out["parents"] = [", ".join(map(str, p)) or "–" for p in t["parents"]]
            out["value after gating"] = [_p(v) for v in t["counted"]]
        out["choices"] = [" | ".join(c) for c in t["choices"]]
        return out
    if family in JUDGE_FAMILIES:
        return pd.DataFrame({"#": t["question_id"].astype(int), "aspect": t["aspect"], "rating": t["rating"],
                             "value": ["unreadable" if v is None or (isinstance(v, float) and math.isnan(v))
                                       else f"{float(v):g}" for v in t["value"]],
                             "reply read": [_mark(v) for v in t["parsed"]], "reasoning": t["reasoning"],
                             "judge's reply": [str(r)[:400] for r in t["reply"]]})
    if family == "gecko":
        return pd.DataFrame({"#": t["question_id"].astype(int), "question": t["question"], "expected": t["expected"],
                             "normalized": [_p(v) for v in t["normalized"]],
                             "kept": ["kept" if k else "dropped" for k in t["kept"]], "NLI": [_p(v) for v in t["nli"]],
                             "P(choices)": [_probs(p) for p in t["probabilities"]], "word": t["word"],
                             "type": t["type"], "choices": [" | ".join(c) for c in t["choices"]]})
    per_crop = [" · ".join(f"{_short_candidate(detail or {}, c)} {_p(p)}" for c, p in zip(cs, ps))
                for cs, ps in zip(t["candidates"], t["probabilities"])]
    return pd.DataFrame({"#": t["question_id"].astype(int), "kind": t["kind"], "question": t["question"],
                         "fine P(yes)": [_p(v) for v in t["fine"]], "coarse P(yes)": [_p(v) for v in t["coarse"]],
                         "best crop": t["best_label"], "P(yes) per crop": per_crop})


def _summary(app: AppView, src: QASource, seg, file_name: str, table, detail) -> str:
    node = app.dataset.row(file_name).label
    score = app.image_scores([file_name], [src.metric])[0, 0]
    head = (f"**{md_text(Path(file_name).name)}** · node {node} · **{md_text(short_name(src.metric))}** "
            f"{'–' if math.isnan(score) else f'{score:.3f}'}")
    n = len(table)
    if src.family in ("tifa", "dsg"):
        bits = [plural(n, "question"), f"{int(table['correct'].sum())} answered right"]
        if src.family == "dsg" and "counted" in table.columns and table["counted"].dtype == bool:
            bits.append(f"{int(table['counted'].sum())} count ({src.accumulation} accumulation)")
        if src.bundled:
            bits.append("answers from the TS2 release")
        return head + " · " + " · ".join(bits)
    if src.family in JUDGE_FAMILIES:
        d = detail or {}
        read = bool(d.get("parsed"))
        bits = [plural(n, "rating"), "reply read" if read else "**reply could not be read: no score (NaN)**"]
        text = head + " · " + " · ".join(bits)
        if src.family == "llmscore":
            for key, label in (("global", "Caption"), ("local", "Detections"), ("description", "Description the "
                                                                                                 "LLM rated")):
                if d.get(key):
                    text += f"  \n{label}: {md_text(str(d[key])[:1200])}"
        return text
    if src.family == "gecko":
        kept = int(table["kept"].sum()) if n else 0
        cov = " · ".join(f"{md_text(w.get('phrase', ''))} ({md_text(w.get('type', ''))})"
                         for w in (detail or {}).get("coverage") or [])
        filtered = n and table["nli"].notna().any()
        pairs = f"{kept} of {plural(n, 'QA pair')} kept by the NLI filter" if filtered else \
            f"{plural(n, 'QA pair')} (no NLI filter)"
        return head + f" · {pairs}" + (f"  \nCoverage: {cov}" if cov else "")
    d = detail or {}
    return (head + f" · fine {_p(d.get('fine'))} · coarse {_p(d.get('coarse'))} · "
            f"{plural(len(d.get('detections') or []), 'detection')} · {plural(n, 'question')}  \n"
            "Choose a question (or click its row) to see the crop that gave its fine score.")


def image_questions(app: AppView, metric, seg_id, file_name) -> dict:
    """One image's questions for a question metric: the Questions tab's image part.

    Called when an image is picked (the image picker, or a click in the node gallery), and by the tab's
    redraw. An image without details gets an empty table and a title saying so.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    seg_id : int or str
        The SEG.
    file_name : str
        An image of the SEG.

    Returns
    -------
    dict
        ``family``, ``title`` (Markdown), ``table`` (DataFrame for display, first column the question
        number), ``data`` (:func:`ts2viz.qa.details.question_table`), ``questions`` ((label, number)
        pairs), ``boxes`` (bool: the image has boxes to draw).

    Raises
    ------
    InputError
        For a metric without per-question details here, a SEG the dataset lacks, or an image not of the SEG.
    """
    src = _source(app, metric)
    seg = _seg(app, seg_id)
    file_name = _image_of_seg(seg, file_name)

    def build() -> dict:
        detail = _detail(app, src, seg, file_name)
        if not detail:
            why = ("the release has no answers for it" if src.bundled else
                   "not scored in this session yet (score the SEG in the Live scoring tab)")
            return {"family": src.family, "title": f"**{md_text(Path(file_name).name)}**: no per-question "
                                                   f"details ({why})",
                    "table": display_table(src.family, question_table(src.family, None)) if src.family in
                    ("tifa", "dsg") else None, "data": None, "questions": [], "boxes": False}
        data = question_table(src.family, detail, accumulation=src.accumulation if src.bundled else None)
        return {"family": src.family, "title": _summary(app, src, seg, file_name, data, detail),
                "table": display_table(src.family, data, detail), "data": data,
                "questions": [(f"{int(q)} · {t}", int(q)) for q, t in zip(data["question_id"], data["question"])],
                "boxes": src.family == "fineeval"}

    return app.memo(("qa_image", src.metric, seg.id, file_name), [src.metric], build)


def question_from_row(table, row) -> int | None:
    """The question number in a row of a question table (its first column): a row click picks the question.

    Parameters
    ----------
    table : pandas.DataFrame
        The table's value.
    row : int
        The clicked row.

    Returns
    -------
    int or None
        The number; ``None`` when the row holds none.
    """
    try:
        return int(table.iloc[int(row), 0])
    except (TypeError, ValueError, IndexError, AttributeError):
        return None


def _image_file(app: AppView, file_name: str):
    from ...dataset import cached_image

    return app.dataset.image_path(file_name) or cached_image(app.dataset, file_name)


def boxes_html(app: AppView, metric, seg_id, file_name, question=None) -> str:
    """A T2I-FineEval image with its detections (and a question's best crop) as an HTML ``<img>``, with a caption.

    A JPEG data URI: nothing is written to disk. Called when an image or a question is picked.

    Parameters
    ----------
    app : AppView
        The session's view.
    metric : str
        A question metric.
    seg_id : int or str
        The SEG.
    file_name : str
        An image of the SEG.
    question : int or str or None, default None
        The question whose best crop is outlined.

    Returns
    -------
    str
        The HTML; empty for other metrics.

    Raises
    ------
    InputError
        For a question that is not a number, a metric without details, a SEG the dataset lacks, or an image
        not of the SEG.
    """
    src = _source(app, metric)
    if src.family != "fineeval":
        return ""
    seg = _seg(app, seg_id)
    file_name = _image_of_seg(seg, file_name)
    try:
        q = None if question in (None, "") else int(question)
    except (TypeError, ValueError):
        raise InputError(f"not a question number: {str(question)[:20]!r}") from None

    def build() -> str:
        from PIL import Image

        detail = _detail(app, src, seg, file_name)
        name = html.escape(Path(file_name).name)
        if not detail:
            return f"<div class='qa-boxes-empty'>{name}: no details (not scored yet)</div>"
        path = _image_file(app, file_name)
        if path is None:
            return f"<div class='qa-boxes-empty'>{name}: the image file is not available</div>"
        try:
            with Image.open(path) as im:
                im.draft("RGB", (1024, 1024))
                drawn = draw_fineeval_boxes(im.convert("RGB"), detail, q)
        except OSError:
            return f"<div class='qa-boxes-empty'>{name}: the image file could not be read</div>"
        buf = io.BytesIO()
        drawn.save(buf, format="JPEG", quality=88)
        uri = "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
        qs = detail.get("questions") or []
        if q is not None and 0 <= q < len(qs):
            cap = (f"Question {q}: {html.escape(str(qs[q].get('question', '')))} · best crop "
                   f"<b style='color:#e11d48'>{html.escape(candidate_label(detail, int(qs[q].get('best', 0))))}</b>, "
                   f"P(yes) {_p(qs[q].get('fine'))} (whole image {_p(qs[q].get('coarse'))})")
        else:
            cap = (f"{plural(len(detail.get('detections') or []), 'detection')} (number, label, confidence); "
                   "choose a question to see its best crop")
        return (f"<figure class='qa-boxes' data-question='{'' if q is None else q}' style='margin:0'>"
                f"<img src='{uri}' alt='{name} with detection boxes' style='max-width:100%;height:auto;"
                f"border-radius:8px;border:1px solid #e5e7eb'/>"
                f"<figcaption style='font-size:13px;color:#374151;margin-top:4px'>{cap}</figcaption></figure>")

    return app.memo(("qa_boxes", src.metric, seg.id, file_name, q), [src.metric], build)


# -- one SEG: questions x nodes --------------------------------------------------------------------------

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
    if src.family in JUDGE_FAMILIES:
        return [("rating on [0, 1] (mean over the node's images; error count: 1 − n/9)", "score"), ("judge's reply read (share of images)", "correct")]
    vals = ["correct"]
    if src.family == "dsg":
        vals.append("counted")
    if src.family in SOFT_FAMILIES or src.normalized:
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


def _check_value(app: AppView, metric, value) -> str:
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
    src = _source(app, metric)
    seg = _seg(app, seg_id)
    value = _check_value(app, metric, value)

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

    src = _source(app, metric)
    seg = _seg(app, seg_id)
    value = _check_value(app, metric, value)
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


# -- the failure finder, by questions ----------------------------------------------------------------------

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
        What a question's value is (default: the metric's first, :func:`value_choices`).
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

    src = _source(app, metric)
    value = default_value(app, metric) if value in (None, "") else _check_value(app, metric, value)
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


__all__ = ["QASource", "qa_source", "qa_metrics", "qa_metric_choice", "node_images", "image_from_gallery", "seg_records", "all_records",
           "image_questions", "display_table", "question_from_row", "boxes_html", "value_choices", "default_value",
           "node_accuracy", "node_questions", "finder_metric", "question_finder", "VALUE_CHOICES", "CATCH_DROP"]
