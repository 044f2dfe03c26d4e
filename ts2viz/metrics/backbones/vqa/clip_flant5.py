"""CLIP-FlanT5, the VQA model of VQAScore (Lin et al., 2024), rebuilt from transformers parts.

The released checkpoints (``zhiqiulin/clip-flant5-xl``, ``zhiqiulin/clip-flant5-xxl``) were trained with
t2v_metrics' / CLIP-FlanT5's own code, a LLaVA-1.5 recipe on a Flan-T5 encoder–decoder. This module is
ts2viz's own implementation of that architecture, laid out so those checkpoints load unchanged:

* ``config.json``: a T5 config with ``model_type: "clip_t5"`` plus LLaVA's multimodal keys:
  ``mm_vision_tower`` (hub id or folder of a CLIP vision model, ``openai/clip-vit-large-patch14-336``),
  ``mm_vision_select_layer`` (-2: the penultimate layer), ``mm_vision_select_feature`` (``patch``: the
  class token dropped), ``mm_projector_type`` (``mlp2x_gelu``), ``mm_hidden_size``;
* state dict: Flan-T5's own keys (``shared``, ``encoder.*``, ``decoder.*``, ``lm_head``), the projector
  as ``mm_projector.0`` / ``mm_projector.2`` (Linear, GELU, Linear) and the CLIP tower as
  ``vision_tower.vision_tower.vision_model.*``. When a checkpoint lacks the tower's weights they come from
  ``mm_vision_tower`` (as the original builds the tower from it before loading the checkpoint).

The image features (one per patch) replace the prompt's ``<image>`` placeholder in the *encoder* input;
the answer is the decoder's target. Tokenisation follows the original's ``t5_tokenizer_image_token``:
every text chunk around ``<image>`` is tokenised on its own, so each chunk ends with T5's ``</s>``.
"""
from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path
from typing import Sequence

from ....errors import InputError
from .llava import (
    CONTEXT_LEN,
    IMAGE_PLACEHOLDER,
    IMAGE_SENTINEL,
    chat_question,
    expand_to_square,
    layers_up_to,
)

#: the tokenizer each released checkpoint was trained with (t2v_metrics' CLIP_T5_MODELS)
KNOWN_TOKENIZERS = {"zhiqiulin/clip-flant5-xl": "google/flan-t5-xl", "zhiqiulin/clip-flant5-xxl": "google/flan-t5-xxl"}


def tokens_around_image(text: str, tokenizer) -> list[int]:
    """Token ids of ``text`` with :data:`IMAGE_SENTINEL` where each ``<image>`` stands.

    Each chunk between placeholders is tokenised separately with the tokenizer's special tokens (T5 ends
    every chunk with ``</s>``), as the checkpoints were trained (the original's ``t5_tokenizer_image_token``).

    Parameters
    ----------
    text : str
        The text, with ``<image>`` (:data:`~ts2viz.metrics.backbones.vqa.llava.IMAGE_PLACEHOLDER`) where the
        image goes.
    tokenizer : callable
        A tokenizer: ``tokenizer(chunk).input_ids`` are a chunk's ids.

    Returns
    -------
    list of int
        The ids of every chunk in order, :data:`~ts2viz.metrics.backbones.vqa.llava.IMAGE_SENTINEL` between
        them.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from ts2viz.metrics.backbones.vqa.llava import IMAGE_SENTINEL
    >>> tok = lambda s: SimpleNamespace(input_ids=[len(w) for w in s.split()] + [1])  # a toy: </s> = 1
    >>> ids = tokens_around_image("USER: <image> is it red?", tok)
    >>> [("IMG" if i == IMAGE_SENTINEL else i) for i in ids]
    [5, 1, 'IMG', 2, 2, 4, 1]
    """
    out: list[int] = []
    for k, chunk in enumerate(text.split(IMAGE_PLACEHOLDER)):
        if k:
            out.append(IMAGE_SENTINEL)
        out.extend(tokenizer(chunk).input_ids)
    return out


