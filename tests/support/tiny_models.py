"""Tiny models with real configs and random weights, saved like hub checkpoints, for offline tests.

Every builder writes a folder (or checkpoint file) that ``ts2viz.metrics.load`` reads through the same
``from_pretrained`` / ``open_clip`` path a hub id takes. Seeds are fixed so runs are reproducible.
"""
from __future__ import annotations

import json
from pathlib import Path

WORDS = ("yes no Yes No a an the of and with is are there on in red blue green cat dog tree lights teddy "
         "bear one two three figure show does this please answer or what color how many USER ASSISTANT "
         "Question Answer").split()
PUNCT = list("?.,:;'\"!-()")


def _byte_chars() -> list[str]:
    # CLIP's byte-to-unicode table: printable bytes map to themselves, the rest above 255.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write_clip_bpe(folder: Path) -> tuple[Path, Path, int]:
    """A minimal CLIP BPE vocabulary: all byte characters (with and without ``</w>``) and a few merges."""
    folder.mkdir(parents=True, exist_ok=True)
    chars = _byte_chars()
    vocab: dict[str, int] = {}
    for c in chars:
        vocab[c] = len(vocab)
    for c in chars:
        vocab[c + "</w>"] = len(vocab)
    merges = ["t h", "th e</w>", "a n", "an d</w>", "c a", "ca t</w>", "d o", "do g</w>"]
    for m in merges:
        vocab[m.replace(" ", "")] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    return folder / "vocab.json", folder / "merges.txt", len(vocab)


def clip_tokenizer(tmp: Path):
    from transformers import CLIPTokenizer

    v, m, _ = write_clip_bpe(tmp / "bpe")
    return CLIPTokenizer(str(v), str(m))


def word_tokenizer(extra_special: tuple[str, ...] = ()):
    """A word-level fast tokenizer (built with the tokenizers library) for BERT/Llama-style tiny models."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders
    from transformers import PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", *extra_special]
    vocab = {t: i for i, t in enumerate(specials + WORDS + PUNCT + [w.lower() for w in WORDS if w.lower() not in WORDS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", bos_token="<s>", eos_token="</s>",
                                   additional_special_tokens=list(extra_special) or None)


def build_clip(folder: Path, *, text_positions: int = 32, seed: int = 0, image_size: int = 32,
               patch_size: int = 8) -> Path:
    """A 2-layer transformers CLIPModel with a real CLIPTokenizer and CLIPImageProcessor (32x32 images;
    ``image_size`` / ``patch_size`` give it a full-size processor with few patches, for timing preprocessing)."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    torch.manual_seed(seed)
    tok = clip_tokenizer(folder.parent / (folder.name + "_bpe"))
    n = len(tok)
    eos = tok.convert_tokens_to_ids("<|endoftext|>")
    bos = tok.convert_tokens_to_ids("<|startoftext|>")
    cfg = CLIPConfig(
        text_config=dict(vocab_size=n, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=text_positions,
                         eos_token_id=eos, bos_token_id=bos, pad_token_id=eos),
        vision_config=dict(image_size=image_size, patch_size=patch_size, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=2),
        projection_dim=16)
    model = CLIPModel(cfg).eval()
    ip = CLIPImageProcessor(size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size})
    tok.model_max_length = text_positions
    model.save_pretrained(folder)
    CLIPProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)
    return folder


def build_siglip(folder: Path, seed: int = 1) -> Path:
    """A 2-layer SiglipModel with a word tokenizer and SiglipImageProcessor."""
    import torch
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    torch.manual_seed(seed)
    tok = word_tokenizer()
    cfg = SiglipConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=16, pad_token_id=0, projection_size=32,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=2))
    SiglipModel(cfg).eval().save_pretrained(folder)
    tok.model_max_length = 16
    tok.save_pretrained(folder)
    SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def build_align(folder: Path, seed: int = 2) -> Path:
    """A tiny AlignModel (small EfficientNet + 2-layer BERT) with a word tokenizer."""
    import torch
    from transformers import AlignConfig, AlignModel, EfficientNetImageProcessor

    torch.manual_seed(seed)
    tok = word_tokenizer()
    vision = dict(image_size=32, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=64,
                  in_channels=[32, 16], out_channels=[16, 64], kernel_sizes=[3, 3], strides=[1, 2],
                  num_block_repeats=[1, 1], expand_ratios=[1, 2], depthwise_padding=[])
    cfg = AlignConfig(text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=48,
                                       num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=64,
                                       pad_token_id=0),
                      vision_config=vision, projection_dim=16)
    AlignModel(cfg).eval().save_pretrained(folder)
    tok.model_max_length = 64
    tok.save_pretrained(folder)
    EfficientNetImageProcessor(size={"height": 32, "width": 32}, crop_size={"height": 32, "width": 32},
                               do_center_crop=False).save_pretrained(folder)
    return folder


