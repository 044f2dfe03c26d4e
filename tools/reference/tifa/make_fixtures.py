"""Reference fixtures for ``tifa:``: TIFA's own code (Yushi-Hu/tifa) on tiny random-weight BLIP-VQA and GIT
checkpoints with a tiny Sentence-BERT (run by hand in a side environment; never in CI).

    /work/side/fc-dsg/bin/python tools/reference/tifa/make_fixtures.py TIFA_CHECKOUT

TIFA_CHECKOUT is a checkout of Yushi-Hu/tifa (commit 8e37050). Its ``tifascore/vqa_models.py``,
``mc_sbert.py`` and ``tifa_score.py`` are imported from there and run, never copied. ``vqa_models`` imports
modelscope, promptcap and LAVIS at its top for models not used here (mPLUG, OFA, PromptCap, BLIP-2):
empty modules stand in for them. The environment has transformers 4.31 (TIFA asks for >= 4.31).

Built with transformers' own classes and saved in the hub layouts:
* ``tiny-blip-vqa``: ``BlipForQuestionAnswering`` + ``BlipProcessor`` (BERT ``vocab.txt``, ``[DEC]`` as the
  decoder's start token), as ``Salesforce/blip-vqa-base``;
* ``tiny-git-vqa``: ``GitForCausalLM`` + ``GitProcessor`` (CLIP image processor, BERT ``vocab.txt``), as
  ``microsoft/git-base-vqav2``;
* ``tiny-mpnet``: ``MPNetModel`` + ``MPNetTokenizer`` (``vocab.txt``), as
  ``sentence-transformers/all-mpnet-base-v2`` (TIFA's ``SBERTModel``: mean pooling, normalised, argmax).

TIFA's ``VQAModel`` is built around them (its ``__init__`` names the hub ids; the instance gets the same
attributes) and ``tifa_score_single`` scores each image on the TIFA questions of two TS2 prompts (written
to ``questions.csv`` in TS2's format). ``expected.json`` holds, per model and image, the free-form answers,
TIFA's mapped choices, per-question 0/1 scores and the image's TIFA score.

After TS2's questions, each SEG has four of ours (:data:`EXTRA_QUESTIONS`, ``question_id`` 6 to 9) whose expected answer differs from the matching choice only in case,
articles or punctuation ("Yes|No" with answer "yes"), so that TIFA's exact ``==`` is tested against a
normalising comparison. Their words are all in TS2's rows, from which alone the vocabularies are made.
"""
from __future__ import annotations

import argparse
import copy
import csv
import importlib
import json
import sys
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
from tiny_layouts import write_wordpiece_vocab  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "reference" / "tifa"
SEGS = (0, 3)   # TS2 SEG ids whose TIFA questions are asked

#: Questions of ours (not TS2's), added after TS2's to each SEG: variants of its questions whose expected
#: answer differs from the matching choice only in case, articles or punctuation. TIFA scores
#: ``int(mc_answer == answer)``, so a mapped "Yes" is wrong for the answer "yes"; a normalising comparison
#: would call it right. Their words are all in TS2's questions (the vocabularies, made from TS2's rows only,
#: and so the checkpoints, do not change with them).
EXTRA_QUESTIONS = {
    0: [("Is there a Christmas tree?", "Yes|No", "yes"),
        ("Is there a teddy bear on the Christmas tree?", "Yes|No", "no"),
        ("What type of tree is there?", "A Christmas tree|A pine tree|An oak tree|A palm tree", "christmas tree"),
        ("Are there lights?", "yes.|no.", "yes")],
    3: [("Is there a motorcycle?", "Yes|No", "yes"),
        ("Is the motorcycle inside?", "Yes|No", "no"),
        ("What size is this motorcycle?", "Large|Small|Medium|Extra large", "large"),
        ("Is the building large?", "yes.|no.", "yes")],
}


