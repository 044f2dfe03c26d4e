"""TIFA and DSG: question-answering metrics on the shared VQA backend.

Each image's prompt has a set of questions (see :mod:`.questions`). The VQA model answers every
question free-form; the answer is mapped to one of the question's choices (:func:`match_choice`) and
compared with the expected answer.

* TIFA = fraction of questions answered correctly.
* DSG = the same, except a question counts as wrong when any of its parents was answered wrong (the
  parents' own answers decide, as in the DSG reference implementation; no transitive propagation).

The per-question records of the last call are in ``metric.last_details`` (one list per image, each
record a dict: id, question, choices, expected, answer, predicted, correct, parents, counted).
"""
from __future__ import annotations

import difflib
import re
from typing import Sequence

import numpy as np

from ..errors import InputError
from .accumulation import (ACCUMULATIONS, DEFAULT_ACCUMULATION, check_accumulation, dsg_counted, dsg_score,
                           tifa_score)
from .base import Metric
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


class QAMetric(Metric):
    """TIFA or DSG over a :class:`VQAModel` and a :class:`QuestionSource`."""

    has_details = True

    def __init__(self, spec: Spec, kind: str, vqa: VQAModel, source: QuestionSource,
                 batch_size: int | None = None, max_new_tokens: int = 10, list_choices: bool | None = None):
        self.kind = kind
        self.name = kind
        self.vqa = vqa
        self.source = source
        self.max_new_tokens = max_new_tokens
        # Generative VLMs answer open questions verbosely; listing the choices keeps answers mappable.
        self.list_choices = vqa.generative if list_choices is None else bool(list_choices)
        config = {"family": kind, **vqa.config, **source.config, "answer": "free-form -> choice",
                  "list_choices": self.list_choices, "max_new_tokens": max_new_tokens}
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

    def score_with_details(self, images: Sequence, prompts: Sequence[str]) -> tuple[np.ndarray, list]:
        """Scores plus, per image, the per-question records (see module docstring)."""
        s = self(images=images, prompts=prompts)
        return s, list(self.last_details or [])


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
           **options) -> Metric:
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    source = QuestionSource(kind, questions, _generator(generator, generator_model, api_key, api_key_env, device))
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size, template=template)
    return QAMetric(spec, kind, vqa, source, batch_size, max_new_tokens, list_choices)


def build_tifa(spec: Spec, device: str | None = None, **options) -> Metric:
    return _build("tifa", spec, device, **options)


def build_dsg(spec: Spec, device: str | None = None, **options) -> Metric:
    return _build("dsg", spec, device, **options)
