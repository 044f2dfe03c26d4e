"""PickScore (Kirstain et al., 2023): a CLIP-H model fine-tuned on Pick-a-Pic human preferences.

The score of an image is what the authors' code computes (the PickScore model card's snippet):
``logit_scale.exp() * cos(image embedding, prompt embedding)``, the model's own learnt temperature
(about 100) times the cosine. t2v_metrics 3.0 reports the plain cosine instead; ``?score=cosine`` gives
that. Both order images the same way.

The weights (``yuvalkirstain/PickScore_v1``) come without a processor: the authors take the processor
(image preprocessing and tokenizer) from ``laion/CLIP-ViT-H-14-laion2B-s32B-b79K``, and so does ts2viz
(option ``processor``: a hub id or a local copy of that folder). Images are preprocessed by the PIL
backend of transformers' CLIP image processor, as the authors' transformers 4 did; prompts are truncated
to 77 tokens, as in the snippet (``truncation=True, max_length=77``).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.device import resolve_device, resolve_dtype
from ..common.hub import check_model_id, hf_load, is_local_model, model_identity
from ..common.spec import Spec

#: the field's names (t2v_metrics' ``pickscore-v1``) -> hub repositories
MODEL_NAMES = {"pickscore-v1": "yuvalkirstain/PickScore_v1"}
#: where the authors take the processor from
PROCESSOR = "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
SCORES = ("authors", "cosine")
MAX_LENGTH = 77
DEFAULT_BATCH = {"cpu": 16, "cuda": 128, "mps": 32}


def build(spec: Spec, device: str | None = None, *, processor: str = PROCESSOR, score: str = "authors",
          batch_size: int | None = None, dtype: str | None = "float32") -> Metric:
    """``pickscore:MODEL[?processor=ID_OR_FOLDER&score=authors|cosine&batch_size=N&dtype=float32]``.

    MODEL is ``pickscore-v1``, a hub id or a local folder holding a ``CLIPModel`` (``config.json`` and
    weights). Raises :class:`InputError` for an unknown score, a model that is not a CLIP model, or a
    processor that cannot be had (one line that names the ``processor`` option).
    """
    return PickScore(spec, device, processor=processor, score=score, batch_size=batch_size, dtype=dtype)


class PickScore(Metric):
    """PickScore on transformers' ``CLIPModel`` with the processor of another repository."""

    name = "pickscore"

    def __init__(self, spec: Spec, device: str | None = None, *, processor: str = PROCESSOR,
                 score: str = "authors", batch_size: int | None = None, dtype: str | None = "float32"):
        from transformers import AutoImageProcessor, AutoTokenizer, CLIPModel

        if score not in SCORES:
            raise InputError(f"metric {spec.raw!r}: score={score!r} is not one of {', '.join(SCORES)}")
        dev = resolve_device(device)
        dt = resolve_dtype(dev, dtype)
        model_id = MODEL_NAMES.get(spec.model.lower()) or check_model_id(spec)
        kw = {"revision": spec.revision} if spec.revision else {}
        model = hf_load("model", CLIPModel.from_pretrained, model_id, spec, dtype=dt, **kw)
        self.model = model.to(dev).eval()
        proc = str(processor)
        try:
            self.image_processor = hf_load("image processor", AutoImageProcessor.from_pretrained, proc, spec,
                                           backend="pil")
            self.tokenizer = hf_load("tokenizer", AutoTokenizer.from_pretrained, proc, spec)
        except InputError as e:
            raise InputError(f"metric {spec.raw!r}: PickScore's processor comes from another repository, "
                             f"{proc!r} (option processor=, a hub id or a local copy of that folder), and it "
                             f"cannot be loaded: {str(e).split(': ', 2)[-1]}") from None
        config = {"family": "pickscore", **model_identity(model_id, spec.revision, model.config),
                  "processor": ({"model": proc, **model_identity(proc, None)}
                                if is_local_model(proc) else {"model": proc}),
                  "image_backend": "pil", "max_length": MAX_LENGTH, "score": score, "dtype": str(dt).split(".")[-1]}
        super().__init__(spec, config, dev, batch_size or DEFAULT_BATCH.get(dev.split(":")[0], 16))
        self.score_kind = score
        self.dtype = dt
        self._text_memo: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def prepare(self, image, file_name: str | None = None):
        return self.image_processor(images=image, return_tensors="pt")["pixel_values"][0]

    def _text(self, prompts: Sequence[str]):
        """Normalised embeddings of ``prompts`` (each prompt encoded on its own, as the snippet does)."""
        import torch

        out = []
        for p in prompts:
            with self._lock:
                emb = self._text_memo.get(p)
            if emb is None:
                enc = self.tokenizer([p], padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
                enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
                emb = _features(self.model.get_text_features(**enc))[0].float()
                emb = emb / torch.norm(emb, dim=-1, keepdim=True)
                with self._lock:
                    self._text_memo[p] = emb
                    while len(self._text_memo) > 8192:
                        self._text_memo.popitem(last=False)
            out.append(emb)
        return torch.stack(out)

    def score_prepared(self, items, prompts) -> np.ndarray:
        import torch

        with torch.inference_mode():
            pix = torch.stack(list(items)).to(self.device, self.model.dtype)
            img = _features(self.model.get_image_features(pixel_values=pix)).float()
            img = img / torch.norm(img, dim=-1, keepdim=True)
            txt = self._text(list(prompts))
            cos = (img * txt).sum(-1)
            if self.score_kind == "authors":
                cos = self.model.logit_scale.float().exp() * cos
        return cos.double().cpu().numpy()


def _features(out):
    """transformers 5 returns a model output whose ``pooler_output`` is the projected embedding."""
    return out.pooler_output if hasattr(out, "pooler_output") else out
