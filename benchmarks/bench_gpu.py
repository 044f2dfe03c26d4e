"""GPU throughput: ts2viz's engine against a plain per-image loop, on full-size architectures with random weights.

For each model the architecture is built at its released size directly on the device, in half precision,
with random weights (nothing is downloaded and nothing is written to disk), handed to ts2viz's metric
classes, and timed two ways on the same generated 512 x 512 images and prompts:

* **engine**: ``ts2viz.engine.score_images`` (images prepared in worker threads, the metric's own batch size), timed after one warm-up batch through the engine (its threads, one-time checks), as a long job runs;
* **loop**: the same metric called on one image at a time (``metric([image], [prompt])``), the plain way.

Printed: images per second of each, their ratio, and the peak GPU memory of each (``torch.cuda.max_memory_
allocated``); with ``OUT`` set (or ``--out``) the table is also written as JSON. One model failing prints its
error and the run goes on.

Models (``--models``, comma-separated; default all):

* ``clip-l14``: CLIPScore on CLIP ViT-L/14 (openai/clip-vit-large-patch14's architecture), 1024 images;
* ``pickscore-h14``: PickScore on its CLIP ViT-H/14 (the pickscore family; clipscore where it is missing), 1024 images;
* ``clip-flant5-xl``: VQAScore on CLIP-FlanT5-XL (Flan-T5-XL + CLIP ViT-L/14-336), 128 images;
* ``llava-1.5-7b``: VQAScore on LLaVA-1.5-7B (t2v_metrics' format), 128 images;
* ``qwen2-vl-7b``: VQAScore on Qwen2-VL-7B-Instruct (first-token rule), 128 images.

``--tiny`` builds tiny configs of the same five on the CPU in float32 (a test runs it). Needs only torch,
transformers, tokenizers, numpy and Pillow besides ts2viz's metric library (no UI, no open_clip)::

    python benchmarks/bench_gpu.py                  # on a GPU, about 5 minutes
    python benchmarks/bench_gpu.py --tiny --out /tmp/bench
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

PROMPTS = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights",
           "a man riding a horse on a beach at sunset", "three apples and a banana on a wooden table",
           "a yellow school bus parked next to a red fire hydrant", "an astronaut playing chess with a robot",
           "a bowl of soup that looks like a monster knitted out of wool"]
WORDS = sorted({w for p in PROMPTS for w in p.split()} | set(
    "does this figure image show please answer yes no Yes No question a chat between curious user and artificial "
    "intelligence assistant the gives helpful detailed polite answers to user's questions USER ASSISTANT".split()))
MODELS = ("clip-l14", "pickscore-h14", "clip-flant5-xl", "llava-1.5-7b", "qwen2-vl-7b")
N_IMAGES = {"clip-l14": 1024, "pickscore-h14": 1024, "clip-flant5-xl": 128, "llava-1.5-7b": 128, "qwen2-vl-7b": 128}


# -- pieces built in memory ---------------------------------------------------------------------------------

def word_tokenizer(specials: tuple = (), eos_template: bool = False):
    """A word-level fast tokenizer over the prompts' and templates' words (prompts get about as many tokens
    as a real tokenizer gives them); the model's vocabulary stays full-size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    base = ["<pad>", "</s>", "<unk>", "<s>", *specials]
    vocab = {t: i for i, t in enumerate(base + WORDS + list("?.,:;'\"!-()\n") + ["<image>"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.decoder = decoders.WordPiece(prefix="##")
    if eos_template:
        tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="</s>",
                                   bos_token="<s>", additional_special_tokens=list(specials) or None)


def build(cls, config, device, dtype):
    """``cls(config)`` with random weights, built and initialised on ``device`` itself (float32, then cast to
    ``dtype``: a 7B model peaks at about 1.5 x its float32 size there), never on disk."""
    import torch

    with torch.device(device):
        model = cls(config)
    return model.to(dtype=dtype).eval()


def clip_metric(kind: str, tiny: bool, device, dtype):
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

    from ts2viz.metrics.backbones.embedding.hf import HFEmbeddingScore

    if tiny:
        text = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
        vision = dict(image_size=224, patch_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2)
        proj = 32
    elif kind == "clip-l14":  # openai/clip-vit-large-patch14
        text = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12)
        vision = dict(image_size=224, patch_size=14, hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                      num_attention_heads=16)
        proj = 768
    else:  # yuvalkirstain/PickScore_v1 (laion/CLIP-ViT-H-14-laion2B-s32B-b79K's architecture)
        text = dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16,
                    hidden_act="gelu")
        vision = dict(image_size=224, patch_size=14, hidden_size=1280, intermediate_size=5120, num_hidden_layers=32,
                      num_attention_heads=16, hidden_act="gelu")
        proj = 1024
    tok = word_tokenizer()
    cfg = CLIPConfig(text_config={**text, "vocab_size": 49408, "max_position_embeddings": 77,
                                  "eos_token_id": 1, "pad_token_id": 0, "bos_token_id": 3},
                     vision_config=vision, projection_dim=proj)
    model = build(CLIPModel, cfg, device, dtype)
    ip = CLIPImageProcessor(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224})
    if kind == "pickscore-h14":
        try:  # the pickscore family (logit_scale.exp() * cosine), where this ts2viz has it
            from ts2viz.metrics.families.pickscore import PickScore
        except ImportError:
            PickScore = None
        if PickScore is not None and hasattr(PickScore, "from_model"):
            return PickScore.from_model(model, tok, ip, spec=f"pickscore:{kind}-random")
    return HFEmbeddingScore.from_model(model, tok, ip, spec=f"clipscore:{kind}-random", device=device)