def stub_modules() -> None:
    """Empty stand-ins for the packages ``vqa_models`` imports for models not used here."""
    def mod(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    mod("modelscope")
    mod("modelscope.pipelines", pipeline=None)
    mod("modelscope.utils")
    mod("modelscope.utils.constant", Tasks=None)
    mod("modelscope.outputs", OutputKeys=None)
    mod("modelscope.preprocessors")
    mod("modelscope.preprocessors.multi_modal", OfaPreprocessor=None)
    mod("promptcap", PromptCap_VQA=None)
    mod("lavis")
    mod("lavis.models", load_model_and_preprocess=None)


def tifa_modules(checkout: Path):
    stub_modules()
    pkg = types.ModuleType("tifascore")   # the package without its __init__ (OpenAI, LLaMA-2 question generators)
    pkg.__path__ = [str(checkout / "tifascore")]
    sys.modules["tifascore"] = pkg
    return importlib.import_module("tifascore.vqa_models"), importlib.import_module("tifascore.tifa_score")


def questions() -> list[dict]:
    rows = list(csv.DictReader(open(ROOT / "data" / "ts2" / "TS2_TIFA_Q.csv", newline="", encoding="utf-8")))
    return [r for r in rows if int(r["id"]) in SEGS]


def extra_questions(ts2_rows: list[dict]) -> list[dict]:
    """:data:`EXTRA_QUESTIONS` as rows in TS2's format, numbered after each SEG's TS2 questions."""
    rows = []
    for seg, items in EXTRA_QUESTIONS.items():
        own = [r for r in ts2_rows if int(r["id"]) == seg]
        first = max(int(r["question_id"]) for r in own) + 1
        for k, (q, choices, answer) in enumerate(items):
            rows.append({"id": str(seg), "prompt": own[0]["prompt"], "question_id": str(first + k), "question": q,
                         "choices": choices, "answer": answer})
    return rows


def write_images(folder: Path) -> list[str]:
    from PIL import Image

    rng = np.random.default_rng(0)
    names = []
    for k, (w, h) in enumerate([(48, 40), (40, 40), (56, 44), (36, 52)]):
        arr = rng.integers(0, 255, size=(h, w, 3), dtype=np.uint8)
        name = f"image{k}.png"
        Image.fromarray(arr).save(folder / name)
        names.append(name)
    return names


#: the tiny BLIP's sharpening (issue 39): the scale of the cross-attention outputs (question encoder <- image,
#: answer decoder <- question states: the image's and the question's say in the answer) and the end token's
#: extra weight (below "yes" / "no"'s, so that some answers run to TIFA's ``max_length=50``)
BLIP_CROSS_SCALE = 20.0
BLIP_SEP_SCALE = 2.0


def build_blip(folder: Path, vocab: Path, seed: int = 0, cross_scale: float = BLIP_CROSS_SCALE,
               sep_scale: float = BLIP_SEP_SCALE) -> None:
    import torch
    from transformers import BertTokenizer, BlipConfig, BlipForQuestionAnswering, BlipImageProcessor, BlipProcessor

    torch.manual_seed(seed)
    tok = BertTokenizer(str(vocab), bos_token="[DEC]")
    cfg = BlipConfig(
        text_config=dict(vocab_size=len(tok), hidden_size=32, encoder_hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=64,
                         bos_token_id=tok.convert_tokens_to_ids("[DEC]"), sep_token_id=tok.sep_token_id,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.sep_token_id),
        # the vision config's default initializer_range (1e-10) makes a random tower blind to the image
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=2, initializer_range=0.02),
        projection_dim=16)
    model = BlipForQuestionAnswering(cfg).eval()
    with torch.no_grad():   # sharper answer distributions; "yes", "no" and the end token made likely
        w = model.text_decoder.cls.predictions.decoder.weight
        w.mul_(8.0)
        for layer in model.text_decoder.bert.encoder.layer:   # the answer decoder sees more of the question
            layer.crossattention.self.key.weight.mul_(6.0)
            layer.crossattention.self.value.weight.mul_(6.0)
            layer.crossattention.output.dense.weight.mul_(cross_scale)
        for layer in model.text_encoder.encoder.layer:        # and the question encoder of the image
            layer.crossattention.self.key.weight.mul_(6.0)
            layer.crossattention.self.value.weight.mul_(6.0)
            layer.crossattention.output.dense.weight.mul_(cross_scale)
        for t in ("yes", "no"):
            w[tok.convert_tokens_to_ids(t)].mul_(3.0)
        w[tok.sep_token_id].mul_(sep_scale)
    model.save_pretrained(folder)
    BlipProcessor(image_processor=BlipImageProcessor(size={"height": 32, "width": 32}), tokenizer=tok).save_pretrained(folder)


def build_git(folder: Path, vocab: Path, seed: int = 1) -> None:
    import torch
    from transformers import BertTokenizer, CLIPImageProcessor, GitConfig, GitForCausalLM, GitProcessor

    torch.manual_seed(seed)
    tok = BertTokenizer(str(vocab))
    cfg = GitConfig(vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=48,
                                       num_hidden_layers=2, num_attention_heads=2, initializer_range=0.02),
                    vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=48, max_position_embeddings=128, bos_token_id=tok.cls_token_id,
                    eos_token_id=tok.sep_token_id, pad_token_id=tok.pad_token_id)
    model = GitForCausalLM(cfg).eval()
    with torch.no_grad():
        model.output.weight.mul_(30.0)
        for t in ("yes", "no", "[SEP]"):
            model.output.weight[tok.convert_tokens_to_ids(t)].mul_(5.0)
    model.save_pretrained(folder)
    ip = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    GitProcessor(image_processor=ip, tokenizer=tok).save_pretrained(folder)


