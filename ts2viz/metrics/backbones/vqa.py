"""The visual-question-answering backend shared by VQAScore, TIFA, DSG, Gecko and T2I-FineEval.

A :class:`VQAModel` answers many ``(image, question)`` pairs in batches, three ways:

* :meth:`VQAModel.answer_score`: ``exp(-mean cross-entropy)`` of a given answer's tokens, teacher forced
  (t2v_metrics' VQAScore; for LLaVA-1.5 in t2v_metrics' own conversation format and image padding);
* :meth:`VQAModel.yes_probability`: P("yes") read from the logits of the first answer token (the
  probability mass of the vocabulary entries that decode to "yes" in any case);
* :meth:`VQAModel.answer`: a free-form answer, greedy or as a named decoding says (:mod:`ts2viz.metrics.common.decoding`: DSG's
  InstructBLIP beam search);
* :meth:`VQAModel.choice_logprobs` / :meth:`VQAModel.choice_probabilities`: the teacher-forced sequence
  likelihood of each of a pair's answer choices (Gecko's score normalisation).

Pairs may repeat an image (many questions per image) or use crops (:func:`crop`). Implementations:
BLIP-VQA (``BlipForQuestionAnswering``), CLIP-FlanT5 (:mod:`ts2viz.metrics.backbones.clip_flant5`) and generative
VLMs through ``AutoModelForImageTextToText`` (LLaVA-1.5, InstructBLIP, BLIP-2, Qwen2-VL, PaliGemma, ...);
LLaVA-1.5 in LLaVA's own code layout is converted on load (:mod:`ts2viz.metrics.backbones.llava`).
GPU out-of-memory halves the pair batch and retries.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ...errors import InputError
from ..common.device import autocast, resolve_device, resolve_dtype, run_halving_on_oom
from ..common.hub import check_model_id, hf_load, model_identity
from ..common.spec import Spec

if TYPE_CHECKING:
    from ..common.decoding import Decoding

#: The prompt for generative models without a chat template (BLIP-2 / InstructBLIP convention).
PLAIN_TEMPLATE = "Question: {question} Answer:"
#: PaliGemma's task prefix for English VQA (its processor expands <image>, adds BOS and the final newline).
PALIGEMMA_TEMPLATE = "<image>answer en {question}"


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


def _logsumexp(values: Sequence[float]) -> float:
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
        The config entries naming the model exactly (:func:`~ts2viz.metrics.common.hub.model_identity`).
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
        questions, answers = [str(q) for q in questions], [str(a) for a in answers]
        if len(questions) != len(answers):
            raise InputError(f"VQA: {len(questions)} questions but {len(answers)} answers")
        out = self._batched(self._answer_score, images, list(zip(questions, answers)))
        return np.asarray(out, dtype=np.float64)

    def first_token_score(self, images: Sequence, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        """P(the first token of ``answers[i]``) as the model's first answer token to ``questions[i]``.

        The softmax of the next-token scores after the model's prompt, after the greedy logits processors of
        its generation config (t2v_metrics' VQAScore for Qwen2-VL, PaliGemma, LLaVA-OneVision and
        Llama-3.2-Vision: ``generate(max_new_tokens=1, output_scores=True)``; see :mod:`.vqa_t2v`).

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
        questions, answers = [str(q) for q in questions], [str(a) for a in answers]
        if len(questions) != len(answers):
            raise InputError(f"VQA: {len(questions)} questions but {len(answers)} answers")
        out = self._batched(self._first_token_score, images, list(zip(questions, answers)))
        return np.asarray(out, dtype=np.float64)

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


