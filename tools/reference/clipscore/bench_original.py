"""The original's half of ``benchmarks/bench_vs_originals_clip.py``: J. Hessel et al.'s own CLIP-S loop timed on a
random-weight ViT-B/32 built with the ``clip`` package's own class (run in the side environment ``fc-clip``,
by the benchmark; never in CI).

    /work/side/fc-clip/bin/python tools/reference/clipscore/bench_original.py CLIPSCORE_CHECKOUT WORKDIR --repeat 2

WORKDIR holds ``prompts.json`` (``{"images": [...paths], "prompts": [...]}``, written by the benchmark). This
script

1. builds ``clip.model.CLIP`` with ViT-B/32's shape (``clip.load("ViT-B/32")``'s architecture: 12-layer
   768-wide ViT on 224-px images with 32-px patches, 12-layer 512-wide text transformer, 512-d embeddings,
   the package's own 49,408-token BPE vocabulary), random weights (seed 0), float32;
2. writes the same weights in the hub layout of ``openai/clip-vit-base-patch32`` to ``WORKDIR/model`` (the
   key mapping of ``make_fixtures.to_hf_state``; the tokenizer's ``vocab.json``/``merges.txt`` from the
   ``clip`` package's own BPE file), for ts2viz to load;
3. times Hessel's ``clipscore.get_clip_score(model, image_paths, prompts, "cpu")`` (imported from the
   checkout and run as it is: its DataLoaders, batch 64 images / 256 captions, 8 workers, its torchvision
   preprocessing, "A photo depicts " prefix, ``2.5 * max(cos, 0)``): one warm-up run, then the best of
   ``--repeat`` runs;
4. writes ``WORKDIR/original.json``: the per-image scores of the last run and the timings.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_fixtures import load_hessel, to_hf_state  # noqa: E402


def build(folder: Path):
    import clip
    import torch
    from clip.model import CLIP
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    torch.manual_seed(0)
    model = CLIP(embed_dim=512, image_resolution=224, vision_layers=12, vision_width=768, vision_patch_size=32,
                 context_length=77, vocab_size=49408, transformer_width=512, transformer_heads=8,
                 transformer_layers=12).float().eval()
    folder.mkdir(parents=True, exist_ok=True)
    bpe = clip.clip._tokenizer
    vocab = bpe.encoder
    merges = [f"{a} {b}" for (a, b), _ in sorted(bpe.bpe_ranks.items(), key=lambda kv: kv[1])]
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftext|>"]
    cfg = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=512, intermediate_size=2048, num_hidden_layers=12,
                         num_attention_heads=8, max_position_embeddings=77, hidden_act="quick_gelu",
                         layer_norm_eps=1e-5, bos_token_id=sot, eos_token_id=eot, pad_token_id=eot),
        vision_config=dict(image_size=224, patch_size=32, hidden_size=768, intermediate_size=3072,
                           num_hidden_layers=12, num_attention_heads=12, hidden_act="quick_gelu", layer_norm_eps=1e-5),
        projection_dim=512)
    hf = CLIPModel(cfg).eval()
    missing, unexpected = hf.load_state_dict(to_hf_state(model.state_dict()), strict=False)
    assert not unexpected and all("position_ids" in k for k in missing), (missing, unexpected)
    hf.save_pretrained(folder)
    tok = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"), model_max_length=77)
    ip = CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
    CLIPProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)
    return model


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("clipscore_checkout", type=Path)
    ap.add_argument("workdir", type=Path)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    import numpy as np
    import torch

    job = json.loads((args.workdir / "prompts.json").read_text())
    model = build(args.workdir / "model")
    hessel = load_hessel(args.clipscore_checkout)
    paths, prompts = job["images"], job["prompts"]

    def run():
        with torch.no_grad():
            _, per, _ = hessel.get_clip_score(model, paths, prompts, "cpu")
        return per

    import warnings

    warnings.simplefilter("ignore")
    run()
    times, per = [], None
    for _ in range(args.repeat):
        t = time.perf_counter()
        per = run()
        times.append(time.perf_counter() - t)
    (args.workdir / "original.json").write_text(json.dumps({
        "scores": [float(v) for v in np.asarray(per)], "times": times, "best": min(times),
        "torch": torch.__version__, "threads": torch.get_num_threads(),
        "source": "jmhessel/clipscore@1036465 clipscore.get_clip_score, openai-clip clip.model.CLIP (ViT-B/32 shape)"}))


if __name__ == "__main__":
    main()
