"""Embedding metrics: CLIPScore (transformers or open_clip), ALIGNScore and SigLIP.

The score of an image comes from the cosine similarity of its embedding and its prompt's embedding, in
the form a named *variant* (the ``variant=`` option; a family passes the variants it offers, the first
two, :data:`BASE_VARIANTS`, by default) says:

``ts2`` (the default of every family)
    TS2's own code (michaelsaxon/T2IScoreScore ``CLIPScorer`` / ``ALIGNScore`` / ``SiGLIPScore``): the
    model's ``logits_per_image`` for the prompt as is: ``exp(logit_scale) * cos`` for CLIP (100 * cos for
    OpenAI's checkpoints), ``cos / temperature`` for ALIGN, ``exp(logit_scale) * cos + logit_bias`` for
    SigLIP (its prompt unpadded, as TS2's ``padding=True`` on one prompt leaves it). No clamp. TS2's
    published CLIPScore / ALIGNScore columns are these numbers min-max scaled over the 2,840 images and
    rounded to 2 decimals (an affine map per dataset: no ordering changes).
``cosine``
    the raw cosine in [-1, 1] (ts2viz's score before the variants were named; SigLIP's prompt padded to
    its 64 training tokens).
``hessel`` (CLIPScore only)
    J. Hessel et al.'s CLIP-S (jmhessel/clipscore ``get_clip_score``): ``2.5 * max(cos, 0)`` for the text
    ``"A photo depicts " + prompt``, images resized (bicubic, shorter side) and centre-cropped by
    torchvision on the PIL image as their ``CLIPImageDataset`` does.
``torchmetrics`` (CLIPScore only)
    torchmetrics' ``clip_score``: ``100 * max(cos, 0)`` for the prompt as is; a prompt over the text
    encoder's length is cut to it without an end token, as torchmetrics cuts it.

``preprocess=original`` (default) prepares images as each variant's original did: transformers' PIL image
processor (what TS2 and torchmetrics ran on transformers 4.x; ``backend="pil"`` on transformers 5) or
Hessel's torchvision pipeline; ``preprocess=fast`` uses the processor's torchvision backend on tensors
(about 2x faster preprocessing, numbers that differ from the originals' in the 4th digit).

Prompts longer than the text encoder's context are truncated with a warning (TS2's code has no
truncation and fails on them). Prompt embeddings are computed once per distinct set of prompts in a batch
and memoised, since many images share one prompt (every SEG does).
"""
from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.clip_prep import hessel_transform
from ..common.device import autocast, resolve_device, resolve_dtype
from ..common.hub import check_model_id, file_fingerprint, hf_load, model_identity
from ..common.spec import Spec
from ..family import Option

DEFAULT_BATCH = {"cpu": 32, "cuda": 256, "mps": 64}
#: the options of clipscore:, alignscore: and siglip: (their cards list them)
EMBEDDING_OPTIONS = (
    Option("batch_size", None, "Images per model call (default 32 on CPU, 256 on CUDA, 64 on MPS; halved on GPU "
           "out-of-memory). Speed only."),
    Option("dtype", None, "Compute dtype on GPU: `float32`, `float16` or `bfloat16` (default: the card's "
           "precision, else bfloat16 where the GPU supports it, else float16; always float32 on CPU).",
           ("float32", "float16", "bfloat16")),
)


