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

from ..family import Family
from .itmscore import blip2_card, retrieval_factory

#: t2v_metrics' ITC model names -> transformers checkpoints of the same LAVIS weights
MODEL_NAMES = {"blip2-itc": "Salesforce/blip2-itm-vit-g", "blip2-itc-coco": "Salesforce/blip2-itm-vit-g-coco"}
UNSUPPORTED = {"blip2-itc-vitL": "LAVIS' BLIP-2 with a CLIP ViT-L tower (pretrain_vitL) has no transformers "
                                 "checkpoint; convert LAVIS' weights to Blip2ForImageTextRetrieval"}


#: the family's factory: BLIP-2's contrastive score (a cosine, in [-1, 1]) with the ``itc`` head
build = retrieval_factory(__name__, "itc", MODEL_NAMES, UNSUPPORTED)


CARD = blip2_card(
    "itc",
    summary=("BLIP-2's image-text contrastive score of the image and the prompt, as t2v_metrics 3.0's "
             "BLIP2ITCScoreModel computes it (LAVIS' BLIP-2 `pretrain` Q-Former); proved per image against "
             "t2v_metrics' own code on a reference fixture."),
    original="linzhiqiu/t2v_metrics 3.0: `t2v_metrics/models/clipscore_models/blip2_itc_model.py` with its vendored "
             "LAVIS `Blip2Qformer`.",
    fixture=('`tests/fixtures/reference/vqascore/blip2-itc/`: PyPI `t2v-metrics` 3.0 '
             '(`BLIP2ITCScoreModel`) on a tiny BLIP-2 Q-Former. Image modes: not compared (a non-RGB '
             "image is read by ts2viz's `as_rgb`)."),
    output_range="[-1, 1] (a cosine)",
    score="the largest over the 32 queries of the cosine between the projected, L2-normalised query output and the "
          "projected [CLS] output of the prompt",
    model_names=MODEL_NAMES,
)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('itcscore',
                "ITCScore (t2v_metrics): BLIP-2's contrastive score, the largest query-prompt cosine",
                build, CARD, example='itcscore:Salesforce/blip2-itm-vit-g', group='likelihood', hub_model=True,
                display='ITCScore')
