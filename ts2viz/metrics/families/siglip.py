"""SigLIP score: cosine of SigLIP image and prompt embeddings (transformers).

The score is the raw cosine similarity of the image's and the prompt's embeddings, in [-1, 1]. The
dual encoder is :mod:`ts2viz.metrics.backbones.embedding`'s, which CLIPScore, ALIGNScore and SigLIP share.
"""
from __future__ import annotations

from ..backbones.embedding import embedding_options
from ..common.base import Metric
from ..common.spec import Spec
from ..registry import Card, Fidelity
from .fidelity import FIDELITY, PRECISION

_E = "tests/metrics/test_metrics_embedding.py::"

CARD = Card(
    summary="SigLIP score: the cosine similarity of SigLIP's image embedding and prompt embedding (transformers).",
    paper=("X. Zhai, B. Mustafa, A. Kolesnikov, L. Beyer. Sigmoid Loss for Language Image Pre-Training. ICCV 2023. "
           "https://arxiv.org/abs/2303.15343"),
    citation="""@inproceedings{zhai2023sigmoid,
  title     = {Sigmoid Loss for Language Image Pre-Training},
  author    = {Zhai, Xiaohua and Mustafa, Basil and Kolesnikov, Alexander and Beyer, Lucas},
  booktitle = {Proceedings of the IEEE/CVF International Conference on Computer Vision (ICCV)},
  year      = {2023}
}""",
    original="the SigLIP checkpoints' transformers implementation (`SiglipModel`); no metric code of its own.",
    output_range="ts2: the model's logits (a scaled, for SigLIP shifted, cosine); cosine: [-1, 1]",
    higher_is_better=True,
    options=embedding_options('siglip'),
    precision=PRECISION['siglip'],
    fidelity=(
        *(Fidelity(*row) for row in FIDELITY['siglip']),
        Fidelity("text padding (variant=cosine)", "prompts padded to the full 64 tokens and no attention mask "
                 "(SigLIP was trained on prompts padded to full length and attends to padding by design); "
                 "`variant=ts2` leaves them unpadded as TS2's code", "as the original", "variant",
                 f"{_E}test_siglip_and_align_match_model_forward"),
        Fidelity("preprocessing", "the model's own image processor (a faster call of the torchvision-backed "
                 "processor, equal to the full call)", "as the original", "",
                 f"{_E}test_fast_preprocessing_equals_the_processor"),
    ),
    limitations=("The tests compare with the model's own forward pass on a tiny random-weight SigLIP.",),
    description="""The score of an image is the raw cosine similarity of its SigLIP embedding and its
prompt's, in [-1, 1] (not SigLIP's sigmoid probability). MODEL is a hub id or a local folder of a transformers
`SiglipModel` (`siglip:google/siglip-base-patch16-224`).
""",
)


def build(spec: Spec, device: str | None = None, *, batch_size: int | None = None,
          dtype: str | None = None, variant: str | None = None, preprocess: str = "original") -> Metric:
    """``siglip:MODEL[?batch_size=N&dtype=float32|float16|bfloat16]``: the metric on ``device`` (options: :data:`CARD`)."""
    from ..backbones.embedding import build as build_embedding

    return build_embedding(spec, device, batch_size=batch_size, dtype=dtype, variant=variant,
                           preprocess=preprocess)
