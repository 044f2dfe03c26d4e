"""Reference fixture for ``hpsv3``: a tiny random-weight HPSv3 checkpoint in the released layout, scored by the
``hpsv3`` package's own ``HPSv3RewardInferencer.reward``.

Run in the side environment made by ``setup_env.sh`` (hpsv3 1.0.0 with its pinned transformers 4.45.2),
from the repository root::

    /work/side/rewards-h3/bin/python tools/reference/hpsv3/make_fixture.py

How the tiny model is made with the original's own classes. HPSv3's ``create_model_and_processor`` builds
``Qwen2VLRewardModelBT.from_pretrained(model_name_or_path)`` (a Qwen2-VL with the ``ranknet`` MLP head),
adds the ``<|Reward|>`` token and resizes the embeddings; its configuration is a YAML file
(``HPSv3_7B.yaml``: ``model_name_or_path: Qwen/Qwen2-VL-7B-Instruct``). This script writes

* ``Qwen2-VL-7B-Instruct/``: a tiny base in that repository's layout (``config.json`` of a 2-layer
  Qwen2-VL with a 2-block vision tower, a byte-level BPE tokenizer with Qwen2-VL's special tokens and chat
  template, ``preprocessor_config.json`` with Qwen2-VL's values); its random weights are made in a
  temporary folder only (HPSv3's checkpoint replaces all of them, so the fixture needs none);
* a YAML file: ``HPSv3_7B.yaml``'s values but ``model_name_or_path`` (the tiny base), float32
  (``bf16: false``, ``torch_dtype: float32``: the original's bf16 cannot run on the CPU) and SDPA attention;

then ``HPSv3RewardInferencer(config_path, checkpoint_path=None)``'s own ``create_model_and_processor``
builds the model once, its parameters get random values (the head too) and its state dict is saved as
``HPSv3/HPSv3.safetensors`` (what ``MizzenAI/HPSv3`` holds); a second ``HPSv3RewardInferencer`` then loads
that file (``load_state_dict(strict=True)``) and ``reward(image_paths, prompts)`` gives ``(mu, sigma)``
per image; the score is ``mu`` (``rewards[i][0]``, as the package's own example).

Writes ``tests/fixtures/reference/hpsv3/``: ``HPSv3/HPSv3.safetensors``, ``Qwen2-VL-7B-Instruct/``,
``images/*.png`` and ``expected.json``.

``--modes`` (issue 39, item 9) leaves the fixture above as it is and writes ``modes/``: one image per Pillow
mode (``reward_support.MODE_IMAGES``: L, LA, RGBA, P, I;16, CMYK, an EXIF-rotated JPEG) and
``modes/expected.json``: per image, ``mu`` of ``reward([path], [prompt])`` on the existing checkpoint (the
base's random weights, which the checkpoint replaces, made in a temporary copy of the base folder), and
``ts2viz_reading``: the same on the RGB copy ``image_mode=ts2viz`` reads
(``reward_support.ts2viz_reading_copy``, made here independently).
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import reward_support as rs  # noqa: E402

OUT = rs.FIXTURES / "hpsv3"
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
            "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
            "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
# Qwen2-VL-7B-Instruct's chat template
CHAT_TEMPLATE = (
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
MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r"), ("o", "n"), ("Ġ", "s")]


def tokenizer(folder: Path):
    """A byte-level BPE tokenizer with Qwen2-VL's special tokens (its own vocabulary is 151643 tokens)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import Qwen2TokenizerFast
    from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode

    chars = list(bytes_to_unicode().values())
    vocab = {c: i for i, c in enumerate(chars)}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=MERGES))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    fast = Qwen2TokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                              unk_token=None, bos_token=None, model_max_length=32768)
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_base(folder: Path, weights_to: Path) -> None:
    import torch
    from transformers import (Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor,
                              Qwen2VLProcessor)

    tok = tokenizer(folder)
    ids = {s: tok.convert_tokens_to_ids(s) for s in SPECIALS}
    ip = Qwen2VLImageProcessor(min_pixels=3136, max_pixels=12845056, patch_size=14, temporal_patch_size=2,
                               merge_size=2, image_mean=[0.48145466, 0.4578275, 0.40821073],
                               image_std=[0.26862954, 0.26130258, 0.27577711])
    proc = Qwen2VLProcessor(image_processor=ip, tokenizer=tok, chat_template=CHAT_TEMPLATE)
    proc.save_pretrained(folder)
    torch.manual_seed(30)
    cfg = Qwen2VLConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=4096, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=False, use_sliding_window=False,
        rope_scaling={"type": "mrope", "mrope_section": [4, 2, 2]},
        vision_config={"depth": 2, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                       "in_chans": 3, "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        vision_token_id=ids["<|vision_pad|>"], bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"])
    Qwen2VLForConditionalGeneration(cfg).save_pretrained(weights_to)
    cfg.save_pretrained(folder)
    for f in folder.iterdir():  # the temporary base: config, processor and weights together
        if not (weights_to / f.name).exists():
            shutil.copy(f, weights_to / f.name)