OPENCLIP_TINY = "ts2viz-tiny-clip"


def build_openclip(folder: Path, seed: int = 3) -> Path:
    """A tiny open_clip ViT registered as ``ts2viz-tiny-clip`` and saved as a checkpoint file."""
    import open_clip
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    cfg = {"embed_dim": 16,
           "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "patch_size": 8, "head_width": 16},
           "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2}}
    (folder / f"{OPENCLIP_TINY}.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(folder / f"{OPENCLIP_TINY}.json")
    torch.manual_seed(seed)
    model = open_clip.create_model(OPENCLIP_TINY, pretrained=None)
    ckpt = folder / "tiny_openclip.pt"
    torch.save({"state_dict": model.state_dict()}, ckpt)
    return ckpt


def build_blip_vqa(folder: Path, seed: int = 4) -> Path:
    """A tiny BlipForQuestionAnswering with a word tokenizer ([DEC] as decoder start) and BlipProcessor."""
    import torch
    from transformers import BlipConfig, BlipForQuestionAnswering, BlipImageProcessor, BlipProcessor

    torch.manual_seed(seed)
    tok = word_tokenizer(extra_special=("[DEC]",))
    dec = tok.convert_tokens_to_ids("[DEC]")
    sep = tok.convert_tokens_to_ids("[SEP]")
    cfg = BlipConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, encoder_hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=64,
                         bos_token_id=dec, sep_token_id=sep, pad_token_id=0, eos_token_id=sep),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=2),
        projection_dim=16)
    BlipForQuestionAnswering(cfg).eval().save_pretrained(folder)
    ip = BlipImageProcessor(size={"height": 32, "width": 32})
    BlipProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)
    return folder


LLAVA_TEMPLATE = ("{% for message in messages %}{% if message['role'] == 'user' %}USER: "
                  "{% for c in message['content'] %}{% if c['type'] == 'image' %}<image> {% else %}{{ c['text'] }}"
                  "{% endif %}{% endfor %} {% else %}ASSISTANT: {{ message['content'][0]['text'] }} {% endif %}"
                  "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}")


def build_llava(folder: Path, seed: int = 5) -> Path:
    """A tiny LlavaForConditionalGeneration (2-layer Llama + 2-layer CLIP vision) with a LlavaProcessor."""
    import torch
    from transformers import (CLIPImageProcessor, LlavaConfig, LlavaForConditionalGeneration,
                              LlavaProcessor)

    torch.manual_seed(seed)
    tok = word_tokenizer(extra_special=("<image>",))
    tok.padding_side = "left"
    image_id = tok.convert_tokens_to_ids("<image>")
    cfg = LlavaConfig(
        vision_config=dict(model_type="clip_vision_model", image_size=32, patch_size=8, hidden_size=32,
                           intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, projection_dim=16),
        text_config=dict(model_type="llama", vocab_size=len(tok), hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=256, pad_token_id=0,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id),
        image_token_id=image_id, vision_feature_select_strategy="default", vision_feature_layer=-1)
    LlavaForConditionalGeneration(cfg).eval().save_pretrained(folder)
    ip = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
                   num_additional_image_tokens=1,
                   chat_template=LLAVA_TEMPLATE).save_pretrained(folder)
    return folder


def build_llm(folder: Path, seed: int = 6) -> Path:
    """A tiny LlamaForCausalLM with a chat template (for the local question generator)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    tok = word_tokenizer()
    tok.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}assistant:{% endif %}")
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                      pad_token_id=0, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def build_sbert(folder: Path, seed: int = 7) -> Path:
    """A tiny BertModel (2 layers) with a word tokenizer: the Sentence-BERT answer mapper's encoder."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    tok = word_tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                     num_attention_heads=2, max_position_embeddings=64, pad_token_id=tok.pad_token_id)
    BertModel(cfg).eval().save_pretrained(folder)
    tok.model_max_length = 64
    tok.save_pretrained(folder)
    return folder


