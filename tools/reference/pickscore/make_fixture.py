"""Reference fixture for ``pickscore``: a tiny random-weight PickScore in the released layout, scored by
the authors' published snippet (the PickScore model card / README) and by t2v_metrics 3.0's
``PickScoreModel``.

Run in the side environment made by ``setup_env.sh`` (transformers 4.49.0, t2v-metrics 3.0), from the
repository root::

    /work/side/rewards-a/bin/python tools/reference/pickscore/make_fixture.py

Writes ``tests/fixtures/reference/pickscore/``:

* ``PickScore_v1/``: ``config.json`` + ``model.safetensors`` of a ``CLIPModel`` (what
  ``yuvalkirstain/PickScore_v1`` holds), 2-layer towers, ``logit_scale`` set to 3.3 (not CLIP's
  initial 2.659) so that a wrong scale constant shows;
* ``CLIP-ViT-H-14-laion2B-s32B-b79K/``: the processor folder in the layout of
  ``laion/CLIP-ViT-H-14-laion2B-s32B-b79K`` (``preprocessor_config.json`` with that repository's
  values, a CLIP BPE tokenizer with a tiny vocabulary);
* ``images/*.png`` and ``expected.json``: per image, ``authors`` (``logit_scale.exp() * cos``, the
  snippet's ``scores``) and ``cosine`` (t2v_metrics' score).

Both originals name hub ids in their code; they read the tiny folders through a local hub cache laid
out under those ids (``reward_support.fake_hub_cache``), offline. No line of either original is changed.
"""
from __future__ import annotations

import importlib
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parents[2] / "tests" / "support"))

import reward_support as rs  # noqa: E402

OUT = rs.FIXTURES / "pickscore"
PROCESSOR_ID = "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
MODEL_ID = "yuvalkirstain/PickScore_v1"
LOGIT_SCALE = 3.3


def build(out: Path) -> tuple[Path, Path]:
    import torch
    from tiny_models import write_clip_bpe
    from transformers import (CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer,
                              CLIPTokenizerFast)

    tmp = Path(tempfile.mkdtemp())
    v, m, n = write_clip_bpe(tmp / "bpe")
    slow = CLIPTokenizer(str(v), str(m), model_max_length=77)
    slow.save_pretrained(tmp / "slow")
    tok = CLIPTokenizerFast.from_pretrained(tmp / "slow")  # laion's folder holds the fast tokenizer.json
    # laion/CLIP-ViT-H-14-laion2B-s32B-b79K's preprocessor_config.json values
    ip = CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224},
                            do_resize=True, do_center_crop=True, do_normalize=True, do_convert_rgb=True,
                            resample=3, image_mean=[0.48145466, 0.4578275, 0.40821073],
                            image_std=[0.26862954, 0.26130258, 0.27577711])
    proc_dir = out / "CLIP-ViT-H-14-laion2B-s32B-b79K"
    CLIPProcessor(image_processor=ip, tokenizer=tok).save_pretrained(proc_dir)

    torch.manual_seed(0)
    eos = tok.convert_tokens_to_ids("<|endoftext|>")
    bos = tok.convert_tokens_to_ids("<|startoftext|>")
    cfg = CLIPConfig(
        text_config=dict(vocab_size=n, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=77, hidden_act="gelu",
                         eos_token_id=eos, bos_token_id=bos, pad_token_id=1),
        vision_config=dict(image_size=224, patch_size=32, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=2, hidden_act="gelu"),
        projection_dim=16, logit_scale_init_value=LOGIT_SCALE)
    model = CLIPModel(cfg).eval()
    model_dir = out / "PickScore_v1"
    model.save_pretrained(model_dir)
    # laion's repository is a whole CLIP model repository: AutoProcessor reads its config.json too
    cfg.save_pretrained(proc_dir)
    return proc_dir, model_dir


def authors_snippet(images, prompt):
    """The PickScore model card's ``calc_probs``, unchanged but for also returning ``scores``."""
    import torch
    from transformers import AutoModel, AutoProcessor

    device = "cpu"
    processor_name_or_path = "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
    model_pretrained_name_or_path = "yuvalkirstain/PickScore_v1"
    processor = AutoProcessor.from_pretrained(processor_name_or_path)
    model = AutoModel.from_pretrained(model_pretrained_name_or_path).eval().to(device)

    # preprocess
    image_inputs = processor(images=images, padding=True, truncation=True, max_length=77,
                             return_tensors="pt").to(device)
    text_inputs = processor(text=prompt, padding=True, truncation=True, max_length=77,
                            return_tensors="pt").to(device)
    with torch.no_grad():
        # embed
        image_embs = model.get_image_features(**image_inputs)
        image_embs = image_embs / torch.norm(image_embs, dim=-1, keepdim=True)
        text_embs = model.get_text_features(**text_inputs)
        text_embs = text_embs / torch.norm(text_embs, dim=-1, keepdim=True)
        # score
        scores = model.logit_scale.exp() * (text_embs @ image_embs.T)[0]
        # get probabilities if you have multiple images to choose from
        probs = torch.softmax(scores, dim=-1)
    return scores.cpu().tolist(), probs.cpu().tolist()


