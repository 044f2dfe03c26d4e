"""Sentence-BERT answer mapping: free-form answers to a question's choices by embedding cosine (``mapper=``).

The one place the ``mapper=`` option of TIFA and DSG becomes a mapper (:func:`load_mapper`): ``lexical``
(:class:`ts2viz.qa.mapping.LexicalMapper`, no model) or ``sbert:MODEL`` (:class:`SBERTMapper`, a
transformers encoder, default :data:`DEFAULT_MAPPER`). Which answers reach the model is the mapper's rule,
a question-answering concept without a model (:data:`ts2viz.qa.mapping.RULES`,
:func:`ts2viz.qa.mapping.premap`); this module runs the model on the rest.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

import numpy as np

from ...errors import InputError
from ...qa.mapping import DEFAULT_RULE, RULES, AnswerMapper, LexicalMapper, premap

DEFAULT_MAPPER = "sbert:sentence-transformers/all-mpnet-base-v2"


class SBERTMapper(AnswerMapper):
    """Sentence-BERT mapping with a transformers encoder (``mapper=sbert:MODEL``).

    Answers and choices are embedded as mean-pooled token states (under the attention mask),
    L2-normalised; an answer maps to the choice of highest cosine similarity (the first choice wins a
    tie). Which answers are embedded at all is the mapper's *rule* (:data:`ts2viz.qa.mapping.RULES`; see the module
    docstring of :mod:`ts2viz.qa.mapping`). Embeddings of choices are kept in a small in-memory cache, since the
    same choices come back for every image of a prompt. The model is loaded when the mapper is made.

    Parameters
    ----------
    model : str
        A hub id (e.g. ``sentence-transformers/all-mpnet-base-v2``) or a local model folder, loaded with
        transformers ``AutoModel`` and ``AutoTokenizer``.
    device : str, optional
        Torch device; None picks one (:func:`ts2viz.metrics.common.device.resolve_device`).
    batch_size : int, default 64
        Texts per forward pass (at least 1).
    cache_size : int, default 4096
        Choice embeddings kept; beyond it the oldest entries are dropped.
    rule : {'tifa', 'ts2', 'contains_yes'}, default DEFAULT_RULE
        Which answers go to the model (:data:`ts2viz.qa.mapping.RULES`; default ``contains_yes``).

    Attributes
    ----------
    rule : str
        The mapper rule.
    tokenizer, model
        The loaded transformers tokenizer and encoder (in eval mode, on ``device``).
    device : str
        The device the encoder runs on.
    batch_size : int
        Texts per forward pass.

    Raises
    ------
    InputError
        If ``rule`` is unknown, or if the model cannot be loaded (the message names the model and
        suggests ``?mapper=lexical``).
    """

    def __init__(self, model: str, device: str | None = None, batch_size: int = 64, cache_size: int = 4096,
                 rule: str = DEFAULT_RULE):
        if rule not in RULES:
            raise InputError(f"mapper rule {rule!r}: expected one of {', '.join(RULES)}")
        self.rule = rule
        from transformers import AutoModel, AutoTokenizer

        from ..common.device import resolve_device
        from ..common.pretrained import check_model_id, hf_load, model_identity
        from ..common.spec import Spec

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
        """``{"mapper": "sbert", "model": ..., "revision" or "fingerprint": ..., "rule": ...}``.

        The model's exact identity (hub commit, or a local folder's fingerprint); ``rule`` is present only
        when it is not :data:`DEFAULT_RULE`, so that caches made before the rules were named stay valid.
        """
        return {"mapper": "sbert", **self._ident, **({} if self.rule == DEFAULT_RULE else {"rule": self.rule})}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Sentence embeddings of texts: mean-pooled token states, L2-normalised.

        Parameters
        ----------
        texts : sequence of str
            The texts (converted with ``str``); each is truncated to the tokenizer's maximum length.

        Returns
        -------
        numpy.ndarray
            Float64 array, one row per text; shape ``(0, 0)`` for no texts.
        """
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
        """Embeddings of choices, from the cache where possible.

        Parameters
        ----------
        texts : sequence of str
            The choices (repeats allowed).

        Returns
        -------
        dict of str to numpy.ndarray
            Text -> embedding (as in :meth:`embed`) for every distinct text; the ones not cached before are
            embedded in one batch and cached.
        """
        got = {t: self._cache[t] for t in texts if t in self._cache}
        new = [t for t in dict.fromkeys(texts) if t not in got]
        if new:
            for t, v in zip(new, self.embed(new)):
                got[t] = self._cache[t] = v
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return got

    def _map(self, answers, choices):
        """Each answer mapped by the mapper's rule where it can, else by Sentence-BERT.

        :func:`ts2viz.qa.mapping.premap` maps a question without choices (its answer kept); under ``ts2`` a
        question with fewer than three choices (``yes`` or ``no``); under ``contains_yes`` a yes/no question
        (:func:`ts2viz.qa.mapping.yes_no_choice`); under ``tifa`` and ``contains_yes`` an answer that is
        exactly one of the choices. Every other answer goes to Sentence-BERT (argmax of the cosine, the
        first choice on a tie).
        """
        out, todo = premap(answers, choices, self.rule)
        if todo:
            answer_vecs = self.embed([str(answers[i]) for i in todo])
            vecs = self.choice_vectors([str(c) for i in todo for c in choices[i]])
            for row, i in enumerate(todo):
                cs = list(choices[i])
                sims = np.stack([vecs[str(c)] for c in cs]) @ answer_vecs[row]
                out[i] = cs[int(np.argmax(sims))]
        return out  # type: ignore[return-value]


def load_mapper(spec: str | None = None, device: str | None = None, rule: str | None = None) -> AnswerMapper:
    """The answer mapper a ``mapper=`` option names.

    Parameters
    ----------
    spec : str, optional
        ``sbert:MODEL`` (a Sentence-BERT hub id or local folder) or ``lexical``; None or ``""`` gives
        :data:`DEFAULT_MAPPER`.
    device : str, optional
        Torch device of a Sentence-BERT model (None: picked automatically).
    rule : str, optional
        The Sentence-BERT mapper's rule, one of :data:`ts2viz.qa.mapping.RULES` (None or ``""``: :data:`DEFAULT_RULE`);
        checked but unused for ``lexical``.

    Returns
    -------
    AnswerMapper
        A :class:`ts2viz.qa.mapping.LexicalMapper` or an :class:`SBERTMapper` (its model loaded).

    Raises
    ------
    InputError
        If ``rule`` or ``spec`` is not one of the accepted forms, or if the Sentence-BERT model cannot be
        loaded.

    Examples
    --------
    >>> from ts2viz.metrics.backbones.sbert import load_mapper
    >>> load_mapper("lexical").config
    {'mapper': 'lexical'}
    """
    spec = DEFAULT_MAPPER if spec in (None, "") else str(spec)
    if rule not in (None, "", *RULES):
        raise InputError(f"mapper rule {rule!r}: expected one of {', '.join(RULES)}")
    if spec == "lexical":
        return LexicalMapper()
    if spec.startswith("sbert:") and spec[len("sbert:"):].strip():
        return SBERTMapper(spec[len("sbert:"):].strip(), device=device, rule=rule or DEFAULT_RULE)
    raise InputError(f"mapper {spec!r}: expected sbert:MODEL (a Sentence-BERT hub id or folder) or lexical")