def clip_tower_config(tiny: bool):
    from transformers import CLIPVisionConfig

    if tiny:
        return CLIPVisionConfig(image_size=28, patch_size=14, hidden_size=32, intermediate_size=64,
                                num_hidden_layers=3, num_attention_heads=2)
    return CLIPVisionConfig(image_size=336, patch_size=14, hidden_size=1024, intermediate_size=4096,
                            num_hidden_layers=24, num_attention_heads=16, projection_dim=768)


def clip_flant5_metric(tiny: bool, device, dtype):
    from transformers import CLIPImageProcessor

    from ts2viz.metrics.backbones.vqa import clip_flant5
    from ts2viz.metrics.families.vqascore import VQAScore
    from ts2viz.metrics.families.vqascore.recipes import RECIPES

    vcfg = clip_tower_config(tiny)
    t5 = (dict(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=2) if tiny else
          dict(d_model=2048, d_kv=64, d_ff=5120, num_layers=24, num_decoder_layers=24, num_heads=32))
    cfg = clip_flant5.config_class()(vocab_size=32128, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                                     pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
                                     mm_vision_tower="openai/clip-vit-large-patch14-336", mm_hidden_size=vcfg.hidden_size,
                                     **t5)
    cfg.mm_vision_config = vcfg.to_dict()
    model = build(clip_flant5.model_class(), cfg, device, dtype)
    ip = CLIPImageProcessor(size={"shortest_edge": vcfg.image_size},
                            crop_size={"height": vcfg.image_size, "width": vcfg.image_size})
    vqa = clip_flant5.vqa_class().from_parts(model, word_tokenizer(eos_template=True), ip, name="clip-flant5-xl-random",
                                             batch_size=32 if str(device).startswith("cuda") else 8)
    r = RECIPES["clip-flant5"]
    from ts2viz.metrics.common.spec import parse_spec

    return VQAScore(parse_spec("vqascore:clip-flant5-xl-random"), vqa, r.question, r.answer, r.rule, None, r)


