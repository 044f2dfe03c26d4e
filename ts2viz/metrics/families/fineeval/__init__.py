"""T2I-FineEval (Hosseini et al.): max P(yes) over detector crops per entity / relation question.

For a prompt and an image, as the authors' code (hadi-hosseini/T2I-FineEval) computes it:

1. an LLM decomposes the prompt into entity names and tagged yes/no questions (:mod:`.questions`,
   ts2viz's own two-shot prompt; replies cached on disk, :mod:`ts2viz.metrics.common.llmcache`);
2. a detector proposes boxes (:mod:`ts2viz.metrics.backbones.detect`; closed-set RT-DETR by default, like the original's COCO
   YOLOv9-e, or open-vocabulary queried with the entity names). Boxes are not matched to entity names:
   every box is tried for every entity question;
3. candidates (:func:`.regions.candidates`): each box rounded to pixels and grown by ``int(0.2 * width)`` /
   ``int(0.2 * height)`` per side, clipped, cropped and resized to the image size (:func:`.regions.grow_box`,
   :func:`.regions.crop_resized`), plus the whole image; relation candidates are the grown union boxes of the
   10 best pairs, ranked by the product of confidences, of the detections *and a whole-image
   pseudo-box of confidence 0.51* (:func:`.regions.code_relation_pairs`), plus the whole image;
4. a question's fine score is the max over its candidates of the yes score from BLIP-VQA run as LAVIS'
   ``blip_vqa`` (vqav2): 480 px input, LAVIS' question processing, ranking of ["yes", "no"]
   (:func:`.scoring.lavis_yes_score`); its coarse score the yes score of its *coarse question* on the whole
   image: the question with every adjective but a colour removed and determiner-verb-noun reduced to
   determiner-noun, with spaCy's ``en_core_web_sm`` (:class:`.questions.CoarseQuestions`);
5. fine = mean over questions, coarse = mean over questions, score = (fine + coarse) / 2.

The paper's variants and ts2viz's earlier choices are options (the fidelity rows of :data:`.card.CARD`):
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

from ...family import Family
from .card import CARD
from .metric import build

#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('fineeval',
                'T2I-FineEval: max P(yes) over detector crops per entity/relation question, (fine+coarse)/2',
                build, CARD, example='fineeval:Salesforce/blip-vqa-capfilt-large?generator=https://api.openai.com/v1', group='questions', hub_model=True,
                display='T2I-FineEval', details='crops')
