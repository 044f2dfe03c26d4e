"""Reference fixtures for ``clipscore:``: J. Hessel et al.'s CLIP-S and torchmetrics' CLIPScore, computed by
their own code on a tiny random-weight CLIP (run by hand in a side environment; never in CI).

    bash tools/reference/clipscore/setup.sh            # builds /work/side/fc-clip (see README.md)
    /work/side/fc-clip/bin/python tools/reference/clipscore/make_fixtures.py CLIPSCORE_CHECKOUT

CLIPSCORE_CHECKOUT is a checkout of jmhessel/clipscore (commit 1036465, the one read for ts2viz); its
``clipscore.py`` is imported from there and run, never copied.

What it does:

1. A tiny CLIP BPE vocabulary (every byte, a few hundred merges for the prompts' words) written as the
   gzip merges file OpenAI's ``clip`` package reads, and the same vocabulary as ``vocab.json`` +
   ``merges.txt`` for transformers.
2. A tiny CLIP built with the ``clip`` package's own class (``clip.model.CLIP``: ViT with 32-px patches on
   224-px images as ViT-B/32, 2 layers per tower), random weights.
3. Its weights written in the hub layout of ``openai/clip-vit-base-patch32`` (transformers ``CLIPModel``:
   ``model.safetensors``, ``config.json``, tokenizer and ``preprocessor_config.json``): the folder
   ts2viz loads. The key mapping is written here from reading both classes.
4. Hessel's ``get_clip_score`` (``clipscore.py``: prefix "A photo depicts ", ``2.5 * max(cos, 0)``, its own
   torchvision preprocessing) run on the ``clip`` model with the tiny tokenizer put in place of the
   package's; torchmetrics' ``clip_score`` (``100 * max(cos, 0)``, the prompt as is) run per image on the
   transformers model and processor loaded from the folder.
5. ``expected.json``: per (image, prompt) pair, every image with every prompt (42 pairs), both variants' scores (and TS2's, added by ``ts2_reference.py``).

Everything runs in float32 on the CPU.
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import sys
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = ROOT / "tests" / "fixtures" / "reference" / "clipscore"

PROMPTS = [
    "a red cat on the tree",
    "two blue dogs with a teddy bear",
    "a red cat on the tree",
    "the green tree with lights",
    "a black and white photo of a dog",
    # more than CLIP's 77 tokens: truncated (Hessel: the last token becomes the end token; torchmetrics: cut)
    "a very long prompt about a red cat and a blue dog and a green tree with many lights and a teddy bear "
    "sitting on the grass next to the old house under the bright sky in the evening with birds flying over "
    "the river and children playing with a ball near the fence of the garden while an old man reads a book "
    "on a wooden bench and a woman walks her small brown dog along the path beside the tall trees of the park",
]
WORDS = sorted(set(" ".join(PROMPTS + ["a photo depicts"]).split()))


def bytes_to_unicode() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(2 ** 8):
        if b not in bs:
            bs.append(b)
            cs.append(2 ** 8 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


def tiny_bpe(folder: Path) -> tuple[Path, dict[str, int], list[str]]:
    """Merges that build each word of WORDS left to right; the gzip file the clip package reads (first line
    a header, no trailing newline), and the vocabulary it implies."""
    merges: list[str] = []
    for w in WORDS:
        parts = list(w[:-1]) + [w[-1] + "</w>"]
        cur = parts[0]
        for p in parts[1:]:
            m = f"{cur} {p}"
            if m not in merges:
                merges.append(m)
            cur = cur + p
    chars = list(bytes_to_unicode().values())
    vocab = chars + [c + "</w>" for c in chars] + ["".join(m.split()) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    assert len(set(vocab)) == len(vocab), "duplicate vocabulary entries"
    path = folder / "bpe_tiny.txt.gz"
    with gzip.open(path, "wb") as f:
        f.write(("#version: 0.2\n" + "\n".join(merges)).encode("utf-8"))
    return path, {t: i for i, t in enumerate(vocab)}, merges


def images(folder: Path) -> list[str]:
    """Smooth PNGs of several sizes (odd crops, a grey-scale one) so that preprocessing is exercised."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(0)
    # (462, 448) resizes to 231 x 224: a 7-px margin, which torchvision's centre crop (round) and
    # transformers' (floor) split differently
    sizes = [(320, 240), (224, 224), (231, 300), (400, 257), (260, 260), (300, 233), (462, 448)]
    names = []
    for k, (w, h) in enumerate(sizes):
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([(x * (1 + k) / w * 255) % 256, (y * (2 + k) / h * 255) % 256,
                         ((x + y) * 127 / (w + h) + 40 * k) % 256], -1).astype(np.uint8)
        im = Image.fromarray(base)
        d = ImageDraw.Draw(im)
        for _ in range(4):
            x0, y0 = int(rng.integers(0, w - 40)), int(rng.integers(0, h - 40))
            d.ellipse([x0, y0, x0 + int(rng.integers(20, 120)), y0 + int(rng.integers(20, 120))],
                      fill=tuple(int(v) for v in rng.integers(0, 255, 3)))
        if k == 4:
            im = im.convert("L")
        name = f"image{k}.png"
        im.save(folder / name, optimize=True)
        names.append(name)
    return names


