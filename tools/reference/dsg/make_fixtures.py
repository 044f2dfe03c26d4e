"""Reference fixture for ``dsg:`` on InstructBLIP: DSG's own code (j-min/DSG) under the transformers it pins
(4.31), on a tiny random-weight InstructBLIP (run by hand in a side environment; never in CI).

    /work/side/fc-dsg/bin/python tools/reference/dsg/make_fixtures.py DSG_CHECKOUT

DSG_CHECKOUT is a checkout of j-min/DSG (commit 7330119). ``dsg/vqa_utils.py`` is imported from there and
run, never copied: ``InstructBLIP(ckpt)`` loads the tiny checkpoint with transformers 4.31's
``InstructBlipProcessor`` / ``InstructBlipForConditionalGeneration``, ``InstructBLIP.vqa`` answers each DSG
question of two TS2 prompts for each image (beam 5, repetition penalty 1.5, ``max_length=256``), and
``calc_vqa_score`` scores each image (``answer == 'yes'``, a question zeroed when a direct parent scored
0; TS2's ids shifted by one, since DSG's ``0`` means "no parent").

The checkpoint is built with transformers 4.31's classes in the layout ``Salesforce/instructblip-vicuna-7b``
had then (LLaMA ``tokenizer.model`` trained with SentencePiece on the questions, a BERT ``vocab.txt`` for
the Q-Former in ``qformer_tokenizer/``, ``preprocessor_config.json``). The hub repository was later updated
for transformers >= 4.47 (an ``<image>`` token added to the tokenizer and one embedding row to the language
model, ``image_token_index`` in the config, ``processor_config.json`` with ``num_query_tokens``); after DSG's
code has run, the fixture folder is updated the same way, since that is the layout ts2viz loads. The new
row is never used by 4.31's code path.
"""
from __future__ import annotations

import argparse
import csv
import importlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
from tiny_layouts import train_sentencepiece, write_wordpiece_vocab  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "reference" / "dsg"
SEGS = (0, 1)
N_QUERY = 4
#: the language model's output layer scale and the end token's extra weight (see build); the fixture's
#: test asserts that every choice of the beam search wins by a wide margin (tests/support/margins.py)
LM_SCALE = 50.0
EOS_SCALE = 3.5


def questions() -> list[dict]:
    rows = list(csv.DictReader(open(ROOT / "data" / "ts2" / "TS2_DSG_Q_dependency.csv", newline="", encoding="utf-8")))
    return [r for r in rows if int(r["id"]) in SEGS]


def build(folder: Path, qs: list[dict], seed: int = 0, lm_scale: float = LM_SCALE, eos_scale: float = EOS_SCALE):
    import torch
    from transformers import (BertTokenizer, BlipImageProcessor, InstructBlipConfig,
                              InstructBlipForConditionalGeneration, InstructBlipProcessor, LlamaTokenizer)

    torch.manual_seed(seed)
    texts = [r["question"] for r in qs] + [r["prompt"] for r in qs] + ["yes", "no", "Yes", "No"] * 20
    spm = train_sentencepiece(folder / "_spm" / "tokenizer", texts, vocab_size=260)
    tok = LlamaTokenizer(str(spm))
    qvocab = write_wordpiece_vocab(folder / "_qformer" / "vocab.txt", texts)
    qtok = BertTokenizer(str(qvocab), truncation_side="left")
    cfg = InstructBlipConfig(
        # the vision config's default initializer_range (1e-10) makes a random tower blind to the image
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                           num_attention_heads=2, initializer_range=0.02),
        qformer_config=dict(vocab_size=len(qtok), hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                            num_attention_heads=2, encoder_hidden_size=32, max_position_embeddings=64,
                            pad_token_id=qtok.pad_token_id),
        text_config=dict(model_type="llama", vocab_size=len(tok), hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=512, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                         architectures=["LlamaForCausalLM"], tie_word_embeddings=False),
        num_query_tokens=N_QUERY)
    model = InstructBlipForConditionalGeneration(cfg).eval()
    with torch.no_grad():
        # a sharper next-token distribution, and "yes" / "no" / end-of-sequence made likely, so that the
        # random model's answers are short and some are yes
        # the queries see more of the image (a random Q-Former barely passes it on)
        model.query_tokens.normal_(0.0, 1.0)
        for layer in model.qformer.encoder.layer:
            if getattr(layer, "has_cross_attention", False):
                layer.crossattention.attention.key.weight.mul_(8.0)
                layer.crossattention.attention.value.weight.mul_(8.0)
        model.language_projection.weight.mul_(30.0)
        lm = model.language_model.lm_head.weight
        lm.mul_(lm_scale)
        for word in ("▁yes", "▁no"):
            i = tok.convert_tokens_to_ids(word)
            if i != tok.unk_token_id:
                lm[i].mul_(1.5)
        lm[2].mul_(eos_scale)
    model.save_pretrained(folder, safe_serialization=True)
    InstructBlipProcessor(image_processor=BlipImageProcessor(size={"height": 32, "width": 32}), tokenizer=tok,
                          qformer_tokenizer=qtok).save_pretrained(folder)
    for sub in ("_spm", "_qformer"):
        for p in (folder / sub).iterdir():
            p.unlink()
        (folder / sub).rmdir()
    return tok