def _clip_t5_classes():
    """The config and model classes (built on first use: importing transformers is slow)."""
    global _CLASSES
    if _CLASSES is not None:
        return _CLASSES
    import torch
    from torch import nn
    from transformers import (
        AutoConfig,
        CLIPVisionConfig,
        CLIPVisionModel,
        T5Config,
        T5ForConditionalGeneration,
    )
    from transformers.activations import NewGELUActivation

    class TanhGELU(NewGELUActivation):
        """Flan-T5's ``gelu_new`` in one call in float32 (torch's tanh GELU: the same formula, fused).

        ``NewGELUActivation`` spells ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` as eight elementwise
        operations over the feed-forward width, a large share of Flan-T5's time on a CPU; the fused kernel
        agrees to float32 rounding. Other dtypes keep transformers' spelling (its roundings per operation).
        """

        def forward(self, input):
            if input.dtype == torch.float32:
                return torch.nn.functional.gelu(input, approximate="tanh")
            return super().forward(input)

    class CLIPT5Config(T5Config):
        """A T5 config with LLaVA's multimodal entries (``mm_*``)."""

        model_type = "clip_t5"

        def __init__(self, mm_vision_tower: str | None = None, mm_vision_select_layer: int = -2,
                     mm_vision_select_feature: str = "patch", mm_projector_type: str = "mlp2x_gelu",
                     mm_hidden_size: int | None = None, **kwargs):
            super().__init__(**kwargs)
            self.mm_vision_tower = mm_vision_tower
            self.mm_vision_select_layer = mm_vision_select_layer
            self.mm_vision_select_feature = mm_vision_select_feature
            self.mm_projector_type = mm_projector_type
            self.mm_hidden_size = mm_hidden_size

    class VisionTower(nn.Module):
        """The frozen CLIP vision model (attribute ``vision_tower``, as in the checkpoints' key names)."""

        def __init__(self, vision_config, select_layer: int, select_feature: str):
            super().__init__()
            if select_feature not in ("patch", "cls_patch"):
                raise InputError(f"CLIP-FlanT5: unknown mm_vision_select_feature {select_feature!r}")
            clip = CLIPVisionModel(vision_config)
            if hasattr(clip, "vision_model"):  # transformers 4: keys vision_model.* already
                self.vision_tower = clip
            else:  # transformers 5 flattened CLIPVisionModel: nest it so the keys stay vision_model.*
                self.vision_tower = nn.Module()
                self.vision_tower.vision_model = clip
            self._clip = [clip]  # a plain reference (a second registration would add keys)
            self.select_layer = select_layer
            self.select_feature = select_feature

        @property
        def clip(self):
            """The CLIPVisionModel."""
            return self._clip[0]

        def forward(self, pixel_values):
            # hidden_states[select_layer], without the layers after it (layers_up_to)
            with layers_up_to(self.clip, self.select_layer):
                feats = self.clip(pixel_values.to(self.clip.dtype)).last_hidden_state
            return feats[:, 1:] if self.select_feature == "patch" else feats

    def build_projector(kind: str, d_in: int, d_out: int):
        if kind == "linear":
            return nn.Linear(d_in, d_out)
        if kind == "identity":
            return nn.Identity()
        m = re.fullmatch(r"mlp(\d+)x_gelu", kind or "")
        if not m:
            raise InputError(f"CLIP-FlanT5: unknown mm_projector_type {kind!r}")
        layers: list = [nn.Linear(d_in, d_out)]
        for _ in range(int(m.group(1)) - 1):
            layers += [nn.GELU(), nn.Linear(d_out, d_out)]
        return nn.Sequential(*layers)

    class CLIPT5ForConditionalGeneration(T5ForConditionalGeneration):
        """Flan-T5 whose encoder reads CLIP patch features (projected to ``d_model``) in place of ``<image>``."""

        config_class = CLIPT5Config
        # the original model also registers T5's input embedding as ``embed_tokens`` (the same tensor as
        # ``shared``): its checkpoints carry that alias, which this class reads from ``shared``
        _keys_to_ignore_on_load_unexpected = [r"^embed_tokens\.weight$"]

        def __init__(self, config):
            super().__init__(config)
            vcfg = getattr(config, "mm_vision_config", None)
            if vcfg is None:
                raise InputError("CLIP-FlanT5: the vision tower's config is missing (load with load_clip_t5)")
            vcfg = CLIPVisionConfig(**vcfg) if isinstance(vcfg, dict) else vcfg
            self.vision_tower = VisionTower(vcfg, config.mm_vision_select_layer, config.mm_vision_select_feature)
            self.mm_projector = build_projector(config.mm_projector_type, config.mm_hidden_size or vcfg.hidden_size,
                                                config.d_model)
            for block in self.modules():  # the feed-forward layers' gelu_new, fused (TanhGELU)
                if type(getattr(block, "act", None)) is NewGELUActivation:
                    block.act = TanhGELU()

        def encode_images(self, pixel_values):
            """Projected patch features, ``(n_images, n_patches, d_model)``."""
            return self.mm_projector(self.vision_tower(pixel_values))

        def splice(self, rows: Sequence[Sequence[int]], image_features):
            """Encoder input embeddings and mask, right-padded (the mask marks the padding).

            Row ``i``'s tokens with image ``i``'s features at its :data:`IMAGE_SENTINEL`.
            """
            embed = self.get_input_embeddings()
            dev = image_features.device
            seqs = []
            for i, ids in enumerate(rows):
                ids = list(ids)
                if ids.count(IMAGE_SENTINEL) != 1:
                    raise InputError("CLIP-FlanT5: each prompt needs exactly one <image>")
                k = ids.index(IMAGE_SENTINEL)
                before = embed(torch.tensor(ids[:k], dtype=torch.long, device=dev))
                after = embed(torch.tensor(ids[k + 1:], dtype=torch.long, device=dev))
                seqs.append(torch.cat([before, image_features[i].to(before.dtype), after], dim=0))
            width = max(s.shape[0] for s in seqs)
            embeds = seqs[0].new_zeros((len(seqs), width, seqs[0].shape[1]))
            mask = torch.zeros((len(seqs), width), dtype=torch.long, device=dev)
            for i, s in enumerate(seqs):
                embeds[i, :s.shape[0]] = s
                mask[i, :s.shape[0]] = 1
            return embeds, mask

    try:
        AutoConfig.register("clip_t5", CLIPT5Config)
    except ValueError:  # already registered (by this module earlier, or by the original package)
        pass
    _CLASSES = (CLIPT5Config, CLIPT5ForConditionalGeneration)
    return _CLASSES