def t2v_metrics_pickscore():
    """t2v_metrics 3.0's PickScoreModel, imported without running the package's ``__init__`` (which
    needs ffmpeg and every other model's dependencies); its own module files run unchanged."""
    spec = importlib.util.find_spec("t2v_metrics")
    root = Path(list(spec.submodule_search_locations)[0])
    for name, sub in [("t2v_metrics", ""), ("t2v_metrics.models", "models"),
                      ("t2v_metrics.models.clipscore_models", "models/clipscore_models")]:
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(root / sub) if sub else str(root)]
        sys.modules[name] = pkg
    mod = importlib.import_module("t2v_metrics.models.clipscore_models.pickscore_model")
    return mod.PickScoreModel


def main() -> None:
    from PIL import Image

    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)  # before transformers / huggingface_hub are imported
    out = rs.clean(OUT)
    proc_dir, model_dir = build(out)
    rs.fake_hub_cache(cache, PROCESSOR_ID, proc_dir)
    rs.fake_hub_cache(cache, MODEL_ID, model_dir)
    rows = rs.write_images(out)

    by_prompt: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_prompt.setdefault(r["prompt"], []).append(i)
    for prompt, idx in by_prompt.items():
        images = [Image.open(out / rows[i]["image"]) for i in idx]
        scores, probs = authors_snippet(images, prompt)
        for i, s, p in zip(idx, scores, probs):
            rows[i]["authors"] = s
            rows[i]["authors_probs"] = p

    PickScoreModel = t2v_metrics_pickscore()
    t2v = PickScoreModel("pickscore-v1", device="cpu", cache_dir=str(cache.parent / "t2v_cache"))
    cos = t2v.forward([str(out / r["image"]) for r in rows], [r["prompt"] for r in rows])
    for r, c in zip(rows, cos.tolist()):
        r["cosine"] = c

    rs.write_expected(out, {
        "family": "pickscore",
        "made_by": {"authors": "PickScore model card snippet (calc_probs: scores = logit_scale.exp() * cos)",
                    "cosine": "t2v_metrics 3.0 models/clipscore_models/pickscore_model.py PickScoreModel.forward"},
        "dtype": "float32", "device": "cpu",
        "versions": rs.versions("torch", "transformers", "t2v-metrics", "tokenizers", "pillow"),
        "model": "PickScore_v1", "processor": "CLIP-ViT-H-14-laion2B-s32B-b79K",
        "rows": rows})


def main_modes() -> None:
    from PIL import Image

    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    rs.fake_hub_cache(cache, PROCESSOR_ID, OUT / "CLIP-ViT-H-14-laion2B-s32B-b79K")
    rs.fake_hub_cache(cache, MODEL_ID, OUT / "PickScore_v1")
    out = rs.clean(OUT / "modes")
    rows = rs.write_mode_images(out)
    tmp = Path(tempfile.mkdtemp())
    for r in rows:
        r["authors"] = authors_snippet([Image.open(out / r["image"])], r["prompt"])[0][0]
        copy = rs.ts2viz_reading_copy(out / r["image"], tmp / (r["image"] + ".png"))
        r["ts2viz_reading"] = authors_snippet([Image.open(copy)], r["prompt"])[0][0]
    rs.write_expected(out, {
        "family": "pickscore",
        "made_by": "PickScore model card snippet (calc_probs' scores) on [Image.open(path)], one image per call, on "
                   "the tiny ../PickScore_v1; ts2viz_reading: the same on the RGB copy image_mode=ts2viz reads",
        "dtype": "float32", "device": "cpu",
        "versions": rs.versions("torch", "transformers", "tokenizers", "pillow"),
        "model": "../PickScore_v1", "processor": "../CLIP-ViT-H-14-laion2B-s32B-b79K", "rows": rows})


if __name__ == "__main__":
    main_modes() if "--modes" in sys.argv[1:] else main()
