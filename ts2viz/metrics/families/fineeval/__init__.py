"""T2I-FineEval (Hosseini et al.): max P(yes) over detector crops per entity / relation question.

For a prompt and an image, as the authors' code (hadi-hosseini/T2I-FineEval) computes it:

1. an LLM decomposes the prompt into entity names and tagged yes/no questions (:mod:`.questions`,
   ts2viz's own two-shot prompt; replies cached on disk, :mod:`ts2viz.metrics.common.llmcache`);
2. a detector proposes boxes (:mod:`ts2viz.metrics.backbones.detect`; closed-set RT-DETR by default, like the original's COCO
   YOLOv9-e, or open-vocabulary queried with the entity names). Boxes are not matched to entity names:
   every box is tried for every entity question;
3. candidates (:func:`candidates`): each box rounded to pixels and grown by ``int(0.2 * width)`` /
   ``int(0.2 * height)`` per side, clipped, cropped and resized to the image size (:func:`grow_box`,
   :func:`crop_resized`), plus the whole image; relation candidates are the grown union boxes of the
   10 best pairs, ranked by the product of confidences, of the detections *and a whole-image
   pseudo-box of confidence 0.51* (:func:`code_relation_pairs`), plus the whole image;
4. a question's fine score is the max over its candidates of the yes score from BLIP-VQA run as LAVIS'
   ``blip_vqa`` (vqav2): 480 px input, LAVIS' question processing, ranking of ["yes", "no"]
   (:func:`lavis_yes_score`); its coarse score the yes score of its *coarse question* on the whole
   image: the question with every adjective but a colour removed and determiner-verb-noun reduced to
   determiner-noun, with spaCy's ``en_core_web_sm`` (:class:`.questions.CoarseQuestions`);
5. fine = mean over questions, coarse = mean over questions, score = (fine + coarse) / 2.

The paper's variants and ts2viz's earlier choices are options (the fidelity rows of :data:`CARD`):
``weighting=eq4`` (the paper's Eq. 4, sum_e / 2 n_e + sum_r / 2 n_r), ``whole_image=fallback`` (the
paper's Eq. 1 has boxes only), ``relation_boxes=detections`` (pairs of detections only, as the paper
describes), ``coarse=same`` (the fine questions asked on the whole image) or ``coarse=all_adjectives``
(the code's other rule), ``answer_score=first_token`` (P(yes) of the first answer token; the only
choice for VQA models other than BLIP-VQA), ``vqa_image_size=0`` (the transformers processor's size).

Per-image details (``metric.last_details``): ``image_size``, ``detections`` (pixel boxes, labels,
confidences), ``candidates`` (kind, crop region in pixels, source detections, rank score), and per
question its kind, candidate indices, their yes scores, the ``best`` candidate, ``fine``, the
``coarse_question`` and ``coarse``.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ....errors import InputError
from ...backbones.detect import (
    CONFIDENCE,
    DEFAULT_DETECTOR,
    NMS_IOU,
    Detection,
    Detector,
    load_detector,
)
from ...backbones.llm import load_llm
from ...backbones.vqa.loader import load_vqa_model
from ...backbones.vqa.model import VQAModel
from ...common.base import Metric
from ...common.llmcache import cached_reply
from ...common.spec import Spec
from ...family import Card, Family, Fidelity, Option
from .questions import (
    COARSE_RULES,
    DECOMPOSE_SYSTEM,
    SPACY_MODEL,
    CoarseQuestions,
    Decomposition,
    parse_decomposition,
)

_F = "tests/metrics/test_fineeval_fidelity.py::"
#: detections kept per image: the original's YOLOv9 ``detect.run(max_det=1000)`` (``evaluation.py``)
YOLO_MAX_DET = 1000

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

GROW = 0.2
TOP_PAIRS = 10
WHOLE_IMAGE = ("always", "fallback")
WEIGHTINGS = ("mean", "eq4")
#: P(yes) of a (crop, question): ``lavis_rank`` (the code: LAVIS ``predict_answers`` ranking
#: ["yes", "no"], see :func:`lavis_yes_score`; BLIP-VQA only) or ``first_token`` (P(yes) of the first
#: answer token, as the paper describes it; any VQA model).
ANSWER_SCORES = ("lavis_rank", "first_token")
#: LAVIS' blip_vqa (vqav2) input size, which the code uses.
LAVIS_IMAGE_SIZE = 480
PROMPTS_ID = "ts2viz-fineeval-v1:" + hashlib.sha1(DECOMPOSE_SYSTEM.encode()).hexdigest()[:12]

Box = tuple[float, float, float, float]


# -- geometry ----------------------------------------------------------------------------------------

def grow_box(box: Box, size: tuple[int, int], grow: float = GROW) -> tuple[int, int, int, int]:
    """``box`` grown as the authors' code grows it.

    The box is rounded to whole pixels (their YOLOv9 writes rounded pixel boxes), then moved out by
    ``int(grow * width)`` on the left and right and ``int(grow * height)`` on the top and bottom
    (truncated), and clipped to the image ``size``. A degenerate result is widened to one pixel (the code
    would fail on it).

    Parameters
    ----------
    box : tuple of float
        (left, top, right, bottom) in pixels.
    size : tuple of int
        The image's (width, height).
    grow : float, default 0.2
        The fraction of the box's width and height added on each side.

    Returns
    -------
    tuple of int
        The grown box (left, top, right, bottom).

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval import grow_box
    >>> grow_box((10.4, 10, 20, 30), (100, 100))
    (8, 6, 22, 34)
    >>> grow_box((0, 0, 50, 50), (40, 40))
    (0, 0, 40, 40)
    """
    left, top, right, bottom = (int(round(float(v))) for v in box)
    w, h = right - left, bottom - top
    width, height = size
    ext_w, ext_h = int(w * grow), int(h * grow)
    l2, t2 = max(0, left - ext_w), max(0, top - ext_h)
    r2, b2 = min(width, right + ext_w), min(height, bottom + ext_h)
    if r2 <= l2:
        l2, r2 = (r2 - 1, r2) if r2 >= 1 else (0, 1)
    if b2 <= t2:
        t2, b2 = (b2 - 1, b2) if b2 >= 1 else (0, 1)
    return l2, t2, r2, b2


def union_box(a: Box, b: Box) -> Box:
    """The smallest box holding both ``a`` and ``b``.

    Parameters
    ----------
    a : tuple of float
        A box (left, top, right, bottom).
    b : tuple of float
        Another box.

    Returns
    -------
    tuple of float
        Their union's bounding box.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval import union_box
    >>> union_box((0, 5, 10, 10), (3, 0, 8, 20))
    (0, 0, 10, 20)
    """
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def relation_pairs(scores: Sequence[float], top: int = TOP_PAIRS) -> list[tuple[int, int, float]]:
    """Pairs of detections ranked by the product of their confidences (the paper's rule).

    Parameters
    ----------
    scores : sequence of float
        The detections' confidences.
    top : int, default 10
        How many pairs to keep.

    Returns
    -------
    list of tuple of (int, int, float)
        ``(i, j, score_i * score_j)`` with ``i < j``, the ``top`` highest products first (ties in index
        order).

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval import relation_pairs
    >>> [(i, j, round(p, 3)) for i, j, p in relation_pairs([0.5, 0.9, 0.2], top=2)]
    [(0, 1, 0.45), (1, 2, 0.18)]
    """
    pairs = [(i, j, float(scores[i]) * float(scores[j])) for i in range(len(scores)) for j in range(i + 1, len(scores))]
    pairs.sort(key=lambda p: -p[2])
    return pairs[:max(0, int(top))]


#: The authors' code's confidence for its whole-image pseudo-box ("random_box").
PSEUDO_BOX_CONFIDENCE = 0.51
#: Relation candidates: ``code`` (the authors' ``get_merged_bounding_box``: the detections, repeated
#: when fewer than two, plus a whole-image pseudo-box of confidence 0.51, all pairs ranked by the
#: product of their confidences) or ``detections`` (pairs of detections only, as the paper describes).
RELATION_BOXES = ("code", "detections")


def code_relation_pairs(scores: Sequence[float], top: int = TOP_PAIRS) -> list[tuple[int | None, int | None, float]]:
    """The relation pairs of the authors' code over detections with confidences ``scores``.

    ``scores`` are sorted by confidence, highest first, as their detection files are. The box list is
    the detections; with fewer than two, the (up to) two most confident are appended again; then the
    whole-image pseudo-box (confidence :data:`PSEUDO_BOX_CONFIDENCE`); with no detection at all the
    pseudo-box stands in for them (their ``handle_no_detection``), giving three copies. Every pair
    ``a < b`` of that list is scored by the product of confidences, sorted highest first (stable), and
    the first ``top`` kept.

    Parameters
    ----------
    scores : sequence of float
        The detections' confidences, highest first.
    top : int, default 10
        How many pairs to keep.

    Returns
    -------
    list of tuple of (int or None, int or None, float)
        ``(i, j, product)`` with detection indices, or None for the pseudo-box.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval import code_relation_pairs
    >>> [(i, j, round(p, 3)) for i, j, p in code_relation_pairs([0.8])]
    [(0, 0, 0.64), (0, None, 0.408), (0, None, 0.408)]
    """
    items: list[tuple[int | None, float]] = [(i, float(s)) for i, s in enumerate(scores)]
    if not items:
        items = [(None, PSEUDO_BOX_CONFIDENCE)]
    if len(items) < 2:
        items += sorted(items, key=lambda it: -it[1])[:2]
    items.append((None, PSEUDO_BOX_CONFIDENCE))
    pairs = [(items[a][0], items[b][0], items[a][1] * items[b][1])
             for a in range(len(items)) for b in range(a + 1, len(items))]
    pairs.sort(key=lambda p: -p[2])
    return pairs[:max(0, int(top))]


def crop_resized(image, region: tuple[int, int, int, int]):
    """The ``region`` of a PIL image, resized (bicubic) to the image's own size, as the VQA model sees it.

    Parameters
    ----------
    image : PIL.Image.Image
        The image.
    region : tuple of int
        (left, top, right, bottom) in pixels.

    Returns
    -------
    PIL.Image.Image
        The crop, at the image's size.
    """
    from PIL import Image

    return image.crop(region).resize(image.size, Image.BICUBIC)


@dataclass(frozen=True)
class Candidate:
    """An image region a question is asked on: the whole image, a grown box or a grown union box.

    Attributes
    ----------
    kind : str
        ``image``, ``entity`` or ``relation``.
    region : tuple of int
        (left, top, right, bottom) in pixels.
    detections : tuple of int
        Indices into the image's detections.
    score : float or None
        The detection's confidence, or the pair's product (None for the whole image).
    """

    kind: str                       # "image", "entity" or "relation"
    region: tuple[int, int, int, int]
    detections: tuple[int, ...]     # indices into the image's detections
    score: float | None             # the detection's confidence, or the pair's product

    def record(self) -> dict:
        """The candidate as a JSON-ready dict.

        Returns
        -------
        dict
            ``kind``, ``box``, ``detections`` and ``score`` (rounded to 6 decimals).
        """
        return {"kind": self.kind, "box": list(self.region), "detections": list(self.detections),
                "score": None if self.score is None else round(self.score, 6)}


def candidates(dets: Sequence[Detection], size: tuple[int, int], *, grow: float = GROW, top_pairs: int = TOP_PAIRS,
               whole_image: str = "always", relation_boxes: str = "code") -> tuple[list[Candidate], list[int], list[int]]:
    """All candidates of an image and the indices of those for entity and for relation questions.

    Candidate 0 is the whole image. Entity questions: one candidate per detection, plus the whole
    image (``whole_image="always"``, the code) or the whole image only when nothing was detected
    (``"fallback"``). Relation questions, ``relation_boxes="code"``: the grown union boxes of the
    pairs of :func:`code_relation_pairs` (a union with the whole-image pseudo-box is the whole image,
    candidate 0), then the whole image, as the code appends it; ``"detections"``: the grown union
    boxes of the ``top_pairs`` best pairs of detections (:func:`relation_pairs`), or the single
    detection's box when there is one, plus the whole image.

    Parameters
    ----------
    dets : sequence of Detection
        The image's detections, most confident first.
    size : tuple of int
        The image's (width, height).
    grow : float, default 0.2
        How much boxes grow (:func:`grow_box`).
    top_pairs : int, default 10
        How many pairs become relation candidates.
    whole_image : str, default "always"
        ``always`` or ``fallback`` (see above).
    relation_boxes : str, default "code"
        ``code`` or ``detections`` (see above).

    Returns
    -------
    candidates : list of Candidate
        Every candidate; the first is the whole image.
    entity : list of int
        The indices of the candidates entity questions are asked on.
    relation : list of int
        The indices of the candidates relation questions are asked on.
    """
    width, height = size
    cands = [Candidate("image", (0, 0, width, height), (), None)]
    entity = []
    for i, d in enumerate(dets):
        entity.append(len(cands))
        cands.append(Candidate("entity", grow_box(d.box, size, grow), (i,), float(d.score)))
    if whole_image == "always" or not entity:
        entity = [0] + entity
    relation = []
    if relation_boxes == "code":
        whole = (0, 0, width, height)
        for i, j, s in code_relation_pairs([d.score for d in dets], top_pairs):
            a = whole if i is None else dets[i].box
            b = whole if j is None else dets[j].box
            relation.append(len(cands))
            # A union with the pseudo-box is the whole image: recorded as such (kind "image").
            kind = "relation" if i is not None and j is not None else "image"
            cands.append(Candidate(kind, grow_box(union_box(a, b), size, grow),
                                   tuple(k for k in (i, j) if k is not None), s))
        return cands, entity, relation + [0]
    if len(dets) == 1:
        relation.append(1)
    for i, j, s in relation_pairs([d.score for d in dets], top_pairs):
        relation.append(len(cands))
        cands.append(Candidate("relation", grow_box(union_box(dets[i].box, dets[j].box), size, grow), (i, j), s))
    return cands, entity, relation + [0]


# -- the answer score ----------------------------------------------------------------------------------

def lavis_question(question: str, max_words: int = 50) -> str:
    """LAVIS' ``BlipQuestionProcessor`` ("eval") applied to a question.

    Lower case, ``. ! " ( ) * # : ; ~`` removed, trailing spaces stripped, at most ``max_words``
    space-separated words.

    Parameters
    ----------
    question : str
        The question.
    max_words : int, default 50
        The most words kept.

    Returns
    -------
    str
        The processed question.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval import lavis_question
    >>> lavis_question("Is the cat (black)?  ")
    'is the cat black?'
    """
    q = re.sub(r'([.!"()*#:;~])', "", str(question).lower()).rstrip(" ")
    words = q.split(" ")
    return " ".join(words[:max_words]) if len(words) > max_words else q


def lavis_yes_score(first: Sequence[float], seq: Sequence[float]) -> float:
    """The code's "yes" score from LAVIS ranking of ``["yes", "no"]``.

    ``first``: each answer's first-token probability; ``seq``: each answer's ranking score. The code
    takes the candidates in order of ``first`` (top-k), picks the one with the best ranking score and
    returns the *top* first-token probability if that winner is "yes", else the *second*: so the
    score is P1(yes) whenever the two orders agree, and the other answer's first-token probability
    when they do not.

    Parameters
    ----------
    first : sequence of float
        The first-token probabilities of ``yes`` and ``no``, in that order.
    seq : sequence of float
        Their ranking scores.

    Returns
    -------
    float
        The code's yes score.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval import lavis_yes_score
    >>> lavis_yes_score([0.7, 0.2], [-1.0, -2.0]), lavis_yes_score([0.7, 0.2], [-3.0, -2.0])
    (0.7, 0.2)
    """
    first, seq = np.asarray(first, dtype=np.float64), np.asarray(seq, dtype=np.float64)
    order = np.argsort(-first, kind="stable")
    winner = int(order[int(np.argmax(seq[order]))])
    return float(first[order[0]] if winner == 0 else first[order[1]])


# -- aggregation -------------------------------------------------------------------------------------

def fine_score(entity: Sequence[float], relation: Sequence[float], weighting: str = "mean") -> float:
    """Fine-grained score from the per-question maxima.

    ``mean`` (the authors' code): the mean over all questions. ``eq4`` (the paper's Eq. 4):
    sum(entity) / 2 n_e + sum(relation) / 2 n_r, i.e. entity and relation questions weigh half each;
    with no question of one kind, the mean of the other kind. NaN for no questions at all.

    Parameters
    ----------
    entity : sequence of float
        The entity questions' best yes scores.
    relation : sequence of float
        The relation questions' best yes scores.
    weighting : str, default "mean"
        ``mean`` or ``eq4``.

    Returns
    -------
    float
        The fine-grained score.

    Examples
    --------
    >>> from ts2viz.metrics.families.fineeval import fine_score
    >>> fine_score([1.0, 1.0, 1.0], [0.0]), fine_score([1.0, 1.0, 1.0], [0.0], "eq4")
    (0.75, 0.5)
    """
    e, r = [float(v) for v in entity], [float(v) for v in relation]
    if not e and not r:
        return float("nan")
    if weighting == "mean" or not e or not r:
        return float(np.mean(e + r))
    return sum(e) / (2 * len(e)) + sum(r) / (2 * len(r))


def final_score(fine: float, coarse: float) -> float:
    """The final score, (fine + coarse) / 2 (the code's coefficients 1 and 1; the paper's Eq. 6).

    Parameters
    ----------
    fine : float
        The fine-grained score (:func:`fine_score`).
    coarse : float
        The coarse score (mean over questions asked on the whole image).

    Returns
    -------
    float
        Their mean.
    """
    return (fine + coarse) / 2


# -- the metric --------------------------------------------------------------------------------------

class FineEvalQuestions:
    """A prompt's decomposition from an LLM (replies cached on disk, results memoised per prompt).

    Parameters
    ----------
    llm : ChatLLM
        The decomposing LLM.
    use_cache : bool, default True
        Read and write the LLM reply cache.
    """

    def __init__(self, llm, use_cache: bool = True):
        self.llm = llm
        self.use_cache = use_cache
        self._memo: dict[str, Decomposition] = {}

    @property
    def config(self) -> dict:
        """The generator's config and the prompts' identity."""
        return {"generator": self.llm.config, "prompts": PROMPTS_ID}

    def get(self, prompt: str) -> Decomposition:
        """The decomposition of ``prompt`` (entities and questions).

        Parameters
        ----------
        prompt : str
            The text-to-image prompt.

        Returns
        -------
        Decomposition
            What :func:`.questions.parse_decomposition` reads from the LLM's reply.
        """
        if prompt not in self._memo:
            self._memo[prompt] = cached_reply(self.llm, DECOMPOSE_SYSTEM, f"Prompt: {prompt}", parse_decomposition,
                                              use_cache=self.use_cache)
        return self._memo[prompt]


class FineEval(Metric):
    """T2I-FineEval over a :class:`VQAModel`, a :class:`Detector` and an LLM decomposition.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    vqa : VQAModel
        The VQA model giving yes scores.
    detector : Detector
        The object detector.
    questions : FineEvalQuestions
        Gives each prompt's decomposition.
    grow, top_pairs, whole_image, weighting, batch_size, list_choices, relation_boxes, answer_score, lowercase
        As the family's card describes the options of the same names (:data:`CARD`).
    coarse : CoarseQuestions or None, optional
        The coarse-question rule (default: the code's).

    Raises
    ------
    InputError
        If ``answer_score=lavis_rank`` is asked of a model that cannot rank answers (not BLIP-VQA).
    """

    name = "fineeval"
    has_details = True

    def __init__(self, spec: Spec, vqa: VQAModel, detector: Detector, questions: FineEvalQuestions, *,
                 grow: float = GROW, top_pairs: int = TOP_PAIRS, whole_image: str = "always",
                 weighting: str = "mean", batch_size: int | None = None, list_choices: bool | None = None,
                 relation_boxes: str = "code", coarse: CoarseQuestions | None = None,
                 answer_score: str | None = None, lowercase: bool = True):
        self.vqa = vqa
        #: the questions lower-cased before they are asked and parsed by spaCy (the original's ``parse_output``)
        self.lowercase = bool(lowercase)
        self.detector = detector
        self.questions = questions
        self.grow = float(grow)
        self.top_pairs = int(top_pairs)
        self.whole_image = whole_image
        self.weighting = weighting
        self.relation_boxes = relation_boxes
        self.coarse = coarse or CoarseQuestions("code")
        ranks = hasattr(vqa, "rank_answers")
        self.answer_score = answer_score or ("lavis_rank" if ranks else "first_token")
        if self.answer_score == "lavis_rank" and not ranks:
            raise InputError(f"metric {spec.raw!r}: answer_score=lavis_rank needs a BLIP-VQA model; "
                             "use answer_score=first_token")
        # Chat VLMs are told to answer yes or no; BLIP-VQA and PaliGemma take the bare question.
        self.list_choices = bool(getattr(vqa, "chat", False)) if list_choices is None else bool(list_choices)
        config = {"family": "fineeval", **vqa.config, "vqa_dtype": str(vqa.dtype), **questions.config,
                  "detector": detector.config, "grow": self.grow, "grow_rule": "code", "top_pairs": self.top_pairs,
                  "whole_image": whole_image, "weighting": weighting, "list_choices": self.list_choices,
                  "relation_boxes": relation_boxes, **self.coarse.config, "answer_score": self.answer_score,
                  "lowercase_questions": self.lowercase,
                  "vqa_image_size": getattr(vqa, "image_size", None),
                  "score": "(fine + coarse) / 2"}
        super().__init__(spec, config, vqa.device, batch_size or 2)

    def check_prompts(self, prompts: Sequence[str]) -> None:
        """Decompose (or read from the cache) every prompt before any image is scored.

        Parameters
        ----------
        prompts : sequence of str
            The prompts to be scored.
        """
        for p in dict.fromkeys(prompts):
            self.questions.get(p)

    def ask(self, question: str) -> str:
        """The text put to the VQA model for a question.

        Parameters
        ----------
        question : str
            The question.

        Returns
        -------
        str
            LAVIS' processed question under ``answer_score=lavis_rank``; else the question, followed by
            "Answer yes or no." when the choices are listed.
        """
        if self.answer_score == "lavis_rank":
            return lavis_question(question)
        return f"{question} Answer yes or no." if self.list_choices else question

    def yes_scores(self, images: Sequence, questions: Sequence[str]) -> np.ndarray:
        """The yes score of each (crop, question) pair under :attr:`answer_score`.

        Parameters
        ----------
        images : sequence of PIL.Image.Image
            The crops.
        questions : sequence of str
            One question text per crop.

        Returns
        -------
        numpy.ndarray
            One yes score per pair (:func:`lavis_yes_score` or the VQA model's yes probability).
        """
        if not images:
            return np.zeros(0)
        if self.answer_score == "lavis_rank":
            ranked = self.vqa.rank_answers(images, questions, ["yes", "no"])
            return np.array([lavis_yes_score(r[0], r[1]) for r in ranked])
        return self.vqa.yes_probability(images, questions)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """T2I-FineEval's scores of a batch of images with their prompts.

        Each question is asked on each of its candidates (the best yes score is its fine score) and on the
        whole image (its coarse question; the coarse score).

        Parameters
        ----------
        items : sequence of PIL.Image.Image
            The images.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 score per image, :func:`final_score`; detections, candidates and per-question scores
            are in ``self.last_details``.
        """
        decs = [self.questions.get(p) for p in prompts]
        detections = self.detector.detect(items, [list(d.entities) for d in decs] if self.detector.open_vocab else None)
        pair_images, pair_questions = [], []
        index: dict[tuple[int, tuple[int, int, int, int], str], int] = {}  # (image, region, text) -> pair

        def pair(i: int, region: tuple[int, int, int, int], image, text: str) -> int:
            # A region equal to the whole image gives the same pixels as the image (PIL's resize of a
            # same-size image is a copy), so identical (image, region, question) pairs are asked once.
            key = (i, region, text)
            if key not in index:
                index[key] = len(pair_images)
                pair_images.append(image)
                pair_questions.append(text)
            return index[key]

        layouts = []
        for i, (im, dec, dets) in enumerate(zip(items, decs, detections)):
            cands, ent, rel = candidates(dets, im.size, grow=self.grow, top_pairs=self.top_pairs,
                                         whole_image=self.whole_image, relation_boxes=self.relation_boxes)
            whole = cands[0].region
            crops = {whole: im}
            per_q = []
            for k, (kind, text) in enumerate(dec.questions):
                if self.lowercase:   # parse_output: line.strip().lower() for every line of the LLM's reply
                    text = text.lower()
                use = ent if kind == "entity" else rel
                fine_text = self.ask(text)
                coarse_text = self.coarse(text)
                rows = []
                for c in use:
                    region = cands[c].region
                    if region not in crops:
                        crops[region] = crop_resized(im, region)
                    rows.append(pair(i, region, crops[region], fine_text))
                per_q.append((use, rows, coarse_text, pair(i, whole, im, self.ask(coarse_text))))
            layouts.append((cands, per_q))
        probs = self.yes_scores(pair_images, pair_questions)
        scores = np.full(len(items), np.nan)
        details = []
        for i, (dec, dets, (cands, per_q)) in enumerate(zip(decs, detections, layouts)):
            recs, fine_e, fine_r, coarse = [], [], [], []
            for (kind, text), (use, rows, coarse_text, c_row) in zip(dec.questions, per_q):
                if self.lowercase:   # the question as asked (see above)
                    text = text.lower()
                p = [float(probs[r]) for r in rows]
                best = int(np.argmax(p))
                c0 = float(probs[c_row])
                (fine_e if kind == "entity" else fine_r).append(p[best])
                coarse.append(c0)
                recs.append({"question": text, "kind": kind, "candidates": list(use), "probabilities": p,
                             "best": use[best], "fine": p[best], "coarse_question": coarse_text, "coarse": c0})
            fine = fine_score(fine_e, fine_r, self.weighting)
            coarse_s = float(np.mean(coarse)) if coarse else float("nan")
            scores[i] = final_score(fine, coarse_s)
            details.append({"image_size": list(items[i].size), "entities": list(dec.entities),
                            "detections": [d.record() for d in dets], "candidates": [c.record() for c in cands],
                            "questions": recs, "fine": fine, "coarse": coarse_s, "weighting": self.weighting})
        self.last_details = details
        return scores


def _number(spec: Spec, name: str, value, lo: float, hi: float, integer: bool = False):
    try:
        v = int(value) if integer else float(value)
        if integer and float(value) != v:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"metric {spec.raw!r}: {name} must be {'an integer' if integer else 'a number'}, "
                         f"not {value!r}") from None
    if not lo <= v <= hi:
        raise InputError(f"metric {spec.raw!r}: {name} must lie in [{lo}, {hi}], not {value!r}")
    return v


def build(spec: Spec, device: str | None = None, *, generator: str | None = None, generator_model: str | None = None,
          api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY", detector: str = DEFAULT_DETECTOR,
          confidence: float = CONFIDENCE, nms_iou: float = NMS_IOU, image_size: int | None = None,
          max_boxes: int = YOLO_MAX_DET, grow: float = GROW, top_pairs: int = TOP_PAIRS, whole_image: str = "always",
          weighting: str = "mean", batch_size: int | None = None, pair_batch_size: int | None = None,
          detector_batch_size: int | None = None, dtype: str | None = None, template: str | None = None,
          list_choices: bool | None = None, llm_cache: bool = True, relation_boxes: str = "code",
          coarse: str = "code", spacy_model: str = SPACY_MODEL, answer_score: str | None = None,
          vqa_image_size: int | None = None, lowercase: bool = True, **options) -> Metric:
    """The ``fineeval:`` metric of ``spec``: ``fineeval:VQA_MODEL?generator=URL|hf:MODEL&detector=MODEL&...``.

    Parameters
    ----------
    spec : Spec
        The parsed spec; its model is the VQA model.
    device : str or None, optional
        The torch device; None picks one.
    generator, generator_model, api_key, api_key_env, detector, confidence, nms_iou, image_size, max_boxes, grow, top_pairs, whole_image, weighting, batch_size, pair_batch_size, detector_batch_size, dtype, template, list_choices, llm_cache, relation_boxes, coarse, spacy_model, answer_score, vqa_image_size, lowercase
        The family's options; their meaning is on the family's card (:data:`CARD`).
    **options
        Any other option: refused.

    Returns
    -------
    Metric
        A :class:`FineEval`.

    Raises
    ------
    InputError
        For an unknown option, no ``generator``, a value out of range or not accepted, ``vqa_image_size``
        with a model other than BLIP-VQA, a missing spaCy pipeline, or a model that cannot be loaded.
    """
    if options:
        raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(sorted(options))}")
    if not generator:
        raise InputError(f"metric {spec.raw!r}: T2I-FineEval decomposes prompts with an LLM: give "
                         "?generator=URL&generator_model=NAME (OpenAI-compatible API) or ?generator=hf:MODEL")
    conf = _number(spec, "confidence", confidence, 0.0, 1.0)
    iou = _number(spec, "nms_iou", nms_iou, 0.0, 1.0)
    size = None if image_size in (None, "", 0) else _number(spec, "image_size", image_size, 16, 4096, True)
    boxes = _number(spec, "max_boxes", max_boxes, 0, 10000, True)
    if not isinstance(lowercase, bool):
        raise InputError(f"metric {spec.raw!r}: lowercase must be true or false, not {lowercase!r}")
    grow_v = _number(spec, "grow", grow, 0.0, 10.0)
    top = _number(spec, "top_pairs", top_pairs, 0, 1000, True)
    if whole_image not in WHOLE_IMAGE:
        raise InputError(f"metric {spec.raw!r}: whole_image must be one of {', '.join(WHOLE_IMAGE)}")
    if weighting not in WEIGHTINGS:
        raise InputError(f"metric {spec.raw!r}: weighting must be one of {', '.join(WEIGHTINGS)}")
    if relation_boxes not in RELATION_BOXES:
        raise InputError(f"metric {spec.raw!r}: relation_boxes must be one of {', '.join(RELATION_BOXES)}")
    if coarse not in COARSE_RULES:
        raise InputError(f"metric {spec.raw!r}: coarse must be one of {', '.join(COARSE_RULES)}")
    if answer_score not in (None, "", *ANSWER_SCORES):
        raise InputError(f"metric {spec.raw!r}: answer_score must be one of {', '.join(ANSWER_SCORES)}")
    coarse_q = CoarseQuestions(coarse, str(spacy_model))
    if coarse != "same":
        coarse_q.nlp  # fail before any model is loaded when spaCy or its pipeline is missing
    vqa_size = None if vqa_image_size is None else _number(spec, "vqa_image_size", vqa_image_size, 0, 4096, True)
    llm = load_llm(str(generator), model=generator_model, api_key=api_key, api_key_env=api_key_env, device=device)
    det = load_detector(str(detector), device, owner=spec.raw, threshold=conf, nms_iou=iou, image_size=size,
                        max_boxes=boxes, batch_size=detector_batch_size or 8)
    vqa = load_vqa_model(spec, device, dtype=dtype, batch_size=pair_batch_size, template=template)
    if hasattr(vqa, "image_size"):  # BLIP-VQA: LAVIS preprocessing at 480 px unless vqa_image_size=0
        vqa.image_size = LAVIS_IMAGE_SIZE if vqa_size is None else (vqa_size or None)
    elif vqa_size:
        raise InputError(f"metric {spec.raw!r}: vqa_image_size applies to BLIP-VQA models only")
    return FineEval(spec, vqa, det, FineEvalQuestions(llm, bool(llm_cache)), grow=grow_v, top_pairs=top,
                    whole_image=whole_image, weighting=weighting, batch_size=batch_size, list_choices=list_choices,
                    relation_boxes=relation_boxes, coarse=coarse_q, answer_score=answer_score or None,
                    lowercase=lowercase)


#: the options :func:`build` takes beyond its keyword parameters (none: ``**options`` only catches typos)
build.extra_options = ()


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('fineeval',
                'T2I-FineEval: max P(yes) over detector crops per entity/relation question, (fine+coarse)/2',
                build, CARD, example='fineeval:Salesforce/blip-vqa-capfilt-large?generator=https://api.openai.com/v1', group='questions', hub_model=True,
                display='T2I-FineEval', details='crops')