def llava_metric(tiny: bool, device, dtype):
    from transformers import CLIPImageProcessor, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    from ts2viz.metrics.backbones.vqa.generative import GenerativeVQA
    from ts2viz.metrics.common.spec import parse_spec
    from ts2viz.metrics.families.vqascore import VQAScore
    from ts2viz.metrics.families.vqascore.recipes import RECIPES

    vcfg = clip_tower_config(tiny)
    tok = word_tokenizer()
    image_id = tok.convert_tokens_to_ids("<image>")
    lm = (dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2) if tiny else
          dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32))
    text = LlamaConfig(vocab_size=32064, max_position_embeddings=4096, pad_token_id=0, bos_token_id=3, eos_token_id=1,
                       **lm)
    cfg = LlavaConfig(vision_config=vcfg.to_dict(), text_config=text.to_dict(), image_token_id=image_id,
                      vision_feature_layer=-2, vision_feature_select_strategy="default")
    model = build(LlavaForConditionalGeneration, cfg, device, dtype)
    ip = CLIPImageProcessor(size={"shortest_edge": vcfg.image_size},
                            crop_size={"height": vcfg.image_size, "width": vcfg.image_size})
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=vcfg.patch_size,
                          vision_feature_select_strategy="default", num_additional_image_tokens=1)
    vqa = GenerativeVQA.from_model(model, proc, name="llava-1.5-7b-random",
                                   batch_size=32 if str(device).startswith("cuda") else 8)
    r = RECIPES["llava-1.5"]
    return VQAScore(parse_spec("vqascore:llava-1.5-7b-random"), vqa, r.question, r.answer, r.rule, None, r)


QWEN_TEMPLATE = ("{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
                 "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n{% for content in "
                 "message['content'] %}{% if content['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
                 "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
                 "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def qwen_metric(tiny: bool, device, dtype):
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor, Qwen2VLProcessor

    from ts2viz.metrics.backbones.vqa.generative import GenerativeVQA
    from ts2viz.metrics.common.spec import parse_spec
    from ts2viz.metrics.families.vqascore import VQAScore
    from ts2viz.metrics.families.vqascore.recipes import RECIPES

    specials = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
                "<|image_pad|>", "<|video_pad|>")
    tok = word_tokenizer(specials)
    ids = {t: tok.convert_tokens_to_ids(t) for t in specials}
    if tiny:
        size = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                    num_key_value_heads=1, rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]},
                    vision_config=dict(depth=2, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2))
    else:  # Qwen/Qwen2-VL-7B-Instruct
        size = dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                    num_key_value_heads=4, rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]},
                    vision_config=dict(depth=32, embed_dim=1280, hidden_size=3584, num_heads=16, mlp_ratio=4))
    cfg = Qwen2VLConfig(vocab_size=152064, max_position_embeddings=32768, rope_theta=1e6, tie_word_embeddings=False,
                        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
                        vision_token_id=ids["<|vision_pad|>"], image_token_id=ids["<|image_pad|>"],
                        video_token_id=ids["<|video_pad|>"], bos_token_id=ids["<|endoftext|>"],
                        eos_token_id=ids["<|im_end|>"], **size)
    model = build(Qwen2VLForConditionalGeneration, cfg, device, dtype)
    model.generation_config.repetition_penalty = 1.05  # as the release's generation config
    ip = Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=28 * 28 * 1280)
    import transformers

    video = getattr(transformers, "Qwen2VLVideoProcessor", None)  # transformers 5 wants one
    proc = Qwen2VLProcessor(image_processor=ip, tokenizer=tok, chat_template=QWEN_TEMPLATE,
                            **({"video_processor": video()} if video else {}))
    vqa = GenerativeVQA.from_model(model, proc, name="qwen2-vl-7b-random",
                                   batch_size=32 if str(device).startswith("cuda") else 8)
    r = RECIPES["qwen2-vl"]
    return VQAScore(parse_spec("vqascore:qwen2-vl-7b-random"), vqa, r.question, r.answer, r.rule, None, r)


def make_metric(name: str, tiny: bool, device, dtype):
    if name in ("clip-l14", "pickscore-h14"):
        return clip_metric(name, tiny, device, dtype)
    return {"clip-flant5-xl": clip_flant5_metric, "llava-1.5-7b": llava_metric,
            "qwen2-vl-7b": qwen_metric}[name](tiny, device, dtype)


# -- timing ---------------------------------------------------------------------------------------------------

def images(n: int):
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    return [Image.fromarray(rng.integers(0, 256, (512, 512, 3), dtype=np.uint8)) for _ in range(n)]


def timed(fn, device) -> tuple[float, float]:
    """(seconds, peak GPU memory in GiB; 0 on the CPU) of ``fn()``."""
    import torch

    cuda = str(device).startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    fn()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - t0, (torch.cuda.max_memory_allocated() / 2 ** 30 if cuda else 0.0)


