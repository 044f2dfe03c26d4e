"""Reference fixtures for VQAScore's ``recipe=t2v_metrics-3.1`` made by t2v_metrics 3.1's own code (side venv only).

t2v_metrics 3.1 (linzhiqiu/t2v_metrics commit 6ecb74f, not on PyPI) runs from a checkout (setup_side_venv.sh).
For each model: build a tiny random-weight checkpoint with transformers' classes t2v_metrics 3.1 loads
(Qwen2.5-VL, Qwen3-VL), save it in the released layout (config,
weights, tokenizer, processor, chat template, the release's generation config), point t2v_metrics' model
table at it and run its own ``forward`` on the 3.0 fixtures' images x prompts, one pair per call, in float32
on the CPU. Cases: its defaults; ``temperature=2.0``; ``max_new_tokens=3`` with a two-token answer (scored
at the end of generation). Writes ``tests/fixtures/reference/vqascore/<name>-3.1/``.

Usage (from the repository root, after setup_side_venv.sh)::

    tools/reference/t2v_metrics_3_1/run.sh make_fixtures.py [NAME ...]   # default: all
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import torch

import common as C
import tiny_tokenizers as T
from t2v_import import model_module

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("t2v30_fixtures", HERE.parent / "t2v_metrics" / "make_fixtures.py")
F30 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(F30)

COMMIT = "6ecb74f"
#: a two-token answer for the max_new_tokens case (two tokens in the tiny Qwen tokenizer: checked below)
LONG_ANSWER = "Yes yes"
CASES = {"defaults": {}, "temperature": {"temperature": 2.0},
         "end_tokens": {"max_new_tokens": 3, "answer_template": LONG_ANSWER}}

#: Qwen3-VL-Instruct's chat template, the part that user turns with an image and a text use (no default system
#: message, unlike Qwen2-VL's)
QWEN3VL_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}"
    "{{ message['content'] }}{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' or "
    "'image' in content or 'image_url' in content %}<|vision_start|><|image_pad|><|vision_end|>{% elif "
    "content['type'] == 'video' or 'video' in content %}<|vision_start|><|video_pad|><|vision_end|>{% elif 'text' "
    "in content %}{{ content['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def score_cases(forward, images) -> dict:
    out = {}
    for case, kw in CASES.items():
        rows = []
        for im, prompt in C.pairs(images):
            s = forward([str(im)], [prompt], **kw)
            rows.append({"image": C.rel(im), "prompt": prompt, "score": float(torch.as_tensor(s).reshape(-1)[0])})
        out[case] = {"options": kw, "pairs": rows}
    return out


def write(name: str, key: str, how: str, cases: dict, changes: list[str], extra: dict) -> Path:
    folder = C.OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    exp = {"t2v_metrics_model": key, "t2v_metrics_commit": COMMIT, "scoring": how, "cases": cases, **extra}
    (folder / "expected.json").write_text(json.dumps(exp, indent=1) + "\n")
    prov = {"made_by": "tools/reference/t2v_metrics_3_1/make_fixtures.py " + name,
            "command": " ".join([Path(sys.executable).name, *sys.argv]), "versions": C.versions(),
            "t2v_metrics": f"linzhiqiu/t2v_metrics commit {COMMIT} (v3.1, from a checkout)",
            "precision": "float32 on CPU", "changes_to_run_offline": changes,
            "note": "The scores are t2v_metrics 3.1's own forward() on this tiny random-weight checkpoint; no "
                    "t2v_metrics code is in this repository."}
    (folder / "provenance.json").write_text(json.dumps(prov, indent=1) + "\n")
    return folder


def _qwen_ids(tok):
    ids = {t: tok.convert_tokens_to_ids(t) for t in T.QWEN_SPECIALS}
    assert len(tok.encode(LONG_ANSWER, add_special_tokens=False)) == 2, tok.tokenize(LONG_ANSWER)
    return ids


def _generation_config(ids, folder, **kw):
    from transformers import GenerationConfig

    GenerationConfig(bos_token_id=ids["<|endoftext|>"], pad_token_id=ids["<|endoftext|>"], do_sample=True,
                     eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]], **kw).save_pretrained(folder)


def _changes(key: str, table: str) -> list[str]:
    return [f"{table}[{key!r}] model and tokenizer paths set to the fixture folder",
            "attn_implementation 'eager' instead of 'sdpa' (identical maths; the tiny model's fp32 on CPU)",
            "model.float() after loading (t2v_metrics loads bfloat16); the saved weights are bfloat16 values, so the "
            "cast loses nothing"]


def _save_and_score(model, ckpt, ids, generation: dict, mod, table: str, cls: str, key: str, name: str, images):
    """Sharpen the output layer (x8, so that scores differ between images), save the model bf16-exact with the
    release's generation config, point t2v_metrics' model table at it, run its forward on every case."""
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    F30.bf16_exact(model).save_pretrained(ckpt)
    _generation_config(ids, ckpt, **generation)
    info = getattr(mod, table)[key]
    info["model"]["path"] = info["tokenizer"]["path"] = str(ckpt)
    info["model"]["attn_implementation"] = "eager"
    m = getattr(mod, cls)(key, device="cpu")
    m.model.float()
    cases = score_cases(m.forward, images + [C.make_large_image()])
    return write(name, key, f"t2v_metrics.models.vqascore_models.{mod.__name__.rsplit('.', 1)[-1]}.{cls}.forward "
                 "(v3.1)", cases, _changes(key, table), {"checkpoint": C.rel(ckpt)})


def qwen25_vl(images):
    mod = model_module("vqascore_models.qwen2vl_model")
    from transformers import (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor,
                              Qwen2VLImageProcessor, Qwen2VLVideoProcessor)

    name = "qwen2.5-vl-3.1"
    out = C.OUT / name
    if out.exists():
        shutil.rmtree(out)
    ckpt = out / "qwen2.5-vl-tiny"
    tok = T.qwen2_tokenizer(ckpt)
    ids = _qwen_ids(tok)
    ip = Qwen2VLImageProcessor(min_pixels=3136, max_pixels=12845056, patch_size=14, temporal_patch_size=2,
                               merge_size=2, image_mean=[0.48145466, 0.4578275, 0.40821073],
                               image_std=[0.26862954, 0.26130258, 0.27577711])
    vp = Qwen2VLVideoProcessor(patch_size=14, temporal_patch_size=2, merge_size=2, image_mean=ip.image_mean,
                               image_std=ip.image_std)
    Qwen2_5_VLProcessor(image_processor=ip, tokenizer=tok, video_processor=vp,
                        chat_template=F30.QWEN2VL_CHAT_TEMPLATE).save_pretrained(ckpt)
    torch.manual_seed(311)
    cfg = Qwen2_5_VLConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                         rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}, tie_word_embeddings=False,
                         bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"]),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=2, out_hidden_size=32,
                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=56,
                           fullatt_block_indexes=[1]),
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        vision_token_id=ids["<|vision_pad|>"], image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"], tie_word_embeddings=False,
        architectures=["Qwen2_5_VLForConditionalGeneration"])
    model = Qwen2_5_VLForConditionalGeneration(cfg).eval()
    # Qwen2.5-VL-7B-Instruct's generation config: greedy generate still applies repetition_penalty
    return _save_and_score(model, ckpt, ids, dict(repetition_penalty=1.05, temperature=1e-6, top_p=0.001, top_k=1),
                           mod, "QWEN2_VL_MODELS", "Qwen2VLModel", "qwen2.5-vl-7b", name, images)


def qwen3_vl(images):
    mod = model_module("vqascore_models.qwen3vl_model")
    from transformers import (Qwen2VLImageProcessorFast, Qwen3VLConfig, Qwen3VLForConditionalGeneration,
                              Qwen3VLProcessor, Qwen3VLVideoProcessor)

    name = "qwen3-vl-3.1"
    out = C.OUT / name
    if out.exists():
        shutil.rmtree(out)
    ckpt = out / "qwen3-vl-tiny"
    tok = T.qwen2_tokenizer(ckpt)
    ids = _qwen_ids(tok)
    # Qwen3-VL-*-Instruct's preprocessor_config.json
    ip = Qwen2VLImageProcessorFast(size={"longest_edge": 16777216, "shortest_edge": 65536}, patch_size=16,
                                   temporal_patch_size=2, merge_size=2, image_mean=[0.5] * 3, image_std=[0.5] * 3)
    vp = Qwen3VLVideoProcessor(patch_size=16, temporal_patch_size=2, merge_size=2, image_mean=[0.5] * 3,
                               image_std=[0.5] * 3)
    Qwen3VLProcessor(image_processor=ip, tokenizer=tok, video_processor=vp,
                     chat_template=QWEN3VL_CHAT_TEMPLATE).save_pretrained(ckpt)
    torch.manual_seed(313)
    cfg = Qwen3VLConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=4096,
                         rope_scaling={"rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True},
                         tie_word_embeddings=False, bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"]),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=48, num_heads=2, out_hidden_size=32,
                           patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=64,
                           deepstack_visual_indexes=[0]),
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], tie_word_embeddings=False,
        architectures=["Qwen3VLForConditionalGeneration"])
    model = Qwen3VLForConditionalGeneration(cfg).eval()
    # Qwen3-VL-8B-Instruct's generation config (no repetition penalty)
    return _save_and_score(model, ckpt, ids, dict(repetition_penalty=1.0, temperature=0.7, top_p=0.8, top_k=20),
                           mod, "QWEN3_VL_MODELS", "Qwen3VLModel", "qwen3-vl-8b", name, images)


BUILDERS = {"qwen2.5-vl": qwen25_vl, "qwen3-vl": qwen3_vl}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"fixtures to make (default all: {', '.join(BUILDERS)})")
    args = ap.parse_args(argv)
    names = args.names or list(BUILDERS)
    torch.set_num_threads(1)
    images = C.make_images()
    for n in names:
        print(f"{n}: {BUILDERS[n](images)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
