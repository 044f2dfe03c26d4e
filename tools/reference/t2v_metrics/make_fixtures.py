"""Reference fixtures for VQAScore / ITMScore / ITCScore made by t2v_metrics 3.0's own code (side venv only).

For each model: build a tiny random-weight checkpoint **with the original's classes** (t2v_metrics' own
CLIPT5ForConditionalGeneration / LlavaLlamaForCausalLM, LAVIS' Blip2T5Instruct / Blip2Qformer as vendored
in t2v_metrics, transformers' Qwen2-VL and PaliGemma classes t2v_metrics loads), save it in the layout
the released checkpoint has, point t2v_metrics' model table at it, and run t2v_metrics' own ``forward``
on three generated images (wide, tall, square) x three prompts. Writes
``tests/fixtures/reference/vqascore/<name>/`` (checkpoint, expected.json, provenance.json).

Usage (from the repository root, after setup_side_venv.sh)::

    tools/reference/t2v_metrics/run.sh make_fixtures.py [NAME ...]   # default: all

The scores are computed one (image, prompt) pair per ``forward`` call, as t2v_metrics' ``batch_forward``
calls it, in float32 on the CPU (each loader's cast to bf16/fp16 is undone right after loading: see
each fixture's provenance.json).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import torch

import common as C
import tiny_tokenizers as T
from t2v_import import model_module

CLIP_TOWER_ID = "openai/clip-vit-large-patch14-336"


# -- shared tiny parts ---------------------------------------------------------------------------------------

def tiny_clip_tower(seed: int, folder: Path, image_size: int = 28, patch: int = 7) -> Path:
    """A 3-layer CLIP vision model + CLIPImageProcessor standing in for openai/clip-vit-large-patch14-336
    (its processor: resize the shortest edge, centre crop, CLIP mean/std), put in the side hub cache."""
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModel

    torch.manual_seed(seed)
    cfg = CLIPVisionConfig(image_size=image_size, patch_size=patch, hidden_size=24, intermediate_size=40,
                           num_hidden_layers=3, num_attention_heads=2, projection_dim=24)
    bf16_exact(CLIPVisionModel(cfg).eval()).save_pretrained(folder)
    CLIPImageProcessor(size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size},
                       do_center_crop=True, resample=3).save_pretrained(folder)
    C.put_in_hub_cache(CLIP_TOWER_ID, folder)
    return folder


def bf16_exact(model):
    """Round every weight to a bfloat16 value (kept in float32): t2v_metrics' loaders cast these models to
    bfloat16, which then loses nothing, and ``.float()`` afterwards gives back exactly the saved weights."""
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.bfloat16().float())
    return model


def score_pairs(forward, images, **kw) -> list[dict]:
    out = []
    for im, prompt in C.pairs(images):
        s = forward([str(im)], [prompt], **kw)
        out.append({"image": C.rel(im), "prompt": prompt, "score": float(torch.as_tensor(s).reshape(-1)[0])})
    return out


# -- CLIP-FlanT5 ---------------------------------------------------------------------------------------------

def clip_flant5(images):
    mod = model_module("vqascore_models.clip_t5_model")
    from t2v_metrics.models.vqascore_models.clip_t5.model import CLIPT5Config, CLIPT5ForConditionalGeneration

    out = C.OUT / "clip-flant5"
    if out.exists():
        shutil.rmtree(out)
    ckpt = out / "clip-flant5-tiny"
    tiny_clip_tower(101, out / CLIP_TOWER_ID.split("/")[-1])
    tok = T.t5_tokenizer(ckpt)
    torch.manual_seed(102)
    cfg = CLIPT5Config(vocab_size=len(tok) + 28, d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=2,
                       num_heads=2, relative_attention_num_buckets=8, feed_forward_proj="gated-gelu",
                       tie_word_embeddings=False, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
                       mm_vision_tower=CLIP_TOWER_ID, mm_vision_select_layer=-2, mm_vision_select_feature="patch",
                       mm_projector_type="mlp2x_gelu", mm_hidden_size=24, use_mm_proj=True, image_aspect_ratio="pad",
                       architectures=["CLIPT5ForConditionalGeneration"])
    model = CLIPT5ForConditionalGeneration(cfg).eval()
    with torch.no_grad():  # smaller logits: answer likelihoods around 1e-4, not 1e-28
        model.lm_head.weight.mul_(0.5)
    bf16_exact(model).save_pretrained(ckpt, safe_serialization=False)  # pytorch_model.bin, as the release (shared embed_tokens alias)
    entry = mod.CLIP_T5_MODELS["clip-flant5-xxl"]
    entry["model"]["path"] = str(ckpt)
    entry["tokenizer"]["path"] = str(ckpt)
    with tempfile.TemporaryDirectory() as cache:
        m = mod.CLIPT5Model("clip-flant5-xxl", device="cpu", cache_dir=cache)
    m.model.float()
    scores = score_pairs(m.forward, images)
    return C.write_fixture(
        "clip-flant5", t2v_model="clip-flant5-xxl", scores=scores,
        how="t2v_metrics.models.vqascore_models.clip_t5_model.CLIPT5Model.forward, defaults "
            f"(question {mod.default_question_template!r}, answer {mod.default_answer_template!r})",
        changes=["CLIP_T5_MODELS['clip-flant5-xxl'] model and tokenizer paths set to the fixture folder",
                 f"{CLIP_TOWER_ID} served from the side venv's hub cache by a tiny CLIP (the folder beside the checkpoint)",
                 "model.float() after t2v_metrics' load_pretrained_model (which casts to bfloat16); the saved weights "
                 "are bfloat16 values, so the cast loses nothing"],
        extra={"checkpoint": C.rel(ckpt), "vision_tower": C.rel(out / CLIP_TOWER_ID.split('/')[-1])})


# -- LLaVA-1.5 / LLaVA-1.6 (LLaVA's own code layout) ------------------------------------------------------------

def _llava(version: str, images):
    is16 = version == "1.6"
    mod = model_module("vqascore_models.llava16_model" if is16 else "vqascore_models.llava_model")
    pkg = "llava_16" if is16 else "llava"
    lm = __import__(f"t2v_metrics.models.vqascore_models.{pkg}.model.language_model.llava_llama",
                    fromlist=["LlavaConfig", "LlavaLlamaForCausalLM"])
    name = "llava-v1.6" if is16 else "llava-v1.5"
    out = C.OUT / name
    if out.exists():
        shutil.rmtree(out)
    ckpt = out / (name + "-tiny")
    tiny_clip_tower(111 if is16 else 121, out / CLIP_TOWER_ID.split("/")[-1])
    tok_cfg = dict(legacy=False, model_max_length=4096 if is16 else 2048, padding_side="right")
    if is16:
        tok_cfg["pad_token"] = "<unk>"
    tok = T.llama_tokenizer(ckpt, **tok_cfg)
    torch.manual_seed(112 if is16 else 122)
    mm = dict(mm_vision_tower=CLIP_TOWER_ID, mm_hidden_size=24, mm_projector_type="mlp2x_gelu",
              mm_vision_select_layer=-2, mm_vision_select_feature="patch", mm_use_im_start_end=False,
              mm_use_im_patch_token=False, tune_mm_mlp_adapter=False, freeze_mm_mlp_adapter=False, use_mm_proj=True,
              tokenizer_model_max_length=tok_cfg["model_max_length"], tokenizer_padding_side="right")
    if is16:
        mm.update(mm_patch_merge_type="spatial_unpad", image_aspect_ratio="anyres",
                  image_grid_pinpoints=[[28, 56], [56, 28], [56, 56], [28, 84], [84, 28]], image_crop_resolution=None,
                  image_split_resolution=None, mm_vision_tower_lr=2e-6, unfreeze_mm_vision_tower=True)
    else:
        mm.update(mm_patch_merge_type="flat", image_aspect_ratio="pad")
    cfg = lm.LlavaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096 if is16 else 2048,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False,
                         architectures=["LlavaLlamaForCausalLM"], **mm)
    model = lm.LlavaLlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
        if is16:
            model.model.image_newline.normal_(0, 0.2)
            # LLaVA-1.6 fine-tuned its tower (unfreeze_mm_vision_tower): the release holds the tower's weights,
            # which differ from mm_vision_tower's; LLaVA-1.5 froze it and saved none
            for p in model.model.vision_tower.parameters():
                p.add_(torch.randn_like(p) * 0.05)
    bf16_exact(model)
    state = {k: v for k, v in model.state_dict().items() if is16 or not k.startswith("model.vision_tower.")}
    model.save_pretrained(ckpt, state_dict=state, safe_serialization=False)
    raw = json.loads((ckpt / "config.json").read_text())
    raw["model_type"] = "llava_llama" if is16 else "llava"  # as the releases' config.json has it
    (ckpt / "config.json").write_text(json.dumps(raw, indent=2))
    table = mod.LLAVA16_MODELS if is16 else mod.LLAVA_MODELS
    key = "llava-v1.6-13b" if is16 else "llava-v1.5-13b"
    table[key]["model"]["path"] = str(ckpt)
    table[key]["tokenizer"]["path"] = str(ckpt)
    cls = mod.LLaVA16Model if is16 else mod.LLaVAModel
    with tempfile.TemporaryDirectory() as cache:
        m = cls(key, device="cpu", cache_dir=cache)
    m.model.float()
    scores = score_pairs(m.forward, images)
    return C.write_fixture(
        name, t2v_model=key, scores=scores,
        how=f"{cls.__module__}.{cls.__name__}.forward, defaults (question {mod.default_question_template!r}, "
            f"answer {mod.default_answer_template!r} + '</s>')",
        changes=[f"{'LLAVA16_MODELS' if is16 else 'LLAVA_MODELS'}[{key!r}] model and tokenizer paths set to the "
                 "fixture folder",
                 f"{CLIP_TOWER_ID} served from the side venv's hub cache by a tiny CLIP (the folder beside the checkpoint)",
                 "model.float() after t2v_metrics' load_pretrained_model (which casts to bfloat16); the saved weights "
                 "are bfloat16 values, so the cast loses nothing",
                 "config.json model_type rewritten to the release's after save_pretrained (t2v_metrics' class says "
                 f"{type(cfg).model_type!r})"],
        extra={"checkpoint": C.rel(ckpt), "vision_tower": C.rel(out / CLIP_TOWER_ID.split('/')[-1])})


def llava15(images):
    return _llava("1.5", images)


def llava16(images):
    return _llava("1.6", images)


# -- Qwen2-VL (transformers' class, as t2v_metrics loads it) -----------------------------------------------------

#: Qwen2-VL-Instruct's chat template (its chat_template.json)
QWEN2VL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% endif %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}"
    "<|im_end|>\n{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' or 'image' in "
    "content or 'image_url' in content %}{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}"
    "Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] "
    "== 'video' or 'video' in content %}{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}"
    "Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>{% elif 'text' in content "
    "%}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}"
    "<|im_start|>assistant\n{% endif %}")


def qwen2_vl(images):
    mod = model_module("vqascore_models.qwen2vl_model")
    from transformers import (GenerationConfig, Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor,
                              Qwen2VLProcessor)

    out = C.OUT / "qwen2-vl"
    if out.exists():
        shutil.rmtree(out)
    ckpt = out / "qwen2-vl-tiny"
    tok = T.qwen2_tokenizer(ckpt)
    ids = {t: tok.convert_tokens_to_ids(t) for t in T.QWEN_SPECIALS}
    ip = Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=28 * 28 * 1280, patch_size=14, temporal_patch_size=2,
                               merge_size=2)
    Qwen2VLProcessor(image_processor=ip, tokenizer=tok, chat_template=QWEN2VL_CHAT_TEMPLATE).save_pretrained(ckpt)
    torch.manual_seed(131)
    cfg = Qwen2VLConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
                        rope_scaling={"type": "mrope", "mrope_section": [2, 3, 3]}, tie_word_embeddings=False,
                        vision_config=dict(depth=2, embed_dim=32, hidden_size=32, num_heads=2, mlp_ratio=2,
                                           patch_size=14, spatial_merge_size=2, temporal_patch_size=2),
                        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
                        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
                        vision_token_id=ids["<|vision_pad|>"], image_token_id=ids["<|image_pad|>"],
                        video_token_id=ids["<|video_pad|>"], architectures=["Qwen2VLForConditionalGeneration"])
    model = Qwen2VLForConditionalGeneration(cfg).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(8.0)
    bf16_exact(model).save_pretrained(ckpt)
    # the release's generation config (Qwen2-VL-7B-Instruct): greedy generate still applies repetition_penalty
    GenerationConfig(bos_token_id=ids["<|endoftext|>"], pad_token_id=ids["<|endoftext|>"], do_sample=True,
                     eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]], repetition_penalty=1.05, temperature=0.1,
                     top_p=0.001, top_k=1).save_pretrained(ckpt)
    key = "qwen2-vl-7b"
    mod.QWEN2_VL_MODELS[key]["model"]["path"] = str(ckpt)
    mod.QWEN2_VL_MODELS[key]["tokenizer"]["path"] = str(ckpt)
    mod.QWEN2_VL_MODELS[key]["model"]["attn_implementation"] = "eager"
    m = mod.Qwen2VLModel(key, device="cpu")
    m.model.float()
    scores = score_pairs(m.forward, images + [C.make_large_image()])
    return C.write_fixture(
        "qwen2-vl", t2v_model=key, scores=scores,
        how="t2v_metrics.models.vqascore_models.qwen2vl_model.Qwen2VLModel.forward, defaults (question "
            "'Does this image show \"{}\"?', answer 'Yes'): softmax of generate()'s first-step scores at the "
            "answer's first token",
        changes=[f"QWEN2_VL_MODELS[{key!r}] model and tokenizer paths set to the fixture folder",
                 "attn_implementation 'eager' instead of 'flash_attention_2' (no flash-attn on a CPU)",
                 "model.float() after loading (t2v_metrics loads bfloat16); the saved weights are bfloat16 values, so "
                 "the cast loses nothing"],
        extra={"checkpoint": C.rel(ckpt)})


# -- PaliGemma ---------------------------------------------------------------------------------------------------

def paligemma(images):
    mod = model_module("vqascore_models.paligemma_model")
    from transformers import (PaliGemmaConfig, PaliGemmaForConditionalGeneration, PaliGemmaProcessor,
                              SiglipImageProcessor)

    out = C.OUT / "paligemma"
    if out.exists():
        shutil.rmtree(out)
    ckpt = out / "paligemma-tiny"
    tok = T.gemma_tokenizer(ckpt)
    ip = SiglipImageProcessor(size={"height": 28, "width": 28}, image_mean=[0.5] * 3, image_std=[0.5] * 3, resample=3)
    ip.image_seq_length = 16  # (28 / 7) ** 2
    proc = PaliGemmaProcessor(image_processor=ip, tokenizer=tok)  # adds <image> and the <loc>/<seg> tokens
    proc.save_pretrained(ckpt)
    tok = proc.tokenizer
    torch.manual_seed(141)
    cfg = PaliGemmaConfig(
        vision_config=dict(model_type="siglip_vision_model", image_size=28, patch_size=7, hidden_size=32,
                           intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, projection_dim=32),
        text_config=dict(model_type="gemma", vocab_size=len(tok), hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                         max_position_embeddings=512, pad_token_id=0, bos_token_id=2, eos_token_id=1),
        image_token_index=proc.image_token_id, projection_dim=32, hidden_size=32, vocab_size=len(tok),
        pad_token_id=0, bos_token_id=2, eos_token_id=1, architectures=["PaliGemmaForConditionalGeneration"])
    model = PaliGemmaForConditionalGeneration(cfg).eval()
    with torch.no_grad():  # a sharper output distribution (Gemma's LM head is its tied input embedding)
        model.language_model.model.norm.weight.fill_(10.0)
    model.save_pretrained(ckpt)
    key = "paligemma-3b-mix-448"
    mod.PALIGEMMA_MODELS[key]["model"]["path"] = str(ckpt)
    mod.PALIGEMMA_MODELS[key]["processor"]["path"] = str(ckpt)
    m = mod.PaliGemmaModel(key, device="cpu")
    scores = score_pairs(m.forward, images)
    return C.write_fixture(
        "paligemma", t2v_model=key, scores=scores,
        how="t2v_metrics.models.vqascore_models.paligemma_model.PaliGemmaModel.forward, defaults (question "
            "'Does this figure show \"{}\"? Please answer yes or no.', answer 'Yes'): softmax of generate()'s "
            "first-step scores at the answer's first token",
        changes=[f"PALIGEMMA_MODELS[{key!r}] model and processor paths set to the fixture folder"],
        extra={"checkpoint": C.rel(ckpt)})


# -- LAVIS (as vendored in t2v_metrics): InstructBLIP Flan-T5 and BLIP-2 ITM / ITC ------------------------------

LAVIS = "t2v_metrics.models.vqascore_models.lavis"
VIT_WIDTH, VIT_DEPTH, VIT_HEADS, VIT_MLP = 32, 2, 2, 4.3637   # EVA ViT-g's mlp_ratio, tiny width
QF = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48, max_position_embeddings=512)


def tiny_bert_in_hub_cache(seed: int, work: Path) -> None:
    """A tiny ``bert-base-uncased`` (config, WordPiece vocab, weights) in the side hub cache: LAVIS builds its
    Q-Former from that hub id (config and weights) and its tokenizer from the same id."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    folder = work / "bert-base-uncased"
    vocab = T.bert_vocab(folder)
    tok = BertTokenizer(str(vocab), do_lower_case=True)
    tok.save_pretrained(folder)
    torch.manual_seed(seed)
    BertForMaskedLM(BertConfig(vocab_size=len(tok), **QF)).eval().save_pretrained(folder)
    C.put_in_hub_cache("bert-base-uncased", folder)


