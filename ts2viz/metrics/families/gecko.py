"""Gecko (Wiles et al., "One slice is not enough", Sec. 5): coverage-grounded QA with NLI filtering.

For a prompt T and an image I:

1. an LLM labels T's visually groundable words (coverage) and writes one yes/no QA pair per labelled
   word (:mod:`.gecko_questions`; the replies are cached on disk, :mod:`ts2viz.metrics.common.llmcache`);
2. an NLI model scores whether T entails each QA pair, read as a hypothesis
   (:func:`.gecko_questions.qa_hypothesis`); a pair scoring below ``nli_threshold`` (0.005, as in the
   paper) is dropped as a hallucination;
3. a VQA model gives the likelihood of every answer choice of every kept question; a question scores
   P(expected) / sum P(choices) (Eq. 2 with likelihoods, not negative log likelihoods:
   :mod:`ts2viz.metrics.common.choicescore`), and the image scores the mean over the kept questions (no dependencies).

The paper runs PaLM-2 (LLM), PaLI (VQA) and T5-11B TRUE (NLI). Here the VQA model is the spec's model
(PaliGemma is the open stand-in for PaLI; any model of :mod:`ts2viz.metrics.backbones.vqa` works), the LLM is the
``generator=`` option and the NLI model ``nli=`` (default ``google/t5_xxl_true_nli_mixture``).

Per-image details (``metric.last_details``): ``{"coverage": [...], "questions": [...], "n_kept": k}``;
each question record has its word, type, question, choices, expected answer, hypothesis, NLI score,
``kept`` and, when kept, each choice's likelihood (``probabilities``) and the normalised score
(``normalized``).
"""
from __future__ import annotations

import hashlib
from dataclasses import asdict
from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.choicescore import choice_index, normalized_probability
from .gecko_questions import (COVERAGE_SYSTEM, QA_SYSTEM, QA_SYSTEMS, CoverageWord, QAPair, parse_coverage, parse_qa,
    qa_hypothesis, qa_user_message)
from ..backbones.llm import load_llm
from ..common.llmcache import cached_reply
from ..backbones.nli import DEFAULT_NLI, load_nli
from ..common.spec import Spec
from ..backbones.vqa import VQAModel, load_vqa_model

NLI_THRESHOLD = 0.005
PROMPTS_ID = "ts2viz-gecko-v1:" + hashlib.sha1((COVERAGE_SYSTEM + QA_SYSTEM).encode()).hexdigest()[:12]
#: ``question_style=`` values (see :data:`.gecko_questions.QA_SYSTEMS`); ``tifa`` is the default.
QUESTION_STYLES = tuple(QA_SYSTEMS)


def prompts_id(question_style: str) -> str:
    """The identity of the few-shot prompts of a question style (part of the metric's config)."""
    if question_style == "yes_no":
        return PROMPTS_ID  # unchanged, so that caches of the yes/no style stay valid
    return "ts2viz-gecko-tifa-v1:" + hashlib.sha1((COVERAGE_SYSTEM + QA_SYSTEMS[question_style]).encode()).hexdigest()[:12]


class GeckoQuestions:
    """A prompt's coverage labels and NLI-checked QA pairs, from an LLM (cached) and an NLI model."""

    def __init__(self, llm, nli=None, *, nli_threshold: float = NLI_THRESHOLD, hypothesis: str = "auto",
                 min_groundability: float = 0.0, use_cache: bool = True, question_style: str = "tifa"):
        if question_style not in QA_SYSTEMS:
            raise InputError(f"gecko: question_style must be one of {', '.join(QA_SYSTEMS)}, not {question_style!r}")
        self.question_style = question_style
        self.llm = llm
        self.nli = nli
        self.nli_threshold = float(nli_threshold)
        self.hypothesis = hypothesis
        self.min_groundability = float(min_groundability)
        self.use_cache = use_cache
        self._memo: dict[str, tuple[list[CoverageWord], list[QAPair]]] = {}

    @property
    def config(self) -> dict:
        return {"generator": self.llm.config, "prompts": prompts_id(self.question_style), "min_groundability": self.min_groundability,
                "hypothesis": self.hypothesis, "nli": self.nli.config if self.nli is not None else None,
                "nli_threshold": self.nli_threshold if self.nli is not None else None}

    def coverage(self, prompt: str) -> list[CoverageWord]:
        return cached_reply(self.llm, COVERAGE_SYSTEM, f"Prompt: {prompt}", parse_coverage, use_cache=self.use_cache)

    def qa_pairs(self, prompt: str, words: list[CoverageWord]) -> list[QAPair]:
        return cached_reply(self.llm, QA_SYSTEMS[self.question_style], qa_user_message(prompt, words), lambda r: parse_qa(r, words),
                            use_cache=self.use_cache)

    def get(self, prompt: str) -> tuple[list[CoverageWord], list[QAPair]]:
        """Coverage labels and QA pairs (each with ``hypothesis``, ``nli`` and ``kept``) of ``prompt``."""
        if prompt in self._memo:
            return self._memo[prompt]
        words = self.coverage(prompt)
        asked = [w for w in words if w.groundability >= self.min_groundability]
        if not asked:
            raise InputError(f"gecko: no labelled word of {prompt[:70]!r} reaches min_groundability="
                             f"{self.min_groundability}")
        pairs = self.qa_pairs(prompt, asked)
        for p in pairs:
            p.hypothesis = qa_hypothesis(p.question, p.expected, self.hypothesis)
        if self.nli is not None:
            scores = self.nli.entailment([prompt] * len(pairs), [p.hypothesis for p in pairs])
            for p, s in zip(pairs, scores):
                p.nli = float(s)
                p.kept = bool(s >= self.nli_threshold)
                p.note = "" if p.kept else f"NLI entailment {s:.2g} < {self.nli_threshold}"
        self._memo[prompt] = (words, pairs)
        return words, pairs