def write_image_dataset(folder: Path, n_segs: int = 3, seed: int = 0) -> Path:
    """A small SEG dataset folder: metadata.csv plus JPEGs (error levels 0, 1, 2 per SEG)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    prompts = ["a red cat on the tree", "two blue dogs with a teddy bear", "the green tree with lights"]
    lines = ["id,target_prompt,file_name,image_source,rank"]
    for s in range(n_segs):
        for k, label in enumerate(["0", "1a", "1a", "2a", "2a"]):
            fn = f"images/{s:03d}-{k:02d}.jpg"
            arr = rng.integers(0, 255, size=(40 + 4 * k, 48, 3), dtype=np.uint8)
            Image.fromarray(arr).save(folder / fn, quality=90)
            lines.append(f'{s},"{prompts[s % len(prompts)]}",{fn},gen{k},{label}')
    (folder / "metadata.csv").write_text("\n".join(lines) + "\n")
    return folder


# -- one build per test process --------------------------------------------------------------------

_BUILT: dict[str, Path] = {}
_ROOT: list[Path] = []


def tiny(name: str) -> Path:
    """Path of the tiny model ``name`` (clip, siglip, align, openclip, blip, llava, llm, sbert, paligemma,
    t5nli, rtdetr, owlv2, clip_t5, clip_t5_no_tower, instructblip), built once."""
    import atexit
    import shutil
    import tempfile

    if name not in _BUILT:
        if not _ROOT:
            _ROOT.append(Path(tempfile.mkdtemp(prefix="ts2viz-tiny-")))
            atexit.register(shutil.rmtree, _ROOT[0], True)
        root = _ROOT[0]
        builders = {"clip": build_clip, "siglip": build_siglip, "align": build_align,
                    "openclip": build_openclip, "blip": build_blip_vqa, "llava": build_llava, "llm": build_llm,
                    "sbert": build_sbert, "paligemma": build_paligemma, "t5nli": build_t5_nli,
                    "rtdetr": build_rtdetr, "owlv2": build_owlv2, "clip_t5": build_clip_t5,
                    "clip_t5_no_tower": lambda f: build_clip_t5(f, with_tower=False),
                    "instructblip": build_instructblip, "blip2_t5": build_blip2_t5}
        _BUILT[name] = builders[name](root / name)
    if name == "openclip":
        import open_clip

        # The architecture must be known in every process that loads the checkpoint.
        open_clip.add_model_config(_BUILT[name].parent / f"{OPENCLIP_TINY}.json")
    return _BUILT[name]


def openclip_spec() -> str:
    return f"clipscore:openclip:{OPENCLIP_TINY}/{tiny('openclip')}"


# -- Gecko / T2I-FineEval: PaliGemma, T5 NLI, detectors ------------------------------------------------

def build_paligemma(folder: Path, seed: int = 7) -> Path:
    """A tiny PaliGemmaForConditionalGeneration (2-layer Gemma + 2-layer SigLIP) with a PaliGemmaProcessor."""
    import torch
    from transformers import (PaliGemmaConfig, PaliGemmaForConditionalGeneration, PaliGemmaProcessor,
                              SiglipImageProcessor)

    torch.manual_seed(seed)
    tok = word_tokenizer()
    tok.add_tokens(["answer", "en"])
    ip = SiglipImageProcessor(size={"height": 32, "width": 32})
    ip.image_seq_length = 16  # (32 / 8) ** 2 patches
    proc = PaliGemmaProcessor(image_processor=ip, tokenizer=tok)  # adds <image> and the loc/seg tokens
    cfg = PaliGemmaConfig(
        vision_config=dict(model_type="siglip_vision_model", image_size=32, patch_size=8, hidden_size=32,
                           intermediate_size=48, num_hidden_layers=2, num_attention_heads=2, projection_dim=32),
        text_config=dict(model_type="gemma", vocab_size=len(proc.tokenizer), hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                         max_position_embeddings=256, pad_token_id=0, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id),
        image_token_id=proc.image_token_id, projection_dim=32)
    PaliGemmaForConditionalGeneration(cfg).eval().save_pretrained(folder)
    proc.save_pretrained(folder)
    return folder


def build_t5_nli(folder: Path, seed: int = 8) -> Path:
    """A tiny T5ForConditionalGeneration whose word vocabulary has the TRUE NLI format's tokens ("1", "0")."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tok = word_tokenizer()
    tok.add_tokens(["premise", "hypothesis", "1", "0", "There", "there"])
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=2,
                   num_heads=2, relative_attention_num_buckets=8, pad_token_id=tok.pad_token_id,
                   eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.pad_token_id)
    T5ForConditionalGeneration(cfg).eval().save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


DETECTOR_CLASSES = {0: "cat", 1: "dog", 2: "tree", 3: "teddy bear"}


