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
EOS_SCALE = 3.0
WORD_SCALE = 3.0
SPLIT = 1.0
MIX = 1.0
EMB_SCALE = 20.0
CROSS_SCALE = 5.0
#: the share of the (image, question) states on which "Yes" (capitalised) beats "yes" (see calibrate): an
#: answer that TS2's contains rule reads as yes and DSG's ``answer == 'yes'`` does not
CASE_SHARE = 0.1
SEED = 0
#: the images' sizes (image k is asked the questions of SEG ``SEGS[k % 2]``)
SIZES = [(40, 40), (48, 36), (36, 44), (44, 44), (52, 40), (40, 48)]


#: Questions of ours (not TS2's), added after TS2's to each SEG: (question, parent question ids). TS2's DSG
#: questions have parents one level deep only; these add chains two levels deep (a child whose parent has a
#: parent), so that DSG's direct-parent rule (``calc_vqa_score`` looks at a question's direct parents' own
#: scores) is told apart from a transitive one. Their words are all in the SEG's prompt and TS2 questions.
EXTRA_QUESTIONS = {
    0: [("Is the teddy bear under the Christmas tree?", "2-0"),
        ("Is the teddy bear under the lights?", "5"),
        ("Are there multiple lights on the Christmas tree?", "3"),
        ("Does the teddy bear have lights?", "2")],
    1: [("Is the wall of windows large?", "1"),
        ("Are the planes near the large wall?", "4"),
        ("Are the multiple planes near the windows?", "2"),
        ("Are there multiple windows?", "1")],
}


def questions() -> list[dict]:
    """TS2's DSG questions of :data:`SEGS`, then :data:`EXTRA_QUESTIONS` numbered after them."""
    rows = list(csv.DictReader(open(ROOT / "data" / "ts2" / "TS2_DSG_Q_dependency.csv", newline="", encoding="utf-8")))
    rows = [r for r in rows if int(r["id"]) in SEGS]
    for seg, items in EXTRA_QUESTIONS.items():
        own = [r for r in rows if int(r["id"]) == seg]
        first = max(int(r["question_id"]) for r in own) + 1
        for k, (q, parents) in enumerate(items):
            rows.append({**own[0], "question_id": str(first + k), "parent_question_id": parents, "question": q,
                         "choices": "yes|no", "answer": "yes"})
    return sorted(rows, key=lambda r: (int(r["id"]), int(r["question_id"])))


def build(folder: Path, qs: list[dict], seed: int = SEED, lm_scale: float = LM_SCALE, eos_scale: float = EOS_SCALE,
          emb_scale: float = EMB_SCALE, cross_scale: float = CROSS_SCALE):
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
                layer.crossattention.output.dense.weight.mul_(cross_scale)   # the image's say in the queries
        model.language_projection.weight.mul_(30.0)
        lm = model.language_model.lm_head.weight
        lm.mul_(lm_scale)
        # one-word answers: "yes" and "no" are likely first tokens, and the end token follows them. Their
        # input embeddings are made long, so that at their position the (RMS-normalised) residual stream
        # points along them; the end token's output row is then set along the two embeddings' directions
        emb = model.language_model.get_input_embeddings().weight
        words = [tok.convert_tokens_to_ids(w) for w in ("▁yes", "▁no", "▁Yes")]
        assert tok.unk_token_id not in words, "the tokenizer has no single 'yes' / 'no' / 'Yes' token"
        for i in words:
            emb[i].mul_(emb_scale)
        unit = sum(emb[i] / emb[i].norm() for i in words)
        lm[2] = eos_scale * unit / unit.norm() * lm.norm(dim=1).mean()
    model.save_pretrained(folder, safe_serialization=True)
    InstructBlipProcessor(image_processor=BlipImageProcessor(size={"height": 32, "width": 32}), tokenizer=tok,
                          qformer_tokenizer=qtok).save_pretrained(folder)
    for sub in ("_spm", "_qformer"):
        for p in (folder / sub).iterdir():
            p.unlink()
        (folder / sub).rmdir()
    return tok