def ask(q: QAPair, list_choices: bool) -> str:
    """The question put to the VQA model (for chat VLMs, with the choices spelt out)."""
    if not list_choices:
        return q.question
    if {c.lower() for c in q.choices} == {"yes", "no"}:
        return f"{q.question} Answer yes or no."
    return f"{q.question} Choose one: {', '.join(q.choices)}."


class Gecko(Metric):
    """The Gecko metric over a :class:`VQAModel` and :class:`GeckoQuestions` (see module docstring)."""

    name = "gecko"
    has_details = True

    def __init__(self, spec: Spec, vqa: VQAModel, questions: GeckoQuestions, batch_size: int | None = None,
                 list_choices: bool | None = None):
        self.vqa = vqa
        self.questions = questions
        # Chat VLMs answer "yes"/"no" more reliably when told to; PaliGemma/BLIP take the bare question.
        self.list_choices = bool(getattr(vqa, "chat", False)) if list_choices is None else bool(list_choices)
        config = {"family": "gecko", **vqa.config, "vqa_dtype": str(vqa.dtype), **questions.config,
                  "list_choices": self.list_choices,
                  "score": "mean over kept questions of P(expected)/sum P(choices), likelihoods"}
        super().__init__(spec, config, vqa.device, batch_size or 4)

    def check_prompts(self, prompts: Sequence[str]) -> None:
        """Generate (or read from the cache) every prompt's questions before any image is scored."""
        for p in dict.fromkeys(prompts):
            self.questions.get(p)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        sets = [self.questions.get(p) for p in prompts]
        images, texts, choices, where = [], [], [], []
        for i, (im, (_, pairs)) in enumerate(zip(items, sets)):
            for k, q in enumerate(pairs):
                if q.kept:
                    images.append(im)
                    texts.append(ask(q, self.list_choices))
                    choices.append(q.choices)
                    where.append((i, k))
        logprobs = self.vqa.choice_logprobs(images, texts, choices) if images else []
        per_image: list[dict[int, tuple[np.ndarray, float]]] = [{} for _ in items]
        for (i, k), lp in zip(where, logprobs):
            q = sets[i][1][k]
            per_image[i][k] = (lp, normalized_probability(lp, choice_index(q.choices, q.expected)))
        scores = np.full(len(items), np.nan)
        details = []
        for i, (words, pairs) in enumerate(sets):
            recs = []
            for k, q in enumerate(pairs):
                r = q.record()
                if k in per_image[i]:
                    lp, norm = per_image[i][k]
                    r["probabilities"] = {c: float(np.exp(v)) for c, v in zip(q.choices, lp)}
                    r["normalized"] = norm
                recs.append(r)
            vals = [v for _, v in per_image[i].values()]
            scores[i] = float(np.mean(vals)) if vals else float("nan")
            details.append({"coverage": [asdict(w) for w in words], "questions": recs, "n_kept": len(vals)})
        self.last_details = details
        return scores


def build(spec: Spec, device: str | None = None, *, generator: str | None = None, generator_model: str | None = None,
          api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY", nli: str = DEFAULT_NLI,
          nli_threshold: float = NLI_THRESHOLD, hypothesis: str = "auto", min_groundability: float = 0.0,
          batch_size: int | None = None, pair_batch_size: int | None = None, nli_batch_size: int | None = None,
          dtype: str | None = None, template: str | None = None, list_choices: bool | None = None,
          llm_cache: bool = True, question_style: str = "tifa", **options) -> Metric:
    """``gecko:VQA_MODEL?generator=URL|hf:MODEL&...`` (options: see the README's Gecko section)."""
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    if not generator:
        raise InputError(f"metric {spec.raw!r}: Gecko writes its questions with an LLM: give "
                         "?generator=URL&generator_model=NAME (OpenAI-compatible API) or ?generator=hf:MODEL")
    try:
        thr = float(nli_threshold)
        min_g = float(min_groundability)
    except (TypeError, ValueError):
        raise InputError(f"metric {spec.raw!r}: nli_threshold and min_groundability must be numbers") from None
    if not 0.0 <= thr <= 1.0 or not 0.0 <= min_g <= 1.0:
        raise InputError(f"metric {spec.raw!r}: nli_threshold and min_groundability must lie in [0, 1]")
    if hypothesis != "auto" and ("{question}" not in str(hypothesis) or "{answer}" not in str(hypothesis)):
        raise InputError(f"metric {spec.raw!r}: hypothesis must be 'auto' or a template with {{question}} "
                         "and {answer}")
    if question_style not in QUESTION_STYLES:
        raise InputError(f"metric {spec.raw!r}: question_style must be one of {', '.join(QUESTION_STYLES)}")
    llm = load_llm(str(generator), model=generator_model, api_key=api_key, api_key_env=api_key_env, device=device)
    nli_model = None
    if str(nli).lower() not in ("none", "off", "false", ""):
        nli_model = load_nli(str(nli), device, batch_size=nli_batch_size, owner=spec.raw)
    questions = GeckoQuestions(llm, nli_model, nli_threshold=thr, hypothesis=str(hypothesis),
                               min_groundability=min_g, use_cache=bool(llm_cache), question_style=str(question_style))
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size, template=template)
    return Gecko(spec, vqa, questions, batch_size, list_choices)