def update_to_current_hub_layout(folder: Path) -> None:
    """What the hub repository's update did: an ``<image>`` token (the next id) in the tokenizer, one more
    embedding / LM-head row, ``image_token_index`` in the config, ``num_query_tokens`` in processor_config.json."""
    import torch
    from transformers import InstructBlipForConditionalGeneration, LlamaTokenizer

    tok = LlamaTokenizer.from_pretrained(folder)
    tok.add_tokens(["<image>"], special_tokens=True)
    image_id = tok.convert_tokens_to_ids("<image>")
    model = InstructBlipForConditionalGeneration.from_pretrained(folder).eval()
    g = torch.Generator().manual_seed(1)
    lm = model.language_model
    for emb in (lm.get_input_embeddings(), lm.get_output_embeddings()):
        w = emb.weight.data
        emb.weight = torch.nn.Parameter(torch.cat([w, torch.randn(1, w.shape[1], generator=g) * 0.02]))
        if hasattr(emb, "num_embeddings"):
            emb.num_embeddings += 1
        else:
            emb.out_features += 1
    model.config.text_config.vocab_size = image_id + 1
    model.config.image_token_index = image_id
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    (folder / "processor_config.json").write_text(json.dumps(
        {"num_query_tokens": N_QUERY, "processor_class": "InstructBlipProcessor"}, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dsg_checkout", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lm-scale", type=float, default=LM_SCALE)
    ap.add_argument("--eos-scale", type=float, default=EOS_SCALE)
    args = ap.parse_args()
    import torch
    import transformers
    from PIL import Image

    torch.set_num_threads(1)
    out = args.out
    folder = out / "tiny-instructblip"
    folder.mkdir(parents=True, exist_ok=True)
    qs = questions()
    with open(out / "questions.csv", "w", newline="", encoding="utf-8") as f:
        fields = ["id", "prompt", "question_id", "parent_question_id", "question", "choices", "answer"]
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows({k: r[k] for k in fields} for r in qs)
    build(folder, qs, seed=args.seed, lm_scale=args.lm_scale, eos_scale=args.eos_scale)
    rng = np.random.default_rng(0)
    names = []
    for k, (wd, ht) in enumerate([(40, 40), (48, 36), (36, 44), (44, 44)]):
        # flat colours, a different one in each quarter, plus noise: images that differ in what a ViT sees
        colours = rng.integers(0, 255, size=(2, 2, 3))
        arr = np.kron(colours, np.ones((ht // 2 + 1, wd // 2 + 1, 1)))[:ht, :wd]
        arr = np.clip(arr + rng.normal(0, 12, size=arr.shape), 0, 255).astype(np.uint8)
        name = f"image{k}.png"
        Image.fromarray(arr).save(out / name)
        names.append(name)

    sys.path.insert(0, str(args.dsg_checkout))
    vqa_utils = importlib.import_module("dsg.vqa_utils")
    model = vqa_utils.InstructBLIP(ckpt=str(folder))
    results = []
    for k, name in enumerate(names):
        seg = SEGS[k % len(SEGS)]
        image = Image.open(out / name).convert("RGB")
        mine = [r for r in qs if int(r["id"]) == seg]
        answers = {int(r["question_id"]) + 1: model.vqa(image, r["question"]) for r in mine}
        dep = {int(r["question_id"]) + 1: ([int(p) + 1 for p in r["parent_question_id"].split("-")]
                                           if r["parent_question_id"].strip() != "-1" else [0]) for r in mine}
        res = vqa_utils.calc_vqa_score(answers, dep)
        results.append({"image": name, "seg_id": seg, "score": float(res["average_score_with_dependency"]),
                        "answers": [{"question_id": q - 1, "answer": a} for q, a in answers.items()]})
    del model
    update_to_current_hub_layout(folder)
    expected = {"model": folder.name, "questions": "questions.csv", "images": names, "results": results,
                "source": f"j-min/DSG@7330119 dsg.vqa_utils.InstructBLIP.vqa + calc_vqa_score, transformers "
                          f"{transformers.__version__}, torch {torch.__version__}, CPU float32"}
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    for r in results:
        print(r["image"], r["score"], [a["answer"][:30] for a in r["answers"]])


if __name__ == "__main__":
    main()
