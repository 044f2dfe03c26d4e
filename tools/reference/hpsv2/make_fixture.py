"""Reference fixture for ``hpsv2``: a tiny random-weight HPS v2 checkpoint in the released layout, scored by
the ``hpsv2`` package's own ``hpsv2.img_score.score``.

Run in the side environment made by ``setup_env.sh`` (hpsv2 1.2.0 from PyPI), from the repository root::

    /work/side/rewards-a/bin/python tools/reference/hpsv2/make_fixture.py

How the tiny model is made with the original's own classes: ``hpsv2.img_score.initialize_model`` hard-codes
``create_model_and_transforms('ViT-H-14', 'laion2B-s32B-b79K', precision='amp', ...,
light_augmentation=True, output_dict=True)`` (a download of the LAION weights, then overwritten by the
HPS checkpoint). This script registers a tiny architecture ``ts2viz-tiny-hps`` (``ts2viz-tiny-hps.json``:
ViT with 224-pixel input, 16-pixel patches, 2 layers of width 32; text tower with ViT-H-14's 77-token
context and 49408-token vocabulary, 2 layers of width 8) with hpsv2's vendored open_clip
(``add_model_config``), calls the same ``create_model_and_transforms`` with the same arguments but that
name and no pretrained weights, and puts the model and its ``preprocess_val`` into
``hpsv2.img_score.model_dict`` (the cache ``initialize_model`` fills), so that ``score`` skips the
download and runs unchanged on it. The checkpoint is saved as ``{'state_dict': ...}`` under the released
file name of v2.1 (``HPS_v2.1_compressed.pt``; v2.0's ``HPS_v2_compressed.pt`` differs in weights only)
and passed to ``score`` as ``cp``, which loads it with ``load_state_dict``, as for the real ones.

Writes ``tests/fixtures/reference/hpsv2/``: ``ts2viz-tiny-hps.json``, the checkpoint,
``images/*.png`` and ``expected.json`` (per image and version, the ``score`` result).

hpsv2 1.2.0's wheel lacks ``bpe_simple_vocab_16e6.txt.gz`` (its tokenizer's vocabulary, the same file
open_clip ships); ``setup_env.sh`` copies it from the open_clip_torch wheel.

``--modes`` (issue 39, item 9) leaves the fixture above as it is and writes ``modes/``: one image per Pillow
mode (``reward_support.MODE_IMAGES``: L, LA, RGBA, P, I;16, CMYK, an EXIF-rotated JPEG) and
``modes/expected.json``: per image, ``score`` on the existing checkpoint, each file passed to ``score`` on
its own (or ``error``: what ``score`` raised), and ``ts2viz_reading``: ``score`` of the RGB copy
``image_mode=ts2viz`` reads (``reward_support.ts2viz_reading_copy``, made here independently).
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import reward_support as rs  # noqa: E402

OUT = rs.FIXTURES / "hpsv2"
TINY = "ts2viz-tiny-hps"
TINY_CFG = {"embed_dim": 16,
            "vision_cfg": {"image_size": 224, "layers": 2, "width": 32, "head_width": 16, "patch_size": 16},
            "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 8, "heads": 2, "layers": 2}}
#: one checkpoint (v2.0 and v2.1 differ in weights only; two would double the fixture's size)
FILES = {"v2.1": ("HPS_v2.1_compressed.pt", 21)}


def main() -> None:
    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    import torch

    import hpsv2.img_score as img_score
    from hpsv2.src.open_clip import add_model_config, create_model_and_transforms

    out = rs.clean(OUT)
    (out / f"{TINY}.json").write_text(json.dumps(TINY_CFG, indent=1) + "\n")
    add_model_config(out / f"{TINY}.json")
    rows = rs.write_images(out)

    for version, (fname, seed) in FILES.items():
        torch.manual_seed(seed)
        # initialize_model's call, with the tiny architecture and no pretrained download
        model, preprocess_train, preprocess_val = create_model_and_transforms(
            TINY, None, precision='amp', device=img_score.device, jit=False, force_quick_gelu=False,
            force_custom_text=False, force_patch_dropout=False, force_image_size=None, pretrained_image=False,
            image_mean=None, image_std=None, light_augmentation=True, aug_cfg={}, output_dict=True,
            with_score_predictor=False, with_region_predictor=False)
        with torch.no_grad():  # a trained logit scale, not the initial one (the score must not use it)
            model.logit_scale.fill_(4.2)
        torch.save({"state_dict": model.state_dict()}, out / fname)
        # a fresh random model in the cache: score() must load the checkpoint's weights into it
        torch.manual_seed(seed + 1000)
        fresh, _, preprocess_val = create_model_and_transforms(
            TINY, None, precision='amp', device=img_score.device, jit=False, force_quick_gelu=False,
            force_custom_text=False, force_patch_dropout=False, force_image_size=None, pretrained_image=False,
            image_mean=None, image_std=None, light_augmentation=True, aug_cfg={}, output_dict=True,
            with_score_predictor=False, with_region_predictor=False)
        img_score.model_dict.clear()
        img_score.model_dict["model"] = fresh
        img_score.model_dict["preprocess_val"] = preprocess_val

        by_prompt: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            by_prompt.setdefault(r["prompt"], []).append(i)
        for prompt, idx in by_prompt.items():
            paths = [str(out / rows[i]["image"]) for i in idx]
            scores = img_score.score(paths, prompt, cp=str(out / fname), hps_version=version)
            for i, s in zip(idx, scores):
                rows[i][version] = float(s)

    rs.write_expected(out, {
        "family": "hpsv2",
        "made_by": "hpsv2 1.2.0 hpsv2.img_score.score(image paths, prompt, cp=checkpoint) on the tiny model",
        "dtype": "float32 (score's torch.cuda.amp.autocast does nothing on the CPU)", "device": "cpu",
        "versions": rs.versions("torch", "torchvision", "hpsv2", "pillow"),
        "arch": f"{TINY}.json", "checkpoints": {v: f for v, (f, _) in FILES.items()},
        "rows": rows})


def main_modes() -> None:
    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    import torch

    import hpsv2.img_score as img_score
    from hpsv2.src.open_clip import add_model_config, create_model_and_transforms

    add_model_config(OUT / f"{TINY}.json")
    out = rs.clean(OUT / "modes")
    rows = rs.write_mode_images(out)
    fname, seed = FILES["v2.1"]
    torch.manual_seed(seed + 1000)
    fresh, _, preprocess_val = create_model_and_transforms(
        TINY, None, precision='amp', device=img_score.device, jit=False, force_quick_gelu=False,
        force_custom_text=False, force_patch_dropout=False, force_image_size=None, pretrained_image=False,
        image_mean=None, image_std=None, light_augmentation=True, aug_cfg={}, output_dict=True,
        with_score_predictor=False, with_region_predictor=False)
    img_score.model_dict.clear()
    img_score.model_dict["model"] = fresh
    img_score.model_dict["preprocess_val"] = preprocess_val
    tmp = Path(tempfile.mkdtemp())
    for r in rows:
        try:
            r["score"] = float(img_score.score([str(out / r["image"])], r["prompt"], cp=str(OUT / fname),
                                               hps_version="v2.1")[0])
        except Exception as e:  # noqa: BLE001 - what the original does with the mode is the record
            r["error"] = f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:200]}"
        copy = rs.ts2viz_reading_copy(out / r["image"], tmp / (r["image"] + ".png"))
        r["ts2viz_reading"] = float(img_score.score([str(copy)], r["prompt"], cp=str(OUT / fname),
                                                    hps_version="v2.1")[0])
    rs.write_expected(out, {
        "family": "hpsv2",
        "made_by": "hpsv2 1.2.0 hpsv2.img_score.score([image path], prompt, cp=../HPS_v2.1_compressed.pt) on the "
                   "tiny model, one image per call; ts2viz_reading: the same on the RGB copy image_mode=ts2viz reads",
        "dtype": "float32", "device": "cpu",
        "versions": rs.versions("torch", "torchvision", "hpsv2", "pillow"),
        "arch": f"../{TINY}.json", "checkpoint": f"../{fname}", "rows": rows})


if __name__ == "__main__":
    main_modes() if "--modes" in sys.argv[1:] else main()
