"""ALIGNScore: TS2's logit or the cosine of ALIGN image and prompt embeddings (transformers).

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
    summary=("ALIGNScore: ALIGN's image–prompt logit as TS2's code computes it (`variant=ts2`, default) or the "
             "cosine similarity of its embeddings (`variant=cosine`) (transformers)."),
    paper=("C. Jia, Y. Yang, Y. Xia, Y.-T. Chen, Z. Parekh, H. Pham, Q. V. Le, Y. Sung, Z. Li, T. Duerig. Scaling "
           "Up Visual and Vision-Language Representation Learning With Noisy Text Supervision. ICML 2021. "
           "https://arxiv.org/abs/2102.05918"),
    citation="""@inproceedings{jia2021scaling,
  title     = {Scaling Up Visual and Vision-Language Representation Learning With Noisy Text Supervision},
  author    = {Jia, Chao and Yang, Yinfei and Xia, Ye and Chen, Yi-Ting and Parekh, Zarana and Pham, Hieu and
               Le, Quoc V. and Sung, Yun-Hsuan and Li, Zhen and Duerig, Tom},
  booktitle = {International Conference on Machine Learning (ICML)},
  year      = {2021}
}""",
    original=("the ALIGN checkpoints' transformers implementation (`AlignModel.get_image_features` / "
              "`get_text_features`); TS2 scored `kakaobrain/align-base` with it. Fixture (`variant=ts2`) from TS2's "
              "own `ALIGNScore` (T2IMetrics), run in a side venv (`tools/reference/ts2_embeddings/`)."),
    fixture=("`tests/fixtures/reference/ts2_embeddings/`: TS2's own `ALIGNScore` "
             '(michaelsaxon/T2IScoreScore 93ebf89, `src/T2IMetrics/correlation/`) on transformers '
             '4.57.6, for `variant=ts2` only; the other variants not compared. Image modes: not '
             "compared (a non-RGB image is read by ts2viz's `as_rgb`)."),
    output_range="ts2: the model's logits (a scaled, for SigLIP shifted, cosine); cosine: [-1, 1]",
    higher_is_better=True,
    options=embedding_options(),
    # TS2's ALIGNScore loads the transformers model in float32
    precision="float32",
    fidelity=(
        Fidelity("score (default)", "`variant=ts2`: TS2's `ALIGNScore` (michaelsaxon/T2IScoreScore `src/T2IMetrics/correlation/"
                 "align.py`, `CorrelationMetric.calculate_score`): the model's `logits_per_image` = cos / temperature, the "
                 "prompt as is (`padding=True` on one prompt), no clamp; `variant=cosine` the raw cosine", "as the original", "variant",
                 _TE + "test_default_variant_equals_ts2s_code"),
        Fidelity("prompt length", "truncated at ALIGN's 64 tokens with a warning (TS2's code does not truncate)", "documented difference",
                 "", ""),
        Fidelity("scaling (TS2's published column)", "TS2 min-max scaled and rounded its scores; ts2viz reports them "
                 "unscaled", "documented difference", "", ""),
        Fidelity("reference", "TS2's own code run on a tiny ALIGN in `kakaobrain/align-base`'s layout (transformers 4.57, "
                 "its PIL EfficientNet processor: `preprocess=original`); the older `src/_old/correlation_scores/"
                 "run_simscore.py` passes `padding=` twice and does not compile, so the package's version is the "
                 "reference", "as the original", "preprocess", _TE + "test_default_variant_equals_ts2s_code"),
        Fidelity("score (`variant=cosine`)", "the raw cosine of transformers' image and text features: equal to the model's "
                 "own `get_image_features` / `get_text_features` on a tiny ALIGN; **not compared** with an original (no "
                 "published metric's code computes it)", "not in the original", "variant",
                 "tests/metrics/test_metrics_embedding.py::test_siglip_and_align_match_model_forward"),
        Fidelity("text length", "prompts padded/truncated to 64 tokens, the length the public checkpoint was "
                 "trained with (truncation warned)", "as the original", "",
                 f"{_E}test_siglip_and_align_match_model_forward"),
        Fidelity("preprocessing", "the model's own image processor (EfficientNet's, its extra rescale offset "
                 "included)", "as the original", "", f"{_E}test_siglip_and_align_match_model_forward"),
    ),
    limitations=("Prompts over 64 tokens are truncated (TS2's code encodes them whole).",),
    description="""By default (`variant=ts2`) the score of an image is TS2's: the model's `logits_per_image`
(cos / temperature) for the prompt as is, as michaelsaxon/T2IScoreScore's code computes it (a reference fixture
from that code proves it); `variant=cosine` gives the raw cosine similarity of the ALIGN embeddings, in [-1, 1].
MODEL is a hub id or a local folder of a transformers `AlignModel` (`alignscore:kakaobrain/align-base`).
""",
)


#: the family's factory: the shared dual encoder (:mod:`ts2viz.metrics.backbones.embedding`) with its defaults
build = family_factory(__name__, text_length=TEXT_LENGTH)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('alignscore',
                "ALIGNScore: ALIGN's image-prompt logit cosine / temperature as TS2 computes it (?variant=cosine: the "
                'cosine) (transformers)',
                build, CARD, example='alignscore:kakaobrain/align-base', group='embedding', hub_model=True,
                display='ALIGNScore')
