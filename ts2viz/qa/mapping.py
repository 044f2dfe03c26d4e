"""From a VQA model's free-form answer to one of a question's choices, as TIFA and the TS2 release do it.

A mapper is chosen by the ``mapper=`` option of a TIFA/DSG spec and is part of the metric's config:

``sbert:MODEL`` (default ``sbert:sentence-transformers/all-mpnet-base-v2``)
    Sentence-BERT: tokens mean-pooled under the attention mask, L2-normalised, argmax of the cosine
    between the answer and each choice (the first choice wins a tie). MODEL is a hub id or a local
    folder, loaded with transformers ``AutoModel`` + ``AutoTokenizer``. Which answers go to it is the
    mapper's *rule* (:data:`RULES`, the ``mapper_rule=`` option of TIFA and DSG):

    ``tifa`` (TIFA's ``VQAModel.multiple_choice_vqa``; the default for ``tifa:``)
        an answer that is one of the choices is taken as is; any other answer goes to Sentence-BERT,
        yes/no questions included.
    ``ts2`` (the TS2 release's ``freeform_to_multiple_choice.py``)
        a question with fewer than three choices (yes/no, and the one ``young|old`` question) is
        answered "yes" exactly when the answer contains "yes" (case-insensitive substring), else "no";
        every other answer goes to Sentence-BERT, even one that is a choice. The release embedded the
        answers as the VQA models wrote them, so mPLUG's and LLaVA's kept their trailing ``</s>``,
        which the all-mpnet tokenizer reads as its separator token: that changes the argmax for some
        whole-sentence answers ("The person is a man.</s>" is "woman"), and reproducing the release
        needs the ``</s>`` back (``benchmarks/mapper_agreement.py``).
    ``contains_yes`` (the default for ``dsg:``; ts2viz's rule before the TIFA rule was added)
        a yes/no question is answered "yes" exactly when the answer contains "yes"; any other answer
        is taken as is when it is a choice, else goes to Sentence-BERT.
``lexical``
    the model-free fallback: normalised exact match, then a choice contained in the answer as whole
    words (for yes/no the answer's first word), then string similarity (difflib) plus word overlap.
    It picks another choice than the release for 11-25 % of TIFA answers and up to 13 % of DSG
    answers (README), so scores differ from TIFA's; use it only where the SBERT model cannot be loaded.

A mapped choice is correct when it is the expected answer (:func:`is_correct`); the release's code
calls a yes/no question correct when its answer contains "yes" even where the expected answer is "no"
(one TS2 question).

What counts as a "yes" is one named rule (:data:`YES_RULES`, :func:`reads_yes`), used both for live
answers (``dsg:MODEL?yes_rule=...``, :func:`yes_no_choice`, the ``ts2`` and ``contains_yes`` mapper
rules) and for released answers (:mod:`ts2viz.gold.answers`):

``exact`` (DSG's InstructBLIP and mPLUG path, :data:`DSG_YES_RULE`)
    the answer string, as the model decoded it and stripped, equals ``yes`` (j-min/DSG
    ``calc_vqa_score``: ``float(answer == gt_answer)`` with ``gt_answer = 'yes'``); "Yes", "yes." and
    "yes, it is" are not yes, nor is a missing answer. Right for VQA models that answer in their
    training vocabulary's lower case (InstructBLIP with DSG's decoding, BLIP-VQA, mPLUG).
``chat`` (DSG's chat-model path, :data:`DSG_CHAT_YES_RULE`)
    j-min/DSG ``GPT4o.vqa``: the reply is lower-cased and stripped, ``.`` ``,`` ``?`` ``!`` are removed,
    and the rest must equal ``yes`` ("Yes", "Yes." and " YES!" are yes; "Yes, there is" and "yes ." are
    not). DSG asks such models "Answer only with 'yes' or 'no'. Do not give other outputs or punctuation
    marks. Question: ..." (:data:`DSG_CHAT_INSTRUCTION`); the rule is made for answers to that prompt.
``contains`` (TS2's code, :data:`TS2_YES_RULE`)
    ``yes`` occurs anywhere in the lower-cased answer ("Yes.", "yes, it is", also "eyes" and
    "Yesterday"); what the TS2 release's ``freeform_to_multiple_choice.py`` does.

On the TS2 release's recorded DSG answers (17,114 per model) the three rules read this share as yes
(``tests/metrics/reference/test_recorded_answers.py``): BLIP1 58.0 / 58.0 / 58.0 %, InstructBLIP 52.7 /
52.7 / 56.8 %, Fuyu 9.2 / 14.0 / 54.7 %, LLaVA-1.5 0.0 / 38.9 / 52.7 %, LLaVA-1.5-alt 0.0 / 0.0 / 60.2 %,
mPLUG-Owl 0.0 / 0.0 / 65.8 % (exact / chat / contains): those models were not asked DSG's prompt and
answer "Yes", "Yes there is a man in the image." and so on, which only ``contains`` reads as yes.
"""
from __future__ import annotations

import difflib
import re
from collections import OrderedDict
from typing import Sequence

