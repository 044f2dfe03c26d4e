"""Rebuild data/ts2/qa_answers.parquet from the TS2 release's question-answering outputs (run by hand;
never at run or test time).

    python data/ts2/make_qa_bundle.py ../shared/reference/ts2

Reads ``qga/raw_answers/{TIFA,DSG}/{model}_{kind}.csv`` (free-form answers, with an image column) and
``qga/per_question/{TIFA,DSG}/{model}_{kind}_mc.csv`` (the release's answer -> choice mapping and
correctness, row-aligned with the raw answers file, no image column) for the six VQA models, and
writes one row per (metric, image, question) with the question set's text, choices, expected answer
and (DSG) parents from the bundled question files. The release's files are inconsistent; this script
irons that out and checks every join:

* some raw answer files have a header line, some do not; image names come with or without
  ``images/``; answers may end in ``</s>`` (removed from ``answer``; ``answer_eos`` says which did) or be
  empty (the per-question files write " ");
* the per-question rows must carry the same SEG id, question id and answer as the raw rows they are
  aligned with, every image must have exactly its SEG's question ids, and the DSG parent column must
  equal the bundled dependency file.

The output is small: string columns are dictionary-encoded categoricals, ids are small integers.
Metric names follow make_bundle.py (``TIFA-BLIP1``, ``DSG-LLaVA-1.5-alt``, ...).
"""
import csv
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from make_bundle import VLMS

MODELS = ["blip1", "instruct_blip", "llava", "llava-alt", "mplug", "fuyu"]
KINDS = {"TIFA": "TS2_TIFA_Q.csv", "DSG": "TS2_DSG_Q_dependency.csv"}


def read_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if rows and rows[0] and rows[0][0] == "id":
        rows = rows[1:]
    return rows


def clean_answer(text: str) -> str:
    text = text.strip()
    if text.endswith("</s>"):
        text = text[: -len("</s>")].rstrip()
    return text


def convert(ref: Path, out: Path) -> pd.DataFrame:
    meta = pd.read_csv(out / "metadata.csv", dtype=str, keep_default_na=False)
    seg_of = dict(zip(meta.file_name, meta.id.astype(int)))
    frames = []
    for kind, qfile in KINDS.items():
        qs = pd.read_csv(out / qfile, dtype=str, keep_default_na=False)
        qs["seg_id"] = qs.id.astype(int)
        qs["question_id"] = qs.question_id.astype(int)
        if "parent_question_id" not in qs:
            qs["parent_question_id"] = "-1"
        qset = qs.set_index(["seg_id", "question_id"])
        ids_of = qs.groupby("seg_id").question_id.apply(sorted).to_dict()
        for model in MODELS:
            low = kind.lower()
            raw = read_rows(ref / "qga" / "raw_answers" / kind / f"{model}_{low}.csv")
            mc = pd.read_csv(ref / "qga" / "per_question" / kind / f"{model}_{low}_mc.csv", dtype=str,
                             keep_default_na=False)
            assert len(raw) == len(mc), (kind, model, len(raw), len(mc))
            df = pd.DataFrame(raw, columns=["id", "image", "question_id", "answer"])
            df["file_name"] = "images/" + df.image.str.rsplit("/", n=1).str[-1]
            df["seg_id"] = df.id.astype(int)
            df["question_id"] = df.question_id.astype(int)
            # row alignment with the per-question file
            assert (df.id.to_numpy() == mc.id.to_numpy()).all(), (kind, model)
            assert (df.question_id.to_numpy() == mc.question_id.astype(int).to_numpy()).all(), (kind, model)
            assert (df.answer.str.strip() == mc.vqa_answer.str.strip()).all(), (kind, model)
            assert df.file_name.map(seg_of).eq(df.seg_id).all(), (kind, model)
            per_image = df.groupby("file_name", sort=False).question_id.apply(list)
            assert set(per_image.index) == set(seg_of), (kind, model)
            for fn, ids in per_image.items():
                assert sorted(ids) == ids_of[seg_of[fn]], (kind, model, fn)
            assert set(mc.correct) <= {"0", "1"}, (kind, model)
            q = qset.loc[list(zip(df.seg_id, df.question_id))]
            if kind == "DSG":
                assert (mc.parent_question_id.to_numpy() == q.parent_question_id.to_numpy()).all(), model
            frames.append(pd.DataFrame({
                "metric": f"{kind}-{VLMS[model]}",
                "seg_id": df.seg_id.astype("int16"),
                "file_name": df.file_name,
                "question_id": df.question_id.astype("int16"),
                "question": q.question.to_numpy(),
                "choices": q.choices.to_numpy(),
                "expected": q.answer.to_numpy(),
                "parents": ["" if p.strip() == "-1" else p.strip() for p in q.parent_question_id],
                "answer": [clean_answer(a) for a in df.answer],
                # the release mapped the raw answer, "</s>" included (Sentence-BERT's tokenizer reads it as
                # its own separator token), so which answers had it is kept to reproduce that mapping
                "answer_eos": [a.strip().endswith("</s>") for a in df.answer],
                "mc_answer": mc.mc_answer.str.strip().to_numpy(),
                "correct": mc.correct.eq("1").to_numpy(),
            }))
    data = pd.concat(frames, ignore_index=True)
    for c in ["metric", "file_name", "question", "choices", "expected", "parents", "answer", "mc_answer"]:
        data[c] = data[c].astype("category")
    return data


def main(ref: Path, out: Path) -> None:
    data = convert(ref, out)
    table = pa.Table.from_pandas(data, preserve_index=False)
    table = table.replace_schema_metadata({
        b"ts2viz.source": b"TS2 release (michaelsaxon/T2IScoreScore, MIT): qga/raw_answers + qga/per_question",
    })
    pq.write_table(table, out / "qa_answers.parquet", compression="zstd", compression_level=19)
    print(f"wrote {out / 'qa_answers.parquet'}: {len(data)} rows, "
          f"{(out / 'qa_answers.parquet').stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    main(Path(sys.argv[1]), here)
