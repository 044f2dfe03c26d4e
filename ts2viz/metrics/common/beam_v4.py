"""Beam search as transformers 4.x ran it (4.25–4.34: ``GenerationMixin.beam_search`` with ``BeamSearchScorer``),
on current transformers' models.

The originals that decode with beam search ran transformers 4.x: DSG's InstructBLIP (4.31, which j-min/DSG
pins) and TIFA's BLIP-2 (LAVIS' ``blip2_t5.generate``, LAVIS 1.0.2 pins 4.25–4.26). transformers 5's
vectorised beam search keeps other hypotheses: it divides a finished hypothesis' log-probability by its
length *including* the end token and applies another early-stopping test, so on answers that run long the
two may pick different beams (a finished beam's rank depends on the normaliser). For a decoder-only model
given ``inputs_embeds`` (InstructBLIP's LLaMA), 4.x's sequence started with ``[bos]`` where 5's starts empty:
4.x's ``max_length=256`` generates 255 tokens, its ``min_length=1`` lets the end token come first, and its
repetition penalty sees the ``bos`` id. This module is ts2viz's own
implementation of the 4.x semantics, written from reading transformers 4.31's
``generation/utils.py`` and ``generation/beam_search.py``:

* every step: ``log_softmax`` of the last position's logits (float32), the logits processors on those
  log-probabilities (repetition penalty: a score of a token already in the sequence is multiplied by the
  penalty when negative, divided when positive; minimum length: the end token at ``-inf`` while the
  sequence is shorter than ``min_length``), plus the beam's running score; the top ``2 * num_beams``
  candidates over all beams of an item, sorted;
* a candidate that is an end token and ranks among the first ``num_beams`` becomes a finished hypothesis
  (its tokens *without* the end token, score = sum of log-probabilities / ``len(tokens) ** length_penalty``,
  where ``tokens`` counts the sequence 4.x's generate holds: the decoder start token of an encoder–decoder,
  ``[bos]`` for a decoder-only model fed ``inputs_embeds`` only); the other candidates fill the ``num_beams`` beams in
  rank order; a hypothesis list holds the ``num_beams`` best, the worst dropped;
* an item is done when it holds ``num_beams`` hypotheses and the best candidate's score divided by
  ``(current length + 1) ** length_penalty`` is no better than the worst hypothesis (``early_stopping=False``);
* generation stops when every item is done or the sequence reaches ``max_length``; then every running beam of
  an item not done is added as a hypothesis (score / its full length), and the best hypothesis is returned
  (among equal scores the one added last, as 4.x's stable sort and ``pop``).

Models are stepped with their key–value cache, reordered along the chosen beams, as 4.x's ``_reorder_cache``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence


@dataclass
class _Hypotheses:
    """4.x's ``BeamHypotheses``: the ``num_beams`` best finished hypotheses of one item."""

    num_beams: int
    length_penalty: float
    beams: list = field(default_factory=list)
    worst_score: float = 1e9

    def add(self, tokens: list[int], sum_logprobs: float) -> None:
        score = sum_logprobs / (len(tokens) ** self.length_penalty)
        if len(self.beams) < self.num_beams or score > self.worst_score:
            self.beams.append((score, tokens))
            if len(self.beams) > self.num_beams:
                ranked = sorted((s, i) for i, (s, _) in enumerate(self.beams))
                del self.beams[ranked[0][1]]
                self.worst_score = ranked[1][0]
            else:
                self.worst_score = min(score, self.worst_score)

    def is_done(self, best_sum_logprobs: float, cur_len: int) -> bool:
        if len(self.beams) < self.num_beams:
            return False
        return self.worst_score >= best_sum_logprobs / cur_len ** self.length_penalty

    def best(self) -> list[int]:
        return sorted(self.beams, key=lambda x: x[0])[-1][1]


