"""The visual-question-answering backend shared by VQAScore, TIFA, DSG (and later Gecko, T2I-FineEval).

A :class:`VQAModel` answers many ``(image, question)`` pairs in batches, two ways:

* :meth:`VQAModel.yes_probability`: P("yes") read from the logits of the first answer token (the
  probability mass of the vocabulary entries that decode to "yes" in any case);
* :meth:`VQAModel.answer`: a free-form greedy answer.

Pairs may repeat an image (many questions per image) or use crops (:func:`crop`). Implementations:
BLIP-VQA (``BlipForQuestionAnswering``) and generative VLMs through ``AutoModelForImageTextToText``
(LLaVA-1.5, InstructBLIP, BLIP-2, Qwen2-VL, ...). GPU out-of-memory halves the pair batch and retries.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..errors import InputError
from .base import (autocast, check_model_id, hf_load, model_identity, resolve_device, resolve_dtype,
                   run_halving_on_oom)
from .spec import Spec

#: The prompt for generative models without a chat template (BLIP-2 / InstructBLIP convention).
PLAIN_TEMPLATE = "Question: {question} Answer:"


def crop(image, box: tuple[float, float, float, float], *, relative: bool = False):
    """A crop of a PIL image; ``box`` is (left, top, right, bottom) in pixels or, if ``relative``, in [0, 1]."""
    if relative:
        w, h = image.size
        box = (box[0] * w, box[1] * h, box[2] * w, box[3] * h)
    return image.crop(tuple(int(round(v)) for v in box))


class VQAModel:
    """Base class: batching, OOM halving and the yes-token set; subclasses implement the two ``_`` methods."""

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
        return {**self.identity, "vqa_class": type(self).__name__}

    # -- public API --------------------------------------------------------------------------------
    def yes_probability(self, images: Sequence, questions: Sequence[str]) -> np.ndarray:
        """P("yes") for each (image, question) pair, from the first answer token's distribution."""
        return np.asarray(self._batched(self._yes_prob, images, questions), dtype=np.float64)

    def answer(self, images: Sequence, questions: Sequence[str], max_new_tokens: int = 16) -> list[str]:
        """A greedy free-form answer for each (image, question) pair."""
        return list(self._batched(lambda im, q: self._answer(im, q, max_new_tokens), images, questions))

    # -- subclass hooks ----------------------------------------------------------------------------
    def _yes_prob(self, images: list, questions: list[str]) -> list[float]:
        raise NotImplementedError

    def _answer(self, images: list, questions: list[str], max_new_tokens: int) -> list[str]:
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
        """Vocabulary ids whose token decodes to "yes" (any case), as the first token of an answer."""
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

    def _probs_of_yes(self, logits, tokenizer) -> list[float]:
        import torch

        p = torch.softmax(logits.float(), dim=-1)
        return p[:, self.yes_token_ids(tokenizer)].sum(-1).double().cpu().tolist()


class BlipVQA(VQAModel):
    """BLIP-VQA (``Salesforce/blip-vqa-base``): an answer decoder over a question encoder."""

    generative = False

    def __init__(self, model_id: str, spec: Spec, device: str, dtype, batch_size: int, revision=None):
        from transformers import AutoProcessor, BlipForQuestionAnswering

        kw = {"revision": revision} if revision else {}
        model = hf_load("BLIP-VQA model", BlipForQuestionAnswering.from_pretrained, model_id, spec, dtype=dtype, **kw)
        self.model = model.to(device).eval()
        self.processor = hf_load("processor", AutoProcessor.from_pretrained, model_id, spec, **kw)
        super().__init__(model_id, model_identity(model_id, revision, model.config), device, dtype, batch_size)

    def _inputs(self, images, questions):
        enc = self.processor(images=list(images), text=list(questions), padding=True, return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()}
        enc["pixel_values"] = enc["pixel_values"].to(self.model.dtype)
        return enc

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
                out = self.model.generate(**enc, do_sample=False, **gen)
            for k, i in enumerate(idx):
                results[i] = (out, k)
        return results

    def _yes_prob(self, images, questions):
        res = self._generate(images, questions, max_new_tokens=1, output_logits=True, return_dict_in_generate=True)
        tok = self.processor.tokenizer
        return [self._probs_of_yes(out.logits[0][k:k + 1], tok)[0] for out, k in res]

    def _answer(self, images, questions, max_new_tokens):
        res = self._generate(images, questions, max_new_tokens=max_new_tokens)
        return [self.processor.decode(out[k], skip_special_tokens=True).strip() for out, k in res]


