"""ImageReward (Xu et al., 2023): a BLIP image-grounded text encoder with an MLP head.

The model was trained on 137k expert comparisons of generated images.

The score of an image is what ``ImageReward.score`` computes: the prompt (BERT tokenizer, padded to 35
tokens, truncated) runs through BLIP's text encoder with cross-attention to the image's ViT-L/16
features; the [CLS] state goes through the five-layer linear MLP, and the result is standardised with the
authors' fixed constants, ``(r - 0.16717362830052426) / 1.0333394966054072``. Unbounded; about N(0, 1) over
the authors' generated images (higher is better).

Images are preprocessed as the original: resized so that the shorter side is 224 (bicubic, PIL),
centre-cropped to 224, normalised with OpenAI CLIP's mean and std.

The released checkpoint is ``THUDM/ImageReward``: ``ImageReward.pt`` (a state dict of the authors'
``ImageReward`` module) and ``med_config.json`` (the text encoder's BERT configuration). The tokenizer
comes from another repository, ``bert-base-uncased`` (option ``tokenizer``), with BLIP's two added
tokens ``[DEC]`` and ``[ENC]``. ts2viz loads the checkpoint into transformers' BLIP vision and text models
(the same layers under other names), in float32 as the original.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ...errors import InputError
from ...hub import is_hub_id, model_hub_id
from ..common.base import Metric
from ..common.device import dtype_name, resolve_device, resolve_dtype
from ..common.hubfiles import file_identity, local_or_hub_file
from ..common.image_mode import DEFAULT as IMAGE_MODE
from ..common.image_mode import option as image_mode_option
from ..common.image_mode import reading as image_reading
from ..common.pretrained import hf_load
from ..common.spec import Spec
from ..family import Card, Family, Fidelity, Option

REPO = "THUDM/ImageReward"
CHECKPOINT, MED_CONFIG = "ImageReward.pt", "med_config.json"
TOKENIZER = "bert-base-uncased"
#: ImageReward's normalisation constants (``ImageReward.mean``, ``ImageReward.std``)
MEAN, STD = 0.16717362830052426, 1.0333394966054072
TEXT_LENGTH = 35
IMAGE_SIZE = 224
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
DEFAULT_BATCH = {"cpu": 8, "cuda": 64, "mps": 16}
#: how ImageReward's ``_transform`` reads a non-RGB image: in its own mode through ``Resize`` and
#: ``CenterCrop``, then ``convert("RGB")`` (:meth:`ImageReward.prepare` does the same)
ORIGINAL_READING = "decoded"
_T = "tests/metrics/reference/test_imagereward_reference.py::"
_M = "tests/metrics/reference/test_image_modes_reference.py::"

CARD = Card(
    summary=("ImageReward: BLIP's image-grounded text encoder (ViT-L/16 image features, BERT with cross-attention) "
             "and an MLP head trained on 137k expert comparisons of generated images. The score is what "
             "`ImageReward.score` computes: the head's output for the prompt's [CLS] state, standardised with the "
             "authors' fixed mean and std."),
    paper=("J. Xu, X. Liu, Y. Wu, Y. Tong, Q. Li, M. Ding, J. Tang, Y. Dong. ImageReward: Learning and Evaluating "
           "Human Preferences for Text-to-Image Generation. NeurIPS 2023. https://arxiv.org/abs/2304.05977"),
    citation="""@inproceedings{xu2023imagereward,
  title     = {ImageReward: Learning and Evaluating Human Preferences for Text-to-Image Generation},
  author    = {Xu, Jiazheng and Liu, Xiao and Wu, Yuchen and Tong, Yuxuan and Li, Qinkai and Ding, Ming
               and Tang, Jie and Dong, Yuxiao},
  booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
  year      = {2023}
}""",
    original=("THUDM/ImageReward, PyPI `image-reward` 1.5: `ImageReward/ImageReward.py` (`ImageReward.score`, "
              "`inference_rank`, `MLP`), `ImageReward/utils.py` (`load`), `ImageReward/models/BLIP/` (BLIP's ViT, "
              "`med.py`, `init_tokenizer`)."),
    fixture=('`tests/fixtures/reference/imagereward/`: PyPI `image-reward` 1.5 (`ImageReward.score`, '
             '`inference_rank`) on transformers 4.30.2, timm 0.6.13, on a tiny BLIP in the released '
             'layout. Image modes (L, LA, RGBA, P, I;16, CMYK, an EXIF-rotated JPEG): compared, '
             '`modes/` (the option `image_mode`).'),
    output_range="unbounded; standardised to about N(0, 1) over the authors' generated images (real use: about -2 to 2)",
    higher_is_better=True,
    options=(
        Option("tokenizer", TOKENIZER,
               "Where the BERT tokenizer comes from: the authors load `bert-base-uncased` and add `[DEC]` and "
               "`[ENC]`. A hub id or a local copy of that folder; offline without it, loading fails with a "
               "one-line error that names this option."),
        Option("batch_size", None, "Images per model call (default 8 on the CPU, 64 on CUDA; halved on GPU "
               "out-of-memory)."),
        Option("dtype", None, "Precision: `float32` (default on any device, as the original), `float16` or "
               "`bfloat16`.", ("float32", "float16", "bfloat16")),
        image_mode_option("resized and centre-cropped in the image's own mode, converted to RGB after, as "
                          "ImageReward's `_transform` (a palette image resized by nearest neighbour, an alpha "
                          "image premultiplied, a 16-bit PNG clipped at 255 after the resize)."),
    ),
    fidelity=(
        Fidelity("score", "`(MLP([CLS] state) - 0.16717362830052426) / 1.0333394966054072`", "as the original", "",
                 f"{_T}test_score_is_image_rewards_normalised_mlp_reward"),
        Fidelity("prompt", "`bert-base-uncased` with `[DEC]` and `[ENC]` added, padded to 35 tokens, truncated",
                 "as the original", "tokenizer", f"{_T}test_score_is_image_rewards_normalised_mlp_reward"),
        Fidelity("image preprocessing", "shorter side 224 (PIL bicubic), centre crop 224, OpenAI mean and std",
                 "as the original", "", f"{_T}test_score_is_image_rewards_normalised_mlp_reward"),
        Fidelity("model", "the released `ImageReward.pt` in transformers' BLIP vision and text models (the same "
                 "layers under transformers' names) and the MLP", "as the original", "",
                 f"{_T}test_score_is_image_rewards_normalised_mlp_reward"),
        Fidelity("batching", "images in batches (the original scores one image per call, or loops over them in "
                 "`inference_rank`): the same numbers", "as the original", "batch_size",
                 f"{_T}test_batched_scores_are_inference_ranks_rewards"),
        Fidelity("precision", "float32, as the original (GPU too)", "as the original", "dtype"),
        Fidelity("images of other modes", "`image_mode=original` (default): resized and cropped in the image's own "
                 "mode, converted to RGB after, as `_transform`: `L`, `LA`, `RGBA`, `P`, `CMYK` and `I;16` score as "
                 "the original. `image_mode=ts2viz`: converted first (`I;16` scaled to 8 bits, not clipped): on the "
                 "fixture's tiny model `I;16`, `LA`, `RGBA` and `P` then differ (relative 1e-2 to 1.3), `L` and "
                 "`CMYK` agree within 1e-4. No EXIF rotation in either, as the original.", "as the original",
                 "image_mode", f"{_M}test_default_image_mode_scores_every_mode_as_the_original, {_M}test_image_mode_ts2viz_scores_the_copy_ts2viz_reads, {_M}test_the_modes_that_differ_are_the_ones_the_card_names"),
        Fidelity("tokenizer from another repository", "`tokenizer=` names it; offline without it a one-line error "
                 "names the option", "as the original", "tokenizer",
                 f"{_T}test_tokenizer_from_another_repository_offline_says_which_option"),
    ),
    limitations=(
        "Prompts are cut at 35 BERT tokens (about 30 words): the rest of a long prompt is not seen.",
        "Trained on DiffusionDB's Stable Diffusion images and prompts; generators optimised against it (ReFL) "
        "learn to exploit it.",
        "The vision tower's attention heads are taken as its width / 64 (ViT-L: 16), true of the released model; "
        "another BLIP size would need its own.",
        "No real checkpoint was loaded on the build machine (no hub access): the released layout was rebuilt with "
        "random weights, and the scores agree with image-reward's own code on it to 1e-5 relative.",
    ),
    model_names={"imagereward-v1.0": REPO},
    precision="float32",
    description="""`imagereward:imagereward-v1.0` is `THUDM/ImageReward` (`ImageReward.pt` and `med_config.json`,
the files the authors' `ImageReward.load("ImageReward-v1.0")` downloads); MODEL may also be that hub id or a
local folder holding the two files. The tokenizer comes from `bert-base-uncased`, as in the authors' code, or
from `?tokenizer=` (a local copy).

```python
from ts2viz import metrics
ir = metrics.load("imagereward:imagereward-v1.0", device="cuda")
scores = ir(images=["a.png", "b.png"], prompts=["a red cat", "two dogs"])
```
""",
)


def build(spec: Spec, device: str | None = None, *, tokenizer: str = TOKENIZER, batch_size: int | None = None,
          dtype: str | None = None, image_mode: str = IMAGE_MODE) -> Metric:
    """The ``imagereward:`` metric of ``spec``.

    ``imagereward:MODEL[?tokenizer=ID_OR_FOLDER&batch_size=N&dtype=float32&image_mode=original|ts2viz]``; the options' meaning is on
    the family's card (:data:`CARD`).

    Parameters
    ----------
    spec : Spec
        The parsed spec; MODEL is ``imagereward-v1.0``, the hub repository ``THUDM/ImageReward`` or a
        local folder holding ``ImageReward.pt`` and ``med_config.json``.
    device : str or None, optional
        ``cuda``, ``cpu``, ``mps`` or None (the best available).
    tokenizer : str, default "bert-base-uncased"
        Where the BERT tokenizer comes from (hub id or folder).
    batch_size : int or None, optional
        Images per model call (None: 8 on the CPU, 64 on CUDA).
    dtype : str or None, optional
        The model's dtype (None: the card's float32).
    image_mode : str, default "original"
        How a non-RGB image is read (:mod:`ts2viz.metrics.common.image_mode`): ``original`` as image-reward does (resized and cropped in the image's own mode, converted to RGB
        after),
        ``ts2viz`` by :func:`ts2viz.imaging.as_rgb`.

    Returns
    -------
    ImageReward
        The metric; ``metric(images, prompts)`` gives one float64 reward per image (NaN for an unreadable
        image).

    Raises
    ------
    InputError
        Files that cannot be found or had (one line; for the tokenizer it names the ``tokenizer`` option),
        a checkpoint that is not ImageReward's, or a tokenizer that does not fit its text encoder.
    """
    return ImageReward(spec, device, tokenizer=tokenizer, batch_size=batch_size, dtype=dtype, image_mode=image_mode)


def _files(spec: Spec) -> tuple[str, str, str | None]:
    repo = model_hub_id(spec.model, CARD.model_names)
    place = repo or spec.model
    if not repo and not Path(os.path.expanduser(place)).is_dir() and not is_hub_id(place):
        raise InputError(f"metric {spec.raw!r}: expected imagereward-v1.0, a hub repository or a folder holding "
                         f"{CHECKPOINT} and {MED_CONFIG}; got {spec.model!r}")
    ckpt = local_or_hub_file(spec, place, CHECKPOINT, "checkpoint", spec.revision)
    med = local_or_hub_file(spec, place, MED_CONFIG, "text encoder configuration", spec.revision)
    return ckpt, med, (place if is_hub_id(place) and not Path(os.path.expanduser(place)).exists() else None)


class ImageReward(Metric):
    """ImageReward on transformers' ``BlipVisionModel`` and ``BlipTextModel`` plus the authors' MLP head.

    The checkpoint's keys are mapped onto transformers' names when it is loaded; the architecture's sizes
    are read from the checkpoint and ``med_config.json``. See :func:`build`.

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    tokenizer, batch_size, dtype, image_mode
        As :func:`build` takes them.

    Raises
    ------
    InputError
        As :func:`build` says.
    """

    name = "imagereward"

    def __init__(self, spec: Spec, device: str | None = None, *, tokenizer: str = TOKENIZER,
                 batch_size: int | None = None, dtype: str | None = None, image_mode: str = IMAGE_MODE):
        import torch
        from transformers import BertTokenizer

        reads = image_reading(image_mode, ORIGINAL_READING, spec.raw)
        dev = resolve_device(device)
        dt = resolve_dtype(dev, dtype)
        ckpt, med_path, repo = _files(spec)
        try:
            med = json.loads(Path(med_path).read_text())
            state = torch.load(ckpt, map_location="cpu", weights_only=True)
        except (OSError, ValueError, RuntimeError) as e:
            raise InputError(f"metric {spec.raw!r}: cannot read {ckpt!r} / {med_path!r}: {e}") from e
        vision, text, head = _modules(spec, state, med)
        self.vision, self.text, self.head = (m.to(dev, dt).eval() for m in (vision, text, head))
        tok = str(tokenizer)
        # the vocabulary is looked for first: offline, transformers 5 would build an empty tokenizer
        vocab = local_or_hub_file(spec, tok, "vocab.txt", "tokenizer vocabulary", option="tokenizer",
                                  note="ImageReward's tokenizer comes from another repository")
        self.tokenizer = hf_load("tokenizer", BertTokenizer.from_pretrained, str(Path(vocab).parent), spec)
        # BLIP's init_tokenizer: a [DEC] beginning-of-sequence token and an [ENC] token
        self.tokenizer.add_special_tokens({"bos_token": "[DEC]"})
        self.tokenizer.add_special_tokens({"additional_special_tokens": ["[ENC]"]})
        if len(self.tokenizer) != text.config.vocab_size:
            raise InputError(f"metric {spec.raw!r}: the tokenizer {tok!r} has {len(self.tokenizer)} tokens with "
                             f"[DEC] and [ENC], the text encoder {text.config.vocab_size}: not ImageReward's tokenizer")
        config = {"family": "imagereward", **file_identity(ckpt, repo, spec.revision if repo else None),
                  "tokenizer": tok, "text_length": TEXT_LENGTH, "mean": MEAN, "std": STD,
                  "dtype": dtype_name(dt), "image_mode": image_mode}
        super().__init__(spec, config, dev, batch_size or DEFAULT_BATCH.get(dev.split(":")[0], 8))
        self.image_reading = reads
        self.dtype = dt

    def prepare(self, image, file_name: str | None = None):
        """ImageReward's image transform: shorter side to 224 (bicubic, PIL), centre crop to 224, CLIP normalisation.

        Parameters
        ----------
        image : PIL.Image.Image
            The image, in its own mode with ``image_mode=original`` (resized and cropped in it, converted to
            RGB after, as the original), RGB with ``ts2viz``.
        file_name : str or None, optional
            The image's file name (unused).

        Returns
        -------
        torch.Tensor
            ``(3, 224, 224)``, the model's input.
        """
        from PIL import Image
        from torchvision.transforms import functional as F

        w, h = image.size
        # torchvision's Resize(224) on a PIL image: shorter side to 224, the other int(224 * long / short)
        if w <= h:
            size = (IMAGE_SIZE, int(IMAGE_SIZE * h / w))
        else:
            size = (int(IMAGE_SIZE * w / h), IMAGE_SIZE)
        im = image.resize(size, Image.BICUBIC) if size != (w, h) else image
        im = F.center_crop(im, [IMAGE_SIZE, IMAGE_SIZE]).convert("RGB")
        return F.normalize(F.to_tensor(im), CLIP_MEAN, CLIP_STD)

    def score_prepared(self, items, prompts) -> np.ndarray:
        """The standardised rewards of a batch of images with their prompts.

        Parameters
        ----------
        items : sequence
            The prepared images (:meth:`prepare`).
        prompts : sequence of str
            One prompt per image (padded or truncated to 35 tokens).

        Returns
        -------
        numpy.ndarray
            One float64 reward per image, ``(r - MEAN) / STD``.
        """
        import torch

        with torch.inference_mode():
            pix = torch.stack(list(items)).to(self.device, self.dtype)
            image_embeds = self.vision(pixel_values=pix).last_hidden_state
            enc = self.tokenizer(list(prompts), padding="max_length", truncation=True, max_length=TEXT_LENGTH,
                                 return_tensors="pt").to(self.device)
            image_atts = torch.ones(image_embeds.shape[:-1], dtype=torch.long, device=self.device)
            out = self.text(input_ids=enc.input_ids, attention_mask=enc.attention_mask,
                            encoder_hidden_states=image_embeds, encoder_attention_mask=image_atts, is_decoder=False)
            cls = out.last_hidden_state[:, 0, :].float()
            rewards = self.head(cls.to(self.dtype)).float()[:, 0]
            rewards = (rewards - MEAN) / STD
        return rewards.double().cpu().numpy()


def _modules(spec: Spec, state: dict, med: dict):
    """The BLIP vision and text models (transformers') and the MLP head, with the checkpoint's weights."""
    import torch
    from transformers import (
        BlipTextConfig,
        BlipTextModel,
        BlipVisionConfig,
        BlipVisionModel,
    )

    def need(key):
        if key not in state:
            raise InputError(f"metric {spec.raw!r}: not an ImageReward checkpoint (no {key})")
        return state[key]

    v = "blip.visual_encoder."
    width = need(v + "cls_token").shape[-1]
    depth = len({k.split(".")[3] for k in state if k.startswith(v + "blocks.")})
    patch = need(v + "patch_embed.proj.weight").shape[-1]
    n_pos = need(v + "pos_embed").shape[1]
    image_size = int(round((n_pos - 1) ** 0.5)) * patch
    vcfg = BlipVisionConfig(hidden_size=width, intermediate_size=need(v + "blocks.0.mlp.fc1.weight").shape[0],
                            num_hidden_layers=depth, num_attention_heads=max(1, width // 64), image_size=image_size,
                            patch_size=patch, hidden_act="gelu", layer_norm_eps=1e-6, attention_dropout=0.0)
    vision = BlipVisionModel(vcfg)
    vmap = {"cls_token": "embeddings.class_embedding", "pos_embed": "embeddings.position_embedding",
            "patch_embed.proj.weight": "embeddings.patch_embedding.weight",
            "patch_embed.proj.bias": "embeddings.patch_embedding.bias",
            "norm.weight": "post_layernorm.weight", "norm.bias": "post_layernorm.bias"}
    block = {"norm1": "layer_norm1", "norm2": "layer_norm2", "attn.qkv": "self_attn.qkv",
             "attn.proj": "self_attn.projection", "mlp.fc1": "mlp.fc1", "mlp.fc2": "mlp.fc2"}
    vsd = {}
    for k, t in state.items():
        if not k.startswith(v):
            continue
        name = k[len(v):]
        if name in vmap:
            vsd[vmap[name]] = t
        elif name.startswith("blocks."):
            _, i, rest = name.split(".", 2)
            part, _, leaf = rest.rpartition(".")
            vsd[f"encoder.layers.{i}.{block[part]}.{leaf}"] = t
    _load(spec, vision, vsd, "vision encoder")

    tcfg = BlipTextConfig(vocab_size=med["vocab_size"], hidden_size=med["hidden_size"],
                          encoder_hidden_size=width, intermediate_size=med["intermediate_size"],
                          num_hidden_layers=med["num_hidden_layers"], num_attention_heads=med["num_attention_heads"],
                          max_position_embeddings=med["max_position_embeddings"], hidden_act=med.get("hidden_act", "gelu"),
                          layer_norm_eps=med.get("layer_norm_eps", 1e-12), pad_token_id=med.get("pad_token_id", 0),
                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, is_decoder=True,
                          bos_token_id=None, eos_token_id=None, sep_token_id=None)
    text = BlipTextModel(tcfg, add_pooling_layer=False)
    t = "blip.text_encoder."
    tsd = {k[len(t):]: x for k, x in state.items() if k.startswith(t) and not k.endswith("position_ids")}
    _load(spec, text, tsd, "text encoder")

    lin = sorted({int(k.split(".")[2]) for k in state if k.startswith("mlp.layers.")})
    layers, prev = [], None
    for i in lin:
        w = state[f"mlp.layers.{i}.weight"]
        while prev is not None and len(layers) < i:
            layers.append(torch.nn.Identity())  # the authors' Dropout slots (identity when evaluating)
        layers.append(torch.nn.Linear(w.shape[1], w.shape[0]))
        prev = i
    head = torch.nn.Sequential(*layers)
    _load(spec, head, {k[len("mlp.layers."):]: x for k, x in state.items() if k.startswith("mlp.layers.")}, "MLP head")
    if not lin or state[f"mlp.layers.{lin[-1]}.weight"].shape[0] != 1:
        raise InputError(f"metric {spec.raw!r}: not an ImageReward checkpoint (its MLP head does not end in one output)")
    return vision, text, head


def _load(spec: Spec, module, sd: dict, what: str) -> None:
    try:
        missing, unexpected = module.load_state_dict(sd, strict=False)
    except RuntimeError as e:
        raise InputError(f"metric {spec.raw!r}: the checkpoint's {what} does not fit: "
                         f"{(str(e).strip().splitlines() or ['?'])[-1].strip()[:300]}") from e
    missing = [k for k in missing if not k.endswith("position_ids")]
    if missing or unexpected:
        raise InputError(f"metric {spec.raw!r}: the checkpoint's {what} does not fit "
                         f"(missing {missing[:3]}, unexpected {unexpected[:3]})")


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('imagereward',
                "ImageReward: BLIP image-grounded text encoder + MLP reward, standardised with the authors' mean and "
                'std',
                build, CARD, example='imagereward:imagereward-v1.0', group='preference', hub_model=True,
                display='ImageReward')
