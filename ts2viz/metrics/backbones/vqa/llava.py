r"""LLaVA-1.5 checkpoints in LLaVA's own code layout (``liuhaotian/llava-v1.5-7b``), as t2v_metrics loads them.

haotian-liu/LLaVA saves ``LlavaLlamaForCausalLM``: a Llama whose ``model`` also holds ``mm_projector``
(``mlp2x_gelu``: Linear, GELU, Linear as ``mm_projector.0`` / ``mm_projector.2``), and a config naming the
CLIP vision tower (``mm_vision_tower``, e.g. ``openai/clip-vit-large-patch14-336``), its layer
(``mm_vision_select_layer``) and features (``mm_vision_select_feature``: ``patch`` drops CLS). The tower
is not in the checkpoint: LLaVA builds it from that name (``CLIPVisionModel`` + ``CLIPImageProcessor``).
The image goes where the prompt says ``<image>``, which LLaVA's tokenizer does not know (its code splices
the features in at a sentinel id).

:func:`load_original_llava` converts such a folder into transformers' ``LlavaForConditionalGeneration``
(key by key, :func:`convert_state_dict`) and a ``LlavaProcessor``. The ``<image>`` token is appended to
the tokenizer; its embedding and LM-head rows are zero and never scored: :attr:`text_vocab` tells the
VQA backend to take the softmax over the original vocabulary only, so every probability is the
original model's. The tower comes from ``?vision_tower=FOLDER``, else ``mm_vision_tower`` when it is a
folder, else a folder beside the checkpoint named as the tower's last path part (``…/clip-vit-large-
patch14-336``), else the hub.

LLaVA-1.5's input conventions, which t2v_metrics uses for both its LLaVA-1.5 and CLIP-FlanT5 VQAScore,
live here too: the system message and ``USER: <image>\n... ASSISTANT:`` turn (:func:`chat_question`),
the ``<image>`` placeholder and the id that stands for it in token lists, the context length, and the
square padding of images (:func:`expand_to_square`).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from ....errors import InputError
from ...common.spec import Spec

# -- LLaVA-1.5's prompt format (t2v_metrics' LLaVA-1.5 and CLIP-FlanT5) -----------------------------

#: the placeholder t2v_metrics writes where the image goes (LLaVA's DEFAULT_IMAGE_TOKEN)
IMAGE_PLACEHOLDER = "<image>"
#: the id t2v_metrics gives that placeholder in token lists (LLaVA's IMAGE_TOKEN_INDEX)
IMAGE_SENTINEL = -200
#: LLaVA-1.5's system message, which t2v_metrics puts before CLIP-FlanT5's and LLaVA-1.5's questions
SYSTEM_MESSAGE = ("A chat between a curious user and an artificial intelligence assistant. The assistant gives "
                  "helpful, detailed, and polite answers to the user's questions.")
#: token budget t2v_metrics truncates CLIP-FlanT5's prompts and answers to (its CONTEXT_LEN)
CONTEXT_LEN = 2048


def chat_question(question: str) -> str:
    r"""The stage-2 conversation turn before the answer (t2v_metrics' ``chat`` / ``t5_chat``).

    Parameters
    ----------
    question : str
        The question.

    Returns
    -------
    str
        :data:`SYSTEM_MESSAGE`, ``USER: <image>``, a newline, the question, ``ASSISTANT:`` and a space.

    Examples
    --------
    >>> chat_question("Is it red?").endswith("USER: <image>\nIs it red? ASSISTANT: ")
    True
    """
    return f"{SYSTEM_MESSAGE} USER: {IMAGE_PLACEHOLDER}\n{question} ASSISTANT: "


def expand_to_square(image, mean: Sequence[float]):
    """``image`` centred on a square canvas of the processor's mean colour.

    LLaVA-1.5's ``expand2square``, which t2v_metrics applies before CLIP-FlanT5's and LLaVA-1.5's image
    processor. The mean colour is ``int(m * 255)`` per channel.

    Parameters
    ----------
    image : PIL.Image.Image
        The image (RGB).
    mean : sequence of float
        The processor's mean, in [0, 1] per channel.

    Returns
    -------
    PIL.Image.Image
        ``image`` itself if it is square, else a new square image of side ``max(width, height)``.

    Examples
    --------
    >>> from PIL import Image
    >>> sq = expand_to_square(Image.new("RGB", (4, 2), (255, 0, 0)), (0.5, 0.5, 0.5))
    >>> sq.size, sq.getpixel((0, 0)), sq.getpixel((0, 1))
    ((4, 4), (127, 127, 127), (255, 0, 0))
    """
    from PIL import Image

    w, h = image.size
    if w == h:
        return image
    side = max(w, h)
    canvas = Image.new(image.mode, (side, side), tuple(int(x * 255) for x in mean))
    canvas.paste(image, ((side - w) // 2, (side - h) // 2))
    return canvas


@contextmanager
def layers_up_to(clip, layer: int) -> Iterator[int]:
    """Inside the block, ``clip``'s encoder runs only the layers that feature layer ``layer`` needs.

    LLaVA-1.5 and CLIP-FlanT5 read the CLIP tower's ``hidden_states[layer]`` (-2: the penultimate layer's
    output), so the layers after it are computed for nothing. In the block the encoder holds its first layers
    only; the tower's ``last_hidden_state`` is then ``hidden_states[layer]`` of the whole tower (CLIP's post
    layer norm acts on the pooled output only), and ``hidden_states[-1]`` is too. The layers are put back
    when the block ends.

    Parameters
    ----------
    clip : transformers.CLIPVisionModel
        The tower (``vision_model.encoder.layers``, or ``encoder.layers`` where transformers flattened it).
    layer : int
        The feature layer, an index into the whole tower's ``hidden_states`` (0: the embeddings).

    Yields
    ------
    int
        The number of layers kept.

    Raises
    ------
    InputError
        If ``layer`` is outside the tower's ``hidden_states``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from torch import nn
    >>> tower = SimpleNamespace(encoder=SimpleNamespace(layers=nn.ModuleList([nn.Identity()] * 4)))
    >>> with layers_up_to(tower, -2) as kept:
    ...     kept, len(tower.encoder.layers)
    (3, 3)
    >>> len(tower.encoder.layers)
    4
    """
    from torch import nn

    enc = clip.vision_model.encoder if hasattr(clip, "vision_model") else clip.encoder
    every = enc.layers
    keep = layer if layer >= 0 else len(every) + 1 + layer
    if not 0 <= keep <= len(every):
        raise InputError(f"vision feature layer {layer} is outside the tower's {len(every) + 1} hidden states")
    enc.layers = nn.ModuleList(list(every)[:keep])
    try:
        yield keep
    finally:
        enc.layers = every


# -- LLaVA's own checkpoint layout -----------------------------------------------------------------

#: original key prefix -> transformers ``LlavaForConditionalGeneration`` key prefix (first match wins)
KEY_MAP: tuple[tuple[str, str], ...] = (
    ("model.mm_projector.0.", "model.multi_modal_projector.linear_1."),
    ("model.mm_projector.2.", "model.multi_modal_projector.linear_2."),
    ("model.vision_tower.", ""),            # the tower's own weights: see :func:`tower_state`
    ("model.image_newline", ""),            # LLaVA-1.6's anyres newline: unused as t2v_metrics scores it
    ("model.", "model.language_model."),
    ("lm_head.", "lm_head."),
)


#: the ``model_type`` LLaVA's code writes: ``llava`` (the LLaVA-1.5 releases), ``llava_llama`` (its code since v1.6)
ORIGINAL_MODEL_TYPES = ("llava", "llava_llama")


def is_original_layout(raw_config: dict) -> bool:
    """Whether a ``config.json`` is LLaVA's own code layout (``LlavaLlamaForCausalLM``, ``mm_*`` keys).

    Parameters
    ----------
    raw_config : dict
        The checkpoint's ``config.json``, as read.

    Returns
    -------
    bool
        True if its ``model_type`` is one of :data:`ORIGINAL_MODEL_TYPES` and it names an ``mm_vision_tower``.

    Examples
    --------
    >>> is_original_layout({"model_type": "llava", "mm_vision_tower": "openai/clip-vit-large-patch14-336"})
    True
    >>> is_original_layout({"model_type": "llava", "vision_config": {}})
    False
    """
    return raw_config.get("model_type") in ORIGINAL_MODEL_TYPES and bool(raw_config.get("mm_vision_tower"))


def convert_state_dict(state: dict) -> dict:
    """Original LLaVA keys -> transformers' (:data:`KEY_MAP`); tower and newline keys dropped, unknown keys refused.

    Parameters
    ----------
    state : dict
        The checkpoint's state dict (original key -> tensor).

    Returns
    -------
    dict
        The same tensors under ``LlavaForConditionalGeneration``'s keys, without the vision tower's and
        ``image_newline``.

    Raises
    ------
    InputError
        For a key none of :data:`KEY_MAP` matches.

    Examples
    --------
    >>> sorted(convert_state_dict({"model.mm_projector.0.weight": 1, "model.layers.0.mlp.up_proj.weight": 2,
    ...                            "model.vision_tower.vision_tower.x": 3, "lm_head.weight": 4}))
    ['lm_head.weight', 'model.language_model.layers.0.mlp.up_proj.weight', 'model.multi_modal_projector.linear_1.weight']
    """
    out = {}
    for k, v in state.items():
        for old, new in KEY_MAP:
            if k.startswith(old):
                if new:
                    out[new + k[len(old):]] = v
                break
        else:
            raise InputError(f"LLaVA checkpoint: unexpected weight {k!r} (expected LLaVA-1.5's "
                             "model.*, model.mm_projector.*, lm_head.*)")
    return out


def tower_state(state: dict, clip_keys) -> dict:
    """The vision tower's weights saved in the checkpoint, keyed as this transformers version's CLIPVisionModel.

    LLaVA-1.6 saves its fine-tuned tower as ``model.vision_tower.vision_tower.*``; LLaVA-1.5 saves none.
    ``position_ids`` buffers are skipped.

    Parameters
    ----------
    state : dict
        The checkpoint's state dict (original keys).
    clip_keys : iterable of str
        The keys of the tower's ``CLIPVisionModel`` state dict (with or without a ``vision_model.`` prefix).

    Returns
    -------
    dict
        The tower's tensors under ``clip_keys``' names; empty when the checkpoint has none.

    Raises
    ------
    InputError
        If a saved tower weight has no counterpart in ``clip_keys``.
    """
    prefix = "model.vision_tower.vision_tower."
    found = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
    if not found:
        return {}
    clip_keys = set(clip_keys)
    out = {}
    for k, v in found.items():
        if k.endswith("position_ids"):
            continue
        key = k if k in clip_keys else k.removeprefix("vision_model.")
        if key not in clip_keys:
            raise InputError(f"LLaVA checkpoint: vision tower weight {k!r} does not fit the tower's CLIP model")
        out[key] = v
    return out


def local_snapshot(model_id: str, spec: Spec, revision: str | None = None) -> Path:
    """A hub checkpoint in LLaVA's own layout as a local folder (downloaded once).

    The hub cache's snapshot of its config, tokenizer and weights (``*.json``, ``*.bin``, ``*.safetensors``,
    ``tokenizer.model``).

    Parameters
    ----------
    model_id : str
        The hub id (e.g. ``liuhaotian/llava-v1.5-7b``).
    spec : Spec
        The metric's parsed spec (for messages).
    revision : str or None, optional
        The hub revision.

    Returns
    -------
    pathlib.Path
        The snapshot's folder.

    Raises
    ------
    InputError
        If the snapshot cannot be had (:func:`~ts2viz.metrics.common.pretrained.hf_load`).
    """
    from huggingface_hub import snapshot_download

    from ...common.pretrained import hf_load

    def fetch(repo, **kw):
        return snapshot_download(repo, allow_patterns=["*.json", "*.bin", "*.safetensors", "tokenizer.model"], **kw)

    return Path(hf_load("LLaVA checkpoint", fetch, model_id, spec, **({"revision": revision} if revision else {})))


def _read_state(folder: Path) -> dict:
    """Every tensor of the checkpoint folder (safetensors or ``pytorch_model*.bin`` shards)."""
    import torch

    files = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("pytorch_model*.bin"))
    if not files:
        raise InputError(f"LLaVA checkpoint {str(folder)!r}: no *.safetensors or pytorch_model*.bin weights")
    state: dict = {}
    for f in files:
        if f.suffix == ".safetensors":
            from safetensors.torch import load_file

            state.update(load_file(str(f)))
        else:
            state.update(torch.load(str(f), map_location="cpu", weights_only=True))
    return state


def find_vision_tower(folder: Path, named: str, option: str | None) -> str:
    """The vision tower's folder or hub id.

    In order: the option, ``mm_vision_tower`` when it is a folder, a folder (with a ``config.json``) beside or
    inside the checkpoint named as its last path part, else ``named`` itself (a hub id).

    Parameters
    ----------
    folder : pathlib.Path
        The checkpoint's folder.
    named : str
        The config's ``mm_vision_tower``.
    option : str or None
        The ``vision_tower`` option.

    Returns
    -------
    str
        The tower's folder or hub id.

    Raises
    ------
    InputError
        If the option is given and is not a folder.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> find_vision_tower(Path(tempfile.mkdtemp()), "openai/clip-vit-large-patch14-336", None)
    'openai/clip-vit-large-patch14-336'
    """
    if option:
        if not Path(option).is_dir():
            raise InputError(f"vision_tower {option!r}: no such folder (a CLIP vision model folder)")
        return option
    if Path(named).is_dir():
        return named
    leaf = Path(named).name
    for cand in (folder.parent / leaf, folder / leaf):
        if (cand / "config.json").is_file():
            return str(cand)
    return named


@dataclass
class OriginalLlava:
    """A converted checkpoint: the transformers model, its processor, the tower's id and the text vocabulary.

    Made by :func:`load_original_llava`.

    Parameters
    ----------
    model : transformers.LlavaForConditionalGeneration
        The converted model.
    processor : transformers.LlavaProcessor
        Its processor (the tower's CLIP image processor, the checkpoint's tokenizer with ``<image>`` added).
    vision_tower : str
        The folder or hub id the tower came from.
    text_vocab : int
        The original vocabulary size: the softmax of a score runs over these rows only.
    template : str, optional
        The prompt for generation and P(yes) (the layout has no chat template): LLaVA-1.5's conversation.
    version : str, optional
        ``1.5`` or ``1.6``.
    tower_from_checkpoint : bool, optional
        The tower's weights came from the checkpoint (LLaVA-1.6's fine-tuned tower), not from
        ``mm_vision_tower``.
    """

    model: object
    processor: object
    vision_tower: str
    text_vocab: int
    #: the prompt for generation and P(yes) (the layout has no chat template): LLaVA-1.5's conversation
    template: str = ""
    #: "1.5" or "1.6" (anyres config or image_newline weights: scored as t2v_metrics runs it, see above)
    version: str = "1.5"
    #: the tower's weights came from the checkpoint (LLaVA-1.6's fine-tuned tower), not from mm_vision_tower
    tower_from_checkpoint: bool = False


def load_original_llava(model_id: str, spec: Spec, *, dtype=None, vision_tower: str | None = None,
                        revision: str | None = None) -> OriginalLlava:
    """Load a LLaVA-1.5 or LLaVA-1.6 checkpoint in LLaVA's own layout as ``LlavaForConditionalGeneration``.

    The checkpoint is a folder, or a hub id such as ``liuhaotian/llava-v1.5-13b`` (see the module
    docstring). LLaVA-1.6 (``liuhaotian/llava-v1.6-vicuna-13b``) is converted as t2v_metrics 3.0 runs it:
    one square-padded image through the tower (its fine-tuned weights, saved in the checkpoint) and
    projector, LLaVA-1.5's flat features, no anyres grid and no ``image_newline``.

    Parameters
    ----------
    model_id : str
        The checkpoint's folder or hub id.
    spec : Spec
        The metric's parsed spec (for messages).
    dtype : torch.dtype, optional
        The weights' dtype (None: transformers' default).
    vision_tower : str or None, optional
        A folder of the CLIP vision tower (:func:`find_vision_tower`).
    revision : str or None, optional
        The hub revision.

    Returns
    -------
    OriginalLlava
        The converted model (eval mode), its ``LlavaProcessor``, the tower's id, the original vocabulary
        size, LLaVA-1.5's prompt template, the version (``1.5`` or ``1.6``) and where the tower's weights came
        from.

    Raises
    ------
    InputError
        One line for a folder that does not exist, a projector other than ``mlp2x_gelu``, a missing vision
        tower (naming the tower and where it was looked for), a tokenizer that already has ``<image>`` in
        the model's vocabulary, an unknown ``mm_vision_select_feature``, or weights that do not fit.
    """
    import torch
    from transformers import (
        AutoTokenizer,
        CLIPImageProcessor,
        CLIPVisionConfig,
        CLIPVisionModel,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    from ...common.pretrained import declared_tokenizer_class, hf_load, is_local_model

    folder = Path(model_id) if is_local_model(model_id) else local_snapshot(model_id, spec, revision)
    if not folder.is_dir():
        raise InputError(f"metric {spec.raw!r}: {model_id!r}: no such folder")
    raw = json.loads((folder / "config.json").read_text())
    if raw.get("mm_projector_type", "linear") != "mlp2x_gelu":
        raise InputError(f"metric {spec.raw!r}: LLaVA projector {raw.get('mm_projector_type', 'linear')!r} is not "
                         "LLaVA-1.5/1.6's mlp2x_gelu (only those checkpoints are converted)")
    model_id = str(folder)
    named = raw["mm_vision_tower"]
    tower = find_vision_tower(folder, named, vision_tower)
    if tower == named and not Path(named).is_dir():
        beside = folder.parent / Path(named).name
        try:
            vcfg = hf_load("CLIP vision tower config", CLIPVisionConfig.from_pretrained, tower, spec)
        except InputError:
            raise InputError(f"metric {spec.raw!r}: LLaVA checkpoint {folder.name!r} needs its vision tower {named!r} "
                             f"(config mm_vision_tower): not found as a folder at {str(beside)!r} nor on the hub; "
                             "put a copy there or give ?vision_tower=FOLDER") from None
    else:
        vcfg = hf_load("CLIP vision tower config", CLIPVisionConfig.from_pretrained, tower, spec)
    tok = hf_load("tokenizer", declared_tokenizer_class(model_id, AutoTokenizer).from_pretrained, model_id, spec)
    image_processor = hf_load("CLIP image processor", CLIPImageProcessor.from_pretrained, tower, spec)
    text_vocab = int(raw["vocab_size"])
    if IMAGE_PLACEHOLDER not in tok.get_vocab():
        tok.add_tokens([IMAGE_PLACEHOLDER], special_tokens=True)
    image_id = tok.convert_tokens_to_ids(IMAGE_PLACEHOLDER)
    if image_id < text_vocab:
        raise InputError(f"metric {spec.raw!r}: the tokenizer of {model_id!r} already has {IMAGE_PLACEHOLDER!r} "
                         "inside the model's vocabulary; this is not LLaVA's own layout")
    text_cfg = {k: v for k, v in raw.items() if not k.startswith("mm_") and k not in (
        "architectures", "model_type", "image_aspect_ratio", "use_mm_proj", "tune_mm_mlp_adapter",
        "freeze_mm_mlp_adapter", "image_grid_pinpoints", "transformers_version", "torch_dtype", "dtype")}
    text_cfg.update(model_type="llama", vocab_size=image_id + 1)
    select = raw.get("mm_vision_select_feature", "patch")
    if select not in ("patch", "cls_patch"):
        raise InputError(f"metric {spec.raw!r}: mm_vision_select_feature {select!r} is not patch or cls_patch")
    cfg = LlavaConfig(vision_config=vcfg.to_dict(), text_config=text_cfg, image_token_id=image_id,
                      vision_feature_layer=int(raw.get("mm_vision_select_layer", -2)),
                      vision_feature_select_strategy="default" if select == "patch" else "full",
                      projector_hidden_act="gelu", multimodal_projector_bias=True)
    raw_state = _read_state(folder)
    state = convert_state_dict(raw_state)
    grow = image_id + 1 - text_vocab
    for k in ("model.language_model.embed_tokens.weight", "lm_head.weight"):
        if k not in state:
            raise InputError(f"metric {spec.raw!r}: LLaVA checkpoint {model_id!r} has no {k.split('.', 2)[-1]!r}")
        w = state[k]
        state[k] = torch.cat([w, torch.zeros((grow, w.shape[1]), dtype=w.dtype)])  # never scored (module doc)
    clip = hf_load("CLIP vision tower", CLIPVisionModel.from_pretrained, tower, spec)
    tower_weights = clip.state_dict()
    own = tower_state(raw_state, tower_weights) if raw.get("unfreeze_mm_vision_tower") else {}
    if own:  # LLaVA-1.6 fine-tuned its tower: LLaVA's builder loads the checkpoint's weights over mm_vision_tower's
        if set(own) != {k for k in tower_weights if not k.endswith("position_ids")}:
            raise InputError(f"metric {spec.raw!r}: LLaVA checkpoint {model_id!r} holds part of a vision tower only")
        tower_weights = {**tower_weights, **own}
    state.update({f"model.vision_tower.{k}": v for k, v in tower_weights.items()})
    with torch.device("meta"):   # the key set only, no memory
        want = set(LlavaForConditionalGeneration(cfg).state_dict())
    missing, extra = sorted(want - set(state)), sorted(set(state) - want)
    if missing or extra:
        raise InputError(f"metric {spec.raw!r}: LLaVA checkpoint {model_id!r} does not fit LLaVA-1.5 "
                         f"({'missing' if missing else 'unexpected'} weight {(missing or extra)[0]!r})")
    model = LlavaForConditionalGeneration.from_pretrained(None, config=cfg, state_dict=state,
                                                          **({"dtype": dtype} if dtype is not None else {}))
    patch = vcfg.patch_size
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tok, patch_size=patch,
                               vision_feature_select_strategy=cfg.vision_feature_select_strategy,
                               num_additional_image_tokens=1, image_token=IMAGE_PLACEHOLDER)
    anyres = ("unpad" in str(raw.get("mm_patch_merge_type", "")) or raw.get("image_aspect_ratio") == "anyres"
              or any("image_newline" in k for k in raw_state))
    version = "1.6" if anyres else "1.5"
    return OriginalLlava(model.eval(), processor, tower, text_vocab,
                         f"{SYSTEM_MESSAGE} USER: {IMAGE_PLACEHOLDER}\n{{question}} ASSISTANT:", version,
                         bool(own))