def build_rtdetr(folder: Path, seed: int = 9) -> Path:
    """A tiny RTDetrForObjectDetection (transformers' own ResNet backbone: no timm, nothing pretrained).

    The class heads get larger random weights than the default initialisation so that confidences
    spread around the 0.25 threshold instead of all sitting at the prior.
    """
    import torch
    from transformers import RTDetrConfig, RTDetrForObjectDetection, RTDetrImageProcessor, RTDetrResNetConfig

    torch.manual_seed(seed)
    backbone = RTDetrResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1],
                                  layer_type="basic", out_features=["stage2", "stage3", "stage4"])
    cfg = RTDetrConfig(backbone_config=backbone, encoder_in_channels=[16, 24, 32], encoder_hidden_dim=16,
                       encoder_ffn_dim=32, encoder_attention_heads=2, d_model=16, decoder_in_channels=[16, 16, 16],
                       decoder_ffn_dim=32, decoder_layers=1, decoder_attention_heads=2, decoder_n_points=2,
                       num_queries=24, num_denoising=0, initializer_range=0.3, id2label=DETECTOR_CLASSES,
                       label2id={v: k for k, v in DETECTOR_CLASSES.items()})
    model = RTDetrForObjectDetection(cfg).eval()
    with torch.no_grad():
        for head in list(model.model.decoder.class_embed) + [model.model.enc_score_head]:
            head.weight.normal_(0.0, 0.5)
    model.save_pretrained(folder)
    RTDetrImageProcessor(size={"height": 64, "width": 64}).save_pretrained(folder)
    return folder


def build_owlv2(folder: Path, seed: int = 10) -> Path:
    """A tiny Owlv2ForObjectDetection (2-layer CLIP towers) with a CLIP tokenizer and Owlv2ImageProcessor."""
    import torch
    from transformers import Owlv2Config, Owlv2ForObjectDetection, Owlv2ImageProcessor, Owlv2Processor

    torch.manual_seed(seed)
    tok = clip_tokenizer(folder.parent / (folder.name + "_bpe"))
    eos = tok.convert_tokens_to_ids("<|endoftext|>")
    bos = tok.convert_tokens_to_ids("<|startoftext|>")
    cfg = Owlv2Config(
        text_config=dict(vocab_size=len(tok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=16, eos_token_id=eos, bos_token_id=bos,
                         pad_token_id=eos),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                           num_attention_heads=2),
        projection_dim=32)
    Owlv2ForObjectDetection(cfg).eval().save_pretrained(folder)
    tok.model_max_length = 16
    Owlv2Processor(image_processor=Owlv2ImageProcessor(size={"height": 32, "width": 32}),
                   tokenizer=tok).save_pretrained(folder)
    return folder


# -- CLIP-FlanT5 (VQAScore's model) in the released checkpoints' layout ------------------------------

def t5_word_tokenizer():
    """A word tokenizer that ends every text with ``</s>`` as T5's does (pad id 0, T5's decoder start)."""
    from tokenizers import processors

    tok = word_tokenizer()
    eos = tok.eos_token_id
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos)])
    return tok


