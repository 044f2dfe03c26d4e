"""ITMScore: BLIP-2's image–text matching probability, as t2v_metrics 3.0 computes it (``blip2-itm``).

The Q-Former reads its 32 learned queries together with the prompt (35 BERT word pieces), cross-attending
to the image (EVA ViT-g features); the matching head's two logits, averaged over the query positions, give
the score ``softmax(...)["match"]`` in [0, 1] (higher: the image matches the prompt). Preprocessing and
scoring follow t2v_metrics' ``BLIP2ITMScoreModel`` (see :mod:`ts2viz.metrics.backbones.blip2_retrieval`),
proved on a reference fixture (``tests/metrics/reference/test_vqascore_reference.py``).

Models: transformers' ``Blip2ForImageTextRetrieval`` checkpoints; t2v_metrics' names resolve to them
(``itmscore:blip2-itm`` -> ``Salesforce/blip2-itm-vit-g``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.spec import Spec

#: t2v_metrics' ITM/ITC model names -> transformers checkpoints of the same LAVIS weights
MODEL_NAMES = {"blip2-itm": "Salesforce/blip2-itm-vit-g", "blip2-itm-coco": "Salesforce/blip2-itm-vit-g-coco"}
#: t2v_metrics' names with no transformers checkpoint of their weights
UNSUPPORTED = {"blip2-itm-vitL": "LAVIS' BLIP-2 with a CLIP ViT-L tower (pretrain_vitL) has no transformers "
                                 "checkpoint; convert LAVIS' weights to Blip2ForImageTextRetrieval"}
DEFAULT_BATCH = {"cpu": 16, "cuda": 128, "mps": 32}


class BLIP2Retrieval(Metric):
    """ITMScore or ITCScore of a :class:`~ts2viz.metrics.backbones.blip2_retrieval.Blip2Retrieval` model."""

    def __init__(self, spec: Spec, model, head: str, batch_size: int | None = None):
        self.name = spec.family
        self.head = head
        config = {"family": spec.family, **model.config, "score": head}
        dev = model.device.split(":")[0]
        super().__init__(spec, config, model.device, batch_size or DEFAULT_BATCH.get(dev, 16))
        self.model = model

    def prepare(self, image, file_name: str | None = None) -> np.ndarray:
        return self.model.pixels(image)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        return (self.model.itm if self.head == "itm" else self.model.itc)(list(items), list(prompts))


def resolve_name(spec: Spec, names: dict, unavailable: dict) -> Spec:
    """``spec`` with a t2v_metrics model name replaced by its checkpoint (hub ids and folders unchanged)."""
    if spec.model in unavailable:
        raise InputError(f"metric {spec.raw!r}: {unavailable[spec.model]}")
    if spec.model in names:
        from dataclasses import replace

        return replace(spec, model=names[spec.model])
    return spec


def build(spec: Spec, device: str | None = None, *, batch_size: int | None = None, dtype: str | None = None) -> Metric:
    """``itmscore:MODEL[?batch_size=N&dtype=float32|float16|bfloat16]``."""
    from ..backbones.blip2_retrieval import load_blip2_retrieval

    model = load_blip2_retrieval(resolve_name(spec, MODEL_NAMES, UNSUPPORTED), device, dtype=dtype)
    return BLIP2Retrieval(spec, model, "itm", batch_size)
