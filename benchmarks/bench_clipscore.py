"""CLIPScore throughput: ts2viz's engine vs torchmetrics' CLIPScore on the same weights and images.

torchmetrics' ``CLIPScore`` returns one number per call (the batch mean), so per-image scores, which
meta-evaluation needs, mean calling it once per image: that is what is timed here, after a check that
both give the same per-image numbers (torchmetrics reports ``max(100 * cos, 0)``). For reference the
script also times torchmetrics on whole batches (mean only, so not usable for per-image scores).

Both sides get the same model folder (random weights with a real CLIP config, or ``--model`` a local
copy of e.g. openai/clip-vit-base-patch32), the same JPEG files, prompts taken from TS2's metadata in
order (so, as in a real SEG dataset, many images share a prompt) and the same batch size. Image
decoding is included on both sides; model loading is not. Not part of the test suite::

    .venv/bin/python benchmarks/bench_clipscore.py --size b32 --n 96 --batch-size 32
"""
from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

SIZES = {
    # ViT-B/32 CLIP (openai/clip-vit-base-patch32's architecture, 151M parameters)
    "b32": dict(text=dict(hidden_size=512, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=8),
                vision=dict(image_size=224, patch_size=32, hidden_size=768, intermediate_size=3072,
                            num_hidden_layers=12, num_attention_heads=12), proj=512, image=224),
    "small": dict(text=dict(hidden_size=256, intermediate_size=1024, num_hidden_layers=4, num_attention_heads=4),
                  vision=dict(image_size=224, patch_size=32, hidden_size=384, intermediate_size=1536,
                              num_hidden_layers=6, num_attention_heads=6), proj=256, image=224),
}


def word_bpe_tokenizer(tmp: Path, texts: list[str]):
    """A real CLIPTokenizer whose BPE merges spell out every word of ``texts``: token counts like CLIP's."""
    import json
    import re

    from tiny_models import write_clip_bpe
    from transformers import CLIPTokenizer

    vocab_file, merges_file, _ = write_clip_bpe(tmp)
    vocab = json.loads(vocab_file.read_text())
    merges = merges_file.read_text().splitlines()[1:]
    seen = set(merges)
    for w in sorted({w for t in texts for w in re.findall(r"[a-z]+", t.lower())}):
        parts = list(w[:-1]) + [w[-1] + "</w>"]
        while len(parts) > 1:
            m = f"{parts[0]} {parts[1]}"
            if m not in seen:
                seen.add(m)
                merges.append(m)
                vocab.setdefault(parts[0] + parts[1], len(vocab))
            parts = [parts[0] + parts[1]] + parts[2:]
    # keep the special tokens last, as CLIP's vocabulary does
    for sp in ("<|startoftext|>", "<|endoftext|>"):
        vocab.pop(sp)
        vocab[sp] = len(vocab)
    vocab = {k: i for i, k in enumerate(vocab)}
    vocab_file.write_text(json.dumps(vocab))
    merges_file.write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    return CLIPTokenizer(str(vocab_file), str(merges_file))