import numpy as np

from ..errors import InputError

DEFAULT_MAPPER = "sbert:sentence-transformers/all-mpnet-base-v2"
#: Which answers a Sentence-BERT mapper embeds (module docstring).
RULES = ("tifa", "ts2", "contains_yes")
DEFAULT_RULE = "contains_yes"

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


#: how an answer string is read as "yes" (module docstring): live and released answers alike
YES_RULES: tuple[str, ...] = ("exact", "chat", "contains")
#: DSG's InstructBLIP/mPLUG rule, DSG's chat-model (GPT-4o) rule and TS2's code's rule (its leaderboard's
#: reproduction)
DSG_YES_RULE = "exact"
DSG_CHAT_YES_RULE = "chat"
TS2_YES_RULE = "contains"
#: the instruction DSG's ``GPT4o.vqa`` puts before each question (j-min/DSG ``dsg/vqa_utils.py``)
DSG_CHAT_INSTRUCTION = ("Answer only with 'yes' or 'no'. Do not give other outputs or punctuation marks. "
                        "Question: {question}")


def check_yes_rule(rule: str) -> str:
    """``rule`` if it is one of :data:`YES_RULES`, else a one-line :class:`InputError`."""
    if rule not in YES_RULES:
        raise InputError(f"unknown yes rule {rule!r}: expected one of {', '.join(YES_RULES)}")
    return rule


def chat_answer(answer: str) -> str:
    """An answer as DSG's ``GPT4o.vqa`` returns it: lower case, stripped, without ``. , ? !``.

    Examples
    --------
    >>> chat_answer(" Yes.")
    'yes'
    >>> chat_answer("Yes, there is.")
    'yes there is'
    """
    answer = answer.lower().strip()
    for mark in ".,?!":
        answer = answer.replace(mark, "")
    return answer


def reads_yes(answer, rule: str) -> bool:
    """Whether one answer reads as "yes" under ``rule`` (:data:`YES_RULES`); a non-string (None, NaN)
    never does.

    Examples
    --------
    >>> [reads_yes("Yes.", r) for r in YES_RULES]
    [False, True, True]
    """
    check_yes_rule(rule)
    if not isinstance(answer, str):
        return False
    if rule == "exact":
        return answer == "yes"
    if rule == "chat":
        return chat_answer(answer) == "yes"
    return "yes" in answer.lower()


def is_yes(answers, rule: str = DSG_YES_RULE) -> np.ndarray:
    """:func:`reads_yes` for each answer: a bool array (released answers are read with this)."""
    check_yes_rule(rule)
    return np.fromiter((reads_yes(a, rule) for a in answers), dtype=bool, count=len(answers))


def yes_no_choice(answer: str, choices: Sequence[str], rule: str = TS2_YES_RULE) -> str:
    """The choice spelling "yes" if the answer reads as yes under ``rule`` (:func:`reads_yes`), else the one
    spelling "no"."""
    want = "yes" if reads_yes(answer, rule) else "no"
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

    def __init__(self, model: str, device: str | None = None, batch_size: int = 64, cache_size: int = 4096,
                 rule: str = DEFAULT_RULE):
        if rule not in RULES:
            raise InputError(f"mapper rule {rule!r}: expected one of {', '.join(RULES)}")
        self.rule = rule
        from transformers import AutoModel, AutoTokenizer

        from ..metrics.common.hub import check_model_id, hf_load, model_identity
        from ..metrics.common.device import resolve_device
        from ..metrics.common.spec import Spec

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
        # the default rule is left out, so that caches made before the rules were named stay valid
        return {"mapper": "sbert", **self._ident, **({} if self.rule == DEFAULT_RULE else {"rule": self.rule})}

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
            elif self.rule == "ts2" and len(cs) < 3:
                out[i] = "yes" if reads_yes(str(a), TS2_YES_RULE) else "no"  # the release writes these two words
            elif self.rule == "contains_yes" and is_yes_no(cs):
                out[i] = yes_no_choice(a, cs)
            elif self.rule != "ts2" and a in cs:  # TIFA's shortcut: an answer that is a choice is taken
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


def load_mapper(spec: str | None = None, device: str | None = None, rule: str | None = None) -> AnswerMapper:
    """The mapper named by a ``mapper=`` option: ``sbert:MODEL`` (default :data:`DEFAULT_MAPPER`) or
    ``lexical``; ``rule`` (:data:`RULES`, default :data:`DEFAULT_RULE`) for Sentence-BERT."""
    spec = DEFAULT_MAPPER if spec in (None, "") else str(spec)
    if rule not in (None, "", *RULES):
        raise InputError(f"mapper rule {rule!r}: expected one of {', '.join(RULES)}")
    if spec == "lexical":
        return LexicalMapper()
    if spec.startswith("sbert:") and spec[len("sbert:"):].strip():
        return SBERTMapper(spec[len("sbert:"):].strip(), device=device, rule=rule or DEFAULT_RULE)
    raise InputError(f"mapper {spec!r}: expected sbert:MODEL (a Sentence-BERT hub id or folder) or lexical")