def build_clip_t5(folder: Path, seed: int = 11, with_tower: bool = True, image_size: int = 32,
                  patch_size: int = 8) -> Path:
    """A tiny CLIP-FlanT5 checkpoint written key by key in the layout of ``zhiqiulin/clip-flant5-xl``.

    Built from plain transformers parts (not ts2viz's class): a 3-layer CLIP vision model saved on its own
    as the config's ``mm_vision_tower`` folder (with its CLIPImageProcessor), a 2-layer gated-GELU T5
    (Flan-T5's feed-forward), a Linear-GELU-Linear projector, written as one state dict with the original's
    key names (``vision_tower.vision_tower.vision_model.*``, ``mm_projector.{0,2}.*``, T5's own, and the
    ``embed_tokens.weight`` alias the original model also has) and a ``config.json`` with
    ``model_type: clip_t5``. ``with_tower=False`` leaves the tower's weights out of the checkpoint.
    ``image_size`` / ``patch_size``: the tower's (e.g. 336 / 48: the released processor's size, few patches).
    """
    import torch
    from safetensors.torch import save_file
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModel, T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    tower = folder.parent / (folder.name + "_clip_tower")
    vcfg = CLIPVisionConfig(image_size=image_size, patch_size=patch_size, hidden_size=24, intermediate_size=40,
                            num_hidden_layers=3, num_attention_heads=2)
    clip = CLIPVisionModel(vcfg).eval()
    clip.save_pretrained(tower)
    CLIPImageProcessor(size={"shortest_edge": image_size},
                       crop_size={"height": image_size, "width": image_size}).save_pretrained(tower)
    tok = t5_word_tokenizer()
    # 4 unused embedding rows beyond the tokenizer, as Flan-T5 (32128 rows, 32100 tokens)
    tcfg = dict(vocab_size=len(tok) + 4, d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=2, num_heads=2,
                relative_attention_num_buckets=8, feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.pad_token_id)
    t5 = T5ForConditionalGeneration(T5Config(**tcfg)).eval()
    with torch.no_grad():  # smaller logits: answer likelihoods around 1e-2, not 1e-9
        t5.lm_head.weight.mul_(0.3)
    proj = torch.nn.Sequential(torch.nn.Linear(24, 32), torch.nn.GELU(), torch.nn.Linear(32, 32))
    state = {k: v.clone().contiguous() for k, v in t5.state_dict().items()}
    state["embed_tokens.weight"] = t5.shared.weight.detach().clone()
    state.update({f"mm_projector.{k}": v.detach().clone() for k, v in proj.state_dict().items()})
    if with_tower:
        # the hub layout of a CLIP vision model: vision_model.* (transformers 5 itself has no such prefix)
        state.update({f"vision_tower.vision_tower.vision_model.{k.removeprefix('vision_model.')}": v.clone()
                      for k, v in clip.state_dict().items()})
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {**T5Config(**tcfg).to_dict(), "model_type": "clip_t5", "architectures": ["CLIPT5ForConditionalGeneration"],
              "mm_vision_tower": str(tower), "mm_vision_select_layer": -2, "mm_vision_select_feature": "patch",
              "mm_projector_type": "mlp2x_gelu", "mm_hidden_size": 24, "use_mm_proj": True,
              "image_aspect_ratio": "pad"}
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    tok.model_max_length = 2048
    tok.save_pretrained(folder)
    return folder


def build_instructblip(folder: Path, seed: int = 12) -> Path:
    """A tiny InstructBlipForConditionalGeneration (2-layer CLIP-style vision, 2-layer Q-Former, 2-layer
    Llama: the layout of ``Salesforce/instructblip-vicuna-7b``) with an InstructBlipProcessor."""
    import torch
    from transformers import (BlipImageProcessor, InstructBlipConfig, InstructBlipForConditionalGeneration,
                              InstructBlipProcessor)

    torch.manual_seed(seed)
    tok = word_tokenizer(extra_special=("<image>",))
    qtok = word_tokenizer()
    image_id = tok.convert_tokens_to_ids("<image>")
    n_query = 4
    cfg = InstructBlipConfig(
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                           num_attention_heads=2),
        qformer_config=dict(vocab_size=len(qtok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                            num_attention_heads=2, encoder_hidden_size=32, max_position_embeddings=64,
                            pad_token_id=qtok.pad_token_id),
        text_config=dict(model_type="llama", vocab_size=len(tok), hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=512, pad_token_id=tok.pad_token_id,
                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id),
        num_query_tokens=n_query, image_token_index=image_id)
    model = InstructBlipForConditionalGeneration(cfg).eval()
    # A random language model's next-token distribution is nearly uniform (log-probabilities within
    # 1e-4 of each other), so DSG's beam search would choose among near-ties at every step and run to
    # its 256-token limit. Its output layer is sharpened (x30) and the end token's row moved towards
    # the mean final hidden state, so that answers end after a few tokens and every choice the beam
    # search makes wins by a wide margin (issue 30: tests/support/margins.py, generation_margins).
    lm = model.language_model
    head = model.get_output_embeddings()
    with torch.no_grad():
        ids = torch.randint(7, len(tok), (8, 12), generator=torch.Generator().manual_seed(0))
        hidden = (lm.model if hasattr(lm, "model") else lm)(input_ids=ids).last_hidden_state
        mean = hidden.reshape(-1, hidden.shape[-1]).mean(0)
        head.weight.mul_(30.0)
        head.weight[tok.eos_token_id] += 20.0 * mean / mean.norm()
    model.save_pretrained(folder)
    ip = BlipImageProcessor(size={"height": 32, "width": 32})
    InstructBlipProcessor(image_processor=ip, tokenizer=tok, qformer_tokenizer=qtok,
                          num_query_tokens=n_query).save_pretrained(folder)
    return folder


