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

from ..common.base import Metric
from ..common.spec import Spec
from ..registry import Card, Fidelity, Option
from .itmscore import BLIP2Retrieval, resolve_name

#: t2v_metrics' ITC model names -> transformers checkpoints of the same LAVIS weights
MODEL_NAMES = {"blip2-itc": "Salesforce/blip2-itm-vit-g", "blip2-itc-coco": "Salesforce/blip2-itm-vit-g-coco"}
UNSUPPORTED = {"blip2-itc-vitL": "LAVIS' BLIP-2 with a CLIP ViT-L tower (pretrain_vitL) has no transformers "
                                 "checkpoint; convert LAVIS' weights to Blip2ForImageTextRetrieval"}


def build(spec: Spec, device: str | None = None, *, batch_size: int | None = None, dtype: str | None = None) -> Metric:
    """The ``itcscore:`` metric of ``spec`` on ``device``: BLIP-2's image–text contrastive score (a cosine, in [-1, 1]).

    A t2v_metrics model name (:data:`MODEL_NAMES`) is resolved to its transformers checkpoint first
    (:func:`ts2viz.metrics.families.itmscore.resolve_name`); the model is loaded by
    :func:`ts2viz.metrics.backbones.blip2_retrieval.load_blip2_retrieval`.

    Parameters
    ----------
    spec : Spec
        The parsed spec (``itcscore:MODEL[?batch_size=N&dtype=float32|float16|bfloat16]``, e.g.
        ``itcscore:blip2-itc``).
    device : str or None, optional
        The torch device; None picks one.
    batch_size, dtype
        The family's options; their meaning is on the family's card (:data:`CARD`).

    Returns
    -------
    Metric
        The metric (a :class:`ts2viz.metrics.families.itmscore.BLIP2Retrieval` scoring with the ``itc`` head).

    Raises
    ------
    InputError
        If the model name has no transformers checkpoint, the model cannot be loaded or an option's value
        is not accepted.
    """
    from ..backbones.blip2_retrieval import load_blip2_retrieval

    model = load_blip2_retrieval(resolve_name(spec, MODEL_NAMES, UNSUPPORTED), device, dtype=dtype)
    return BLIP2Retrieval(spec, model, "itc", batch_size)


_TEST = "tests/metrics/reference/test_vqascore_reference.py::test_itm_and_itc_equal_t2v_metrics_per_image"

CARD = Card(
    summary=("BLIP-2's image-text contrastive score of the image and "
             "the prompt, as t2v_metrics 3.0's BLIP2ITCScoreModel computes it (LAVIS' BLIP-2 `pretrain` Q-Former); proved per "
             "image against t2v_metrics' own code on a reference fixture."),
    paper=("J. Li, D. Li, S. Savarese, S. Hoi. BLIP-2: Bootstrapping Language-Image Pre-training with Frozen Image "
           "Encoders and Large Language Models. ICML 2023. https://arxiv.org/abs/2301.12597; scored as in Z. Lin et "
           "al., Evaluating Text-to-Visual Generation with Image-to-Text Generation, ECCV 2024 (t2v_metrics)."),
    citation="""@inproceedings{li2023blip2,
  title     = {{BLIP-2}: Bootstrapping Language-Image Pre-training with Frozen Image Encoders and Large Language Models},
  author    = {Li, Junnan and Li, Dongxu and Savarese, Silvio and Hoi, Steven},
  booktitle = {International Conference on Machine Learning (ICML)},
  year      = {2023}
}""",
    original="linzhiqiu/t2v_metrics 3.0: `t2v_metrics/models/clipscore_models/blip2_itc_model.py` with its vendored LAVIS `Blip2Qformer`.",
    output_range="[-1, 1] (a cosine)",
    higher_is_better=True,
    precision="float16",
    options=(
        Option("batch_size", None, "Images per model call (default: 16 on CPU, 128 on a GPU). Speed only."),
        Option("dtype", None, "Compute dtype on GPU: `float32`, `float16` or `bfloat16` (default: float16, "
               "t2v_metrics' autocast for LAVIS' BLIP-2); always float32 on CPU.", ("float32", "float16", "bfloat16")),
    ),
    fidelity=(
        Fidelity("image preprocessing", "resized to the model's square size (224; 364 for COCO) with PIL bicubic, "
                 "/255, OpenAI CLIP's mean and std, no crop", "as the original", "", _TEST),
        Fidelity("text", "BERT word pieces (`[DEC]` added), padded to and truncated at 35 tokens", "as the original",
                 "", _TEST),
        Fidelity("score", "the largest over the 32 queries of the cosine between the projected, L2-normalised query output and the projected [CLS] output of the prompt", "as the original", "", _TEST),
        Fidelity("checkpoint", "transformers' `Blip2ForImageTextRetrieval` (`Salesforce/blip2-itm-vit-g`): the same "
                 "weights as LAVIS' `blip2` / `pretrain`, converted key by key (the fixture's conversion is checked)",
                 "as the original", "", _TEST),
        Fidelity("model names", "t2v_metrics' `blip2-itc` and `blip2-itc-coco` resolve to their transformers "
                 "checkpoints; `blip2-itc-vitL` (no transformers checkpoint) fails in one line", "as the original",
                 "", "tests/metrics/test_vqascore_names.py::test_names_resolve_to_their_checkpoints"),
        Fidelity("precision", "float16 on a GPU (t2v_metrics: ViT weights in float16, float16 autocast), float32 on "
                 "CPU", "as the original", "dtype"),
        Fidelity("aggregation", "one score per image, no aggregation", "as the original", "", _TEST),
    ),
    limitations=("The fixture is a tiny random-weight BLIP-2 built with LAVIS' classes; the released weights were "
                 "not loaded here (no hub access).",),
    model_names=dict(MODEL_NAMES),
    description="""The Q-Former of BLIP-2 (`Salesforce/blip2-itm-vit-g`). The same checkpoint serves `itmscore:` and
`itcscore:`; t2v_metrics' names resolve to it (`itcscore:blip2-itc`).

```python
from ts2viz import metrics
m = metrics.load("itcscore:blip2-itc")
scores = m(images=["a.png"], prompts=["a red cat"])
```
""",
)
