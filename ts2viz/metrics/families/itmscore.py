"""ITMScore: BLIP-2's image–text matching probability, as t2v_metrics 3.0 computes it (``blip2-itm``).

The Q-Former reads its 32 learned queries together with the prompt (35 BERT word pieces), cross-attending
to the image (EVA ViT-g features); the matching head's two logits, averaged over the query positions, give
the score ``softmax(...)["match"]`` in [0, 1] (higher: the image matches the prompt). Preprocessing and
scoring follow t2v_metrics' ``BLIP2ITMScoreModel`` (see :mod:`ts2viz.metrics.backbones.blip2_retrieval`),
proved on a reference fixture (``tests/metrics/reference/test_vqascore_reference.py``).

Models: transformers' ``Blip2ForImageTextRetrieval`` checkpoints; t2v_metrics' names resolve to them
(``itmscore:blip2-itm`` -> ``Salesforce/blip2-itm-vit-g``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

#: t2v_metrics' ITM/ITC model names -> transformers checkpoints of the same LAVIS weights
MODEL_NAMES = {"blip2-itm": "Salesforce/blip2-itm-vit-g", "blip2-itm-coco": "Salesforce/blip2-itm-vit-g-coco"}
#: t2v_metrics' names with no transformers checkpoint of their weights
UNSUPPORTED = {"blip2-itm-vitL": "LAVIS' BLIP-2 with a CLIP ViT-L tower (pretrain_vitL) has no transformers "
                                 "checkpoint; convert LAVIS' weights to Blip2ForImageTextRetrieval"}
DEFAULT_BATCH = {"cpu": 16, "cuda": 128, "mps": 32}


class BLIP2Retrieval(Metric):
    """ITMScore or ITCScore of a :class:`~ts2viz.metrics.backbones.blip2_retrieval.Blip2Retrieval` model.

    Built by the families' ``build`` (:func:`retrieval_factory`). The
    config is the model's (checkpoint, dtype) with the family and the head (``score``) added.

    Parameters
    ----------
    spec : Spec
        The metric's parsed spec.
    model : Blip2Retrieval
        The loaded BLIP-2 Q-Former with its ITM and ITC heads.
    head : str
        ``itm`` (the matching probability) or ``itc`` (the contrastive cosine).
    batch_size : int or None, optional
        Images per model call; None: 16 on CPU, 128 on CUDA, 32 on MPS.
    """

    def __init__(self, spec: Spec, model, head: str, batch_size: int | None = None):
        self.name = spec.family
        self.head = head
        config = {"family": spec.family, **model.config, "score": head}
        dev = model.device.split(":")[0]
        super().__init__(spec, config, model.device, batch_size or DEFAULT_BATCH.get(dev, 16))
        self.model = model

    def prepare(self, image, file_name: str | None = None) -> np.ndarray:
        """One image as t2v_metrics prepares it for BLIP-2 (:meth:`.Blip2Retrieval.pixels`).

        Parameters
        ----------
        image : PIL.Image.Image
            The decoded image.
        file_name : str, optional
            Its file (unused).

        Returns
        -------
        numpy.ndarray
            float32 ``(3, s, s)``.
        """
        return self.model.pixels(image)

    def score_prepared(self, items: Sequence, prompts: Sequence[str]) -> np.ndarray:
        """The ITM probability or the ITC cosine of each prepared image with its prompt.

        Parameters
        ----------
        items : sequence of numpy.ndarray
            Images as :meth:`prepare` returned them.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            float64 scores: ITM in [0, 1], ITC in [-1, 1].
        """
        return (self.model.itm if self.head == "itm" else self.model.itc)(list(items), list(prompts))


def resolve_name(spec: Spec, names: dict, unavailable: dict) -> Spec:
    """``spec`` with a t2v_metrics model name replaced by its checkpoint (hub ids and folders unchanged).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    names : dict
        t2v_metrics' model names -> transformers checkpoints (e.g. :data:`MODEL_NAMES`).
    unavailable : dict
        t2v_metrics' model names with no transformers checkpoint -> why (e.g. :data:`UNSUPPORTED`).

    Returns
    -------
    Spec
        ``spec`` itself, or a copy whose ``model`` is the checkpoint.

    Raises
    ------
    InputError
        If ``spec.model`` is one of ``unavailable``.

    Examples
    --------
    >>> from ts2viz.metrics.common.spec import parse_spec
    >>> resolve_name(parse_spec("itmscore:blip2-itm"), MODEL_NAMES, UNSUPPORTED).model
    'Salesforce/blip2-itm-vit-g'
    >>> resolve_name(parse_spec("itmscore:some/folder"), MODEL_NAMES, UNSUPPORTED).model
    'some/folder'
    """
    if spec.model in unavailable:
        raise InputError(f"metric {spec.raw!r}: {unavailable[spec.model]}")
    if spec.model in names:
        from dataclasses import replace

        return replace(spec, model=names[spec.model])
    return spec


def retrieval_factory(module: str, head: str, names: dict, unavailable: dict):
    """The factory of a BLIP-2 retrieval head's family (``itmscore``, ``itcscore``).

    Parameters
    ----------
    module : str
        The family's module (``__name__``), which the factory is recorded in.
    head : {'itm', 'itc'}
        The head the metric scores with.
    names, unavailable : dict
        The family's t2v_metrics model names and the ones with no checkpoint (:func:`resolve_name`).

    Returns
    -------
    callable
        ``build(spec, device=None, *, batch_size=None, dtype=None)``.
    """
    def factory(spec: Spec, device: str | None = None, *, batch_size: int | None = None,
                dtype: str | None = None) -> Metric:
        """The family's metric of ``spec`` on ``device``: a :class:`BLIP2Retrieval` with the family's head.

        A t2v_metrics model name is resolved to its transformers checkpoint first (:func:`resolve_name`); the
        model is loaded by :func:`ts2viz.metrics.backbones.blip2_retrieval.load_blip2_retrieval`.

        Parameters
        ----------
        spec : Spec
            The parsed spec (``FAMILY:MODEL[?batch_size=N&dtype=float32|float16|bfloat16]``).
        device : str or None, optional
            The torch device; None picks one.
        batch_size, dtype
            The family's options; their meaning is on the family's card.

        Returns
        -------
        Metric
            The metric.
        """
        from ..backbones.blip2_retrieval import load_blip2_retrieval

        model = load_blip2_retrieval(resolve_name(spec, names, unavailable), device, dtype=dtype)
        return BLIP2Retrieval(spec, model, head, batch_size)

    factory.__module__ = module
    factory.__name__ = factory.__qualname__ = "build"
    return factory


#: the family's factory: BLIP-2's matching probability (in [0, 1]) with the ``itm`` head
build = retrieval_factory(__name__, "itm", MODEL_NAMES, UNSUPPORTED)


_TEST = "tests/metrics/reference/test_vqascore_reference.py::test_itm_and_itc_equal_t2v_metrics_per_image"


def blip2_card(head: str, *, summary: str, original: str, fixture: str, output_range: str, score: str,
               model_names: dict) -> Card:
    """The card of a BLIP-2 retrieval head's family (``itmscore``, ``itcscore``): one checkpoint, one record.

    What the two heads share (paper, citation, options, inputs, checkpoint, precision) is written here once;
    the arguments are what differs.

    Parameters
    ----------
    head : str
        ``"itm"`` or ``"itc"`` (the family is ``{head}score``, t2v_metrics' names ``blip2-{head}...``).
    summary, original, fixture, output_range : str
        The card's fields of those names.
    score : str
        The "score" fidelity row's description.
    model_names : dict
        t2v_metrics' names of the head -> hub ids.

    Returns
    -------
    Card
        The family's card.
    """
    return Card(
        summary=summary,
        paper=("J. Li, D. Li, S. Savarese, S. Hoi. BLIP-2: Bootstrapping Language-Image Pre-training with Frozen "
               "Image Encoders and Large Language Models. ICML 2023. https://arxiv.org/abs/2301.12597; scored as in "
               "Z. Lin et al., Evaluating Text-to-Visual Generation with Image-to-Text Generation, ECCV 2024 "
               "(t2v_metrics)."),
        citation="""@inproceedings{li2023blip2,
  title     = {{BLIP-2}: Bootstrapping Language-Image Pre-training with Frozen Image Encoders and Large Language Models},
  author    = {Li, Junnan and Li, Dongxu and Savarese, Silvio and Hoi, Steven},
  booktitle = {International Conference on Machine Learning (ICML)},
  year      = {2023}
}""",
        original=original,
        fixture=fixture,
        output_range=output_range,
        higher_is_better=True,
        precision="float16",
        options=(
            Option("batch_size", None, "Images per model call (default: 16 on CPU, 128 on a GPU). Speed only."),
            Option("dtype", None, "Compute dtype on GPU: `float32`, `float16` or `bfloat16` (default: float16, "
                   "t2v_metrics' autocast for LAVIS' BLIP-2); always float32 on CPU.",
                   ("float32", "float16", "bfloat16")),
        ),
        fidelity=(
            Fidelity("image preprocessing", "resized to the model's square size (224; 364 for COCO) with PIL "
                     "bicubic, /255, OpenAI CLIP's mean and std, no crop", "as the original", "", _TEST),
            Fidelity("text", "BERT word pieces (`[DEC]` added), padded to and truncated at 35 tokens",
                     "as the original", "", _TEST),
            Fidelity("score", score, "as the original", "", _TEST),
            Fidelity("checkpoint", "transformers' `Blip2ForImageTextRetrieval` (`Salesforce/blip2-itm-vit-g`): the "
                     "same weights as LAVIS' `blip2` / `pretrain`, converted key by key (the fixture's conversion "
                     "is checked)", "as the original", "", _TEST),
            Fidelity("model names", f"t2v_metrics' `blip2-{head}` and `blip2-{head}-coco` resolve to their "
                     f"transformers checkpoints; `blip2-{head}-vitL` (no transformers checkpoint) fails in one line",
                     "as the original", "",
                     "tests/metrics/test_vqascore_names.py::test_names_resolve_to_their_checkpoints"),
            Fidelity("precision", "float16 on a GPU (t2v_metrics: ViT weights in float16, float16 autocast), "
                     "float32 on CPU", "as the original", "dtype"),
            Fidelity("aggregation", "one score per image, no aggregation", "as the original", "", _TEST),
        ),
        limitations=("The fixture is a tiny random-weight BLIP-2 built with LAVIS' classes; the released weights "
                     "were not loaded here (no hub access).",),
        model_names=dict(model_names),
        description=f"""The Q-Former of BLIP-2 (`Salesforce/blip2-itm-vit-g`). The same checkpoint serves `itmscore:` and
`itcscore:`; t2v_metrics' names resolve to it (`{head}score:blip2-{head}`).

```python
from ts2viz import metrics
m = metrics.load("{head}score:blip2-{head}")
scores = m(images=["a.png"], prompts=["a red cat"])
```
""",
    )


CARD = blip2_card(
    "itm",
    summary=("BLIP-2's image-text matching probability of the image and the prompt, as t2v_metrics 3.0's "
             "BLIP2ITMScoreModel computes it (LAVIS' BLIP-2 `pretrain` Q-Former); proved per image against "
             "t2v_metrics' own code on a reference fixture."),
    original="linzhiqiu/t2v_metrics 3.0: `t2v_metrics/models/itmscore_models/blip2_itm_model.py` with its vendored "
             "LAVIS `Blip2Qformer`.",
    fixture=('`tests/fixtures/reference/vqascore/blip2-itm/`: PyPI `t2v-metrics` 3.0 '
             '(`BLIP2ITMScoreModel`) on a tiny BLIP-2 Q-Former. Image modes: not compared (a non-RGB '
             "image is read by ts2viz's `as_rgb`)."),
    output_range="[0, 1] (a probability)",
    score="softmax of the ITM head's two logits averaged over the 32 query positions, the match entry",
    model_names=MODEL_NAMES,
)


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('itmscore',
                "ITMScore (t2v_metrics): BLIP-2's image-text matching probability of the image and the prompt",
                build, CARD, example='itmscore:Salesforce/blip2-itm-vit-g', group='likelihood', hub_model=True,
                display='ITMScore')