def beam_search(first: Callable, advance: Callable, *, batch_size: int, num_beams: int, max_length: int,
                eos_token_id: int | Sequence[int], pad_token_id: int, prefix: Sequence[int] = (),
                min_length: int = 0, repetition_penalty: float = 1.0, length_penalty: float = 1.0) -> list[list[int]]:
    """Beam search with transformers 4.x's semantics (module docstring); the best sequence of each item.

    Parameters
    ----------
    first : ``first()`` -> float logits ``(batch_size * num_beams, vocab)`` of the first position to generate
        (the model run on its inputs, expanded ``num_beams`` times per item).
    advance : ``advance(tokens, beam_idx)`` -> the next logits, after the cache was reordered along
        ``beam_idx`` (``(batch_size * num_beams,)`` row indices) and ``tokens`` appended.
    batch_size, num_beams : items and beams per item.
    max_length : the length at which generation stops, counting ``prefix`` (4.x's ``max_length``).
    eos_token_id, pad_token_id : end token(s); the token fed to the beams of an item that is done.
    prefix : the tokens the sequence starts with, as 4.x held it (an encoder–decoder's decoder start token;
        ``[bos]`` for a decoder-only model given ``inputs_embeds`` only); counted by the lengths.
    min_length, repetition_penalty, length_penalty : as 4.x's ``generate`` arguments.

    Returns
    -------
    list of list of int
        Per item, the best hypothesis' tokens after ``prefix``, without the end token.
    """
    import torch

    eos = [int(eos_token_id)] if isinstance(eos_token_id, int) else [int(e) for e in eos_token_id]
    n = batch_size * num_beams
    hyps = [_Hypotheses(num_beams, float(length_penalty)) for _ in range(batch_size)]
    done = [False] * batch_size
    logits = first()
    device = logits.device
    seqs = torch.tensor([list(prefix)] * n, dtype=torch.long, device=device).reshape(n, len(prefix))
    beam_scores = torch.zeros((batch_size, num_beams), dtype=torch.float32, device=device)
    beam_scores[:, 1:] = -1e9
    beam_scores = beam_scores.view(-1)
    k = max(2, 1 + len(eos)) * num_beams
    while True:
        scores = torch.log_softmax(logits.float(), dim=-1)
        if repetition_penalty != 1.0 and seqs.shape[1]:
            seen = torch.gather(scores, 1, seqs)
            seen = torch.where(seen < 0, seen * repetition_penalty, seen / repetition_penalty)
            scores = scores.scatter(1, seqs, seen)
        if seqs.shape[1] < min_length:
            scores[:, eos] = -float("inf")
        vocab = scores.shape[-1]
        cand = (scores + beam_scores[:, None]).view(batch_size, num_beams * vocab)
        top_scores, top = torch.topk(cand, k, dim=1, largest=True, sorted=True)
        top_beam, top_tok = top // vocab, top % vocab
        cur_len = seqs.shape[1] + 1
        new_scores = torch.zeros((batch_size, num_beams), dtype=top_scores.dtype, device=device)
        new_tokens = torch.zeros((batch_size, num_beams), dtype=torch.long, device=device)
        new_rows = torch.zeros((batch_size, num_beams), dtype=torch.long, device=device)
        ts, tt, tb = top_scores.tolist(), top_tok.tolist(), top_beam.tolist()
        for b in range(batch_size):
            if done[b]:
                new_tokens[b, :] = pad_token_id
                continue
            j = 0
            for rank in range(k):
                row = b * num_beams + tb[b][rank]
                if tt[b][rank] in eos:
                    if rank >= num_beams:
                        continue
                    hyps[b].add(seqs[row].tolist(), top_scores[b, rank].item())
                else:
                    new_scores[b, j], new_tokens[b, j], new_rows[b, j] = top_scores[b, rank], tt[b][rank], row
                    j += 1
                if j == num_beams:
                    break
            done[b] = done[b] or hyps[b].is_done(max(ts[b]), cur_len)
        rows, tokens = new_rows.view(-1), new_tokens.view(-1)
        seqs = torch.cat([seqs[rows], tokens[:, None]], dim=-1)
        beam_scores = new_scores.view(-1)
        if all(done) or seqs.shape[1] >= max_length:
            break
        logits = advance(tokens, rows)
    out = []
    for b in range(batch_size):
        if not done[b]:
            for r in range(b * num_beams, (b + 1) * num_beams):
                hyps[b].add(seqs[r].tolist(), beam_scores[r].item())
        out.append(hyps[b].best()[len(prefix):])
    return out


