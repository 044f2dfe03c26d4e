"""From a VQA model's free-form answer to one of a question's choices, as TIFA and the TS2 release do it.

A mapper is chosen by the ``mapper=`` option of a TIFA/DSG spec and is part of the metric's config. This
module holds the mappers' rules and runs no model: the Sentence-BERT mapper, and the factory of the option,
are :mod:`ts2viz.metrics.backbones.sbert` (``SBERTMapper``, ``load_mapper``).

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
from typing import Sequence

import numpy as np

from ..errors import InputError

#: Which answers a Sentence-BERT mapper embeds (module docstring).
RULES = ("tifa", "ts2", "contains_yes")
DEFAULT_RULE = "contains_yes"

_NUMBERS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten".split())}
_ARTICLES = {"a", "an", "the"}


def normalize_answer(text: str) -> str:
    """An answer or choice in the form answers are compared in.

    Lower case, punctuation replaced by spaces, the articles *a*, *an*, *the* removed, the number words
    zero to ten written as digits, single spaces.

    Parameters
    ----------
    text : str
        The text (any other object is converted with ``str``).

    Returns
    -------
    str
        The normalised text.

    Examples
    --------
    >>> from ts2viz.qa.mapping import normalize_answer
    >>> normalize_answer("The Two cats!")
    '2 cats'
    """
    words = re.sub(r"[^\w\s]", " ", str(text).lower()).split()
    return " ".join(_NUMBERS.get(w, w) for w in words if w not in _ARTICLES)


def is_correct(mapped: str, expected: str) -> bool:
    """Whether a mapped choice is the expected answer, compared after :func:`normalize_answer`.

    Parameters
    ----------
    mapped : str
        The choice an answer was mapped to.
    expected : str
        The answer an image faithful to the prompt gives.

    Returns
    -------
    bool
        True when both normalise to the same text.

    Examples
    --------
    >>> from ts2viz.qa.mapping import is_correct
    >>> is_correct("Two", "2"), is_correct("a cat", "dog")
    (True, False)
    """
    return normalize_answer(mapped) == normalize_answer(expected)


def is_yes_no(choices: Sequence[str]) -> bool:
    """Whether a question's choices are exactly yes and no (any case, any order).

    Parameters
    ----------
    choices : sequence of str
        The question's answer choices.

    Returns
    -------
    bool
        True for two choices that read ``yes`` and ``no`` after stripping and lower-casing.

    Examples
    --------
    >>> from ts2viz.qa.mapping import is_yes_no
    >>> is_yes_no(["No", "yes"]), is_yes_no(["yes", "no", "maybe"])
    (True, False)
    """
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
    """Check the name of a yes rule.

    Parameters
    ----------
    rule : str
        One of :data:`YES_RULES` (``exact``, ``chat``, ``contains``).

    Returns
    -------
    str
        ``rule``, unchanged.

    Raises
    ------
    InputError
        If ``rule`` is not one of :data:`YES_RULES` (a one-line message listing them).

    Examples
    --------
    >>> from ts2viz.qa.mapping import check_yes_rule
    >>> check_yes_rule("chat")
    'chat'
    """
    if rule not in YES_RULES:
        raise InputError(f"unknown yes rule {rule!r}: expected one of {', '.join(YES_RULES)}")
    return rule


def chat_answer(answer: str) -> str:
    """An answer as DSG's ``GPT4o.vqa`` returns it: lower case, stripped, without ``. , ? !``.

    Parameters
    ----------
    answer : str
        The model's reply.

    Returns
    -------
    str
        The cleaned reply; the ``chat`` yes rule compares it with ``yes``.

    Examples
    --------
    >>> from ts2viz.qa.mapping import chat_answer
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
    """Whether one answer reads as "yes" under a yes rule.

    ``exact``: the answer equals ``yes``; ``chat``: :func:`chat_answer` of it equals ``yes``;
    ``contains``: ``yes`` occurs in the lower-cased answer (see the module docstring for whose rule each
    is).

    Parameters
    ----------
    answer : str or object
        The answer as the model decoded it; a non-string (None, NaN: no answer) never reads as yes.
    rule : str
        One of :data:`YES_RULES`.

    Returns
    -------
    bool
        Whether the answer is a yes.

    Raises
    ------
    InputError
        If ``rule`` is not one of :data:`YES_RULES`.

    Examples
    --------
    >>> from ts2viz.qa.mapping import YES_RULES, reads_yes
    >>> YES_RULES
    ('exact', 'chat', 'contains')
    >>> [reads_yes("Yes.", r) for r in YES_RULES]
    [False, True, True]
    >>> [reads_yes("Yesterday", r) for r in YES_RULES]
    [False, False, True]
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
    """:func:`reads_yes` for each of many answers; released answers are read with this.

    Parameters
    ----------
    answers : sequence
        The answers (strings; anything else, such as None or NaN, is not a yes).
    rule : str, default DSG_YES_RULE
        One of :data:`YES_RULES` (default ``exact``, DSG's code).

    Returns
    -------
    numpy.ndarray
        Bool array, one entry per answer.

    Raises
    ------
    InputError
        If ``rule`` is not one of :data:`YES_RULES`.

    Examples
    --------
    >>> from ts2viz.qa.mapping import is_yes
    >>> is_yes(["yes", "Yes.", None]).tolist()
    [True, False, False]
    >>> is_yes(["yes", "Yes.", None], "contains").tolist()
    [True, True, False]
    """
    check_yes_rule(rule)
    return np.fromiter((reads_yes(a, rule) for a in answers), dtype=bool, count=len(answers))


def yes_no_choice(answer: str, choices: Sequence[str], rule: str = TS2_YES_RULE) -> str:
    """The yes or the no choice of a yes/no question, by whether the answer reads as yes.

    Parameters
    ----------
    answer : str
        The model's free-form answer.
    choices : sequence of str
        The question's choices; the one that reads ``yes`` (or ``no``) after stripping and lower-casing
        is returned as spelled there.
    rule : str, default TS2_YES_RULE
        The yes rule (:func:`reads_yes`; default ``contains``, TS2's code).

    Returns
    -------
    str
        The choice spelling "yes" if the answer reads as yes under ``rule``, else the one spelling "no".

    Raises
    ------
    InputError
        If ``rule`` is not one of :data:`YES_RULES`.
    StopIteration
        If ``choices`` has no choice spelling the word wanted (call it for yes/no questions only,
        :func:`is_yes_no`).

    Examples
    --------
    >>> from ts2viz.qa.mapping import yes_no_choice
    >>> yes_no_choice("Yes, there is.", ["Yes", "No"])
    'Yes'
    >>> yes_no_choice("Yes, there is.", ["Yes", "No"], rule="exact")
    'No'
    """
    want = "yes" if reads_yes(answer, rule) else "no"
    return next(c for c in choices if str(c).strip().lower() == want)


def match_choice(answer: str, choices: Sequence[str]) -> str:
    """The lexical mapping of one answer to one of its question's choices (the ``lexical`` mapper).

    In this order, on :func:`normalize_answer` forms: a choice equal to the answer; for a question whose
    choices include yes and no, the answer's first word if it is yes or no; the longest choice contained
    in the answer as whole words; else the choice with the highest string similarity (difflib ratio)
    plus word overlap (Jaccard) with the answer, the first such choice on a tie.

    Parameters
    ----------
    answer : str
        The model's free-form answer.
    choices : sequence of str
        The question's choices.

    Returns
    -------
    str
        One of ``choices`` as spelled there; ``answer`` itself when there are no choices.

    Examples
    --------
    >>> from ts2viz.qa.mapping import match_choice
    >>> match_choice("Two", ["1", "2", "3"])
    '2'
    >>> match_choice("yes, it is", ["yes", "no"])
    'yes'
    >>> match_choice("I think it is a red car", ["blue", "red"])
    'red'
    """
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
    """Interface of an answer mapper: free-form answers -> choices, in one batch.

    A subclass implements ``_map`` (:meth:`map` checks that answers and choices align) and :attr:`config`;
    :func:`ts2viz.metrics.backbones.sbert.load_mapper` builds one from a ``mapper=`` option. The built-in mappers are :class:`LexicalMapper` (here, no model)
    and :class:`ts2viz.metrics.backbones.sbert.SBERTMapper` (a Sentence-BERT model, in the backbones).
    """

    @property
    def config(self) -> dict:
        """The mapper's settings, naming it exactly (part of a metric's config, hence of its cache key)."""
        raise NotImplementedError

    def map(self, answers: Sequence[str], choices: Sequence[Sequence[str]]) -> list[str]:
        """Map each answer to one of its question's choices.

        Parameters
        ----------
        answers : sequence of str
            The models' free-form answers.
        choices : sequence of sequence of str
            Each answer's question choices, aligned with ``answers``.

        Returns
        -------
        list of str
            One choice per (answer, choices) pair; a question without choices keeps its answer.

        Raises
        ------
        InputError
            If ``answers`` and ``choices`` differ in length.
        NotImplementedError
            In a subclass that does not implement ``_map``.
        """
        _check_aligned(answers, choices)
        return self._map(answers, choices)

    def _map(self, answers: Sequence[str], choices: Sequence[Sequence[str]]) -> list[str]:
        """The mapping of aligned answers and choices: the subclasses' own."""
        raise NotImplementedError


class LexicalMapper(AnswerMapper):
    """The model-free mapper (:func:`match_choice` on each answer); ``mapper=lexical``.

    It picks another choice than the TS2 release's Sentence-BERT mapping for 11-25 % of TIFA answers
    and up to 13 % of DSG answers (module docstring): use it only where no Sentence-BERT model can be
    loaded.

    Examples
    --------
    >>> from ts2viz.qa.mapping import LexicalMapper
    >>> m = LexicalMapper()
    >>> m.config
    {'mapper': 'lexical'}
    >>> m.map(["two dogs", "Yes it is"], [["1", "2", "3"], ["yes", "no"]])
    ['2', 'yes']
    """

    @property
    def config(self) -> dict:
        """``{"mapper": "lexical"}``: the lexical mapper has no settings."""
        return {"mapper": "lexical"}

    def _map(self, answers, choices):
        """Each answer mapped with :func:`match_choice`."""
        return [match_choice(a, list(c)) for a, c in zip(answers, choices)]


def premap(answers: Sequence[str], choices: Sequence[Sequence[str]], rule: str = DEFAULT_RULE):
    """The answers a Sentence-BERT mapper's rule maps without its model, and the ones left for the model.

    In this order: a question without choices keeps its answer; rule ``ts2`` answers a question with
    fewer than three choices ``yes`` when the answer contains "yes", else ``no`` (these two words, as
    the release writes them); rule ``contains_yes`` maps a yes/no question with :func:`yes_no_choice`;
    rules ``tifa`` and ``contains_yes`` take an answer that is exactly one of the choices as is; every
    other answer is left for the model (:class:`ts2viz.metrics.backbones.sbert.SBERTMapper`).

    Parameters
    ----------
    answers : sequence of str
        The models' free-form answers.
    choices : sequence of sequence of str
        Each answer's question choices, aligned with ``answers``.
    rule : {'tifa', 'ts2', 'contains_yes'}, default DEFAULT_RULE
        The mapper rule (:data:`RULES`).

    Returns
    -------
    mapped : list of str or None
        One entry per answer: its choice, or None where the model must map it.
    todo : list of int
        The positions of the None entries, in order.

    Raises
    ------
    InputError
        If ``answers`` and ``choices`` differ in length.

    Examples
    --------
    >>> from ts2viz.qa.mapping import premap
    >>> premap(["Yes, it is", "two", "a dog"], [["yes", "no"], ["1", "two"], ["cat", "dog"]], "contains_yes")
    (['yes', 'two', None], [2])
    """
    _check_aligned(answers, choices)
    out: list[str | None] = [None] * len(answers)
    todo = []
    for i, (a, cs) in enumerate(zip(answers, choices)):
        cs = list(cs)
        if not cs:
            out[i] = a
        elif rule == "ts2" and len(cs) < 3:
            out[i] = "yes" if reads_yes(str(a), TS2_YES_RULE) else "no"  # the release writes these two words
        elif rule == "contains_yes" and is_yes_no(cs):
            out[i] = yes_no_choice(a, cs)
        elif rule != "ts2" and a in cs:  # TIFA's shortcut: an answer that is a choice is taken
            out[i] = a
        else:
            todo.append(i)
    return out, todo


def _check_aligned(answers: Sequence[str], choices: Sequence[Sequence[str]]) -> None:
    """Raise :class:`InputError` unless there is one choice list per answer."""
    if len(answers) != len(choices):
        raise InputError(f"mapper: {len(answers)} answers but {len(choices)} choice lists")
