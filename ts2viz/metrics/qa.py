"""TIFA and DSG: question-answering metrics on the shared VQA backend.

Each image's prompt has a set of questions (see :mod:`.questions`). The VQA model answers every
question free-form; the answer is mapped to one of the question's choices (:func:`match_choice`) and
compared with the expected answer.

* TIFA = fraction of questions answered correctly.
* DSG = the same, except a question counts as wrong when any of its parents was answered wrong (the
  parents' own answers decide, as in the DSG reference implementation; no transitive propagation).

The per-question records of the last call are in ``metric.last_details`` (one list per image, each
record a dict: id, question, choices, expected, answer, predicted, correct, parents, counted).

With ``score=normalized`` a question scores Gecko's normalised answer likelihood instead of 0/1
(:mod:`.choicescore`, :meth:`QAMetric.score_normalized`).
"""
from __future__ import annotations

import difflib
import re
from typing import Sequence

import numpy as np

from ..errors import InputError
from .base import Metric
from .choicescore import choice_index, normalized_probability
from .llm import load_llm
from .questions import Question, QuestionGenerator, QuestionSource
from .spec import Spec
from .vqa import VQAModel, load_vqa_model

_NUMBERS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}
_ARTICLES = {"a", "an", "the"}


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation or articles, number words as digits, single spaces."""
    words = re.sub(r"[^\w\s]", " ", str(text).lower()).split()
    return " ".join(_NUMBERS.get(w, w) for w in words if w not in _ARTICLES)


def match_choice(answer: str, choices: Sequence[str]) -> str:
    """The choice a free-form ``answer`` means: exact (normalised) match, then a choice contained in the
    answer as whole words (longest first; for yes/no the answer's first word), then the most similar
    choice by character similarity (difflib) plus word overlap."""
    if not choices:
        return answer
    a = normalize_answer(answer)
    norm = [normalize_answer(c) for c in choices]
    for c, n in zip(choices, norm):
        if a == n:
            return c
    if a and set(norm) >= {"yes", "no"}:
        first = a.split()[0]
        if first in ("yes", "no"):
            return choices[norm.index(first)]
    padded = f" {a} "
    for c, n in sorted(zip(choices, norm), key=lambda cn: -len(cn[1])):
        if n and f" {n} " in padded:
            return c
    aw = set(a.split())

    def sim(n: str) -> float:
        nw = set(n.split())
        overlap = len(aw & nw) / max(1, len(aw | nw))
        return difflib.SequenceMatcher(None, a, n).ratio() + overlap

    return max(zip(choices, norm), key=lambda cn: sim(cn[1]))[0]


def tifa_score(correct: Sequence[bool]) -> float:
    """Fraction of questions answered correctly (NaN for no questions)."""
    return float(np.mean(correct)) if len(correct) else float("nan")


def dsg_counted(correct: dict[int, bool], parents: dict[int, Sequence[int]]) -> dict[int, bool]:
    """Per question: its own correctness, set False when any parent (by id) was answered wrong.

    A parent id that is not a question of the set is ignored.
    """
    return {q: ok and all(correct.get(p, True) for p in parents.get(q, ())) for q, ok in correct.items()}


def dsg_score(correct: dict[int, bool], parents: dict[int, Sequence[int]]) -> float:
    counted = dsg_counted(correct, parents)
    return float(np.mean(list(counted.values()))) if counted else float("nan")


class QAMetric(Metric):
    """TIFA or DSG over a :class:`VQAModel` and a :class:`QuestionSource`."""

    has_details = True

    def __init__(self, spec: Spec, kind: str, vqa: VQAModel, source: QuestionSource,
                 batch_size: int | None = None, max_new_tokens: int = 10, list_choices: bool | None = None,
                 score: str = "accuracy"):
        check_score_option(spec, score)
        self.score = score
        self.kind = kind
        self.name = kind
        self.vqa = vqa
        self.source = source
        self.max_new_tokens = max_new_tokens
        # Generative VLMs answer open questions verbosely; listing the choices keeps answers mappable.
        self.list_choices = vqa.generative if list_choices is None else bool(list_choices)
        config = {"family": kind, **vqa.config, **source.config, "answer": "free-form -> choice",
                  "list_choices": self.list_choices, "max_new_tokens": max_new_tokens}
        if score == "normalized":  # only then, so that existing caches of the default stay valid
            config.update(answer="choice likelihoods", score="normalized (Gecko Eq. 2)", max_new_tokens=None)
        super().__init__(spec, config, vqa.device, batch_size or 4)

    def check_prompts(self, prompts: Sequence[str]) -> None:
        """Fail early (before any image is scored) if a prompt has no questions; runs the generator."""
        for p in dict.fromkeys(prompts):
            self.source.get(p)

    def ask(self, q: Question) -> str:
        if self.list_choices and q.choices:
            if {c.lower() for c in q.choices} == {"yes", "no"}:
                return f"{q.text} Answer yes or no."
            return f"{q.text} Choose one: {', '.join(q.choices)}."
        return q.text

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        if self.score == "normalized":
            return self.score_normalized(items, prompts)
        qsets = [self.source.get(p) for p in prompts]
        pair_images, pair_questions = [], []
        for im, qs in zip(items, qsets):
            for q in qs:
                pair_images.append(im)
                pair_questions.append(self.ask(q))
        answers = self.vqa.answer(pair_images, pair_questions, max_new_tokens=self.max_new_tokens)
        scores = np.full(len(items), np.nan)
        details = []
        k = 0
        for i, qs in enumerate(qsets):
            recs, correct = [], {}
            for q in qs:
                raw = answers[k]
                k += 1
                pred = match_choice(raw, q.choices)
                ok = normalize_answer(pred) == normalize_answer(q.answer)
                correct[q.id] = ok
                recs.append({"id": q.id, "question": q.text, "choices": list(q.choices), "expected": q.answer,
                             "answer": raw, "predicted": pred, "correct": ok, "parents": list(q.parents)})
            if self.kind == "dsg":
                parents = {q.id: q.parents for q in qs}
                counted = dsg_counted(correct, parents)
                scores[i] = dsg_score(correct, parents)
            else:
                counted = correct
                scores[i] = tifa_score(list(correct.values()))
            for r in recs:
                r["counted"] = counted[r["id"]]
            details.append(recs)
        self.last_details = details
        return scores

    def score_normalized(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """Per question P(expected)/sum P(choices) from the VQA model's choice likelihoods (Gecko Eq. 2).

        An expected answer missing from its choices (4 of TS2's 1,205 TIFA questions) is added to them.
        TIFA: mean over questions. DSG: the same, with a question counting 0 when a parent's most likely
        choice is not its expected answer (the soft analogue of "answered wrong").
        """
        qsets = [self.source.get(p) for p in prompts]
        pair_images, pair_questions, pair_choices = [], [], []
        for im, qs in zip(items, qsets):
            for q in qs:
                cs = tuple(q.choices) or ("yes", "no")
                pair_images.append(im)
                pair_questions.append(self.ask(q))
                pair_choices.append(cs if choice_index(cs, q.answer) is not None else (*cs, q.answer))
        logprobs = self.vqa.choice_logprobs(pair_images, pair_questions, pair_choices)
        scores = np.full(len(items), np.nan)
        details, k = [], 0
        for i, qs in enumerate(qsets):
            recs, value, correct = [], {}, {}
            for q in qs:
                lp, cs = logprobs[k], pair_choices[k]
                k += 1
                a = choice_index(cs, q.answer)
                value[q.id] = normalized_probability(lp, a)
                correct[q.id] = int(np.argmax(lp)) == a
                recs.append({"id": q.id, "question": q.text, "choices": list(cs), "expected": q.answer,
                             "probabilities": {c: float(np.exp(v)) for c, v in zip(cs, lp)},
                             "predicted": cs[int(np.argmax(lp))], "correct": correct[q.id],
                             "normalized": value[q.id], "parents": list(q.parents)})
            if self.kind == "dsg":
                parents_ok = {q.id: all(correct.get(p, True) for p in q.parents) for q in qs}
                value = {qid: v if parents_ok[qid] else 0.0 for qid, v in value.items()}
            for r in recs:
                r["counted"] = value[r["id"]]
            scores[i] = float(np.mean(list(value.values()))) if value else float("nan")
            details.append(recs)
        self.last_details = details
        return scores

    def score_with_details(self, images: Sequence, prompts: Sequence[str]) -> tuple[np.ndarray, list]:
        """Scores plus, per image, the per-question records (see module docstring)."""
        s = self(images=images, prompts=prompts)
        return s, list(self.last_details or [])


SCORE_MODES = ("accuracy", "normalized")


def check_score_option(spec: Spec, score: str) -> None:
    if score not in SCORE_MODES:
        raise InputError(f"metric {spec.raw!r}: score must be 'accuracy' or 'normalized', not {score!r}")


def _generator(generator: str | None, generator_model: str | None, api_key: str | None, api_key_env: str,
               device: str | None) -> QuestionGenerator | None:
    if not generator:
        return None
    return QuestionGenerator(load_llm(generator, model=generator_model, api_key=api_key, api_key_env=api_key_env,
                                      device=device))


def _build(kind: str, spec: Spec, device: str | None, *, questions: str = "ts2", generator: str | None = None,
           generator_model: str | None = None, api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY",
           batch_size: int | None = None, pair_batch_size: int | None = None, dtype: str | None = None,
           template: str | None = None, max_new_tokens: int = 10, list_choices: bool | None = None,
           score: str = "accuracy", **options) -> Metric:
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    check_score_option(spec, str(score))
    source = QuestionSource(kind, questions, _generator(generator, generator_model, api_key, api_key_env, device))
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size, template=template)
    return QAMetric(spec, kind, vqa, source, batch_size, max_new_tokens, list_choices, str(score))


def build_tifa(spec: Spec, device: str | None = None, **options) -> Metric:
    return _build("tifa", spec, device, **options)


def build_dsg(spec: Spec, device: str | None = None, **options) -> Metric:
    return _build("dsg", spec, device, **options)
