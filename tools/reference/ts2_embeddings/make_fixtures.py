"""Reference fixtures for ``alignscore:`` and ``siglip:`` (``variant=ts2``, their default): TS2's own scoring
code (michaelsaxon/T2IScoreScore) on tiny random-weight ALIGN and SigLIP checkpoints (run by hand in a side
environment; never in CI).

    /work/side/f2-ts2/bin/python tools/reference/ts2_embeddings/make_fixtures.py T2ISCORESCORE_CHECKOUT

T2ISCORESCORE_CHECKOUT is a checkout of michaelsaxon/T2IScoreScore (commit 93ebf89). What TS2's code is:

* ALIGN: ``src/T2IMetrics/correlation/align.py`` ``ALIGNScore`` (``AlignProcessor`` / ``AlignModel`` of
  ``kakaobrain/align-base``) scores with ``CorrelationMetric.calculate_score``
  (``src/T2IMetrics/correlation/base.py``): ``processor(text=prompt, images=image, return_tensors="pt",
  padding=True)``, the model's ``logits_per_image.item()``. The older script behind the published ``align``
  column, ``src/_old/correlation_scores/run_simscore.py``, passes ``padding=True, padding='max_length'``
  to the processor, which Python refuses to compile (a keyword given twice): it cannot be run as it is,
  so the package's version is the reference.
* SigLIP: ``src/T2IMetrics/correlation/siglip.py`` ``SiGLIPScore`` (``AutoProcessor`` / ``AutoModel`` of
  ``google/siglip-so400m-patch14-384``), the same ``calculate_score``. TS2 published no SigLIP column.

Those modules are imported from the checkout (the package's ``__init__`` files, which import every metric
and their dependencies, are bypassed with bare package objects) and run; only the instance's ``processor``
and ``model`` are the tiny ones instead of the hub ids its ``__init__`` names. The environment has
transformers 4.57.6 (TS2's ``pyproject.toml`` asks for >= 4.30; SigLIP needs >= 4.37; 4.x image processors
are the PIL ones), torch 2.13 (CPU), CPU float32.

The checkpoints are built with transformers 4.57's own classes in the hub layouts:
* ``tiny-align``: ``AlignModel`` (small EfficientNet + 2-layer BERT, BERT ``vocab.txt``, 64-token
  ``model_max_length``), ``EfficientNetImageProcessor`` with align-base's settings (resize, centre crop,
  ``rescale_offset``, ImageNet mean/std, ``include_top=False``), as ``kakaobrain/align-base``;
* ``tiny-siglip``: ``SiglipModel`` (2 layers), ``SiglipTokenizer`` (a SentencePiece ``spiece.model``, 64
  tokens, lower-casing and punctuation removal as SigLIP's), ``SiglipImageProcessor`` (bicubic resize,
  mean/std 0.5), as ``google/siglip-so400m-patch14-384``; its ``logit_scale`` is set to ``log(10)`` and its
  ``logit_bias`` to ``-3`` after the random draw (SigLIP's init, ``log(1)`` and ``0``, would make
  ``logits_per_image`` the plain cosine and leave the scale and bias untested; the released checkpoints have a
  large scale and a negative bias).

Written: ``tests/fixtures/reference/ts2_embeddings/{tiny-align,tiny-siglip,image*.png,expected.json}``;
``expected.json`` holds the images, prompts and TS2's per-pair score for each model.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
from tiny_layouts import train_sentencepiece, write_wordpiece_vocab  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "reference" / "ts2_embeddings"

#: the tiny SigLIP's exp(logit_scale) and logit_bias (SigLIP's own init gives 1 and 0: the plain cosine)
SIGLIP_SCALE, SIGLIP_BIAS = 10.0, -3.0

# TS2 prompts and variants with capitals, punctuation and numbers (SigLIP's tokenizer canonicalises them)
PROMPTS = [
    "A Christmas tree with lights and teddy bear",
    "a boy in a red shirt with a black dog, playing with a frisbee",
    "Two cats sitting on a WOODEN table!",
    "A girl with long hair; she holds 3 apples and a green umbrella.",
    "an astronaut riding a horse on the moon",
]


def write_images(folder: Path) -> list[str]:
    """Small RGB PNGs of several sizes and aspect ratios (resize and centre crop are exercised)."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(0)
    names = []
    for k, (w, h) in enumerate([(64, 48), (40, 40), (50, 71), (83, 52), (45, 45), (60, 37)]):
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([(x * (1 + k) / w * 255) % 256, (y * (2 + k) / h * 255) % 256,
                         ((x + y) * 127 / (w + h) + 40 * k) % 256], -1).astype(np.uint8)
        im = Image.fromarray(base)
        d = ImageDraw.Draw(im)
        for _ in range(3):
            x0, y0 = int(rng.integers(0, w - 10)), int(rng.integers(0, h - 10))
            d.ellipse([x0, y0, x0 + int(rng.integers(5, 30)), y0 + int(rng.integers(5, 30))],
                      fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
        name = f"image{k}.png"
        im.save(folder / name, optimize=True)
        names.append(name)
    return names


def build_align(folder: Path, seed: int = 0) -> None:
    import torch
    from transformers import AlignConfig, AlignModel, AlignProcessor, BertTokenizer, EfficientNetImageProcessor

    torch.manual_seed(seed)
    vocab = write_wordpiece_vocab(folder / "_vocab" / "vocab.txt", PROMPTS)
    tok = BertTokenizer(str(vocab), model_max_length=64)
    vision = dict(image_size=32, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=64,
                  in_channels=[32, 16], out_channels=[16, 64], kernel_sizes=[3, 3], strides=[1, 2],
                  num_block_repeats=[1, 1], expand_ratios=[1, 2], depthwise_padding=[])
    cfg = AlignConfig(text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=48,
                                       num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=512,
                                       pad_token_id=0),
                      vision_config=vision, projection_dim=16, temperature_init_value=0.05)
    model = AlignModel(cfg).eval()
    with torch.no_grad():   # prompts that differ more (a random tiny BERT's [CLS] barely sees the words)
        model.text_model.embeddings.word_embeddings.weight.mul_(5.0)
        model.text_projection.weight.mul_(4.0)
    model.save_pretrained(folder)
    # kakaobrain/align-base's processor settings, at 40 -> 32 px (its 346 -> 289)
    ip = EfficientNetImageProcessor(size={"height": 40, "width": 40}, crop_size={"height": 32, "width": 32},
                                    do_center_crop=True, rescale_offset=True, include_top=False,
                                    image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])
    AlignProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)
    for p in (folder / "_vocab").iterdir():
        p.unlink()
    (folder / "_vocab").rmdir()