_CLASSES = None


def config_class():
    """:class:`CLIPT5Config` (the ``clip_t5`` config, registered with ``AutoConfig`` on first use).

    Returns
    -------
    type
        A subclass of transformers' ``T5Config`` with LLaVA's ``mm_*`` entries (imports transformers).
    """
    return _clip_t5_classes()[0]


def model_class():
    """:class:`CLIPT5ForConditionalGeneration`, Flan-T5 whose encoder reads CLIP patch features.

    Returns
    -------
    type
        A subclass of transformers' ``T5ForConditionalGeneration`` (built on first use; imports
        transformers).
    """
    return _clip_t5_classes()[1]


class _DropLoadReport(logging.Filter):
    """Drops transformers' load report (a filter, not a log level: from_pretrained reads the level)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "LOAD REPORT" not in str(record.msg)


def load_clip_t5(model_id: str, spec, *, dtype=None, revision: str | None = None, vision_tower: str | None = None,
                 tokenizer: str | None = None):
    """Model, tokenizer and image processor of a CLIP-FlanT5 checkpoint (hub id or folder).

    ``vision_tower`` overrides the config's ``mm_vision_tower`` (e.g. a local copy of
    ``openai/clip-vit-large-patch14-336``); ``tokenizer`` names the T5 tokenizer when the checkpoint has
    none (default for the released checkpoints: the Flan-T5 they were trained from, as t2v_metrics loads).

    A checkpoint without the tower's weights gets them from the tower's own checkpoint; a local checkpoint
    whose config names a hub tower looks for a copy beside it
    (:func:`~ts2viz.metrics.backbones.vqa.llava.find_vision_tower`). The image processor is the tower's, on
    PIL resizing (as the original's transformers 4). The vocabulary is cut to the tokenizer's length as
    the original's ``resize_token_embeddings`` did (:func:`truncate_vocabulary`). Unused checkpoint weights
    are warned about.

    Parameters
    ----------
    model_id : str
        The hub id or local folder of the checkpoint.
    spec : Spec
        The metric's parsed spec (for messages and hub access).
    dtype : torch.dtype, optional
        The weights' dtype.
    revision : str or None, optional
        The hub revision.
    vision_tower : str or None, optional
        A hub id or folder of the CLIP vision model, instead of the config's ``mm_vision_tower``.
    tokenizer : str or None, optional
        A hub id or folder of the T5 tokenizer (default: the checkpoint's own, else :data:`KNOWN_TOKENIZERS`).

    Returns
    -------
    model : CLIPT5ForConditionalGeneration
        The model, in eval mode.
    tokenizer : transformers.PreTrainedTokenizerBase
        The T5 tokenizer (``model_max_length`` set to the original's context length).
    image_processor : transformers.CLIPImageProcessor
        The vision tower's image processor.

    Raises
    ------
    InputError
        If the config names no vision tower, the weights do not fit the architecture or are missing, a
        local checkpoint has no tokenizer and none is named, or a part cannot be loaded.
    """
    from transformers import (
        AutoTokenizer,
        CLIPImageProcessor,
        CLIPVisionConfig,
        CLIPVisionModel,
    )

    from ...common.pretrained import hf_load, is_local_model

    Config, Model = _clip_t5_classes()
    kw = {"revision": revision} if revision else {}
    cfg = hf_load("CLIP-FlanT5 config", Config.from_pretrained, model_id, spec, **kw)
    tower = vision_tower or cfg.mm_vision_tower
    if not tower:
        raise InputError(f"metric {spec.raw!r}: the CLIP-FlanT5 config names no mm_vision_tower; give ?vision_tower=")
    if not vision_tower and is_local_model(model_id) and not Path(tower).is_dir():
        from .llava import (
            find_vision_tower,  # a copy of the tower beside the checkpoint (offline use)
        )

        tower = find_vision_tower(Path(model_id), tower, None)
    cfg.mm_vision_tower = tower
    vcfg = hf_load("CLIP vision tower config", CLIPVisionConfig.from_pretrained, tower, spec)
    cfg.mm_vision_config = vcfg.to_dict()
    # transformers' load report would list the tower's keys as "newly initialized" when a checkpoint has no
    # tower weights; they are loaded below, and every other missing or unexpected key is reported here.
    report = logging.getLogger("transformers.modeling_utils")  # where from_pretrained logs its load report
    drop_report = _DropLoadReport()
    report.addFilter(drop_report)
    try:
        model, info = hf_load("CLIP-FlanT5 model", Model.from_pretrained, model_id, spec, config=cfg, dtype=dtype,
                              output_loading_info=True, **kw)
    except RuntimeError as e:  # size mismatches: another architecture's weights
        raise InputError(f"metric {spec.raw!r}: {model_id!r} does not fit the CLIP-FlanT5 architecture of its "
                         f"config: {str(e).strip().splitlines()[0][:200]}") from e
    finally:
        report.removeFilter(drop_report)
    unexpected = [k for k in info.get("unexpected_keys", []) if k != "embed_tokens.weight"]
    if unexpected:
        warnings.warn(f"{model_id}: {len(unexpected)} checkpoint weights not used by CLIP-FlanT5 "
                      f"({', '.join(sorted(unexpected)[:3])}{' ...' if len(unexpected) > 3 else ''})", stacklevel=2)
    missing = [k for k in info.get("missing_keys", []) if not k.startswith("vision_tower.")]
    if missing:
        raise InputError(f"metric {spec.raw!r}: {model_id!r} is not a CLIP-FlanT5 checkpoint (missing weights "
                         f"{', '.join(sorted(missing)[:3])}{' ...' if len(missing) > 3 else ''})")
    if any(k.startswith("vision_tower.") for k in info.get("missing_keys", [])):
        clip = hf_load("CLIP vision tower", CLIPVisionModel.from_pretrained, tower, spec, dtype=dtype)
        model.vision_tower.clip.load_state_dict(clip.state_dict(), assign=True)
    # PIL-based resizing, as the original's transformers 4 CLIPImageProcessor (transformers 5's default
    # CLIPImageProcessor resizes with torchvision: pixel values differ by up to a few 1e-2)
    import transformers

    ip_class = getattr(transformers, "CLIPImageProcessorPil", CLIPImageProcessor)
    processor = hf_load("CLIP image processor", ip_class.from_pretrained, tower, spec)
    tok_id = tokenizer
    if tok_id is None:
        has_own = is_local_model(model_id) and any((Path(model_id) / f).exists() for f in
                                                   ("tokenizer.json", "spiece.model", "tokenizer_config.json"))
        if has_own or (not is_local_model(model_id) and model_id not in KNOWN_TOKENIZERS):
            tok_id = model_id
        elif model_id in KNOWN_TOKENIZERS:
            tok_id = KNOWN_TOKENIZERS[model_id]
        else:  # a local copy of a checkpoint saved without its tokenizer (as the released ones were trained)
            raise InputError(f"metric {spec.raw!r}: {model_id!r} has no tokenizer files; name the Flan-T5 it was "
                             "trained from, e.g. ?tokenizer=google/flan-t5-xl (clip-flant5-xl) or "
                             "?tokenizer=google/flan-t5-xxl (clip-flant5-xxl)")
    tok = hf_load("T5 tokenizer", AutoTokenizer.from_pretrained, tok_id, spec)
    tok.model_max_length = CONTEXT_LEN
    # The original resizes the embeddings to the tokenizer (Flan-T5: 32128 rows -> 32100), which drops
    # the unused rows from the softmax's normaliser; so does ts2viz, row by row: transformers 5's
    # resize_token_embeddings ties the LM head to the input embeddings afterwards, which Flan-T5's are not.
    if len(tok) < model.get_input_embeddings().weight.shape[0]:
        truncate_vocabulary(model, len(tok))
    return model.eval(), tok, processor


def truncate_vocabulary(model, n: int) -> None:
    """Keep the first ``n`` rows of a T5 model's input embedding and of its (untied) LM head.

    As the original's ``resize_token_embeddings`` under transformers 4 did; nothing is tied (transformers 5's
    ``resize_token_embeddings`` would tie the LM head to the input embeddings, which Flan-T5's are not).
    The model is changed in place and its ``config.vocab_size`` set to ``n``.

    Parameters
    ----------
    model : transformers.T5ForConditionalGeneration
        The model.
    n : int
        The rows to keep (the tokenizer's length).
    """
    import torch
    from torch import nn

    emb = model.get_input_embeddings()
    new_emb = nn.Embedding(n, emb.weight.shape[1], dtype=emb.weight.dtype, device=emb.weight.device)
    head = model.get_output_embeddings()
    new_head = nn.Linear(head.weight.shape[1], n, bias=False, dtype=head.weight.dtype, device=head.weight.device)
    with torch.no_grad():
        new_emb.weight.copy_(emb.weight[:n])
        new_head.weight.copy_(head.weight[:n])
    model.set_input_embeddings(new_emb)
    model.lm_head = new_head
    model.config.vocab_size = n


_VQA_CLASS = None


def vqa_class():
    """:class:`ClipT5VQA`, CLIP-FlanT5 as a :class:`~ts2viz.metrics.backbones.vqa.model.VQAModel` (built on first use).

    Returns
    -------
    type
        The class (importing it imports :mod:`ts2viz.metrics.backbones.vqa`).
    """
    global _VQA_CLASS
    if _VQA_CLASS is None:
        _VQA_CLASS = _vqa_model_class()
    return _VQA_CLASS


def _vqa_model_class():
    import numpy as np

    from .model import VQAModel

    class ClipT5VQA(VQAModel):
        """CLIP-FlanT5 as a :class:`~ts2viz.metrics.backbones.vqa.model.VQAModel`.

        Prompts in t2v_metrics' ``t5_chat`` format, images padded to square, answers scored by the decoder
        (``</s>`` included).
        """

        generative = True

        @classmethod
        def from_parts(cls, model, tokenizer, image_processor, *, name: str = "in-memory", batch_size: int = 8):
            """The VQA model of an already-built CLIP-FlanT5, its T5 tokenizer and CLIP image processor.

            For example random weights built on the GPU by ``benchmarks/bench_gpu.py``: no download, no
            checkpoint on disk; it computes on its own device in its own dtype.

            Parameters
            ----------
            model : torch.nn.Module
                A CLIP-FlanT5 (:func:`model_class`).
            tokenizer : transformers.PreTrainedTokenizerBase
                Its T5 tokenizer.
            image_processor : transformers.CLIPImageProcessor
                Its CLIP image processor.
            name : str
                The name the metric's config records.
            batch_size : int
                Pairs per forward pass.

            Returns
            -------
            ClipT5VQA
                The VQA model.
            """
            p = next(model.parameters())
            return cls(name, None, str(p.device), p.dtype, batch_size, parts=(model, tokenizer, image_processor))

        def __init__(self, model_id: str, spec, device: str, dtype, batch_size: int, revision=None,
                     vision_tower: str | None = None, tokenizer: str | None = None, parts=None):
            from ...common.pretrained import model_identity

            if parts is None:
                model, tok, proc = load_clip_t5(model_id, spec, dtype=dtype, revision=revision,
                                                vision_tower=vision_tower, tokenizer=tokenizer)
            else:
                model, tok, proc = parts
            self.model = model.to(device)
            self.tokenizer, self.image_processor = tok, proc
            ident = model_identity(model_id, revision, model.config)
            ident["vision_tower"] = model.config.mm_vision_tower
            ident["tokenizer"] = getattr(tok, "name_or_path", None) or model_id
            super().__init__(model_id, ident, device, dtype, batch_size)

        @property
        def config(self) -> dict:
            """The VQA model's config, with the prompt format and image preprocessing named."""
            return {**super().config, "prompt": "t2v_metrics t5_chat", "image": "pad to square (mean colour)"}

        def pixel_values(self, images):
            """The images padded to square (mean colour) and processed, stacked on the device in the model's dtype."""
            import torch

            from ...common.pixels import pixels_of

            px = [pixels_of(im, self.pixel_key, self._pixels) for im in images]
            return torch.stack(px).to(self.device, self.model.dtype)

        def _pixels(self, image):
            from ...common.pixels import processor_pixels

            return processor_pixels(self.image_processor, expand_to_square(image, self.image_processor.image_mean))

        def prepare_image(self, image):
            """The image carrying its padded, processed pixels (every question about it reuses them)."""
            from ...common.pixels import prepared_image

            return prepared_image(image, self.pixel_key, self._pixels(image))

        def _encoder_inputs(self, images, questions):
            from ...common.device import autocast

            rows = [tokens_around_image(chat_question(q), self.tokenizer)[:CONTEXT_LEN] for q in questions]
            with autocast(self.device, self.dtype):
                feats = self.model.encode_images(self.pixel_values(images))
                return self.model.splice(rows, feats)

        def _token_logprobs(self, images, questions, targets: list[list[int]]) -> list:
            """Log P(target token t | image, question, earlier target tokens) for every pair (teacher forced)."""
            import torch

            from ...common.device import autocast

            embeds, mask = self._encoder_inputs(images, questions)
            start = self.model.config.decoder_start_token_id
            pad = self.model.config.pad_token_id
            width = max(len(t) for t in targets)
            dec = torch.full((len(targets), width), pad, dtype=torch.long)
            dmask = torch.zeros((len(targets), width), dtype=torch.long)
            for i, t in enumerate(targets):
                dec[i, 0] = start
                dec[i, 1:len(t)] = torch.tensor(t[:-1], dtype=torch.long)
                dmask[i, :len(t)] = 1
            with autocast(self.device, self.dtype):
                logits = self.model(inputs_embeds=embeds, attention_mask=mask, decoder_input_ids=dec.to(self.device),
                                    decoder_attention_mask=dmask.to(self.device)).logits
            logp = torch.log_softmax(logits.float(), dim=-1).double().cpu()
            return [logp[i, torch.arange(len(t)), torch.tensor(t)].numpy() for i, t in enumerate(targets)]

        def _answer_score(self, images, items):
            import numpy as np

            targets = [tokens_around_image(a, self.tokenizer)[:CONTEXT_LEN] for _, a in items]
            if any(not t or IMAGE_SENTINEL in t for t in targets):
                raise InputError(f"VQA {self.model_id}: an answer must have tokens and no <image>")
            lps = self._token_logprobs(images, [q for q, _ in items], targets)
            return [float(np.exp(lp.mean())) for lp in lps]

        def _yes_prob(self, images, questions):
            import torch

            from ...common.device import autocast

            embeds, mask = self._encoder_inputs(images, questions)
            dec = torch.full((len(questions), 1), self.model.config.decoder_start_token_id, device=self.device)
            with autocast(self.device, self.dtype):
                logits = self.model(inputs_embeds=embeds, attention_mask=mask, decoder_input_ids=dec).logits[:, -1]
            return self._probs_of_yes(logits, self.tokenizer)

        def _answer(self, images, questions, max_new_tokens):
            from ...common.device import autocast

            embeds, mask = self._encoder_inputs(images, questions)
            with autocast(self.device, self.dtype):
                out = self.model.generate(inputs_embeds=embeds, attention_mask=mask, max_new_tokens=max_new_tokens,
                                          do_sample=False, num_beams=1)
            return [s.strip() for s in self.tokenizer.batch_decode(out, skip_special_tokens=True)]

        def _choice_logprobs(self, images, items):
            """Sum of the decoder's log-probabilities of a choice's tokens and ``</s>``, over the choice's spellings.

            ``</s>`` is included as the model was trained to end answers with it.
            """
            eos = self.tokenizer.eos_token_id
            keys = [(i, (*ids, eos)) for i, (_, cs) in enumerate(items) for c in cs
                    for ids in self.choice_token_ids(self.tokenizer, c)]
            keys = list(dict.fromkeys(keys))
            lps = self._token_logprobs([images[i] for i, _ in keys], [items[i][0] for i, _ in keys],
                                       [list(t) for _, t in keys])
            seq = {k: float(lp.sum()) for k, lp in zip(keys, lps)}
            return [[float(np.logaddexp.reduce([seq[(i, (*ids, eos))] for ids in self.choice_token_ids(self.tokenizer, c)]))
                     for c in cs] for i, (_, cs) in enumerate(items)]

    return ClipT5VQA


def load_clip_t5_vqa(model_id: str, spec, device: str, dtype, batch_size: int, revision=None,
                     vision_tower: str | None = None, tokenizer: str | None = None):
    """A CLIP-FlanT5 :class:`~ts2viz.metrics.backbones.vqa.model.VQAModel` on ``device``.

    Parameters
    ----------
    model_id : str
        The hub id or local folder of the checkpoint.
    spec : Spec
        The metric's parsed spec.
    device : str
        The torch device.
    dtype : torch.dtype
        The weights' and compute dtype.
    batch_size : int
        Pairs per forward pass.
    revision : str or None, optional
        The hub revision.
    vision_tower, tokenizer : str or None, optional
        As :func:`load_clip_t5`'s.

    Returns
    -------
    ClipT5VQA
        The VQA model (:func:`vqa_class`).

    Raises
    ------
    InputError
        If the checkpoint cannot be loaded (:func:`load_clip_t5`).
    """
    return vqa_class()(model_id, spec, device, dtype, batch_size, revision, vision_tower, tokenizer)