def run(lm, inputs_embeds, attention_mask, *, encoder_decoder: bool, prefix: Sequence[int], num_beams: int,
        max_length: int, eos_token_id, pad_token_id, min_length: int = 0, repetition_penalty: float = 1.0,
        length_penalty: float = 1.0) -> list[list[int]]:
    """4.x beam search of a language model given ``inputs_embeds`` (with ``attention_mask``), the way 4.x's
    ``generate`` ran it from a multimodal model's ``generate`` (BLIP-2 / InstructBLIP):

    * decoder-only (LLaMA, OPT): the embeddings are the first step's input; the sequence 4.x held is
      ``prefix`` = ``[bos]`` (never fed to the model, but counted by the lengths and seen by the repetition
      penalty); positions follow the attention mask (``cumsum - 1``, as 4.x's ``prepare_inputs_for_generation``);
    * encoder–decoder (T5): the embeddings go through the encoder once; the decoder starts from ``prefix`` =
      ``[decoder_start_token_id]``.

    Returns, per row of ``inputs_embeds``, the best hypothesis' tokens after ``prefix`` (no end token).
    """
    import torch

    b = inputs_embeds.shape[0]
    state: dict = {"mask": attention_mask.repeat_interleave(num_beams, dim=0), "cache": None}
    if encoder_decoder:
        from transformers.modeling_outputs import BaseModelOutput

        enc = lm.get_encoder()(inputs_embeds=inputs_embeds, attention_mask=attention_mask, return_dict=True)
        encoded = BaseModelOutput(last_hidden_state=enc.last_hidden_state.repeat_interleave(num_beams, dim=0))

        def step(ids):
            out = lm(encoder_outputs=encoded, attention_mask=state["mask"], decoder_input_ids=ids,
                     past_key_values=state["cache"], use_cache=True)
            state["cache"] = out.past_key_values
            return out.logits[:, -1, :]

        def first():
            return step(torch.tensor([list(prefix)] * (b * num_beams), dtype=torch.long, device=inputs_embeds.device))

        def advance(tokens, rows):
            state["cache"].reorder_cache(rows)
            return step(tokens[:, None])
    else:
        from transformers import DynamicCache

        embeds = inputs_embeds.repeat_interleave(num_beams, dim=0)
        state["cache"] = DynamicCache()

        def positions(mask):
            return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)

        def first():
            out = lm(inputs_embeds=embeds, attention_mask=state["mask"], position_ids=positions(state["mask"]),
                     past_key_values=state["cache"], use_cache=True)
            state["cache"] = out.past_key_values
            return out.logits[:, -1, :]

        def advance(tokens, rows):
            state["cache"].reorder_cache(rows)
            mask = torch.cat([state["mask"][rows], state["mask"].new_ones((len(rows), 1))], dim=-1)
            state["mask"] = mask
            out = lm(input_ids=tokens[:, None], attention_mask=mask, position_ids=positions(mask)[:, -1:],
                     past_key_values=state["cache"], use_cache=True)
            state["cache"] = out.past_key_values
            return out.logits[:, -1, :]

    return beam_search(first, advance, batch_size=b, num_beams=num_beams, max_length=max_length,
                       eos_token_id=eos_token_id, pad_token_id=pad_token_id, prefix=prefix, min_length=min_length,
                       repetition_penalty=repetition_penalty, length_penalty=length_penalty)
