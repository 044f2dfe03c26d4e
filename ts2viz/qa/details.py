"""Per-image details of every question-based metric and judge, as tables, records and pictures.

The question-based metrics are TIFA, DSG, Gecko and T2I-FineEval; the judges are VIEScore and
LLMScore. Each returns its details in a shape of its own, the *details kind* its family's record names
(:attr:`ts2viz.metrics.family.Family.details`, read with :func:`ts2viz.metrics.registry.details_kind`;
:data:`DETAIL_KINDS`): the functions here take that kind, never a family's name (see
:mod:`ts2viz.metrics.qametric`, :mod:`ts2viz.metrics.families.gecko`,
:mod:`ts2viz.metrics.families.fineeval`; the score cache keeps the details, read back with
:func:`ts2viz.engine.details.cached_details`). This module reads all of them:

* :func:`question_table`: one image's questions as a table, with what each family knows about them
  (TIFA/DSG: raw answer, mapped choice, correctness, DSG parents and whether the question counted;
  Gecko: coverage word, NLI score, kept or dropped, choice probabilities, normalised score;
  T2I-FineEval: entity or relation, every candidate crop's P(yes), the best crop, fine and coarse);
* :func:`detail_records`: QA records (:data:`ts2viz.qa.records.RECORD_COLUMNS` plus ``score``) of any
  family, for the question-level views of :mod:`ts2viz.qa.views`;
* :func:`draw_fineeval_boxes`: a T2I-FineEval image with its detections and, for one question, the
  crop that gave its fine score.

``score`` is a question's own value before any DSG gating: 0/1 correctness for TIFA/DSG answered
free-form, the normalised choice probability (Gecko's Eq. 2) for Gecko and for TIFA/DSG with
``score=normalized``, and (fine + coarse) / 2 for T2I-FineEval (the question's share of the image
score under the default plain-mean weighting). ``correct`` is the most likely choice being the
expected one for likelihood scores, and P(yes) >= 0.5 on the best crop for T2I-FineEval.

A judge (VIEScore, LLMScore) has ratings instead of questions: a record per rating, its reasoning as
``answer``, its value as ``mapped``, ``score`` the rating on [0, 1] (:func:`rating_goodness`; NaN when
the reply could not be read) and ``correct`` = the reply was read.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import InputError
from .questions import DEPENDENT_KIND, INDEPENDENT_KIND
from .records import RECORD_COLUMNS, records_from_details

#: details kind: TIFA's questions, each answered right or wrong on its own (a list of per-question dicts)
QUESTIONS = "questions"
#: details kind: DSG's questions, as :data:`QUESTIONS` with parents that gate them
DEPENDENT = "dependent"
#: details kind: Gecko's coverage-labelled QA pairs, NLI-filtered, with choice probabilities
COVERAGE = "coverage"
#: details kind: T2I-FineEval's detections, candidate crops and per-crop P(yes)
CROPS = "crops"
#: details kind: VIEScore's aspects, each with its sub-scores and reasoning
ASPECTS = "aspects"
#: details kind: LLMScore's overall rating and error count with their rationales
RATINGS = "ratings"
#: every details kind the functions here read (:attr:`ts2viz.metrics.family.Family.details`)
DETAIL_KINDS = (QUESTIONS, DEPENDENT, COVERAGE, CROPS, ASPECTS, RATINGS)
#: kinds whose details are answered questions with ids, as QA records hold them (:mod:`ts2viz.qa.records`)
ANSWER_KINDS = (QUESTIONS, DEPENDENT)
#: kinds whose details are a judge's ratings with reasoning (one row per rating, not per question)
RATING_KINDS = (ASPECTS, RATINGS)
#: kinds whose per-question value is a probability rather than a right/wrong answer
SOFT_KINDS = (COVERAGE, CROPS, ASPECTS, RATINGS)
#: kinds whose details hold detection boxes to draw (:func:`draw_fineeval_boxes`)
BOX_KINDS = (CROPS,)
#: the columns of :func:`detail_records`
DETAIL_RECORD_COLUMNS = (*RECORD_COLUMNS, "score")


def _check_kind(kind: str) -> str:
    if kind not in DETAIL_KINDS:
        raise InputError(f"no per-question details of kind {kind!r} (have: {', '.join(DETAIL_KINDS)})")
    return kind


def question_kind(kind: str) -> str:
    """The question-set kind (:data:`ts2viz.qa.questions.QUESTION_KINDS`) of an answer details kind.

    Parameters
    ----------
    kind : str
        One of :data:`ANSWER_KINDS`.

    Returns
    -------
    str
        :data:`ts2viz.qa.questions.DEPENDENT_KIND` for :data:`DEPENDENT`,
        :data:`~ts2viz.qa.questions.INDEPENDENT_KIND` for :data:`QUESTIONS`: the ``kind`` of QA records
        (:mod:`ts2viz.qa.records`).

    Raises
    ------
    InputError
        For a kind that is not one of :data:`ANSWER_KINDS`.

    Examples
    --------
    >>> from ts2viz.qa.details import question_kind
    >>> question_kind("dependent"), question_kind("questions")
    ('dsg', 'tifa')
    """
    if kind not in ANSWER_KINDS:
        raise InputError(f"details of kind {kind!r} are no answered questions (those are {', '.join(ANSWER_KINDS)})")
    return DEPENDENT_KIND if kind == DEPENDENT else INDEPENDENT_KIND


def details_of_questions(kind: str) -> str:
    """The details kind of a question-set kind (:data:`ts2viz.qa.questions.QUESTION_KINDS`): the inverse of :func:`question_kind`.

    Parameters
    ----------
    kind : str
        A question-set kind (the ``kind`` of QA records).

    Returns
    -------
    str
        :data:`DEPENDENT` for :data:`ts2viz.qa.questions.DEPENDENT_KIND`, else :data:`QUESTIONS`.

    Examples
    --------
    >>> from ts2viz.qa.details import details_of_questions
    >>> details_of_questions("dsg"), details_of_questions("tifa")
    ('dependent', 'questions')
    """
    return DEPENDENT if kind == DEPENDENT_KIND else QUESTIONS


def is_normalized(detail) -> bool:
    """Whether TIFA/DSG details come from ``score=normalized`` (choice likelihoods, no free-form answer).

    Parameters
    ----------
    detail : list of dict or None
        One image's TIFA/DSG details.

    Returns
    -------
    bool
        True when the details are a non-empty list whose first record has ``normalized`` and no
        ``answer``.

    Examples
    --------
    >>> from ts2viz.qa.details import is_normalized
    >>> is_normalized([{"question_id": 0, "normalized": 0.8}]), is_normalized([{"answer": "yes"}]), is_normalized(None)
    (True, False, False)
    """
    return bool(detail) and isinstance(detail, list) and "normalized" in detail[0] and "answer" not in detail[0]


def _argmax_choice(probabilities: dict) -> str:
    return max(probabilities.items(), key=lambda kv: kv[1])[0] if probabilities else ""


def _float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


# -- records --------------------------------------------------------------------------------------------

def detail_records(metric: str, family: str, kind: str, file_names: Sequence[str], details: Sequence):
    """QA records of any question-based metric or judge from its per-image details.

    What each details kind's rows hold (see also the module docstring):

    * TIFA/DSG answered free-form: :func:`ts2viz.qa.records.records_from_details`, ``score`` = 0/1
      correctness (used when no image's details are ``score=normalized``);
    * TIFA/DSG with ``score=normalized``: ``answer`` empty when there is none, ``mapped`` the recorded
      choice or else the most likely one, ``score`` the normalised probability of the expected choice;
    * Gecko: the questions the NLI filter kept (dropped ones do not enter the score), choices and
      expected answer as asked, ``mapped`` the most likely choice, ``correct`` whether it is the expected
      one (case and spacing ignored), ``score`` the normalised probability;
    * T2I-FineEval: choices ``yes|no``, expected ``yes``, ``mapped``/``correct`` by P(yes) >= 0.5 on
      the best crop (``fine``), ``score`` = (fine + coarse) / 2;
    * VIEScore, LLMScore: one row per rating (:func:`judge_ratings`): ``question`` the rating's name,
      ``answer`` its reasoning, ``mapped`` its value (empty when unreadable), ``correct`` whether the
      reply was read, ``score`` :func:`rating_goodness`.

    Parameters
    ----------
    metric : str
        The name the records get (a scores column, e.g. the metric's SPEC).
    family : str
        The metric's family: the records' ``kind`` for details that are not answered questions (those
        get their question-set kind, :func:`question_kind`).
    kind : str
        The details kind (:data:`DETAIL_KINDS`; the family's :attr:`~ts2viz.metrics.family.Family.details`).
    file_names : sequence of str
        One name per image.
    details : sequence
        One entry per image, as the metric returns it (None or empty for an image without details: it
        gets no rows).

    Returns
    -------
    pandas.DataFrame
        :data:`DETAIL_RECORD_COLUMNS`, images in input order, questions in the metric's order.
        ``question_id`` is the question's id (TIFA/DSG), its position in the image's question list
        (Gecko, T2I-FineEval: the same for every image of one prompt), or the rating's position (judges).

    Raises
    ------
    InputError
        If ``kind`` is not one of :data:`DETAIL_KINDS`, if ``file_names`` and ``details`` differ in
        length, or if an image's details lack a key or hold a value of the wrong type (the message names
        the image).

    Examples
    --------
    >>> det = {"image_size": [100, 80],
    ...        "detections": [{"label": "cat", "score": 0.87, "box": [10, 10, 60, 50]},
    ...                       {"label": "tree", "score": 0.5, "box": [60, 0, 100, 80]}],
    ...        "candidates": [{"kind": "image"}, {"kind": "box", "detections": [0], "box": [5, 5, 65, 55]},
    ...                       {"kind": "boxes", "detections": [0, 1], "box": [5, 0, 100, 80]}],
    ...        "questions": [{"question": "Is there a cat?", "kind": "entity", "fine": 0.9, "coarse": 0.7,
    ...                       "best": 1, "candidates": [0, 1], "probabilities": [0.7, 0.9]},
    ...                      {"question": "Is the cat black?", "kind": "entity", "fine": 0.2, "coarse": 0.4,
    ...                       "best": 0, "candidates": [0, 1], "probabilities": [0.2, 0.1]}]}
    >>> from ts2viz.qa.details import detail_records
    >>> detail_records("fineeval:demo", "fineeval", "crops", ["a.png"], [det])[["question", "mapped", "correct", "score"]]
                question mapped  correct  score
    0    Is there a cat?    yes     True    0.8
    1  Is the cat black?     no    False    0.3
    """
    import pandas as pd

    _check_kind(kind)
    if len(file_names) != len(details):
        raise InputError(f"{len(file_names)} file names but {len(details)} details")
    if kind in ANSWER_KINDS:
        family = question_kind(kind)
    if kind in ANSWER_KINDS and not any(is_normalized(d) for d in details):
        out = records_from_details(metric, family, file_names, details)
        out["score"] = out["correct"].astype(float)
        return out
    rows = []
    for fn, det in zip(file_names, details):
        if not det:
            continue
        try:
            if kind in RATING_KINDS:
                for r in judge_ratings(kind, det):
                    rows.append((metric, family, str(fn), r["question_id"], r["rating"], "", "", "",
                                 r["reasoning"], "" if r["value"] is None else f"{r['value']:g}", r["parsed"],
                                 rating_goodness(r["rating"], r["value"])))
            elif kind in ANSWER_KINDS:
                for r in det:
                    probs = r.get("probabilities") or {}
                    rows.append((metric, family, str(fn), int(r["question_id"]), str(r["question"]),
                                 "|".join(map(str, r["choices"])), str(r["expected"]),
                                 "-".join(str(int(p)) for p in r.get("parents") or ()), str(r.get("answer", "")),
                                 str(r.get("mapped") or _argmax_choice(probs)), bool(r["correct"]),
                                 _float(r.get("normalized", float(bool(r["correct"]))))))
            elif kind == COVERAGE:
                for k, q in enumerate(det["questions"]):
                    if not q.get("kept", True) or "normalized" not in q:
                        continue
                    mapped = _argmax_choice(q.get("probabilities") or {})
                    rows.append((metric, family, str(fn), k, str(q["question"]), "|".join(map(str, q["choices"])),
                                 str(q["expected"]), "", "", mapped,
                                 mapped.strip().lower() == str(q["expected"]).strip().lower(),
                                 _float(q["normalized"])))
            else:
                for k, q in enumerate(det["questions"]):
                    fine, coarse = _float(q["fine"]), _float(q["coarse"])
                    rows.append((metric, family, str(fn), k, str(q["question"]), "yes|no", "yes", "", "",
                                 "yes" if fine >= 0.5 else "no", bool(fine >= 0.5), (fine + coarse) / 2))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputError(f"{metric}: malformed details for {fn} ({type(e).__name__}: {e})") from None
    return pd.DataFrame(rows, columns=list(DETAIL_RECORD_COLUMNS))


# -- judges: VIEScore, LLMScore ------------------------------------------------------------------------------

#: the ratings of an LLMScore reply, in its line order
LLMSCORE_RATINGS = (("overall", "overall (1-100)", "overall_rationale"),
                    ("error_counting", "composition errors (0-9)", "error_counting_rationale"))


def rating_goodness(rating: str, value) -> float:
    """A judge's rating on [0, 1], higher = more faithful, for views that compare ratings across nodes.

    A VIEScore sub-score (0-10) is divided by 10, LLMScore's overall rating (1-100) by 100; LLMScore's
    error count gives 1 - min(n, 9) / 9 (its scale is 0-9; larger counts, which happen, are clipped).
    Results are clipped to [0, 1].

    Parameters
    ----------
    rating : str
        The rating's name as :func:`judge_ratings` gives it: one starting ``composition errors`` is the
        LLMScore error count, one starting ``overall`` the LLMScore overall rating, any other a
        VIEScore sub-score.
    value : float, str or None
        The rating's value; None (an unreadable reply) or a value that is not a number gives NaN.

    Returns
    -------
    float
        The rating on [0, 1], or NaN.

    Examples
    --------
    >>> from ts2viz.qa.details import rating_goodness
    >>> rating_goodness("overall (1-100)", 85), rating_goodness("composition errors (0-9)", 12)
    (0.85, 0.0)
    >>> rating_goodness("naturalness", 7), rating_goodness("naturalness", None)
    (0.7, nan)
    """
    if value is None:
        return float("nan")
    v = _float(value)
    if rating.startswith("composition errors"):
        return 1.0 - min(max(v, 0.0), 9.0) / 9.0
    top = 100.0 if rating.startswith("overall") else 10.0
    return min(max(v / top, 0.0), 1.0)


def judge_ratings(kind: str, detail: dict) -> list[dict]:
    """A judge's ratings of one image, one dict per rating.

    VIEScore: one rating per sub-score of each aspect asked (SC: prompt following; PQ: naturalness,
    artifacts), all sharing the aspect's reasoning; an aspect whose reply could not be read is one rating
    with no value. LLMScore: the overall rating and the error count (:data:`LLMSCORE_RATINGS`) with their
    rationales; its ``aspect`` is ``chosen`` for the one the metric reports as its score.

    Parameters
    ----------
    kind : {'aspects', 'ratings'}
        The judge's details kind (:data:`RATING_KINDS`): :data:`ASPECTS` (VIEScore); any other is read as
        LLMScore's :data:`RATINGS`.
    detail : dict
        The image's details as the judge returns them.

    Returns
    -------
    list of dict
        Keys ``question_id`` (position), ``aspect``, ``rating`` (the rating's name), ``value`` (float, or
        None for an unreadable reply), ``reasoning``, ``parsed`` (bool) and ``reply`` (the raw reply).

    Examples
    --------
    >>> from ts2viz.qa.details import judge_ratings
    >>> detail = {"overall": 80, "overall_rationale": "Mostly right.", "error_counting": 1,
    ...           "error_counting_rationale": "One tree is missing.", "chosen": "overall"}
    >>> [(r["rating"], r["value"], r["aspect"]) for r in judge_ratings("ratings", detail)]
    [('overall (1-100)', 80.0, 'chosen'), ('composition errors (0-9)', 1.0, '')]
    """
    out: list[dict] = []
    if kind == ASPECTS:
        for a in detail.get("aspects") or []:
            rates = list(a.get("rates") or [])
            vals = list(a.get("scores") or [])
            n = max(len(vals), 1)
            for j in range(n):
                name = rates[j] if j < len(rates) else f"score {j + 1}"
                v = vals[j] if j < len(vals) else None
                out.append({"question_id": len(out), "aspect": str(a.get("aspect", "")), "rating": str(name),
                            "value": None if v is None else _float(v), "reasoning": str(a.get("reasoning", "")),
                            "parsed": bool(a.get("parsed")), "reply": str(a.get("reply", ""))})
        return out
    for key, label, why in LLMSCORE_RATINGS:
        v = detail.get(key)
        out.append({"question_id": len(out), "aspect": "chosen" if detail.get("chosen") == key else "",
                    "rating": label, "value": None if v is None else _float(v), "reasoning": str(detail.get(why, "")),
                    "parsed": v is not None, "reply": str(detail.get("reply", ""))})
    return out


# -- one image's questions -----------------------------------------------------------------------------------

def candidate_label(detail: dict, index: int) -> str:
    """A T2I-FineEval candidate crop in words.

    Parameters
    ----------
    detail : dict
        The image's T2I-FineEval details (``candidates`` and ``detections``).
    index : int
        The candidate's index in ``detail["candidates"]``.

    Returns
    -------
    str
        ``whole image``; ``box I (LABEL CONF)`` for one detection (the confidence with two decimals,
        left out when unknown); ``boxes I+J (LABEL+LABEL)`` for several; ``candidate N`` for an index
        out of range.

    Examples
    --------
    >>> det = {"image_size": [100, 80],
    ...        "detections": [{"label": "cat", "score": 0.87, "box": [10, 10, 60, 50]},
    ...                       {"label": "tree", "score": 0.5, "box": [60, 0, 100, 80]}],
    ...        "candidates": [{"kind": "image"}, {"kind": "box", "detections": [0], "box": [5, 5, 65, 55]},
    ...                       {"kind": "boxes", "detections": [0, 1], "box": [5, 0, 100, 80]}],
    ...        "questions": [{"question": "Is there a cat?", "kind": "entity", "fine": 0.9, "coarse": 0.7,
    ...                       "best": 1, "candidates": [0, 1], "probabilities": [0.7, 0.9]},
    ...                      {"question": "Is the cat black?", "kind": "entity", "fine": 0.2, "coarse": 0.4,
    ...                       "best": 0, "candidates": [0, 1], "probabilities": [0.2, 0.1]}]}
    >>> from ts2viz.qa.details import candidate_label
    >>> [candidate_label(det, i) for i in range(4)]
    ['whole image', 'box 0 (cat 0.87)', 'boxes 0+1 (cat+tree)', 'candidate 3']
    """
    cands = detail.get("candidates") or []
    dets = detail.get("detections") or []
    if not 0 <= index < len(cands):
        return f"candidate {index}"
    c = cands[index]
    if c.get("kind") == "image":
        return "whole image"
    ids = [int(i) for i in c.get("detections") or ()]
    labels = [str(dets[i].get("label", "?")) if 0 <= i < len(dets) else "?" for i in ids]
    if len(ids) == 1:
        conf = _float(dets[ids[0]].get("score")) if 0 <= ids[0] < len(dets) else float("nan")
        return f"box {ids[0]} ({labels[0]} {conf:.2f})".replace(" nan)", ")")
    return f"boxes {'+'.join(map(str, ids))} ({'+'.join(labels)})"


def question_table(kind: str, detail, *, accumulation: str | None = None):
    """One image's questions from its details (as the metric returns them for one image).

    Parameters
    ----------
    kind : str
        The details kind (:data:`DETAIL_KINDS`; the family's :attr:`~ts2viz.metrics.family.Family.details`).
    detail : list of dict or dict or None
        The image's details (TIFA/DSG: a list of per-question dicts; the others: a dict).
    accumulation : str, optional
        DSG answered free-form only: the accumulation deciding ``counted``
        (:mod:`ts2viz.qa.accumulation`); None keeps the counted flags the metric recorded.

    Returns
    -------
    pandas.DataFrame
        One row per question in question-id order (TIFA/DSG) or the metric's order. Columns by details kind:

        * TIFA/DSG: ``question_id, question, choices (list), expected, answer, mapped, correct`` (DSG also
          ``parents (list), counted``); with ``score=normalized`` ``answer`` is replaced by
          ``probabilities`` (choice -> P) and a ``normalized`` column is added, and DSG's ``counted`` is the
          question's value after gating;
        * Gecko: ``question_id, word, type, question, choices, expected, hypothesis, nli, kept,
          probabilities, normalized`` (``nli`` NaN without an NLI model; dropped questions have no
          probabilities and NaN ``normalized``);
        * T2I-FineEval: ``question_id, kind, question, fine, coarse, best, best_label, candidates (list of
          candidate indices), probabilities (list, one P(yes) per candidate)``;
        * VIEScore, LLMScore: ``question_id, aspect, rating, question (= rating), value, reasoning, parsed,
          reply``, one row per rating (:func:`judge_ratings`).

        An empty detail gives an empty table (with the kind's columns where they are known).

    Raises
    ------
    InputError
        If ``kind`` is not one of :data:`DETAIL_KINDS`, or if free-form TIFA/DSG details are malformed.

    Examples
    --------
    >>> det = {"image_size": [100, 80],
    ...        "detections": [{"label": "cat", "score": 0.87, "box": [10, 10, 60, 50]},
    ...                       {"label": "tree", "score": 0.5, "box": [60, 0, 100, 80]}],
    ...        "candidates": [{"kind": "image"}, {"kind": "box", "detections": [0], "box": [5, 5, 65, 55]},
    ...                       {"kind": "boxes", "detections": [0, 1], "box": [5, 0, 100, 80]}],
    ...        "questions": [{"question": "Is there a cat?", "kind": "entity", "fine": 0.9, "coarse": 0.7,
    ...                       "best": 1, "candidates": [0, 1], "probabilities": [0.7, 0.9]},
    ...                      {"question": "Is the cat black?", "kind": "entity", "fine": 0.2, "coarse": 0.4,
    ...                       "best": 0, "candidates": [0, 1], "probabilities": [0.2, 0.1]}]}
    >>> from ts2viz.qa.details import question_table
    >>> question_table("crops", det)[["question", "fine", "coarse", "best_label"]]
                question  fine  coarse        best_label
    0    Is there a cat?   0.9     0.7  box 0 (cat 0.87)
    1  Is the cat black?   0.2     0.4       whole image
    """
    import pandas as pd

    from .views import image_question_table

    _check_kind(kind)
    if kind in RATING_KINDS:
        rows = [{**r, "question": r["rating"]} for r in judge_ratings(kind, detail or {})]
        return pd.DataFrame(rows, columns=["question_id", "aspect", "rating", "question", "value", "reasoning",
                                           "parsed", "reply"])
    if kind in ANSWER_KINDS:
        if not detail:
            return pd.DataFrame(columns=["question_id", "question", "choices", "expected", "answer", "mapped",
                                         "correct"] + (["parents", "counted"] if kind == DEPENDENT else []))
        if not is_normalized(detail):
            recs = records_from_details("m", question_kind(kind), ["image"], [detail])
            out = image_question_table(recs, "image", accumulation=accumulation or "gated")
            if kind == DEPENDENT and accumulation is None:
                by_id = {int(r["question_id"]): bool(r.get("counted", r["correct"])) for r in detail}
                out["counted"] = [by_id.get(int(q), False) for q in out["question_id"]]
            return out
        rows = []
        for r in sorted(detail, key=lambda r: int(r["question_id"])):
            row = {"question_id": int(r["question_id"]), "question": str(r["question"]),
                   "choices": [str(c) for c in r["choices"]], "expected": str(r["expected"]),
                   "probabilities": {str(k): _float(v) for k, v in (r.get("probabilities") or {}).items()},
                   "mapped": str(r.get("mapped", "")), "correct": bool(r["correct"]),
                   "normalized": _float(r.get("normalized"))}
            if kind == DEPENDENT:
                row["parents"] = [int(p) for p in r.get("parents") or ()]
                row["counted"] = _float(r.get("counted"))
            rows.append(row)
        return pd.DataFrame(rows)
    if kind == COVERAGE:
        cols = ["question_id", "word", "type", "question", "choices", "expected", "hypothesis", "nli", "kept",
                "probabilities", "normalized"]
        rows = []
        for k, q in enumerate((detail or {}).get("questions") or []):
            rows.append({"question_id": k, "word": str(q.get("word", "")), "type": str(q.get("type", "")),
                         "question": str(q.get("question", "")), "choices": [str(c) for c in q.get("choices") or ()],
                         "expected": str(q.get("expected", "")), "hypothesis": str(q.get("hypothesis", "")),
                         "nli": _float(q.get("nli")), "kept": bool(q.get("kept", True)),
                         "probabilities": {str(c): _float(p) for c, p in (q.get("probabilities") or {}).items()},
                         "normalized": _float(q.get("normalized"))})
        return pd.DataFrame(rows, columns=cols)
    cols = ["question_id", "kind", "question", "fine", "coarse", "best", "best_label", "candidates", "probabilities"]
    rows = []
    for k, q in enumerate((detail or {}).get("questions") or []):
        best = int(q.get("best", 0))
        rows.append({"question_id": k, "kind": str(q.get("kind", "")), "question": str(q.get("question", "")),
                     "fine": _float(q.get("fine")), "coarse": _float(q.get("coarse")), "best": best,
                     "best_label": candidate_label(detail, best),
                     "candidates": [int(c) for c in q.get("candidates") or ()],
                     "probabilities": [_float(p) for p in q.get("probabilities") or ()]})
    return pd.DataFrame(rows, columns=cols)


# -- T2I-FineEval boxes ---------------------------------------------------------------------------------------

#: detection box colours (cycled) and the colour of the selected question's best crop
BOX_COLORS = ("#2563eb", "#0891b2", "#d97706", "#7c3aed", "#65a30d", "#db2777", "#0d9488", "#b45309")
BEST_COLOR = "#e11d48"


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def _tag(draw, xy: tuple[float, float], text: str, color: str, font, bounds: tuple[int, int]) -> None:
    """A filled label with white text whose top-left corner is near ``xy``, kept inside the image."""
    l, t, r, b = draw.textbbox((0, 0), text, font=font)
    w, h = r - l + 8, b - t + 6
    x = min(max(0, xy[0]), max(0, bounds[0] - w))
    y = xy[1] - h if xy[1] - h >= 0 else xy[1]
    y = min(max(0, y), max(0, bounds[1] - h))
    draw.rectangle((x, y, x + w, y + h), fill=color)
    draw.text((x + 4 - l, y + 3 - t), text, fill="white", font=font)


def _outline(box, fx: float, fy: float, size: tuple[int, int]) -> tuple[float, float, float, float]:
    """A pixel box of the details scaled to the drawing, its far edges on the last pixel inside.

    PIL draws an outline inward from (x0, y0, x1, y1) with x1 and y1 included, so a box ending at the
    image's width would lose a column of its line off the image.
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    w, h = size[0] - 1, size[1] - 1
    return (min(max(0.0, x0 * fx), w), min(max(0.0, y0 * fy), h), min(max(0.0, x1 * fx), w), min(max(0.0, y1 * fy), h))


def draw_fineeval_boxes(image, detail: dict, question: int | None = None, *, min_side: int = 360,
                        max_side: int = 720):
    """A T2I-FineEval image with its detections drawn, and a question's best crop highlighted.

    Each detection is outlined in a colour of :data:`BOX_COLORS` (cycled) and labelled with its index,
    label and confidence; the labels are drawn after all boxes, so that no box crosses a label.

    Parameters
    ----------
    image : PIL.Image.Image
        The image the metric scored (any size: the details' pixel boxes are scaled from
        ``detail["image_size"]``).
    detail : dict
        The image's T2I-FineEval details (``image_size``, ``detections``, ``candidates``,
        ``questions``).
    question : int, optional
        Index of a question in ``detail["questions"]``: its ``best`` candidate (the crop that gave its
        fine score, as cropped: the detection box grown by the metric's margin) is drawn thick in
        :data:`BEST_COLOR`, labelled with its P(yes) in the bottom-left corner; a best crop that is the
        whole image is drawn as a frame on the image's outermost pixels; the detections it is made of
        keep their full line width, the others are drawn thinner. None (or an index out of range): every
        detection alike. Every outline is drawn inward from its box's edges and kept inside the image,
        so a box that touches the image's border shows its full line width there too.
    min_side, max_side : int, default 360 and 720
        The drawing's longer side is scaled into this range (small images are enlarged so that labels
        stay readable).

    Returns
    -------
    PIL.Image.Image
        A new RGB image; ``image`` is not changed.

    Examples
    --------
    >>> det = {"image_size": [100, 80],
    ...        "detections": [{"label": "cat", "score": 0.87, "box": [10, 10, 60, 50]},
    ...                       {"label": "tree", "score": 0.5, "box": [60, 0, 100, 80]}],
    ...        "candidates": [{"kind": "image"}, {"kind": "box", "detections": [0], "box": [5, 5, 65, 55]},
    ...                       {"kind": "boxes", "detections": [0, 1], "box": [5, 0, 100, 80]}],
    ...        "questions": [{"question": "Is there a cat?", "kind": "entity", "fine": 0.9, "coarse": 0.7,
    ...                       "best": 1, "candidates": [0, 1], "probabilities": [0.7, 0.9]},
    ...                      {"question": "Is the cat black?", "kind": "entity", "fine": 0.2, "coarse": 0.4,
    ...                       "best": 0, "candidates": [0, 1], "probabilities": [0.2, 0.1]}]}
    >>> from PIL import Image
    >>> from ts2viz.qa.details import draw_fineeval_boxes
    >>> draw_fineeval_boxes(Image.new("RGB", (100, 80), "white"), det, question=0).size
    (360, 288)
    """
    from PIL import Image, ImageDraw

    im = image.convert("RGB")
    size = detail.get("image_size") or list(im.size)
    sw, sh = float(size[0]) or 1.0, float(size[1]) or 1.0
    longer = max(im.size)
    scale = min(max(1.0, min_side / longer), max_side / longer) if longer else 1.0
    out = im.resize((max(1, round(im.size[0] * scale)), max(1, round(im.size[1] * scale))), Image.BICUBIC)
    fx, fy = out.size[0] / sw, out.size[1] / sh
    draw = ImageDraw.Draw(out)
    font = _font(max(11, round(out.size[0] / 45)))
    dets = detail.get("detections") or []
    qs = detail.get("questions") or []
    sel = qs[question] if question is not None and 0 <= question < len(qs) else None
    best = int(sel.get("best", 0)) if sel else None
    cands = detail.get("candidates") or []
    best_dets = set(int(i) for i in cands[best].get("detections") or ()) if sel and 0 <= best < len(cands) else set()
    thin = max(2, round(out.size[0] / 240))
    tags = []  # drawn after every detection's box, so that no box crosses a label
    for i, d in enumerate(dets):
        x0, y0, x1, y1 = (float(v) for v in d["box"])
        color = BOX_COLORS[i % len(BOX_COLORS)]
        width = thin if sel is None or i in best_dets else max(1, thin - 1)
        draw.rectangle(_outline(d["box"], fx, fy, out.size), outline=color, width=width)
        tags.append(((x0 * fx, y0 * fy), f"{i} {d.get('label', '?')} {_float(d.get('score')):.2f}", color))
    for xy, text, color in tags:
        _tag(draw, xy, text, color, font, out.size)
    if sel is not None and 0 <= best < len(cands):
        # the selected question's crop last, over every label: it is what the view is about
        p = _float(sel.get("fine"))
        thick = max(4, 2 * thin)
        if cands[best].get("kind") == "image":     # the frame: the outermost pixels, inward
            draw.rectangle((0, 0, out.size[0] - 1, out.size[1] - 1), outline=BEST_COLOR, width=thick)
        else:
            draw.rectangle(_outline(cands[best]["box"], fx, fy, out.size), outline=BEST_COLOR, width=thick)
        # in the bottom-left corner, clear of the detections' labels (which sit on their boxes' tops)
        _tag(draw, (thick, out.size[1]), f"best crop: {candidate_label(detail, best)} · P(yes) {p:.2f}", BEST_COLOR,
             font, out.size)
    return out


__all__ = ["QUESTIONS", "DEPENDENT", "COVERAGE", "CROPS", "ASPECTS", "RATINGS", "DETAIL_KINDS", "ANSWER_KINDS",
           "RATING_KINDS", "SOFT_KINDS", "BOX_KINDS", "question_kind", "details_of_questions", "judge_ratings",
           "rating_goodness", "DETAIL_RECORD_COLUMNS", "detail_records", "question_table", "candidate_label",
           "draw_fineeval_boxes", "is_normalized", "BOX_COLORS", "BEST_COLOR"]
