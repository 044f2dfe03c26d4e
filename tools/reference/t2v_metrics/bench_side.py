"""The t2v_metrics half of benchmarks/bench_vs_t2v_metrics.py (side venv only).

``build``: a mid-size random-weight checkpoint made with t2v_metrics' own classes in the released layout (a
small CLIP-FlanT5 or a small LLaVA-1.5, a ViT-B/16-sized CLIP tower at 224 px), N generated 512 x 512 PNG
images and a ts2viz dataset folder of them (``metadata.csv``), all under OUT; writes OUT/setup.json.

``time``: what a t2v_metrics user runs on them: a ``VQAScore`` (t2v_metrics' ``Score`` class, its own
``__init__`` and ``batch_forward``, on the model class its ``get_vqascore_model`` would build) and
``batch_forward`` over the (image, prompt) pairs at its default batch size (16; it calls the model's
``forward`` once per pair), float32 on the CPU, after one warm-up pair. Writes the scores and seconds to the
JSON file named by ``--result``.

    tools/reference/t2v_metrics/run.sh bench_side.py build --model clip-flant5 --out DIR --n 16
    tools/reference/t2v_metrics/run.sh bench_side.py time --out DIR --result FILE --threads 2
"""
from __future__ import annotations

import argparse
import json
import importlib
import shutil
import tempfile
import inspect
import time
from pathlib import Path

import torch

import tiny_tokenizers as T
from t2v_import import model_module

CLIP_TOWER_ID = "openai/clip-vit-large-patch14-336"
PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights",
           "a man riding a horse on a beach at sunset", "three apples and a banana on a wooden table",
           "a yellow school bus parked next to a red fire hydrant"]


def bf16_exact(model):
    """Weights rounded to bfloat16 values: t2v_metrics' loader casts to bfloat16, so the float32 copy ts2viz
    loads is then the same model (the scores of both sides are compared)."""
    with torch.no_grad():
        for t in model.parameters():
            t.copy_(t.bfloat16().float())
    return model


def images(folder: Path, n: int) -> list[Path]:
    import numpy as np
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    out = []
    for i in range(n):
        arr = rng.integers(0, 256, (512, 512, 3), dtype=np.uint8)
        p = folder / f"img{i:03d}.png"
        Image.fromarray(arr).save(p)
        out.append(p)
    return out


def tower(folder: Path) -> None:
    """A ViT-B/16-sized CLIP vision tower at 224 px (12 layers, width 768), random weights, in the side hub
    cache under the name LLaVA's and CLIP-FlanT5's configs give."""
    import os

    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModel

    torch.manual_seed(0)
    cfg = CLIPVisionConfig(image_size=224, patch_size=16, hidden_size=768, intermediate_size=3072,
                           num_hidden_layers=12, num_attention_heads=12)
    bf16_exact(CLIPVisionModel(cfg).eval()).save_pretrained(folder)
    CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}).save_pretrained(folder)
    base = Path(os.environ["HF_HOME"]) / "hub" / ("models--" + CLIP_TOWER_ID.replace("/", "--"))
    snap = base / "snapshots" / ("1" * 40)
    if snap.exists():
        shutil.rmtree(snap)
    shutil.copytree(folder, snap)
    (base / "refs").mkdir(parents=True, exist_ok=True)
    (base / "refs" / "main").write_text("1" * 40)


def clip_flant5(out: Path):
    model_module("vqascore_models.clip_t5_model")
    from t2v_metrics.models.vqascore_models.clip_t5.model import CLIPT5Config, CLIPT5ForConditionalGeneration

    ckpt = out / "clip-flant5-small"
    tok = T.t5_tokenizer(ckpt)
    torch.manual_seed(1)
    cfg = CLIPT5Config(vocab_size=len(tok) + 28, d_model=512, d_kv=64, d_ff=1024, num_layers=6, num_decoder_layers=6,
                       num_heads=8, feed_forward_proj="gated-gelu", tie_word_embeddings=False, pad_token_id=0,
                       eos_token_id=1, decoder_start_token_id=0, mm_vision_tower=CLIP_TOWER_ID,
                       mm_vision_select_layer=-2, mm_vision_select_feature="patch", mm_projector_type="mlp2x_gelu",
                       mm_hidden_size=768, use_mm_proj=True, image_aspect_ratio="pad",
                       architectures=["CLIPT5ForConditionalGeneration"])
    bf16_exact(CLIPT5ForConditionalGeneration(cfg).eval()).save_pretrained(ckpt, safe_serialization=False)
    return ckpt


def load_clip_flant5(ckpt: Path):
    """t2v_metrics' ``CLIPT5Model`` on the checkpoint (its registry entry pointed at the folder), in float32."""
    mod = model_module("vqascore_models.clip_t5_model")
    entry = mod.CLIP_T5_MODELS["clip-flant5-xxl"]
    entry["model"]["path"] = entry["tokenizer"]["path"] = str(ckpt)
    m = mod.CLIPT5Model("clip-flant5-xxl", device="cpu", cache_dir=tempfile.mkdtemp())
    m.model.float()  # its loader casts to bfloat16; the weights are bfloat16 values (bf16_exact)
    return "clip-flant5-xxl", m


