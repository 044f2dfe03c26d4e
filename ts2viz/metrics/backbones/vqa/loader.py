"""The VQA model of a checkpoint: BLIP-VQA, CLIP-FlanT5, LLaVA's own layout or a generative VLM, by its config."""
from __future__ import annotations

from ....errors import InputError
from ...common.device import resolve_device, resolve_dtype
from ...common.pretrained import check_model_id, hf_load
from ...common.spec import Spec
from .blip import BlipVQA
from .generative import PALIGEMMA_TEMPLATE, GenerativeVQA
from .model import VQAModel

#: VQA models of model types transformers does not know: model_type -> "module:function" building the
#: :class:`VQAModel` (imported only when such a model is loaded; the module subclasses VQAModel)
EXTRA_BACKENDS = {"clip_t5": ".clip_flant5:load_clip_t5_vqa"}

DEFAULT_PAIRS = {"cpu": 8, "cuda": 32, "mps": 8}


def load_vqa_model(spec: Spec, device: str | None = None, *, dtype: str | None = None,
                   batch_size: int | None = None, template: str | None = None, llava_format: str = "t2v_metrics",
                   vision_tower: str | None = None, tokenizer: str | None = None) -> VQAModel:
    """The VQA model of ``spec.model`` (hub id or folder): BLIP-VQA, CLIP-FlanT5 or a generative VLM, by its config.

    The config's ``model_type`` decides: ``clip_t5`` (CLIP-FlanT5, :data:`EXTRA_BACKENDS`), LLaVA's own code
    layout (converted on load, :func:`~ts2viz.metrics.backbones.vqa.llava.load_original_llava`), BLIP-VQA, else
    a generative VLM (PaliGemma with :data:`PALIGEMMA_TEMPLATE`).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    dtype : str or None, optional
        ``float32``, ``float16`` or ``bfloat16`` (None: :func:`~ts2viz.metrics.common.device.resolve_dtype`'s
        default).
    batch_size : int or None, optional
        Pairs per model call (None: 8 on CPU and MPS, 32 on CUDA).
    template : str or None, optional
        A prompt template with ``{question}`` for a generative VLM.
    llava_format : str, optional
        How :meth:`VQAModel.answer_score` prompts LLaVA-1.5: ``t2v_metrics`` or ``chat``.
    vision_tower : str or None, optional
        The CLIP vision tower of a CLIP-FlanT5 or original-layout LLaVA checkpoint.
    tokenizer : str or None, optional
        The T5 tokenizer of a CLIP-FlanT5 checkpoint (see
        :func:`~ts2viz.metrics.backbones.vqa.clip_flant5.load_clip_t5`).

    Returns
    -------
    VQAModel
        A :class:`BlipVQA`, a CLIP-FlanT5 VQA model or a :class:`GenerativeVQA`.

    Raises
    ------
    InputError
        For an open_clip model, an option the model does not take (``tokenizer``, ``vision_tower``), a BLIP
        checkpoint that is not BLIP-VQA, or a model that cannot be loaded.
    """
    import importlib

    from transformers import AutoConfig, PretrainedConfig

    if spec.is_openclip:
        raise InputError(f"metric {spec.raw!r}: open_clip models cannot answer questions; use a VQA model")
    dev = resolve_device(device)
    dt = resolve_dtype(dev, dtype)
    model_id = check_model_id(spec)
    kw = {"revision": spec.revision} if spec.revision else {}
    bs = batch_size or DEFAULT_PAIRS.get(dev.split(":")[0], 8)
    raw, _ = hf_load("config", PretrainedConfig.get_config_dict, model_id, spec, **kw)
    backend = EXTRA_BACKENDS.get(raw.get("model_type"))
    if backend:
        mod, _, fn = backend.partition(":")
        return getattr(importlib.import_module(mod, __package__), fn)(
            model_id, spec, dev, dt, bs, spec.revision, vision_tower=vision_tower, tokenizer=tokenizer)
    if tokenizer:
        raise InputError(f"metric {spec.raw!r}: tokenizer is an option of CLIP-FlanT5 checkpoints only")
    from .llava import is_original_layout, load_original_llava

    if is_original_layout(raw):  # liuhaotian/llava-v1.5-* (t2v_metrics' LLaVA): converted on load
        loaded = load_original_llava(model_id, spec, dtype=dt, vision_tower=vision_tower, revision=spec.revision)
        return GenerativeVQA(model_id, spec, dev, dt, bs, spec.revision, template, llava_format, loaded=loaded)
    cfg = hf_load("config", AutoConfig.from_pretrained, model_id, spec, **kw)
    if template is None and cfg.model_type == "paligemma":
        template = PALIGEMMA_TEMPLATE  # PaliGemma has no chat template; it is trained on task prefixes
    if vision_tower:
        raise InputError(f"metric {spec.raw!r}: vision_tower is an option of CLIP-FlanT5 checkpoints and LLaVA "
                         "checkpoints in LLaVA's own layout only")
    archs = " ".join(getattr(cfg, "architectures", None) or [])
    if cfg.model_type == "blip" and ("QuestionAnswering" in archs or not archs):
        return BlipVQA(model_id, spec, dev, dt, bs, spec.revision)
    if cfg.model_type == "blip":
        raise InputError(f"metric {spec.raw!r}: {model_id!r} is a BLIP {archs or 'model'}, not BLIP-VQA")
    return GenerativeVQA(model_id, spec, dev, dt, bs, spec.revision, template, llava_format)