def build_blip2_t5(folder: Path, seed: int = 14) -> Path:
    """A tiny Blip2ForConditionalGeneration on a 2-layer gated-GELU T5 (the layout of ``Salesforce/blip2-flan-t5-xl``:
    an encoder-decoder language model) with a Blip2Processor (its image token added, as the hub's processors)."""
    import torch
    from transformers import Blip2Config, Blip2ForConditionalGeneration, Blip2Processor, BlipImageProcessor

    torch.manual_seed(seed)
    tok = t5_word_tokenizer()
    tok.add_tokens(["<image>"], special_tokens=True)
    image_id = tok.convert_tokens_to_ids("<image>")
    n_query = 4
    cfg = Blip2Config(
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                           num_attention_heads=2),
        qformer_config=dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                            num_attention_heads=2, encoder_hidden_size=32),
        text_config=dict(model_type="t5", vocab_size=len(tok), d_model=32, d_kv=16, d_ff=48, num_layers=2,
                         num_decoder_layers=2, num_heads=2, relative_attention_num_buckets=8,
                         feed_forward_proj="gated-gelu", tie_word_embeddings=False, pad_token_id=tok.pad_token_id,
                         eos_token_id=tok.eos_token_id, decoder_start_token_id=tok.pad_token_id),
        num_query_tokens=n_query, image_token_index=image_id)
    model = Blip2ForConditionalGeneration(cfg).eval()
    with torch.no_grad():  # the image's say in the queries, and answers that are not all equally likely
        model.query_tokens.normal_(0, 0.5)
        model.language_projection.weight.mul_(20)
    model.save_pretrained(folder)
    Blip2Processor(image_processor=BlipImageProcessor(size={"height": 32, "width": 32}), tokenizer=tok,
                   num_query_tokens=n_query).save_pretrained(folder)
    return folder


#: the CLIP tower LLaVA-1.5's config names (its last path part is the folder name looked for beside a checkpoint)
LLAVA_TOWER = "openai/clip-vit-large-patch14-336"


def build_llava_original(root: Path, seed: int = 13, image_size: int = 32, patch_size: int = 8) -> tuple[Path, Path]:
    """A tiny LLaVA-1.5 checkpoint in LLaVA's own code layout (haotian-liu/LLaVA, as ``liuhaotian/llava-v1.5-7b``)
    and the same weights in transformers' layout (its "llava-hf" twin). Returns (original, twin).

    Original, written from reading LLaVA's ``llava_arch.py`` / ``llava_llama.py`` / ``clip_encoder.py``:
    ``LlavaLlamaForCausalLM`` is a Llama (``model.embed_tokens``, ``model.layers.*``, ``model.norm``,
    ``lm_head``) whose ``model`` also holds ``mm_projector`` (``mlp2x_gelu``: ``model.mm_projector.0`` and
    ``.2``); the config is Llama's plus ``mm_*`` keys; the CLIP tower is not in the checkpoint but a folder
    of its own (here beside the checkpoint, named as ``mm_vision_tower``'s last part); the tokenizer has
    no ``<image>`` token; the weights are ``pytorch_model-*.bin`` shards. The twin adds ``<image>`` to the
    tokenizer (the next id) with random embedding and LM-head rows, as llava-hf's conversion did.
    ``image_size`` / ``patch_size``: the tower's (e.g. 336 / 48: the released processor's size, few patches).
    """
    import torch
    from transformers import (CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModel, LlamaConfig, LlamaForCausalLM,
                              LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor)

    torch.manual_seed(seed)
    tower = root / LLAVA_TOWER.split("/")[-1]
    vcfg = CLIPVisionConfig(image_size=image_size, patch_size=patch_size, hidden_size=24, intermediate_size=40,
                            num_hidden_layers=3, num_attention_heads=2)
    clip = CLIPVisionModel(vcfg).eval()
    clip.save_pretrained(tower)
    ip = CLIPImageProcessor(size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size})
    ip.save_pretrained(tower)
    tok = word_tokenizer()
    vocab = len(tok)
    lcfg = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512, pad_token_id=0,
                       bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, tie_word_embeddings=False)
    llama = LlamaForCausalLM(lcfg).eval()
    proj = torch.nn.Sequential(torch.nn.Linear(24, 32), torch.nn.GELU(), torch.nn.Linear(32, 32))
    state = {k: v.clone() for k, v in llama.state_dict().items()}
    state.update({f"model.mm_projector.{k}": v.detach().clone() for k, v in proj.state_dict().items()})
    orig = root / "llava-v1.5-tiny"
    orig.mkdir(parents=True, exist_ok=True)
    torch.save(state, orig / "pytorch_model-00001-of-00001.bin")
    config = {**lcfg.to_dict(), "model_type": "llava", "architectures": ["LlavaLlamaForCausalLM"],
              "mm_vision_tower": LLAVA_TOWER, "mm_hidden_size": 24, "mm_projector_type": "mlp2x_gelu",
              "mm_vision_select_layer": -2, "mm_vision_select_feature": "patch", "mm_patch_merge_type": "flat",
              "mm_use_im_start_end": False, "mm_use_im_patch_token": False, "image_aspect_ratio": "pad",
              "tune_mm_mlp_adapter": False, "freeze_mm_mlp_adapter": False, "use_mm_proj": True,
              "tokenizer_model_max_length": 2048, "tokenizer_padding_side": "right"}
    (orig / "config.json").write_text(json.dumps(config, indent=1))
    tok.save_pretrained(orig)

    # the transformers twin
    tok2 = word_tokenizer()
    tok2.add_tokens(["<image>"], special_tokens=True)
    image_id = tok2.convert_tokens_to_ids("<image>")
    cfg = LlavaConfig(vision_config={**vcfg.to_dict(), "model_type": "clip_vision_model"},
                      text_config={**lcfg.to_dict(), "model_type": "llama", "vocab_size": image_id + 1},
                      image_token_id=image_id, vision_feature_layer=-2, vision_feature_select_strategy="default")
    twin = LlavaForConditionalGeneration(cfg).eval()
    sd = twin.state_dict()
    new = {}
    for k, v in llama.state_dict().items():
        key = "lm_head.weight" if k == "lm_head.weight" else "model.language_model." + k.removeprefix("model.")
        if v.shape != sd[key].shape:  # the embedding and LM head: the new <image> row stays random
            v = torch.cat([v, sd[key][vocab:]])
        new[key] = v
    new.update({f"model.multi_modal_projector.linear_{i}.{p}": proj.state_dict()[f"{j}.{p}"]
                for i, j in ((1, 0), (2, 2)) for p in ("weight", "bias")})
    new.update({f"model.vision_tower.{k}": v for k, v in clip.state_dict().items()})
    twin.load_state_dict(new, strict=True)
    twin_dir = root / "llava-1.5-tiny-hf"
    twin.save_pretrained(twin_dir)
    LlavaProcessor(image_processor=ip, tokenizer=tok2, patch_size=8, vision_feature_select_strategy="default",
                   num_additional_image_tokens=1, chat_template=LLAVA_TEMPLATE).save_pretrained(twin_dir)
    return orig, twin_dir