def embedding_options(variants: tuple = ()) -> tuple:
    """The options of an embedding family (CLIPScore, ALIGNScore, SigLIP) as its card lists them.

    Parameters
    ----------
    variants : tuple of str, optional
        The score variants the family offers, the default first (empty: :data:`BASE_VARIANTS`); the
        ``variant`` option lists them.

    Returns
    -------
    tuple of Option
        ``batch_size``, ``dtype``, ``variant`` and ``preprocess``.

    Examples
    --------
    >>> [o.name for o in embedding_options()]
    ['batch_size', 'dtype', 'variant', 'preprocess']
    >>> embedding_options(("ts2", "cosine", "hessel"))[2].values
    ('ts2', 'cosine', 'hessel')
    """
    variants = variants or BASE_VARIANTS
    docs = {"ts2": "`ts2` (default: TS2's own code, the model's `logits_per_image` for the prompt as is)",
            "cosine": "`cosine` (the raw cosine in [-1, 1])",
            "hessel": "`hessel` (J. Hessel et al.'s CLIP-S: 2.5 · max(cos, 0) of \"A photo depicts \" + prompt, "
                      "their torchvision preprocessing, float16 on GPU)",
            "torchmetrics": "`torchmetrics` (torchmetrics' `clip_score`: 100 · max(cos, 0), over-long prompts "
                            "cut without an end token)"}
    return EMBEDDING_OPTIONS + (
        Option("variant", "ts2", "The score: " + ", ".join(docs[v] for v in variants) + ".", variants),
        Option("preprocess", "original", "`original` (the originals' image preparation: transformers' PIL "
               "processor, or Hessel's torchvision pipeline) or `fast` (the processor's torchvision backend: faster, "
               "numbers differ from the originals' in the 4th digit). transformers models only.", PREPROCESS),
    )

#: the score variants every embedding family offers (module docstring); the first is the default
BASE_VARIANTS = ("ts2", "cosine")
#: every variant this module computes (a family offers some of them)
ALL_VARIANTS = ("ts2", "cosine", "hessel", "torchmetrics")
DEFAULT_VARIANT = "ts2"
#: J. Hessel et al.'s text prefix (jmhessel/clipscore ``CLIPCapDataset``) and weight ``w``
HESSEL_PREFIX = "A photo depicts "
HESSEL_WEIGHT = 2.5
#: torchmetrics' scale (``100 * cos``, then ``max(., 0)``)
TORCHMETRICS_SCALE = 100.0
#: how images are prepared: as the variant's original did, or the processor's torchvision backend
PREPROCESS = ("original", "fast")
#: the compute dtype on GPU of each variant's original: Hessel's script runs CLIP in float16 on a GPU
#: (``clip.load``), TS2 and torchmetrics load transformers models in float32
VARIANT_PRECISION = {"ts2": "float32", "cosine": "float32", "hessel": "float16", "torchmetrics": "float32"}


def check_variant(spec: Spec, variant: str | None, allowed: tuple = BASE_VARIANTS) -> str:
    """``variant`` (default :data:`DEFAULT_VARIANT`) if the family offers it, else a one-line error.

    Parameters
    ----------
    spec : Spec
        The parsed spec (named in the message).
    variant : str or None
        The ``variant`` option; None or empty for the default.
    allowed : tuple of str, optional
        The variants the family offers.

    Returns
    -------
    str
        The variant.

    Raises
    ------
    InputError
        If the family does not offer it.

    Examples
    --------
    >>> from ts2viz.metrics.common.spec import parse_spec
    >>> check_variant(parse_spec("clipscore:openai/clip-vit-base-patch32"), None, ALL_VARIANTS)
    'ts2'
    >>> check_variant(parse_spec("siglip:google/siglip-base-patch16-224"), "hessel")
    Traceback (most recent call last):
    ...
    ts2viz.errors.InputError: metric 'siglip:google/siglip-base-patch16-224': variant must be one of ts2, cosine, not 'hessel'
    """
    v = DEFAULT_VARIANT if variant in (None, "") else str(variant)
    if v not in allowed:
        raise InputError(f"metric {spec.raw!r}: variant must be one of {', '.join(allowed)}, not {v!r}")
    return v


