"""One image's questions: its gallery, the questions as a table with a summary, FineEval's boxes."""
from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path

from ....display import md_text, plural
from ....errors import InputError
from ....qa.details import (ANSWER_KINDS, BOX_KINDS, COVERAGE, DEPENDENT, RATING_KINDS, RATINGS, candidate_label,
                            draw_fineeval_boxes, question_table)
from ..common import get_seg
from ...state.app_state import AppView
from .sources import QASource, image_detail, image_of_seg, node_of, short_name, source_of


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
    seg = get_seg(app, seg_id)
    n = seg.node(node_of(seg, node))
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
    seg = get_seg(app, seg_id)
    if node not in seg.labels:
        return None
    try:
        return seg.node(node).images[int(index)].file_name
    except (TypeError, ValueError, IndexError):
        return None


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


def display_table(kind: str, table, detail=None):
    """A question table as people read it: lists joined, ✓/✗, probabilities with three decimals.

    One row per question of :func:`ts2viz.qa.details.question_table`, in the same order (the first column
    is the question's number). The columns that decide the score come first, the answer choices last.

    Parameters
    ----------
    kind : str
        The details kind (:data:`ts2viz.qa.details.DETAIL_KINDS`; the columns depend on it).
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
    if kind in ANSWER_KINDS and "probabilities" not in t.columns:
        out = pd.DataFrame({"#": t["question_id"].astype(int), "question": t["question"], "expected": t["expected"],
                            "answer (raw)": t["answer"], "mapped to": t["mapped"],
                            "correct": [_mark(v) for v in t["correct"]]})
        if kind == DEPENDENT:
            out["parents"] = [", ".join(map(str, p)) or "–" for p in t["parents"]]
            out["counts"] = [_mark(v) for v in t["counted"]]
        out["choices"] = [" | ".join(c) for c in t["choices"]]
        return out
    if kind in ANSWER_KINDS:
        out = pd.DataFrame({"#": t["question_id"].astype(int), "question": t["question"], "expected": t["expected"],
                            "most likely": t["mapped"], "correct": [_mark(v) for v in t["correct"]],
                            "normalized": [_p(v) for v in t["normalized"]],
                            "P(choices)": [_probs(p) for p in t["probabilities"]]})
        if kind == DEPENDENT:
            out["parents"] = [", ".join(map(str, p)) or "–" for p in t["parents"]]
            out["value after gating"] = [_p(v) for v in t["counted"]]
        out["choices"] = [" | ".join(c) for c in t["choices"]]
        return out
    if kind in RATING_KINDS:
        return pd.DataFrame({"#": t["question_id"].astype(int), "aspect": t["aspect"], "rating": t["rating"],
                             "value": ["unreadable" if v is None or (isinstance(v, float) and math.isnan(v))
                                       else f"{float(v):g}" for v in t["value"]],
                             "reply read": [_mark(v) for v in t["parsed"]], "reasoning": t["reasoning"],
                             "judge's reply": [str(r)[:400] for r in t["reply"]]})
    if kind == COVERAGE:
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
    if src.details in ANSWER_KINDS:
        bits = [plural(n, "question"), f"{int(table['correct'].sum())} answered right"]
        if src.details == DEPENDENT and "counted" in table.columns and table["counted"].dtype == bool:
            bits.append(f"{int(table['counted'].sum())} count ({src.accumulation} accumulation)")
        if src.bundled:
            bits.append("answers from the TS2 release")
        return head + " · " + " · ".join(bits)
    if src.details in RATING_KINDS:
        d = detail or {}
        read = bool(d.get("parsed"))
        bits = [plural(n, "rating"), "reply read" if read else "**reply could not be read: no score (NaN)**"]
        text = head + " · " + " · ".join(bits)
        if src.details == RATINGS:
            for key, label in (("global", "Caption"), ("local", "Detections"), ("description", "Description the "
                                                                                                 "LLM rated")):
                if d.get(key):
                    text += f"  \n{label}: {md_text(str(d[key])[:1200])}"
        return text
    if src.details == COVERAGE:
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
    src = source_of(app, metric)
    seg = get_seg(app, seg_id)
    file_name = image_of_seg(seg, file_name)

    def build() -> dict:
        detail = image_detail(app, src, seg, file_name)
        if not detail:
            why = ("the release has no answers for it" if src.bundled else
                   "not scored in this session yet (score the SEG in the Live scoring tab)")
            return {"family": src.family, "title": f"**{md_text(Path(file_name).name)}**: no per-question "
                                                   f"details ({why})",
                    "table": display_table(src.details, question_table(src.details, None)) if src.details in
                    ANSWER_KINDS else None, "data": None, "questions": [], "boxes": False}
        data = question_table(src.details, detail, accumulation=src.accumulation if src.bundled else None)
        return {"family": src.family, "title": _summary(app, src, seg, file_name, data, detail),
                "table": display_table(src.details, data, detail), "data": data,
                "questions": [(f"{int(q)} · {t}", int(q)) for q, t in zip(data["question_id"], data["question"])],
                "boxes": src.details in BOX_KINDS}

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
    from ....dataset import cached_image

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
    src = source_of(app, metric)
    if src.details not in BOX_KINDS:
        return ""
    seg = get_seg(app, seg_id)
    file_name = image_of_seg(seg, file_name)
    try:
        q = None if question in (None, "") else int(question)
    except (TypeError, ValueError):
        raise InputError(f"not a question number: {str(question)[:20]!r}") from None

    def build() -> str:
        from PIL import Image

        detail = image_detail(app, src, seg, file_name)
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
