"""CLIPScore: cosine of CLIP image and prompt embeddings (transformers or open_clip: ``clipscore:openclip:ARCH/TAG``).

The score is the raw cosine similarity of the image's and the prompt's embeddings, in [-1, 1]. The
dual encoder is :mod:`ts2viz.metrics.backbones.embedding`'s, which CLIPScore, ALIGNScore and SigLIP share.
"""
from __future__ import annotations

from ..common.base import Metric
from ..common.spec import Spec


def build(spec: Spec, device: str | None = None, **options) -> Metric:
    """``clipscore:MODEL[?batch_size=N&dtype=float32|float16|bfloat16]``."""
    from ..backbones.embedding import build as build_embedding

    return build_embedding(spec, device, **options)
