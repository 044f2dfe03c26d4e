"""CLIPScore: CLIP's image-prompt logit as TS2 computes it, or a cosine variant (transformers or open_clip).

The default score (``variant=ts2``) is the model's ``logits_per_image``, ``exp(logit_scale) * cos`` of the
image's and the prompt's embeddings (100 * cos for OpenAI's CLIP); ``variant=cosine`` is the raw cosine in
[-1, 1], ``hessel`` and ``torchmetrics`` the two published CLIPScores. The dual encoder is
:mod:`ts2viz.metrics.backbones.embedding`'s, which CLIPScore, ALIGNScore and SigLIP share.
"""
from __future__ import annotations

from ..backbones.embedding.factory import family_factory
from ..backbones.embedding.options import ALL_VARIANTS, embedding_options
from ..family import Card, Family, Fidelity

_CS = "tests/metrics/reference/test_clipscore_reference.py::"
_E = "tests/metrics/test_metrics_embedding.py::"

CARD = Card(
    summary=("CLIPScore as TS2 computes it (`variant=ts2`, default): CLIP's image-prompt logit, exp(logit_scale) "
             "times the cosine of the image and prompt embeddings (100 * cos for OpenAI's CLIP); `variant=cosine` "
             "is the cosine itself, `hessel` and `torchmetrics` the two published CLIPScores; through transformers (`clipscore:HUB_ID_OR_FOLDER`) or open_clip (`clipscore:openclip:ARCH/TAG`, "
             "TAG a pretrained tag or a checkpoint file)."),
    paper=("J. Hessel, A. Holtzman, M. Forbes, R. Le Bras, Y. Choi. CLIPScore: A Reference-free Evaluation Metric "
           "for Image Captioning. EMNLP 2021. https://arxiv.org/abs/2104.08718 (CLIP: A. Radford et al., "
           "Learning Transferable Visual Models From Natural Language Supervision, ICML 2021)"),
    citation="""@inproceedings{hessel2021clipscore,
  title     = {{CLIPScore}: A Reference-free Evaluation Metric for Image Captioning},
  author    = {Hessel, Jack and Holtzman, Ari and Forbes, Maxwell and Le Bras, Ronan and Choi, Yejin},
  booktitle = {Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  year      = {2021}
}""",
    original=("TS2's own CLIPScore (michaelsaxon/T2IScoreScore `CLIPScorer`, the default), jmhessel/clipscore "
              "(CLIP-S, `variant=hessel`) and torchmetrics' `clip_score` (`variant=torchmetrics`). Fixtures from "
              "TS2's `CLIPScorer.calculate_score`, Hessel's `get_clip_score` and torchmetrics' `clip_score`, run in "
              "side venvs (`tools/reference/clipscore/`); the open_clip backend against open_clip's own code in "
              "the test."),
    fixture=('`tests/fixtures/reference/clipscore/`: jmhessel/clipscore 1036465 (`get_clip_score`), '
             "torchmetrics 1.9.0 (`clip_score`) and TS2's `CLIPScorer` (michaelsaxon/T2IScoreScore "
             '93ebf89), on a tiny CLIP; the open_clip backend not compared. Image modes: not compared'
             " (a non-RGB image is read by ts2viz's `as_rgb`)."),
    output_range=("ts2: exp(logit_scale) * cos, in [-exp(logit_scale), exp(logit_scale)] ([-100, 100] for OpenAI's "
                  "CLIP); cosine: [-1, 1]; hessel: [0, 2.5]; torchmetrics: [0, 100]"),
    higher_is_better=True,
    options=embedding_options(ALL_VARIANTS),
    # TS2's CLIPScorer and torchmetrics load transformers models in float32;
    # variant=hessel runs in float16 on a GPU, as Hessel et al.'s script (clip.load)
    precision="float32",
    fidelity=(
        Fidelity("score (default)", "`variant=ts2`: TS2's `CLIPScorer.calculate_score` (michaelsaxon/T2IScoreScore "
                 "`src/_old/correlation_scores/run_simscore.py`, the code behind the published `clipscore` column): "
                 "the model's `logits_per_image` = exp(logit_scale) * cos (100 * cos for OpenAI's CLIP), prompt as is, "
                 "no clamp", "as the original", "variant", _CS + "test_clipscore_default_is_ts2s_own"),
        Fidelity("scaling (TS2's published column)", "TS2 min-max scaled its scores over the 2,840 images and rounded to "
                 "2 decimals; ts2viz reports the unscaled per-image score (an affine map per dataset: Ord and Sep are "
                 "unchanged except for the ties the rounding makes)", "documented difference", "", ""),
        Fidelity("score (Hessel et al.)", "`variant=hessel`: jmhessel/clipscore `get_clip_score`: 2.5 * max(cos, 0) of "
                 "\"A photo depicts \" + prompt", "as the original", "variant", _CS + "test_clipscore_variant_equals_original"),
        Fidelity("score (torchmetrics)", "`variant=torchmetrics`: torchmetrics `clip_score`: 100 * max(cos, 0) of the "
                 "prompt as is", "as the original", "variant", _CS + "test_clipscore_variant_equals_original"),
        Fidelity("prompt truncation", "over 77 tokens: cut keeping the end token (Hessel's `clip.tokenize(truncate=True)`), "
                 "or ids cut without it (`variant=torchmetrics`, as torchmetrics); TS2's code has no truncation and "
                 "fails on such prompts, ts2viz truncates with a warning", "as the original", "variant",
                 _CS + "test_clipscore_variant_equals_original"),
        Fidelity("preprocessing", "`preprocess=original`: transformers' PIL image processor (what TS2 and torchmetrics "
                 "ran), torchvision Resize + CenterCrop on the PIL image for `variant=hessel` (its crop rounds where "
                 "transformers' floors); `preprocess=fast` is the processor's torchvision backend (faster, differs in "
                 "the 4th digit)", "as the original", "preprocess", _CS + "test_clipscore_variant_equals_original"),
        Fidelity("precision", "float32 on GPU (TS2, torchmetrics); float16 for `variant=hessel` (Hessel's script on a "
                 "GPU); recorded in the config's `dtype`", "as the original", "dtype", ""),
        Fidelity("default model", "none: MODEL is given; TS2 used `openai/clip-vit-base-patch16`, Hessel et al. ViT-B/32 "
                 "(`openai/clip-vit-base-patch32`), torchmetrics defaults to `openai/clip-vit-large-patch14`", "documented difference",
                 "", ""),
        Fidelity("open_clip checkpoints", "`openclip:ARCH/TAG` scored with open_clip's own preprocessing and "
                 "tokenizer: its cosine equals open_clip's own `create_model_and_transforms`, `encode_image` and "
                 "`encode_text` on a tiny open_clip model (1e-5); the variants' formulas on an open_clip model are "
                 "**not compared** with Hessel's, torchmetrics' or TS2's code (none of them runs open_clip)",
                 "as the original", "",
                 f"{_E}test_openclip_checkpoint_matches_independent"),
    ),
    limitations=(
        "TS2's published CLIPScore column is min-max scaled over its 2,840 images and rounded to 2 decimals; "
        "ts2viz reports the unscaled score (the same ordering within a dataset).",
        "Prompt embeddings are memoised per distinct set of prompts in a batch (many images share one prompt), so "
        "a prompt's embedding depends only on the prompts of its own batch.",
    ),
    description="""The score of an image comes from the cosine similarity of its embedding and its prompt's
embedding, in the form `variant=` names: by default (`ts2`) the model's logit, exp(logit_scale) * cos (100 * cos
for OpenAI's CLIP, as TS2's code reports it); `cosine` the cosine itself, in [-1, 1]. Prompts longer than the text encoder's context are truncated with a warning. MODEL is a
Hugging Face hub id or a local folder of a transformers CLIP model (`clipscore:openai/clip-vit-base-patch32`),
or `openclip:ARCH/TAG` for open_clip (`clipscore:openclip:ViT-B-32/laion2b_s34b_b79k`, TAG a pretrained tag
or a checkpoint file).
""",
)


#: the family's factory: the shared dual encoder (:mod:`ts2viz.metrics.backbones.embedding`) with its defaults
build = family_factory(__name__, variants=ALL_VARIANTS, openclip=True)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('clipscore',
                "CLIPScore: CLIP's image-prompt logit exp(logit_scale) * cosine as TS2 computes it (?variant=cosine: "
                'the cosine; hessel, torchmetrics) (transformers or open_clip)',
                build, CARD, example='clipscore:openai/clip-vit-base-patch32', group='embedding', hub_model=True,
                display='CLIPScore')
