"""Embedding metrics: CLIPScore (transformers or open_clip), ALIGNScore and SigLIP.

The score of an image is the raw cosine similarity of its embedding and its prompt's embedding, in
[-1, 1]. (TS2 reports CLIPScore as a cosine-like number in [0, 1]; the popular ``2.5 * max(cos, 0)``
rescaling of Hessel et al. is monotone, so it changes no ordering, and is left to the reader.)

Prompts longer than the text encoder's context are truncated with a warning. Prompt embeddings are
computed once per distinct set of prompts in a batch and memoised, since many images share one
prompt (every SEG does).
"""
from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from ...errors import InputError
from ..common.base import Metric
from ..common.device import autocast, resolve_device, resolve_dtype
from ..common.hub import check_model_id, file_fingerprint, hf_load, model_identity
from ..common.spec import Spec
from ..registry import Option

DEFAULT_BATCH = {"cpu": 32, "cuda": 256, "mps": 64}
#: the options of clipscore:, alignscore: and siglip: (their cards list them)
EMBEDDING_OPTIONS = (
    Option("batch_size", None, "Images per model call (default 32 on CPU, 256 on CUDA, 64 on MPS; halved on GPU "
           "out-of-memory). Speed only."),
    Option("dtype", None, "Compute dtype on GPU: `float32`, `float16` or `bfloat16` (default: the card's "
           "precision, else bfloat16 where the GPU supports it, else float16; always float32 on CPU).",
           ("float32", "float16", "bfloat16")),
)
# Text lengths the public checkpoints were trained with (their processors pad/truncate to these).
TEXT_LENGTH = {"alignscore": 64, "siglip": 64}


def build(spec: Spec, device: str | None = None, **options) -> Metric:
    """Factory for ``clipscore``, ``alignscore`` and ``siglip`` specs."""
    if spec.is_openclip:
        if spec.family != "clipscore":
            raise InputError(f"metric {spec.raw!r}: openclip: models are only supported for clipscore")
        return OpenCLIPScore(spec, device, **options)
    return HFEmbeddingScore(spec, device, **options)