# -- the registry contract: one tiny spec per registered metric family ------------------------------------------

#: the prompts the contract test scores (the canned chat server of ``llm_server`` knows them)
CONTRACT_PROMPTS = ("a red cat on the tree", "two blue dogs with a teddy bear")
#: the file names of the contract test's two generated images
CONTRACT_IMAGES = ("contract-0.png", "contract-1.png")


def _contract_questions(tmp: Path, kind: str) -> Path:
    """A TS2-format question file for :data:`CONTRACT_PROMPTS` (DSG's with a parent column)."""
    path = tmp / f"{kind}_contract_questions.csv"
    parent = ",parent_question_id" if kind == "dsg" else ""
    rows = [f"id,prompt,question_id{parent},question,choices,answer"]
    for i, (prompt, thing) in enumerate(zip(CONTRACT_PROMPTS, ("cat", "dog"))):
        dep = (",-1", ",0") if kind == "dsg" else ("", "")
        rows.append(f"{i},{prompt},0{dep[0]},is there a {thing}?,yes|no,yes")
        rows.append(f"{i},{prompt},1{dep[1]},what color is the {thing}?,red|blue|green,"
                    f"{'red' if i == 0 else 'blue'}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _contract_callable(tmp: Path) -> str:
    """``callable:`` on a function in a module written for the test (the prompt's length per image)."""
    path = tmp / "contract_metric.py"
    path.write_text("def score(images, prompts):\n    return [float(len(p)) for p in prompts]\n", encoding="utf-8")
    return f"callable:{path}:score"


#: the reference fixtures made by the originals' own code (tests/fixtures/reference/)
REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "reference"


def _reward_spec(family: str) -> str:
    """A preference reward on its tiny checkpoint: the reference fixture (tests/fixtures/reference/FAMILY), a
    random-weight model in the released layout (see tools/reference/FAMILY/README.md)."""
    from reward_specs import reward_specs

    return reward_specs()[family]


def _contract_csv(tmp: Path) -> str:
    """``csv:`` on a scores file with a row per contract image."""
    path = tmp / "contract_scores.csv"
    path.write_text("file_name,contract\n" + "".join(f"{n},{0.25 + 0.5 * i}\n" for i, n in enumerate(CONTRACT_IMAGES)),
                    encoding="utf-8")
    return f"csv:{path}"


def _contract_oneig(tmp: Path) -> str:
    """``oneig:`` on the OneIG reference fixture's tiny Qwen2.5-VL, with a question file (OneIG's ``Q_D`` layout)
    and a prompt table (``OneIG-Bench.csv``'s) written for :data:`CONTRACT_PROMPTS`."""
    import json

    qd = {f"{k:03d}": {"question": json.dumps({"1": f"Is there {p.split()[0]} {p.split()[1]}?", "2": f"Is it {p}?"}),
                       "dependency": json.dumps({"1": [0], "2": [1]})} for k, p in enumerate(CONTRACT_PROMPTS)}
    (tmp / "object.json").write_text(json.dumps(qd), encoding="utf-8")
    (tmp / "prompts.csv").write_text("category,id,prompt_en\n" + "".join(
        f"General_Object,{k:03d},{p}\n" for k, p in enumerate(CONTRACT_PROMPTS)), encoding="utf-8")
    ckpt = REFERENCE / "oneig" / "qwen2.5-vl-tiny"
    return f"oneig:{ckpt}?questions={tmp / 'object.json'}&prompts={tmp / 'prompts.csv'}"


#: per registered metric family: ``builder(tmp_path, chat_url) -> SPEC`` of a tiny model (or a file, a
#: function) that scores :data:`CONTRACT_PROMPTS`; ``chat_url`` is the base URL of a running
#: ``llm_server.contract_chat`` endpoint. tests/metrics/test_registry_contract.py fails for a family that has
#: none here and no ``tiny`` spec on its ``FAMILY`` record: a new family whose small metric needs a model the
#: tests build adds its builder here; one that loads in seconds without a download names it on its record.
CONTRACT_SPECS = {
    "clipscore": lambda tmp, url: f"clipscore:{tiny('clip')}",
    "alignscore": lambda tmp, url: f"alignscore:{tiny('align')}",
    "siglip": lambda tmp, url: f"siglip:{tiny('siglip')}",
    # the API path (it takes api_key); the local models are proved on the reference fixtures
    "vqascore": lambda tmp, url: f"vqascore:gpt-4o?endpoint={url}&retry_wait=0",
    "itmscore": lambda tmp, url: f"itmscore:{REFERENCE / 'vqascore' / 'blip2-itm' / 'blip2-itm-tiny'}",
    "itcscore": lambda tmp, url: f"itcscore:{REFERENCE / 'vqascore' / 'blip2-itm' / 'blip2-itm-tiny'}",
    "tifa": lambda tmp, url: (f"tifa:{tiny('blip')}?questions={_contract_questions(tmp, 'tifa')}&mapper=lexical"
                              f"&generator={url}"),
    "dsg": lambda tmp, url: (f"dsg:{tiny('blip')}?questions={_contract_questions(tmp, 'dsg')}&mapper=lexical"
                             f"&generator={url}"),
    "oneig": lambda tmp, url: _contract_oneig(tmp),
    "softtifa": lambda tmp, url: (f"softtifa:{REFERENCE / 'vqascore' / 'qwen3-vl-3.1' / 'qwen3-vl-tiny'}"
                                  f"?questions={_contract_questions(tmp, 'tifa')}"),
    "gecko": lambda tmp, url: f"gecko:{tiny('blip')}?generator={url}&generator_model=canned&nli=none",
    # coarse=same: no spaCy pipeline; vqa_image_size=0: the tiny BLIP's own size (480 px takes minutes here)
    "fineeval": lambda tmp, url: (f"fineeval:{tiny('blip')}?generator={url}&generator_model=canned"
                                  f"&detector={tiny('rtdetr')}&coarse=same&vqa_image_size=0"),
    "viescore": lambda tmp, url: f"viescore:judge?endpoint={url}&workers=1",
    "llmscore": lambda tmp, url: f"llmscore:judge?endpoint={url}&captioner={tiny('llava')}&caption_tokens=3",
    "unifiedreward": lambda tmp, url: f"unifiedreward:UnifiedReward?endpoint={url}&workers=1",
    "callable": lambda tmp, url: _contract_callable(tmp),
    "csv": lambda tmp, url: _contract_csv(tmp),
    "pickscore": lambda tmp, url: _reward_spec("pickscore"),
    "hpsv2": lambda tmp, url: _reward_spec("hpsv2"),
    "imagereward": lambda tmp, url: _reward_spec("imagereward"),
    "hpsv3": lambda tmp, url: _reward_spec("hpsv3"),
}