def patch_lavis_vit():
    """LAVIS' ``create_eva_vit_g`` builds EVA ViT-g (1B parameters) and downloads its weights; the stand-in
    builds the same class (LAVIS' eva_vit.VisionTransformer, EVA-g's layer layout) at a tiny width."""
    from functools import partial

    import importlib

    eva = importlib.import_module(LAVIS + ".models.eva_vit")
    blip2 = importlib.import_module(LAVIS + ".models.blip2_models.blip2")

    def tiny_eva(img_size=224, drop_path_rate=0.0, use_checkpoint=False, precision="fp16"):
        vit = eva.VisionTransformer(img_size=img_size, patch_size=14, use_mean_pooling=False, embed_dim=VIT_WIDTH,
                                    depth=VIT_DEPTH, num_heads=VIT_HEADS, mlp_ratio=VIT_MLP, qkv_bias=True,
                                    drop_path_rate=drop_path_rate, norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
                                    use_checkpoint=use_checkpoint)
        with torch.no_grad():  # LAVIS initialises q/v biases to zero; the release's are not
            for blk in vit.blocks:
                blk.attn.q_bias.normal_(0, 0.2)
                blk.attn.v_bias.normal_(0, 0.2)
        if precision == "fp16":
            eva.convert_weights_to_fp16(vit)
        return vit

    blip2.create_eva_vit_g = tiny_eva