def build_siglip(folder: Path, seed: int = 1) -> None:
    import torch
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor, SiglipTokenizer

    torch.manual_seed(seed)
    # SiglipTokenizer's own special tokens: "</s>" ends every prompt and doubles as padding, "<unk>"
    words = [p.lower() for p in PROMPTS] * 10 + ["a an the of with and on in"] * 10
    spm = train_sentencepiece(folder / "_spm" / "spiece", words, vocab_size=120, model_type="unigram",
                              pad_id=0, eos_id=1, unk_id=2, bos_id=-1, pad_piece="<pad>", eos_piece="</s>",
                              unk_piece="<unk>")
    tok = SiglipTokenizer(str(spm), model_max_length=64)
    cfg = SiglipConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=64, projection_size=32,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=2))
    model = SiglipModel(cfg).eval()
    # SiglipModel initialises logit_scale = log(1) and logit_bias = 0, which makes logits_per_image the plain
    # cosine; the released checkpoints learnt a large scale and a negative bias (so400m: exp(scale) ~ 118,
    # bias ~ -13). Non-trivial values, set after the random draw (the other weights are unchanged), so that
    # a missing scale or bias shows in the scores.
    with torch.no_grad():
        model.logit_scale.fill_(math.log(SIGLIP_SCALE))
        model.logit_bias.fill_(SIGLIP_BIAS)
    model.save_pretrained(folder)
    ip = SiglipImageProcessor(size={"height": 32, "width": 32})
    SiglipProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)
    for p in (folder / "_spm").iterdir():
        p.unlink()
    (folder / "_spm").rmdir()


def ts2_classes(checkout: Path):
    """TS2's ``ALIGNScore`` and ``SiGLIPScore`` imported from the checkout, package ``__init__`` files bypassed."""
    src = checkout / "src"
    for name, path in (("T2IMetrics", src / "T2IMetrics"), ("T2IMetrics.correlation", src / "T2IMetrics" / "correlation")):
        pkg = types.ModuleType(name)
        pkg.__path__ = [str(path)]
        sys.modules[name] = pkg
    align = importlib.import_module("T2IMetrics.correlation.align")
    siglip = importlib.import_module("T2IMetrics.correlation.siglip")
    return align.ALIGNScore, siglip.SiGLIPScore


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ts2_checkout", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    import torch
    import transformers
    from transformers import AlignModel, AlignProcessor, AutoModel, AutoProcessor

    torch.set_num_threads(1)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    build_align(out / "tiny-align")
    build_siglip(out / "tiny-siglip")
    names = write_images(out)
    ALIGNScore, SiGLIPScore = ts2_classes(args.ts2_checkout)
    expected = {"images": names, "prompts": PROMPTS, "models": {"align": "tiny-align", "siglip": "tiny-siglip"},
                "scores": {}, "token_ids": {},
                "siglip_logit": {"exp_scale": SIGLIP_SCALE, "bias": SIGLIP_BIAS},
                "source": f"michaelsaxon/T2IScoreScore@93ebf89 src/T2IMetrics/correlation/align.py ALIGNScore and "
                          f"siglip.py SiGLIPScore, CorrelationMetric.calculate_score; transformers "
                          f"{transformers.__version__}, torch {torch.__version__}, CPU float32"}
    for key, cls, load_p, load_m in (("align", ALIGNScore, AlignProcessor, AlignModel),
                                     ("siglip", SiGLIPScore, AutoProcessor, AutoModel)):
        folder = out / expected["models"][key]
        scorer = cls.__new__(cls)
        scorer.device = "cpu"
        scorer.processor = load_p.from_pretrained(folder)   # TS2: from_pretrained("kakaobrain/align-base") etc.
        scorer.model = load_m.from_pretrained(folder).eval()
        rows = []
        with torch.no_grad():
            for name in names:
                rows.append([float(scorer.calculate_score(str(out / name), p)) for p in PROMPTS])
        expected["scores"][key] = rows
        # the token ids TS2's processor gives each prompt (the text side of the comparison, for diagnosis)
        expected["token_ids"][key] = [scorer.processor(text=p, return_tensors="pt", padding=True)["input_ids"][0].tolist()
                                      for p in PROMPTS]
        print(key, np.round(np.asarray(rows), 4))
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