def variant_dtype(device: str, variant: str, dtype: str | None) -> str | None:
    """The dtype option to load with: ``dtype`` when given, else the variant's original precision on a GPU.

    The variant's precision is :data:`VARIANT_PRECISION`'s; on MPS a float32 variant stays float32; None
    (the family's default) elsewhere.

    Parameters
    ----------
    device : str
        The resolved torch device.
    variant : str
        The score variant.
    dtype : str or None
        The ``dtype`` option (None, empty or ``auto``: not given).

    Returns
    -------
    str or None
        A dtype name for :func:`~ts2viz.metrics.common.device.resolve_dtype`, or None.

    Examples
    --------
    >>> variant_dtype("cuda:0", "hessel", None), variant_dtype("cuda", "ts2", "bfloat16"), variant_dtype("cpu", "ts2", None)
    ('float16', 'bfloat16', None)
    """
    if dtype not in (None, "", "auto"):
        return dtype
    if device.startswith("cuda"):
        return VARIANT_PRECISION[variant]
    if device.startswith("mps") and VARIANT_PRECISION[variant] == "float32":
        return "float32"
    return None


def build(spec: Spec, device: str | None = None, *, variants: tuple = BASE_VARIANTS, text_length: int | None = None,
          openclip: bool = False, **options) -> Metric:
    """The metric of an embedding family's spec (CLIPScore, ALIGNScore, SigLIP): its family says how.

    Parameters
    ----------
    spec : Spec
        The parsed spec: a transformers model (hub id or folder), or ``openclip:ARCH/TAG`` (where the family
        takes open_clip models).
    device : str or None, optional
        The torch device; None picks one.
    variants : tuple of str, optional
        The score variants the family offers (the default first).
    text_length : int or None, optional
        The text length the family's public checkpoints were trained with (prompts are cut there; None: the
        text encoder's positions).
    openclip : bool, optional
        Whether the family takes open_clip models (``openclip:ARCH/TAG``).
    **options
        ``batch_size``, ``dtype``, ``variant``, ``preprocess`` (:func:`embedding_options`).

    Returns
    -------
    Metric
        An :class:`OpenCLIPScore` or an :class:`HFEmbeddingScore`.

    Raises
    ------
    InputError
        If an open_clip model is given to another family than CLIPScore, an option is unknown or not
        accepted, or the model cannot be loaded.
    """
    if spec.is_openclip:
        if not openclip:
            raise InputError(f"metric {spec.raw!r}: openclip: models are only supported for clipscore")
        return OpenCLIPScore(spec, device, variants=variants, **options)
    return HFEmbeddingScore(spec, device, variants=variants, text_length=text_length, **options)