def lavis_vision_to_hf(state: dict, depth: int) -> dict:
    """LAVIS' EVA ViT + ln_vision keys -> transformers' BLIP-2 / InstructBLIP ``vision_model.*`` (the q and v
    biases become one qkv bias with zeros for k)."""
    out = {}
    ren = {"visual_encoder.cls_token": "vision_model.embeddings.class_embedding",
           "visual_encoder.pos_embed": "vision_model.embeddings.position_embedding",
           "visual_encoder.patch_embed.proj.weight": "vision_model.embeddings.patch_embedding.weight",
           "visual_encoder.patch_embed.proj.bias": "vision_model.embeddings.patch_embedding.bias",
           "ln_vision.weight": "vision_model.post_layernorm.weight", "ln_vision.bias": "vision_model.post_layernorm.bias"}
    for a, b in ren.items():
        out[b] = state[a]
    for i in range(depth):
        src, dst = f"visual_encoder.blocks.{i}.", f"vision_model.encoder.layers.{i}."
        for a, b in (("norm1", "layer_norm1"), ("norm2", "layer_norm2"), ("attn.proj", "self_attn.projection"),
                     ("mlp.fc1", "mlp.fc1"), ("mlp.fc2", "mlp.fc2")):
            out[dst + b + ".weight"] = state[src + a + ".weight"]
            out[dst + b + ".bias"] = state[src + a + ".bias"]
        out[dst + "self_attn.qkv.weight"] = state[src + "attn.qkv.weight"]
        q, v = state[src + "attn.q_bias"], state[src + "attn.v_bias"]
        out[dst + "self_attn.qkv.bias"] = torch.cat([q, torch.zeros_like(v), v])
    return out