class _EmbeddingScore(Metric):
    """Shared scoring: normalised image embeddings . memoised normalised prompt embeddings."""

    max_text_memo = 8192

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
        import torch

        emb = self._encode_images(self._collate(items)).float()
        return torch.nn.functional.normalize(emb, dim=-1)

    def score_prepared(self, items: Sequence[Any], prompts: Sequence[str]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            img = self.image_embeddings(items)
            txt = self.text_embeddings(list(prompts))
            cos = (img * txt).sum(-1)
        return cos.double().cpu().numpy()

    def _warn_truncated(self, prompt: str, n_tokens: int, limit: int) -> None:
        if prompt not in self._warned:
            self._warned.add(prompt)
            short = prompt if len(prompt) <= 60 else prompt[:57] + "..."
            warnings.warn(f"{self.spec}: prompt {short!r} has {n_tokens} tokens, more than the text "
                          f"encoder's {limit}; it is truncated", stacklevel=3)


class HFEmbeddingScore(_EmbeddingScore):
    """CLIP / ALIGN / SigLIP through transformers ``AutoModel`` (anything with get_*_features)."""

    def __init__(self, spec: Spec, device: str | None = None, batch_size: int | None = None,
                 dtype: str | None = None, **options):
        from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

        if options:
            raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(options)}")
        dev = resolve_device(device)
        dt = resolve_dtype(dev, dtype)
        model_id = check_model_id(spec)
        kw = {"revision": spec.revision} if spec.revision else {}
        # Weights in half precision on GPU halve memory traffic; CPU stays float32.
        model = hf_load("model", AutoModel.from_pretrained, model_id, spec, dtype=dt, **kw)
        if not (hasattr(model, "get_image_features") and hasattr(model, "get_text_features")):
            raise InputError(f"metric {spec.raw!r}: {model_id!r} is a {type(model).__name__}, not a "
                             "dual-encoder (CLIP/ALIGN/SigLIP) model")
        self.model = model.to(dev).eval()
        self.tokenizer = hf_load("tokenizer", AutoTokenizer.from_pretrained, model_id, spec, **kw)
        self.image_processor = hf_load("image processor", AutoImageProcessor.from_pretrained, model_id, spec, **kw)
        tc = getattr(model.config, "text_config", None)
        limit = getattr(tc, "max_position_embeddings", None) or 77
        self.max_length = min(limit, TEXT_LENGTH.get(spec.family, limit))
        # SigLIP was trained on prompts padded to full length; padding changes its embeddings.
        self.padding = "max_length" if getattr(model.config, "model_type", "").startswith("siglip") else True
        config = {"family": spec.family, "backend": "transformers", "class": type(model).__name__,
                  **model_identity(model_id, spec.revision, model.config),
                  "max_length": self.max_length, "padding": self.padding, "score": "cosine"}
        super().__init__(spec, config, dev, batch_size, dt)
        self.fast_prepare = clip_fast_preprocess(self.image_processor)

    def prepare(self, image, file_name: str | None = None) -> dict:
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
        lengths = [len(ids) for ids in self.tokenizer(prompts, truncation=False, verbose=False)["input_ids"]]
        for p, n in zip(prompts, lengths):
            if n > self.max_length:
                self._warn_truncated(p, n, self.max_length)
        enc = self.tokenizer(prompts, padding=self.padding, truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        enc = {k: v.to(self.device) for k, v in enc.items()
               if k in ("input_ids", "attention_mask", "token_type_ids")}
        if getattr(self.model.config, "model_type", "").startswith("siglip"):
            enc.pop("attention_mask", None)  # SigLIP attends to padding by design
        with autocast(self.device, self.dtype):
            return _pooled(self.model.get_text_features(**enc))


#: torchvision-backed image processors whose preprocessing is the backend's generic resize / crop /
#: rescale-normalise pipeline (transformers 5), so that :func:`clip_fast_preprocess` may run its steps
GENERIC_PIPELINE_PROCESSORS = frozenset({"CLIPImageProcessor", "SiglipImageProcessor"})


def clip_fast_preprocess(ip):
    """A faster call of a torchvision-backed image processor (CLIP's in transformers 5) on one image.

    Runs the processor's own resize, centre-crop and fused rescale-normalise steps on a uint8 tensor,
    so the numbers are the processor's (tested), skipping its per-call argument validation and
    grouping, which cost as much as a ViT-B/32 forward pass per image. Returns ``None`` when ``ip`` is
    not of that kind; falls back to the full call for any image the shortcut cannot take.
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
    """transformers 5 returns a model output whose pooler_output is the projected embedding."""
    if hasattr(out, "pooler_output"):
        return out.pooler_output
    if isinstance(out, tuple):
        return out[1] if len(out) > 1 else out[0]
    return out


class OpenCLIPScore(_EmbeddingScore):
    """CLIPScore through open_clip: ``openclip:ARCH/TAG`` with TAG a pretrained tag or a checkpoint file."""

    def __init__(self, spec: Spec, device: str | None = None, batch_size: int | None = None,
                 dtype: str | None = None, **options):
        import os

        import open_clip

        if options:
            raise InputError(f"metric {spec.raw!r}: unknown option(s) {', '.join(options)}")
        arch, tag = spec.openclip_parts()
        if not tag:
            raise InputError(f"metric {spec.raw!r}: give the weights as openclip:{arch}/TAG, TAG a pretrained "
                             f"tag (e.g. {_example_tag(arch)}) or a checkpoint file")
        dev = resolve_device(device)
        dt = resolve_dtype(dev, dtype)
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
        config = {"family": spec.family, "backend": "open_clip", "arch": arch,
                  "pretrained": os.path.abspath(ckpt) if is_file else tag, "score": "cosine"}
        if is_file:
            config["fingerprint"] = file_fingerprint(ckpt)
        super().__init__(spec, config, dev, batch_size, dt)

    def prepare(self, image, file_name: str | None = None):
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
