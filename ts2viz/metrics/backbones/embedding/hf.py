"""The transformers backend of the embedding metrics: CLIP, ALIGN and SigLIP through ``AutoModel``."""
from __future__ import annotations

from ....errors import InputError
from ...common.clip_prep import hessel_transform
from ...common.device import autocast, resolve_device, resolve_dtype
from ...common.pretrained import check_model_id, hf_load, model_identity
from ...common.spec import Spec
from .options import (
    ALL_VARIANTS,
    BASE_VARIANTS,
    PREPROCESS,
    check_variant,
    variant_dtype,
)
from .preprocess import clip_fast_preprocess
from .score import EmbeddingScore, logit_constants


class HFEmbeddingScore(EmbeddingScore):
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
        The family's options (:func:`~ts2viz.metrics.backbones.embedding.options.embedding_options`).
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
        from ...common.spec import parse_spec

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
        self.logit_scale, self.logit_bias = logit_constants(model)
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
        ``preprocess=fast`` (:func:`~ts2viz.metrics.backbones.embedding.preprocess.clip_fast_preprocess`); else the model's image processor.

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
        from ...common.pixels import processor_inputs

        return processor_inputs(self.image_processor, image)

    def _collate(self, items):
        import torch

        from ...common.base import stacked_or

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


def _pooled(out):
    """The projected embedding: transformers 5 returns a model output whose pooler_output it is."""
    if hasattr(out, "pooler_output"):
        return out.pooler_output
    if isinstance(out, tuple):
        return out[1] if len(out) > 1 else out[0]
    return out
