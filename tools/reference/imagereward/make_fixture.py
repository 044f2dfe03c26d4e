"""Reference fixture for ``imagereward``: a tiny random-weight ImageReward checkpoint in the released layout,
scored by the ``image-reward`` package's own ``ImageReward.score`` and ``ImageReward.inference_rank``.

Run in the side environment made by ``setup_env.sh`` (image-reward 1.5, transformers 4.30.2,
timm 0.6.13), from the repository root::

    /work/side/rewards-ir/bin/python tools/reference/imagereward/make_fixture.py

How the tiny model is made with the original's own classes. ``ImageReward.ImageReward.__init__``
hard-codes ``BLIP_Pretrain(image_size=224, vit='large', med_config=...)`` and ``MLP(768)``:

* the vision tower: while the model is built, ``blip_pretrain.create_vit`` (the name ``BLIP_Pretrain``
  calls) returns the original ``models.BLIP.vit.VisionTransformer`` with 224-pixel input and 16-pixel
  patches as ViT-L, but width 128, 2 heads (ViT-L's 64 per head), 2 blocks, MLP ratio 0.5 (size);
* the text tower: the original ``BertModel`` of ``med.py``, built by ``BLIP_Pretrain`` from a tiny
  ``med_config.json`` (BLIP's file with hidden size 32, 2 heads, 2 layers, intermediate size 37, the
  tiny tokenizer's vocabulary + 2);
* the head: the original ``MLP`` class with input size 32 (the text width) in place of 768;
* the tokenizer: ``init_tokenizer`` runs unchanged: ``BertTokenizer.from_pretrained('bert-base-uncased')``
  reads a tiny WordPiece vocabulary laid out as that hub repository in a local hub cache (offline), then
  adds ``[DEC]`` and ``[ENC]``.

Every parameter (LayerNorms and biases too) gets random values, so that a mapping error shows. The
state dict is saved as ``ImageReward.pt`` (``torch.save(model.state_dict())``, what the hub file holds)
next to ``med_config.json``; ``load``'s own steps then run (``ImageReward(device, med_config)``,
``load_state_dict(torch.load(...), strict=False)``, ``eval``) on a fresh model with the same tiny
parts, and the authors' ``score(prompt, image_path)`` gives one reward per image, ``inference_rank`` the
same per prompt group.

Writes ``tests/fixtures/reference/imagereward/``: ``ImageReward/`` (``ImageReward.pt``,
``med_config.json``), ``bert-base-uncased/`` (the tiny tokenizer: ``vocab.txt``,
``tokenizer_config.json``), ``images/*.png`` and ``expected.json``.

``--modes`` (issue 39, item 9) leaves the fixture above as it is and writes ``modes/``: one image per Pillow
mode (``reward_support.MODE_IMAGES``: L, LA, RGBA, P, I;16, CMYK, an EXIF-rotated JPEG) and
``modes/expected.json``: per image, ``score(prompt, image path)`` on the existing checkpoint (``load``'s
steps as above), and ``ts2viz_reading``: ``score`` of the RGB copy ``image_mode=ts2viz`` reads
(``reward_support.ts2viz_reading_copy``, made here independently).
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import tempfile
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import reward_support as rs  # noqa: E402

OUT = rs.FIXTURES / "imagereward"
VISION = dict(img_size=224, patch_size=16, embed_dim=128, depth=2, num_heads=2, mlp_ratio=0.5)

WORDS = ("a an the of and with is are there on in at red blue green cat dog dogs tree lights teddy bear one "
         "two three four five six seven eight nine ten eleven twelve night snow sitting").split()
PIECES = ["##s", "##ing", "##y"]
PUNCT = list(",.?!'\"-:;()")

# BLIP's configs/med_config.json (what THUDM/ImageReward's med_config.json holds), made tiny
MED = {"architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
       "hidden_dropout_prob": 0.1, "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 37,
       "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 2,
       "num_hidden_layers": 2, "pad_token_id": 0, "type_vocab_size": 2, "vocab_size": None,
       "encoder_width": 768, "add_cross_attention": True}


def image_reward_modules():
    """ImageReward's modules without its package ``__init__`` (which imports ReFL's training stack:
    diffusers, accelerate, datasets); the modules themselves run unchanged."""
    spec = importlib.util.find_spec("ImageReward")
    pkg = types.ModuleType("ImageReward")
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules["ImageReward"] = pkg
    utils = importlib.import_module("ImageReward.utils")
    ir = importlib.import_module("ImageReward.ImageReward")
    bp = importlib.import_module("ImageReward.models.BLIP.blip_pretrain")
    vit = importlib.import_module("ImageReward.models.BLIP.vit")
    return utils, ir, bp, vit


def main() -> None:
    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    import torch

    out = rs.clean(OUT)
    tok_dir = out / "bert-base-uncased"
    tok_dir.mkdir()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + PIECES + PUNCT
    (tok_dir / "vocab.txt").write_text("\n".join(vocab) + "\n")
    (tok_dir / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True, "model_max_length": 512}))
    rs.fake_hub_cache(cache, "bert-base-uncased", tok_dir)

    model_dir = out / "ImageReward"
    model_dir.mkdir()
    med = dict(MED, vocab_size=len(vocab) + 2)  # + [DEC], [ENC] (init_tokenizer)
    (model_dir / "med_config.json").write_text(json.dumps(med, indent=2) + "\n")

    utils, ir, bp, vit = image_reward_modules()
    bp.create_vit = lambda *a, **k: (vit.VisionTransformer(**VISION), VISION["embed_dim"])

    def tiny_model(seed: int):
        torch.manual_seed(seed)
        m = ir.ImageReward(device="cpu", med_config=str(model_dir / "med_config.json")).to("cpu")
        m.mlp = ir.MLP(med["hidden_size"])
        return m

    model = tiny_model(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.add_(torch.randn_like(p) * (0.05 if p.dim() > 1 else 0.2))
    torch.save(model.state_dict(), model_dir / "ImageReward.pt")

    # utils.load's steps on a fresh model with the same tiny parts
    fresh = tiny_model(1)
    state_dict = torch.load(model_dir / "ImageReward.pt", map_location="cpu")
    msg = fresh.load_state_dict(state_dict, strict=False)
    assert not msg.missing_keys and not msg.unexpected_keys, msg
    fresh.eval()

    rows = rs.write_images(out)
    with torch.no_grad():
        for r in rows:
            r["score"] = float(fresh.score(r["prompt"], str(out / r["image"])))
        by_prompt: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            by_prompt.setdefault(r["prompt"], []).append(i)
        for prompt, idx in by_prompt.items():
            if len(idx) < 2:
                continue  # inference_rank squeezes a single reward to a scalar
            _, rewards = fresh.inference_rank(prompt, [str(out / rows[i]["image"]) for i in idx])
            for i, v in zip(idx, rewards):
                rows[i]["inference_rank"] = float(v)

    rs.write_expected(out, {
        "family": "imagereward",
        "made_by": "image-reward 1.5 ImageReward.score(prompt, image path) (and inference_rank per prompt)",
        "dtype": "float32", "device": "cpu", "mean": fresh.mean, "std": fresh.std,
        "versions": rs.versions("torch", "torchvision", "image-reward", "transformers", "timm", "pillow"),
        "checkpoint": "ImageReward/ImageReward.pt", "med_config": "ImageReward/med_config.json",
        "tokenizer": "bert-base-uncased", "rows": rows})


def main_modes() -> None:
    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    import torch

    rs.fake_hub_cache(cache, "bert-base-uncased", OUT / "bert-base-uncased")
    model_dir = OUT / "ImageReward"
    med = json.loads((model_dir / "med_config.json").read_text())
    utils, ir, bp, vit = image_reward_modules()
    bp.create_vit = lambda *a, **k: (vit.VisionTransformer(**VISION), VISION["embed_dim"])
    torch.manual_seed(1)
    fresh = ir.ImageReward(device="cpu", med_config=str(model_dir / "med_config.json")).to("cpu")
    fresh.mlp = ir.MLP(med["hidden_size"])
    msg = fresh.load_state_dict(torch.load(model_dir / "ImageReward.pt", map_location="cpu"), strict=False)
    assert not msg.missing_keys and not msg.unexpected_keys, msg
    fresh.eval()

    out = rs.clean(OUT / "modes")
    rows = rs.write_mode_images(out)
    tmp = Path(tempfile.mkdtemp())
    with torch.no_grad():
        for r in rows:
            r["score"] = float(fresh.score(r["prompt"], str(out / r["image"])))
            copy = rs.ts2viz_reading_copy(out / r["image"], tmp / (r["image"] + ".png"))
            r["ts2viz_reading"] = float(fresh.score(r["prompt"], str(copy)))
    rs.write_expected(out, {
        "family": "imagereward",
        "made_by": "image-reward 1.5 ImageReward.score(prompt, image path) on the tiny checkpoint (../ImageReward); "
                   "ts2viz_reading: the same on the RGB copy image_mode=ts2viz reads",
        "dtype": "float32", "device": "cpu",
        "versions": rs.versions("torch", "torchvision", "image-reward", "transformers", "timm", "pillow"),
        "checkpoint": "../ImageReward/ImageReward.pt", "med_config": "../ImageReward/med_config.json",
        "tokenizer": "../bert-base-uncased", "rows": rows})


if __name__ == "__main__":
    main_modes() if "--modes" in sys.argv[1:] else main()
