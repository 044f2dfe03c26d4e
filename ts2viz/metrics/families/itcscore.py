"""ITCScore: BLIP-2's image–text contrastive score, as t2v_metrics 3.0 computes it (``blip2-itc``).

The Q-Former's 32 query outputs for the image (cross-attending to its EVA ViT-g features) and its [CLS]
output for the prompt (35 BERT word pieces) are projected and L2-normalised; the score is the largest of the
32 cosines, in [-1, 1] (BLIP-2's own practice, which t2v_metrics' ``BLIP2ITCScoreModel`` follows; see
:mod:`ts2viz.metrics.backbones.blip2_retrieval`), proved on a reference fixture
(``tests/metrics/reference/test_vqascore_reference.py``).

Models: transformers' ``Blip2ForImageTextRetrieval`` checkpoints (the ITC and ITM heads are one model);
t2v_metrics' names resolve to them (``itcscore:blip2-itc`` -> ``Salesforce/blip2-itm-vit-g``).
"""
from __future__ import annotations

from ..common.base import Metric
from ..common.spec import Spec
from .itmscore import BLIP2Retrieval, resolve_name

#: t2v_metrics' ITC model names -> transformers checkpoints of the same LAVIS weights
MODEL_NAMES = {"blip2-itc": "Salesforce/blip2-itm-vit-g", "blip2-itc-coco": "Salesforce/blip2-itm-vit-g-coco"}
UNSUPPORTED = {"blip2-itc-vitL": "LAVIS' BLIP-2 with a CLIP ViT-L tower (pretrain_vitL) has no transformers "
                                 "checkpoint; convert LAVIS' weights to Blip2ForImageTextRetrieval"}


def build(spec: Spec, device: str | None = None, *, batch_size: int | None = None, dtype: str | None = None) -> Metric:
    """``itcscore:MODEL[?batch_size=N&dtype=float32|float16|bfloat16]``."""
    from ..backbones.blip2_retrieval import load_blip2_retrieval

    model = load_blip2_retrieval(resolve_name(spec, MODEL_NAMES, UNSUPPORTED), device, dtype=dtype)
    return BLIP2Retrieval(spec, model, "itc", batch_size)
