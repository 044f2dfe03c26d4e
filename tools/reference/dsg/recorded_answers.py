"""DSG's own scoring code on the TS2 release's recorded VQA answers (run by hand in a side environment).

    /work/side/fc-dsg/bin/python tools/reference/dsg/recorded_answers.py DSG_CHECKOUT

DSG_CHECKOUT is a checkout of j-min/DSG (commit 7330119). Its ``dsg/vqa_utils.py`` is imported from there
and run, never copied. For each of the six VLMs of the TS2 release (their free-form answers to every DSG
question of every TS2 image, bundled in ``data/ts2/qa_answers.parquet``) and each of DSG's two ways of
reading an answer, the per-image DSG score is computed by DSG's code:

``instructblip`` (DSG's InstructBLIP / mPLUG path)
    the answer as the model decoded it (``skip_special_tokens``, stripped), scored by
    ``calc_vqa_score`` (``float(answer == 'yes')``, a question zeroed when a direct parent scored 0;
    ``average_score_with_dependency``).
``chat`` (DSG's ``GPT4o.vqa``)
    the recorded answer handed to ``GPT4o.vqa`` as the API's reply (``openai.chat.completions.create`` is
    replaced by a function that returns it; the image and question are encoded as DSG does), which
    lower-cases, strips and removes ``. , ? !``; then ``calc_vqa_score``.

TS2's question ids start at 0 and a root's parent is -1; DSG's ids start at 1 and ``0`` means no parent, so
ids are shifted by one on the way in (with TS2's ids, DSG's code would ignore every dependency on
question 0). The output, ``tests/fixtures/reference/dsg/recorded_scores.csv.gz``, has one row per
(metric, file_name) with both scores, written with ``repr`` floats.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import importlib
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
OUT = ROOT / "tests" / "fixtures" / "reference" / "dsg" / "recorded_scores.csv.gz"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dsg_checkout", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    import pandas as pd
    from PIL import Image

    sys.path.insert(0, str(args.dsg_checkout))
    vqa_utils = importlib.import_module("dsg.vqa_utils")
    import openai

    openai.api_key = "not-used"  # GPT4o.__init__ asserts a key is set; nothing is sent anywhere
    reply: dict[str, str] = {}

    def create(**kwargs):   # the API call, answered with the recorded answer
        msg = types.SimpleNamespace(content=reply["text"])
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg)])

    openai.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=create))
    gpt = vqa_utils.GPT4o()
    image = Image.new("RGB", (8, 8))
    image.format = "PNG"   # encode_image saves the image in its own format

    def chat(answer: str) -> str:
        reply["text"] = answer
        return gpt.vqa(image, "Is there a cat?")

    data = pd.read_parquet(ROOT / "data" / "ts2" / "qa_answers.parquet")
    data = data[data.metric.astype(str).str.startswith("DSG-")]
    rows = []
    for (metric, fn), g in data.groupby(["metric", "file_name"], observed=True, sort=True):
        dep = {int(q) + 1: ([int(p) + 1 for p in str(ps).split("-")] if str(ps).strip() else [0])
               for q, ps in zip(g.question_id, g.parents)}
        answers = {int(q) + 1: str(a) for q, a in zip(g.question_id, g.answer)}
        exact = vqa_utils.calc_vqa_score(answers, dep)["average_score_with_dependency"]
        read = {q: chat(a) for q, a in answers.items()}
        chat_score = vqa_utils.calc_vqa_score(read, dep)["average_score_with_dependency"]
        rows.append((str(metric), str(fn), repr(float(exact)), repr(float(chat_score))))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "file_name", "instructblip", "chat"])
        w.writerows(rows)
    print(f"wrote {args.out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
