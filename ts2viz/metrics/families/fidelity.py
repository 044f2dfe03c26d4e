"""Fidelity rows and original precisions of the classic families, checked against the originals' own code.

The families are CLIPScore, ALIGNScore, SigLIP, TIFA, DSG and T2I-FineEval (issue 31).

Each row is ``(aspect, what ts2viz does, status, option, test)``: status ``as the original`` (the test
shows it against the original's own code or an independent computation) or ``documented difference``
(the option that changes it). The family cards (:data:`ts2viz.metrics.registry.Card`) take their fidelity
rows and precision from here. Nothing heavy is imported.
"""
from __future__ import annotations

AS = "as the original"
DIFF = "documented difference"
_R = "tests/metrics/reference/"
_CS = _R + "test_clipscore_reference.py::"
_TI = _R + "test_tifa_reference.py::"
_DS = _R + "test_dsg_reference.py::"
_RA = _R + "test_recorded_answers.py::"
_TE = _R + "test_ts2_embeddings_reference.py::"

#: the original's compute dtype on GPU, per family (the card's ``precision``); ts2viz's default on GPU
PRECISION: dict[str, str] = {
    # TS2's CLIPScorer / ALIGNScore / SiGLIPScore and torchmetrics load transformers models in float32;
    # variant=hessel runs in float16 on a GPU, as Hessel et al.'s script (clip.load)
    "clipscore": "float32",
    "alignscore": "float32",
    "siglip": "float32",
    # TIFA's BLIP / GIT (transformers, default float32); DSG's InstructBLIP (from_pretrained, float32)
    "tifa": "float32",
    "dsg": "float32",
    # FineEval's LAVIS blip_vqa (load_model_and_preprocess, float32)
    "fineeval": "float32",
}

