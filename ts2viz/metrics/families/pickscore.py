"""PickScore (Kirstain et al., 2023): a CLIP-H model fine-tuned on Pick-a-Pic human preferences.

The score of an image is what the authors' code computes (the PickScore model card's snippet):
``logit_scale.exp() * cos(image embedding, prompt embedding)``, the model's own learnt temperature
(about 100) times the cosine. t2v_metrics 3.0 reports the plain cosine instead; ``?score=cosine`` gives
that. Both order images the same way.

The weights (``yuvalkirstain/PickScore_v1``) come without a processor: the authors take the processor
(image preprocessing and tokenizer) from ``laion/CLIP-ViT-H-14-laion2B-s32B-b79K``, and so does ts2viz
(option ``processor``: a hub id or a local copy of that folder). Images are preprocessed by the PIL
backend of transformers' CLIP image processor, as the authors' transformers 4 did; prompts are truncated
to 77 tokens, as in the snippet (``truncation=True, max_length=77``).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Sequence

import numpy as np

from ...errors import InputError
from ...hub import model_hub_id
from ..common.base import Metric, stacked_or
from ..common.device import dtype_name, resolve_device, resolve_dtype
from ..common.image_mode import DEFAULT as IMAGE_MODE
from ..common.image_mode import option as image_mode_option
from ..common.image_mode import reading as image_reading
from ..common.pretrained import check_model_id, hf_load, is_local_model, model_identity
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

#: where the authors take the processor from
PROCESSOR = "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
SCORES = ("authors", "cosine")
MAX_LENGTH = 77
DEFAULT_BATCH = {"cpu": 16, "cuda": 128, "mps": 32}
#: how the snippet's CLIP processor reads a non-RGB image: ``convert_to_rgb`` of the transformers of its time
#: (4.27 to 4.49) is Pillow's ``convert("RGB")``, before the resize; transformers 5 composites transparency
#: onto white instead, so ts2viz converts before the processor sees the image
ORIGINAL_READING = "rgb"
_M = "tests/metrics/reference/test_image_modes_reference.py::"
_T = "tests/metrics/reference/test_pickscore_reference.py::"

CARD = Card(
    summary=("PickScore: a CLIP-H (ViT-H/14) model fine-tuned on Pick-a-Pic's human preferences. The score of an "
             "image is what the authors' code computes, the model's logit for the prompt: "
             "`logit_scale.exp() * cos(image, prompt)`; `?score=cosine` gives t2v_metrics 3.0's plain cosine."),
    paper=("Y. Kirstain, A. Polyak, U. Singer, S. Matiana, J. Penna, O. Levy. Pick-a-Pic: An Open Dataset of User "
           "Preferences for Text-to-Image Generation. NeurIPS 2023. https://arxiv.org/abs/2305.01569"),
    citation="""@inproceedings{kirstain2023pickapic,
  title     = {Pick-a-Pic: An Open Dataset of User Preferences for Text-to-Image Generation},
  author    = {Kirstain, Yuval and Polyak, Adam and Singer, Uriel and Matiana, Shahbuland and Penna, Joe
               and Levy, Omer},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  year      = {2023}
}""",
    original=("yuvalkirstain/PickScore: the scoring snippet of its README and of the `yuvalkirstain/PickScore_v1` "
              "model card (`calc_probs`'s `scores`); for `score=cosine`, t2v_metrics 3.0 "
              "`t2v_metrics/models/clipscore_models/pickscore_model.py`."),
    fixture=('`tests/fixtures/reference/pickscore/`: the PickScore model card snippet (`calc_probs`) '
             'on transformers 4.49.0 and PyPI `t2v-metrics` 3.0 (`PickScoreModel`), on a tiny CLIP in'
             ' the released layout. Image modes (L, LA, RGBA, P, I;16, CMYK, an EXIF-rotated JPEG): '
             'compared, `modes/` (the option `image_mode`).'),
    output_range=("authors: the learnt logit scale (about 100) times a cosine, in [-100, 100] (real image-prompt "
                  "pairs: about 15-25); cosine: [-1, 1]"),
    higher_is_better=True,
    options=(
        Option("processor", PROCESSOR,
               "Where the image processor and tokenizer come from: the authors take them from this repository "
               "(PickScore_v1 has none). A hub id or a local copy of that folder; offline without it, loading "
               "fails with a one-line error that names this option."),
        Option("score", "authors",
               "`authors`: `logit_scale.exp() * cosine`, the authors' snippet; `cosine`: the plain cosine, what "
               "t2v_metrics 3.0 reports for `pickscore-v1`. Both order a prompt's images the same way.",
               SCORES),
        Option("batch_size", None, "Images per model call (default 16 on the CPU, 128 on CUDA; halved on GPU "
               "out-of-memory)."),
        Option("dtype", None, "The weights' precision: `float32` (default on any device, as the authors' snippet, "
               "which sets none), `float16` or `bfloat16`.", ("float32", "float16", "bfloat16")),
        image_mode_option("Pillow's `convert(\"RGB\")` before the processor, as the CLIP processor of the "
                          "snippet's transformers (4.27 to 4.49) converts (transformers 5 would composite "
                          "transparency onto white instead)."),
    ),
    fidelity=(
        Fidelity("score", "`logit_scale.exp() * cos`, both embeddings L2-normalised (the snippet's `scores`, before "
                 "its softmax over a prompt's images)", "as the original", "score",
                 f"{_T}test_authors_score_is_the_model_cards_logit_scale_times_cosine"),
        Fidelity("t2v_metrics' score", "the plain cosine with `score=cosine`", "documented difference", "score",
                 f"{_T}test_cosine_score_is_t2v_metrics_pickscore",
                 original="t2v_metrics 3.0 reports the cosine; the authors' snippet the scaled logit"),
        Fidelity("image preprocessing", "laion's CLIP image processor on transformers' PIL backend (shorter side "
                 "224, bicubic; centre crop 224; OpenAI mean and std), as the authors' transformers 4 computed it",
                 "as the original", "processor",
                 f"{_T}test_authors_score_is_the_model_cards_logit_scale_times_cosine"),
        Fidelity("prompt", "laion's CLIP tokenizer, truncated to 77 tokens; each prompt encoded on its own (and "
                 "memoised)", "as the original", "processor",
                 f"{_T}test_authors_score_is_the_model_cards_logit_scale_times_cosine"),
        Fidelity("batching", "images in batches of `batch_size` (the snippet scores one prompt's images at once): "
                 "the same numbers in any order and batch size", "as the original", "batch_size",
                 f"{_T}test_prompt_order_and_batching_do_not_change_scores"),
        Fidelity("precision", "float32, as the snippet (GPU too)", "as the original", "dtype"),
        Fidelity("images of other modes", "`image_mode=original` (default): Pillow's `convert(\"RGB\")` before the "
                 "processor, as the snippet's processor on transformers 4.49 (`convert_to_rgb`): `L`, `LA`, `RGBA`, "
                 "`P`, `CMYK` and `I;16` (clipped at 255) score as the original; transformers 5's own "
                 "`convert_to_rgb` would composite transparency onto white, so ts2viz converts before its "
                 "processor. `image_mode=ts2viz`: `I;16` scaled to 8 bits instead (on the fixture's tiny model "
                 "-4.96 against the snippet's 10.13); every other mode the same. No EXIF rotation in either, as "
                 "the original.", "as the original", "image_mode", f"{_M}test_default_image_mode_scores_every_mode_as_the_original, {_M}test_image_mode_ts2viz_scores_the_copy_ts2viz_reads, {_M}test_the_modes_that_differ_are_the_ones_the_card_names"),
        Fidelity("processor from another repository", "`processor=` names it; offline without it a one-line error "
                 "names the option", "as the original", "processor",
                 f"{_T}test_processor_from_another_repository_offline_says_which_option"),
    ),
    limitations=(
        "A preference score, not a faithfulness score: Pick-a-Pic's users chose the image they liked, so "
        "aesthetics weigh with prompt alignment.",
        "Prompts longer than 77 CLIP tokens are truncated.",
        "The authors compare the images of one prompt (a softmax over them); the scores of different prompts are "
        "not calibrated against each other.",
        "Trained on Stable Diffusion-era images and web users' prompts.",
        "No real checkpoint was loaded on the build machine (no hub access): the released layout was rebuilt "
        "with random weights, and the scores agree with the originals' code on it to 1e-5 relative.",
    ),
    model_names={"pickscore-v1": "yuvalkirstain/PickScore_v1"},
    precision="float32",
    description="""`pickscore:pickscore-v1` is `yuvalkirstain/PickScore_v1` (t2v_metrics' name); a hub id or a local
folder holding a `CLIPModel` (`config.json` and weights) works too. The processor comes from
`laion/CLIP-ViT-H-14-laion2B-s32B-b79K`, as in the authors' code, or from `?processor=` (a local copy).

```python
from ts2viz import metrics
ps = metrics.load("pickscore:pickscore-v1", device="cuda")
scores = ps(images=["a.png", "b.png"], prompts=["a red cat", "a red cat"])
cos = metrics.load("pickscore:pickscore-v1?score=cosine")            # t2v_metrics' number
```
""",
)


def build(spec: Spec, device: str | None = None, *, processor: str = PROCESSOR, score: str = "authors",
          batch_size: int | None = None, dtype: str | None = None, image_mode: str = IMAGE_MODE) -> Metric:
    """Build ``pickscore:MODEL[?processor=ID_OR_FOLDER&score=authors|cosine&batch_size=N&dtype=float32&image_mode=original|ts2viz]``.

    Parameters
    ----------
    spec : Spec
        The parsed spec; MODEL is ``pickscore-v1``, a hub id or a local folder holding a ``CLIPModel``
        (``config.json`` and weights).
    device : str or None, optional
        ``cuda``, ``cpu``, ``mps`` or None (the best available).
    processor : str, optional
        Where the image processor and tokenizer come from (hub id or folder).
    score : str, optional
        ``authors`` (``logit_scale.exp() * cosine``) or ``cosine``.
    batch_size : int or None, optional
        Images per model call (None: 16 on the CPU, 128 on CUDA).
    dtype : str or None, optional
        The weights' dtype (None: the card's float32).
    image_mode : str, default "original"
        How a non-RGB image is read (:mod:`ts2viz.metrics.common.image_mode`): ``original`` as the snippet's CLIP processor did (Pillow's ``convert("RGB")`` first),
        ``ts2viz`` by :func:`ts2viz.imaging.as_rgb`.

    Returns
    -------
    PickScore
        The metric; ``metric(images, prompts)`` gives one float64 score per image (NaN for an unreadable
        image).

    Raises
    ------
    InputError
        An unknown score, a model that is not a CLIP model, or a processor or model that cannot be had
        (one line; for the processor it names the ``processor`` option).
    """
    return PickScore(spec, device, processor=processor, score=score, batch_size=batch_size, dtype=dtype,
                     image_mode=image_mode)


class PickScore(Metric):
    """PickScore on transformers' ``CLIPModel`` with the processor of another repository (see :func:`build`).

    Prompt embeddings are memoised per prompt; images are preprocessed on the CPU by :meth:`prepare`.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    processor, score, batch_size, dtype, image_mode
        As :func:`build`'s.

    Raises
    ------
    InputError
        An unknown score, a model that is not a CLIP model, or a processor or model that cannot be had.
    """

    name = "pickscore"
    #: the engine may hand score_prepared stacked batches (:class:`~ts2viz.metrics.common.base.PreparedBatch`)
    stacks_prepared = True

    def __init__(self, spec: Spec, device: str | None = None, *, processor: str = PROCESSOR,
                 score: str = "authors", batch_size: int | None = None, dtype: str | None = None,
                 image_mode: str = IMAGE_MODE):
        from transformers import AutoImageProcessor, AutoTokenizer, CLIPModel

        reads = image_reading(image_mode, ORIGINAL_READING, spec.raw)
        if score not in SCORES:
            raise InputError(f"metric {spec.raw!r}: score={score!r} is not one of {', '.join(SCORES)}")
        dev = resolve_device(device)
        dt = resolve_dtype(dev, dtype)
        model_id = model_hub_id(spec.model, CARD.model_names) or check_model_id(spec)
        kw = {"revision": spec.revision} if spec.revision else {}
        proc = str(processor)
        try:  # the processor first: its failure (offline, another repository) costs no model load
            self.image_processor = hf_load("image processor", AutoImageProcessor.from_pretrained, proc, spec,
                                           backend="pil")
            self.tokenizer = hf_load("tokenizer", AutoTokenizer.from_pretrained, proc, spec)
        except InputError as e:
            raise InputError(f"metric {spec.raw!r}: PickScore's processor comes from another repository, "
                             f"{proc!r} (option processor=, a hub id or a local copy of that folder), and it "
                             f"cannot be loaded: {str(e).split(': ', 2)[-1]}") from None
        model = hf_load("model", CLIPModel.from_pretrained, model_id, spec, dtype=dt, **kw)
        if not hasattr(model, "logit_scale"):
            raise InputError(f"metric {spec.raw!r}: {model_id!r} is not a CLIP model")
        self.model = model.to(dev).eval()
        config = {"family": "pickscore", **model_identity(model_id, spec.revision, model.config),
                  "processor": ({"model": proc, **model_identity(proc, None)}
                                if is_local_model(proc) else {"model": proc}),
                  "image_backend": "pil", "max_length": MAX_LENGTH, "score": score, "dtype": dtype_name(dt),
                  "image_mode": image_mode}
        super().__init__(spec, config, dev, batch_size or DEFAULT_BATCH.get(dev.split(":")[0], 16))
        self.image_reading = reads
        self.score_kind = score
        self.dtype = dt
        self._text_memo: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_model(cls, model, tokenizer, image_processor, *, spec: str = "pickscore:in-memory",
                   score: str = "authors", batch_size: int | None = None) -> "PickScore":
        """The metric of an already-built ``CLIPModel`` with its tokenizer and image processor.

        For example random weights built on the GPU by ``benchmarks/bench_gpu.py``: no download, no
        checkpoint on disk; it computes on the model's device in its dtype.

        Parameters
        ----------
        model : transformers.CLIPModel
            The PickScore model.
        tokenizer : transformers.PreTrainedTokenizerBase
            Its tokenizer.
        image_processor : transformers.CLIPImageProcessor
            Its image processor.
        spec : str
            The spec the metric records.
        score : str
            The score (as the family's ``score`` option).
        batch_size : int, optional
            Images per forward pass.

        Returns
        -------
        PickScore
            The metric.

        Raises
        ------
        InputError
            If ``score`` is not one of the family's scores.
        """
        from ..common.spec import parse_spec

        if score not in SCORES:
            raise InputError(f"score={score!r} is not one of {', '.join(SCORES)}")
        sp = parse_spec(spec) if isinstance(spec, str) else spec
        p = next(model.parameters())
        self = cls.__new__(cls)
        self.image_processor, self.tokenizer, self.model = image_processor, tokenizer, model.eval()
        dev = str(p.device)
        config = {"family": "pickscore", "model": sp.model, "max_length": MAX_LENGTH, "score": score,
                  "dtype": dtype_name(p.dtype), "image_mode": IMAGE_MODE}
        Metric.__init__(self, sp, config, dev, batch_size or DEFAULT_BATCH.get(dev.split(":")[0], 16))
        self.image_reading = ORIGINAL_READING
        self.score_kind, self.dtype = score, p.dtype
        self._text_memo = OrderedDict()
        self._lock = threading.Lock()
        return self

    def prepare(self, image, file_name: str | None = None):
        """One image as the CLIP image processor prepares it (:func:`~ts2viz.metrics.common.pixels.processor_pixels`).

        The processor's own tensor, computed by a faster path equal to the processor's full call.

        Parameters
        ----------
        image : PIL.Image.Image
            The decoded image.
        file_name : str or None, optional
            Its file (unused).

        Returns
        -------
        torch.Tensor
            The processor's pixel values, ``(3, 224, 224)`` for laion's CLIP processor.
        """
        from ..common.pixels import processor_pixels

        return processor_pixels(self.image_processor, image)   # the processor's own tensor, faster (exact)

    def _text(self, prompts: Sequence[str]):
        """Normalised embeddings of ``prompts`` (each prompt encoded on its own, as the snippet does)."""
        import torch

        out = []
        for p in prompts:
            with self._lock:
                emb = self._text_memo.get(p)
            if emb is None:
                enc = self.tokenizer([p], padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
                enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
                emb = _features(self.model.get_text_features(**enc))[0].float()
                emb = emb / torch.norm(emb, dim=-1, keepdim=True)
                with self._lock:
                    self._text_memo[p] = emb
                    while len(self._text_memo) > 8192:
                        self._text_memo.popitem(last=False)
            out.append(emb)
        return torch.stack(out)

    def score_prepared(self, items, prompts) -> np.ndarray:
        """PickScore of each prepared image with its prompt, as the authors' snippet computes it.

        The cosine of the L2-normalised image and prompt embeddings (each prompt encoded on its own,
        truncated at 77 tokens), times ``logit_scale.exp()`` for ``score=authors``; the raw cosine (t2v_metrics'
        number) for ``score=cosine``. The authors' softmax over several images of a prompt is not applied:
        one score per image.

        Parameters
        ----------
        items : sequence of torch.Tensor or PreparedBatch
            Images as :meth:`prepare` returned them.
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            float64 scores, one per image.
        """
        import torch

        with torch.inference_mode():
            pix = stacked_or(items, lambda xs: torch.stack(list(xs))).to(self.device, self.model.dtype)
            img = _features(self.model.get_image_features(pixel_values=pix)).float()
            img = img / torch.norm(img, dim=-1, keepdim=True)
            txt = self._text(list(prompts))
            cos = (img * txt).sum(-1)
            if self.score_kind == "authors":
                cos = self.model.logit_scale.float().exp() * cos
        return cos.double().cpu().numpy()


def _features(out):
    """The projected embedding: transformers 5 returns a model output whose ``pooler_output`` it is."""
    return out.pooler_output if hasattr(out, "pooler_output") else out


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('pickscore',
                "PickScore: CLIP-H fine-tuned on Pick-a-Pic preferences; logit_scale.exp() * cosine as its authors' "
                "code (?score=cosine: t2v_metrics' number)",
                build, CARD, example='pickscore:pickscore-v1', group='preference', hub_model=True, display='PickScore')
