"""Generative VLMs (``AutoModelForImageTextToText`` + ``AutoProcessor``) as VQA models, and their prompt templates.

:class:`GenerativeVQA` prompts with the processor's chat template, else a template (:data:`PLAIN_TEMPLATE`;
:data:`PALIGEMMA_TEMPLATE` for PaliGemma); t2v_metrics' own formats for LLaVA-1.5 and InstructBLIP / BLIP-2
Flan-T5 are in :mod:`.t2v` and :mod:`.llava`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ....errors import InputError
from ...common.device import autocast
from ...common.pretrained import hf_load, model_identity
from ...common.spec import Spec
from .model import VQAModel, image_chat_prompt, logsumexp, surface_forms

if TYPE_CHECKING:
    from ...common.decoding import Decoding

#: The prompt for generative models without a chat template (BLIP-2 / InstructBLIP convention).
PLAIN_TEMPLATE = "Question: {question} Answer:"
#: PaliGemma's task prefix for English VQA (its processor expands <image>, adds BOS and the final newline).
PALIGEMMA_TEMPLATE = "<image>answer en {question}"


class GenerativeVQA(VQAModel):
    """A generative VLM (``AutoModelForImageTextToText`` + ``AutoProcessor``), chat template if it has one.

    Prompts are the processor's chat template with one image, else ``template`` (default
    :data:`PLAIN_TEMPLATE`). LLaVA-1.5 is scored by :meth:`VQAModel.answer_score` in t2v_metrics' own
    conversation and square padding unless ``llava_format=chat``; InstructBLIP / BLIP-2 with a Flan-T5 in
    LAVIS' format (:mod:`.t2v`).

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
        A checkpoint converted from another code layout (:func:`~ts2viz.metrics.backbones.vqa.llava.load_original_llava`).

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
        #: answer_score in LAVIS' Flan-T5 format, as t2v_metrics scores InstructBLIP (:mod:`.t2v`)
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
        from .t2v import greedy_processors

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
            return image_chat_prompt(self.processor, question)
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
        from .t2v import first_token_scores

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
        return [[logsumexp([seq[(i, ids)] for ids in self._choice_ids(c)]) for c in cs] for i, (_, cs) in enumerate(items)]

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

        return [[logsumexp([seq_lp(i, ids) for ids in self._choice_ids(c)]) for c in cs]
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
            from .t2v import lavis_t5_answer_scores

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

        from ...common.pixels import pixels_of

        px = [pixels_of(im, self.pixel_key, self._t2v_pixels) for im in images]
        return torch.stack(px).to(self.device, self.model.dtype)

    def _t2v_pixels(self, image):
        from ...common.pixels import processor_pixels
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
        from ...common.pixels import prepared_image

        return prepared_image(image, self.pixel_key, self._t2v_pixels(image))

    def _answer_score_t2v_llava(self, images, items):
        r"""t2v_metrics' LLaVA-1.5 VQAScore: ``SYSTEM USER: <image>\nQ ASSISTANT: `` + ``A</s>``.

        The labels are the tokens after the question (one fewer when the question ends in a space, as the
        original counts), the image features spliced in place of ``<image>``; score
        ``exp(-mean cross-entropy)``.
        """
        import torch

        from .llava import IMAGE_SENTINEL, chat_question, layers_up_to

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
        spans = [range(max(s, 1), len(row)) for row, s in zip(rows, starts)]
        if any(not pos for pos in spans):
            raise InputError(f"VQA {self.model_id}: the answer to score has no tokens")
        # Only the positions that predict an answer token are computed and leave the device: the log-softmax
        # of a position is over its own logits alone, so these are the numbers of the whole (batch x length x
        # vocab) tensor (t2v_metrics' full cross-entropy), whose LM head is a large share of the work at long
        # prompts. The columns kept are those of any row's answer; the tower stops at its feature layer.
        cols = sorted({t - 1 for pos in spans for t in pos})
        layer = self.model.config.vision_feature_layer
        inputs = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device), "pixel_values": pix}
        with autocast(self.device, self.dtype):
            if self._keeps_logits and isinstance(layer, int):
                inner = getattr(self.model, "model", None)  # transformers 5: LlavaModel holds the tower
                tower = inner.vision_tower if hasattr(inner, "vision_tower") else self.model.vision_tower
                with layers_up_to(tower, layer) as kept:  # hidden_states[kept]: the last of those kept
                    logits = self.model(**inputs, vision_feature_layer=kept,
                                        logits_to_keep=torch.tensor(cols, device=self.device)).logits
            else:
                logits = self.model(**inputs).logits[:, cols]
        if self.text_vocab and self.text_vocab < logits.shape[-1]:
            logits = logits[..., :self.text_vocab]
        col = {c: j for j, c in enumerate(cols)}
        at = torch.tensor([(r, col[t - 1]) for r, pos in enumerate(spans) for t in pos], device=logits.device)
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
        """A named decoding (:mod:`ts2viz.metrics.common.decoding`), called as its ``call`` field says.

        ``generate``: TIFA's BLIP-2 call; ``prefix``: TIFA's GIT call; ``embeds``: DSG's InstructBLIP call.
        """
        model_type = getattr(self.model.config, "model_type", "")
        if model_type not in decoding.model_types:
            raise InputError(f"VQA {self.model_id}: decoding={decoding.name} applies to "
                             f"{', '.join(decoding.model_types)} models only")
        if decoding.call == "prefix":
            return self._answer_prefix(images, questions, decoding)
        if decoding.call == "embeds":
            return self._answer_embeds(images, questions, decoding, max_new_tokens)
        return self._answer_generate(images, questions, decoding, max_new_tokens)

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

    def _answer_prefix(self, images, questions, decoding):
        """``call="prefix"`` (TIFA's ``GIT.vqa``): ``[CLS]`` + the question's tokens (no ``[SEP]``), then ``generate``.

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

    def _answer_embeds(self, images, questions, decoding, max_new_tokens):
        """``call="embeds"``: InstructBLIP's ``generate`` as transformers 4.31 ran it for DSG's code.

        See :mod:`ts2viz.metrics.families.dsg.decoding`. The language model is given only ``inputs_embeds`` (Q-Former query embeddings, then the prompt's), so
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
