"""From a VQA model's free-form answer to one of a question's choices, as TIFA and the TS2 release do it.

A mapper is chosen by the ``mapper=`` option of a TIFA/DSG spec and is part of the metric's config:

``sbert:MODEL`` (default ``sbert:sentence-transformers/all-mpnet-base-v2``)
    what TIFA and the TS2 release do. A *yes/no question* (choices ``yes`` and ``no``) is answered
    ``yes`` exactly when the answer contains "yes" (case-insensitive substring, as in the TS2
    release's code, so "no, but its eyes are open" maps to yes); any other question takes the
    answer itself when it is one of the choices (TIFA's shortcut), else the choice whose
    Sentence-BERT embedding is closest: tokens mean-pooled under the attention mask, L2-normalised,
    argmax of the cosine (the first choice wins a tie). MODEL is a hub id or a local folder, loaded
    with transformers ``AutoModel`` + ``AutoTokenizer``.
``lexical``
    the model-free fallback: normalised exact match, then a choice contained in the answer as whole
    words (for yes/no the answer's first word), then string similarity (difflib) plus word overlap.
    It picks another choice than the release for 11-25 % of TIFA answers and up to 13 % of DSG
    answers (README), so scores differ from TIFA's; use it only where the SBERT model cannot be loaded.

Known differences from the release: its code also sends the one TS2 question whose two choices are
not yes/no (``young|old``) down the yes/no rule, and it marks a yes/no answer correct when it contains
"yes" even where the expected answer is "no" (one TS2 question); here a mapped choice is correct when
it is the expected answer (:func:`is_correct`).
"""
from __future__ import annotations

import difflib
import re
from collections import OrderedDict
from typing import Sequence

import numpy as np

from ..errors import InputError

DEFAULT_MAPPER = "sbert:sentence-transformers/all-mpnet-base-v2"

_NUMBERS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}
_ARTICLES = {"a", "an", "the"}


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation or articles, number words as digits, single spaces."""
    words = re.sub(r"[^\w\s]", " ", str(text).lower()).split()
    return " ".join(_NUMBERS.get(w, w) for w in words if w not in _ARTICLES)


def is_correct(mapped: str, expected: str) -> bool:
    """Whether a mapped choice is the expected answer (compared after :func:`normalize_answer`)."""
    return normalize_answer(mapped) == normalize_answer(expected)


def is_yes_no(choices: Sequence[str]) -> bool:
    """Whether a question's choices are exactly yes and no (any case, any order)."""
    return len(choices) == 2 and {str(c).strip().lower() for c in choices} == {"yes", "no"}


def yes_no_choice(answer: str, choices: Sequence[str]) -> str:
    """The yes/no rule: the choice spelling "yes" if the answer contains "yes", else the one for "no"."""
    want = "yes" if "yes" in str(answer).lower() else "no"
    return next(c for c in choices if str(c).strip().lower() == want)


def match_choice(answer: str, choices: Sequence[str]) -> str:
    """The lexical mapping of one answer (see the module docstring)."""
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


class AnswerMapper:
    """Interface: :meth:`map` answers to choices in one batch; :attr:`config` names the mapper exactly."""

    @property
    def config(self) -> dict:
        raise NotImplementedError

    def map(self, answers: Sequence[str], choices: Sequence[Sequence[str]]) -> list[str]:
        """One choice per (answer, choices) pair; a question without choices keeps its answer."""
        raise NotImplementedError


class LexicalMapper(AnswerMapper):
    """The model-free fallback (:func:`match_choice`)."""

    @property
    def config(self) -> dict:
        return {"mapper": "lexical"}

    def map(self, answers, choices):
        if len(answers) != len(choices):
            raise InputError(f"mapper: {len(answers)} answers but {len(choices)} choice lists")
        return [match_choice(a, list(c)) for a, c in zip(answers, choices)]


class SBERTMapper(AnswerMapper):
    """Sentence-BERT mapping (see the module docstring) with a transformers encoder.

    ``model`` is a hub id or a local folder. Embeddings of choices are kept in a small in-memory
    cache, since the same choices come back for every image of a prompt.
    """

    def __init__(self, model: str, device: str | None = None, batch_size: int = 64, cache_size: int = 4096):
        from transformers import AutoModel, AutoTokenizer

        from .base import check_model_id, hf_load, model_identity, resolve_device
        from .spec import Spec

        spec = Spec(f"sbert:{model}", "sbert", model)
        try:
            model_id = check_model_id(spec)
            self.tokenizer = hf_load("Sentence-BERT tokenizer", AutoTokenizer.from_pretrained, model_id, spec)
            enc = hf_load("Sentence-BERT model", AutoModel.from_pretrained, model_id, spec)
        except InputError as e:
            raise InputError(f"{e.problem} (answer -> choice mapper; ?mapper=lexical maps answers without a "
                             "model, less faithfully)") from None
        self.device = resolve_device(device)
        self.model = enc.to(self.device).eval()
        self.batch_size = max(1, int(batch_size))
        self._ident = model_identity(model_id, None, enc.config)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    @property
    def config(self) -> dict:
        return {"mapper": "sbert", **self._ident}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised mean-pooled token embeddings (one row per text, float64)."""
        import torch

        out = []
        texts = [str(t) for t in texts]
        for i in range(0, len(texts), self.batch_size):
            enc = self.tokenizer(texts[i:i + self.batch_size], padding=True, truncation=True, return_tensors="pt")
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with torch.inference_mode():
                tokens = self.model(**enc)[0].float()
            mask = enc["attention_mask"].unsqueeze(-1).float()
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(pooled, p=2, dim=1).double().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 0))

    def choice_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Embeddings of ``texts`` (choices), from the cache where possible."""
        got = {t: self._cache[t] for t in texts if t in self._cache}
        new = [t for t in dict.fromkeys(texts) if t not in got]
        if new:
            for t, v in zip(new, self.embed(new)):
                got[t] = self._cache[t] = v
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return got

    def map(self, answers, choices):
        if len(answers) != len(choices):
            raise InputError(f"mapper: {len(answers)} answers but {len(choices)} choice lists")
        out: list[str | None] = [None] * len(answers)
        todo = []
        for i, (a, cs) in enumerate(zip(answers, choices)):
            cs = list(cs)
            if not cs:
                out[i] = a
            elif is_yes_no(cs):
                out[i] = yes_no_choice(a, cs)
            elif a in cs:  # TIFA's shortcut: an answer that is a choice needs no embedding
                out[i] = a
            else:
                todo.append(i)
        if todo:
            answer_vecs = self.embed([str(answers[i]) for i in todo])
            vecs = self.choice_vectors([str(c) for i in todo for c in choices[i]])
            for row, i in enumerate(todo):
                cs = list(choices[i])
                sims = np.stack([vecs[str(c)] for c in cs]) @ answer_vecs[row]
                out[i] = cs[int(np.argmax(sims))]
        return out  # type: ignore[return-value]


def load_mapper(spec: str | None = None, device: str | None = None) -> AnswerMapper:
    """The mapper named by a ``mapper=`` option: ``sbert:MODEL`` (default :data:`DEFAULT_MAPPER`) or ``lexical``."""
    spec = DEFAULT_MAPPER if spec in (None, "") else str(spec)
    if spec == "lexical":
        return LexicalMapper()
    if spec.startswith("sbert:") and spec[len("sbert:"):].strip():
        return SBERTMapper(spec[len("sbert:"):].strip(), device=device)
    raise InputError(f"mapper {spec!r}: expected sbert:MODEL (a Sentence-BERT hub id or folder) or lexical")