def main() -> None:
    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    import safetensors.torch
    import torch
    import yaml

    out = rs.clean(OUT)
    base = out / "Qwen2-VL-7B-Instruct"
    base.mkdir()
    tmp_base = Path(tempfile.mkdtemp()) / "Qwen2-VL-7B-Instruct"
    build_base(base, tmp_base)

    import hpsv3.inference as inf

    cfg = yaml.safe_load((Path(inf._MODEL_CONFIG_PATH) / "HPSv3_7B.yaml").read_text())
    cfg.update(model_name_or_path=str(tmp_base), bf16=False, torch_dtype="float32", disable_flash_attn2=True,
               gradient_checkpointing=False, report_to="none")
    cfg_path = Path(tempfile.mkdtemp()) / "HPSv3_tiny.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))

    # create_model_and_processor's model, with random values everywhere (the head included)
    from hpsv3.train import create_model_and_processor
    from hpsv3.utils.parser import DataConfig, ModelConfig, PEFTLoraConfig, TrainingConfig, parse_args_with_yaml

    (data_config, training_args, model_config, peft_lora_config), _ = parse_args_with_yaml(
        (DataConfig, TrainingConfig, ModelConfig, PEFTLoraConfig), str(cfg_path), is_train=False)
    torch.manual_seed(31)
    model, processor, _ = create_model_and_processor(model_config=model_config, peft_lora_config=peft_lora_config,
                                                     training_args=training_args)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.add_(torch.randn_like(p) * (0.05 if p.dim() > 1 else 0.2))
    (out / "HPSv3").mkdir()
    sd = {k: v.contiguous() for k, v in model.state_dict().items()}
    safetensors.torch.save_file(sd, out / "HPSv3" / "HPSv3.safetensors")

    torch.manual_seed(32)
    inferencer = inf.HPSv3RewardInferencer(config_path=str(cfg_path),
                                           checkpoint_path=str(out / "HPSv3" / "HPSv3.safetensors"), device="cpu")
    rows = rs.write_images(out)
    with torch.no_grad():
        rewards = inferencer.reward([str(out / r["image"]) for r in rows], [r["prompt"] for r in rows])
        for r, (mu, sigma) in zip(rows, rewards.tolist()):
            r["mu"], r["sigma"] = mu, sigma
        one = inferencer.reward([str(out / rows[0]["image"])], [rows[0]["prompt"]])
        rows[0]["mu_alone"] = one[0][0].item()

    rs.write_expected(out, {
        "family": "hpsv3",
        "made_by": "hpsv3 1.0.0 HPSv3RewardInferencer(config_path, checkpoint_path).reward(image paths, prompts)"
                   "[:, 0] (mu), all images in one batch; mu_alone: the first image in a batch of its own",
        "dtype": "float32", "device": "cpu",
        "versions": rs.versions("torch", "torchvision", "hpsv3", "transformers", "tokenizers", "pillow"),
        "checkpoint": "HPSv3/HPSv3.safetensors", "base": "Qwen2-VL-7B-Instruct", "rows": rows})


def main_modes() -> None:
    cache = Path(tempfile.mkdtemp()) / "hub"
    rs.offline_env(cache)
    import torch
    import yaml
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    tmp_base = Path(tempfile.mkdtemp()) / "Qwen2-VL-7B-Instruct"
    shutil.copytree(OUT / "Qwen2-VL-7B-Instruct", tmp_base)
    torch.manual_seed(30)
    Qwen2VLForConditionalGeneration(Qwen2VLConfig.from_pretrained(tmp_base)).save_pretrained(tmp_base)

    import hpsv3.inference as inf

    cfg = yaml.safe_load((Path(inf._MODEL_CONFIG_PATH) / "HPSv3_7B.yaml").read_text())
    cfg.update(model_name_or_path=str(tmp_base), bf16=False, torch_dtype="float32", disable_flash_attn2=True,
               gradient_checkpointing=False, report_to="none")
    cfg_path = Path(tempfile.mkdtemp()) / "HPSv3_tiny.yaml"
    cfg_path.write_text(yaml.safe_dump(cfg))
    torch.manual_seed(32)
    inferencer = inf.HPSv3RewardInferencer(config_path=str(cfg_path),
                                           checkpoint_path=str(OUT / "HPSv3" / "HPSv3.safetensors"), device="cpu")
    out = rs.clean(OUT / "modes")
    rows = rs.write_mode_images(out)
    tmp = Path(tempfile.mkdtemp())
    with torch.no_grad():
        for r in rows:
            r["mu"] = inferencer.reward([str(out / r["image"])], [r["prompt"]])[0][0].item()
            copy = rs.ts2viz_reading_copy(out / r["image"], tmp / (r["image"] + ".png"))
            r["ts2viz_reading"] = inferencer.reward([str(copy)], [r["prompt"]])[0][0].item()
    rs.write_expected(out, {
        "family": "hpsv3",
        "made_by": "hpsv3 1.0.0 HPSv3RewardInferencer(config_path, checkpoint_path=../HPSv3/HPSv3.safetensors)"
                   ".reward([image path], [prompt])[0][0] (mu), one image per call; ts2viz_reading: the same on the "
                   "RGB copy image_mode=ts2viz reads",
        "dtype": "float32", "device": "cpu",
        "versions": rs.versions("torch", "torchvision", "hpsv3", "transformers", "tokenizers", "pillow"),
        "checkpoint": "../HPSv3/HPSv3.safetensors", "base": "../Qwen2-VL-7B-Instruct", "rows": rows})


if __name__ == "__main__":
    main_modes() if "--modes" in sys.argv[1:] else main()