def build_model(folder: Path, size: str, texts: list[str]) -> Path:
    """A CLIPModel of the given size with random weights, a real CLIP tokenizer and image processor."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    torch.manual_seed(0)
    s = SIZES[size]
    tok = word_bpe_tokenizer(folder.parent / "bpe", texts)
    eos, bos = tok.convert_tokens_to_ids("<|endoftext|>"), tok.convert_tokens_to_ids("<|startoftext|>")
    cfg = CLIPConfig(text_config=dict(vocab_size=49408, max_position_embeddings=77, eos_token_id=eos,
                                      bos_token_id=bos, pad_token_id=eos, **s["text"]),
                     vision_config=s["vision"], projection_dim=s["proj"])
    CLIPModel(cfg).eval().save_pretrained(folder)
    ip = CLIPImageProcessor(size={"shortest_edge": s["image"]}, crop_size={"height": s["image"], "width": s["image"]})
    tok.model_max_length = 77
    CLIPProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)
    return folder


def write_images(folder: Path, n: int) -> list[Path]:
    from PIL import Image

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        # Smooth random images (JPEG-typical content) at TS2-like resolution.
        small = rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)
        im = Image.fromarray(small).resize((512, 512), Image.BICUBIC)
        p = folder / f"{i:04d}.jpg"
        im.save(p, quality=90)
        out.append(p)
    return out


def ts2_prompts(n: int) -> list[str]:
    with open(ROOT / "data" / "ts2" / "metadata.csv", newline="", encoding="utf-8") as f:
        rows = [r["target_prompt"] for r in csv.DictReader(f)]
    return [rows[i % len(rows)] for i in range(n)]


def _torchmetrics_loader(folder: Path):
    """torchmetrics 1.9 expects get_*_features to return tensors; transformers 5 returns model outputs
    (the projected embedding in ``pooler_output``). A pass-through adapter: same weights, same math."""
    import torch
    from transformers import CLIPModel, CLIPProcessor

    class Tensors(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model
            self.config = model.config

        def get_image_features(self, pixel_values):
            return self.model.get_image_features(pixel_values=pixel_values).pooler_output

        def get_text_features(self, input_ids, attention_mask):
            return self.model.get_text_features(input_ids=input_ids, attention_mask=attention_mask).pooler_output

    return lambda: (Tensors(CLIPModel.from_pretrained(folder).eval()), CLIPProcessor.from_pretrained(folder))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=sorted(SIZES), default="b32")
    ap.add_argument("--model", help="an existing local CLIP folder instead of building one")
    ap.add_argument("--n", type=int, default=96, help="number of images")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per side (best is reported)")
    ap.add_argument("--no-batched-reference", action="store_true")
    args = ap.parse_args()

    import torch
    from PIL import Image
    from torchmetrics.multimodal import CLIPScore
    from torchvision.transforms.functional import pil_to_tensor

    from ts2viz import engine, metrics

    tmp = Path(tempfile.mkdtemp(prefix="bench-clip-"))
    prompts = ts2_prompts(args.n)
    folder = Path(args.model) if args.model else build_model(tmp / f"clip-{args.size}", args.size, prompts)
    paths = write_images(tmp / "images", args.n)
    dev = args.device

    spec = f"clipscore:{folder}"
    ours_metric = metrics.load(spec, device=dev, batch_size=args.batch_size)
    tm = CLIPScore(model_name_or_path=_torchmetrics_loader(folder)).to(dev)
    if dev.startswith("cuda"):
        torch.cuda.synchronize()

    def run_ours():
        ours_metric.clear_text_memo()  # no carry-over between timed runs
        return engine.score_images(ours_metric, paths, prompts, batch_size=args.batch_size, use_cache=False)

    def run_tm_per_image():
        out = []
        for p, t in zip(paths, prompts):
            img = pil_to_tensor(Image.open(p).convert("RGB")).to(dev)
            out.append(float(tm(img, t)))
            tm.reset()
        return np.array(out)

    def run_tm_batched():
        for i in range(0, len(paths), args.batch_size):
            imgs = [pil_to_tensor(Image.open(p).convert("RGB")).to(dev) for p in paths[i:i + args.batch_size]]
            tm(imgs, prompts[i:i + args.batch_size])
            tm.reset()

    def timed(fn):
        """Best of ``--repeat`` runs after a warm-up (lazy init, allocator, thread pools)."""
        fn()
        best, r = float("inf"), None
        for _ in range(args.repeat):
            if dev.startswith("cuda"):
                torch.cuda.synchronize()
            t = time.perf_counter()
            r = fn()
            if dev.startswith("cuda"):
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t)
        return best, r

    t_ours, s_ours = timed(run_ours)
    t_tm, s_tm = timed(run_tm_per_image)
    agree = np.allclose(np.maximum(100 * s_ours, 0), s_tm, atol=1e-2 if dev == "cpu" else 0.5)
    print(f"model: {folder.name} ({sum(p.numel() for p in ours_metric.model.parameters()) / 1e6:.0f}M params), "
          f"device {dev}, torch threads {torch.get_num_threads()}")
    print(f"images: {args.n} JPEG 512x512, {len(set(prompts))} distinct TS2 prompts, batch size {args.batch_size}")
    print(f"per-image scores agree (100*max(cos,0) vs torchmetrics): {agree}")
    print(f"ts2viz engine               : {args.n / t_ours:8.1f} images/s")
    print(f"torchmetrics per image      : {args.n / t_tm:8.1f} images/s")
    print(f"speed-up                    : {t_tm / t_ours:8.2f}x")
    if not args.no_batched_reference:
        t_b, _ = timed(run_tm_batched)
        print(f"(torchmetrics batched, mean only, no per-image scores: {args.n / t_b:.1f} images/s)")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
