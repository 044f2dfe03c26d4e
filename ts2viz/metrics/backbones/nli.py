"""Natural-language-inference scoring with a seq2seq entailment model (Gecko's hallucination filter).

The default is the TRUE model of Honovich et al. (2022), ``google/t5_xxl_true_nli_mixture``: a T5 that
reads ``premise: {premise} hypothesis: {hypothesis}`` and writes ``1`` (entailed) or ``0``. The
entailment score is P("1") of its first output token (softmax over the whole vocabulary), the score the
TRUE paper thresholds. Any seq2seq model with the same input and output convention works.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.device import autocast, resolve_device, resolve_dtype, run_halving_on_oom
from ..common.pretrained import check_model_id, hf_load, model_identity
from ..common.spec import Spec

DEFAULT_NLI = "google/t5_xxl_true_nli_mixture"
NLI_INPUT = "premise: {premise} hypothesis: {hypothesis}"
ENTAILED = "1"


class NLIModel:
    """A seq2seq NLI model: :meth:`entailment` gives P(``ENTAILED``) for (premise, hypothesis) pairs.

    Parameters
    ----------
    model_id : str
        Hub id or local folder of the model.
    spec : Spec
        The spec named in error messages.
    device : str
        The torch device.
    dtype : torch.dtype
        The compute dtype.
    batch_size : int
        Pairs per forward pass (halved on GPU out-of-memory).
    revision : str or None, optional
        The hub revision.

    Raises
    ------
    InputError
        If the model or tokenizer cannot be loaded, or the tokenizer has no single token for ``"1"``.
    """

    def __init__(self, model_id: str, spec: Spec, device: str, dtype, batch_size: int, revision: str | None = None):
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        kw = {"revision": revision} if revision else {}
        model = hf_load("NLI model", AutoModelForSeq2SeqLM.from_pretrained, model_id, spec, dtype=dtype, **kw)
        self.model = model.to(device).eval()
        self.tokenizer = hf_load("NLI tokenizer", AutoTokenizer.from_pretrained, model_id, spec, **kw)
        self.model_id = model_id
        self.device = device
        self.dtype = dtype
        self.batch_size = max(1, int(batch_size))
        self.identity = model_identity(model_id, revision, model.config)
        ids = self.tokenizer.encode(ENTAILED, add_special_tokens=False)
        if not ids or self.tokenizer.decode(ids[:1]).strip() != ENTAILED:
            raise InputError(f"metric {spec.raw!r}: the NLI tokenizer of {model_id!r} has no token for "
                             f"{ENTAILED!r} (expected a TRUE-style model answering 1/0)")
        self.entailed_id = int(ids[0])

    @property
    def config(self) -> dict:
        """The model's identity, dtype, input format and what the score is."""
        return {**self.identity, "dtype": str(self.dtype), "input": NLI_INPUT,
                "score": f"P('{ENTAILED}') first output token"}

    def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """P(entailed) for each (premise, hypothesis) pair.

        The input is :data:`NLI_INPUT`; the score is the softmax probability of the ``"1"`` token at the
        first decoder step (over the whole vocabulary). Batches are padded on the right; T5 masks the
        padding in its encoder and in the decoder's cross-attention, so the scores do not depend on the
        batching. Out-of-memory halves the batch.

        Parameters
        ----------
        premises : sequence of str
            The premises (Gecko: the prompt).
        hypotheses : sequence of str
            The hypotheses, aligned with ``premises``.

        Returns
        -------
        numpy.ndarray
            One float64 probability in [0, 1] per pair.

        Raises
        ------
        InputError
            If ``premises`` and ``hypotheses`` differ in length.
        """
        import torch

        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise InputError(f"NLI: {len(premises)} premises but {len(hypotheses)} hypotheses")
        texts = [NLI_INPUT.format(premise=p, hypothesis=h) for p, h in zip(premises, hypotheses)]
        start = self.model.config.decoder_start_token_id
        if start is None:
            start = self.model.config.pad_token_id or 0

        def chunk(a: int, b: int) -> list[float]:
            enc = self.tokenizer(texts[a:b], padding=True, return_tensors="pt").to(self.device)
            dec = torch.full((b - a, 1), start, dtype=torch.long, device=self.device)
            with torch.inference_mode(), autocast(self.device, self.dtype):
                logits = self.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                                    decoder_input_ids=dec).logits[:, -1, :]
            return torch.softmax(logits.float(), dim=-1)[:, self.entailed_id].double().cpu().tolist()

        parts, self.batch_size = run_halving_on_oom(chunk, len(texts), self.batch_size, f"NLI {self.model_id}")
        return np.asarray([v for part in parts for v in part], dtype=np.float64)


def load_nli(model: str, device: str | None = None, *, dtype: str | None = None, batch_size: int | None = None,
             owner: str = "nli") -> NLIModel:
    """The NLI model ``model`` (hub id, optionally ``@REVISION``, or a local folder).

    Parameters
    ----------
    model : str
        Hub id (``google/t5_xxl_true_nli_mixture``, :data:`DEFAULT_NLI`), ``ID@REVISION`` or a local folder.
    device : str or None, optional
        The torch device; None picks one.
    dtype : str or None, optional
        The compute dtype's name (:func:`~ts2viz.metrics.common.device.resolve_dtype`).
    batch_size : int or None, optional
        Pairs per forward pass (default 16).
    owner : str, default "nli"
        The metric spec named in error messages.

    Returns
    -------
    NLIModel
        The loaded model.
    """
    rev = None
    if "@" in model and not model.startswith((".", "/", "~")):
        model, _, rev = model.rpartition("@")
    spec = Spec(owner, "nli", model, rev)
    dev = resolve_device(device)
    dt = resolve_dtype(dev, dtype)
    return NLIModel(check_model_id(spec), spec, dev, dt, batch_size or 16, rev)