class _EmbeddingScore(Metric):
    """Shared scoring: normalised image embeddings . memoised normalised prompt embeddings."""

    max_text_memo = 8192

    #: the score variant (:data:`ALL_VARIANTS`) and the constants of its formula
    variant: str = "cosine"
    logit_scale: float = 1.0
    logit_bias: float = 0.0

    def __init__(self, spec: Spec, config: dict, device: str, batch_size: int | None, dtype):
        dev = device.split(":")[0]
        super().__init__(spec, config, device, batch_size or DEFAULT_BATCH.get(dev, 32))
        self.name = spec.family
        self.dtype = dtype
        # distinct prompts of a call -> their embeddings (see text_embeddings); at most
        # max_text_memo prompt embeddings in all
        self._text_memo: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        self._memo_size = 0
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    # subclasses: encode a stacked batch of prepared images / a list of prompts -> (n, d) tensors
    def _encode_images(self, batch: Any):
        raise NotImplementedError

    def _encode_texts(self, prompts: list[str]):
        raise NotImplementedError

    #: the engine may hand score_prepared stacked batches (:class:`~ts2viz.metrics.common.base.PreparedBatch`)
    stacks_prepared = True

    def _collate(self, items: Sequence[Any]):
        import torch

        from ..common.base import stacked_or

        return stacked_or(items, lambda xs: torch.stack(list(xs)))

    def text_embeddings(self, prompts: Sequence[str]):
        """Normalised float32 embeddings (on the device) of ``prompts``, one row per prompt.

        The distinct prompts of one call are encoded together (in order of first appearance) and
        memoised as a group. So a prompt's embedding, down to its float rounding (which padding and
        batch shape change), depends only on the prompts of its own batch, never on what earlier
        batches encoded: a batch scores the same in any process and in any order (on Ray actors).
        """
        import torch

        group = tuple(dict.fromkeys(prompts))
        with self._lock:
            emb = self._text_memo.get(group)
            if emb is None:
                emb = torch.nn.functional.normalize(self._encode_texts(list(group)).float(), dim=-1)
                self._text_memo[group] = emb
                self._memo_size += len(group)
                while self._memo_size > self.max_text_memo and len(self._text_memo) > 1:
                    self._memo_size -= len(self._text_memo.popitem(last=False)[0])
            else:
                self._text_memo.move_to_end(group)
        row = {p: k for k, p in enumerate(group)}
        return emb[[row[p] for p in prompts]]

    def clear_text_memo(self) -> None:
        """Forget the memoised prompt embeddings (for timing runs that must not reuse them)."""
        with self._lock:
            self._text_memo.clear()
            self._memo_size = 0

    def image_embeddings(self, items: Sequence[Any]):
        """Normalised float32 embeddings (on the device) of prepared images, one row per image."""
        import torch

        emb = self._encode_images(self._collate(items)).float()
        return torch.nn.functional.normalize(emb, dim=-1)

    def text_of(self, prompt: str) -> str:
        """The text the text encoder is given for ``prompt`` (Hessel's variant prefixes it)."""
        return HESSEL_PREFIX + prompt if self.variant == "hessel" else prompt

    def score_prepared(self, items: Sequence[Any], prompts: Sequence[str]) -> np.ndarray:
        """The variant's score of each prepared image with its prompt (:meth:`from_cosine` of their cosine)."""
        import torch

        with torch.inference_mode():
            img = self.image_embeddings(items)
            txt = self.text_embeddings([self.text_of(p) for p in prompts])
            cos = (img * txt).sum(-1)
        return self.from_cosine(cos.double().cpu().numpy())

    def from_cosine(self, cos: np.ndarray) -> np.ndarray:
        """The variant's score of each cosine (module docstring)."""
        if self.variant == "ts2":
            return self.logit_scale * cos + self.logit_bias
        if self.variant == "hessel":
            return HESSEL_WEIGHT * np.clip(cos, 0.0, None)
        if self.variant == "torchmetrics":
            return TORCHMETRICS_SCALE * np.clip(cos, 0.0, None)
        return cos

    def _variant_config(self) -> dict:
        score = {"ts2": f"logits_per_image = {self.logit_scale:.6g} * cos + {self.logit_bias:.6g} (TS2's code)",
                 "cosine": "cosine",
                 "hessel": f"{HESSEL_WEIGHT} * max(cos, 0) of '{HESSEL_PREFIX}' + prompt (Hessel et al.)",
                 "torchmetrics": f"{TORCHMETRICS_SCALE:g} * max(cos, 0) (torchmetrics clip_score)"}[self.variant]
        return {"variant": self.variant, "score": score}

    def _warn_truncated(self, prompt: str, n_tokens: int, limit: int) -> None:
        if prompt not in self._warned:
            self._warned.add(prompt)
            short = prompt if len(prompt) <= 60 else prompt[:57] + "..."
            warnings.warn(f"{self.spec}: prompt {short!r} has {n_tokens} tokens, more than the text "
                          f"encoder's {limit}; it is truncated", stacklevel=3)


