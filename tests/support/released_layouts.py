"""Tiny checkpoints in the file layouts the field's models are released in, and how ts2viz loads each.

A released layout is the set of files a hub repository holds: which tokenizer files (a ``tokenizer.json``
or only the slow ``vocab.txt`` / ``vocab.json`` + ``merges.txt`` / SentencePiece ``spiece.model``), which
processor files. Loading the slow-only layouts needs packages that transformers imports on demand
(``sentencepiece`` for SentencePiece models, ``protobuf`` to read their normaliser), so a fresh
``pip install -r requirements.txt`` must bring them. Every builder here writes the files by hand where
the release has no ``tokenizer.json`` (no tokenizer object is constructed, so building needs none of those
packages); SentencePiece models are committed files (the DSG reference fixture's LLaMA-style
``tokenizer.model``, ``tests/fixtures/layouts/t5_spiece.model``).

:data:`LAYOUTS` maps a name to ``(what it stands for, builder, loader)``; ``loader(folder, tmp)`` loads the
checkpoint through ts2viz's own public loading code and scores or decodes one thing with it.
``tools/fresh_venv_check.py`` runs them all in a fresh virtual environment;
``tests/core/test_requirements_layouts.py`` runs them and checks that every distribution they import is
required (directly or through another) by ``requirements.txt``.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Callable

from tiny_models import (build_align, build_blip_vqa, build_clip, build_owlv2, build_rtdetr, word_tokenizer,
                         write_clip_bpe)

ROOT = Path(__file__).resolve().parents[2]
SPM = ROOT / "tests" / "fixtures" / "reference" / "dsg" / "tiny-instructblip" / "tokenizer.model"
#: a unigram SentencePiece model in T5's style (pad 0, eos 1, unk 2; "1" and "0" are pieces, as TRUE's NLI needs)
T5_SPM = ROOT / "tests" / "fixtures" / "layouts" / "t5_spiece.model"
PROMPT = "A Christmas tree with lights and teddy bear"   # a TS2 prompt (its questions are bundled)


def _image(tmp: Path) -> Path:
    import numpy as np
    from PIL import Image

    p = tmp / "image.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (40, 48, 3), dtype=np.uint8)).save(p)
    return p


def _drop_fast(folder: Path) -> Path:
    """Remove ``tokenizer.json`` (the slow-only release) and say which class reads the slow files."""
    (folder / "tokenizer.json").unlink(missing_ok=True)
    return folder


def _wordpiece(folder: Path, cls: str, specials: dict) -> None:
    tok = word_tokenizer()
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    (folder / "vocab.txt").write_text("\n".join(t for t, _ in vocab) + "\n")
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": cls, "do_lower_case": False,
                                                              "model_max_length": 64, **specials}))


def _spm(folder: Path, name: str, cls: str, source: Path = SPM, **config) -> None:
    shutil.copy(source, folder / name)
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": cls, **config}))


# -- builders --------------------------------------------------------------------------------------------

def clip_slow(folder: Path) -> Path:
    """CLIP with ``vocab.json`` + ``merges.txt`` and no ``tokenizer.json`` (older CLIP releases)."""
    build_clip(folder)
    return _drop_fast(folder)


def align_slow(folder: Path) -> Path:
    """ALIGN (``kakaobrain/align-base``): BERT ``vocab.txt`` tokenizer, EfficientNet image processor."""
    build_align(folder)
    _drop_fast(folder)
    _wordpiece(folder, "BertTokenizer", {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                                         "sep_token": "[SEP]", "mask_token": "[MASK]"})
    return folder


def siglip_spm(folder: Path) -> Path:
    """SigLIP (``google/siglip-base-patch16-224``): ``spiece.model`` only, ``SiglipTokenizer``."""
    import torch
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel

    torch.manual_seed(1)
    cfg = SiglipConfig(
        text_config=dict(vocab_size=300, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=16, pad_token_id=1, eos_token_id=1),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=2))
    SiglipModel(cfg).eval().save_pretrained(folder)
    SiglipImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    _spm(folder, "spiece.model", "SiglipTokenizer", model_max_length=16, pad_token="</s>", eos_token="</s>",
         unk_token="<unk>")
    return folder


def blip_vqa_slow(folder: Path) -> Path:
    """BLIP-VQA (``Salesforce/blip-vqa-base``) with only its ``vocab.txt``."""
    build_blip_vqa(folder)
    _drop_fast(folder)
    _wordpiece(folder, "BertTokenizer", {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                                         "sep_token": "[SEP]", "mask_token": "[MASK]", "bos_token": "[DEC]"})
    # the slow vocabulary must hold [DEC] too (the fast tokenizer had it as an added special token)
    vocab = (folder / "vocab.txt").read_text().splitlines()
    if "[DEC]" not in vocab:
        (folder / "vocab.txt").write_text("\n".join(vocab + ["[DEC]"]) + "\n")
    return folder


def sbert_mpnet(folder: Path) -> Path:
    """The Sentence-BERT answer mapper (``sentence-transformers/all-mpnet-base-v2``): the TIFA fixture's
    tiny MPNet (``vocab.txt`` + ``tokenizer_config.json`` of ``MPNetTokenizer``)."""
    src = ROOT / "tests" / "fixtures" / "reference" / "tifa" / "tiny-mpnet"
    shutil.copytree(src, folder)
    return folder


def instructblip_spm(folder: Path) -> Path:
    """InstructBLIP (``Salesforce/instructblip-vicuna-7b``): LLaMA ``tokenizer.model`` only, the Q-Former's
    ``vocab.txt`` in ``qformer_tokenizer/`` (the DSG fixture's checkpoint)."""
    src = ROOT / "tests" / "fixtures" / "reference" / "dsg" / "tiny-instructblip"
    shutil.copytree(src, folder)
    return _drop_fast(folder)


def t5_spm(folder: Path) -> Path:
    """A T5 with ``spiece.model`` only (``allenai/unifiedqa-v2-t5-large-1363200``, TIFA's question filter;
    ``google/t5_xxl_true_nli_mixture``, Gecko's NLI)."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    torch.manual_seed(8)
    cfg = T5Config(vocab_size=320, d_model=32, d_kv=16, d_ff=48, num_layers=2, num_decoder_layers=2,
                   num_heads=2, relative_attention_num_buckets=8, pad_token_id=0, eos_token_id=1,
                   decoder_start_token_id=0)
    T5ForConditionalGeneration(cfg).eval().save_pretrained(folder)
    _spm(folder, "spiece.model", "T5Tokenizer", T5_SPM, extra_ids=0, model_max_length=512, eos_token="</s>",
         unk_token="<unk>", pad_token="<pad>")
    return folder


def git_slow(folder: Path) -> Path:
    """GIT (``microsoft/git-base-vqav2``): the TIFA fixture's tiny GIT, ``vocab.txt`` only."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "reference" / "tifa" / "tiny-git-vqa", folder)
    return _drop_fast(folder)


def rtdetr(folder: Path) -> Path:
    """RT-DETR (``PekingU/rtdetr_r50vd_coco_o365``): weights, config, ``preprocessor_config.json``."""
    return build_rtdetr(folder)


def owlv2_slow(folder: Path) -> Path:
    """OWLv2 (``google/owlv2-base-patch16-ensemble``) with CLIP's ``vocab.json`` + ``merges.txt``."""
    build_owlv2(folder)
    return _drop_fast(folder)


# -- loaders (ts2viz's public loading code) --------------------------------------------------------------

def _score(spec: str, tmp: Path):
    from ts2viz import metrics

    m = metrics.load(spec, device="cpu", dtype="float32")
    return m(images=[_image(tmp)], prompts=[PROMPT])


def load_embedding(family: str) -> Callable:
    return lambda folder, tmp: _score(f"{family}:{folder}", tmp)


def load_vqa_qa(kind: str, mapper: str = "lexical") -> Callable:
    return lambda folder, tmp: _score(f"{kind}:{folder}?mapper={mapper}&max_new_tokens=3", tmp)


def load_mapper_model(folder: Path, tmp: Path):
    from ts2viz.metrics.backbones.sbert import load_mapper

    return load_mapper(f"sbert:{folder}", "cpu", rule="tifa").map(["a cat"], [["cat", "dog"]])


def load_t5_filter(folder: Path, tmp: Path):
    from ts2viz.metrics.families.tifa import filter as tifa_filter

    f = tifa_filter.load_filter(f"unifiedqa:{folder}", "cpu")
    return f.config


def load_nli_model(folder: Path, tmp: Path):
    from ts2viz.metrics.backbones import nli

    return nli.load_nli(str(folder), "cpu", dtype="float32").config


def load_detector_model(folder: Path, tmp: Path):
    from PIL import Image

    from ts2viz.metrics.backbones import detect

    d = detect.load_detector(str(folder), "cpu")
    return d.detect([Image.open(_image(tmp)).convert("RGB")], [["cat", "dog"]])


#: name -> (the release it stands for, builder, loader)
LAYOUTS: dict[str, tuple[str, Callable, Callable]] = {
    "clip (vocab.json + merges.txt)": ("clipscore: openai/clip-vit-*", clip_slow, load_embedding("clipscore")),
    "align (vocab.txt)": ("alignscore: kakaobrain/align-base", align_slow, load_embedding("alignscore")),
    "siglip (spiece.model)": ("siglip: google/siglip-*", siglip_spm, load_embedding("siglip")),
    "blip-vqa (vocab.txt)": ("tifa/dsg/fineeval: Salesforce/blip-vqa-*", blip_vqa_slow, load_vqa_qa("tifa")),
    "git (vocab.txt)": ("tifa: microsoft/git-*-vqav2", git_slow, load_vqa_qa("tifa")),
    "instructblip (tokenizer.model)": ("dsg/tifa: Salesforce/instructblip-*", instructblip_spm, load_vqa_qa("dsg")),
    "sentence-bert mpnet (vocab.txt)": ("tifa/dsg mapper: sentence-transformers/all-mpnet-base-v2", sbert_mpnet,
                                        load_mapper_model),
    "t5 unifiedqa (spiece.model)": ("tifa qa_filter: allenai/unifiedqa-v2-t5-*", t5_spm, load_t5_filter),
    "t5 nli (spiece.model)": ("gecko nli: google/t5_xxl_true_nli_mixture", t5_spm, load_nli_model),
    "rt-detr (preprocessor_config.json)": ("fineeval/llmscore detector: PekingU/rtdetr_*", rtdetr,
                                           load_detector_model),
    "owlv2 (vocab.json + merges.txt)": ("fineeval detector: google/owlv2-*", owlv2_slow, load_detector_model),
}


def check(name: str, root: Path):
    """Build layout ``name`` under ``root`` and load it through ts2viz; returns what the loader returned."""
    _, build, load = LAYOUTS[name]
    folder = root / re.sub(r"\W+", "_", name).strip("_")
    folder.parent.mkdir(parents=True, exist_ok=True)
    build(folder)
    return load(folder, root)
