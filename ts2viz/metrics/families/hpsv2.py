"""HPS v2 / v2.1 (Wu et al., 2023): Human Preference Score, an open_clip ViT-H-14 fine-tuned on HPD v2.

The score of an image is what ``hpsv2.img_score.score`` computes: the cosine of the image's and the
prompt's normalised open_clip embeddings (``image_features @ text_features.T``, no logit scale), in
[-1, 1]; the released models give about 0.2-0.35 on real images.

The preprocessing is HPSv2's own (its ``preprocess_val``: ``light_augmentation=True``): the image is made a
float tensor in [0, 1], resized so that its longer side is the model's input size (bicubic, on the
tensor, torchvision's default antialiasing), padded with zeros to a square (the padding split evenly,
the odd pixel right and bottom), and normalised with OpenAI CLIP's mean and std. There is no centre
crop: the whole image is seen. Prompts are tokenised by open_clip's CLIP tokenizer, 77 tokens (longer
prompts are truncated, the last token made end-of-text).

The checkpoints are single files in ``xswu/HPSv2``: ``HPS_v2_compressed.pt`` (``hpsv2:hpsv2``, what
t2v_metrics' ``hpsv2`` scores) and ``HPS_v2.1_compressed.pt`` (``hpsv2:hpsv2.1``), each a
``{'state_dict': ...}`` of open_clip's ``ViT-H-14``. Precision as the original: float32 weights under
float16 autocast on CUDA (``precision='amp'`` and ``torch.cuda.amp.autocast()``), float32 on the CPU.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...errors import InputError
from ...hub import is_hub_id, model_hub_id
from ..common.base import Metric
from ..common.image_mode import DEFAULT as IMAGE_MODE, option as image_mode_option, reading as image_reading

from ..common.device import dtype_name, resolve_device, resolve_dtype
from ..common.hubfiles import file_identity, local_or_hub_file
from ..common.spec import Spec, parse_spec
from ..family import Card, Family, Fidelity, Option

REPO = "xswu/HPSv2"
#: the field's names -> the checkpoint file in :data:`REPO` (the card's model_names give the repository)
CHECKPOINT_OF = {"hpsv2": "HPS_v2_compressed.pt",
                 "hpsv2.1": "HPS_v2.1_compressed.pt"}
CHECKPOINTS = ("HPS_v2.1_compressed.pt", "HPS_v2_compressed.pt")
ARCH = "ViT-H-14"
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
DEFAULT_BATCH = {"cpu": 16, "cuda": 128, "mps": 32}
#: how hpsv2's ``image_transform`` reads a non-RGB image: ``_convert_to_rgb_or_rgba`` converts every mode but
#: RGBA with Pillow's ``convert("RGB")`` first (an RGBA image keeps its alpha and the model then raises)
ORIGINAL_READING = "rgb"
_T = "tests/metrics/reference/test_hpsv2_reference.py::"
_M = "tests/metrics/reference/test_image_modes_reference.py::"

CARD = Card(
    summary=("HPS v2 / v2.1 (Human Preference Score): open_clip's ViT-H-14 fine-tuned on HPD v2's human choices. "
             "The score is the cosine of the image's and the prompt's embeddings, as `hpsv2.score` computes it, "
             "with HPSv2's own preprocessing (no crop: the image is padded to a square)."),
    paper=("X. Wu, Y. Hao, K. Sun, Y. Chen, F. Zhu, R. Zhao, H. Li. Human Preference Score v2: A Solid Benchmark "
           "for Evaluating Human Preferences of Text-to-Image Synthesis. arXiv 2023. "
           "https://arxiv.org/abs/2306.09341"),
    citation="""@article{wu2023hpsv2,
  title   = {Human Preference Score v2: A Solid Benchmark for Evaluating Human Preferences of Text-to-Image
             Synthesis},
  author  = {Wu, Xiaoshi and Hao, Yiming and Sun, Keqiang and Chen, Yixiong and Zhu, Feng and Zhao, Rui
             and Li, Hongsheng},
  journal = {arXiv preprint arXiv:2306.09341},
  year    = {2023}
}""",
    original=("tgxs002/HPSv2, PyPI `hpsv2` 1.2.0: `hpsv2/img_score.py` (`score`, `initialize_model`) and its "
              "vendored open_clip's `image_transform` (`light_augmentation=True`). t2v_metrics 3.0's `hpsv2` calls "
              "the same `score` with HPS v2.0."),
    fixture=('`tests/fixtures/reference/hpsv2/`: PyPI `hpsv2` 1.2.0 (`hpsv2.img_score.score`) on '
             'torch 2.14.1, Pillow 13.0.0, on a tiny ViT in the released checkpoint layout. Image '
             'modes (L, LA, RGBA, P, I;16, CMYK, an EXIF-rotated JPEG): compared, `modes/` (the '
             'option `image_mode`).'),
    output_range="[-1, 1] (a cosine; the released models give about 0.2-0.35 on real image-prompt pairs)",
    higher_is_better=True,
    options=(
        Option("checkpoint", None,
               "The checkpoint file's name in a folder or hub repository. `hpsv2` / `hpsv2.1` and a folder that "
               "holds one of `HPS_v2_compressed.pt` / `HPS_v2.1_compressed.pt` need none."),
        Option("arch", ARCH, "The open_clip architecture of the checkpoint: a name, or an open_clip model-config "
               "JSON file (registered under its file name)."),
        Option("batch_size", None, "Images per model call (default 16 on the CPU, 128 on CUDA; halved on GPU "
               "out-of-memory)."),
        Option("dtype", None,
               "Default (as the original: `precision='amp'` and `torch.cuda.amp.autocast()`): float32 weights "
               "under float16 autocast on CUDA, float32 on the CPU. `float32`, `float16` or `bfloat16`: the "
               "weights in that dtype, no autocast.", ("float32", "float16", "bfloat16")),
        image_mode_option("Pillow's `convert(\"RGB\")` before the resize, as hpsv2's `image_transform` (a 16-bit "
                          "PNG clipped at 255, transparency dropped)."),
    ),
    fidelity=(
        Fidelity("score", "`image_features @ text_features`, both L2-normalised, no logit scale", "as the original",
                 "", f"{_T}test_score_is_hpsv2s_cosine_on_its_own_preprocessing"),
        Fidelity("image preprocessing", "to a float tensor; longer side to the input size (bicubic on the tensor, "
                 "torchvision's antialiasing); zero padding to a square, split evenly (odd pixel right and "
                 "bottom); OpenAI mean and std", "as the original", "",
                 f"{_T}test_score_is_hpsv2s_cosine_on_its_own_preprocessing"),
        Fidelity("an image whose longer side is already the input size but is not square",
                 "padded to a square", "documented difference", "",
                 original="resizes and pads only when the size changes, then fails on the non-square tensor"),
        Fidelity("prompt", "open_clip's CLIP tokenizer, 77 tokens (longer prompts truncated, the last token "
                 "end-of-text)", "as the original", "", f"{_T}test_score_is_hpsv2s_cosine_on_its_own_preprocessing"),
        Fidelity("checkpoint", "the released `{'state_dict': ...}` file, loaded strictly into open_clip's model",
                 "as the original", "checkpoint, arch", f"{_T}test_a_folder_with_one_released_checkpoint_loads_it"),
        Fidelity("precision", "float32 weights under float16 autocast on CUDA, float32 on the CPU", "as the original",
                 "dtype"),
        Fidelity("images of other modes", "`image_mode=original` (default): Pillow's `convert(\"RGB\")` before the "
                 "resize, as hpsv2: `L`, `LA`, `P`, `CMYK` and a 16-bit `I;16` PNG (clipped at 255) score as the "
                 "original; an `RGBA` image is converted the same way (alpha dropped). `image_mode=ts2viz`: `I;16` "
                 "scaled to 8 bits instead (on the fixture's tiny model 0.570 against hpsv2's 0.263); every other "
                 "mode the same. No EXIF rotation in either, as the original.", "documented difference",
                 "image_mode", f"{_M}test_default_image_mode_scores_every_mode_as_the_original, {_M}test_image_mode_ts2viz_scores_the_copy_ts2viz_reads, {_M}test_the_modes_that_differ_are_the_ones_the_card_names",
                 original="`_convert_to_rgb_or_rgba` keeps an `RGBA` image's four channels, and the model then "
                          "raises (`expected input[1, 4, 224, 224] to have 3 channels`)"),
    ),
    limitations=(
        "Users report that HPSv2 favours over-saturated, high-contrast images (and generators tuned on it drift "
        "that way).",
        "Prompts longer than 77 CLIP tokens are truncated.",
        "A non-square image is seen whole with black borders (no crop): the borders are scored with it.",
        "HPS v2.0 (`hpsv2`, what t2v_metrics reports) and v2.1 (`hpsv2.1`) are different weights: name the one "
        "you mean.",
        "No real checkpoint was loaded on the build machine (no hub access): the released file layout was rebuilt "
        "with random weights, and the scores agree with hpsv2's own code on it to 1e-5 relative.",
    ),
    model_names={"hpsv2": REPO, "hpsv2.1": REPO},
    precision="float16",
    description="""`hpsv2:hpsv2` is HPS v2.0 (`HPS_v2_compressed.pt` of `xswu/HPSv2`, what t2v_metrics' `hpsv2`
scores), `hpsv2:hpsv2.1` HPS v2.1 (`HPS_v2.1_compressed.pt`); MODEL may also be a checkpoint file, a folder
holding one, or a hub repository with `?checkpoint=FILE`. The model is open_clip's `ViT-H-14`, as
`hpsv2.img_score.initialize_model` builds it (`?arch=` for another, e.g. a model-config JSON file).

