"""The shared scoring of the embedding metrics: each variant's formula over the cosine of normalised image and memoised prompt embeddings."""
from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ...common.base import Metric
from ...common.spec import Spec

DEFAULT_BATCH = {"cpu": 32, "cuda": 256, "mps": 64}
#: J. Hessel et al.'s text prefix (jmhessel/clipscore ``CLIPCapDataset``) and weight ``w``
HESSEL_PREFIX = "A photo depicts "
HESSEL_WEIGHT = 2.5
#: torchmetrics' scale (``100 * cos``, then ``max(., 0)``)
TORCHMETRICS_SCALE = 100.0


class EmbeddingScore(Metric):
    """Shared scoring: normalised image embeddings . memoised normalised prompt embeddings.

    The base of the transformers and open_clip metrics, which encode images and prompts (``_encode_images``,
    ``_encode_texts``) and prepare images; this class scores them as the variant says.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    config : dict
        What identifies the metric (its model, variant, preprocessing).
    device : str
        The resolved torch device.
    batch_size : int or None
        Images per model call (None: :data:`DEFAULT_BATCH` of the device's kind).
    dtype : torch.dtype
        The compute dtype.
    """

    max_text_memo = 8192

    #: the score variant (:data:`~ts2viz.metrics.backbones.embedding.options.ALL_VARIANTS`) and the constants of its formula
    variant: str = "cosine"
    logit_scale: float = 1.0
    logit_bias: float = 0.0

    def __init__(self, spec: Spec, config: dict, device: str, batch_size: int | None, dtype):
        dev = device.split(":")[0]
        super().__init__(spec, config, device, batch_size or DEFAULT_BATCH.get(dev, 32))
        self.name = spec.family
        self.dtype = dtype
        # distinct prompts of a call -> their embeddings (see text_embeddings); at most
        # max_text_memo prompt embeddings in all
        self._text_memo: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        self._memo_size = 0
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    # subclasses: encode a stacked batch of prepared images / a list of prompts -> (n, d) tensors
    def _encode_images(self, batch: Any):
        raise NotImplementedError

    def _encode_texts(self, prompts: list[str]):
        raise NotImplementedError

    #: the engine may hand score_prepared stacked batches (:class:`~ts2viz.metrics.common.base.PreparedBatch`)
    stacks_prepared = True

    def _collate(self, items: Sequence[Any]):
        import torch

        from ...common.base import stacked_or

        return stacked_or(items, lambda xs: torch.stack(list(xs)))

    def text_embeddings(self, prompts: Sequence[str]):
        """Normalised float32 embeddings (on the device) of ``prompts``, one row per prompt.

        The distinct prompts of one call are encoded together (in order of first appearance) and
        memoised as a group. So a prompt's embedding, down to its float rounding (which padding and
        batch shape change), depends only on the prompts of its own batch, never on what earlier
        batches encoded: a batch scores the same in any process and in any order (on Ray actors).

        Parameters
        ----------
        prompts : sequence of str
            The texts to encode (repeats allowed).

        Returns
        -------
        torch.Tensor
            ``(len(prompts), d)``, float32, L2-normalised rows.
        """
        import torch

        group = tuple(dict.fromkeys(prompts))
        with self._lock:
            emb = self._text_memo.get(group)
            if emb is None:
                emb = torch.nn.functional.normalize(self._encode_texts(list(group)).float(), dim=-1)
                self._text_memo[group] = emb
                self._memo_size += len(group)
                while self._memo_size > self.max_text_memo and len(self._text_memo) > 1:
                    self._memo_size -= len(self._text_memo.popitem(last=False)[0])
            else:
                self._text_memo.move_to_end(group)
        row = {p: k for k, p in enumerate(group)}
        return emb[[row[p] for p in prompts]]

    def clear_text_memo(self) -> None:
        """Forget the memoised prompt embeddings (for timing runs that must not reuse them)."""
        with self._lock:
            self._text_memo.clear()
            self._memo_size = 0

    def image_embeddings(self, items: Sequence[Any]):
        """Normalised float32 embeddings (on the device) of prepared images, one row per image.

        Parameters
        ----------
        items : sequence
            The prepared images (``prepare``), or a stacked batch of them.

        Returns
        -------
        torch.Tensor
            ``(n, d)``, float32, L2-normalised rows.
        """
        import torch

        emb = self._encode_images(self._collate(items)).float()
        return torch.nn.functional.normalize(emb, dim=-1)

    def text_of(self, prompt: str) -> str:
        """The text the text encoder is given for ``prompt`` (Hessel's variant prefixes it).

        Parameters
        ----------
        prompt : str
            The prompt.

        Returns
        -------
        str
            ``prompt``, or :data:`HESSEL_PREFIX` + ``prompt`` for ``variant=hessel``.
        """
        return HESSEL_PREFIX + prompt if self.variant == "hessel" else prompt

    def score_prepared(self, items: Sequence[Any], prompts: Sequence[str]) -> np.ndarray:
        """The variant's score of each prepared image with its prompt (:meth:`from_cosine` of their cosine).

        Parameters
        ----------
        items : sequence
            The prepared images, or a stacked batch of them.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 score per image.
        """
        import torch

        with torch.inference_mode():
            img = self.image_embeddings(items)
            txt = self.text_embeddings([self.text_of(p) for p in prompts])
            cos = (img * txt).sum(-1)
        return self.from_cosine(cos.double().cpu().numpy())

    def from_cosine(self, cos: np.ndarray) -> np.ndarray:
        """The variant's score of each cosine (the package docstring).

        Parameters
        ----------
        cos : numpy.ndarray
            Cosines of image and prompt embeddings.

        Returns
        -------
        numpy.ndarray
            The scores, one per cosine.
        """
        if self.variant == "ts2":
            return self.logit_scale * cos + self.logit_bias
        if self.variant == "hessel":
            return HESSEL_WEIGHT * np.clip(cos, 0.0, None)
        if self.variant == "torchmetrics":
            return TORCHMETRICS_SCALE * np.clip(cos, 0.0, None)
        return cos

    def _variant_config(self) -> dict:
        score = {"ts2": f"logits_per_image = {self.logit_scale:.6g} * cos + {self.logit_bias:.6g} (TS2's code)",
                 "cosine": "cosine",
                 "hessel": f"{HESSEL_WEIGHT} * max(cos, 0) of '{HESSEL_PREFIX}' + prompt (Hessel et al.)",
                 "torchmetrics": f"{TORCHMETRICS_SCALE:g} * max(cos, 0) (torchmetrics clip_score)"}[self.variant]
        return {"variant": self.variant, "score": score}

    def _warn_truncated(self, prompt: str, n_tokens: int, limit: int) -> None:
        if prompt not in self._warned:
            self._warned.add(prompt)
            short = prompt if len(prompt) <= 60 else prompt[:57] + "..."
            warnings.warn(f"{self.spec}: prompt {short!r} has {n_tokens} tokens, more than the text "
                          f"encoder's {limit}; it is truncated", stacklevel=3)



def logit_constants(model) -> tuple[float, float]:
    """``(scale, bias)`` of the model's ``logits_per_image`` over the cosine; (1, 0) if it has none.

    CLIP ``exp(logit_scale)``, ALIGN ``1 / temperature``, SigLIP ``exp(logit_scale)`` and ``logit_bias``.

    Parameters
    ----------
    model : torch.nn.Module
        A transformers or open_clip dual encoder.

    Returns
    -------
    tuple of float
        ``(scale, bias)``.
    """
    import math

    if hasattr(model, "temperature"):
        return 1.0 / float(model.temperature.detach().float()), 0.0
    scale = getattr(model, "logit_scale", None)
    bias = getattr(model, "logit_bias", None)
    return (math.exp(float(scale.detach().float())) if scale is not None else 1.0,
            float(bias.detach().float().reshape(-1)[0]) if bias is not None else 0.0)
