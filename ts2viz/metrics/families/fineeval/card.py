"""T2I-FineEval's card: its options, its fidelity rows against the authors' code, its fixture line and description."""
from __future__ import annotations

from ...family import Card, Fidelity, Option

_F = "tests/metrics/test_fineeval_fidelity.py::"

CARD = Card(
    summary=("T2I-FineEval: an LLM decomposes the prompt into entity and relation yes/no questions; a detector "
             "proposes boxes; a question's fine score is the max over its candidate crops of the VQA model's yes "
             "score, its coarse score the yes score of its coarse question on the whole image; the image scores "
             "(fine + coarse) / 2."),
    paper=("S. M. H. Hosseini, A. M. Izadi, A. Abdollahi, A. Saghafian, M. Soleymani Baghshah. T2I-FineEval: "
           "Fine-Grained Compositional Metric for Text-to-Image Evaluation. arXiv 2503.11481, 2025. "
           "https://arxiv.org/abs/2503.11481"),
    citation="""@article{hosseini2025t2ifineeval,
  title   = {{T2I-FineEval}: Fine-Grained Compositional Metric for Text-to-Image Evaluation},
  author  = {Hosseini, Seyed Mohammad Hadi and Izadi, Amir Mohammad and Abdollahi, Ali and
             Saghafian, Armin and Soleymani Baghshah, Mahdieh},
  journal = {arXiv preprint arXiv:2503.11481},
  year    = {2025}
}""",
    original=("hadi-hosseini/T2I-FineEval (its scoring code: `get_merged_bounding_box`, `find_adjectives_and_delete`, "
              "LAVIS `blip_vqa` (vqav2) for the yes score, YOLOv9-e for detection)."),
    fixture=("not compared: the authors' code is public (hadi-hosseini/T2I-FineEval) but no fixture "
             "has been made from it yet; the card's rows cite its functions. Image modes: not "
             "compared (a non-RGB image is read by ts2viz's `as_rgb`)."),
    output_range="[0, 1]",
    higher_is_better=True,
    options=(
        Option("generator", None, "Required: the LLM that decomposes the prompt: the base URL of an "
               "OpenAI-compatible chat endpoint or `hf:MODEL` (a local transformers LLM)."),
        Option("generator_model", None, "The model name at the generator's endpoint (default `gpt-4o`)."),
        Option("api_key", None, "The generator endpoint's key, given directly (never recorded in the config; "
               "prefer `api_key_env`)."),
        Option("api_key_env", "OPENAI_API_KEY", "The environment variable holding the generator endpoint's key."),
        Option("detector", "PekingU/rtdetr_r50vd_coco_o365", "Closed-set (`AutoModelForObjectDetection`) or "
               "open-vocabulary (`AutoModelForZeroShotObjectDetection`: OWLv2, Grounding DINO, ... queried with "
               "the prompt's entity names) detector, hub id or folder; its kind is read from its config."),
        Option("confidence", 0.25, "Detection confidence threshold (in [0, 1])."),
        Option("nms_iou", 0.45, "Class-wise NMS IoU (in [0, 1]; `1` turns NMS off)."),
        Option("image_size", None, "Detector input size (default: the detector's own; RT-DETR: 640)."),
        Option("max_boxes", 1000, "Most confident boxes kept per image (the original's YOLOv9 `max_det=1000`; "
               "a smaller cap is a cost guard)."),
        Option("lowercase", True, "Lower-case the decomposition's questions before they are asked and parsed by "
               "spaCy, as the original's `parse_output` does (`false`: as the LLM wrote them)."),
        Option("grow", 0.2, "Box growth per side, as a fraction of the box's width/height."),
        Option("top_pairs", 10, "Relation pairs kept (by the product of confidences)."),
        Option("whole_image", "always", "`always` (the code: the whole image is also an entity candidate) or "
               "`fallback` (only when nothing is detected; the paper's Eq. 1 has boxes only).",
               ("always", "fallback")),
        Option("weighting", "mean", "`mean` (the code: fine = mean over all questions) or `eq4` (the paper's "
               "Eq. 4, Σe / 2nₑ + Σr / 2nᵣ: entity and relation questions weigh half each whatever their numbers; "
               "with questions of one kind only, their mean).", ("mean", "eq4")),
        Option("batch_size", None, "Images per scoring call. Speed only."),
        Option("pair_batch_size", None, "(crop, question) pairs per VQA model call. Speed only."),
        Option("detector_batch_size", None, "Images per detector call (default 8). Speed only."),
        Option("dtype", None, "Compute dtype of the VQA model on GPU: `float32`, `float16` or `bfloat16` "
               "(default: the card's precision, else bfloat16 where the GPU supports it, else float16; always "
               "float32 on CPU).", ("float32", "float16", "bfloat16")),
        Option("template", None, "The VQA model's prompt template with `{question}` (default: the model's own)."),
        Option("list_choices", None, "Spell out \"Answer yes or no.\" in the question (default: on for chat "
               "VLMs)."),
        Option("llm_cache", True, "Read and fill the on-disk LLM reply cache (`$TS2VIZ_CACHE/llm/`); `false` "
               "bypasses it. Not part of the cache key."),
        Option("relation_boxes", "code", "`code` (the code's `get_merged_bounding_box`: the detections, repeated "
               "when fewer than two, plus a whole-image pseudo-box of confidence 0.51 are paired and the best "
               "`top_pairs` products kept) or `detections` (pairs of detections only, as the paper describes; "
               "with one detection its box is the relation candidate).", ("code", "detections")),
        Option("coarse", "code", "How a coarse question is made: `code` (the code's `find_adjectives_and_delete`: "
               "spaCy tags the question, every adjective that is not one of the code's ten colour words is "
               "removed, determiner–verb–noun becomes determiner–noun), `all_adjectives` (colours removed too, "
               "the code's other rule) or `same` (the fine questions unchanged; no spaCy needed).",
               ("code", "all_adjectives", "same")),
        Option("spacy_model", "en_core_web_sm", "The spaCy pipeline of the coarse questions (install: `pip "
               "install spacy && python -m spacy download en_core_web_sm`)."),
        Option("answer_score", None, "The yes score: `lavis_rank` (the code's: LAVIS `blip_vqa` ranking of "
               "[\"yes\", \"no\"]; the default for BLIP-VQA) or `first_token` (P(yes) of the first answer token, "
               "the paper's wording; the only choice for other VQA models).", ("lavis_rank", "first_token")),
        Option("vqa_image_size", None, "BLIP-VQA input size (default 480, LAVIS' resize and normalisation, "
               "position embeddings interpolated; `0`: the transformers processor's size). BLIP-VQA only."),
    ),
    # FineEval's LAVIS blip_vqa (load_model_and_preprocess, float32)
    precision="float32",
    fidelity=(
        Fidelity("questions", "every question lower-cased before it is asked and parsed by spaCy (`parse_output`: "
                 "`line.strip().lower()`)", "as the original", "lowercase",
                 "tests/metrics/test_fineeval_fidelity.py::test_fineeval_equals_the_codes_formula_per_image"),
        Fidelity("detections", "up to 1,000 per image (YOLOv9 `detect.run(max_det=1000)` in `evaluation.py`); "
                 "`max_boxes=N` caps them", "as the original", "max_boxes",
                 "tests/metrics/test_fineeval_fidelity.py::test_fineeval_code_options"),
        Fidelity("precision", "float32 on GPU (LAVIS `load_model_and_preprocess` of `blip_vqa`)", "as the original", "dtype", ""),
        Fidelity("question generation", "ts2viz's own two-shot decomposition prompt (the authors' prompt files are "
                 "not in their repository)", "documented difference", "generator",
                 "tests/metrics/test_metrics_fineeval.py::test_parse_decomposition"),
        Fidelity("coarse questions",
                 "`coarse=code`: spaCy `en_core_web_sm`, non-colour adjectives removed (colour words compared "
                 "case-sensitively), determiner–verb–noun → determiner–noun (\"Is there a large sleeping cat on "
                 "the red sofa?\" → \"Is there a cat on the red sofa?\"); `all_adjectives`, the code's other rule; "
                 "`same`, the fine questions (tested on hand-built spaCy `Doc`s)", "as the original", "coarse",
                 f"{_F}test_coarse_questions_follow_the_codes_rule"),
        Fidelity("prompt template", "LAVIS' question processing (lower case, `.!\"()*#:;~` removed), bare question "
                 "to BLIP-VQA", "as the original", "template", f"{_F}test_lavis_question_and_yes_score"),
        Fidelity("answer → score",
                 "LAVIS ranking of [\"yes\", \"no\"] with label smoothing 0.1, and the first-token probability of "
                 "the top candidate if \"yes\" wins the ranking, else of the second (P(yes) whenever the two "
                 "orders agree) (`answer_score=lavis_rank`); `first_token` as an option (and for other VQA models)",
                 "as the original", "answer_score", f"{_F}test_blip_rank_answers_is_lavis_ranking"),
        Fidelity("preprocessing",
                 "480 px, LAVIS' resize and normalisation (`vqa_image_size`), boxes rounded to pixels and grown by "
                 "`int(0.2 w)` / `int(0.2 h)` per side, clipped, crops resized to the image size (bicubic)",
                 "as the original", "vqa_image_size", f"{_F}test_grow_box_as_the_code"),
        Fidelity("preprocessing (checkpoint)",
                 "transformers' BLIP-VQA checkpoints carry 384 px position embeddings (interpolated to 480), and "
                 "its question encoder starts with `[CLS]` where LAVIS puts `[ENC]`", "documented difference",
                 "vqa_image_size"),
        Fidelity("candidates",
                 "every box for every entity question plus the whole image; relation unions of the 10 best pairs "
                 "including the whole-image pseudo-box (0.51) plus the whole image (`relation_boxes=code`)",
                 "as the original", "relation_boxes", f"{_F}test_relation_pairs_include_the_whole_image_pseudo_box"),
        Fidelity("default models",
                 "RT-DETR `PekingU/rtdetr_r50vd_coco_o365` (transformers; COCO AP 55.3) for YOLOv9-e (COCO AP "
                 "55.6, not in transformers), with the same confidence 0.25, class-wise NMS IoU 0.45 and 640 × "
                 "640 input; BLIP-VQA capfilt-large as in the code", "documented difference", "detector",
                 "tests/metrics/test_metrics_fineeval.py"),
        Fidelity("aggregation",
                 "fine = mean over questions of the max, coarse = mean, (fine + coarse) / 2 (whole metric, per "
                 "image, 1e-6); the paper's Eq. 4 as `weighting=eq4`", "as the original", "weighting",
                 f"{_F}test_fineeval_equals_the_codes_formula_per_image"),
    ),
    limitations=(
        "Without spaCy or its English pipeline the metric stops with the install command (spaCy's English "
        "pipelines are not on PyPI under their own name); `coarse=same` needs neither.",
        "Throughput was measured on CPU with the tests' tiny models only (`benchmarks/bench_gecko_fineeval.py`); "
        "GPU images/s with the real models remain to be measured.",
    ),
    model_names={"blip-vqa-capfilt-large": "Salesforce/blip-vqa-capfilt-large"},
    description="""The LLM decomposes the prompt into entity names and `[entity]` / `[relation]` yes/no
questions (ts2viz's own two-shot prompt, `ts2viz/metrics/families/fineeval/questions.py`; replies cached in
`$TS2VIZ_CACHE/llm/`). A detector proposes boxes; boxes are not matched to names: every box (grown 20 % of its
width/height per side, clipped, cropped, resized to the image size) is tried for every entity question, and the
union boxes of the 10 pairs with the highest confidence products (grown the same way) for every relation
question; the whole image is a candidate of both kinds. A question's fine score is the max over its candidates
of the yes score from the VQA model (BLIP-VQA in the paper: `Salesforce/blip-vqa-capfilt-large` is the
transformers counterpart of its checkpoint), its coarse score the yes score of its *coarse question* on the
whole image; the image scores (fine + coarse) / 2, fine and coarse being means over the questions.

The detector: the original runs YOLOv9-e (COCO, 640 px, confidence 0.25, NMS IoU 0.45). The default here is
`PekingU/rtdetr_r50vd_coco_o365` through `AutoModelForObjectDetection`, with the same confidence, class-wise
NMS and 640 × 640 input; any closed-set transformers detector works. An open-vocabulary detector
(`google/owlv2-base-patch16-ensemble`, `IDEA-Research/grounding-dino-tiny`, ...) is queried with the prompt's
entity names instead.

The details give, per image, the detections (pixel boxes, labels, confidences), the candidate regions, and
per question its candidates' P(yes), the `best` candidate and the fine and coarse scores: enough to draw the
box behind each question's score.
""",
)