FIDELITY: dict[str, tuple[tuple[str, str, str, str, str], ...]] = {
    "clipscore": (
        ("score (default)", "`variant=ts2`: TS2's `CLIPScorer.calculate_score` (michaelsaxon/T2IScoreScore "
         "`src/_old/correlation_scores/run_simscore.py`, the code behind the published `clipscore` column): "
         "the model's `logits_per_image` = exp(logit_scale) * cos (100 * cos for OpenAI's CLIP), prompt as is, "
         "no clamp", AS, "variant", _CS + "test_clipscore_default_is_ts2s_own"),
        ("scaling (TS2's published column)", "TS2 min-max scaled its scores over the 2,840 images and rounded to "
         "2 decimals; ts2viz reports the unscaled per-image score (an affine map per dataset: Ord and Sep are "
         "unchanged except for the ties the rounding makes)", DIFF, "", ""),
        ("score (Hessel et al.)", "`variant=hessel`: jmhessel/clipscore `get_clip_score`: 2.5 * max(cos, 0) of "
         "\"A photo depicts \" + prompt", AS, "variant", _CS + "test_clipscore_variant_equals_original"),
        ("score (torchmetrics)", "`variant=torchmetrics`: torchmetrics `clip_score`: 100 * max(cos, 0) of the "
         "prompt as is", AS, "variant", _CS + "test_clipscore_variant_equals_original"),
        ("prompt truncation", "over 77 tokens: cut keeping the end token (Hessel's `clip.tokenize(truncate=True)`), "
         "or ids cut without it (`variant=torchmetrics`, as torchmetrics); TS2's code has no truncation and "
         "fails on such prompts, ts2viz truncates with a warning", AS, "variant",
         _CS + "test_clipscore_variant_equals_original"),
        ("preprocessing", "`preprocess=original`: transformers' PIL image processor (what TS2 and torchmetrics "
         "ran), torchvision Resize + CenterCrop on the PIL image for `variant=hessel` (its crop rounds where "
         "transformers' floors); `preprocess=fast` is the processor's torchvision backend (faster, differs in "
         "the 4th digit)", AS, "preprocess", _CS + "test_clipscore_variant_equals_original"),
        ("precision", "float32 on GPU (TS2, torchmetrics); float16 for `variant=hessel` (Hessel's script on a "
         "GPU); recorded in the config's `dtype`", AS, "dtype", ""),
        ("default model", "none: MODEL is given; TS2 used `openai/clip-vit-base-patch16`, Hessel et al. ViT-B/32 "
         "(`openai/clip-vit-base-patch32`), torchmetrics defaults to `openai/clip-vit-large-patch14`", DIFF,
         "", ""),
    ),
    "alignscore": (
        ("score (default)", "`variant=ts2`: TS2's `ALIGNScore` (michaelsaxon/T2IScoreScore `src/T2IMetrics/correlation/"
         "align.py`, `CorrelationMetric.calculate_score`): the model's `logits_per_image` = cos / temperature, the "
         "prompt as is (`padding=True` on one prompt), no clamp; `variant=cosine` the raw cosine", AS, "variant",
         _TE + "test_default_variant_equals_ts2s_code"),
        ("prompt length", "truncated at ALIGN's 64 tokens with a warning (TS2's code does not truncate)", DIFF,
         "", ""),
        ("scaling (TS2's published column)", "TS2 min-max scaled and rounded its scores; ts2viz reports them "
         "unscaled", DIFF, "", ""),
        ("reference", "TS2's own code run on a tiny ALIGN in `kakaobrain/align-base`'s layout (transformers 4.57, "
         "its PIL EfficientNet processor: `preprocess=original`); the older `src/_old/correlation_scores/"
         "run_simscore.py` passes `padding=` twice and does not compile, so the package's version is the "
         "reference", AS, "preprocess", _TE + "test_default_variant_equals_ts2s_code"),
        ("score (`variant=cosine`)", "the raw cosine of transformers' image and text features: equal to the model's "
         "own `get_image_features` / `get_text_features` on a tiny ALIGN; **not compared** with an original (no "
         "published metric's code computes it)", "not in the original", "variant",
         "tests/metrics/test_metrics_embedding.py::test_siglip_and_align_match_model_forward"),
    ),
    "siglip": (
        ("score (default)", "`variant=ts2`: TS2's `SiGLIPScore` (T2IMetrics `src/T2IMetrics/correlation/siglip.py`, "
         "`CorrelationMetric.calculate_score`): `logits_per_image` = exp(logit_scale) * cos + logit_bias, the "
         "prompt unpadded (its `padding=True` on one prompt), SigLIP's tokenizer (lower-cased, punctuation "
         "removed); `variant=cosine`: the raw cosine with the prompt padded to SigLIP's 64 training tokens", AS,
         "variant", _TE + "test_default_variant_equals_ts2s_code"),
        ("reference", "TS2's own code run on a tiny SigLIP in `google/siglip-so400m-patch14-384`'s layout "
         "(SentencePiece `spiece.model`, transformers 4.57, its PIL image processor: `preprocess=original`); TS2 "
         "published no SigLIP column", AS, "preprocess", _TE + "test_default_variant_equals_ts2s_code"),
        ("score (`variant=cosine`)", "the raw cosine, the prompt padded to 64 tokens: equal to transformers' own "
         "`get_image_features` / `get_text_features` on a tiny SigLIP; **not compared** with an original (no "
         "published metric's code computes it)", "not in the original", "variant",
         "tests/metrics/test_metrics_embedding.py::test_siglip_and_align_match_model_forward"),
    ),
    "tifa": (
        ("decoding (BLIP-VQA)", "`decoding=tifa`: TIFA's `BLIP.vqa`: the bare question, `generate(max_length=50)`, "
         "decoded with `skip_special_tokens`, not stripped", AS, "decoding",
         _TI + "test_tifa_equals_tifas_code"),
        ("decoding (GIT)", "`decoding=tifa`: TIFA's `GIT.vqa`: `[CLS]` + the question's tokens, "
         "`generate(max_length=50)` counting the question", AS, "decoding", _TI + "test_tifa_equals_tifas_code"),
        ("decoding and prompt (BLIP-2)", "`decoding=tifa` + `prompt_style=tifa_blip2`: TIFA's prompt and LAVIS "
         "`blip2_t5.generate` defaults (beam 5, 30 new tokens, min_length 1) on the transformers BLIP-2; not "
         "yet proven against LAVIS' own model code (no LAVIS fixture)", DIFF, "decoding",
         "tests/metrics/test_tifa_fidelity.py::test_tifa_decodes_as_tifas_code_on_its_models"),
        ("decoding (other VLMs)", "greedy, the model's template, choices listed (TIFA's code has no such models)",
         DIFF, "decoding, list_choices", ""),
        ("answer → choice", "TIFA's rule: an answer that is a choice is taken, any other goes to Sentence-BERT "
         "(mean pooling, normalised, argmax)", AS, "mapper, mapper_rule",
         _TI + "test_tifa_equals_tifas_code, " + _RA + "test_tifa_rule_on_recorded_answers"),
        ("answer → choice (TS2)", "`mapper_rule=ts2`: the release's rule (yes/no by \"contains yes\", all other "
         "answers to Sentence-BERT)", AS, "mapper_rule", _RA + "test_tifa_ts2_rule_matches_release"),
        ("correctness", "`correctness=exact`: mapped choice `==` expected answer (TIFA's `int(mc_answer == "
         "answer)`); `normalized` compares after lower-casing and removing articles and punctuation", AS,
         "correctness", _TI + "test_tifa_equals_tifas_code, " + _RA + "test_tifa_rule_on_recorded_answers"),
        ("aggregation", "mean of the 0/1 question scores (`tifa_score_single`)", AS, "",
         _TI + "test_tifa_equals_tifas_code"),
        ("precision", "float32 on GPU (TIFA's transformers models load in float32); LAVIS' BLIP-2 ran its ViT in "
         "float16 and its T5 in bfloat16, ts2viz runs BLIP-2 in the card's float32 unless `dtype=`", DIFF,
         "dtype", ""),
        ("images", "transformers' processors as loaded (BLIP-VQA, GIT: equal to TIFA's on the fixtures)", AS, "",
         _TI + "test_tifa_equals_tifas_code"),
    ),
    "dsg": (
        ("decoding and prompt (InstructBLIP)", "`decoding=dsg`: DSG's `InstructBLIP.vqa` under transformers 4.31 "
         "(bare question, beam 5, repetition penalty 1.5, max_length 256 on generated tokens)", AS, "decoding",
         _DS + "test_dsg_instructblip_equals_dsgs_code"),
        ("decoding (long answers)", "beam search is the installed transformers' (5): it normalises a finished "
         "beam by one more token, starts from an empty sequence where 4.31 held `[bos]` and stops on another "
         "heuristic, so answers that run for tens of tokens may differ from transformers 4.31's. Measured on a "
         "tiny random InstructBLIP whose end token is rarely likely (`tools/reference/dsg/make_fixtures.py`'s "
         "model with the end token's output row redrawn: seed 3, 6x the layer's spread), every question of both "
         "fixture prompts on the 4 fixture images answered by DSG's code under 4.31: 6 of 36 answers differ (on "
         "5, 4.31 went on for 29-36 words where ts2viz stops after one; on 1, 34 words against 33); the 30 "
         "others, short and long, are equal. No option gives 4.31's search; the real InstructBLIP answers "
         "yes/no questions in a few tokens, where the two agree (`test_dsg_instructblip_equals_dsgs_code`)", DIFF, "", ""),
        ("prompt (chat VLMs)", "`prompt_style=dsg_chat` (default for a model with a chat template): DSG's "
         "`GPT4o.vqa` instruction \"Answer only with 'yes' or 'no'. Do not give other outputs or punctuation "
         "marks. Question: ...\", greedy (GPT-4o sampled at its API's defaults), 20 new tokens (its max_tokens)",
         AS, "prompt_style, max_new_tokens",
         "tests/metrics/test_dsg_fidelity.py::test_dsg_asks_and_reads_each_kind_of_model_as_dsgs_code"),
        ("answer → yes", "`yes_rule=exact` (InstructBLIP, BLIP-VQA: `answer == 'yes'`, `calc_vqa_score`); "
         "`yes_rule=chat` (generative VLMs: `GPT4o.vqa`'s lower-case, strip, remove . , ? !); `contains` is "
         "TS2's rule", AS, "yes_rule",
         _RA + "test_dsg_yes_rules_on_recorded_answers"),
        ("answer → yes (TS2)", "`yes_rule=contains`: \"yes\" anywhere in the lower-cased answer, as the release's "
         "per-question files", AS, "yes_rule", _RA + "test_dsg_yes_rules_on_recorded_answers"),
        ("aggregation", "`accumulation=direct`: `calc_vqa_score`'s average_score_with_dependency (a question "
         "zeroed when a direct parent scored 0), on six real VLMs' 17,114 answers each", AS, "accumulation",
         _RA + "test_dsg_yes_rules_on_recorded_answers"),
        ("precision", "float32 on GPU (DSG's `InstructBlipForConditionalGeneration.from_pretrained`)", AS, "dtype",
         ""),
        ("images", "InstructBLIP's processor as loaded (torchvision backend on transformers 5; DSG's 4.31 used "
         "the PIL one): equal answers on the fixture", AS, "", _DS + "test_dsg_instructblip_equals_dsgs_code"),
    ),
    "fineeval": (
        ("questions", "every question lower-cased before it is asked and parsed by spaCy (`parse_output`: "
         "`line.strip().lower()`)", AS, "lowercase",
         "tests/metrics/test_fineeval_fidelity.py::test_fineeval_equals_the_codes_formula_per_image"),
        ("detections", "up to 1,000 per image (YOLOv9 `detect.run(max_det=1000)` in `evaluation.py`); "
         "`max_boxes=N` caps them", AS, "max_boxes",
         "tests/metrics/test_fineeval_fidelity.py::test_fineeval_code_options"),
        ("precision", "float32 on GPU (LAVIS `load_model_and_preprocess` of `blip_vqa`)", AS, "dtype", ""),
    ),
}
