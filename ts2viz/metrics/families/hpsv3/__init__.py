"""HPSv3 (Ma et al., 2025): a Qwen2-VL-7B reward model trained on HPDv3 with an uncertainty-aware ranking loss.

The score of an image is what ``HPSv3RewardInferencer.reward`` computes and its example reports: the image is
resized to 448x448 pixels' worth (Qwen2-VL's ``smart_resize`` with min = max = 256*28*28 pixels, PIL
bicubic), shown to the model in Qwen2-VL's chat format with HPSv3's instruction (which names the prompt)
and ``<|Reward|>`` token; the model's last hidden state at that token goes through HPSv3's MLP head
(``ranknet``: 1024 and 16 hidden units, ReLU) to ``(mu, sigma)``, and the score is ``mu``. Unbounded
(about 0-15 on real images, higher is better).

Two quirks of the original are kept: the language model sees plain positions 0..n-1 (HPSv3 calls
Qwen2-VL's decoder without Qwen2-VL's 3-D multimodal positions), and the images of a batch are padded on
the right.

The checkpoint is ``MizzenAI/HPSv3``: ``HPSv3.safetensors`` (the whole model and head). Its configuration,
tokenizer and image processor come from another repository, ``Qwen/Qwen2-VL-7B-Instruct`` (option ``base``),
with the added ``<|Reward|>`` token. Precision as the original: bfloat16 on GPU with the head in float32;
float32 on the CPU (where the original's bfloat16 does not run).
"""
from __future__ import annotations

import os

import numpy as np

from ....errors import InputError
from ....hub import is_hub_id, model_hub_id
from ...common.base import Metric
from ...common.device import dtype_name, resolve_device, resolve_dtype
from ...common.hubfiles import file_identity, local_or_hub_file
from ...common.image_mode import DEFAULT as IMAGE_MODE
from ...common.image_mode import option as image_mode_option
from ...common.image_mode import reading as image_reading
from ...common.pretrained import hf_load, is_local_model, model_identity
from ...common.spec import Spec
from ...family import Card, Family, Fidelity, Option

REPO = "MizzenAI/HPSv3"
CHECKPOINT = "HPSv3.safetensors"
BASE = "Qwen/Qwen2-VL-7B-Instruct"
#: HPSv3's image size: min_pixels = max_pixels = 256 * 28 * 28
PIXELS = 256 * 28 * 28
FACTOR = 28
MAX_RATIO = 200
DEFAULT_BATCH = {"cpu": 2, "cuda": 8, "mps": 2}
#: how hpsv3 reads a non-RGB image: ``dataset/utils.py``'s ``fetch_image`` converts it with Pillow's
#: ``convert("RGB")`` before the resize
ORIGINAL_READING = "rgb"
_M = "tests/metrics/reference/test_image_modes_reference.py::"
_T = "tests/metrics/reference/test_hpsv3_reference.py::"