```python
from ts2viz import metrics
hps = metrics.load("hpsv2:hpsv2.1", device="cuda")
scores = hps(images=["a.png", "b.png"], prompts=["a red cat", "two dogs"])
```
""",
)


def build(spec: Spec, device: str | None = None, *, checkpoint: str | None = None, arch: str = ARCH,
          batch_size: int | None = None, dtype: str | None = None, image_mode: str = IMAGE_MODE) -> Metric:
    """The ``hpsv2:`` metric of ``spec``.

    ``hpsv2:MODEL[?checkpoint=FILE&arch=ViT-H-14&batch_size=N&dtype=float32|float16|bfloat16&image_mode=original|ts2viz]``;
    the options'
    meaning is on the family's card (:data:`CARD`).

    Parameters
    ----------
    spec : Spec
        The parsed spec; MODEL is ``hpsv2`` / ``hpsv2.1`` (the released checkpoints), a checkpoint file, a
        folder holding one, or a hub repository.
    device : str or None, optional
        ``cuda``, ``cpu``, ``mps`` or None (the best available).
    checkpoint : str or None, optional
        The checkpoint file's name in a folder or hub repository.
    arch : str, default "ViT-H-14"
        The open_clip architecture of the checkpoint (a name, or an open_clip model-config JSON file).
    batch_size : int or None, optional
        Images per model call (None: 16 on the CPU, 128 on CUDA).
    dtype : str or None, optional
        None for the original's precision (float32 weights under float16 autocast on CUDA, float32 on the
        CPU); a dtype for the weights, without autocast.
    image_mode : str, default "original"
        How a non-RGB image is read (:mod:`ts2viz.metrics.common.image_mode`): ``original`` as hpsv2 does
        (Pillow's ``convert("RGB")``), ``ts2viz`` by :func:`ts2viz.imaging.as_rgb`.

    Returns
    -------
    HPSv2
        The metric; ``metric(images, prompts)`` gives one float64 cosine per image (NaN for an unreadable
        image).

    Raises
    ------
    InputError
        A checkpoint that cannot be found or had (one line naming the file and repository), a folder with
        none or both released files and no ``checkpoint``, an unknown architecture, or weights that do not
        fit it.
    """
    return HPSv2(spec, device, checkpoint=checkpoint, arch=arch, batch_size=batch_size, dtype=dtype,
                 image_mode=image_mode)


def _resolve(spec: Spec, checkpoint: str | None) -> tuple[str, str | None]:
    """(local checkpoint path, hub repository or None)."""
    short = spec.model.lower()
    if short not in CHECKPOINT_OF and model_hub_id(spec.model, CARD.model_names) is None and spec.raw:
        short = parse_spec(spec.raw).model.lower()  # a spec whose name was resolved to the repository before
    repo = model_hub_id(spec.model, CARD.model_names) or (REPO if short in CHECKPOINT_OF else None)
    if repo and short in CHECKPOINT_OF:
        return local_or_hub_file(spec, repo, checkpoint or CHECKPOINT_OF[short], "checkpoint", spec.revision), repo
    p = Path(os.path.expanduser(spec.model))
    if p.is_dir() and checkpoint is None:
        found = [f for f in CHECKPOINTS if (p / f).is_file()]
        if len(found) != 1:
            raise InputError(f"metric {spec.raw!r}: the folder {spec.model!r} holds "
                             f"{'both ' + ' and '.join(found) if found else 'neither ' + ' nor '.join(CHECKPOINTS)}; "
                             "name the file with ?checkpoint=FILE")
        checkpoint = found[0]
    if is_hub_id(spec.model) and not p.exists():
        if checkpoint is None:
            raise InputError(f"metric {spec.raw!r}: name the checkpoint file of hub repository {spec.model!r} "
                             f"with ?checkpoint=FILE (e.g. {CHECKPOINTS[0]})")
        return local_or_hub_file(spec, spec.model, checkpoint, "checkpoint", spec.revision), spec.model
    if not p.exists():
        raise InputError(f"metric {spec.raw!r}: no checkpoint file or folder {spec.model!r}, and not a model "
                         f"name ({', '.join(sorted(CHECKPOINT_OF))}) or a hub id")
    return local_or_hub_file(spec, spec.model, checkpoint or "", "checkpoint"), None


class HPSv2(Metric):
    """HPS v2 / v2.1 on open_clip's model: ts2viz's own code for hpsv2's scoring rule, tested against hpsv2's output.

    The score is the cosine of the normalised image and prompt embeddings. Prompt embeddings are memoised
    per prompt (up to 8,192, then the memo is cleared).

    Parameters
    ----------
    spec : Spec
        The parsed spec.
    device : str or None, optional
        The torch device; None picks one.
    checkpoint, arch, batch_size, dtype, image_mode
        As :func:`build` takes them.

    Raises
    ------
    InputError
        As :func:`build` says.
    """

    name = "hpsv2"

    def __init__(self, spec: Spec, device: str | None = None, *, checkpoint: str | None = None,
                 arch: str = ARCH, batch_size: int | None = None, dtype: str | None = None,
                 image_mode: str = IMAGE_MODE):
        import open_clip
        import torch

        reads = image_reading(image_mode, ORIGINAL_READING, spec.raw)

        dev = resolve_device(device)
        amp = dtype in (None, "auto")
        resolved = resolve_dtype(dev, dtype)  # the card's float16 on CUDA by default, float32 on the CPU
        # the original: float32 weights, float16 autocast on CUDA (a no-op on the CPU)
        self.autocast_dtype = resolved if amp and dev.startswith("cuda") else None
        dt = torch.float32 if amp else resolved
        path, repo = _resolve(spec, checkpoint)
        arch_name = _register_arch(spec, str(arch))
        try:
            model = open_clip.create_model(arch_name, pretrained=None, device="cpu")
            state = torch.load(path, map_location="cpu", weights_only=True)
            state = state.get("state_dict", state) if isinstance(state, dict) else state
            model.load_state_dict(state)
        except (RuntimeError, KeyError, OSError, ValueError) as e:
            msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise InputError(f"metric {spec.raw!r}: {path!r} is not an HPS v2 checkpoint of {arch_name}: "
                             f"{msg[:300]}") from e
        self.model = model.to(dev, dt).eval()
        self.tokenizer = open_clip.get_tokenizer(arch_name)
        self.image_size = _input_size(model)
        config = {"family": "hpsv2", **file_identity(path, repo, spec.revision if repo else None),
                  "arch": str(arch) if str(arch) == ARCH else {"name": arch_name, "config": open_clip.get_model_config(arch_name)},
                  "preprocess": "longest side to input size, zero pad to square", "score": "cosine",
                  "dtype": dtype_name(resolved), "image_mode": image_mode}
        if self.autocast_dtype is not None:
            config["autocast"] = "float32 weights, autocast"
        super().__init__(spec, config, dev, batch_size or DEFAULT_BATCH.get(dev.split(":")[0], 16))
        self.image_reading = reads
        self.dtype = dt
        self._text_memo: dict[str, object] = {}

    def prepare(self, image, file_name: str | None = None):
        """HPSv2's evaluation transform of one image (:func:`hps_preprocess`).

        Parameters
        ----------
        image : PIL.Image.Image
            The RGB image.
        file_name : str or None, optional
            The image's file name (unused).

        Returns
        -------
        torch.Tensor
            ``(3, size, size)``, the model's input.
        """
        return hps_preprocess(image, self.image_size)

    def _autocast(self):
        import contextlib

        import torch

        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type="cuda", dtype=self.autocast_dtype)

    def score_prepared(self, items, prompts) -> np.ndarray:
        """The cosines of a batch of images with their prompts (under float16 autocast on CUDA by default).

        Parameters
        ----------
        items : sequence
            The prepared images (:meth:`prepare`).
        prompts : sequence of str
            One prompt per image.

        Returns
        -------
        numpy.ndarray
            One float64 cosine per image.
        """
        import torch

        group = list(dict.fromkeys(prompts))
        with torch.inference_mode(), self._autocast():
            img = self.model.encode_image(torch.stack(list(items)).to(self.device, self.dtype), normalize=True)
            missing = [p for p in group if p not in self._text_memo]
            if missing:
                txt = self.model.encode_text(self.tokenizer(missing).to(self.device), normalize=True)
                if len(self._text_memo) > 8192:
                    self._text_memo.clear()
                self._text_memo.update(zip(missing, txt))
            txt = torch.stack([self._text_memo[p] for p in prompts])
            scores = (img * txt).sum(-1)
        return scores.double().cpu().numpy()


def hps_preprocess(image, size: int):
    """HPSv2's evaluation transform of one image.

    Parameters
    ----------
    image : PIL.Image.Image
        An RGB image.
    size : int
        The model's input size (224 for ViT-H-14).

    Returns
    -------
    torch.Tensor
        ``(3, size, size)``: the image as a float tensor, its longer side resized to ``size`` (bicubic,
        antialiased, on the tensor), zero-padded to a square (the odd pixel right and bottom), normalised
        with OpenAI CLIP's mean and std.

    Examples
    --------
    >>> from PIL import Image
    >>> hps_preprocess(Image.new("RGB", (100, 50), (255, 0, 0)), 32).shape
    torch.Size([3, 32, 32])
    """
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as F

    t = F.to_tensor(image)
    h, w = t.shape[1:]
    scale = size / float(max(h, w))
    if scale != 1.0 or h != w:
        nh, nw = round(h * scale), round(w * scale)
        if (nh, nw) != (h, w):
            t = F.resize(t, [nh, nw], InterpolationMode.BICUBIC)
        ph, pw = size - nh, size - nw
        t = F.pad(t, [pw // 2, ph // 2, pw - pw // 2, ph - ph // 2], fill=0)
    return F.normalize(t, OPENAI_MEAN, OPENAI_STD)


def _input_size(model) -> int:
    s = getattr(model.visual, "image_size", 224)
    return int(s[0] if isinstance(s, (tuple, list)) else s)


def _register_arch(spec: Spec, arch: str) -> str:
    """The open_clip model name of ``arch``: a known name, or a model-config JSON file registered under its stem."""
    import open_clip

    p = Path(os.path.expanduser(arch))
    if arch.endswith(".json"):
        if not p.is_file():
            raise InputError(f"metric {spec.raw!r}: arch={arch!r}: no such open_clip model-config file")
        open_clip.add_model_config(p)
        return p.stem
    if arch not in open_clip.list_models():
        raise InputError(f"metric {spec.raw!r}: arch={arch!r} is not an open_clip architecture "
                         f"(HPS v2 is {ARCH}); give a name or a model-config JSON file")
    return arch


#: this module's family (found by :func:`ts2viz.metrics.registry.builtin_families`)
FAMILY = Family('hpsv2',
                "HPS v2 / v2.1: open_clip ViT-H-14 preference model; cosine on HPSv2's own preprocessing",
                build, CARD, example='hpsv2:hpsv2.1', group='preference', hub_model=True, display='HPSv2')