def calibrate(folder: Path, images: list, asked: list[list[str]], word_scale: float = WORD_SCALE,
              split: float = SPLIT, mix: float = MIX, case_share: float = CASE_SHARE) -> None:
    """Set the output rows of "yes" and "no" from the model's own first-step states, so that the first answer
    token is one of them and which one depends on the image.

    The language model's last hidden state at the first generation step (transformers 4.31's
    ``InstructBlipForConditionalGeneration``, the image and question as DSG's ``vqa`` passes them) is taken
    for every (image, question) asked; ``m`` is their mean direction and ``v`` the main direction in which
    they vary between images (each question's mean over the images removed first). "yes" gets
    ``word_scale * |row| * (m + split * v)``, "no" the same with ``-split``: both beat the other tokens on
    ``m``, and the sign of a state's component along ``v`` picks between them. "Yes" gets the row of "yes"
    plus ``|row| * (e - t m)``, ``e`` the states' main direction of variation apart from ``m`` and ``v``, ``t``
    the ``1 - case_share`` quantile of the states' ``e / m`` components: it beats "yes" on about
    ``case_share`` of the states (``t`` is put in the widest gap between them near that quantile)."""
    import torch
    from transformers import InstructBlipForConditionalGeneration, InstructBlipProcessor

    proc = InstructBlipProcessor.from_pretrained(folder)
    model = InstructBlipForConditionalGeneration.from_pretrained(folder).eval()
    lm = model.language_model.lm_head
    seen = []
    hook = lm.register_forward_hook(lambda mod, args, out: seen.append(args[0][0, -1].detach().clone()))
    states = []
    with torch.no_grad():
        for image, questions in zip(images, asked):
            row = []
            for q in questions:
                seen.clear()
                model.generate(**proc(images=image, text=q, return_tensors="pt"), max_new_tokens=1, num_beams=1)
                row.append(seen[0])
            states.append(torch.stack(row))
    hook.remove()
    groups: dict = {}                                  # images asked the same questions, (questions, hidden) each
    for questions, hs in zip(asked, states):
        groups.setdefault(tuple(questions), []).append(hs.double())
    groups = {k: torch.stack(g) for k, g in groups.items()}            # (images, questions, hidden)
    m = torch.cat([g.reshape(-1, g.shape[-1]) for g in groups.values()]).mean(dim=0)
    qmeans = torch.cat([g.mean(dim=0) for g in groups.values()]) - m    # each question's mean over the images
    resid = torch.cat([(g - g.mean(dim=0)).reshape(-1, g.shape[-1]) for g in groups.values()])

    def unit(x):
        return x / x.norm()

    def without(x, basis):
        return x - basis.T @ (basis @ x)

    # the questions' main direction (apart from the mean), and the images' main direction apart from both
    qbasis = torch.linalg.qr(torch.cat([m[:, None], qmeans.T], dim=1)).Q.T
    q_dir = unit(without(torch.linalg.svd(qmeans, full_matrices=False).Vh[0], unit(m)[None]))
    img = without(torch.linalg.svd(resid, full_matrices=False).Vh[0], qbasis[:1])
    img_dir = unit(without(img, qbasis)) if without(img, qbasis).norm() > 1e-6 else unit(img)
    # each weighted by the inverse of its spread, so that ``mix`` is the questions' say against the images'
    d = unit(img_dir / (resid @ img_dir).std() + mix * q_dir / (qmeans @ q_dir).std())
    m = unit(m)
    tok = proc.tokenizer
    scale = word_scale * lm.weight.norm(dim=1).mean().double()
    flat = torch.cat([g.reshape(-1, g.shape[-1]) for g in groups.values()])
    md = torch.linalg.qr(torch.stack([m, d], dim=1)).Q.T
    e = unit(without(torch.linalg.svd(flat - flat.mean(dim=0), full_matrices=False).Vh[0], md))
    e = unit(without(e, md))
    # the threshold in the widest gap between the states' ratios around the ``1 - case_share`` quantile (half
    # to twice that share above it), so that no state decides between "Yes" and "yes" on a near-tie
    r = torch.sort((flat @ e) / (flat @ m)).values
    n = len(r)
    lo, hi = max(1, int(n * (1 - 2 * case_share))), min(n - 1, int(n * (1 - case_share / 2)))
    k = lo + int(torch.argmax(r[lo:hi + 1] - r[lo - 1:hi]))
    t = (r[k - 1] + r[k]) / 2
    with torch.no_grad():
        for word, sign in (("▁yes", 1.0), ("▁no", -1.0)):
            lm.weight[tok.convert_tokens_to_ids(word)] = (scale * (m + sign * split * d)).float()
        lm.weight[tok.convert_tokens_to_ids("▁Yes")] = (scale * (m + split * d + e - t * m)).float()
    model.save_pretrained(folder, safe_serialization=True)


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
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--lm-scale", type=float, default=LM_SCALE)
    ap.add_argument("--eos-scale", type=float, default=EOS_SCALE)
    ap.add_argument("--word-scale", type=float, default=WORD_SCALE)
    ap.add_argument("--emb-scale", type=float, default=EMB_SCALE)
    ap.add_argument("--split", type=float, default=SPLIT)
    ap.add_argument("--images", type=int, default=len(SIZES))
    ap.add_argument("--cross-scale", type=float, default=CROSS_SCALE)
    ap.add_argument("--mix", type=float, default=MIX)
    ap.add_argument("--case-share", type=float, default=CASE_SHARE)
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
    build(folder, qs, seed=args.seed, lm_scale=args.lm_scale, eos_scale=args.eos_scale, emb_scale=args.emb_scale,
          cross_scale=args.cross_scale)
    rng = np.random.default_rng(0)
    names = []
    for k, (wd, ht) in enumerate(SIZES[:args.images]):
        # flat colours, a different one in each quarter, plus noise: images that differ in what a ViT sees
        colours = rng.integers(0, 255, size=(2, 2, 3))
        arr = np.kron(colours, np.ones((ht // 2 + 1, wd // 2 + 1, 1)))[:ht, :wd]
        arr = np.clip(arr + rng.normal(0, 12, size=arr.shape), 0, 255).astype(np.uint8)
        name = f"image{k}.png"
        Image.fromarray(arr).save(out / name)
        names.append(name)

    asked = [[r["question"] for r in qs if int(r["id"]) == SEGS[k % len(SEGS)]] for k in range(len(names))]
    calibrate(folder, [Image.open(out / n).convert("RGB") for n in names], asked, word_scale=args.word_scale,
              split=args.split, mix=args.mix, case_share=args.case_share)

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
        print(r["image"], r["score"], [a["answer"][:30] for a in r["answers"]], "transitive differs:",
              r["score"] != transitive_score(r, qs))


def transitive_score(result: dict, qs: list[dict]) -> float:
    """The score a transitive rule (a question zeroed when any ancestor is wrong) would give: printed only,
    to see that the fixture tells it apart from DSG's direct rule."""
    mine = {int(r["question_id"]): r for r in qs if int(r["id"]) == result["seg_id"]}
    ok = {a["question_id"]: a["answer"] == "yes" for a in result["answers"]}

    def counts(q, seen=()):
        ids = mine[q]["parent_question_id"].strip()
        parents = [] if ids == "-1" else [int(p) for p in ids.split("-") if int(p) not in seen]
        return ok[q] and all(counts(p, seen + (q,)) for p in parents)
    return sum(counts(q) for q in ok) / len(ok)


if __name__ == "__main__":
    main()