def build_clip_model(vocab_size: int, seed: int = 0):
    import torch
    from clip.model import CLIP

    torch.manual_seed(seed)
    model = CLIP(embed_dim=16, image_resolution=224, vision_layers=2, vision_width=64, vision_patch_size=32,
                 context_length=77, vocab_size=vocab_size, transformer_width=32, transformer_heads=2,
                 transformer_layers=2)
    with torch.no_grad():
        # a wider spread of cosines than the default initialisation gives, and constant offsets in the
        # final layer norms so that cosines fall on both sides of 0 (the clamp of CLIP-S is exercised)
        model.text_projection.mul_(4.0)
        model.visual.proj.mul_(4.0)
        g = torch.Generator().manual_seed(5)
        model.visual.ln_post.bias.copy_(1.5 * torch.randn(model.visual.ln_post.bias.shape, generator=g))
        model.ln_final.bias.copy_(1.5 * torch.randn(model.ln_final.bias.shape, generator=g))
    return model.float().eval()


def to_hf_state(sd: dict) -> dict:
    """``clip.model.CLIP`` state dict -> transformers ``CLIPModel`` state dict (written from reading both)."""
    out = {}

    def block(src: str, dst: str, n: int):
        for i in range(n):
            s, d = f"{src}.resblocks.{i}", f"{dst}.encoder.layers.{i}"
            w, b = sd[f"{s}.attn.in_proj_weight"], sd[f"{s}.attn.in_proj_bias"]
            for j, name in enumerate(("q", "k", "v")):
                size = w.shape[0] // 3
                out[f"{d}.self_attn.{name}_proj.weight"] = w[j * size:(j + 1) * size]
                out[f"{d}.self_attn.{name}_proj.bias"] = b[j * size:(j + 1) * size]
            out[f"{d}.self_attn.out_proj.weight"] = sd[f"{s}.attn.out_proj.weight"]
            out[f"{d}.self_attn.out_proj.bias"] = sd[f"{s}.attn.out_proj.bias"]
            for a, c in (("ln_1", "layer_norm1"), ("ln_2", "layer_norm2"), ("mlp.c_fc", "mlp.fc1"), ("mlp.c_proj", "mlp.fc2")):
                out[f"{d}.{c}.weight"] = sd[f"{s}.{a}.weight"]
                out[f"{d}.{c}.bias"] = sd[f"{s}.{a}.bias"]

    n_text = len({k.split(".")[2] for k in sd if k.startswith("transformer.resblocks.")})
    n_vis = len({k.split(".")[3] for k in sd if k.startswith("visual.transformer.resblocks.")})
    block("transformer", "text_model", n_text)
    block("visual.transformer", "vision_model", n_vis)
    out["text_model.embeddings.token_embedding.weight"] = sd["token_embedding.weight"]
    out["text_model.embeddings.position_embedding.weight"] = sd["positional_embedding"]
    out["text_model.final_layer_norm.weight"] = sd["ln_final.weight"]
    out["text_model.final_layer_norm.bias"] = sd["ln_final.bias"]
    out["text_projection.weight"] = sd["text_projection"].T
    out["vision_model.embeddings.class_embedding"] = sd["visual.class_embedding"]
    out["vision_model.embeddings.patch_embedding.weight"] = sd["visual.conv1.weight"]
    out["vision_model.embeddings.position_embedding.weight"] = sd["visual.positional_embedding"]
    out["vision_model.pre_layrnorm.weight"] = sd["visual.ln_pre.weight"]
    out["vision_model.pre_layrnorm.bias"] = sd["visual.ln_pre.bias"]
    out["vision_model.post_layernorm.weight"] = sd["visual.ln_post.weight"]
    out["vision_model.post_layernorm.bias"] = sd["visual.ln_post.bias"]
    out["visual_projection.weight"] = sd["visual.proj"].T
    out["logit_scale"] = sd["logit_scale"]
    return {k: v.detach().clone().contiguous().float() for k, v in out.items()}


