"""The base class of the VQA backends: batching, GPU out-of-memory halving, the yes-token set, answer choices.

:class:`VQAModel` runs a subclass's hooks in batches; :func:`surface_forms` gives the spellings of an answer
choice whose likelihoods are summed, :func:`logsumexp` sums them, :func:`crop` cuts a region of an image,
:func:`image_chat_prompt` writes a chat VLM's prompt for one image and a text.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ....errors import InputError
from ...common.device import autocast, run_halving_on_oom

if TYPE_CHECKING:
    from ...common.decoding import Decoding


def surface_forms(choice: str) -> list[str]:
    """The spellings of an answer choice whose likelihoods are summed: as written, lower case, capitalised.

    VQA models answer "Yes" or "yes" depending on their training data; counting both (as
    :meth:`VQAModel.yes_probability` does for "yes") keeps a choice's probability from hinging on case.

    Parameters
    ----------
    choice : str
        An answer choice (surrounding spaces are stripped).

    Returns
    -------
    list of str
        The distinct spellings, in that order.

    Examples
    --------
    >>> surface_forms("Yes"), surface_forms(" red car")
    (['Yes', 'yes'], ['red car', 'Red car'])
    """
    c = str(choice).strip()
    return list(dict.fromkeys([c, c.lower(), c[:1].upper() + c[1:]]))


def logsumexp(values: Sequence[float]) -> float:
    """``log(sum(exp(values)))`` computed stably (``-inf`` when every value is ``-inf``).

    Parameters
    ----------
    values : sequence of float
        Log-probabilities (at least one).

    Returns
    -------
    float
        The log of the summed probabilities.

    Examples
    --------
    >>> round(logsumexp([0.0, 0.0]), 6)
    0.693147
    """
    m = max(values)
    if m == float("-inf"):
        return m
    return float(m + np.log(sum(np.exp(v - m) for v in values)))

def crop(image, box: tuple[float, float, float, float], *, relative: bool = False):
    """A crop of a PIL image; ``box`` is (left, top, right, bottom) in pixels or, if ``relative``, in [0, 1].

    Parameters
    ----------
    image : PIL.Image.Image
        The image.
    box : tuple of float
        ``(left, top, right, bottom)``; rounded to whole pixels.
    relative : bool, optional
        The box is given as fractions of the width and height.

    Returns
    -------
    PIL.Image.Image
        The crop.

    Examples
    --------
    >>> from PIL import Image
    >>> crop(Image.new("RGB", (100, 50)), (0.25, 0, 0.75, 0.5), relative=True).size
    (50, 25)
    """
    if relative:
        w, h = image.size
        box = (box[0] * w, box[1] * h, box[2] * w, box[3] * h)
    return image.crop(tuple(int(round(v)) for v in box))


def image_chat_prompt(processor, text: str, **template_kw) -> str:
    """The chat prompt of one user turn holding an image and ``text``, with the generation prompt, untokenised.

    Parameters
    ----------
    processor : transformers.ProcessorMixin
        A chat VLM's processor (it has a chat template).
    text : str
        The turn's text, after the image.
    **template_kw
        Passed on to ``processor.apply_chat_template`` (e.g. ``enable_thinking=False``).

    Returns
    -------
    str
        The prompt text, with the image placeholder the chat template writes.

    Examples
    --------
    >>> class Echo:
    ...     def apply_chat_template(self, msgs, **kw):
    ...         return repr((msgs[0]["content"], sorted(kw)))
    >>> image_chat_prompt(Echo(), "Is it red?")
    "([{'type': 'image'}, {'type': 'text', 'text': 'Is it red?'}], ['add_generation_prompt', 'tokenize'])"
    """
    msgs = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]
    return processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False, **template_kw)


class VQAModel:
    """Base class: batching, OOM halving and the yes-token set; subclasses implement the ``_`` hooks.

    The public methods take parallel lists of images (PIL images, or what :meth:`prepare_image` returned)
    and questions, run the subclass's hook in batches of :attr:`batch_size` pairs under
    ``torch.inference_mode``, and halve the batch on GPU out-of-memory. A subclass implements
    ``_yes_prob``, ``_answer`` and ``_choice_logprobs``, and where it can ``_answer_score``,
    ``_first_token_score`` and ``_answer_decoded``.

    Parameters
    ----------
    model_id : str
        The model's hub id or folder.
    identity : dict
        The config entries naming the model exactly (:func:`~ts2viz.metrics.common.pretrained.model_identity`).
    device : str
        The torch device.
    dtype : torch.dtype
        The compute dtype.
    batch_size : int
        Pairs per model call (at least 1 is used).
    """

    #: True for chat/generative VLMs (free-form answers benefit from listing the choices in the question)
    generative: bool = True

    def __init__(self, model_id: str, identity: dict, device: str, dtype, batch_size: int):
        self.model_id = model_id
        self.identity = identity
        self.device = device
        self.dtype = dtype
        self.batch_size = max(1, int(batch_size))
        self._yes_ids: list[int] | None = None

    @property
    def config(self) -> dict:
        """The model's identity (id, revision or fingerprint) and the VQA class, for a metric's config."""
        return {**self.identity, "vqa_class": type(self).__name__}

    def prepare_image(self, image):
        """Do the CPU work on one decoded image ahead of the model (thread-safe).

        The scoring engine runs it on worker threads. Returns the image itself, or, for a model whose pixels
        do not depend on the question, the image carrying them
        (:func:`~ts2viz.metrics.common.pixels.prepared_image`). Every method accepts either.

        Parameters
        ----------
        image : PIL.Image.Image
            A decoded RGB image.

        Returns
        -------
        PIL.Image.Image
            ``image``, or ``image`` carrying its pixel tensor.
        """
        return image

    @property
    def pixel_key(self) -> str:
        """Names this model's image preprocessing on the images :meth:`prepare_image` returns."""
        return f"{type(self).__name__}@{id(self):x}"

    # -- public API --------------------------------------------------------------------------------
    def answer_score(self, images: Sequence, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        """``exp(-mean cross-entropy)`` of ``answers[i]`` as the model's answer to ``questions[i]`` about ``images[i]``.

        That is, the geometric mean of the answer tokens' teacher-forced probabilities: t2v_metrics' VQAScore
        (its ``forward``). Which tokens count is the model's own training format: CLIP-FlanT5 the answer and
        T5's ``</s>``; LLaVA-1.5 (t2v_metrics' conversation) the answer and ``</s>``; BLIP-VQA the answer and
        ``[SEP]``; other generative VLMs the answer's tokens after their chat template.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            One image per question.
        questions : sequence of str
            The questions, as asked.
        answers : sequence of str
            One answer per question.

        Returns
        -------
        numpy.ndarray
            float64 values in (0, 1], independent of batching.

        Raises
        ------
        ts2viz.errors.InputError
            When the lists differ in length, an answer has no tokens, or the model cannot score a given
            answer.
        """
        return self._per_answer(self._answer_score, images, questions, answers)

    def first_token_score(self, images: Sequence, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        """P(the first token of ``answers[i]``) as the model's first answer token to ``questions[i]``.

        The softmax of the next-token scores after the model's prompt, after the greedy logits processors of
        its generation config (t2v_metrics' VQAScore for Qwen2-VL, PaliGemma, LLaVA-OneVision and
        Llama-3.2-Vision: ``generate(max_new_tokens=1, output_scores=True)``; see :mod:`.t2v`).

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            One image per question.
        questions : sequence of str
            The questions, as asked.
        answers : sequence of str
            One answer per question; its first token is scored.

        Returns
        -------
        numpy.ndarray
            float64 values in [0, 1], independent of batching.

        Raises
        ------
        ts2viz.errors.InputError
            When the lists differ in length, or the model has no first-token score.
        """
        return self._per_answer(self._first_token_score, images, questions, answers)

    def _per_answer(self, score, images: Sequence, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        # score(images, [(question, answer), ...]) in batches, as float64; InputError if the lists differ
        questions, answers = [str(q) for q in questions], [str(a) for a in answers]
        if len(questions) != len(answers):
            raise InputError(f"VQA: {len(questions)} questions but {len(answers)} answers")
        return np.asarray(self._batched(score, images, list(zip(questions, answers))), dtype=np.float64)

    def yes_probability(self, images: Sequence, questions: Sequence[str]) -> np.ndarray:
        """P("yes") for each (image, question) pair, from the first answer token's distribution.

        The probability mass of the vocabulary entries whose token decodes to "yes" in any case
        (:meth:`yes_token_ids`).

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            One image per question.
        questions : sequence of str
            The questions, as asked.

        Returns
        -------
        numpy.ndarray
            float64 probabilities in [0, 1].
        """
        return np.asarray(self._batched(self._yes_prob, images, questions), dtype=np.float64)

    def answer(self, images: Sequence, questions: Sequence[str], max_new_tokens: int = 16,
               decoding: "Decoding | None" = None) -> list[str]:
        """A free-form answer for each (image, question) pair.

        Greedy with at most ``max_new_tokens`` new tokens, or as the named ``decoding`` says
        (:mod:`ts2viz.metrics.common.decoding`, e.g. DSG's InstructBLIP beam search).

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            One image per question.
        questions : sequence of str
            The questions, as asked.
        max_new_tokens : int, optional
            The most tokens a greedy answer has.
        decoding : Decoding or None, optional
            A named decoding; None or ``greedy`` for greedy decoding.

        Returns
        -------
        list of str
            One answer per pair.
        """
        if decoding is None or decoding.name == "greedy":
            return list(self._batched(lambda im, q: self._answer(im, q, max_new_tokens), images, questions))
        return list(self._batched(lambda im, q: self._answer_decoded(im, q, decoding, max_new_tokens), images,
                                  questions))

    def choice_logprobs(self, images: Sequence, questions: Sequence[str],
                        choices: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """Log-likelihood of every answer choice of every (image, question) pair.

        For pair ``i`` and choice ``c`` this is ``log P(c | image_i, question_i)``, the teacher-forced
        sequence likelihood of the choice's tokens as the model's answer (summed over the choice's
        :func:`surface_forms` with distinct tokenisations). BLIP-VQA scores the answer through its answer
        decoder, including the ``[SEP]`` that ends every answer it was trained on (as the BLIP/LAVIS
        answer ranking does); a generative VLM scores the choice's tokens after its prompt through its LM
        head, without an end-of-sequence token. Results do not depend on how the pairs are batched.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            One image per question.
        questions : sequence of str
            The questions, as asked.
        choices : sequence of sequence of str
            The answer choices of each question (at least one, none empty).

        Returns
        -------
        list of numpy.ndarray
            One float64 array per pair, aligned with ``choices[i]``.

        Raises
        ------
        ts2viz.errors.InputError
            When the lists differ in length, a question has no choices or an empty one, or a choice has no
            tokens.
        """
        questions, choices = list(questions), [tuple(str(c) for c in cs) for cs in choices]
        if len(questions) != len(choices):
            raise InputError(f"VQA: {len(questions)} questions but {len(choices)} choice lists")
        for q, cs in zip(questions, choices):
            if not cs or any(not c.strip() for c in cs):
                raise InputError(f"VQA: question {q!r} needs at least one non-empty answer choice")
        out = self._batched(self._choice_logprobs, images, list(zip(questions, choices)))
        return [np.asarray(v, dtype=np.float64) for v in out]

    def choice_probabilities(self, images: Sequence, questions: Sequence[str],
                             choices: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """``exp`` of :meth:`choice_logprobs`: each choice's likelihood (not normalised over the choices).

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            One image per question.
        questions : sequence of str
            The questions, as asked.
        choices : sequence of sequence of str
            The answer choices of each question.

        Returns
        -------
        list of numpy.ndarray
            One float64 array of likelihoods per pair, aligned with ``choices[i]``.
        """
        return [np.exp(v) for v in self.choice_logprobs(images, questions, choices)]

    # -- subclass hooks ----------------------------------------------------------------------------
    def _answer_score(self, images: list, items: list[tuple[str, str]]) -> list[float]:
        raise InputError(f"VQA {self.model_id}: {type(self).__name__} cannot score a given answer")

    def _first_token_score(self, images: list, items: list[tuple[str, str]]) -> list[float]:
        raise InputError(f"VQA {self.model_id}: {type(self).__name__} has no first-token answer score")

    def _yes_prob(self, images: list, questions: list[str]) -> list[float]:
        raise NotImplementedError

    def _answer(self, images: list, questions: list[str], max_new_tokens: int) -> list[str]:
        raise NotImplementedError

    def _answer_decoded(self, images: list, questions: list[str], decoding: "Decoding",
                        max_new_tokens: int) -> list[str]:
        raise InputError(f"VQA {self.model_id}: decoding={decoding.name} is not available for {type(self).__name__}")

    def _choice_logprobs(self, images: list, items: list[tuple[str, tuple[str, ...]]]) -> list[list[float]]:
        raise NotImplementedError

    # -- helpers -----------------------------------------------------------------------------------
    def _batched(self, fn: Callable, images: Sequence, questions: Sequence[str]) -> list:
        import torch

        images, questions = list(images), list(questions)
        if len(images) != len(questions):
            raise InputError(f"VQA: {len(images)} images but {len(questions)} questions")

        def chunk(a: int, b: int) -> list:
            with torch.inference_mode():
                return list(fn(images[a:b], questions[a:b]))

        parts, self.batch_size = run_halving_on_oom(chunk, len(images), self.batch_size, f"VQA {self.model_id}")
        return [x for part in parts for x in part]

    def yes_token_ids(self, tokenizer) -> list[int]:
        """Vocabulary ids whose token decodes to "yes" (any case), as the first token of an answer.

        The first token of each of "Yes", "yes", " Yes", " yes" and "YES", where it decodes to "yes"
        (stripped, lower case); computed once per model.

        Parameters
        ----------
        tokenizer : transformers.PreTrainedTokenizerBase
            The model's tokenizer.

        Returns
        -------
        list of int
            The ids, sorted.

        Raises
        ------
        ts2viz.errors.InputError
            If no spelling of "yes" starts with a token that decodes to "yes".
        """
        if self._yes_ids is None:
            ids: set[int] = set()
            for w in ("Yes", "yes", " Yes", " yes", "YES"):
                enc = tokenizer.encode(w, add_special_tokens=False)
                if enc and tokenizer.decode(enc[:1]).strip().lower() == "yes":
                    ids.add(int(enc[0]))
            if not ids:
                raise InputError(f"VQA {self.model_id}: the tokenizer has no single token for 'yes'")
            self._yes_ids = sorted(ids)
        return self._yes_ids

    def choice_token_ids(self, tokenizer, choice: str) -> list[tuple[int, ...]]:
        """Distinct token sequences of a choice's :func:`surface_forms` (no special tokens).

        Parameters
        ----------
        tokenizer : transformers.PreTrainedTokenizerBase
            The model's tokenizer.
        choice : str
            The answer choice.

        Returns
        -------
        list of tuple of int
            The distinct non-empty token sequences, in the order of :func:`surface_forms`.

        Raises
        ------
        ts2viz.errors.InputError
            If no spelling has any token.
        """
        seqs = [tuple(tokenizer.encode(f, add_special_tokens=False)) for f in surface_forms(choice)]
        seqs = [s for s in dict.fromkeys(seqs) if s]
        if not seqs:
            raise InputError(f"VQA {self.model_id}: answer choice {choice!r} has no tokens")
        return seqs

    def _probs_of_yes(self, logits, tokenizer) -> list[float]:
        import torch

        p = torch.softmax(logits.float(), dim=-1)
        return p[:, self.yes_token_ids(tokenizer)].sum(-1).double().cpu().tolist()
