"""The original's half of ``benchmarks/bench_vs_originals_clip.py``: J. Hessel et al.'s own CLIP-S loop timed on a
random-weight CLIP built with the ``clip`` package's own class (run in the side environment, by the benchmark;
never in CI).

    SIDE_PYTHON tools/reference/clipscore/bench_original.py build WORKDIR --size b32
    SIDE_PYTHON tools/reference/clipscore/bench_original.py time CLIPSCORE_CHECKOUT WORKDIR SETTING

``build`` makes ``clip.model.CLIP`` of the size asked for (``b32``: ``clip.load("ViT-B/32")``'s architecture,
12-layer 768-wide ViT on 224-px images with 32-px patches, 12-layer 512-wide text transformer, 512-d embeddings;
``tiny``: the same widths, patches and image size, 2 layers per tower; both with the package's own 49,408-token
BPE vocabulary), random weights (seed 0), float32, and writes

* ``WORKDIR/clip.pt``: the model traced to a TorchScript archive, as OpenAI's downloaded checkpoints are, which
  ``clip.load(path, jit=False)`` rebuilds the model from (``run_hessel.py`` gives that path to Hessel's script in
  place of ``"ViT-B/32"``);
* ``WORKDIR/model``: the same weights in the hub layout of ``openai/clip-vit-base-patch32`` (the key mapping
  of ``make_fixtures.to_hf_state``; the tokenizer's ``vocab.json``/``merges.txt`` from the ``clip`` package's
  own BPE file), for ts2viz to load.

``time`` loads ``clip.pt`` with ``clip.load`` and times Hessel's ``clipscore.get_clip_score(model, image_paths,
prompts, "cpu")`` (imported from the checkout and run as it is: its DataLoaders, batch 64 images / 256
captions, 8 workers, its torchvision preprocessing, "A photo depicts " prefix, ``2.5 * max(cos, 0)``) on
``WORKDIR/SETTING.json`` (``{"images": [...paths], "prompts": [...]}``, written by the benchmark): one warm-up
run, then one timed run (the benchmark interleaves calls with its own runs), written to
``WORKDIR/original-SETTING.json`` with the per-image scores.
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


#: ``clip.model.CLIP``'s shape of each size: ViT-B/32's, and a 2-layer one whose work is mostly image preparation
SIZES = {
    "b32": dict(embed_dim=512, vision_layers=12, vision_width=768, transformer_width=512, transformer_heads=8,
                transformer_layers=12),
    "tiny": dict(embed_dim=512, vision_layers=2, vision_width=768, transformer_width=512, transformer_heads=8,
                 transformer_layers=2),
}


def build(workdir: Path, size: str = "b32"):
    import clip
    import torch
    from clip.model import CLIP
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    torch.manual_seed(0)
    z = SIZES[size]
    model = CLIP(embed_dim=z["embed_dim"], image_resolution=224, vision_layers=z["vision_layers"],
                 vision_width=z["vision_width"], vision_patch_size=32, context_length=77, vocab_size=49408,
                 transformer_width=z["transformer_width"], transformer_heads=z["transformer_heads"],
                 transformer_layers=z["transformer_layers"]).float().eval()
    # every weight a float16 value, as in OpenAI's released archives: clip.load(jit=False) rebuilds the model in
    # float16 (build_model's convert_weights) before loading the state dict, then casts it to float32 on the CPU,
    # so a float32 archive's weights would reach Hessel's code rounded to float16 and ts2viz's unrounded
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())
    # a TorchScript archive, as OpenAI's downloaded checkpoints are (clip.load reads it and, with jit=False,
    # rebuilds the model from its state dict)
    example = (torch.zeros(1, 3, 224, 224), torch.zeros(1, 77, dtype=torch.long))
    torch.jit.trace_module(model, {"forward": example}).save(str(workdir / "clip.pt"))
    folder = workdir / "model"
    folder.mkdir(parents=True, exist_ok=True)
    bpe = clip.clip._tokenizer
    vocab = bpe.encoder
    merges = [f"{a} {b}" for (a, b), _ in sorted(bpe.bpe_ranks.items(), key=lambda kv: kv[1])]
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftext|>"]
    cfg = CLIPConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=z["transformer_width"],
                         intermediate_size=4 * z["transformer_width"], num_hidden_layers=z["transformer_layers"],
                         num_attention_heads=z["transformer_heads"], max_position_embeddings=77,
                         hidden_act="quick_gelu", layer_norm_eps=1e-5, bos_token_id=sot, eos_token_id=eot,
                         pad_token_id=eot),
        vision_config=dict(image_size=224, patch_size=32, hidden_size=z["vision_width"],
                           intermediate_size=4 * z["vision_width"], num_hidden_layers=z["vision_layers"],
                           num_attention_heads=z["vision_width"] // 64, hidden_act="quick_gelu", layer_norm_eps=1e-5),
        projection_dim=z["embed_dim"])
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
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("workdir", type=Path)
    b.add_argument("--size", choices=sorted(SIZES), default="b32")
    t = sub.add_parser("time")
    t.add_argument("clipscore_checkout", type=Path)
    t.add_argument("workdir", type=Path)
    t.add_argument("setting")
    args = ap.parse_args()
    if args.cmd == "build":
        args.workdir.mkdir(parents=True, exist_ok=True)
        build(args.workdir, args.size)
        return
    import warnings

    import clip
    import numpy as np
    import torch

    warnings.simplefilter("ignore")
    job = json.loads((args.workdir / f"{args.setting}.json").read_text())
    model, _ = clip.load(str(args.workdir / "clip.pt"), device="cpu", jit=False)
    model.eval()
    hessel = load_hessel(args.clipscore_checkout)
    paths, prompts = job["images"], job["prompts"]

    def run():
        with torch.no_grad():
            _, per, _ = hessel.get_clip_score(model, paths, prompts, "cpu")
        return per

    run()
    t0 = time.perf_counter()
    per = run()
    took = time.perf_counter() - t0
    (args.workdir / f"original-{args.setting}.json").write_text(json.dumps({
        "scores": [float(v) for v in np.asarray(per)], "time": took,
        "torch": torch.__version__, "threads": torch.get_num_threads(),
        "source": "jmhessel/clipscore@1036465 clipscore.get_clip_score, openai-clip clip.model.CLIP"}))


if __name__ == "__main__":
    main()