def lavis_qformer_to_hf(state: dict, prefix_out: str, emb_out: str, layernorm_out: str) -> dict:
    """LAVIS' ``Qformer.bert.*`` keys -> transformers' (``attention.self`` -> ``attention.attention``)."""
    out = {}
    for k, v in state.items():
        if not k.startswith("Qformer.bert."):
            continue
        k = k[len("Qformer.bert."):]
        if k.startswith("embeddings."):
            if k.endswith("position_ids"):
                continue
            if k.startswith("embeddings.LayerNorm."):
                out[layernorm_out + k[len("embeddings.LayerNorm."):]] = v
            else:
                out[emb_out + k[len("embeddings."):]] = v
            continue
        out[prefix_out + k.replace(".self.", ".attention.")] = v
    return out


def instructblip_flant5(images):
    import importlib

    mod = model_module("vqascore_models.instructblip_model")
    from transformers import (BlipImageProcessor, BertTokenizerFast, InstructBlipConfig,
                              InstructBlipForConditionalGeneration, InstructBlipProcessor, T5Config,
                              T5ForConditionalGeneration as HFT5, T5TokenizerFast)

    out = C.OUT / "instructblip-flant5"
    if out.exists():
        shutil.rmtree(out)
    work = Path(tempfile.mkdtemp())
    tiny_bert_in_hub_cache(151, work)
    patch_lavis_vit()
    t5_dir = work / "flan-t5-tiny"
    tok = T.t5_tokenizer(t5_dir)
    T5TokenizerFast.from_pretrained(t5_dir).save_pretrained(t5_dir)  # google/flan-t5-* ship tokenizer.json too
    torch.manual_seed(152)
    tcfg = T5Config(vocab_size=len(tok) + 28, d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=2,
                    num_heads=2, relative_attention_num_buckets=8, feed_forward_proj="gated-gelu",
                    tie_word_embeddings=False, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    t5 = HFT5(tcfg).eval()
    with torch.no_grad():
        t5.lm_head.weight.mul_(0.5)
    t5.save_pretrained(t5_dir)
    Instruct = importlib.import_module(LAVIS + ".models.blip2_models.blip2_t5_instruct").Blip2T5Instruct
    torch.manual_seed(153)
    lavis = Instruct(vit_model="eva_clip_g", img_size=224, vit_precision="fp16", num_query_token=4,
                     t5_model=str(t5_dir), prompt="", max_txt_len=128, max_output_txt_len=256).eval().float()
    with torch.no_grad():  # LAVIS initialises the query tokens and projection small; spread them as trained ones are
        lavis.query_tokens.normal_(0, 0.5)
        lavis.t5_proj.weight.mul_(30.0)
        lavis.ln_vision.weight.normal_(1.0, 0.5)
        for layer in lavis.Qformer.bert.encoder.layer:  # the image's say in the queries (cross-attention)
            if getattr(layer, "has_cross_attention", False):
                layer.crossattention.output.dense.weight.mul_(20.0)

    def tiny_loader(name, model_type, is_eval=False, device="cpu"):
        assert (name, model_type) == ("blip2_t5_instruct", "flant5xxl"), (name, model_type)
        return lavis.float() if device == "cpu" else lavis

    mod.load_model = tiny_loader
    m = mod.InstructBLIPModel("instructblip-flant5-xxl", device="cpu", cache_dir=str(work / "cache"))
    scores = score_pairs(m.forward, images)

    # the same weights in transformers' layout (as Salesforce/instructblip-flan-t5-xxl)
    qtok = BertTokenizerFast.from_pretrained("bert-base-uncased", truncation_side="left")
    qtok.add_special_tokens({"bos_token": "[DEC]"})
    tok_fast = T5TokenizerFast.from_pretrained(t5_dir, truncation_side="left")
    text_config = T5Config.from_pretrained(t5_dir, dense_act_fn="gelu", bos_token_id=1).to_dict()
    cfg = InstructBlipConfig(
        vision_config=dict(hidden_size=VIT_WIDTH, intermediate_size=int(VIT_WIDTH * VIT_MLP), num_hidden_layers=VIT_DEPTH,
                           num_attention_heads=VIT_HEADS, image_size=224, patch_size=14, layer_norm_eps=1e-6,
                           qkv_bias=True, hidden_act="gelu"),
        qformer_config=dict(vocab_size=len(qtok), encoder_hidden_size=VIT_WIDTH, cross_attention_frequency=2, **QF),
        text_config=text_config, num_query_tokens=4)
    hf = InstructBlipForConditionalGeneration(cfg).eval()
    st = lavis.state_dict()
    new = lavis_vision_to_hf(st, VIT_DEPTH)
    new.update(lavis_qformer_to_hf(st, "qformer.", "qformer.embeddings.", "qformer.embeddings.layernorm."))
    new["query_tokens"] = st["query_tokens"]
    new["language_projection.weight"], new["language_projection.bias"] = st["t5_proj.weight"], st["t5_proj.bias"]
    new.update({"language_model." + k[len("t5_model."):]: v for k, v in st.items() if k.startswith("t5_model.")})
    missing, unexpected = hf.load_state_dict(new, strict=False)
    assert not unexpected and all("embed_tokens" in k or "lm_head" in k for k in missing), (missing, unexpected)
    ckpt = out / "instructblip-flan-t5-tiny"
    hf.save_pretrained(ckpt)
    ip = BlipImageProcessor(size={"height": 224, "width": 224}, image_mean=[0.48145466, 0.4578275, 0.40821073],
                            image_std=[0.26862954, 0.26130258, 0.27577711], resample=3)
    InstructBlipProcessor(image_processor=ip, tokenizer=tok_fast, qformer_tokenizer=qtok,
                          num_query_tokens=4).save_pretrained(ckpt)
    check_instructblip_conversion(lavis, hf, m, images[0])
    shutil.rmtree(work, ignore_errors=True)
    return C.write_fixture(
        "instructblip-flant5", t2v_model="instructblip-flant5-xxl", scores=scores,
        how="t2v_metrics.models.vqascore_models.instructblip_model.InstructBLIPModel.forward, defaults (question "
            f"{mod.default_question_template!r}, answer {mod.default_answer_template!r} + '</s>')",
        changes=["LAVIS' load_model('blip2_t5_instruct', 'flant5xxl') (downloads the release) replaced by the tiny "
                 "model built with LAVIS' own Blip2T5Instruct class (t2v_metrics' vendored copy)",
                 "LAVIS' create_eva_vit_g (EVA ViT-g, downloaded weights) replaced by LAVIS' own eva_vit."
                 "VisionTransformer at width 32, depth 2 (EVA-g's patch 14, mlp ratio 4.3637, eps 1e-6)",
                 "bert-base-uncased (Q-Former config, weights, tokenizer) and the Flan-T5 (t5_model) are tiny "
                 "stand-ins in the side hub cache / a local folder",
                 "float32 on CPU (LAVIS' load_model calls model.float() on CPU)",
                 "the checkpoint here is the same weights converted to transformers' InstructBLIP layout "
                 "(tools/reference/t2v_metrics/make_fixtures.py: lavis_vision_to_hf / lavis_qformer_to_hf); "
                 "check_instructblip_conversion asserted equal T5 logits"],
        extra={"checkpoint": C.rel(ckpt)})


def check_instructblip_conversion(lavis, hf, t2v_model, image_path):
    """The converted transformers model gives LAVIS' logits for the same pixels and question (asserted)."""
    q = "Question: is this a test? Answer:"
    px = t2v_model.load_images([str(image_path)])
    with torch.no_grad():
        a = lavis({"image": px, "text_input": [q], "text_output": ["yes"]})
        ids = lavis.t5_tokenizer([q], return_tensors="pt")
        qids = lavis.tokenizer([q], return_tensors="pt")
        lab = lavis.t5_output_tokenizer(["yes"], return_tensors="pt").input_ids
        b = hf(pixel_values=px, qformer_input_ids=qids.input_ids, qformer_attention_mask=qids.attention_mask,
               input_ids=ids.input_ids, attention_mask=ids.attention_mask, labels=lab)
    la = a["loss"] if isinstance(a, dict) else a.loss
    assert torch.allclose(la, b.loss, rtol=1e-5, atol=1e-6), (la, b.loss)


def blip2_itm_itc(images):
    import importlib

    itm_mod = model_module("itmscore_models.blip2_itm_model")
    itc_mod = model_module("clipscore_models.blip2_itc_model")
    from transformers import BertTokenizerFast, BlipImageProcessor, Blip2Config, Blip2ForImageTextRetrieval, Blip2Processor

    out = C.OUT / "blip2-itm"
    if out.exists():
        shutil.rmtree(out)
    work = Path(tempfile.mkdtemp())
    tiny_bert_in_hub_cache(161, work)
    patch_lavis_vit()
    Qformer = importlib.import_module(LAVIS + ".models.blip2_models.blip2_qformer").Blip2Qformer
    torch.manual_seed(162)
    lavis = Qformer(vit_model="eva_clip_g", img_size=224, vit_precision="fp16", num_query_token=4,
                    cross_attention_freq=2, embed_dim=16, max_txt_len=35).eval().float()
    with torch.no_grad():
        lavis.query_tokens.normal_(0, 0.5)
        lavis.itm_head.weight.mul_(20.0)

    def tiny_loader(name, model_type, is_eval=False, device="cpu"):
        assert (name, model_type) == ("blip2", "pretrain"), (name, model_type)
        return lavis.float() if device == "cpu" else lavis

    itm_mod.load_model = tiny_loader
    itc_mod.load_model = tiny_loader
    itm = itm_mod.BLIP2ITMScoreModel("blip2-itm", device="cpu", cache_dir=str(work / "cache"))
    itc = itc_mod.BLIP2ITCScoreModel("blip2-itc", device="cpu", cache_dir=str(work / "cache"))
    itm_scores = score_pairs(itm.forward, images)
    itc_scores = score_pairs(itc.forward, images)

    qtok = BertTokenizerFast.from_pretrained("bert-base-uncased")
    qtok.add_special_tokens({"bos_token": "[DEC]"})
    cfg = Blip2Config(
        vision_config=dict(hidden_size=VIT_WIDTH, intermediate_size=int(VIT_WIDTH * VIT_MLP), num_hidden_layers=VIT_DEPTH,
                           num_attention_heads=VIT_HEADS, image_size=224, patch_size=14, layer_norm_eps=1e-6,
                           qkv_bias=True, hidden_act="gelu"),
        qformer_config=dict(vocab_size=len(qtok), encoder_hidden_size=VIT_WIDTH, cross_attention_frequency=2,
                            use_qformer_text_input=True, **QF),
        num_query_tokens=4, image_text_hidden_size=16, image_token_index=None)
    hf = Blip2ForImageTextRetrieval(cfg).eval()
    st = lavis.state_dict()
    new = lavis_vision_to_hf(st, VIT_DEPTH)
    new.update(lavis_qformer_to_hf(st, "qformer.", "embeddings.", "qformer.layernorm."))
    new["query_tokens"] = st["query_tokens"]
    for a, b in (("vision_proj", "vision_projection"), ("text_proj", "text_projection"), ("itm_head", "itm_head")):
        new[b + ".weight"], new[b + ".bias"] = st[a + ".weight"], st[a + ".bias"]
    missing, unexpected = hf.load_state_dict(new, strict=False)
    assert not missing and not unexpected, (missing, unexpected)
    ckpt = out / "blip2-itm-tiny"
    hf.save_pretrained(ckpt)
    ip = BlipImageProcessor(size={"height": 224, "width": 224}, image_mean=[0.48145466, 0.4578275, 0.40821073],
                            image_std=[0.26862954, 0.26130258, 0.27577711], resample=3)
    Blip2Processor(image_processor=ip, tokenizer=qtok, num_query_tokens=4).save_pretrained(ckpt)
    shutil.rmtree(work, ignore_errors=True)
    changes = ["LAVIS' load_model('blip2', 'pretrain') (downloads the release) replaced by the tiny model built with "
               "LAVIS' own Blip2Qformer class (t2v_metrics' vendored copy)",
               "LAVIS' create_eva_vit_g replaced by LAVIS' own eva_vit.VisionTransformer at width 32, depth 2",
               "bert-base-uncased (Q-Former config, weights, tokenizer) is a tiny stand-in in the side hub cache",
               "float32 on CPU (LAVIS' load_model calls model.float() on CPU)",
               "the checkpoint here is the same weights in transformers' Blip2ForImageTextRetrieval layout "
               "(as Salesforce/blip2-itm-vit-g)"]
    C.write_fixture("blip2-itc", t2v_model="blip2-itc", scores=itc_scores, changes=changes,
                    how="t2v_metrics.models.clipscore_models.blip2_itc_model.BLIP2ITCScoreModel.forward",
                    extra={"checkpoint": "blip2-itm/blip2-itm-tiny"})
    return C.write_fixture("blip2-itm", t2v_model="blip2-itm", scores=itm_scores, changes=changes,
                           how="t2v_metrics.models.itmscore_models.blip2_itm_model.BLIP2ITMScoreModel.forward",
                           extra={"checkpoint": C.rel(ckpt)})


# -- GPT-4o through top log-probabilities (t2v_metrics' gpt4v_model.py) against a local endpoint ------------------

#: the first answer token's top-2 log-probabilities the local endpoint returns for pair k (k = 0..11), and how many
#: times it first fails with HTTP 500; covers every branch of t2v_metrics' reading of them
API_CASES = [
    {"top": [("Yes", -0.2), ("No", -1.8)]},
    {"top": [("No", -0.1), ("Yes", -2.4)]},
    {"top": [("yes", -0.5), ("no", -1.0)]},
    {"top": [("no", -0.3), ("yes", -1.5)]},
    {"top": [("Sure", -0.1), ("Yes", -2.5)]},
    {"top": [("Sure", -0.1), ("Maybe", -2.5)]},
    {"top": [(" Yes", -0.2), ("No", -1.9)]},
    {"top": [("Yes", -0.7), ("No", -0.9)], "fail_first": 1},
    {"top": [("Yes", -0.05), ("No", -3.0)], "fail_first": 99},
    {"top": [("YES", -0.1), ("Yes", -0.9)]},
    {"top": [("No", -0.0), ("Yes", -9.0)]},
    {"top": [("no", -2.0), ("Yes", -0.5)], "fail_first": 2},
]


def gpt4o(images):
    import base64
    import hashlib
    import os
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    mod = model_module("vqascore_models.gpt4v_model")

    class OneTokenPerWord:  # o200k_base cannot be downloaded here: see the changes recorded below
        def encode(self, text):
            return list(range(len(text.split())))

    mod.tiktoken.encoding_for_model = lambda name: OneTokenPerWord()
    pairs = C.pairs(images)
    questions = [mod.default_question_template.format(p) for _, p in pairs]
    urls = [f"data:image/png;base64,{base64.b64encode(Path(im).read_bytes()).decode()}" for im, _ in pairs]
    key = lambda q, u: hashlib.sha256((q + "\0" + u).encode()).hexdigest()  # noqa: E731
    case_of = {key(q, u): k for k, (q, u) in enumerate(zip(questions, urls))}
    attempts = {k: 0 for k in range(len(pairs))}
    bodies = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append(body)
            content = body["messages"][0]["content"]
            k = case_of[key(content[0]["text"], content[1]["image_url"]["url"])]
            attempts[k] += 1
            case = API_CASES[k]
            if attempts[k] <= case.get("fail_first", 0):
                self.send_response(500)
                self.end_headers()
                return
            top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in case["top"]]
            reply = {"id": f"chatcmpl-{k}", "object": "chat.completion", "created": 0, "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": case["top"][0][0]},
                                  "logprobs": {"content": [{"token": case["top"][0][0], "logprob": case["top"][0][1],
                                                            "bytes": None, "top_logprobs": top}]}}],
                     "usage": {"prompt_tokens": 100 + k, "completion_tokens": 1, "total_tokens": 101 + k}}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    try:
        m = mod.GPT4VModel("gpt-4o", device="cpu", cache_dir=tempfile.mkdtemp(), api_key="sk-local-test")
        scores = score_pairs(m.forward, images)
    finally:
        srv.shutdown()
    for k, (row, case) in enumerate(zip(scores, API_CASES)):
        row.update(question=questions[k], top_logprobs=case["top"], fail_first=case.get("fail_first", 0),
                   attempts=attempts[k])
    first = bodies[0]
    shape = {k: v for k, v in first.items() if k != "messages"}
    shape["messages"] = [{"role": "user", "content": [
        {"type": "text", "text": "<question>"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,<the image file's bytes>"}}]}]
    assert all([c["type"] for c in b["messages"][0]["content"]] == ["text", "image_url"] for b in bodies)
    return C.write_fixture(
        "gpt-4o", t2v_model="gpt-4o", scores=scores,
        how="t2v_metrics.models.vqascore_models.gpt4v_model.GPT4VModel.forward (top_logprobs=2, defaults) against "
            "a local OpenAI-compatible endpoint serving API_CASES",
        changes=["tiktoken.encoding_for_model('gpt-4o') (downloads o200k_base) stood in by an encoding with one token "
                 "per word: GPT4VModel uses it only to assert that the answer ('Yes') is one token, as it is in "
                 "o200k_base",
                 "OPENAI_BASE_URL pointed at a local endpoint (tools/reference/t2v_metrics/make_fixtures.py: gpt4o) "
                 "that returns the top log-probabilities of API_CASES, and HTTP 500 for the first fail_first "
                 "attempts of a pair (the openai client retries twice itself, t2v_metrics once more)"],
        extra={"request": shape, "request_keys": sorted(first)})


BUILDERS = {"clip-flant5": clip_flant5, "llava-v1.5": llava15, "llava-v1.6": llava16, "qwen2-vl": qwen2_vl,
            "paligemma": paligemma, "instructblip-flant5": instructblip_flant5, "blip2-itm": blip2_itm_itc,
            "gpt-4o": gpt4o}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"fixtures to make (default all: {', '.join(BUILDERS)})")
    args = ap.parse_args(argv)
    names = args.names or list(BUILDERS)
    bad = [n for n in names if n not in BUILDERS]
    if bad:
        ap.error(f"unknown fixture(s) {bad}; known: {list(BUILDERS)}")
    torch.set_num_threads(1)
    images = C.make_images()
    for n in names:
        folder = BUILDERS[n](images)
        print(f"{n}: {folder}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