class HFEmbeddingScore(_EmbeddingScore):
    """CLIP / ALIGN / SigLIP through transformers ``AutoModel`` (anything with get_*_features).

    Prompts are truncated at the checkpoint's training length the family gives (``text_length``: 64 for ALIGN
    and SigLIP), else at the text encoder's positions. SigLIP's prompts are padded to that length (unpadded for
    ``variant=ts2``, as TS2's one-prompt ``padding=True``) and given no attention mask.

    Parameters
    ----------
    spec : Spec
        The parsed spec (MODEL a hub id or local folder).
    device : str or None, optional
        The torch device; None picks one.
    batch_size, dtype, variant, preprocess
        The family's options (:func:`embedding_options`).
    variants : tuple of str, optional
        The variants the family offers (``variant`` must be one).
    text_length : int or None, optional
        The family's training text length (prompts are cut there; None: the text encoder's positions).
    **options
        Anything else is refused.

    Raises
    ------
    InputError
        For an unknown option or value, a model that is not a dual encoder, or one that cannot be loaded.
    """

    def __init__(self, spec: Spec, device: str | None = None, batch_size: int | None = None,
                 dtype: str | None = None, variant: str | None = None, preprocess: str = "original", *,
                 variants: tuple = BASE_VARIANTS, text_length: int | None = None, **options):
        from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

        if options:
            raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(options)}")
        self.variant = check_variant(spec, variant, variants)
        if preprocess not in PREPROCESS:
            raise InputError(f"metric {spec.raw!r}: preprocess must be one of {', '.join(PREPROCESS)}, "
                             f"not {preprocess!r}")
        dev = resolve_device(device)
        dt = resolve_dtype(dev, variant_dtype(dev, self.variant, dtype))
        model_id = check_model_id(spec)
        kw = {"revision": spec.revision} if spec.revision else {}
        model = hf_load("model", AutoModel.from_pretrained, model_id, spec, dtype=dt, **kw)
        if not (hasattr(model, "get_image_features") and hasattr(model, "get_text_features")):
            raise InputError(f"metric {spec.raw!r}: {model_id!r} is a {type(model).__name__}, not a "
                             "dual-encoder (CLIP/ALIGN/SigLIP) model")
        tokenizer = hf_load("tokenizer", AutoTokenizer.from_pretrained, model_id, spec, **kw)
        # the originals ran transformers 4.x's PIL image processors (backend="pil" on transformers 5)
        backend = {"backend": "pil"} if preprocess == "original" else {}
        image_processor = hf_load("image processor", AutoImageProcessor.from_pretrained, model_id, spec,
                                  **backend, **kw)
        self._setup(spec, dev, dt, model, tokenizer, image_processor, batch_size, model_id, preprocess, text_length)

    @classmethod
    def from_model(cls, model, tokenizer, image_processor, *, spec: str = "clipscore:in-memory",
                   device: str | None = None, batch_size: int | None = None, variant: str | None = None,
                   preprocess: str = "fast", variants: tuple = ALL_VARIANTS,
                   text_length: int | None = None) -> "HFEmbeddingScore":
        """The metric of an already-built transformers dual encoder with its tokenizer and image processor.

        A model with ``get_image_features`` / ``get_text_features``, e.g. random weights built on the GPU by
        ``benchmarks/bench_gpu.py``: no download, no checkpoint on disk; it computes in the model's dtype.

        Parameters
        ----------
        model : transformers.PreTrainedModel
            The dual encoder (CLIP, SigLIP, ALIGN).
        tokenizer : transformers.PreTrainedTokenizerBase
            Its tokenizer.
        image_processor : transformers.BaseImageProcessor
            Its image processor.
        spec : str
            The spec the metric records.
        device : str, optional
            Its device (default: the model's).
        batch_size : int, optional
            Images per forward pass.
        variant : str, optional
            The score variant (as the family's option).
        preprocess : str
            The image preprocessing (as the family's option).
        variants : tuple of str, optional
            The variants ``variant`` may name.
        text_length : int or None, optional
            The training text length prompts are cut at (None: the text encoder's positions).

        Returns
        -------
        HFEmbeddingScore
            The metric.
        """
        from ..common.spec import parse_spec

        sp = parse_spec(spec) if isinstance(spec, str) else spec
        self = cls.__new__(cls)
        self.variant = check_variant(sp, variant, variants)
        p = next(model.parameters())
        self._setup(sp, resolve_device(device or str(p.device)), p.dtype, model, tokenizer, image_processor,
                    batch_size, sp.model, preprocess, text_length)
        return self

    def _setup(self, spec, dev, dt, model, tokenizer, image_processor, batch_size, model_id, preprocess,
               text_length=None):
        self.model = model.to(dev).eval()
        self.tokenizer, self.image_processor = tokenizer, image_processor
        self.model_type = getattr(model.config, "model_type", "")
        tc = getattr(model.config, "text_config", None)
        limit = getattr(tc, "max_position_embeddings", None) or 77
        self.text_positions = limit
        self.max_length = min(limit, text_length or limit)
        # SigLIP was trained on prompts padded to full length; padding changes its embeddings. TS2's code
        # encodes one prompt at a time with padding=True, i.e. unpadded.
        siglip = self.model_type.startswith("siglip")
        self.padding = ("max_length" if self.variant != "ts2" else False) if siglip else True
        self.logit_scale, self.logit_bias = _logit_constants(model)
        self.preprocess = preprocess
        self.hessel_transform = hessel_transform(self.image_processor) if (
            self.variant == "hessel" and preprocess == "original") else None
        config = {"family": spec.family, "backend": "transformers", "class": type(model).__name__,
                  **model_identity(model_id, spec.revision, model.config),
                  "max_length": self.max_length, "padding": self.padding, **self._variant_config(),
                  "preprocess": self._preprocess_name()}
        if self.variant == "torchmetrics":
            config["truncation"] = "ids cut to the text positions, no end token (torchmetrics)"
        super().__init__(spec, config, dev, batch_size, dt)
        self.fast_prepare = clip_fast_preprocess(self.image_processor) if preprocess == "fast" else None

    def _preprocess_name(self) -> str:
        if self.hessel_transform is not None:
            return "torchvision Resize(bicubic) + CenterCrop on PIL (Hessel et al.)"
        return f"{type(self.image_processor).__name__} ({self.preprocess})"

    def prepare(self, image, file_name: str | None = None) -> dict:
        """One image as the variant's original prepares it (thread-safe).

        Hessel's torchvision pipeline for ``variant=hessel``; the processor's torchvision steps for
        ``preprocess=fast`` (:func:`clip_fast_preprocess`); else the model's image processor.

        Parameters
        ----------
        image : PIL.Image.Image
            The decoded image.
        file_name : str or None, optional
            Its file (unused).

        Returns
        -------
        dict
            The model's image inputs (``pixel_values`` and whatever else the processor gives), one image
            each, unbatched.
        """
        if self.hessel_transform is not None:
            return {"pixel_values": self.hessel_transform(image)}
        if self.fast_prepare is not None:
            return {"pixel_values": self.fast_prepare(image)}
        from ..common.pixels import processor_inputs

        return processor_inputs(self.image_processor, image)

    def _collate(self, items):
        import torch

        from ..common.base import stacked_or

        return stacked_or(items, lambda xs: {k: torch.stack([it[k] for it in xs]) for k in xs[0]})

    def _encode_images(self, batch):
        batch = {k: v.to(self.device) for k, v in batch.items()}
        if "pixel_values" in batch:
            batch["pixel_values"] = batch["pixel_values"].to(self.model.dtype)
        with autocast(self.device, self.dtype):
            return _pooled(self.model.get_image_features(**batch))

    def _encode_texts(self, prompts):
        import torch

        lengths = [len(ids) for ids in self.tokenizer(prompts, truncation=False, verbose=False)["input_ids"]]
        for p, n in zip(prompts, lengths):
            if n > self.max_length:
                self._warn_truncated(p, n, self.max_length)
        if self.padding is False and len(prompts) > 1:   # unpadded: one prompt at a time
            return torch.cat([self._encode_texts([p]) for p in prompts])
        if self.variant == "torchmetrics":
            # torchmetrics: processor(text, padding=True), then ids and mask cut to the text positions
            enc = self.tokenizer(prompts, padding=True, return_tensors="pt", verbose=False)
            enc = {k: v[:, :self.text_positions] for k, v in enc.items()}
        else:
            enc = self.tokenizer(prompts, padding=self.padding, truncation=True, max_length=self.max_length,
                                 return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()
               if k in ("input_ids", "attention_mask", "token_type_ids")}
        if self.model_type.startswith("siglip"):
            enc.pop("attention_mask", None)  # SigLIP attends to padding by design
        with autocast(self.device, self.dtype):
            return _pooled(self.model.get_text_features(**enc))