class GenerativeVQA(VQAModel):
    """A generative VLM (``AutoModelForImageTextToText`` + ``AutoProcessor``), chat template if it has one."""

    def __init__(self, model_id: str, spec: Spec, device: str, dtype, batch_size: int, revision=None,
                 template: str | None = None):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        kw = {"revision": revision} if revision else {}
        model = hf_load("vision-language model", AutoModelForImageTextToText.from_pretrained, model_id, spec,
                        dtype=dtype, **kw)
        self.model = model.to(device).eval()
        self.processor = hf_load("processor", AutoProcessor.from_pretrained, model_id, spec, **kw)
        tok = getattr(self.processor, "tokenizer", self.processor)
        # Batched decoding reads the last position: pad on the left.
        tok.padding_side = "left"
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        self.tokenizer = tok
        self.template = template
        self.chat = template is None and bool(getattr(self.processor, "chat_template", None))
        super().__init__(model_id, model_identity(model_id, revision, model.config), device, dtype, batch_size)

    @property
    def config(self) -> dict:
        return {**super().config, "prompt": "chat" if self.chat else (self.template or PLAIN_TEMPLATE)}

    def prompt(self, question: str) -> str:
        """The model input text for ``question`` (chat template with one image, or a plain template)."""
        if self.chat:
            msgs = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}]
            return self.processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        return (self.template or PLAIN_TEMPLATE).format(question=question)

    def _inputs(self, images, questions):
        enc = self.processor(images=list(images), text=[self.prompt(q) for q in questions], padding=True,
                             return_tensors="pt")
        out = {}
        for k, v in enc.items():
            if hasattr(v, "to"):
                v = v.to(self.device)
                if v.is_floating_point():
                    v = v.to(self.model.dtype)
            out[k] = v
        return out

    def _yes_prob(self, images, questions):
        enc = self._inputs(images, questions)
        with autocast(self.device, self.dtype):
            logits = self.model(**enc).logits[:, -1, :]
        return self._probs_of_yes(logits, self.tokenizer)

    def _answer(self, images, questions, max_new_tokens):
        enc = self._inputs(images, questions)
        with autocast(self.device, self.dtype):
            ids = self.model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                      pad_token_id=self.tokenizer.pad_token_id)
        new = ids[:, enc["input_ids"].shape[1]:]
        return [s.strip() for s in self.tokenizer.batch_decode(new, skip_special_tokens=True)]


DEFAULT_PAIRS = {"cpu": 8, "cuda": 32, "mps": 8}


def load_vqa_model(spec: Spec, device: str | None = None, *, dtype: str | None = None,
                   batch_size: int | None = None, template: str | None = None) -> VQAModel:
    """The VQA model of ``spec.model`` (hub id or folder): BLIP-VQA or a generative VLM, by its config."""
    from transformers import AutoConfig

    if spec.is_openclip:
        raise InputError(f"metric {spec.raw!r}: open_clip models cannot answer questions; use a VQA model")
    dev = resolve_device(device)
    dt = resolve_dtype(dev, dtype)
    model_id = check_model_id(spec)
    kw = {"revision": spec.revision} if spec.revision else {}
    cfg = hf_load("config", AutoConfig.from_pretrained, model_id, spec, **kw)
    bs = batch_size or DEFAULT_PAIRS.get(dev.split(":")[0], 8)
    archs = " ".join(getattr(cfg, "architectures", None) or [])
    if cfg.model_type == "blip" and ("QuestionAnswering" in archs or not archs):
        return BlipVQA(model_id, spec, dev, dt, bs, spec.revision)
    if cfg.model_type == "blip":
        raise InputError(f"metric {spec.raw!r}: {model_id!r} is a BLIP {archs or 'model'}, not BLIP-VQA")
    return GenerativeVQA(model_id, spec, dev, dt, bs, spec.revision, template)