class BlipVQA(VQAModel):
    """BLIP-VQA (``Salesforce/blip-vqa-base``): an answer decoder over a question encoder.

    Questions are batched only with questions of the same token length (transformers 5's BLIP decoder
    would attend to a padded question's padding), so every number is independent of batching.

    Parameters
    ----------
    model_id : str
        The hub id or folder of a ``BlipForQuestionAnswering`` checkpoint.
    spec : Spec
        The metric's parsed spec (for messages and hub access).
    device : str
        The torch device.
    dtype : torch.dtype
        The weights' and compute dtype.
    batch_size : int
        Pairs per model call.
    revision : str or None, optional
        The hub revision.
    """

    generative = False
    #: Square input size for LAVIS-style preprocessing (PIL bicubic resize to ``image_size`` x
    #: ``image_size``, /255, normalised with the processor's mean and std, position embeddings
    #: interpolated), or None for the transformers processor's own (384 px for the hub's BLIP-VQA
    #: checkpoints). LAVIS' ``blip_vqa`` (vqav2), which T2I-FineEval's code runs, uses 480.
    image_size: int | None = None

    def __init__(self, model_id: str, spec: Spec, device: str, dtype, batch_size: int, revision=None):
        from transformers import AutoProcessor, BlipForQuestionAnswering

        kw = {"revision": revision} if revision else {}
        model = hf_load("BLIP-VQA model", BlipForQuestionAnswering.from_pretrained, model_id, spec, dtype=dtype, **kw)
        self.model = model.to(device).eval()
        self.processor = hf_load("processor", AutoProcessor.from_pretrained, model_id, spec, **kw)
        super().__init__(model_id, model_identity(model_id, revision, model.config), device, dtype, batch_size)

    def _inputs(self, images, questions):
        if self.image_size:
            enc = dict(self.processor.tokenizer(list(questions), padding=True, return_tensors="pt"))
            enc["pixel_values"] = self.lavis_pixels(images)
        else:
            enc = self.processor(images=list(images), text=list(questions), padding=True, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        enc["pixel_values"] = enc["pixel_values"].to(self.model.dtype)
        return enc

    def lavis_pixels(self, images):
        """LAVIS' ``BlipImageEvalProcessor`` on a batch of images.

        RGB, bicubic resize to ``image_size`` squared (PIL), /255, normalised with the processor's mean and std.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The images.

        Returns
        -------
        torch.Tensor
            float32 ``(n, 3, s, s)``, ``s`` = :attr:`image_size`.
        """
        import torch
        from PIL import Image

        s = int(self.image_size)
        ip = self.processor.image_processor
        mean = np.asarray(ip.image_mean, dtype=np.float32)
        std = np.asarray(ip.image_std, dtype=np.float32)
        arr = np.stack([np.asarray(im.convert("RGB").resize((s, s), Image.BICUBIC), dtype=np.float32) / np.float32(255)
                        for im in images])
        return torch.from_numpy(((arr - mean) / std).transpose(0, 3, 1, 2).copy())

    def _vision_kw(self) -> dict:
        return {"interpolate_pos_encoding": True} if self.image_size else {}

    def _generate(self, images, questions, **gen):
        """``model.generate`` per group of questions with the same token length, results in input order.

        transformers 5's BLIP text decoder drops the cross-attention mask, so in a padded batch the
        answer would attend to the question's padding and depend on what else is in the batch. Equal-
        length groups need no padding, which makes every answer independent of batching.
        """
        tok = self.processor.tokenizer
        lengths = [len(ids) for ids in tok(list(questions))["input_ids"]]
        results: list = [None] * len(questions)
        for n in sorted(set(lengths)):
            idx = [i for i, L in enumerate(lengths) if L == n]
            enc = self._inputs([images[i] for i in idx], [questions[i] for i in idx])
            with autocast(self.device, self.dtype):
                out = self.model.generate(**enc, do_sample=False, **self._vision_kw(), **gen)
            for k, i in enumerate(idx):
                results[i] = (out, k)
        return results

    def _by_question_length(self, fn: Callable, images: list, items: list, questions: list[str]) -> list:
        """``fn(images, items)`` per group of questions with the same token length, results in input order.

        No padding inside a group: see :meth:`_generate`.
        """
        lengths = [len(ids) for ids in self.processor.tokenizer(list(questions))["input_ids"]]
        results: list = [None] * len(items)
        for n in sorted(set(lengths)):
            idx = [i for i, L in enumerate(lengths) if L == n]
            for i, v in zip(idx, fn([images[i] for i in idx], [items[i] for i in idx])):
                results[i] = v
        return results

    def _question_states(self, images, questions):
        """The answer decoder's input: image -> question encoder hidden states (one row per pair)."""
        enc = self._inputs(images, questions)
        image_states = self.model.vision_model(pixel_values=enc["pixel_values"], **self._vision_kw())[0]
        q_states = self.model.text_encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                           encoder_hidden_states=image_states)[0]
        return q_states

    def _yes_prob(self, images, questions):
        """One answer-decoder step from ``[DEC]``: the first-token distribution ``generate`` would sample."""
        import torch

        def group(ims, qs):
            with autocast(self.device, self.dtype):
                q_states = self._question_states(ims, qs)
                start = torch.full((len(qs), 1), self.model.decoder_start_token_id, device=self.device)
                logits = self.model.text_decoder(input_ids=start, encoder_hidden_states=q_states).logits[:, -1, :]
            return self._probs_of_yes(logits, self.processor.tokenizer)

        return self._by_question_length(group, images, list(questions), list(questions))

    def rank_answers(self, images: Sequence, questions: Sequence[str], answers: Sequence[str],
                     label_smoothing: float = 0.1) -> np.ndarray:
        """BLIP/LAVIS answer ranking of a fixed ``answers`` list for each (image, question) pair.

        As LAVIS' ``rank_answers``: each answer is scored by the answer decoder over ``[DEC] answer [SEP]``.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            One image per question.
        questions : sequence of str
            The questions.
        answers : sequence of str
            The candidate answers, the same for every pair.
        label_smoothing : float, optional
            The label smoothing of the cross-entropy (LAVIS' BLIP text decoder trains and ranks with 0.1).

        Returns
        -------
        numpy.ndarray
            float64 ``(n_pairs, 2, n_answers)``: ``[:, 0]`` the probability of each answer's first token at
            the answer decoder's first step (softmax over the vocabulary), ``[:, 1]`` each answer's ranking
            score, minus the decoder's summed cross-entropy over ``answer [SEP]``.
        """
        answers = [str(a) for a in answers]
        out = self._batched(lambda ims, qs: self._by_question_length(
            lambda i2, q2: self._rank_unpadded(i2, q2, answers, float(label_smoothing)), ims, list(qs), list(qs)),
            images, questions)
        return np.asarray(out, dtype=np.float64).reshape(len(out), 2, len(answers))

    def _rank_unpadded(self, images, questions, answers, eps):
        import torch

        # LAVIS tokenizes the answers as [CLS] answer [SEP], padded to the longest, and puts the decoder's
        # start token in place of [CLS]: built explicitly here, whatever the tokenizer's special tokens.
        tok = self.processor.tokenizer
        cfg = self.model.config.text_config
        seqs = [[self.model.decoder_start_token_id, *tok.encode(a, add_special_tokens=False), cfg.sep_token_id]
                for a in answers]
        width = max(len(q) for q in seqs)
        ids = torch.full((len(seqs), width), cfg.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for r, q in enumerate(seqs):
            ids[r, :len(q)], mask[r, :len(q)] = torch.tensor(q), 1
        n, k = len(questions), len(answers)
        with autocast(self.device, self.dtype):
            q_states = self._question_states(images, questions)
            start = torch.full((n, 1), self.model.decoder_start_token_id, device=self.device)
            first = self.model.text_decoder(input_ids=start, encoder_hidden_states=q_states).logits[:, 0, :]
            rep = torch.arange(n, device=self.device).repeat_interleave(k)
            logits = self.model.text_decoder(input_ids=ids.repeat(n, 1).to(self.device),
                                             attention_mask=mask.repeat(n, 1).to(self.device),
                                             encoder_hidden_states=q_states[rep]).logits
        p_first = torch.softmax(first.float(), dim=-1)[:, ids[:, 1].to(self.device)].double().cpu()
        logp = torch.log_softmax(logits[:, :-1, :].float(), dim=-1).double().cpu()
        target = ids[:, 1:].repeat(n, 1)
        nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
        loss = ((1 - eps) * nll + eps * -logp.mean(-1)) * mask[:, 1:].repeat(n, 1)
        score = -loss.sum(-1).view(n, k)
        return [[p_first[i].tolist(), score[i].tolist()] for i in range(n)]

    def _answer(self, images, questions, max_new_tokens):
        res = self._generate(images, questions, max_new_tokens=max_new_tokens)
        return [self.processor.decode(out[k], skip_special_tokens=True).strip() for out, k in res]

    def _answer_decoded(self, images, questions, decoding, max_new_tokens):
        """TIFA's ``BLIP.vqa`` (``decoding=tifa``).

        The bare question, ``generate(max_length=50)``, the answer decoded with ``skip_special_tokens`` and not
        stripped.
        """
        if "blip" not in decoding.model_types:
            raise InputError(f"VQA {self.model_id}: decoding={decoding.name} ({decoding.source}) is not for BLIP-VQA")
        res = self._generate(images, questions, **dict(decoding.arguments))
        return [self.processor.decode(out[k], skip_special_tokens=True) for out, k in res]

    def _choice_logprobs(self, images, items):
        """Image -> question encoder once per pair, then the answer decoder over ``[DEC] choice [SEP]``.

        Grouped by question length, as the decoder would attend to a padded question's padding.
        """
        return self._by_question_length(self._choice_logprobs_unpadded, images, items, [q for q, _ in items])

    def _answer_score(self, images, items):
        """The answer decoder over ``[DEC] answer [SEP]`` (BLIP's answer format), grouped by question length."""
        return self._by_question_length(self._answer_score_unpadded, images, items, [q for q, _ in items])

    def _answer_score_unpadded(self, images, items):
        import torch

        tok = self.processor.tokenizer
        cfg = self.model.config.text_config
        start, sep, pad = self.model.decoder_start_token_id, cfg.sep_token_id, cfg.pad_token_id or 0
        seqs = [(start, *tok.encode(a, add_special_tokens=False), sep) for _, a in items]
        width = max(len(x) for x in seqs)
        ids = torch.full((len(seqs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for r, x in enumerate(seqs):
            ids[r, :len(x)] = torch.tensor(x)
            mask[r, :len(x)] = 1
        with autocast(self.device, self.dtype):
            q_states = self._question_states(images, [q for q, _ in items])
            logits = self.model.text_decoder(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                             encoder_hidden_states=q_states).logits
        logp = torch.log_softmax(logits.float(), dim=-1).double().cpu()
        return [float(np.exp(np.mean([float(logp[r, t - 1, x[t]]) for t in range(1, len(x))])))
                for r, x in enumerate(seqs)]

    def _choice_logprobs_unpadded(self, images, items):
        import torch

        tok = self.processor.tokenizer
        cfg = self.model.config.text_config
        start, sep, pad = self.model.decoder_start_token_id, cfg.sep_token_id, cfg.pad_token_id or 0
        rows: dict[tuple[int, tuple[int, ...]], int] = {}
        for i, (_, cs) in enumerate(items):
            for c in cs:
                for ids in self.choice_token_ids(tok, c):
                    rows.setdefault((i, (start, *ids, sep)), len(rows))
        keys = list(rows)
        width = max(len(seq) for _, seq in keys)
        ids = torch.full((len(keys), width), pad, dtype=torch.long)
        mask = torch.zeros((len(keys), width), dtype=torch.long)
        for r, (_, seq) in enumerate(keys):
            ids[r, :len(seq)] = torch.tensor(seq)
            mask[r, :len(seq)] = 1
        pair = torch.tensor([i for i, _ in keys], device=self.device)
        with autocast(self.device, self.dtype):
            q_states = self._question_states(images, [q for q, _ in items])
            # Answers are right-padded; the decoder is causal, so padding after an answer is never seen.
            logits = self.model.text_decoder(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                             encoder_hidden_states=q_states[pair]).logits
        logp = torch.log_softmax(logits.float(), dim=-1).double().cpu()
        seq_lp = {key: float(sum(logp[r, t - 1, key[1][t]] for t in range(1, len(key[1]))))
                  for r, key in enumerate(keys)}
        return [[_logsumexp([seq_lp[(i, (start, *s_, sep))] for s_ in self.choice_token_ids(tok, c)]) for c in cs]
                for i, (_, cs) in enumerate(items)]


class GenerativeVQA(VQAModel):
    """A generative VLM (``AutoModelForImageTextToText`` + ``AutoProcessor``), chat template if it has one.

    Prompts are the processor's chat template with one image, else ``template`` (default
    :data:`PLAIN_TEMPLATE`). LLaVA-1.5 is scored by :meth:`VQAModel.answer_score` in t2v_metrics' own
    conversation and square padding unless ``llava_format=chat``; InstructBLIP / BLIP-2 with a Flan-T5 in
    LAVIS' format (:mod:`.vqa_t2v`).

    Parameters
    ----------
    model_id : str
        The hub id or folder of the checkpoint.
    spec : Spec
        The metric's parsed spec (for messages and hub access).
    device : str
        The torch device.
    dtype : torch.dtype
        The weights' and compute dtype.
    batch_size : int
        Pairs per model call.
    revision : str or None, optional
        The hub revision.
    template : str or None, optional
        A prompt template with ``{question}``, instead of the chat template.
    llava_format : str, optional
        ``t2v_metrics`` or ``chat``: how LLaVA-1.5's answers are scored.
    loaded : OriginalLlava, optional
        A checkpoint converted from another code layout (:func:`~ts2viz.metrics.backbones.llava.load_original_llava`).

    Raises
    ------
    ts2viz.errors.InputError
        If the model or processor cannot be loaded, or ``llava_format`` is not accepted.
    """

    @classmethod
    def from_model(cls, model, processor, *, name: str = "in-memory", batch_size: int = 8,
                   t2v_image_processor=None) -> "GenerativeVQA":
        """The VQA model of an already-built transformers VLM and its processor.

        For example random weights built on the GPU by ``benchmarks/bench_gpu.py``: no download, no
        checkpoint on disk; it computes on its own device in its own dtype.

        Parameters
        ----------
        model : transformers.PreTrainedModel
            The VLM (LLaVA, Qwen2-VL, PaliGemma, ...).
        processor : transformers.ProcessorMixin
            Its processor.
        name : str
            The name the metric's config records.
        batch_size : int
            Pairs per forward pass.
        t2v_image_processor : optional
            LLaVA's CLIP image processor for t2v_metrics' square padding (default: the processor's own).

        Returns
        -------
        GenerativeVQA
            The VQA model.
        """
        from types import SimpleNamespace

        p = next(model.parameters())
        dev = str(p.device)
        loaded = SimpleNamespace(model=model, processor=processor, vision_tower=name, text_vocab=None,
                                 template=None, version="", tower_from_checkpoint=False,
                                 image_processor=t2v_image_processor or getattr(processor, "image_processor", None))
        return cls(name, Spec(f"vqascore:{name}", "vqascore", name), dev, p.dtype, batch_size, loaded=loaded)

    def __init__(self, model_id: str, spec: Spec, device: str, dtype, batch_size: int, revision=None,
                 template: str | None = None, llava_format: str = "t2v_metrics", loaded=None):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        kw = {"revision": revision} if revision else {}
        if loaded is None:
            model = hf_load("vision-language model", AutoModelForImageTextToText.from_pretrained, model_id, spec,
                            dtype=dtype, **kw)
            self.processor = hf_load("processor", AutoProcessor.from_pretrained, model_id, spec, **kw)
        else:  # a checkpoint converted from another code layout (:mod:`.llava`)
            model, self.processor = loaded.model, loaded.processor
        self.model = model.to(device).eval()
        tok = getattr(self.processor, "tokenizer", self.processor)
        # Batched decoding reads the last position: pad on the left.
        tok.padding_side = "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        self.tokenizer = tok
        own_template = template is None
        if own_template and loaded is not None:
            template = loaded.template  # the converted layout has no chat template: its own conversation
        self.template = template
        self.chat = template is None and bool(getattr(self.processor, "chat_template", None))
        if llava_format not in ("t2v_metrics", "chat"):
            raise InputError(f"metric {spec.raw!r}: llava_format must be t2v_metrics or chat, not {llava_format!r}")
        #: LLaVA-1.5 scored as t2v_metrics does (its conversation, square padding): answer_score only
        self.t2v_llava = (own_template and llava_format == "t2v_metrics"
                          and getattr(model.config, "model_type", "") == "llava")
        if self.t2v_llava:
            given = getattr(loaded, "image_processor", None)
            self._t2v_image_processor = given or _pil_image_processor(self.processor.image_processor,
                                                                      loaded.vision_tower if loaded else model_id,
                                                                      spec, {} if loaded else kw)
        #: the softmax of t2v_metrics' LLaVA score runs over the tokenizer's own vocabulary, as the original
        #: model's (32000 rows); llava-hf's <image> and padding rows (32064 in all) are left out
        self.text_vocab = int(getattr(tok, "vocab_size", 0) or 0) or None
        if loaded is not None and getattr(loaded, "text_vocab", None):
            self.text_vocab = int(loaded.text_vocab)
        text_cfg = getattr(model.config, "text_config", None)
        #: an encoder-decoder language model (BLIP-2 / InstructBLIP Flan-T5): answers go to the decoder
        self.encoder_decoder = bool(getattr(text_cfg, "is_encoder_decoder", False)
                                    or getattr(model.config, "is_encoder_decoder", False))
        if self.encoder_decoder:  # the answer is the decoder's: the encoder's prompts pad on the right (T5 scores
            tok.padding_side = "right"  # left-padded prompts differently, so results would depend on the batch)
        #: answer_score in LAVIS' Flan-T5 format, as t2v_metrics scores InstructBLIP (:mod:`.vqa_t2v`)
        self.t2v_lavis = own_template and self.encoder_decoder and getattr(model.config, "model_type", "") in (
            "instructblip", "blip-2")
        ident = model_identity(model_id, revision, model.config)
        if loaded is not None and getattr(loaded, "version", ""):
            ident.update(layout=f"llava-{loaded.version} (LLaVA's own code, converted)",
                         vision_tower=str(loaded.vision_tower),
                         tower_weights="checkpoint" if loaded.tower_from_checkpoint else "vision_tower")
        super().__init__(model_id, ident, device, dtype, batch_size)

    @property
    def config(self) -> dict:
        """The VQA model's config with the prompt format, answer-score format and first-token processors."""
        prompt = "chat" if self.chat else (self.template or PLAIN_TEMPLATE)
        extra = {}
        if self.t2v_llava:
            extra["answer_score_prompt"] = "t2v_metrics llava-1.5 chat, pad to square"
        if self.t2v_lavis:
            extra["answer_score_prompt"] = "t2v_metrics LAVIS Flan-T5 (resize 224 + centre crop; answer + </s>)"
        from .vqa_t2v import greedy_processors

        _, used = greedy_processors(self.model.generation_config)
        if used:
            extra["first_token_processors"] = used
        return {**super().config, "prompt": prompt, **extra}

    @property
    def end_of_answer(self) -> int | None:
        """The token that ends the model's answers, part of every answer choice's likelihood.

        Its generation config's first end-of-sequence token, else the tokenizer's (:meth:`choice_logprobs`).

        Returns
        -------
        int or None
            The token id; None when the model has no end-of-sequence token.
        """
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        if isinstance(eos, (list, tuple)):
            eos = eos[0] if eos else None
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return None if eos is None else int(eos)

    def prompt(self, question: str) -> str:
        """The model input text for ``question`` (chat template with one image, or a plain template).

        Parameters
        ----------
        question : str
            The question.

        Returns
        -------
        str
            The prompt, with the generation prompt of the chat template where there is one.
        """
        if self.chat:
            msgs = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}]
            return self.processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        return (self.template or PLAIN_TEMPLATE).format(question=question)

    def _inputs(self, images, questions):
        enc = self.processor(images=list(images), text=[self.prompt(q) for q in questions], padding=True,
                             return_tensors="pt")
        out = {}
        for k, v in enc.items():
            if k == "labels":  # PaliGemma's processor adds training labels; scoring needs none
                continue
            if k == "token_type_ids" and not self._takes("token_type_ids"):   # GIT's BERT tokenizer adds them
                continue
            if hasattr(v, "to"):
                v = v.to(self.device)
                if v.is_floating_point():
                    v = v.to(self.model.dtype)
            out[k] = v
        return out

    def _yes_prob(self, images, questions):
        enc = self._inputs(images, questions)
        if self.encoder_decoder:
            return self._probs_of_yes(self._decoder_logits(enc, [[]] * len(questions))[:, 0, :], self.tokenizer)
        with autocast(self.device, self.dtype):
            logits = self.model(**enc).logits[:, -1, :]
        return self._probs_of_yes(logits, self.tokenizer)

    def _first_token_score(self, images, items):
        from .vqa_t2v import first_token_scores

        if self.encoder_decoder:
            enc = self._inputs(images, [q for q, _ in items])
            import torch

            p = torch.softmax(self._decoder_logits(enc, [[]] * len(items))[:, 0, :].double(), dim=-1).cpu()
            return [float(p[r, self.tokenizer.encode(a, add_special_tokens=False)[0]]) for r, (_, a) in enumerate(items)]
        return first_token_scores(self, images, items)

    def _decoder_logits(self, enc: dict, targets: list[list[int]]):
        """Decoder logits of an encoder-decoder VLM teacher forced on ``targets[r]``.

        The decoder start token first, right-padded: row r, position t predicts ``targets[r][t]`` (position 0:
        the first token).
        """
        import torch

        start = self.model.config.text_config.decoder_start_token_id
        pad = self.model.config.text_config.pad_token_id
        width = max(1, max(len(t) for t in targets))
        dec = torch.full((len(targets), width), pad, dtype=torch.long)
        dmask = torch.zeros((len(targets), width), dtype=torch.long)
        for r, t in enumerate(targets):
            seq = [start, *t[:-1]] if t else [start]
            dec[r, :len(seq)] = torch.tensor(seq)
            dmask[r, :len(seq)] = 1
        with autocast(self.device, self.dtype):
            return self.model(**enc, decoder_input_ids=dec.to(self.device),
                              decoder_attention_mask=dmask.to(self.device)).logits

    def _choice_ids(self, choice: str) -> list[tuple[int, ...]]:
        """A choice's token sequences (its :func:`surface_forms`), each ended by the end-of-answer token.

        So choices which are prefixes of each other ("red" / "red and white") are exclusive answers.
        """
        eos = self.end_of_answer
        return [(*ids, eos) if eos is not None else ids for ids in self.choice_token_ids(self.tokenizer, choice)]

    def _choice_logprobs_encdec(self, images, items):
        import torch

        keys = list(dict.fromkeys((i, ids) for i, (_, cs) in enumerate(items) for c in cs for ids in self._choice_ids(c)))
        enc = self._inputs([images[i] for i, _ in keys], [items[i][0] for i, _ in keys])
        logp = torch.log_softmax(self._decoder_logits(enc, [list(ids) for _, ids in keys]).float(), -1).double().cpu()
        seq = {k: float(sum(logp[r, t, k[1][t]] for t in range(len(k[1])))) for r, k in enumerate(keys)}
        return [[_logsumexp([seq[(i, ids)] for ids in self._choice_ids(c)]) for c in cs] for i, (_, cs) in enumerate(items)]

    def _choice_logprobs(self, images, items):
        """One forward pass per (pair, choice prefix): the prompt, then all but the last choice token.

        The last token is the end-of-answer token that closes every choice (:meth:`_choice_ids`).

        Choices that share their prefix share one row. Rows are left-padded like the prompts, which keeps
        the answer positions at the end and the numbers independent of the batch.
        """
        import torch

        if self.encoder_decoder:
            return self._choice_logprobs_encdec(images, items)
        rows: dict[tuple[int, tuple[int, ...]], int] = {}
        for i, (_, cs) in enumerate(items):
            for c in cs:
                for ids in self._choice_ids(c):
                    rows.setdefault((i, ids[:-1]), len(rows))
        keys = list(rows)
        enc = self._inputs([images[i] for i, _ in keys], [items[i][0] for i, _ in keys])
        enc = self._append_tokens(enc, [list(ext) for _, ext in keys])
        keep = max(len(ext) for _, ext in keys) + 1
        with autocast(self.device, self.dtype):
            if self._keeps_logits:
                logits = self.model(**enc, logits_to_keep=keep).logits
            else:
                logits = self.model(**enc).logits
        logp = torch.log_softmax(logits[:, -keep:, :].float(), dim=-1).double().cpu()

        def seq_lp(i: int, ids: tuple[int, ...]) -> float:
            r, e = rows[(i, ids[:-1])], len(ids) - 1
            return float(sum(logp[r, keep - 1 - e + t, ids[t]] for t in range(len(ids))))

        return [[_logsumexp([seq_lp(i, ids) for ids in self._choice_ids(c)]) for c in cs]
                for i, (_, cs) in enumerate(items)]

    @property
    def _keeps_logits(self) -> bool:
        import inspect

        return "logits_to_keep" in inspect.signature(self.model.forward).parameters

    def _append_tokens(self, enc: dict, ext: list[list[int]]) -> dict:
        """``enc`` (left-padded prompts) with ``ext[r]`` appended to row ``r``, re-padded on the left.

        Every per-token tensor (shape == ``input_ids``) is extended: ids with the tokens, the attention
        mask with 1, ``token_type_ids`` with PaliGemma's "suffix" type 1 (its answer tokens attend
        causally, as in generation; 0 for other models), anything else with 0.
        """
        import torch

        ids = enc["input_ids"]
        n, length = ids.shape
        width = max(len(e) for e in ext)
        suffix_type = 1 if getattr(self.model.config, "model_type", "") == "paligemma" else 0
        pad_id = self.tokenizer.pad_token_id
        out = dict(enc)
        for k, v in enc.items():
            if not (hasattr(v, "shape") and v.dim() == 2 and tuple(v.shape) == (n, length)):
                continue
            fill_pad = pad_id if k == "input_ids" else 0
            new = torch.full((n, length + width), fill_pad, dtype=v.dtype, device=v.device)
            for r, e in enumerate(ext):
                lead = width - len(e)
                new[r, lead:lead + length] = v[r]
                if not e:
                    continue
                if k == "input_ids":
                    val = torch.tensor(e, dtype=v.dtype, device=v.device)
                else:
                    val = 1 if k == "attention_mask" or (k == "token_type_ids" and suffix_type) else 0
                new[r, lead + length:] = val
            out[k] = new
        return out

    def _answer_score(self, images, items):
        if self.t2v_llava:
            return self._answer_score_t2v_llava(images, items)
        if self.t2v_lavis:
            from .vqa_t2v import lavis_t5_answer_scores

            return lavis_t5_answer_scores(self, images, items)
        return self._answer_score_chat(images, items)

    def _answer_score_chat(self, images, items):
        """The answer's tokens and the end-of-answer token after the model's prompt: mean log-probability, exponentiated.

        For an encoder-decoder the tokens are its decoder's target.
        """
        import torch

        eos = self.end_of_answer
        ext = [list(self.tokenizer.encode(a, add_special_tokens=False)) for _, a in items]
        if any(not e for e in ext):
            raise InputError(f"VQA {self.model_id}: an answer to score has no tokens")
        ext = [e + [eos] if eos is not None else e for e in ext]
        if self.encoder_decoder:
            enc = self._inputs(images, [q for q, _ in items])
            logp = torch.log_softmax(self._decoder_logits(enc, ext).float(), dim=-1).double().cpu()
            return [float(np.exp(np.mean([float(logp[r, t, e[t]]) for t in range(len(e))]))) for r, e in enumerate(ext)]
        enc = self._append_tokens(self._inputs(images, [q for q, _ in items]), [e[:-1] for e in ext])
        keep = max(len(e) for e in ext)
        with autocast(self.device, self.dtype):
            logits = (self.model(**enc, logits_to_keep=keep) if self._keeps_logits else self.model(**enc)).logits
        logp = torch.log_softmax(logits[:, -keep:, :].float(), dim=-1).double().cpu()
        return [float(np.exp(np.mean([float(logp[r, keep - len(e) + t, e[t]]) for t in range(len(e))])))
                for r, e in enumerate(ext)]

    def _t2v_ids(self, text: str) -> list[int]:
        """t2v_metrics' ``tokenizer_image_token``: chunks around ``<image>`` tokenised on their own.

        When the first chunk starts with BOS, BOS is kept once and every chunk's first token dropped.
        """
        from .llava import IMAGE_PLACEHOLDER, IMAGE_SENTINEL

        chunks = [self.tokenizer(c).input_ids for c in text.split(IMAGE_PLACEHOLDER)]
        bos = self.tokenizer.bos_token_id
        skip = 1 if chunks and chunks[0] and bos is not None and chunks[0][0] == bos else 0
        out = [bos] if skip else []
        for k, c in enumerate(chunks):
            if k:
                out.append(IMAGE_SENTINEL)
            out.extend(c[skip:])
        return out

    def t2v_pixel_values(self, images):
        """LLaVA-1.5 images as t2v_metrics prepares them, stacked on the device in the model's dtype.

        Padded to square with the processor's mean colour, then the CLIP image processor (PIL-based where
        transformers has one, as the original's); pixels :meth:`prepare_image` attached are reused.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The images (or those :meth:`prepare_image` returned).

        Returns
        -------
        torch.Tensor
            ``(n, 3, s, s)`` pixel values.
        """
        import torch

        from ..common.pixels import pixels_of

        px = [pixels_of(im, self.pixel_key, self._t2v_pixels) for im in images]
        return torch.stack(px).to(self.device, self.model.dtype)

    def _t2v_pixels(self, image):
        from ..common.pixels import processor_pixels
        from .llava import expand_to_square

        ip = self._t2v_image_processor
        return processor_pixels(ip, expand_to_square(image, ip.image_mean))

    def prepare_image(self, image):
        """LLaVA-1.5 scored as t2v_metrics does: the image carrying its padded, processed pixels.

        Other models get the image unchanged (their pixels depend on the prompt batch).

        Parameters
        ----------
        image : PIL.Image.Image
            A decoded RGB image.

        Returns
        -------
        PIL.Image.Image
            ``image``, or ``image`` carrying its pixel tensor
            (:func:`~ts2viz.metrics.common.pixels.prepared_image`).
        """
        if not self.t2v_llava:
            return image
        from ..common.pixels import prepared_image

        return prepared_image(image, self.pixel_key, self._t2v_pixels(image))

    def _answer_score_t2v_llava(self, images, items):
        r"""t2v_metrics' LLaVA-1.5 VQAScore: ``SYSTEM USER: <image>\nQ ASSISTANT: `` + ``A</s>``.

        The labels are the tokens after the question (one fewer when the question ends in a space, as the
        original counts), the image features spliced in place of ``<image>``; score
        ``exp(-mean cross-entropy)``.
        """
        import torch

        from .llava import IMAGE_SENTINEL, chat_question

        pix = self.t2v_pixel_values(images)
        h, w = pix.shape[-2:]
        patch = self.model.config.vision_config.patch_size
        n_img = (h // patch) * (w // patch) + (1 if self.model.config.vision_feature_select_strategy == "full" else 0)
        image_id = self.model.config.image_token_id
        rows, starts = [], []
        for q, a in items:
            question = chat_question(q)
            ids = self._t2v_ids(question + a + "</s>")
            start = len(self._t2v_ids(question)) - (1 if question.endswith(" ") else 0)
            k = ids.index(IMAGE_SENTINEL)
            rows.append(ids[:k] + [image_id] * n_img + ids[k + 1:])
            starts.append(start + n_img - 1 if start > k else start)
        pad = self.tokenizer.pad_token_id
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for r, row in enumerate(rows):  # right padding, as the original
            ids[r, :len(row)] = torch.tensor(row)
            mask[r, :len(row)] = 1
        with autocast(self.device, self.dtype):
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                                pixel_values=pix).logits
        if self.text_vocab and self.text_vocab < logits.shape[-1]:
            logits = logits[..., :self.text_vocab]
        spans = [range(max(s, 1), len(row)) for row, s in zip(rows, starts)]
        if any(not pos for pos in spans):
            raise InputError(f"VQA {self.model_id}: the answer to score has no tokens")
        # Only the positions that predict an answer token leave the device: the log-softmax of a position is
        # computed over its own logits alone, so these are the numbers of the whole (batch x length x vocab)
        # tensor, which in float64 is gigabytes for a 7B model's batch (t2v_metrics' full cross-entropy).
        at = torch.tensor([(r, t - 1) for r, pos in enumerate(spans) for t in pos], device=logits.device)
        logp = torch.log_softmax(logits[at[:, 0], at[:, 1]].float(), dim=-1).double().cpu()
        out, k = [], 0
        for row, pos in zip(rows, spans):
            out.append(float(np.exp(np.mean([float(logp[k + j, row[t]]) for j, t in enumerate(pos)]))))
            k += len(pos)
        return out

    def _answer(self, images, questions, max_new_tokens):
        enc = self._inputs(images, questions)
        with autocast(self.device, self.dtype):
            ids = self.model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                      pad_token_id=self.tokenizer.pad_token_id)
        new = ids[:, enc["input_ids"].shape[1]:]
        return [s.strip() for s in self.tokenizer.batch_decode(new, skip_special_tokens=True)]

    def _takes(self, name: str) -> bool:
        import inspect

        return name in inspect.signature(self.model.forward).parameters

    def _answer_decoded(self, images, questions, decoding, max_new_tokens):
        """A named decoding (:mod:`ts2viz.metrics.common.decoding`).

        DSG's InstructBLIP call, or TIFA's call for GIT or BLIP-2.
        """
        model_type = getattr(self.model.config, "model_type", "")
        if model_type not in decoding.model_types:
            raise InputError(f"VQA {self.model_id}: decoding={decoding.name} applies to "
                             f"{', '.join(decoding.model_types)} models only")
        if decoding.name == "tifa" and model_type == "git":
            return self._answer_tifa_git(images, questions, decoding)
        if decoding.name == "tifa":
            return self._answer_generate(images, questions, decoding, max_new_tokens)
        return self._answer_dsg(images, questions, decoding, max_new_tokens)

    def _by_prompt_length(self, questions: list[str], fn: Callable) -> list:
        """``fn(indices)`` per group of questions whose prompts have the same token length, in input order.

        No row is padded.
        """
        lengths = [len(ids) for ids in self.tokenizer([self.prompt(q) for q in questions])["input_ids"]]
        results: list = [None] * len(questions)
        for n in dict.fromkeys(lengths):
            idx = [i for i, L in enumerate(lengths) if L == n]
            for i, v in zip(idx, fn(idx)):
                results[i] = v
        return results

    def _answer_tifa_git(self, images, questions, decoding):
        """TIFA's ``GIT.vqa``: ``[CLS]`` + the question's tokens (no ``[SEP]``), then ``generate``.

        ``generate(pixel_values, input_ids, max_length=50)``; the tokens after the question decoded with
        ``skip_special_tokens``.
        """
        import torch

        tok = self.tokenizer
        rows = [[tok.cls_token_id] + tok(q, add_special_tokens=False)["input_ids"] for q in questions]
        results: list = [None] * len(questions)
        for n in dict.fromkeys(len(r) for r in rows):
            idx = [i for i, r in enumerate(rows) if len(r) == n]
            px = self.processor(images=[images[i] for i in idx], return_tensors="pt")["pixel_values"]
            ids = torch.tensor([rows[i] for i in idx], device=self.device)
            with autocast(self.device, self.dtype):
                out = self.model.generate(pixel_values=px.to(self.device, self.model.dtype), input_ids=ids,
                                          **dict(decoding.arguments))
            for i, text in zip(idx, tok.batch_decode(out[:, n:], skip_special_tokens=True)):
                results[i] = text
        return results

    def _answer_generate(self, images, questions, decoding, max_new_tokens):
        """The model's own ``generate`` with the setting's arguments (TIFA's BLIP-2 call: LAVIS' defaults).

        Questions are batched by prompt length; the new tokens decoded with ``skip_special_tokens``, not
        stripped.
        """
        lm_config = getattr(self.model.config, "text_config", self.model.config)
        enc_dec = bool(getattr(lm_config, "is_encoder_decoder", False))
        kw = decoding.generate_kwargs(encoder_decoder=enc_dec, max_new_tokens=max_new_tokens)

        def group(idx):
            enc = self._inputs([images[i] for i in idx], [questions[i] for i in idx])
            with autocast(self.device, self.dtype):
                out = self.model.generate(**enc, pad_token_id=self.tokenizer.pad_token_id, **kw)
            if not enc_dec and out.shape[1] >= enc["input_ids"].shape[1]:
                out = out[:, enc["input_ids"].shape[1]:]
            return self.tokenizer.batch_decode(out, skip_special_tokens=True)

        return self._by_prompt_length(list(questions), group)

    def _answer_dsg(self, images, questions, decoding, max_new_tokens):
        """InstructBLIP's ``generate`` as transformers 4.31 ran it for DSG's code.

        See :mod:`ts2viz.metrics.common.decoding`. The language model is given only ``inputs_embeds`` (Q-Former query embeddings, then the prompt's), so
        lengths and the repetition penalty count generated tokens only; its output is the answer alone.

        Questions are batched only with questions of the same prompt token lengths (language model and
        Q-Former), so no row is padded and each answer is the one DSG's one-at-a-time call gives.
        """
        lm = self.model.language_model
        kw = decoding.generate_kwargs(encoder_decoder=bool(lm.config.is_encoder_decoder), max_new_tokens=max_new_tokens)
        prompts = [self.prompt(q) for q in questions]
        keys = list(zip(*[[len(ids) for ids in tok(prompts)["input_ids"]]
                          for tok in (self.tokenizer, getattr(self.processor, "qformer_tokenizer", None)) if tok]))
        results: list = [None] * len(questions)
        for key in dict.fromkeys(keys):
            idx = [i for i, k in enumerate(keys) if k == key]
            enc = self._inputs([images[i] for i in idx], [questions[i] for i in idx])
            with autocast(self.device, self.dtype):
                feats = self.model.get_image_features(
                    enc["pixel_values"], qformer_input_ids=enc.get("qformer_input_ids"),
                    qformer_attention_mask=enc.get("qformer_attention_mask"), return_dict=True).pooler_output
                embeds = self.model.get_input_embeddings()(enc["input_ids"])
                where = self.model.get_placeholder_mask(enc["input_ids"], inputs_embeds=embeds)
                embeds = embeds.masked_scatter(where, feats.to(embeds.device, embeds.dtype))
                out = lm.generate(inputs_embeds=embeds, attention_mask=enc["attention_mask"],
                                  pad_token_id=self.tokenizer.pad_token_id, **kw)
            for i, text in zip(idx, self.tokenizer.batch_decode(out, skip_special_tokens=True)):
                results[i] = text.strip()
        return results


def _pil_image_processor(ip, model_id: str, spec: Spec, kw: dict):
    """The PIL-based twin of a CLIP image processor (t2v_metrics ran the PIL one), else ``ip`` itself."""
    import transformers

    pil = getattr(transformers, "CLIPImageProcessorPil", None)
    if pil is None or not type(ip).__name__.startswith("CLIPImageProcessor"):
        return ip
    return hf_load("image processor", pil.from_pretrained, model_id, spec, **kw)


#: VQA models of model types transformers does not know: model_type -> "module:function" building the
#: :class:`VQAModel` (imported only when such a model is loaded; the module subclasses VQAModel)
EXTRA_BACKENDS = {"clip_t5": ".clip_flant5:load_clip_t5_vqa"}

DEFAULT_PAIRS = {"cpu": 8, "cuda": 32, "mps": 8}


def load_vqa_model(spec: Spec, device: str | None = None, *, dtype: str | None = None,
                   batch_size: int | None = None, template: str | None = None, llava_format: str = "t2v_metrics",
                   vision_tower: str | None = None, tokenizer: str | None = None) -> VQAModel:
    """The VQA model of ``spec.model`` (hub id or folder): BLIP-VQA, CLIP-FlanT5 or a generative VLM, by its config.

    The config's ``model_type`` decides: ``clip_t5`` (CLIP-FlanT5, :data:`EXTRA_BACKENDS`), LLaVA's own code
    layout (converted on load, :func:`~ts2viz.metrics.backbones.llava.load_original_llava`), BLIP-VQA, else
    a generative VLM (PaliGemma with :data:`PALIGEMMA_TEMPLATE`).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    dtype : str or None, optional
        ``float32``, ``float16`` or ``bfloat16`` (None: :func:`~ts2viz.metrics.common.device.resolve_dtype`'s
        default).
    batch_size : int or None, optional
        Pairs per model call (None: 8 on CPU and MPS, 32 on CUDA).
    template : str or None, optional
        A prompt template with ``{question}`` for a generative VLM.
    llava_format : str, optional
        How :meth:`VQAModel.answer_score` prompts LLaVA-1.5: ``t2v_metrics`` or ``chat``.
    vision_tower : str or None, optional
        The CLIP vision tower of a CLIP-FlanT5 or original-layout LLaVA checkpoint.
    tokenizer : str or None, optional
        The T5 tokenizer of a CLIP-FlanT5 checkpoint (see
        :func:`~ts2viz.metrics.backbones.clip_flant5.load_clip_t5`).

    Returns
    -------
    VQAModel
        A :class:`BlipVQA`, a CLIP-FlanT5 VQA model or a :class:`GenerativeVQA`.

    Raises
    ------
    InputError
        For an open_clip model, an option the model does not take (``tokenizer``, ``vision_tower``), a BLIP
        checkpoint that is not BLIP-VQA, or a model that cannot be loaded.
    """
    import importlib

    from transformers import AutoConfig, PretrainedConfig

    if spec.is_openclip:
        raise InputError(f"metric {spec.raw!r}: open_clip models cannot answer questions; use a VQA model")
    dev = resolve_device(device)
    dt = resolve_dtype(dev, dtype)
    model_id = check_model_id(spec)
    kw = {"revision": spec.revision} if spec.revision else {}
    bs = batch_size or DEFAULT_PAIRS.get(dev.split(":")[0], 8)
    raw, _ = hf_load("config", PretrainedConfig.get_config_dict, model_id, spec, **kw)
    backend = EXTRA_BACKENDS.get(raw.get("model_type"))
    if backend:
        mod, _, fn = backend.partition(":")
        return getattr(importlib.import_module(mod, __package__), fn)(
            model_id, spec, dev, dt, bs, spec.revision, vision_tower=vision_tower, tokenizer=tokenizer)
    if tokenizer:
        raise InputError(f"metric {spec.raw!r}: tokenizer is an option of CLIP-FlanT5 checkpoints only")
    from .llava import is_original_layout, load_original_llava

    if is_original_layout(raw):  # liuhaotian/llava-v1.5-* (t2v_metrics' LLaVA): converted on load
        loaded = load_original_llava(model_id, spec, dtype=dt, vision_tower=vision_tower, revision=spec.revision)
        return GenerativeVQA(model_id, spec, dev, dt, bs, spec.revision, template, llava_format, loaded=loaded)
    cfg = hf_load("config", AutoConfig.from_pretrained, model_id, spec, **kw)
    if template is None and cfg.model_type == "paligemma":
        template = PALIGEMMA_TEMPLATE  # PaliGemma has no chat template; it is trained on task prefixes
    if vision_tower:
        raise InputError(f"metric {spec.raw!r}: vision_tower is an option of CLIP-FlanT5 checkpoints and LLaVA "
                         "checkpoints in LLaVA's own layout only")
    archs = " ".join(getattr(cfg, "architectures", None) or [])
    if cfg.model_type == "blip" and ("QuestionAnswering" in archs or not archs):
        return BlipVQA(model_id, spec, dev, dt, bs, spec.revision)
    if cfg.model_type == "blip":
        raise InputError(f"metric {spec.raw!r}: {model_id!r} is a BLIP {archs or 'model'}, not BLIP-VQA")
    return GenerativeVQA(model_id, spec, dev, dt, bs, spec.revision, template, llava_format)
