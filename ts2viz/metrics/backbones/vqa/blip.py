"""BLIP-VQA (``BlipForQuestionAnswering``) as a VQA model: an answer decoder over a question encoder."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ....errors import InputError
from ...common.device import autocast
from ...common.pretrained import hf_load, model_identity
from ...common.spec import Spec
from .model import VQAModel, logsumexp


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
        return [[logsumexp([seq_lp[(i, (start, *s_, sep))] for s_ in self.choice_token_ids(tok, c)]) for c in cs]
                for i, (_, cs) in enumerate(items)]