CARD = Card(
    summary=("HPSv3: a Qwen2-VL-7B reward model trained on HPDv3 with an uncertainty-aware ranking loss. The score "
             "is what `HPSv3RewardInferencer.reward` computes and its example reports: `mu` of the `(mu, sigma)` "
             "its MLP head reads at the `<|Reward|>` token of HPSv3's instruction, which names the prompt."),
    paper=("Y. Ma, X. Wu, K. Sun, H. Li. HPSv3: Towards Wide-Spectrum Human Preference Score. ICCV 2025. "
           "https://arxiv.org/abs/2508.03789"),
    citation="""@inproceedings{ma2025hpsv3,
  title     = {HPSv3: Towards Wide-Spectrum Human Preference Score},
  author    = {Ma, Yuhang and Wu, Xiaoshi and Sun, Keqiang and Li, Hongsheng},
  booktitle = {IEEE/CVF International Conference on Computer Vision (ICCV)},
  year      = {2025}
}""",
    original=("MizzenAI/HPSv3, PyPI `hpsv3` 1.0.0 (transformers 4.45.2): `hpsv3/inference.py` "
              "(`HPSv3RewardInferencer`), `hpsv3/model/qwen2vl_trainer.py` (`Qwen2VLRewardModelBT`), "
              "`hpsv3/train.py` (`create_model_and_processor`), `hpsv3/dataset/` (prompt, `fetch_image`), "
              "`hpsv3/config/HPSv3_7B.yaml`."),
    fixture=('`tests/fixtures/reference/hpsv3/`: PyPI `hpsv3` 1.0.0 (`HPSv3RewardInferencer.reward`) '
             'on transformers 4.45.2, on a tiny Qwen2-VL in the released layout. Image modes (L, LA, '
             'RGBA, P, I;16, CMYK, an EXIF-rotated JPEG): compared, `modes/` (the option '
             '`image_mode`).'),
    output_range="unbounded (mu of a Gaussian; real images score about 0-15)",
    higher_is_better=True,
    options=(
        Option("base", BASE,
               "Where the configuration, tokenizer and image processor come from (HPSv3's checkpoint holds weights "
               "only; its YAML names this repository). A hub id or a local copy; offline without it, loading "
               "fails with a one-line error that names this option."),
        Option("batch_size", None, "Images per model call (default 2 on the CPU, 8 on CUDA; halved on GPU "
               "out-of-memory)."),
        Option("dtype", None, "Default: bfloat16 on a GPU with the head in float32 (the original), float32 on the "
               "CPU (where the original's bfloat16 cannot run). `float32`, `float16` or `bfloat16` for the model; "
               "the head stays float32.", ("float32", "float16", "bfloat16")),
        image_mode_option("Pillow's `convert(\"RGB\")` before the resize, as hpsv3's `fetch_image` (a 16-bit PNG "
                          "clipped at 255, transparency dropped)."),
    ),
    fidelity=(
        Fidelity("score", "`mu` = the head's first output at the `<|Reward|>` token's last hidden state",
                 "as the original", "", f"{_T}test_score_is_hpsv3s_mu_at_the_reward_token"),
        Fidelity("conversation", "Qwen2-VL's chat template: the image, then HPSv3's instruction with the prompt and "
                 "its reward suffix; `<|Reward|>` added to the tokenizer", "as the original", "base",
                 f"{_T}test_score_is_hpsv3s_mu_at_the_reward_token"),
        Fidelity("image preprocessing", "`smart_resize` to 256*28*28 pixels (PIL bicubic), then Qwen2-VL's image "
                 "processor (PIL backend)", "as the original", "",
                 f"{_T}test_score_is_hpsv3s_mu_at_the_reward_token"),
        Fidelity("positions", "plain positions 0..n-1 in the decoder", "as the original", "",
                 f"{_T}test_score_is_hpsv3s_mu_at_the_reward_token",
                 original="HPSv3 calls Qwen2-VL's decoder without its 3-D multimodal positions"),
        Fidelity("batching", "right padding, as the original's batches; a batch of one scores the same",
                 "as the original", "batch_size", f"{_T}test_an_image_alone_scores_as_in_a_batch"),
        Fidelity("precision", "bfloat16 model and float32 head on a GPU; float32 on the CPU", "as the original",
                 "dtype"),
        Fidelity("images of other modes", "`image_mode=original` (default): Pillow's `convert(\"RGB\")` before the "
                 "resize, as `fetch_image`: `L`, `LA`, `RGBA`, `P`, `CMYK` and `I;16` (clipped at 255) score as the "
                 "original. `image_mode=ts2viz`: `I;16` scaled to 8 bits instead (on the fixture's tiny model -0.0487 "
                 "against hpsv3's -0.0611); every other mode the same. No EXIF rotation in either, as the original.",
                 "as the original", "image_mode", f"{_M}test_default_image_mode_scores_every_mode_as_the_original, {_M}test_image_mode_ts2viz_scores_the_copy_ts2viz_reads, {_M}test_the_modes_that_differ_are_the_ones_the_card_names"),
        Fidelity("base from another repository", "`base=` names it; offline without it a one-line error names the "
                 "option", "as the original", "base",
                 f"{_T}test_base_from_another_repository_offline_says_which_option"),
    ),
    limitations=(
        "A 7B model: about 16 GB of GPU memory in bfloat16, and slow on the CPU.",
        "Every image is resized to about 448x448 pixels (256*28*28), whatever its size.",
        "The instruction asks for overall visual quality and prompt alignment together: a preference score, not "
        "a faithfulness score.",
        "Only `mu` is reported; `sigma` (the model's uncertainty) is not.",
        "No real checkpoint was loaded on the build machine (no hub access): the released layout was rebuilt with "
        "random weights (a 2-layer Qwen2-VL), and the scores agree with hpsv3's own code on it to 1e-5 relative.",
    ),
    model_names={"hpsv3": REPO},
    precision="bfloat16",
    description="""`hpsv3:hpsv3` is `MizzenAI/HPSv3` (`HPSv3.safetensors`, the whole model with its head); MODEL may
also be that hub id, a folder holding the file, or the file. The configuration, tokenizer and image processor come
from `Qwen/Qwen2-VL-7B-Instruct`, as HPSv3's configuration names it, or from `?base=` (a local copy). The model is
transformers' `Qwen2VLModel` with the checkpoint's weights and HPSv3's `ranknet` head (1024 and 16 hidden units,
ReLU, two outputs), built from the checkpoint's own shapes. The prompt text (HPSv3's instruction, MIT licence) is
in `ts2viz/metrics/families/hpsv3/prompt.py`.

```python
from ts2viz import metrics
hps3 = metrics.load("hpsv3:hpsv3", device="cuda")                   # bfloat16, about 16 GB
scores = hps3(images=["a.png", "b.png"], prompts=["a red cat", "two dogs"])
```
""",
)