def build_mpnet(folder: Path, vocab: Path, seed: int = 2) -> None:
    import torch
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizer

    torch.manual_seed(seed)
    tok = MPNetTokenizer(str(vocab))
    cfg = MPNetConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=48, max_position_embeddings=130, pad_token_id=tok.pad_token_id,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    MPNetModel(cfg).eval().save_pretrained(folder)
    tok.model_max_length = 128
    tok.save_pretrained(folder)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tifa_checkout", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--blip-seed", type=int, default=0)
    ap.add_argument("--blip-cross-scale", type=float, default=BLIP_CROSS_SCALE)
    ap.add_argument("--blip-sep-scale", type=float, default=BLIP_SEP_SCALE)
    args = ap.parse_args()
    import torch
    import transformers

    torch.set_num_threads(1)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    ts2_qs = questions()
    qs = sorted(ts2_qs + extra_questions(ts2_qs), key=lambda r: (int(r["id"]), int(r["question_id"])))
    with open(out / "questions.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["id", "prompt", "question_id", "question", "choices", "answer"])
        w.writeheader()
        w.writerows({k: r[k] for k in w.fieldnames} for r in qs)
    texts = ([r["question"] for r in ts2_qs] + [c for r in ts2_qs for c in r["choices"].split("|")]
             + [r["prompt"] for r in ts2_qs])
    bert_vocab = write_wordpiece_vocab(out / "_vocab" / "vocab.txt", texts, extra=("[DEC]",))
    mpnet_vocab = write_wordpiece_vocab(out / "_vocab_mpnet" / "vocab.txt", texts,
                                        extra=("<s>", "<pad>", "</s>", "<unk>", "<mask>"))
    build_blip(out / "tiny-blip-vqa", bert_vocab, seed=args.blip_seed, cross_scale=args.blip_cross_scale,
               sep_scale=args.blip_sep_scale)
    build_git(out / "tiny-git-vqa", bert_vocab)
    build_mpnet(out / "tiny-mpnet", mpnet_vocab)
    for d in ("_vocab", "_vocab_mpnet"):
        for p in (out / d).iterdir():
            p.unlink()
        (out / d).rmdir()
    names = write_images(out)

    vqa_models, tifa_score = tifa_modules(args.tifa_checkout)
    sbert = vqa_models.SBERTModel(str(out / "tiny-mpnet"))
    models = {"blip": ("blip-base", vqa_models.BLIP(ckpt=str(out / "tiny-blip-vqa"))),
              "git": ("git-base", vqa_models.GIT(ckpt=str(out / "tiny-git-vqa")))}
    expected = {"images": names, "questions": "questions.csv", "sbert": "tiny-mpnet",
                "models": {"blip": "tiny-blip-vqa", "git": "tiny-git-vqa"}, "results": {},
                "source": f"Yushi-Hu/tifa@8e37050 tifascore.tifa_score.tifa_score_single with VQAModel "
                          f"(BLIP / GIT classes, SBERTModel), transformers {transformers.__version__}, "
                          f"torch {torch.__version__}, CPU float32"}
    for key, (name, model) in models.items():
        vqa = vqa_models.VQAModel.__new__(vqa_models.VQAModel)   # its __init__ loads the hub checkpoints
        vqa.model_name, vqa.model, vqa.sbert_model = name, model, sbert
        per_image = []
        for n in names:
            seg = int(n[5])  # image k is scored against the questions of SEG SEGS[k % len(SEGS)]
            seg = SEGS[seg % len(SEGS)]
            pairs = [{"question": r["question"], "choices": r["choices"].split("|"), "answer": r["answer"],
                      "question_id": int(r["question_id"])} for r in qs if int(r["id"]) == seg]
            res = tifa_score.tifa_score_single(vqa, copy.deepcopy(pairs), str(out / n))
            det = res["question_details"]
            per_image.append({"image": n, "seg_id": seg, "tifa_score": float(res["tifa_score"]),
                              "questions": [{"question_id": p["question_id"], "question": p["question"],
                                             "free_form": det[p["question"]]["free_form_vqa"],
                                             "mapped": det[p["question"]]["multiple_choice_vqa"],
                                             "score": det[p["question"]]["scores"]} for p in pairs]})
        expected["results"][key] = per_image
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    for key, rows in expected["results"].items():
        print(key, [r["tifa_score"] for r in rows])
        print("  ", [q["free_form"][:40] for q in rows[0]["questions"]])


if __name__ == "__main__":
    main()