def _logit_constants(model) -> tuple[float, float]:
    """``(scale, bias)`` of the model's ``logits_per_image`` over the cosine; (1, 0) if it has none.

    CLIP ``exp(logit_scale)``, ALIGN ``1 / temperature``, SigLIP ``exp(logit_scale)`` and ``logit_bias``.
    """
    import math

    if hasattr(model, "temperature"):
        return 1.0 / float(model.temperature.detach().float()), 0.0
    scale = getattr(model, "logit_scale", None)
    bias = getattr(model, "logit_bias", None)
    return (math.exp(float(scale.detach().float())) if scale is not None else 1.0,
            float(bias.detach().float().reshape(-1)[0]) if bias is not None else 0.0)


#: torchvision-backed image processors whose preprocessing is the backend's generic resize / crop /
#: rescale-normalise pipeline (transformers 5), so that :func:`clip_fast_preprocess` may run its steps
GENERIC_PIPELINE_PROCESSORS = frozenset({"CLIPImageProcessor", "SiglipImageProcessor"})


def clip_fast_preprocess(ip):
    """A faster call of a torchvision-backed image processor (CLIP's in transformers 5) on one image.

    Runs the processor's own resize, centre-crop and fused rescale-normalise steps on a uint8 tensor,
    so the numbers are the processor's (tested), skipping its per-call argument validation and
    grouping, which cost as much as a ViT-B/32 forward pass per image. Falls back to the full call for
    any image the shortcut cannot take.

    Parameters
    ----------
    ip : transformers.BaseImageProcessor
        The image processor.

    Returns
    -------
    callable or None
        ``prepare(image) -> torch.Tensor`` (the image's pixel values, unbatched); None when ``ip`` is not
        a torchvision-backed processor of :data:`GENERIC_PIPELINE_PROCESSORS`, pads, or does not resize.
    """
    try:
        from transformers.image_processing_backends import TorchvisionBackend
    except ImportError:
        return None
    # Only processors known to use the backend's generic pipeline unchanged (CLIP's, SigLIP's, checked
    # against the full call in the tests); others (EfficientNet's extra rescale offset, for ALIGN) take
    # the reference path.
    if not isinstance(ip, TorchvisionBackend) or type(ip).__name__ not in GENERIC_PIPELINE_PROCESSORS:
        return None
    if getattr(ip, "do_pad", False) or not getattr(ip, "do_resize", False):
        return None
    try:
        from torchvision.transforms.functional import pil_to_tensor
    except ImportError:
        return None

    def prepare(image):
        try:
            t = pil_to_tensor(image)
            t = ip.resize(image=t, size=ip.size, resample=ip.resample)
            if ip.do_center_crop:
                t = ip.center_crop(t, ip.crop_size)
            return ip.rescale_and_normalize(t, ip.do_rescale, ip.rescale_factor, ip.do_normalize,
                                            ip.image_mean, ip.image_std)
        except Exception:  # noqa: BLE001 - an unusual image or processor: the reference path decides
            return ip(images=image, return_tensors="pt")["pixel_values"][0]

    return prepare