def build(spec: Spec, device: str | None = None, *, base: str = BASE, batch_size: int | None = None,
          dtype: str | None = None, image_mode: str = IMAGE_MODE) -> Metric:
    """The ``hpsv3:`` metric of ``spec``.

    ``hpsv3:MODEL[?base=ID_OR_FOLDER&batch_size=N&dtype=bfloat16|float32&image_mode=original|ts2viz]``; the options' meaning is on the
    family's card (:data:`CARD`).

    Parameters
    ----------
    spec : Spec
        The parsed spec; MODEL is ``hpsv3``, the hub repository ``MizzenAI/HPSv3``, a folder holding
        ``HPSv3.safetensors`` or that file.
    device : str or None, optional
        ``cuda``, ``cpu``, ``mps`` or None (the best available).
    base : str, default "Qwen/Qwen2-VL-7B-Instruct"
        Where the configuration, tokenizer and image processor come from (hub id or folder).
    batch_size : int or None, optional
        Images per model call (None: 2 on the CPU, 8 on CUDA).
    dtype : str or None, optional
        The model's dtype (None: the card's bfloat16 on a GPU, float32 on the CPU); the head stays float32.
    image_mode : str, default "original"
        How a non-RGB image is read (:mod:`ts2viz.metrics.common.image_mode`): ``original`` as hpsv3 does (Pillow's ``convert("RGB")`` first),
        ``ts2viz`` by :func:`ts2viz.imaging.as_rgb`.

    Returns
    -------
    HPSv3
        The metric; ``metric(images, prompts)`` gives one float64 ``mu`` per image (NaN for an unreadable
        image or one whose aspect ratio is over 200).

    Raises
    ------
    InputError
        Files that cannot be found or had (one line; for the base it names the ``base`` option), a base
        that is not Qwen2-VL, or a checkpoint that does not fit it.
    """
    return HPSv3(spec, device, base=base, batch_size=batch_size, dtype=dtype, image_mode=image_mode)


def smart_resize(height: int, width: int) -> tuple[int, int]:
    """The size HPSv3 resizes an image to (Qwen2-VL's rule with min = max = 256*28*28 pixels).

    Parameters
    ----------
    height : int
        The image's height in pixels.
    width : int
        The image's width in pixels.

    Returns
    -------
    tuple of int
        ``(height, width)``: both multiples of 28, the area as near 256*28*28 as the aspect ratio allows.

    Raises
    ------
    InputError
        An aspect ratio over 200 (HPSv3 refuses such an image).

    Examples
    --------
    >>> smart_resize(64, 96)
    (392, 560)
    >>> smart_resize(448, 448)
    (448, 448)
    """
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise InputError(f"the image's aspect ratio is over {MAX_RATIO} (HPSv3 refuses it)")
    from ...backbones.vqa.t2v import smart_size

    return smart_size(height, width, FACTOR, PIXELS, PIXELS)