def save_hf(model, vocab: dict[str, int], merges: list[str], folder: Path) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftext|>"]
    cfg = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=32, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=77, hidden_act="quick_gelu",
                         layer_norm_eps=1e-5, bos_token_id=sot, eos_token_id=eot, pad_token_id=eot),
        vision_config=dict(image_size=224, patch_size=32, hidden_size=64, intermediate_size=256,
                           num_hidden_layers=2, num_attention_heads=1, hidden_act="quick_gelu", layer_norm_eps=1e-5),
        projection_dim=16)
    hf = CLIPModel(cfg).eval()
    missing, unexpected = hf.load_state_dict(to_hf_state(model.state_dict()), strict=False)
    assert not unexpected and all("position_ids" in k for k in missing), (missing, unexpected)
    hf.save_pretrained(folder)
    tok = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=77)
    # the hub checkpoint's image processor (openai/clip-vit-base-patch32): shortest edge 224, centre crop 224
    ip = CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
    CLIPProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)
    return hf


def load_hessel(checkout: Path):
    """Hessel's ``clipscore.py`` imported from the checkout (its reference-metrics helper module is not used
    for CLIP-S and needs pycocoevalcap: an empty module stands in for it)."""
    sys.modules.setdefault("generation_eval_utils", types.ModuleType("generation_eval_utils"))
    spec = importlib.util.spec_from_file_location("hessel_clipscore", checkout / "clipscore.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("clipscore_checkout", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    import clip
    import torch
    import transformers
    from clip.simple_tokenizer import SimpleTokenizer
    from PIL import Image

    torch.set_num_threads(1)
    out = args.out
    model_dir = out / "tiny-clip-vit-b-32"
    model_dir.mkdir(parents=True, exist_ok=True)
    bpe, vocab, merges = tiny_bpe(out)
    clip.clip._tokenizer = SimpleTokenizer(bpe_path=str(bpe))  # clip.tokenize reads this module global
    assert clip.clip._tokenizer.encoder == vocab
    bpe.unlink()  # the vocabulary lives on in vocab.json / merges.txt
    model = build_clip_model(len(vocab))
    hf = save_hf(model, vocab, merges, model_dir)
    files = images(out)
    # every image with every prompt
    names = [n for n in files for _ in PROMPTS]
    prompts = [p for _ in files for p in PROMPTS]
    paths = [str(out / n) for n in names]

    # Hessel et al.: their get_clip_score on the clip model (CPU: float32, as their script warns)
    hessel = load_hessel(args.clipscore_checkout)
    _, per, _ = hessel.get_clip_score(model, paths, prompts, "cpu")
    # torchmetrics' clip_score, one image at a time (its max(., 0) is over the batch mean)
    from torchmetrics.functional.multimodal import clip_score
    from transformers import CLIPModel, CLIPProcessor

    tm_model = CLIPModel.from_pretrained(model_dir).eval()
    tm_proc = CLIPProcessor.from_pretrained(model_dir)
    tm = []
    for p, prompt in zip(paths, prompts):
        arr = torch.from_numpy(np.asarray(Image.open(p).convert("RGB"))).permute(2, 0, 1)
        with torch.no_grad():
            tm.append(float(clip_score(arr, prompt, model_name_or_path=lambda: (tm_model, tm_proc))))
    # the same weights through both classes give the same prompt embedding (the conversion is exact)
    with torch.no_grad():
        t_clip = model.encode_text(clip.tokenize([prompts[0]]))
        ids = tm_proc.tokenizer([prompts[0]], return_tensors="pt")
        t_hf = tm_model.get_text_features(**ids)
        t_hf = getattr(t_hf, "pooler_output", t_hf)
    assert torch.allclose(t_clip, t_hf, atol=1e-5), (t_clip, t_hf)
    expected_path = out / "expected.json"
    old = json.loads(expected_path.read_text()) if expected_path.exists() else {}
    expected = {
        "model": model_dir.name,
        "images": names,
        "prompts": prompts,
        "hessel": [float(v) for v in per],
        "torchmetrics": tm,
        **({"ts2": old["ts2"]} if "ts2" in old else {}),
        "source": {
            "hessel": "jmhessel/clipscore@1036465 clipscore.get_clip_score (w=2.5, prefix 'A photo depicts '), "
                      "openai-clip 1.0.1 clip.model.CLIP, CPU float32",
            "torchmetrics": ("torchmetrics 1.9.0 functional.multimodal.clip_score per image, transformers "
                             f"{transformers.__version__} ({type(tm_proc.image_processor).__name__}), CPU float32"),
        },
    }
    expected_path.write_text(json.dumps(expected, indent=1) + "\n")
    print(json.dumps({k: expected[k] for k in ("hessel", "torchmetrics")}, indent=1))


if __name__ == "__main__":
    main()
