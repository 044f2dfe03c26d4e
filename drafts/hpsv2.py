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
from ..common.base import Metric
from ..common.device import resolve_device, resolve_dtype
from ..common.rewardfiles import file_identity, is_hub_id, local_or_hub_file
from ..common.spec import Spec

REPO = "xswu/HPSv2"
#: the field's names -> (hub repository, checkpoint file)
MODEL_NAMES = {"hpsv2": (REPO, "HPS_v2_compressed.pt"), "hpsv2.0": (REPO, "HPS_v2_compressed.pt"),
               "hpsv2.1": (REPO, "HPS_v2.1_compressed.pt")}
CHECKPOINTS = ("HPS_v2.1_compressed.pt", "HPS_v2_compressed.pt")
ARCH = "ViT-H-14"
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
DEFAULT_BATCH = {"cpu": 16, "cuda": 128, "mps": 32}


def build(spec: Spec, device: str | None = None, *, checkpoint: str | None = None, arch: str = ARCH,
          batch_size: int | None = None, dtype: str | None = "amp") -> Metric:
    """``hpsv2:MODEL[?checkpoint=FILE&arch=ViT-H-14&batch_size=N&dtype=amp|float32|float16|bfloat16]``.

    MODEL is ``hpsv2`` / ``hpsv2.1`` (the released checkpoints), a checkpoint file, a folder holding
    one, or a hub repository (``checkpoint`` names the file in a folder or repository). ``arch`` is the
    open_clip architecture the checkpoint is of (a name, or an open_clip model-config JSON file).
    """
    return HPSv2(spec, device, checkpoint=checkpoint, arch=arch, batch_size=batch_size, dtype=dtype)


def _resolve(spec: Spec, checkpoint: str | None) -> tuple[str, str | None]:
    """(local checkpoint path, hub repository or None)."""
    named = MODEL_NAMES.get(spec.model.lower())
    if named:
        repo, fname = named
        return local_or_hub_file(spec, repo, checkpoint or fname, "checkpoint", spec.revision), repo
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
    return local_or_hub_file(spec, spec.model, checkpoint or "", "checkpoint"), None


class HPSv2(Metric):
    """HPS v2 / v2.1 on open_clip (``ts2viz``'s own copy of the scoring rule, tested against ``hpsv2``)."""

    name = "hpsv2"

    def __init__(self, spec: Spec, device: str | None = None, *, checkpoint: str | None = None,
                 arch: str = ARCH, batch_size: int | None = None, dtype: str | None = "amp"):
        import open_clip
        import torch

        dev = resolve_device(device)
        amp = dtype in (None, "amp", "auto")
        self.autocast_dtype = torch.float16 if amp and dev.startswith("cuda") else None
        dt = torch.float32 if amp else resolve_dtype(dev, dtype)
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
                  "dtype": "amp" if amp else str(dt).split(".")[-1]}
        super().__init__(spec, config, dev, batch_size or DEFAULT_BATCH.get(dev.split(":")[0], 16))
        self.dtype = dt
        self._text_memo: dict[str, object] = {}

    def prepare(self, image, file_name: str | None = None):
        return hps_preprocess(image, self.image_size)

    def _autocast(self):
        import contextlib

        import torch

        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type="cuda", dtype=self.autocast_dtype)

    def score_prepared(self, items, prompts) -> np.ndarray:
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
    """HPSv2's evaluation transform of one RGB PIL image: float tensor, longer side to ``size`` (bicubic,
    antialiased, on the tensor), zero padding to ``size`` x ``size`` centred, OpenAI CLIP normalisation."""
    import torch
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