class HPSv3(Metric):
    """HPSv3 on transformers' ``Qwen2VLModel`` plus HPSv3's MLP head (see :func:`build`).

    The score is the head's ``mu`` at the hidden state of the ``<|Reward|>`` token that ends HPSv3's
    conversation (:mod:`.prompt`).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    base, batch_size, dtype, image_mode
        As :func:`build` takes them.

    Raises
    ------
    InputError
        As :func:`build` says.
    """

    name = "hpsv3"

    def __init__(self, spec: Spec, device: str | None = None, *, base: str = BASE, batch_size: int | None = None,
                 dtype: str | None = None, image_mode: str = IMAGE_MODE):
        import safetensors.torch
        import torch
        from transformers import (
            AutoConfig,
            AutoImageProcessor,
            AutoTokenizer,
            Qwen2VLModel,
        )
        from transformers.initialization import no_init_weights

        from .prompt import REWARD_TOKEN

        reads = image_reading(image_mode, ORIGINAL_READING, spec.raw)
        dev = resolve_device(device)
        dt = resolve_dtype(dev, dtype)
        repo = model_hub_id(spec.model, CARD.model_names)
        place = repo or spec.model
        ckpt = local_or_hub_file(spec, place, CHECKPOINT, "checkpoint", spec.revision)
        base = str(base)
        try:
            cfg = hf_load("configuration", AutoConfig.from_pretrained, base, spec)
            tok = hf_load("tokenizer", AutoTokenizer.from_pretrained, base, spec, padding_side="right")
            ip = hf_load("image processor", AutoImageProcessor.from_pretrained, base, spec, backend="pil")
        except InputError as e:
            raise InputError(f"metric {spec.raw!r}: HPSv3's configuration and processor come from another "
                             f"repository, {base!r} (option base=, a hub id or a local copy of that folder), and "
                             f"they cannot be loaded: {str(e).split(': ', 2)[-1]}") from None
        if getattr(cfg, "model_type", "") != "qwen2_vl":
            raise InputError(f"metric {spec.raw!r}: base={base!r} is a {cfg.model_type!r} model, not Qwen2-VL")
        tok.add_special_tokens({"additional_special_tokens": [REWARD_TOKEN]})
        self.reward_id = tok.convert_tokens_to_ids(REWARD_TOKEN)
        text_cfg = cfg.get_text_config()
        text_cfg.vocab_size = len(tok)
        state = safetensors.torch.load_file(ckpt, device="cpu")
        head_sd = {k[len("rm_head."):]: v for k, v in state.items() if k.startswith("rm_head.")}
        sd = {}
        for k, v in state.items():
            if k.startswith("model."):
                sd["language_model." + k[len("model."):]] = v
            elif k.startswith("visual."):
                sd[k] = v
        if not head_sd or not sd:
            raise InputError(f"metric {spec.raw!r}: {ckpt!r} is not an HPSv3 checkpoint (no rm_head / model weights)")
        # built on the device without initialising (7B parameters), then the checkpoint's values copied in:
        # one copy of the weights on the device, one (the file's) in host memory
        with torch.device(dev), no_init_weights():
            model = Qwen2VLModel._from_config(cfg, dtype=dt)
        try:
            model.load_state_dict(sd, strict=True)
        except RuntimeError as e:
            raise InputError(f"metric {spec.raw!r}: {ckpt!r} does not fit {base!r}'s Qwen2-VL: "
                             f"{(str(e).strip().splitlines() or ['?'])[-1].strip()[:300]}") from e
        self.model = model.to(dev).eval()
        self.head = _head(head_sd).to(dev, torch.float32).eval()
        self.tokenizer, self.image_processor = tok, ip
        self.image_token = "<|image_pad|>"
        self.image_token_id = cfg.image_token_id
        self.merge = int(getattr(ip, "merge_size", 2))
        config = {"family": "hpsv3", **file_identity(ckpt, place if is_hub_id(place) and not is_local_model(place)
                                                     and not os.path.isfile(place) else None,
                                                     spec.revision),
                  "base": ({"model": base, **model_identity(base, None)} if is_local_model(base) else {"model": base}),
                  "pixels": PIXELS, "score": "mu", "dtype": dtype_name(dt),
                  "image_mode": image_mode}
        super().__init__(spec, config, dev, batch_size or DEFAULT_BATCH.get(dev.split(":")[0], 2))
        self.image_reading = reads
        self.dtype = dt

    def prepare(self, image, file_name: str | None = None):
        """One image resized as HPSv3 does (:func:`smart_resize`, bicubic) and run through Qwen2-VL's image processor.

        Parameters
        ----------
        image : PIL.Image.Image
            The RGB image.
        file_name : str or None, optional
            The image's file name (unused).

        Returns
        -------
        dict
            ``pixel_values`` and ``image_grid_thw`` tensors.

        Raises
        ------
        InputError
            If the image's aspect ratio is over 200 (its score is then NaN).
        """
        from PIL import Image

        w, h = image.size
        nh, nw = smart_resize(h, w)
        im = image.convert("RGB").resize((nw, nh), Image.BICUBIC)
        out = self.image_processor(images=[im], return_tensors="pt")
        return {"pixel_values": out["pixel_values"], "image_grid_thw": out["image_grid_thw"]}

    def _texts(self, items, prompts) -> list[str]:
        from .prompt import INSTRUCTION, REWARD_SUFFIX

        texts = []
        for it, p in zip(items, prompts):
            msg = [{"role": "user", "content": [{"type": "image"},
                                                {"type": "text", "text": INSTRUCTION.format(text_prompt=p) + REWARD_SUFFIX}]}]
            t = self.tokenizer.apply_chat_template(msg, tokenize=False, add_generation_prompt=True)
            n = int(it["image_grid_thw"].prod()) // self.merge ** 2
            texts.append(t.replace(self.image_token, self.image_token * n, 1))
        return texts

    def score_prepared(self, items, prompts) -> np.ndarray:
        """HPSv3's ``mu`` of a batch of images with their prompts.

        Parameters
        ----------
        items : sequence
            The prepared images (:meth:`prepare`).
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 ``mu`` per image.

        Raises
        ------
        InputError
            If a prompt holds the reward token itself.
        """
        import torch

        enc = self.tokenizer(self._texts(items, prompts), padding=True, return_tensors="pt")
        ids, mask = enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)
        if not bool(((ids == self.reward_id).sum(1) == 1).all()):
            raise InputError(f"{self.spec}: a prompt holds the {self.tokenizer.convert_ids_to_tokens(self.reward_id)} "
                             "token; it cannot be scored")
        with torch.inference_mode():
            pix = torch.cat([it["pixel_values"] for it in items]).to(self.device, self.dtype)
            grid = torch.cat([it["image_grid_thw"] for it in items]).to(self.device)
            img = torch.cat(list(self.model.get_image_features(pixel_values=pix, image_grid_thw=grid).pooler_output))
            emb = self.model.get_input_embeddings()(ids)
            where = (ids == self.image_token_id).unsqueeze(-1).expand_as(emb)
            emb = emb.masked_scatter(where, img.to(emb.dtype))
            # HPSv3 calls the decoder without Qwen2-VL's multimodal positions: plain 0..n-1
            hidden = self.model.language_model(inputs_embeds=emb, attention_mask=mask).last_hidden_state
            at = hidden[ids == self.reward_id].float()
            mu = self.head(at)[:, 0]
        return mu.double().cpu().numpy()


def _head(sd: dict):
    """HPSv3's ``ranknet`` head from its weights: Linear, ReLU, Dropout, Linear, ReLU, Linear (by the indices)."""
    import torch

    idx = sorted({int(k.split(".")[0]) for k in sd})
    layers: list = []
    for i in idx:
        w = sd[f"{i}.weight"]
        while len(layers) < i:
            layers.append(torch.nn.ReLU() if len(layers) in (1, 4) else torch.nn.Identity())
        layers.append(torch.nn.Linear(w.shape[1], w.shape[0], bias=f"{i}.bias" in sd))
    head = torch.nn.Sequential(*layers)
    head.load_state_dict(sd)
    return head


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('hpsv3',
                'HPSv3: Qwen2-VL-7B reward model; mu read at the <|Reward|> token of its instruction',
                build, CARD, example='hpsv3:hpsv3', group='preference', hub_model=True, display='HPSv3')