def run_one(name: str, tiny: bool, device, dtype, n: int) -> dict:
    import numpy as np
    import torch

    from ts2viz import engine

    t0 = time.perf_counter()
    metric = make_metric(name, tiny, device, dtype)
    built = time.perf_counter() - t0
    ims = images(n)
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(n)]
    metric(ims[:2], prompts[:2])  # warm-up (kernels, allocator)
    # the engine's own warm-up (its threads, a first full batch, one-time checks of fast preprocessing), so
    # that the timed run is the steady state a long scoring job sees
    warm = min(n, max(2, metric.batch_size or 2))
    engine.score_images(metric, ims[:warm], prompts[:warm], use_cache=False)
    with torch.inference_mode():
        e_s, e_mem = timed(lambda: engine.score_images(metric, ims, prompts, use_cache=False), device)
        got = {}
        l_s, l_mem = timed(lambda: got.setdefault("v", [metric([im], [p])[0] for im, p in zip(ims, prompts)]), device)
    finite = bool(np.isfinite(np.asarray(got["v"], dtype=float)).all())
    return {"model": name, "images": n, "dtype": str(dtype).rpartition(".")[2], "batch_size": metric.batch_size,
            "engine_images_per_s": n / e_s, "loop_images_per_s": n / l_s, "speedup": l_s / e_s,
            "engine_peak_gib": e_mem, "loop_peak_gib": l_mem, "build_s": built, "scores_finite": finite}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated, of {', '.join(MODELS)}")
    ap.add_argument("--tiny", action="store_true", help="tiny configs on the CPU in float32 (a quick check)")
    ap.add_argument("--n", type=int, default=None, help="images per model (default: 1024 for CLIP and PickScore, 128 for the VLMs; "
                                                          "8 with --tiny)")
    ap.add_argument("--dtype", choices=("bfloat16", "float16"), default="bfloat16", help="GPU dtype")
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for bench_gpu.json (default: $OUT)")
    args = ap.parse_args(argv)
    import torch

    names = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in names if m not in MODELS]
    if bad:
        ap.error(f"unknown model(s) {bad}; known: {', '.join(MODELS)}")
    if args.tiny:
        device, dtype = "cpu", torch.float32
    else:
        if not torch.cuda.is_available():
            print("bench_gpu: no CUDA GPU (use --tiny for the CPU check)")
            return 1
        device, dtype = "cuda", getattr(torch, args.dtype)
    card = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
    rows, errors = [], {}
    for name in names:
        n = args.n or (8 if args.tiny else N_IMAGES[name])
        try:
            rows.append(run_one(name, args.tiny, device, dtype, n))
            r = rows[-1]
            print(f"{name}: engine {r['engine_images_per_s']:.1f} img/s, loop {r['loop_images_per_s']:.1f} img/s, "
                  f"{r['speedup']:.1f}x", flush=True)
        except Exception as e:  # noqa: BLE001 - one model failing must not stop the others
            errors[name] = f"{type(e).__name__}: {e}"
            print(f"{name}: FAILED {errors[name]}", flush=True)
            traceback.print_exc(limit=3)
        finally:
            import gc

            gc.collect()
            if device == "cuda":
                torch.cuda.empty_cache()
    print(f"\n{card}, {'tiny configs' if args.tiny else 'full-size random weights'}, "
          f"torch {torch.__version__}\n")
    print(f"{'model':<16}{'dtype':<10}{'batch':>6}{'engine img/s':>14}{'loop img/s':>12}{'speed-up':>10}"
          f"{'engine GiB':>12}{'loop GiB':>10}")
    for r in rows:
        print(f"{r['model']:<16}{r['dtype']:<10}{r['batch_size']:>6}{r['engine_images_per_s']:>14.1f}"
              f"{r['loop_images_per_s']:>12.1f}{r['speedup']:>9.1f}x{r['engine_peak_gib']:>12.2f}{r['loop_peak_gib']:>10.2f}")
    for name, err in errors.items():
        print(f"{name:<16}failed: {err[:200]}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        import transformers

        (out / "bench_gpu.json").write_text(json.dumps({
            "device": card, "tiny": args.tiny, "torch": torch.__version__, "transformers": transformers.__version__,
            "rows": rows, "errors": errors}, indent=1))
    return 0 if rows else 1


if __name__ == "__main__":
    raise SystemExit(main())
