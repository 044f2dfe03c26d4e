"""The question-answering metric TIFA and DSG share (:class:`QAMetric`) and its answer reading (:func:`map_answers`).

:class:`QAMetric` is the base class: a family's differences (how parent questions gate a question, the
options it refuses, its default decodings, prompt style, mapper rule and yes/no reading) are class
attributes and methods its module's subclass overrides (:mod:`ts2viz.metrics.families.tifa`,
:mod:`ts2viz.metrics.families.dsg`); nothing here branches on a family or imports one.

Each image's prompt has a set of questions (see :mod:`ts2viz.qa.questions`). The VQA model answers every
question free-form; the answer is mapped to one of the question's choices by the metric's mapper
(:mod:`ts2viz.qa.mapping`: Sentence-BERT by default, as TIFA and the TS2 release do, or ``?mapper=lexical``)
and compared with the expected answer.

A yes/no question of ``dsg:`` is read by the yes rule (``?yes_rule=exact``, the default, as DSG's
code: the answer is ``yes`` exactly; ``contains``, TS2's rule: the answer contains "yes"; see
:data:`ts2viz.qa.mapping.YES_RULES`, the same rule released answers are read with); other questions go to
the mapper. The answers are decoded as ``?decoding=`` says (:mod:`ts2viz.metrics.common.decoding`): DSG's InstructBLIP
beam search by default for ``dsg:`` on an InstructBLIP, greedy otherwise.

* TIFA = fraction of questions answered correctly.
* DSG = the fraction of questions that *count*: with ``?accumulation=direct`` (default, as DSG's
  scoring code) a question counts only when it and its direct parents are answered correctly; with
  ``?accumulation=transitive`` (alias ``gated``: DSG's README, the TS2 release files) when it and
  all its ancestors are; with ``?accumulation=mean`` parents are ignored (see :mod:`ts2viz.qa.accumulation`).

The per-question records of the last call are in ``metric.last_details`` (one list per image, each
record a dict: question_id, question, choices, expected, parents, answer, mapped, correct, counted;
:func:`ts2viz.qa.records.records_from_details` turns them into a table).

With ``score=normalized`` a question scores Gecko's normalised answer likelihood instead of 0/1
(:mod:`ts2viz.metrics.common.choicescore`, :meth:`QAMetric.score_normalized`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ...errors import InputError
from ...qa.accumulation import DEFAULT_ACCUMULATION, check_accumulation
from ...qa.mapping import (
    AnswerMapper,
    check_yes_rule,
    is_correct,
    is_yes_no,
    yes_no_choice,
)
from ...qa.questions import Question, QuestionSource
from ..backbones.vqa.model import VQAModel
from ..common.base import Metric
from ..common.choicescore import choice_index, normalized_probability
from ..common.decoding import GREEDY, Decoding
from ..common.spec import Spec
from .options import check_correctness, check_score_option


@dataclass(frozen=True)
class PromptStyle:
    """A family's own way of asking the VQA model (a ``prompt_style=`` value; :attr:`QAMetric.prompt_styles`).

    Attributes
    ----------
    text : callable
        ``text(question) -> str``: the text asked for a :class:`Question` (:meth:`QAMetric.ask`).
    template : str or None
        The VQA model's prompt template under this style, whatever ``template=`` says (None: as it says).
    list_choices : bool or None
        The ``list_choices=`` default under this style (None: the decoding's or the model's).
    max_new_tokens : int or None
        The ``max_new_tokens=`` default under this style (None: :data:`~.build.DEFAULT_MAX_NEW_TOKENS`).
    """

    text: Callable[[Question], str]
    template: str | None = None
    list_choices: bool | None = None
    max_new_tokens: int | None = None


class QAMetric(Metric):
    """A question-answering metric over a :class:`VQAModel` and a :class:`QuestionSource` (built by :func:`~.build.build_qa`).

    A family's subclass sets :attr:`name` and overrides what differs: :meth:`count` (how an image's
    question verdicts make its score), :meth:`gate_values` (the same for ``score=normalized``),
    :meth:`extra_config`, and for :func:`~.build.build_qa` :attr:`refused`, :attr:`decodings`,
    :attr:`mapper_rule`, :meth:`default_prompt_style`, :meth:`filtered` and :meth:`yes_reading`. The base
    class scores the fraction of questions answered correctly.

    The config records the VQA model, the question source, the mapper and every setting that changes scores;
    settings at their former defaults (greedy decoding, the default prompt style) are left out of it so that
    existing caches stay valid.

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec.
    vqa : VQAModel
        The VQA model that answers the questions.
    source : QuestionSource
        Gives each prompt's questions.
    mapper : AnswerMapper or None
        Maps free-form answers to choices (None with ``score="normalized"``, or when every question is
        yes/no and read by ``yes_rule``).
    batch_size : int or None, optional
        Images per scoring call (default 4).
    max_new_tokens : int, default 10
        New tokens of a free-form answer under greedy decoding.
    list_choices : bool or None, optional
        Spell out the choices in the question; None: as the decoding says, else on for generative models.
    accumulation : str, default "direct"
        How DSG's parent questions gate a question (:mod:`ts2viz.qa.accumulation`).
    score : str, default "accuracy"
        ``accuracy`` (0/1 per question) or ``normalized`` (:meth:`score_normalized`).
    prompt_style : str, default "default"
        ``default``, ``tifa_blip2`` or ``dsg_chat`` (see :meth:`ask`).
    decoding : Decoding, default GREEDY
        How free-form answers are decoded (:mod:`ts2viz.metrics.common.decoding`).
    yes_rule : str or None, optional
        How a yes/no answer is read (:data:`ts2viz.qa.mapping.YES_RULES`); None: by the mapper.
    correctness : str, default "exact"
        How a mapped choice is compared with the expected answer (:data:`~.options.CORRECTNESS`).

    Raises
    ------
    InputError
        If ``score``, ``correctness``, ``accumulation`` or ``yes_rule`` is not an accepted value.
    """

    has_details = True
    #: the family's name (the subclass's)
    name = "qa"
    #: options the family refuses, as ``option`` or ``option=value`` -> the one-line reason
    refused: dict = {}
    #: the family's own decodings by the VQA model's type (:func:`ts2viz.metrics.common.decoding.default_decoding`)
    decodings: dict = {}
    #: the answer mapper's rule unless ``mapper_rule=`` says (:func:`ts2viz.qa.mapping.load_mapper`)
    mapper_rule: str | None = None
    #: the family's own prompt styles: ``prompt_style=`` value -> :class:`PromptStyle` (:meth:`ask`, ``build_qa``)
    prompt_styles: dict = {}

    def __init__(self, spec: Spec, vqa: VQAModel, source: QuestionSource, mapper: AnswerMapper | None,
                 batch_size: int | None = None, max_new_tokens: int = 10, list_choices: bool | None = None,
                 accumulation: str = DEFAULT_ACCUMULATION, score: str = "accuracy", prompt_style: str = "default",
                 decoding: Decoding = GREEDY, yes_rule: str | None = None, correctness: str = "exact"):
        check_score_option(spec, score)
        check_correctness(spec, correctness)
        #: how a mapped choice is compared with the expected answer (``exact``: TIFA's and DSG's ``==``)
        self.correctness = correctness
        self.decoding = decoding
        #: how a yes/no answer is read (None: by the mapper, as TIFA)
        self.yes_rule = None if yes_rule is None else check_yes_rule(yes_rule)
        self.prompt_style = prompt_style
        self.score = score
        self.vqa = vqa
        self.source = source
        self.mapper = mapper
        self.max_new_tokens = max_new_tokens
        self.accumulation = check_accumulation(accumulation)
        # Generative VLMs answer open questions verbosely; listing the choices keeps answers mappable
        # (unless the decoding is a source's own, which says whether its source listed them).
        if list_choices is None:
            list_choices = vqa.generative if decoding.list_choices is None else decoding.list_choices
        self.list_choices = bool(list_choices)
        config = {"family": self.name, **vqa.config, **source.config, "mapper": mapper.config if mapper else None,
                  "list_choices": self.list_choices, "max_new_tokens": max_new_tokens, **self.extra_config()}
        if self.yes_rule is not None and score != "normalized":
            config["yes_rule"] = self.yes_rule
        if decoding is not GREEDY and score != "normalized":  # greedy left out: existing caches stay valid
            config.update(decoding.config)
        if prompt_style != "default":  # only then, so that existing caches stay valid
            config["prompt_style"] = prompt_style
        if score != "normalized":
            config["correctness"] = correctness
        if score == "normalized":  # only then, so that existing caches of the default stay valid
            config.update(answer="choice likelihoods", score="normalized (Gecko Eq. 2)", max_new_tokens=None)
        super().__init__(spec, config, vqa.device, batch_size or 4)

    def extra_config(self) -> dict:
        """The family's own settings in the config (none here; a subclass adds its own).

        Returns
        -------
        dict
            Config entries, added after the common ones.
        """
        return {}

    def count(self, correct: dict, qs: Sequence[Question]) -> tuple[dict, float]:
        """Which of an image's questions count, and its score: here every question, the fraction correct.

        Parameters
        ----------
        correct : dict of int to bool
            Question id -> answered correctly.
        qs : sequence of Question
            The image's questions (with their parents).

        Returns
        -------
        counted : dict of int to bool
            Question id -> whether it counts.
        score : float
            The image's score (NaN for no questions).
        """
        return correct, float(np.mean(list(correct.values()))) if correct else float("nan")

    def gate_values(self, values: dict, correct: dict, qs: Sequence[Question]) -> dict:
        """The questions' ``score=normalized`` values after the family's gate: here unchanged.

        Parameters
        ----------
        values : dict of int to float
            Question id -> its normalised answer likelihood.
        correct : dict of int to bool
            Question id -> whether its most likely choice is the expected one.
        qs : sequence of Question
            The image's questions (with their parents).

        Returns
        -------
        dict of int to float
            Question id -> the value that counts.
        """
        return values

    @classmethod
    def refuse(cls, spec: Spec, option: str) -> None:
        """Raise the family's one-line :class:`InputError` if it refuses ``option`` (see :attr:`refused`).

        Parameters
        ----------
        spec : Spec
            The metric's parsed spec (named in the message).
        option : str
            ``option`` or ``option=value``.

        Raises
        ------
        InputError
            If ``option`` is in :attr:`refused`.
        """
        if option in cls.refused:
            raise InputError(f"metric {spec.raw!r}: {cls.refused[option]}")

    @classmethod
    def default_prompt_style(cls, spec: Spec) -> str:
        """The prompt style unless ``prompt_style=`` says: here ``default`` (the model's own template).

        Parameters
        ----------
        spec : Spec
            The metric's parsed spec (its model).

        Returns
        -------
        str
            One of :data:`~.options.PROMPT_STYLES`.
        """
        return "default"

    @classmethod
    def filtered(cls, source: QuestionSource, qa_filter: str, device: str | None) -> QuestionSource:
        """The question source behind the family's question filter ``qa_filter`` (none here).

        Parameters
        ----------
        source : QuestionSource
            The questions.
        qa_filter : str
            The ``qa_filter=`` option.
        device : str or None
            The torch device of the filter's model.

        Returns
        -------
        QuestionSource
            The filtered source (a subclass's).

        Raises
        ------
        InputError
            Always here: the family has no question filter.
        """
        raise InputError(f"{cls.name}: qa_filter= is not an option of this family")

    @classmethod
    def yes_reading(cls, vqa: VQAModel, decoding: Decoding, yes_rule: str | None, prompt_style: str | None,
                    style: str) -> tuple[str | None, str]:
        """How yes/no answers are read, and the prompt style that goes with it (here: by the mapper).

        Parameters
        ----------
        vqa : VQAModel
            The loaded VQA model.
        decoding : Decoding
            The decoding chosen.
        yes_rule : str or None
            The ``yes_rule=`` option.
        prompt_style : str or None
            The ``prompt_style=`` option as given.
        style : str
            The prompt style chosen so far.

        Returns
        -------
        yes_rule : str or None
            The rule of :data:`ts2viz.qa.mapping.YES_RULES`, or None (the mapper reads yes/no answers).
        style : str
            The prompt style.
        """
        return None, style

    def check_prompt(self, prompt: str) -> None:
        """Fail early (before any image is scored) if the prompt has no questions; runs the generator.

        Parameters
        ----------
        prompt
            As :meth:`Metric.check_prompt <ts2viz.metrics.common.base.Metric.check_prompt>` takes it.
        """
        self.source.get(prompt)

    def ask(self, q: Question) -> str:
        """The text the VQA model is asked for question ``q``.

        Under one of the family's own prompt styles, its text (:attr:`prompt_styles`); otherwise the question,
        followed by "Answer yes or no." or "Choose one: a, b." when the choices are listed.

        Parameters
        ----------
        q : Question
            The question.

        Returns
        -------
        str
            The question text to put into the model's prompt template.
        """
        own = self.prompt_styles.get(self.prompt_style)
        if own is not None:
            return own.text(q)
        if self.list_choices and q.choices:
            if {c.lower() for c in q.choices} == {"yes", "no"}:
                return f"{q.text} Answer yes or no."
            return f"{q.text} Choose one: {', '.join(q.choices)}."
        return q.text

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """Scores of a batch of images: every question answered free-form, or the choice likelihoods read.

        Parameters
        ----------
        items : sequence
            The prepared images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 score per image (:meth:`score_answers` or :meth:`score_normalized`).
        """
        if self.score == "normalized":
            return self.score_normalized(items, prompts)
        qsets = [self.source.get(p) for p in prompts]
        pair_images, pair_questions = [], []
        for im, qs in zip(items, qsets):
            for q in qs:
                pair_images.append(im)
                pair_questions.append(self.ask(q))
        answers = self.vqa.answer(pair_images, pair_questions, max_new_tokens=self.max_new_tokens,
                                  decoding=self.decoding)
        per_image, k = [], 0
        for qs in qsets:
            per_image.append(answers[k:k + len(qs)])
            k += len(qs)
        return self.score_answers(prompts, per_image)

    def score_answers(self, prompts: Sequence[str], answers: Sequence[Sequence[str]]) -> np.ndarray:
        """Scores from free-form answers: what a live model's answers go through after decoding.

        Recorded answers of another run can be scored this way.

        Parameters
        ----------
        prompts : sequence of str
            One prompt per image.
        answers : sequence of sequence of str
            Per image, one answer string per question of ``self.source.get(prompt)``, in that order.

        Returns
        -------
        numpy.ndarray
            One float64 score per image; the per-question records are in ``self.last_details``.

        Raises
        ------
        InputError
            When the number of answer lists is not the number of prompts, or an image's number of answers is
            not its number of questions.
        """
        qsets = [self.source.get(p) for p in prompts]
        if len(answers) != len(qsets):
            raise InputError(f"{self.spec}: {len(answers)} answer lists for {len(qsets)} prompts")
        for p, qs, a in zip(prompts, qsets, answers):
            if len(a) != len(qs):
                raise InputError(f"{self.spec}: {len(a)} answers for the {len(qs)} questions of prompt {p!r}")
        flat = [str(a) for image_answers in answers for a in image_answers]
        mapped = self.map_answers(flat, [q.choices for qs in qsets for q in qs])
        scores = np.full(len(qsets), np.nan)
        details = []
        k = 0
        for i, qs in enumerate(qsets):
            recs, correct = [], {}
            for q in qs:
                ok = self.is_correct(mapped[k], q.answer)
                correct[q.id] = ok
                recs.append({"question_id": q.id, "question": q.text, "choices": list(q.choices),
                             "expected": q.answer, "parents": list(q.parents), "answer": flat[k],
                             "mapped": mapped[k], "correct": ok})
                k += 1
            counted, scores[i] = self.count(correct, qs)
            for r in recs:
                r["counted"] = counted[r["question_id"]]
            details.append(recs)
        self.last_details = details
        return scores

    def is_correct(self, mapped: str, expected: str) -> bool:
        """Whether a mapped choice is the expected answer.

        ``correctness=exact``: ``==`` (TIFA's ``int(mc_answer == answer)``, DSG's ``answer == 'yes'``);
        ``correctness=normalized``: equal after :func:`ts2viz.qa.mapping.normalize_answer`.

        Parameters
        ----------
        mapped : str
            The choice the answer was mapped to.
        expected : str
            The question's expected answer.

        Returns
        -------
        bool
            Whether the question was answered correctly.
        """
        if self.correctness == "exact":
            return mapped == expected
        return is_correct(mapped, expected)

    def map_answers(self, answers: Sequence[str], choices: Sequence[Sequence[str]]) -> list[str]:
        """:func:`map_answers` with this metric's mapper and yes rule.

        Parameters
        ----------
        answers, choices
            As :func:`map_answers` takes them.

        Returns
        -------
        list of str
            The choice each answer is mapped to.
        """
        return map_answers(answers, choices, self.mapper, self.yes_rule)

    def score_normalized(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """Per question P(expected)/sum P(choices) from the VQA model's choice likelihoods (Gecko Eq. 2).

        An expected answer missing from its choices (4 of TS2's 1,205 TIFA questions) is added to them; a
        question without choices gets ``yes``/``no``. TIFA: mean over questions. DSG: the same, and unless
        ``accumulation=mean`` a question counts 0 when a parent (directly, or transitively with
        ``transitive``) is "answered wrong", i.e. its most likely choice is not its expected answer (the soft
        analogue of the gated accuracy).

        Parameters
        ----------
        items, prompts
            As :meth:`score_prepared` takes them.

        Returns
        -------
        numpy.ndarray
            One float64 score per image (NaN for an image without questions); the per-question records
            (with the choices' probabilities) are in ``self.last_details``.
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
                recs.append({"question_id": q.id, "question": q.text, "choices": list(cs), "expected": q.answer,
                             "parents": list(q.parents), "probabilities": {c: float(np.exp(v)) for c, v in zip(cs, lp)},
                             "mapped": cs[int(np.argmax(lp))], "correct": correct[q.id],
                             "normalized": value[q.id]})
            value = self.gate_values(value, correct, qs)
            for r in recs:
                r["counted"] = value[r["question_id"]]
            scores[i] = float(np.mean(list(value.values()))) if value else float("nan")
            details.append(recs)
        self.last_details = details
        return scores

    def score_with_details(self, images: Sequence, prompts: Sequence[str]) -> tuple[np.ndarray, list]:
        """Scores plus, per image, the per-question records (see the module docstring).

        Parameters
        ----------
        images : sequence
            PIL images or image paths.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        scores : numpy.ndarray
            One float64 score per image.
        details : list of list of dict
            Per image, one record per question.
        """
        s = self(images=images, prompts=prompts)
        return s, list(self.last_details or [])



def map_answers(answers: Sequence[str], choices: Sequence[Sequence[str]], mapper: AnswerMapper | None,
                yes_rule: str | None) -> list[str]:
    """Each free-form answer's choice.

    A yes/no question's answer is read by ``yes_rule`` (:func:`ts2viz.qa.mapping.yes_no_choice`, the
    rule released answers are read with) when one is given; every other answer goes to ``mapper``.

    Parameters
    ----------
    answers : sequence of str
        The free-form answers.
    choices : sequence of sequence of str
        Each answer's question's choices.
    mapper : AnswerMapper or None
        The answer mapper; may be None when every question is yes/no and ``yes_rule`` is given.
    yes_rule : str or None
        A rule of :data:`ts2viz.qa.mapping.YES_RULES`, or None to send yes/no answers to the mapper too.

    Returns
    -------
    list of str
        The choice of each answer, in order.

    Raises
    ------
    InputError
        If ``answers`` and ``choices`` differ in length, or an answer needs a mapper and there is none.

    Examples
    --------
    >>> from ts2viz.metrics.qametric.metric import map_answers
    >>> map_answers(["Yes.", "no"], [("yes", "no"), ("yes", "no")], None, "chat")
    ['yes', 'no']
    """
    if len(answers) != len(choices):
        raise InputError(f"mapper: {len(answers)} answers but {len(choices)} choice lists")
    out: list = [None] * len(answers)
    rest = []
    for i, (a, cs) in enumerate(zip(answers, choices)):
        if yes_rule is not None and is_yes_no(cs):
            out[i] = yes_no_choice(a, cs, yes_rule)
        else:
            rest.append(i)
    if rest:
        if mapper is None:
            raise InputError("mapper: answers to questions other than yes/no need an answer mapper")
        for i, m in zip(rest, mapper.map([answers[i] for i in rest], [choices[i] for i in rest])):
            out[i] = m
    return out
