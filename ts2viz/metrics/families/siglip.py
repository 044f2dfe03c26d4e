"""SigLIP score: TS2's logit or the cosine of SigLIP image and prompt embeddings (transformers).

The score is TS2's (the model's ``logits_per_image``, ``variant=ts2``) or the raw cosine (``variant=cosine``). The
dual encoder is :mod:`ts2viz.metrics.backbones.embedding`'s, which CLIPScore, ALIGNScore and SigLIP share.
"""
from __future__ import annotations

from ..backbones.embedding.factory import family_factory
from ..backbones.embedding.options import embedding_options
from ..family import Card, Family, Fidelity

_TE = "tests/metrics/reference/test_ts2_embeddings_reference.py::"
_E = "tests/metrics/test_metrics_embedding.py::"

#: the text length the public checkpoints were trained with (their processors pad and truncate to it)
TEXT_LENGTH = 64

CARD = Card(
    summary=("SigLIP score: SigLIP's image–prompt logit as TS2's code computes it (`variant=ts2`, default) or the "
             "cosine similarity of its embeddings (`variant=cosine`) (transformers)."),
    paper=("X. Zhai, B. Mustafa, A. Kolesnikov, L. Beyer. Sigmoid Loss for Language Image Pre-Training. ICCV 2023. "
           "https://arxiv.org/abs/2303.15343"),
    citation="""@inproceedings{zhai2023sigmoid,
  title     = {Sigmoid Loss for Language Image Pre-Training},
  author    = {Zhai, Xiaohua and Mustafa, Basil and Kolesnikov, Alexander and Beyer, Lucas},
  booktitle = {Proceedings of the IEEE/CVF International Conference on Computer Vision (ICCV)},
  year      = {2023}
}""",
    original=("the SigLIP checkpoints' transformers implementation (`SiglipModel`); no metric code of its own. "
              "Fixture (`variant=ts2`) from TS2's own `SiGLIPScore` (T2IMetrics), run in a side venv "
              "(`tools/reference/ts2_embeddings/`)."),
    fixture=("`tests/fixtures/reference/ts2_embeddings/`: TS2's own `SiGLIPScore` "
             '(michaelsaxon/T2IScoreScore 93ebf89, `src/T2IMetrics/correlation/`) on transformers '
             '4.57.6, for `variant=ts2` only; the other variants not compared. Image modes: not '
             "compared (a non-RGB image is read by ts2viz's `as_rgb`)."),
    output_range="ts2: the model's logits (a scaled, for SigLIP shifted, cosine); cosine: [-1, 1]",
    higher_is_better=True,
    options=embedding_options(),
    # TS2's SiGLIPScore loads the transformers model in float32
    precision="float32",
    fidelity=(
        Fidelity("score (default)", "`variant=ts2`: TS2's `SiGLIPScore` (T2IMetrics `src/T2IMetrics/correlation/siglip.py`, "
                 "`CorrelationMetric.calculate_score`): `logits_per_image` = exp(logit_scale) * cos + logit_bias, the "
                 "prompt unpadded (its `padding=True` on one prompt), SigLIP's tokenizer (lower-cased, punctuation "
                 "removed); `variant=cosine`: the raw cosine with the prompt padded to SigLIP's 64 training tokens", "as the original",
                 "variant", _TE + "test_default_variant_equals_ts2s_code"),
        Fidelity("reference", "TS2's own code run on a tiny SigLIP in `google/siglip-so400m-patch14-384`'s layout "
                 "(SentencePiece `spiece.model`, transformers 4.57, its PIL image processor: `preprocess=original`); TS2 "
                 "published no SigLIP column", "as the original", "preprocess", _TE + "test_default_variant_equals_ts2s_code"),
        Fidelity("score (`variant=cosine`)", "the raw cosine, the prompt padded to 64 tokens: equal to transformers' own "
                 "`get_image_features` / `get_text_features` on a tiny SigLIP; **not compared** with an original (no "
                 "published metric's code computes it)", "not in the original", "variant",
                 "tests/metrics/test_metrics_embedding.py::test_siglip_and_align_match_model_forward"),
        Fidelity("text padding (variant=cosine)", "prompts padded to the full 64 tokens and no attention mask "
                 "(SigLIP was trained on prompts padded to full length and attends to padding by design); "
                 "`variant=ts2` leaves them unpadded as TS2's code", "as the original", "variant",
                 f"{_E}test_siglip_and_align_match_model_forward"),
        Fidelity("preprocessing", "the model's own image processor (a faster call of the torchvision-backed "
                 "processor, equal to the full call)", "as the original", "",
                 f"{_E}test_fast_preprocessing_equals_the_processor"),
    ),
    limitations=("`variant=ts2` is TS2's code's SigLIP score; TS2 published no SigLIP column to compare with.",),
    description="""By default (`variant=ts2`) the score of an image is TS2's: the model's `logits_per_image`
(exp(logit_scale) * cos + logit_bias) for the prompt as is, as michaelsaxon/T2IScoreScore's code computes it (a reference fixture
from that code proves it); `variant=cosine` gives the raw cosine similarity of the SigLIP embeddings, in [-1, 1].
MODEL is a hub id or a local folder of a transformers `SiglipModel` (`siglip:google/siglip-so400m-patch14-384`).
""",
)


#: the family's factory: the shared dual encoder (:mod:`ts2viz.metrics.backbones.embedding`) with its defaults
build = family_factory(__name__, text_length=TEXT_LENGTH)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('siglip',
                "SigLIP score: SigLIP's image-prompt logit exp(logit_scale) * cosine + logit_bias as TS2 computes it "
                '(?variant=cosine: the cosine) (transformers)',
                build, CARD, example='siglip:google/siglip-base-patch16-224', group='embedding', hub_model=True,
                display='SigLIP')