def _pooled(out):
    """The projected embedding: transformers 5 returns a model output whose pooler_output it is."""
    if hasattr(out, "pooler_output"):
        return out.pooler_output
    if isinstance(out, tuple):
        return out[1] if len(out) > 1 else out[0]
    return out


class OpenCLIPScore(_EmbeddingScore):
    """CLIPScore through open_clip: ``openclip:ARCH/TAG`` with TAG a pretrained tag or a checkpoint file.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    batch_size, dtype, variant, preprocess
        The family's options (:func:`embedding_options`); ``preprocess`` must be ``original`` (the model's
        own transform).
    variants : tuple of str, optional
        The variants the family offers (``variant`` must be one).
    **options
        Anything else is refused.

    Raises
    ------
    InputError
        For an unknown option, ``preprocess=fast``, a missing TAG, a checkpoint file that does not exist,
        or a model open_clip cannot load.
    """

    def __init__(self, spec: Spec, device: str | None = None, batch_size: int | None = None,
                 dtype: str | None = None, variant: str | None = None, preprocess: str = "original", *,
                 variants: tuple = ALL_VARIANTS, **options):
        import os

        import open_clip

        if options:
            raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(options)}")
        self.variant = check_variant(spec, variant, variants)
        if preprocess != "original":
            raise InputError(f"metric {spec.raw!r}: open_clip models prepare images with their own transform "
                             "(preprocess=original only)")
        arch, tag = spec.openclip_parts()
        if not tag:
            raise InputError(f"metric {spec.raw!r}: give the weights as openclip:{arch}/TAG, TAG a pretrained "
                             f"tag (e.g. {_example_tag(arch)}) or a checkpoint file")
        dev = resolve_device(device)
        dt = resolve_dtype(dev, variant_dtype(dev, self.variant, dtype))
        ckpt = os.path.expanduser(tag)
        is_file = os.path.isfile(ckpt)
        if not is_file and ("/" in tag or tag.endswith((".pt", ".bin", ".safetensors"))):
            raise InputError(f"metric {spec.raw!r}: no checkpoint file {tag!r}")
        try:
            model, _, preprocess = open_clip.create_model_and_transforms(
                arch, pretrained=ckpt if is_file else tag, device=dev)
            tokenizer = open_clip.get_tokenizer(arch)
        except Exception as e:  # open_clip raises RuntimeError for unknown arch/tag, OSError offline
            msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise InputError(f"metric {spec.raw!r}: cannot load open_clip model {arch}/{tag}: {msg[:300]}") from e
        self.model = model.eval()
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.context_length = int(getattr(tokenizer, "context_length", None) or 77)
        self.logit_scale, self.logit_bias = _logit_constants(model)
        config = {"family": spec.family, "backend": "open_clip", "arch": arch,
                  "pretrained": os.path.abspath(ckpt) if is_file else tag, **self._variant_config()}
        if is_file:
            config["fingerprint"] = file_fingerprint(ckpt)
        super().__init__(spec, config, dev, batch_size, dt)

    def prepare(self, image, file_name: str | None = None):
        """One image through the open_clip model's own transform (thread-safe).

        Parameters
        ----------
        image : PIL.Image.Image
            The decoded image.
        file_name : str or None, optional
            Its file (unused).

        Returns
        -------
        torch.Tensor
            The pixel values, ``(3, n, n)``.
        """
        return self.preprocess(image)

    def _encode_images(self, batch):
        with autocast(self.device, self.dtype):
            return self.model.encode_image(batch.to(self.device))

    def _encode_texts(self, prompts):
        enc = getattr(self.tokenizer, "encode", None)
        if enc is not None:
            for p in prompts:
                try:
                    n = len(enc(p)) + 2  # + start/end tokens
                except Exception:  # an HF-backed open_clip tokenizer: no cheap count, skip the warning
                    break
                if n > self.context_length:
                    self._warn_truncated(p, n, self.context_length)
        tokens = self.tokenizer(prompts).to(self.device)
        with autocast(self.device, self.dtype):
            return self.model.encode_text(tokens)


def _example_tag(arch: str) -> str:
    try:
        import open_clip

        tags = open_clip.list_pretrained_tags_by_model(arch)
        return tags[0] if tags else "laion2b_s34b_b79k"
    except Exception:
        return "laion2b_s34b_b79k"