def llava(out: Path):
    model_module("vqascore_models.llava_model")
    from t2v_metrics.models.vqascore_models.llava.model.language_model.llava_llama import (LlavaConfig,
                                                                                          LlavaLlamaForCausalLM)

    ckpt = out / "llava-v1.5-small"
    tok = T.llama_tokenizer(ckpt, legacy=False, model_max_length=2048, padding_side="right")
    torch.manual_seed(2)
    cfg = LlavaConfig(vocab_size=len(tok), hidden_size=512, intermediate_size=1376, num_hidden_layers=8,
                      num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=2048, pad_token_id=0,
                      bos_token_id=1, eos_token_id=2, tie_word_embeddings=False, architectures=["LlavaLlamaForCausalLM"],
                      mm_vision_tower=CLIP_TOWER_ID, mm_hidden_size=768, mm_projector_type="mlp2x_gelu",
                      mm_vision_select_layer=-2, mm_vision_select_feature="patch", mm_patch_merge_type="flat",
                      image_aspect_ratio="pad", use_mm_proj=True, tokenizer_model_max_length=2048)
    model = bf16_exact(LlavaLlamaForCausalLM(cfg).eval())
    state = {k: v for k, v in model.state_dict().items() if not k.startswith("model.vision_tower.")}
    model.save_pretrained(ckpt, state_dict=state, safe_serialization=False)
    raw = json.loads((ckpt / "config.json").read_text())
    raw["model_type"] = "llava"
    (ckpt / "config.json").write_text(json.dumps(raw, indent=2))
    return ckpt


def load_llava(ckpt: Path):
    """t2v_metrics' ``LLaVAModel`` on the checkpoint (its registry entry pointed at the folder), in float32."""
    mod = model_module("vqascore_models.llava_model")
    mod.LLAVA_MODELS["llava-v1.5-13b"]["model"]["path"] = str(ckpt)
    mod.LLAVA_MODELS["llava-v1.5-13b"]["tokenizer"]["path"] = str(ckpt)
    m = mod.LLaVAModel("llava-v1.5-13b", device="cpu", cache_dir=tempfile.mkdtemp())
    m.model.float()
    return "llava-v1.5-13b", m


def vqascore(name: str, model):
    """t2v_metrics' ``VQAScore`` around an already-built model: its ``Score.__init__`` and ``batch_forward``.

    ``t2v_metrics.VQAScore`` itself would be built through ``t2v_metrics/__init__.py``, which imports every
    video model (t2v_import.py); this subclass differs only in handing over the model that
    ``get_vqascore_model`` would have built.
    """
    score = importlib.import_module("t2v_metrics.score")

    class VQAScore(score.Score):
        def prepare_scoremodel(self, model_name, device, cache_dir, **kwargs):
            return model

        def list_all_models(self):
            return [name]

    return VQAScore(name, device="cpu")


def build(args) -> int:
    """The checkpoint, the images and their ts2viz dataset folder under ``args.out`` (setup.json)."""
    args.out.mkdir(parents=True, exist_ok=True)
    tower(args.out / CLIP_TOWER_ID.split("/")[-1])
    ckpt = (clip_flant5 if args.model == "clip-flant5" else llava)(args.out)
    ims = images(args.out / "dataset" / "images", args.n)
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(args.n)]
    # a ts2viz dataset folder of the same files: one SEG per prompt, every image at error level 0
    rows = ["id,target_prompt,file_name,image_source,rank"]
    rows += [f"{PROMPTS.index(p)},{p},images/{im.name},bench,0" for im, p in zip(ims, prompts)]
    (args.out / "dataset" / "metadata.csv").write_text("\n".join(rows) + "\n")
    (args.out / "setup.json").write_text(json.dumps({
        "model": args.model, "checkpoint": str(ckpt), "dataset": str(args.out / "dataset"),
        "images": [str(p) for p in ims], "prompts": prompts}))
    return 0


def time_it(args) -> int:
    """t2v_metrics' ``batch_forward`` over the built pairs, warm; its scores and seconds to ``args.result``."""
    torch.set_num_threads(args.threads)
    setup = json.loads((args.out / "setup.json").read_text())
    name, model = (load_clip_flant5 if setup["model"] == "clip-flant5" else load_llava)(Path(setup["checkpoint"]))
    score = vqascore(name, model)
    batch = inspect.signature(score.batch_forward).parameters["batch_size"].default
    data = [{"images": [im], "texts": [p]} for im, p in zip(setup["images"], setup["prompts"])]
    score.batch_forward(data[:1])  # warm-up
    t0 = time.perf_counter()
    scores = score.batch_forward(data)
    seconds = time.perf_counter() - t0
    args.result.write_text(json.dumps({
        "images": setup["images"], "scores": [float(x) for x in scores.flatten()], "seconds": seconds,
        "batch_size": batch, "threads": torch.get_num_threads(), "torch": torch.__version__}))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("build", "time"))
    ap.add_argument("--model", choices=("clip-flant5", "llava"), default="clip-flant5")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--result", type=Path, default=None)
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    if args.mode == "build":
        return build(args)
    return time_it(args)


if __name__ == "__main__":
    raise SystemExit(main())
